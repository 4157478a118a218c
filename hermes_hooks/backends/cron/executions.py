"""The ledger of cron runs: ``<home>/cron/executions.json``, one entry per attempt.

An execution is created when a fire is claimed (``running``), and finished ``ok`` or
``error``; one still ``running`` when a scheduler starts again cannot be known to have run,
so :func:`recover_interrupted_executions` marks it ``unknown`` (for audit; never re-run).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

from hermes_hooks.backends.cron.jobs import CronError, cron_dir, now

__all__ = [
    "create_execution",
    "finish_execution",
    "get_execution",
    "list_executions",
    "recover_interrupted_executions",
]

_KEEP = 500
"""How many executions the ledger keeps (the oldest go first)."""


@contextlib.contextmanager
def _ledger(home: Path | None) -> Iterator[tuple[Path, list[dict[str, Any]]]]:
    folder = cron_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "executions.json"
    with FileLock(str(folder / ".executions.lock"), timeout=30):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {"executions": []}
        except (OSError, ValueError) as exc:
            raise CronError(f"{path}: cannot read the cron executions ({exc})") from None
        entries = data.get("executions") if isinstance(data, dict) else None
        entries = [e for e in entries or [] if isinstance(e, dict)]
        before = json.dumps(entries, sort_keys=True, default=str)
        yield path, entries
        if json.dumps(entries, sort_keys=True, default=str) != before:
            fd, temp = tempfile.mkstemp(prefix=".executions.", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                json.dump({"executions": entries[-_KEEP:]}, stream, indent=2, default=str)
            os.replace(temp, path)


def create_execution(
    job_id: str, source: str = "builtin", home: Path | None = None
) -> dict[str, Any]:
    """Record a new run of ``job_id`` as ``running``; return it (its ``id``)."""
    entry = {
        "id": uuid.uuid4().hex[:16],
        "job_id": job_id,
        "source": source,
        "status": "running",
        "started_at": now().isoformat(),
        "finished_at": None,
        "error": None,
        "output_path": None,
    }
    with _ledger(home) as (_, entries):
        entries.append(entry)
    return dict(entry)


def finish_execution(
    execution_id: str,
    status: str,
    *,
    error: str | None = None,
    output_path: str | None = None,
    home: Path | None = None,
) -> dict[str, Any] | None:
    """Finish an execution (``ok``, ``error``); return it, or ``None`` when unknown."""
    with _ledger(home) as (_, entries):
        for entry in entries:
            if entry.get("id") == execution_id:
                entry.update(status=status, error=error, output_path=output_path,
                             finished_at=now().isoformat())  # fmt: skip
                return dict(entry)
    return None


def get_execution(execution_id: str, home: Path | None = None) -> dict[str, Any] | None:
    """Return the execution ``execution_id``, or ``None``."""
    return next((e for e in list_executions(home=home) if e.get("id") == execution_id), None)


def list_executions(job_id: str | None = None, home: Path | None = None) -> list[dict[str, Any]]:
    """Return the executions (of ``job_id`` when given), oldest first."""
    with _ledger(home) as (_, entries):
        return [dict(e) for e in entries if job_id is None or e.get("job_id") == job_id]


def recover_interrupted_executions(home: Path | None = None) -> int:
    """Mark every ``running`` execution ``unknown``; return how many there were."""
    count = 0
    with _ledger(home) as (_, entries):
        for entry in entries:
            if entry.get("status") == "running":
                entry.update(status="unknown", finished_at=now().isoformat(),
                             error="interrupted: the scheduler restarted")  # fmt: skip
                count += 1
    return count

"""The cron job store: ``<home>/cron/jobs.json``, as Hermes keeps it (``cron/jobs.py``).

A job is a JSON object: ``id``, ``name``, ``prompt``, ``schedule`` (``{"kind": "once" |
"interval" | "cron", ...}``), ``schedule_display``, ``repeat`` (``{"times", "completed"}``),
``enabled``, ``state`` (``scheduled`` or ``paused``), ``next_run_at``, ``last_run_at``,
``last_status``, ``last_error``, ``deliver`` (``local``, ``origin`` or a platform, optionally
``platform:chat_id``) and ``origin``. Every change is made under a file lock and written
atomically, so two processes (the gateway's ticker and ``hermes cron``) never lose each
other's changes and the file is never left half-written. Cron expressions are read by
croniter (the ``cron`` extra), as in Hermes; nothing here parses them by hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from filelock import FileLock

from hermes_hooks.backends.home import active_home
from hermes_hooks.errors import HermesHooksError

__all__ = [
    "CronError",
    "claim_job_for_fire",
    "compute_next_run",
    "create_job",
    "cron_dir",
    "get_due_jobs",
    "get_job",
    "list_jobs",
    "load_jobs",
    "mark_job_run",
    "now",
    "output_dir",
    "parse_duration",
    "parse_schedule",
    "pause_job",
    "remove_job",
    "resume_job",
    "save_job_output",
    "save_jobs",
    "trigger_job",
    "update_job",
]

CLAIM_LEASE_SECONDS = 15 * 60
"""How long a claim on a job's fire holds before another process may claim it again."""


class CronError(HermesHooksError, ValueError):
    """A schedule, a job id or the job store is not what it should be."""


def now() -> datetime:
    """The current time, aware, in the local zone."""
    return datetime.now().astimezone()


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.astimezone()


def _parse_time(text: str) -> datetime:
    return _aware(datetime.fromisoformat(text.replace("Z", "+00:00")))


def cron_dir(home: Path | None = None) -> Path:
    """Return ``<home>/cron`` (the provider call's home, else ``$HERMES_HOME``)."""
    return (home or active_home()) / "cron"


def output_dir(home: Path | None = None) -> Path:
    """Return ``<home>/cron/output``, where each run's output is kept."""
    return cron_dir(home) / "output"


# -- schedules -------------------------------------------------------------------------------

_DURATION = re.compile(r"^(\d+)\s*(m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days)$")


def parse_duration(text: str) -> int:
    """Return the minutes of ``30m``, ``2h``, ``1d``.

    :raises CronError: not such a duration.
    """
    found = _DURATION.match(text.strip().lower())
    if not found:
        raise CronError(f"invalid duration {text!r}: use a form like '30m', '2h' or '1d'")
    return int(found.group(1)) * {"m": 1, "h": 60, "d": 1440}[found.group(2)[0]]


def _croniter() -> Any:
    try:
        from croniter import croniter  # type: ignore[import-untyped,unused-ignore]
    except ImportError:  # pragma: no cover - the cron extra is part of the test install
        raise CronError(
            "cron expressions need the croniter package: pip install 'hermes-hooks[cron]'"
        ) from None
    return croniter


def parse_schedule(schedule: str) -> dict[str, Any]:
    """Read a schedule: ``30m`` (once, from now), ``every 2h`` (an interval), ``0 9 * * *``
    (a cron expression) or ``2026-02-03T14:00`` (once, at that time).

    :raises CronError: none of those, naming what was found.
    """
    text = str(schedule).strip()
    lower = text.lower()
    if lower.startswith("every "):
        minutes = parse_duration(text[6:])
        return {"kind": "interval", "minutes": minutes, "display": f"every {minutes}m"}
    parts = text.split()
    if len(parts) >= 5 and all(re.match(r"^[\d*\-,/A-Za-z?LW#]+$", p) for p in parts[:5]):
        croniter = _croniter()
        if not croniter.is_valid(text):
            raise CronError(f"invalid cron expression {text!r}")
        return {"kind": "cron", "expr": text, "display": text}
    if "T" in text or re.match(r"^\d{4}-\d{2}-\d{2}", text):
        try:
            at = _parse_time(text)
        except ValueError as exc:
            raise CronError(f"invalid timestamp {text!r}: {exc}") from None
        return {"kind": "once", "run_at": at.isoformat(), "display": f"once at {at:%Y-%m-%d %H:%M}"}
    try:
        minutes = parse_duration(text)
    except CronError:
        raise CronError(
            f"invalid schedule {text!r}: use a duration ('30m', one-shot), an interval "
            f"('every 2h'), a cron expression ('0 9 * * *') or a timestamp "
            f"('2026-02-03T14:00')"
        ) from None
    at = now() + timedelta(minutes=minutes)
    return {"kind": "once", "run_at": at.isoformat(), "display": f"once in {text}"}


def compute_next_run(schedule: dict[str, Any], last_run_at: str | None = None) -> str | None:
    """Return the next run of ``schedule`` (ISO 8601), or ``None`` when it has no more."""
    current = now()
    kind = schedule.get("kind")
    if kind == "once":
        at = _parse_time(str(schedule["run_at"]))
        return at.isoformat() if last_run_at is None else None
    if kind == "interval":
        base = _parse_time(last_run_at) if last_run_at else current
        return (base + timedelta(minutes=int(schedule["minutes"]))).isoformat()
    if kind == "cron":
        following: datetime = _croniter()(str(schedule["expr"]), current).get_next(datetime)
        return _aware(following).isoformat()
    return None


# -- the store -------------------------------------------------------------------------------


@contextlib.contextmanager
def _locked(home: Path | None) -> Iterator[Path]:
    folder = cron_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder / ".jobs.lock"), timeout=30):
        yield folder / "jobs.json"


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise CronError(f"{path}: cannot read the cron jobs ({exc})") from None
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, list):
        raise CronError(f"{path}: expected an object with a 'jobs' list")
    return [job for job in jobs if isinstance(job, dict) and isinstance(job.get("id"), str)]


def _write(path: Path, jobs: list[dict[str, Any]]) -> None:
    body = json.dumps({"jobs": jobs, "updated_at": now().isoformat()}, indent=2, default=str)
    fd, temp = tempfile.mkstemp(prefix=".jobs.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(body + "\n")
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def load_jobs(home: Path | None = None) -> list[dict[str, Any]]:
    """Return every job of the store (an empty list when it has none)."""
    with _locked(home) as path:
        return _read(path)


def save_jobs(jobs: list[dict[str, Any]], home: Path | None = None) -> None:
    """Replace the store's jobs with ``jobs`` (atomically)."""
    with _locked(home) as path:
        _write(path, list(jobs))


def create_job(
    prompt: str,
    schedule: str,
    name: str | None = None,
    repeat: int | None = None,
    deliver: str | None = None,
    origin: dict[str, Any] | None = None,
    *,
    home: Path | None = None,
) -> dict[str, Any]:
    """Create, store and return a job (``repeat`` runs, ``None`` for ever; one for a one-shot).

    :raises CronError: the schedule cannot be read, or the prompt is empty.
    """
    if not str(prompt).strip():
        raise CronError("a cron job needs a prompt (what the agent is asked at each run)")
    parsed = parse_schedule(schedule)
    if parsed["kind"] == "once" and repeat is None:
        repeat = 1
    job: dict[str, Any] = {
        "id": uuid.uuid4().hex[:12],
        "name": name or str(prompt)[:50].strip(),
        "prompt": prompt,
        "schedule": parsed,
        "schedule_display": parsed.get("display", schedule),
        "repeat": {"times": repeat, "completed": 0},
        "enabled": True,
        "state": "scheduled",
        "created_at": now().isoformat(),
        "next_run_at": compute_next_run(parsed),
        "last_run_at": None,
        "last_status": None,
        "last_error": None,
        "deliver": deliver or ("origin" if origin else "local"),
        "origin": origin,
    }
    with _locked(home) as path:
        jobs = _read(path)
        jobs.append(job)
        _write(path, jobs)
    return job


def get_job(job_id: str, home: Path | None = None) -> dict[str, Any] | None:
    """Return the job ``job_id``, or ``None``."""
    return next((job for job in load_jobs(home) if job["id"] == job_id), None)


def list_jobs(include_disabled: bool = False, home: Path | None = None) -> list[dict[str, Any]]:
    """Return the jobs (the enabled ones unless ``include_disabled``)."""
    jobs = load_jobs(home)
    return jobs if include_disabled else [job for job in jobs if job.get("enabled", True)]


def update_job(
    job_id: str, updates: dict[str, Any], home: Path | None = None
) -> dict[str, Any] | None:
    """Merge ``updates`` into job ``job_id``; return it, or ``None`` when there is none."""
    with _locked(home) as path:
        jobs = _read(path)
        for index, job in enumerate(jobs):
            if job["id"] == job_id:
                jobs[index] = {**job, **updates}
                _write(path, jobs)
                return jobs[index]
    return None


def remove_job(job_id: str, home: Path | None = None) -> bool:
    """Remove job ``job_id``; tell whether there was one."""
    with _locked(home) as path:
        jobs = _read(path)
        kept = [job for job in jobs if job["id"] != job_id]
        if len(kept) == len(jobs):
            return False
        _write(path, kept)
        return True


def pause_job(job_id: str, home: Path | None = None) -> dict[str, Any] | None:
    """Pause job ``job_id``: it keeps its schedule and does not fire until resumed."""
    return update_job(job_id, {"state": "paused", "enabled": False}, home)


def resume_job(job_id: str, home: Path | None = None) -> dict[str, Any] | None:
    """Resume a paused job, from its next run after now."""
    job = get_job(job_id, home)
    if job is None:
        return None
    upcoming = compute_next_run(job["schedule"], job.get("last_run_at"))
    return update_job(
        job_id, {"state": "scheduled", "enabled": True, "next_run_at": upcoming}, home
    )


def trigger_job(job_id: str, home: Path | None = None) -> dict[str, Any] | None:
    """Make job ``job_id`` due now (the next tick fires it)."""
    return update_job(job_id, {"next_run_at": now().isoformat(), "enabled": True}, home)


def get_due_jobs(home: Path | None = None) -> list[dict[str, Any]]:
    """Return the enabled jobs whose next run is now or past."""
    current = now()
    due = []
    for job in load_jobs(home):
        upcoming = job.get("next_run_at")
        if job.get("enabled", True) and job.get("state") != "paused" and upcoming:
            try:
                if _parse_time(str(upcoming)) <= current:
                    due.append(job)
            except ValueError:
                continue
    return due


def claim_job_for_fire(job_id: str, home: Path | None = None) -> bool:
    """Claim this fire of job ``job_id`` (compare-and-set under the store's lock).

    ``False`` when the job is gone, paused, or another process claimed it within
    :data:`CLAIM_LEASE_SECONDS`: each fire runs at most once across processes.
    """
    current = now()
    with _locked(home) as path:
        jobs = _read(path)
        for job in jobs:
            if job["id"] != job_id:
                continue
            if job.get("state") == "paused":
                return False
            claimed = job.get("claimed_at")
            if claimed:
                try:
                    held = current - _parse_time(str(claimed))
                except ValueError:
                    held = timedelta(seconds=CLAIM_LEASE_SECONDS)
                if held < timedelta(seconds=CLAIM_LEASE_SECONDS):
                    return False
            job["claimed_at"] = current.isoformat()
            _write(path, jobs)
            return True
    return False


def mark_job_run(
    job_id: str, success: bool, error: str | None = None, home: Path | None = None
) -> dict[str, Any] | None:
    """Record a run: its status, the next run (a job out of repeats is removed, a one-shot
    done is disabled), and release its claim. Return the job, or ``None`` once removed."""
    stamp = now().isoformat()
    with _locked(home) as path:
        jobs = _read(path)
        for index, job in enumerate(jobs):
            if job["id"] != job_id:
                continue
            job.update(last_run_at=stamp, last_status="ok" if success else "error",
                       last_error=None if success else error, claimed_at=None)  # fmt: skip
            repeat = job.get("repeat") if isinstance(job.get("repeat"), dict) else None
            if repeat is not None:
                repeat["completed"] = int(repeat.get("completed") or 0) + 1
                times = repeat.get("times")
                if times is not None and repeat["completed"] >= int(times):
                    jobs.pop(index)
                    _write(path, jobs)
                    return None
            job["next_run_at"] = compute_next_run(job["schedule"], stamp)
            if job["next_run_at"] is None:
                job["enabled"] = False
            _write(path, jobs)
            return job
    return None


def save_job_output(job_id: str, output: str, home: Path | None = None) -> Path:
    """Keep one run's output as ``<home>/cron/output/<job_id>/<timestamp>.md``; return it."""
    folder = output_dir(home) / job_id
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{now():%Y-%m-%d_%H-%M-%S-%f}.md"
    target.write_text(output, encoding="utf-8")
    return target

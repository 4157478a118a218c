"""Hermes' ``gateway.drain_control``: the drain marker a dashboard writes and the gateway reads.

A drain asks a running gateway to stop taking new turns without exiting (the turns in flight
finish), so that a lifecycle action can wait for it to go idle: ``POST /api/gateway/drain``
writes ``<home>/.drain_request.json``; cancelling removes it. The gateway polls the marker
(:func:`drain_requested`) and flips between ``running`` and ``draining``.

The marker carries the machine's instantiation epoch (the kernel's boot id and PID 1's start
time): a marker left by an earlier boot of the machine is stale and ignored, so a restart ends
a drain. A marker whose epoch cannot be told (none written, no ``/proc``) is honoured, and one
that does not parse still counts as present: toward quiescing, never toward ignoring it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from hermes_hooks.compat import hermes_constants

__all__ = [
    "clear_drain_request",
    "current_instantiation_epoch",
    "drain_notification_suppressed",
    "drain_request_path",
    "drain_requested",
    "read_drain_request",
    "write_drain_request",
]

logger = logging.getLogger(__name__)

DRAIN_REQUEST_FILENAME: Final = ".drain_request.json"


@functools.cache
def current_instantiation_epoch() -> str:
    """``<boot id>:<PID 1 start time>`` of this machine, or ``""`` when neither can be read."""
    boot_id = ""
    with contextlib.suppress(OSError):
        boot_id = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
    started = ""
    with contextlib.suppress(OSError, IndexError):
        # Field 22 of /proc/1/stat; the command name (field 2) may hold spaces and parentheses.
        started = Path("/proc/1/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[19]
    return f"{boot_id}:{started}" if boot_id or started else ""


def drain_request_path(home: Path | None = None) -> Path:
    """The marker's path in ``home`` (the current Hermes home by default)."""
    return Path(home if home is not None else hermes_constants.get_hermes_home()) / (
        DRAIN_REQUEST_FILENAME
    )


def write_drain_request(
    *,
    principal: str = "drain-control",
    suppress_notification: bool = False,
    home: Path | None = None,
) -> dict[str, Any]:
    """Begin a drain: write the marker atomically; return what was written."""
    payload: dict[str, Any] = {
        "action": "drain",
        "requested_at": datetime.now(UTC).isoformat(),
        "principal": principal,
        "epoch": current_instantiation_epoch(),
        "suppress_notification": bool(suppress_notification),
    }
    path = drain_request_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".drain_request.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return payload


def clear_drain_request(*, home: Path | None = None) -> bool:
    """Cancel a drain: remove the marker; whether there was one."""
    path = drain_request_path(home)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        logger.warning("drain-control: cannot remove %s: %s", path, exc)
        return False
    return True


def read_drain_request(*, home: Path | None = None) -> dict[str, Any] | None:
    """The marker's content; ``{}`` for one that does not parse; ``None`` when absent."""
    path = drain_request_path(home)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("drain-control: cannot read %s: %s", path, exc)
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _stale(body: dict[str, Any]) -> bool:
    current, written = current_instantiation_epoch(), body.get("epoch")
    return bool(current and written and written != current)


def drain_requested(*, home: Path | None = None) -> bool:
    """Whether a drain of this machine's instantiation is asked for."""
    body = read_drain_request(home=home)
    return body is not None and not _stale(body)


def drain_notification_suppressed(*, home: Path | None = None) -> bool:
    """Whether the asked-for drain wants the shutdown broadcast it may end in kept quiet."""
    body = read_drain_request(home=home)
    return body is not None and not _stale(body) and bool(body.get("suppress_notification"))

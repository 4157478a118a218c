"""Hermes' ``gateway.status``: the gateway's runtime state, and locks on platform identities.

``write_runtime_status`` merges into ``<home>/gateway_state.json`` (written atomically; one
record for the gateway, one per platform: ``state``, ``error_code``, ``error_message``,
``updated_at``), which ``hermes gateway status`` reads. ``acquire_scoped_lock(scope,
identity)`` keeps two gateways from using one bot identity: a lock file under
``<home>/gateway-locks/`` holding the owner's pid, taken over when that process is gone. Its
result is ``(acquired, existing_owner)`` and is truthy only when acquired, so both Hermes
call styles (``ok, _ = ...`` and ``if not ...``) read it right.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from hermes_hooks.compat.hermes_constants import get_hermes_home
from hermes_hooks.compat.utils import atomic_json_write

__all__ = [
    "LockResult",
    "acquire_scoped_lock",
    "get_process_start_time",
    "read_runtime_status",
    "release_scoped_lock",
    "runtime_status_path",
    "write_runtime_status",
]

_WRITE_LOCK = threading.Lock()


def runtime_status_path() -> Path:
    """Return ``<home>/gateway_state.json``."""
    return get_hermes_home() / "gateway_state.json"


def read_runtime_status() -> dict[str, Any] | None:
    """Return the recorded runtime state, or ``None`` when there is none (or it is unreadable)."""
    try:
        data = json.loads(runtime_status_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_runtime_status(
    *,
    gateway_state: str | None = None,
    exit_reason: str | None = None,
    platform: str | None = None,
    platform_state: str | None = None,
    error_code: str | None = None,
    error_message: str | None = None,
    **extra: Any,
) -> None:
    """Merge the gateway's or one platform's state into the runtime status file."""
    now = time.time()
    with _WRITE_LOCK:
        data = read_runtime_status() or {}
        platforms = data.setdefault("platforms", {})
        if not isinstance(platforms, dict):
            platforms = data["platforms"] = {}
        if gateway_state is not None:
            data["gateway_state"] = gateway_state
            data["pid"] = os.getpid()
        if exit_reason is not None:
            data["exit_reason"] = exit_reason
        if platform is not None:
            record = platforms.setdefault(platform, {})
            if platform_state is not None:
                record["state"] = platform_state
            record["error_code"] = error_code
            record["error_message"] = error_message
            record["updated_at"] = now
            record.update(extra)
        data["updated_at"] = now
        path = runtime_status_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_json_write(path, data)


class LockResult(tuple[bool, "dict[str, Any] | None"]):
    """``(acquired, existing owner)``, truthy only when acquired."""

    def __bool__(self) -> bool:
        return bool(self[0])


def _lock_path(scope: str, identity: str) -> Path:
    digest = hashlib.sha256(f"{scope}\0{identity}".encode()).hexdigest()[:24]
    return get_hermes_home() / "gateway-locks" / f"{scope}-{digest}.lock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def acquire_scoped_lock(
    scope: str, identity: str, metadata: dict[str, Any] | None = None
) -> LockResult:
    """Take the lock on ``identity`` within ``scope`` for this process."""
    path = _lock_path(scope, identity)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "pid": os.getpid(),
        "scope": scope,
        "identity": identity,
        "metadata": metadata or {},
        "acquired_at": time.time(),
    }
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            try:
                existing = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                existing = {}
            pid = existing.get("pid") if isinstance(existing, dict) else None
            if isinstance(pid, int) and (pid == os.getpid() or _alive(pid)):
                if pid == os.getpid():
                    return LockResult((True, None))
                return LockResult((False, existing))
            path.unlink(missing_ok=True)  # the owner is gone: take it over
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        return LockResult((True, None))
    return LockResult((False, None))


def release_scoped_lock(scope: str, identity: str) -> None:
    """Release this process's lock on ``identity``; another process's is left alone."""
    path = _lock_path(scope, identity)
    try:
        existing = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(existing, dict) and existing.get("pid") == os.getpid():
        path.unlink(missing_ok=True)


# -- processes (Hermes' WhatsApp plugin supervises its bridge with these) -------------------------


def _psutil() -> Any | None:
    try:
        return importlib.import_module("psutil")  # optional, untyped
    except ImportError:
        return None


def _proc_stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{int(pid)}/stat").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    # The command name (field 2) is parenthesised and may hold spaces: split after it.
    _, _, rest = text.rpartition(")")
    return rest.split() if rest else None


def _pid_exists(pid: int) -> bool:
    """Whether process ``pid`` is alive, never signalling it; a zombie counts as dead."""
    psutil = _psutil()
    if psutil is not None:
        try:
            if psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE:
                return False
        except psutil.NoSuchProcess:
            return False
        except Exception:
            pass
        return bool(psutil.pid_exists(int(pid)))
    fields = _proc_stat(pid)
    if fields is not None and fields[0] == "Z":
        return False
    return _alive(int(pid))


def get_process_start_time(pid: int) -> int | None:
    """A fingerprint of when ``pid`` started (``/proc/<pid>/stat``'s start time, else psutil's
    create time in centiseconds), to tell a reused pid apart; ``None`` when unknown."""
    fields = _proc_stat(pid)
    if fields is not None and len(fields) > 19:
        with contextlib.suppress(ValueError):
            return int(fields[19])  # field 22 of the whole line
    psutil = _psutil()
    if psutil is not None:
        with contextlib.suppress(Exception):
            return int(psutil.Process(int(pid)).create_time() * 100)
    return None


def _read_process_cmdline(pid: int) -> str | None:
    """The command line of ``pid`` (``/proc/<pid>/cmdline``, else ``ps``), or ``None``."""
    try:
        raw = Path(f"/proc/{int(pid)}/cmdline").read_bytes()
    except (OSError, ValueError):
        raw = b""
    if raw:
        return raw.replace(b"\x00", b" ").decode("utf-8", errors="ignore").strip()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        done = subprocess.run(
            ["ps", "-p", str(int(pid)), "-o", "command="],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    return None

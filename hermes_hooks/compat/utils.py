"""Hermes' ``utils``: truthy values, environment numbers and atomic file writes.

The environment readers are Hermes' (``"1"``, ``"true"``, ``"yes"``, ``"on"`` are true, any
case); the writers replace the file in one step (a temp file in the same folder, fsync,
``os.replace``), keep the target's permission bits and never leave a temp file behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from hermes_hooks.plugins.config import TRUTHY_STRINGS

__all__ = [
    "TRUTHY_STRINGS",
    "atomic_json_write",
    "atomic_replace",
    "env_bool",
    "env_float",
    "env_int",
    "env_var_enabled",
    "is_truthy_value",
]


def is_truthy_value(value: Any, default: bool = False) -> bool:
    """Return whether ``value`` means "on": a truthy string (stripped, any case), else ``bool``.

    :param default: what ``None`` means.
    """
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() in TRUTHY_STRINGS
    return bool(value)


def env_var_enabled(name: str, default: str = "") -> bool:
    """Return whether environment variable ``name`` is set to a truthy value."""
    return is_truthy_value(os.getenv(name, default), default=False)


def _env_number(key: str, default: Any, cast: Callable[[str], Any]) -> Any:
    raw = os.getenv(key, "").strip()
    try:
        return cast(raw) if raw else default
    except (ValueError, TypeError):
        return default


def env_int(key: str, default: int = 0) -> int:
    """Return environment variable ``key`` as an int, or ``default`` when unset or not one."""
    value: int = _env_number(key, default, int)
    return value


def env_float(key: str, default: float = 0.0) -> float:
    """Return environment variable ``key`` as a float, or ``default`` when unset or not one."""
    value: float = _env_number(key, default, float)
    return value


def env_bool(key: str, default: bool = False) -> bool:
    """Return environment variable ``key`` as a bool; unset or empty gives ``default``."""
    raw = os.getenv(key, "")
    return default if not raw.strip() else is_truthy_value(raw)


def atomic_replace(tmp_path: str | Path, target: str | Path) -> str:
    """Move ``tmp_path`` onto ``target`` in one step; a symlinked target keeps its link.

    :returns: the path actually written (the link's target for a symlink).
    """
    target_str = str(target)
    real = os.path.realpath(target_str) if os.path.islink(target_str) else target_str
    os.replace(str(tmp_path), real)
    return real


def _write_atomically(path: Path, write: Callable[[IO[str]], object], mode: int | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        with contextlib.suppress(OSError):
            mode = stat.S_IMODE(path.stat().st_mode)
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.stem}_", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            if mode is not None:
                os.fchmod(stream.fileno(), mode)
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        atomic_replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_json_write(
    path: str | Path,
    data: Any,
    *,
    indent: int = 2,
    mode: int | None = None,
    ensure_ascii: bool = False,
    fsync_dir: bool = False,
    **dump_kwargs: Any,
) -> None:
    """Write ``data`` as JSON to ``path`` atomically.

    :param mode: the permission bits of the file (``0o600`` for credentials); by default an
        existing file keeps its own.
    :param fsync_dir: also make the rename durable (fsync the folder).
    :raises TypeError: ``data`` cannot be written as JSON; the old file is untouched.
    """
    target = Path(path)
    text = json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, **dump_kwargs)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from os.fsdecode: escape them, as Hermes does
        text = json.dumps(data, indent=indent, ensure_ascii=True, **dump_kwargs)
    _write_atomically(target, lambda stream: stream.write(text), mode)
    if fsync_dir:
        with contextlib.suppress(OSError):
            fd = os.open(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

"""Tracebacks that show the plugin's frames, not the framework's way to them.

The calling machinery's modules set ``__tracebackhide__ = hide_in_pytest``, and the framework's
log records carry :func:`trimmed` tracebacks; ``HERMES_FULL_TRACEBACKS=1`` (or pytest's
``--full-trace``) keeps every frame. See ``docs/explanation/isolation.md``.
"""

from __future__ import annotations

import functools
import os
import sysconfig
import types
from pathlib import Path
from typing import Any, Final

import pluggy

__all__ = ["FULL_TRACEBACKS_ENV", "hide_in_pytest", "is_internal", "set_full", "trimmed"]

FULL_TRACEBACKS_ENV: Final = "HERMES_FULL_TRACEBACKS"


def _dirs(*paths: str | Path) -> tuple[str, ...]:
    return tuple({str(Path(path).resolve()) + os.sep for path in paths})


_PLUGGY_DIR: Final = _dirs(Path(pluggy.__file__).parent)[0]
_FRAMEWORK_DIR: Final = _dirs(Path(__file__).parent.parent)[0]
_PATHS: Final = sysconfig.get_paths()
_STDLIB_DIRS: Final = _dirs(_PATHS["stdlib"], _PATHS["platstdlib"])
_SITE_DIRS: Final = _dirs(_PATHS["purelib"], _PATHS["platlib"])

_override: bool | None = None  # None: as the environment says


def set_full(full: bool | None) -> None:
    """Keep every frame (``True``), trim (``False``), or follow ``$HERMES_FULL_TRACEBACKS``."""
    global _override
    _override = full


def _full() -> bool:
    if _override is not None:
        return _override
    return os.environ.get(FULL_TRACEBACKS_ENV, "").strip().lower() not in ("", "0", "false", "no")


def is_internal(frame: types.FrameType) -> bool:
    """Whether ``frame`` is calling machinery: a marked module or function, or pluggy's."""
    if "__tracebackhide__" in frame.f_globals:
        return True
    try:
        if frame.f_locals.get("__tracebackhide__"):
            return True
    except Exception:  # exotic frames (exec with a custom mapping)
        pass
    return frame.f_code.co_filename.startswith(_PLUGGY_DIR)


@functools.lru_cache(maxsize=512)
def _outside_file(name: str) -> bool:
    if name.startswith("<"):  # frozen or generated: importlib's, our adapters'
        return False
    try:
        path = str(Path(name).resolve())
    except (OSError, ValueError):
        return True
    if path.startswith((_FRAMEWORK_DIR, _PLUGGY_DIR)):
        return False
    # Site-packages may lie inside the standard library's folder: an installed plugin's.
    return path.startswith(_SITE_DIRS) or not path.startswith(_STDLIB_DIRS)


def _is_outside(frame: types.FrameType) -> bool:
    """Whether ``frame`` is neither the framework's, pluggy's nor the standard library's."""
    return _outside_file(frame.f_code.co_filename) and not is_internal(frame)


def _entries(tb: types.TracebackType | None) -> list[types.TracebackType]:
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    return entries


def _trim_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the internal frames that come before the last outside one."""
    entries = _entries(tb)
    frames = [entry.tb_frame for entry in entries]
    last_outside = max((i for i, f in enumerate(frames) if _is_outside(f)), default=-1)
    kept = [e for i, e in enumerate(entries) if i >= last_outside or not is_internal(frames[i])]
    if len(kept) == len(entries):
        return tb
    rebuilt: types.TracebackType | None = None
    for entry in reversed(kept):
        rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


def trimmed(exc: BaseException) -> BaseException:
    """Cut the calling machinery's frames from ``exc``'s traceback and chain; return ``exc``.

    For a log record: ``logger.warning(..., exc_info=trimmed(exc))``.
    """
    if _full():
        return exc
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current.__traceback__ = _trim_traceback(current.__traceback__)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
    return exc


def hide_in_pytest(excinfo: Any) -> bool:
    """pytest's ``__tracebackhide__``: hide the machinery's frames when a frame from outside
    the framework comes after the first of them (the plugin raised)."""
    if excinfo is None or _full():
        return False
    try:
        frames = [entry.tb_frame for entry in _entries(excinfo.tb)]
    except Exception:
        return False
    first = next((i for i, f in enumerate(frames) if is_internal(f)), None)
    return first is not None and any(_is_outside(f) for f in frames[first + 1 :])

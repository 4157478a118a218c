"""Tracebacks that show the plugin's frames, not the framework's way to them.

A plugin's exception reaches the host through twenty frames of calling machinery (the facade,
pluggy's loop, the guard, the handoff to a bounded call's worker) before the one
frame the plugin's author wrote. Those frames are the same for every failure and say nothing
about it, so:

- the modules of that machinery set ``__tracebackhide__ = hide_in_pytest`` at module level:
  pytest leaves their frames out of a failing test's report, as it does for its own, when the
  error came from outside the framework (a framework bug keeps every frame);
- the framework's log records of a plugin's failure carry :func:`trimmed` tracebacks: the same
  frames and pluggy's are cut from the exception's traceback and from its chain
  (``__cause__``, ``__context__``).

A frame is cut only when a frame from outside the framework (the plugin, its libraries, the
test) comes after it, deeper in the traceback; the frames of the standard library count as
neither. ``HERMES_FULL_TRACEBACKS=1`` (or pytest's ``--full-trace``) keeps every frame.
"""

from __future__ import annotations

import functools
import os
import sysconfig
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import pluggy

__all__ = ["FULL_TRACEBACKS_ENV", "hide_in_pytest", "is_internal", "set_full", "trimmed"]

FULL_TRACEBACKS_ENV: Final = "HERMES_FULL_TRACEBACKS"

_PLUGGY_DIR: Final = str(Path(pluggy.__file__).resolve().parent) + os.sep
_FRAMEWORK_DIR: Final = str(Path(__file__).resolve().parent.parent) + os.sep
_PATHS: Final = sysconfig.get_paths()
_STDLIB_DIRS: Final = tuple(
    {str(Path(_PATHS[key]).resolve()) + os.sep for key in ("stdlib", "platstdlib")}
)
_SITE_DIRS: Final = tuple(
    {str(Path(_PATHS[key]).resolve()) + os.sep for key in ("purelib", "platlib")}
)


class _Switch:
    full: bool | None = None  # None: as the environment says


_switch = _Switch()


def set_full(full: bool | None) -> None:
    """Keep every frame (``True``), trim (``False``), or follow ``$HERMES_FULL_TRACEBACKS``."""
    _switch.full = full


def _full() -> bool:
    if _switch.full is not None:
        return _switch.full
    return os.environ.get(FULL_TRACEBACKS_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _filename(frame: types.FrameType) -> str:
    return frame.f_code.co_filename


def is_internal(frame: types.FrameType) -> bool:
    """Whether ``frame`` is calling machinery: a marked module or function, or pluggy's."""
    if "__tracebackhide__" in frame.f_globals:
        return True
    try:
        if frame.f_locals.get("__tracebackhide__"):
            return True
    except Exception:  # exotic frames (exec with a custom mapping)
        pass
    return _filename(frame).startswith(_PLUGGY_DIR)


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
    return _outside_file(_filename(frame)) and not is_internal(frame)


def _kept(frames: list[types.FrameType]) -> list[bool]:
    """Which of ``frames`` (outermost first) a trimmed traceback keeps."""
    last_outside = max((i for i, f in enumerate(frames) if _is_outside(f)), default=-1)
    return [i >= last_outside or not is_internal(f) for i, f in enumerate(frames)]


def _trim_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    entries: list[types.TracebackType] = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    keep = _kept([entry.tb_frame for entry in entries])
    if all(keep):
        return entries[0] if entries else None
    rebuilt: types.TracebackType | None = None
    for entry, kept in zip(reversed(entries), reversed(keep), strict=True):
        if kept:
            rebuilt = types.TracebackType(rebuilt, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return rebuilt


def trimmed(exc: BaseException) -> BaseException:
    """Cut the calling machinery's frames from ``exc``'s traceback and chain; return ``exc``.

    For a log record: ``logger.warning(..., exc_info=trimmed(exc))``. The exception keeps the
    shorter traceback (a re-raise shows it too); nothing is cut with ``HERMES_FULL_TRACEBACKS``.
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


def _frames(tb: types.TracebackType | None) -> Iterable[types.FrameType]:
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next


def hide_in_pytest(excinfo: Any) -> bool:
    """pytest's ``__tracebackhide__`` of the machinery's modules: hide their frames when a
    frame from outside the framework comes after the first of them (the plugin raised)."""
    if excinfo is None or _full():
        return False
    try:
        frames = list(_frames(excinfo.tb))
    except Exception:
        return False
    first = next((i for i, f in enumerate(frames) if is_internal(f)), None)
    if first is None:
        return False
    return any(_is_outside(f) for f in frames[first + 1 :])

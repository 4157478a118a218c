"""Hermes' ``tools.interrupt``: per-thread interrupt and yield signals for tools.

Thread-scoped, as in Hermes: interrupting one session's tool never stops another session's
(a gateway runs many in one process). A host sets the bit on the thread running the tool;
the tool polls :func:`is_interrupted` on its own thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = [
    "clear_current_thread_interrupt",
    "consume_yield",
    "get_interrupt_reason",
    "is_interrupted",
    "is_thread_interrupted",
    "is_thread_yield_requested",
    "request_yield",
    "run_if_not_interrupted",
    "set_interrupt",
]

_lock = threading.Lock()
_interrupted: set[int] = set()
_reasons: dict[int, str] = {}
_yields: set[int] = set()


def _current() -> int:
    return threading.get_ident()


def set_interrupt(active: bool, thread_id: int | None = None, *, reason: str | None = None) -> None:
    """Set (or, with ``active=False``, clear) the interrupt of a thread (this one by default);
    ``reason`` is a cause safe to show people."""
    tid = thread_id if thread_id is not None else _current()
    with _lock:
        if active:
            _interrupted.add(tid)
            if reason:
                _reasons[tid] = reason
            else:
                _reasons.pop(tid, None)
        else:
            _interrupted.discard(tid)
            _reasons.pop(tid, None)


def is_interrupted() -> bool:
    """Whether this thread is interrupted."""
    return is_thread_interrupted(_current())


def is_thread_interrupted(thread_id: int | None) -> bool:
    """Whether ``thread_id`` is interrupted (``None`` never is)."""
    if thread_id is None:
        return False
    with _lock:
        return thread_id in _interrupted


def request_yield(thread_id: int) -> None:
    """Ask the tool on ``thread_id`` to yield (hand its work to the background), not stop."""
    with _lock:
        _yields.add(thread_id)


def is_thread_yield_requested(thread_id: int | None) -> bool:
    """Whether a yield is pending for ``thread_id`` (``None`` never is)."""
    if thread_id is None:
        return False
    with _lock:
        return thread_id in _yields


def consume_yield(thread_id: int | None) -> bool:
    """Take the pending yield of ``thread_id``; tell whether there was one."""
    if thread_id is None:
        return False
    with _lock:
        if thread_id in _yields:
            _yields.discard(thread_id)
            return True
        return False


def run_if_not_interrupted(callback: Callable[[], None]) -> bool:
    """Run ``callback`` under the interrupt lock unless this thread is interrupted; tell
    whether it ran (it must not block or call this module)."""
    with _lock:
        if _current() in _interrupted:
            return False
        callback()
        return True


def get_interrupt_reason() -> str | None:
    """The cause of this thread's interrupt, when one was given."""
    with _lock:
        return _reasons.get(_current())


def clear_current_thread_interrupt() -> None:
    """Clear this thread's interrupt (a freshly approved command starts clean)."""
    set_interrupt(False)

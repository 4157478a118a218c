"""Hermes' ``agent.async_utils``: scheduling a coroutine on another thread's loop safely.

``asyncio.run_coroutine_threadsafe`` raises when the loop is gone (a shutdown race); the
coroutine would then never be awaited nor closed. These helpers close it on that failure.
Once the loop has accepted the coroutine, its fate is the loop's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any

__all__ = ["WithdrawableDispatch", "consume_detached_task_result", "safe_schedule_threadsafe"]

_LOG = logging.getLogger(__name__)


def safe_schedule_threadsafe(
    coro: Coroutine[Any, Any, Any],
    loop: asyncio.AbstractEventLoop | None,
    *,
    logger: logging.Logger | None = None,
    log_message: str = "Failed to schedule coroutine on loop",
    log_level: int = logging.DEBUG,
) -> Future[Any] | None:
    """Schedule ``coro`` on ``loop`` from synchronous code: the future, or ``None`` (the
    coroutine closed, the failure logged at ``log_level``) when there is no loop or it refuses."""
    try:
        if loop is None:
            raise RuntimeError("loop is None")
        return asyncio.run_coroutine_threadsafe(coro, loop)
    except Exception as exc:
        if asyncio.iscoroutine(coro):
            coro.close()
        (logger or _LOG).log(log_level, "%s: %s", log_message, exc)
        return None


class WithdrawableDispatch:
    """A coroutine scheduled on another loop that the caller can withdraw until it starts:
    exactly one of :meth:`withdraw` and the loop's start succeeds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "pending"
        self._future: Future[Any] | None = None

    @classmethod
    def schedule(
        cls,
        coro: Coroutine[Any, Any, Any],
        loop: asyncio.AbstractEventLoop | None,
        **kwargs: Any,
    ) -> WithdrawableDispatch | None:
        """Schedule ``coro`` like :func:`safe_schedule_threadsafe`; ``None`` on failure."""
        dispatch = cls()
        dispatch._future = safe_schedule_threadsafe(dispatch._run(coro), loop, **kwargs)
        if dispatch._future is None:
            coro.close()
            return None
        return dispatch

    def result(self, timeout: float | None = None) -> Any:
        """The coroutine's result (``None`` if it was withdrawn), waiting at most ``timeout``."""
        assert self._future is not None
        return self._future.result(timeout=timeout)

    def withdraw(self) -> bool:
        """Keep the coroutine from ever running; ``False`` when the loop already started it."""
        return self._leave_pending("withdrawn")

    def _leave_pending(self, state: str) -> bool:
        with self._lock:
            if self._state != "pending":
                return False
            self._state = state
            return True

    async def _run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        if not self._leave_pending("started"):
            coro.close()
            return None
        return await coro


def consume_detached_task_result(task: asyncio.Future[Any]) -> None:
    """A done-callback for a task its owner gave up on: retrieve its exception so the loop
    does not log "exception was never retrieved"."""
    with contextlib.suppress(asyncio.CancelledError, Exception):
        task.exception()

"""Run a coroutine to completion from synchronous code, inside or outside a running loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")

_helper: concurrent.futures.ThreadPoolExecutor | None = None
_helper_lock = threading.Lock()


def is_awaitable(value: object) -> bool:
    """Return whether ``value`` must be awaited to get a result."""
    return inspect.isawaitable(value)


async def _await(value: Any) -> Any:
    return await value


def _get_helper() -> concurrent.futures.ThreadPoolExecutor:
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = concurrent.futures.ThreadPoolExecutor(
                max_workers=4, thread_name_prefix="hermes-hooks-async"
            )
        return _helper


def resolve(value: Any, *, timeout: float | None = None) -> Any:
    """Return ``value``, or the result of awaiting it when it is awaitable.

    With no running loop in this thread the awaitable runs on a fresh loop here; inside a
    running loop it runs on a helper thread's loop, so the caller's loop is never re-entered
    (which would raise) nor blocked forever when ``timeout`` is given.

    :raises TimeoutError: the awaitable did not finish within ``timeout`` seconds.
    """
    if not inspect.isawaitable(value):
        return value
    coro: Coroutine[Any, Any, Any] = value if inspect.iscoroutine(value) else _await(value)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # The caller's context variables travel with the coroutine, as they would with ``await``.
    context = contextvars.copy_context()
    future = _get_helper().submit(context.run, asyncio.run, coro)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError as exc:
        future.cancel()
        raise TimeoutError(f"coroutine did not finish within {timeout} s") from exc

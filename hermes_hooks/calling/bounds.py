"""The bound on one hook callback: ``plugins.hook_callback_timeout``, cool-down and hung workers.

A :class:`CallbackBound` belongs to one implementation (one callback) of a bounded hook. It runs
the callback so that the caller gets an answer, or a :class:`~hermes_hooks.errors.HookTimeoutError`,
within the bound:

- a sync callback runs on a worker thread (:mod:`hermes_hooks.calling.workers`); at the bound
  the caller stops waiting and the worker is *abandoned*, never joined: it keeps running until
  the callback returns, and is then reused;
- an async callback is awaited on the caller's loop (async path) or on the worker's own loop
  (sync path) and cancelled at the bound;
- after a timeout the callback is skipped for :data:`COOLDOWN_SECONDS`, and while
  :data:`MAX_HUNG_WORKERS` of its abandoned workers are still running it is skipped as well, so a
  permanently hung plugin holds at most that many threads.

What a timeout or a skip turns into (nothing, or a block) is the hook's policy, applied by
:mod:`hermes_hooks.calling.guards`.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.calling import workers
from hermes_hooks.errors import HookTimeoutError

if TYPE_CHECKING:  # asyncio is imported where a call needs it: it costs ~25 ms at start-up
    import asyncio

__all__ = [
    "COOLDOWN_SECONDS",
    "MAX_HUNG_WORKERS",
    "CallbackBound",
    "await_within",
    "bound_for",
    "is_async_callable",
]

COOLDOWN_SECONDS: float = 60.0
"""After a timeout the same callback is skipped this long (Hermes: 60 s)."""

MAX_HUNG_WORKERS: int = 3
"""Abandoned workers one callback may hold at once; beyond, it is skipped (Hermes: 3)."""

_SETTING: Final = "plugins.hook_callback_timeout"


def is_async_callable(function: object) -> bool:
    """Return whether calling ``function`` gives a coroutine (through shims and partials)."""
    seen = 0
    while seen < 8:  # a shim around a partial around a method: a few layers, never a cycle
        seen += 1
        inner = getattr(function, "__wrapped_callback__", None)
        if inner is not None:
            function = inner
            continue
        if isinstance(function, functools.partial):
            function = function.func
            continue
        break
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(type(function), "__call__", None)  # noqa: B004 - an object with async __call__
    return not inspect.isroutine(function) and inspect.iscoroutinefunction(call)


class _Expired(Exception):
    """The bound expired while awaiting (told apart from a TimeoutError the plugin raised)."""


async def await_within(awaitable: Awaitable[Any], bound: float) -> Any:
    """Await ``awaitable``, cancelling it after ``bound`` seconds.

    :raises _Expired: the bound expired (a ``TimeoutError`` of the plugin's own passes through).
    """
    import asyncio

    try:
        async with asyncio.timeout(bound) as scope:
            return await awaitable
    except TimeoutError:
        if scope.expired():
            raise _Expired from None
        raise


def _call_resolving(
    function: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any], bound: float
) -> Any:
    """Call on a worker; an awaitable result runs on the worker's loop, cancelled at the bound."""
    result = function(*args, **kwargs)
    if inspect.isawaitable(result):
        import asyncio

        result = asyncio.run(await_within(result, bound))
    return result


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve a cancelled-at-the-bound task's outcome, so asyncio does not log it as lost."""
    if not task.cancelled():
        task.exception()


class CallbackBound:
    """Runs one callback within a bound, with its cool-down and its count of hung workers.

    :param is_async: the callback is a coroutine function (awaited rather than sent to a worker
        in the async path).
    """

    __slots__ = ("_lock", "hung", "is_async", "suppressed_until")

    def __init__(self, *, is_async: bool) -> None:
        self.is_async = is_async
        self.suppressed_until = 0.0
        self.hung = 0
        self._lock = threading.Lock()

    # -- bookkeeping ----------------------------------------------------------------------------

    def _admit(self, bound: float) -> None:
        """Raise when the callback is to be skipped: cooling down, or too many workers hung."""
        if self.hung >= MAX_HUNG_WORKERS:
            raise HookTimeoutError(
                f"skipped: {self.hung} earlier calls are still running past the {bound:g} s "
                f"bound ({_SETTING}); the plugin looks hung"
            )
        if self.suppressed_until and time.monotonic() < self.suppressed_until:
            raise HookTimeoutError(
                f"skipped: it exceeded the {bound:g} s bound ({_SETTING}) less than "
                f"{COOLDOWN_SECONDS:g} s ago"
            )

    def _expired(self, bound: float) -> HookTimeoutError:
        with self._lock:
            self.suppressed_until = time.monotonic() + COOLDOWN_SECONDS
        return HookTimeoutError(f"did not finish within {bound:g} s ({_SETTING})")

    def _hold(self, job: workers.Job) -> bool:
        """Abandon ``job`` and count its worker as hung; return whether it was still running."""
        with self._lock:
            if not job.abandon(self._release):
                return False
            self.hung += 1
            return True

    def _release(self) -> None:
        with self._lock:
            self.hung -= 1

    def _submit(
        self,
        function: Callable[..., Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None,
        loop: asyncio.AbstractEventLoop | None,
    ) -> workers.Job:
        try:
            return workers.submit(function, args, kwargs, loop=loop)
        except workers.WorkerUnavailableError as exc:
            raise HookTimeoutError(f"skipped: {exc}") from None

    # -- calls ------------------------------------------------------------------------------------

    def call(
        self,
        function: Callable[..., Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None,
        bound: float,
    ) -> Any:
        """Call from synchronous code; return its result within ``bound`` seconds.

        :raises HookTimeoutError: the bound expired, or the callback is being skipped.
        """
        self._admit(bound)
        job = self._submit(_call_resolving, (function, args, kwargs or {}, bound), None, None)
        try:
            finished = job.wait(bound)
        except BaseException:
            self._hold(job)  # Ctrl-C while waiting: the worker may still be busy
            raise
        if not finished and self._hold(job):
            raise self._expired(bound)
        try:
            return job.result()
        except _Expired:
            raise self._expired(bound) from None

    async def acall(
        self,
        function: Callable[..., Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None,
        bound: float,
    ) -> Any:
        """Call from a coroutine; awaitables are awaited on the running loop, within ``bound``.

        :raises HookTimeoutError: the bound expired, or the callback is being skipped.
        """
        import asyncio

        self._admit(bound)
        loop = asyncio.get_running_loop()
        started = loop.time()
        if self.is_async:
            result = function(*args, **(kwargs or {}))
        else:
            job = self._submit(function, args, kwargs, loop)
            try:
                finished = await job.wait_async(bound)
            except asyncio.CancelledError:
                self._hold(job)  # our caller went away; the worker may still be busy
                raise
            if not finished and self._hold(job):
                raise self._expired(bound)
            result = job.result()
        if not inspect.isawaitable(result):
            return result
        return await self._await(result, max(bound - (loop.time() - started), 0.0), bound)

    async def _await(self, awaitable: Awaitable[Any], remaining: float, bound: float) -> Any:
        """Await on this loop; at the bound cancel it and return at once, whatever it does then.

        It runs as a task of its own, so that a coroutine that swallows the cancellation keeps
        only itself running, not its caller.
        """
        import asyncio

        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(awaitable)
        try:
            await workers.wait_until_done(loop, task, remaining)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not task.done():
            task.add_done_callback(_consume)
            task.cancel()
            raise self._expired(bound)
        return task.result()


_bounds: weakref.WeakKeyDictionary[object, CallbackBound] = weakref.WeakKeyDictionary()
_bounds_lock = threading.Lock()


def _forget_after_fork() -> None:
    """A forked child has none of the parent's hung workers; its cool-downs carry over."""
    global _bounds_lock
    _bounds_lock = threading.Lock()
    for bound in list(_bounds.values()):
        bound._lock = threading.Lock()
        bound.hung = 0


os.register_at_fork(after_in_child=_forget_after_fork)


def bound_for(function: object) -> CallbackBound:
    """Return the :class:`CallbackBound` of a callback, the same one while the callback lives.

    Registering a plugin again (``ctx.register_hook`` after load) makes new hookimpls for the
    same functions; their cool-down and hung workers carry over.
    """
    with _bounds_lock:
        try:
            found = _bounds.get(function)
        except TypeError:  # not weakly referenceable: its own bound, for as long as the guard
            return CallbackBound(is_async=is_async_callable(function))
        if found is None:
            found = _bounds[function] = CallbackBound(is_async=is_async_callable(function))
        return found

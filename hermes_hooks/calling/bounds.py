"""The bound on one hook callback: ``plugins.hook_callback_timeout``, cool-down and hung workers.

A :class:`CallbackBound` belongs to one callback: after a timeout it is skipped for
:data:`COOLDOWN_SECONDS`, and while :data:`MAX_HUNG_WORKERS` of its abandoned workers (or
:data:`MAX_HUNG_PER_PLUGIN` of its plugin's) still run. See docs/explanation/async-and-timeouts.md.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, final

from hermes_hooks.calling import workers
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.errors import HookTimeoutError

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

if TYPE_CHECKING:  # asyncio is imported where a call needs it: it costs ~25 ms at start-up
    import asyncio

    from hermes_hooks.calling import contexts

__all__ = [
    "COOLDOWN_SECONDS",
    "MAX_HUNG_PER_PLUGIN",
    "MAX_HUNG_WORKERS",
    "SELF_BOUNDED_ATTR",
    "BoundSetting",
    "CallbackBound",
    "bound_for",
    "is_async_callable",
]

COOLDOWN_SECONDS: float = 60.0
"""After a timeout the same callback is skipped this long (Hermes: 60 s)."""

MAX_HUNG_WORKERS: int = 3
"""Abandoned workers one callback may hold at once; beyond, it is skipped (Hermes: 3)."""

MAX_HUNG_PER_PLUGIN: int = 8
"""Abandoned workers all the callbacks of one plugin may hold at once; beyond, each is skipped."""

SELF_BOUNDED_ATTR: Final = "__hermes_self_bounded__"
"""True on an implementation that enforces its own time limit (a shell hook): not bounded again."""

_SETTING: Final = "plugins.hook_callback_timeout"


@final
class PluginHung:
    """How many abandoned workers one plugin's callbacks hold, together."""

    __slots__ = ("hung", "plugin")

    def __init__(self, plugin: str) -> None:
        self.plugin, self.hung = plugin, 0


def is_async_callable(function: object) -> bool:
    """Return whether calling ``function`` gives a coroutine (through shims and partials)."""
    for _ in range(8):  # a shim around a partial around a method: a few layers, never a cycle
        inner = getattr(function, "__wrapped_callback__", None)
        if inner is None and isinstance(function, functools.partial):
            inner = function.func
        if inner is None:
            break
        function = inner
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(type(function), "__call__", None)  # noqa: B004 - an object with async __call__
    return not inspect.isroutine(function) and inspect.iscoroutinefunction(call)


@final
class BoundSetting:
    """The current ``plugins.hook_callback_timeout`` in seconds, shared by a manager's guards."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds

    def __repr__(self) -> str:
        return f"BoundSetting({self.seconds!r})"


class CallbackBound:
    """One callback's cool-down and count of hung workers; :meth:`call` and :meth:`acall` run it
    on its own within a bound (a hook call's batch asks :meth:`skip_reason` and :meth:`expired`).

    :param is_async: the callback is a coroutine function (awaited on the caller's loop).
    """

    __slots__ = ("hung", "is_async", "owner", "suppressed_until")

    def __init__(self, *, is_async: bool, owner: PluginHung | None = None) -> None:
        self.is_async = is_async
        self.suppressed_until = 0.0
        self.hung = 0  # this callback's abandoned workers still running; owner.hung: its plugin's
        self.owner = owner if owner is not None else PluginHung("")

    def skip_reason(self, bound: float) -> str | None:
        """Return why the callback is to be skipped (cooling down, too many workers hung)."""
        if self.hung >= MAX_HUNG_WORKERS:
            return (
                f"skipped: {self.hung} earlier calls are still running past the {bound:g} s "
                f"bound ({_SETTING}); the plugin looks hung"
            )
        if self.owner.hung >= MAX_HUNG_PER_PLUGIN:
            return (
                f"skipped: {self.owner.hung} earlier calls of this plugin's callbacks are still "
                f"running past the {bound:g} s bound ({_SETTING}); the plugin looks hung"
            )
        if self.suppressed_until and time.monotonic() < self.suppressed_until:
            return (
                f"skipped: it exceeded the {bound:g} s bound ({_SETTING}) less than "
                f"{COOLDOWN_SECONDS:g} s ago"
            )
        return None

    def expired(self, bound: float) -> HookTimeoutError:
        """Start the cool-down; return the error a call past the bound turns into."""
        self.suppressed_until = time.monotonic() + COOLDOWN_SECONDS
        return HookTimeoutError(f"did not finish within {bound:g} s ({_SETTING})")

    def hold(self) -> None:
        """Count one more abandoned worker still running this callback."""
        with _lock:
            self.hung += 1
            self.owner.hung += 1

    def release(self) -> None:
        """An abandoned worker of this callback returned."""
        with _lock:
            self.hung -= 1
            self.owner.hung -= 1

    def _admit(self, bound: float) -> None:
        reason = self.skip_reason(bound)
        if reason is not None:
            raise HookTimeoutError(reason)

    def call(
        self,
        function: Callable[..., Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None,
        bound: float,
    ) -> Any:
        """Call from sync code within ``bound`` seconds (an awaitable on the worker's own loop).

        :raises HookTimeoutError: the bound expired, or the callback is being skipped.
        """
        from hermes_hooks.calling import handoff

        self._admit(bound)
        return handoff.run(
            (handoff.raising_step(function, args, kwargs, self),), {}, seconds=bound
        )[0]

    async def acall(
        self,
        function: Callable[..., Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None,
        bound: float,
    ) -> Any:
        """Call from a coroutine within ``bound``: a coroutine as a task of its own on this loop,
        a sync callback on a worker, both in the task's plugin-side context.

        :raises HookTimeoutError: the bound expired, or the callback is being skipped.
        """
        from hermes_hooks.calling import contexts, handoff

        self._admit(bound)
        started = time.monotonic()
        side = contexts.for_call()
        if self.is_async:
            result = function(*args, **(kwargs or {}))
        else:
            step = handoff.raising_step(function, args, kwargs, self)
            result = (await handoff.arun((step,), {}, seconds=bound, side=side))[0]
        if not inspect.isawaitable(result):
            return result
        return await self._await(
            result, max(bound - (time.monotonic() - started), 0.0), bound, side
        )

    async def _await(
        self, awaitable: Awaitable[Any], remaining: float, bound: float, side: contexts.PluginSide
    ) -> Any:
        """Await as a task of its own (so one that swallows the cancellation keeps only itself
        running); at the bound cancel it, replace its context and raise at once."""
        import asyncio

        loop = asyncio.get_running_loop()
        if inspect.iscoroutine(awaitable):
            task: asyncio.Future[Any] = loop.create_task(awaitable, context=side.context)
        else:
            task = asyncio.ensure_future(awaitable)
        try:
            await workers.wait_until_done(loop, task, remaining)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task.done():
            return task.result()
        task.add_done_callback(_consume)
        task.cancel()
        side.replace()  # the abandoned task may go on in the old context
        raise self.expired(bound)


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve a cancelled-at-the-bound task's outcome, so asyncio does not log it as lost."""
    if not task.cancelled():
        task.exception()


_bounds: weakref.WeakKeyDictionary[object, CallbackBound] = weakref.WeakKeyDictionary()
_owners: dict[str, PluginHung] = {}
_lock = threading.Lock()


def bound_for(function: object, plugin: str = "") -> CallbackBound:
    """Return the :class:`CallbackBound` of a callback, the same one while the callback lives
    (a plugin registered again keeps its cool-down and hung workers).

    :param plugin: the plugin whose callback it is: its hung workers count on that plugin too.
    """
    with _lock:
        owner = _owners.get(plugin)
        if owner is None:
            owner = _owners[plugin] = PluginHung(plugin)
        try:
            found = _bounds.get(function)
        except TypeError:  # not weakly referenceable: its own bound, for as long as the guard
            return CallbackBound(is_async=is_async_callable(function), owner=owner)
        if found is None:
            found = _bounds[function] = CallbackBound(
                is_async=is_async_callable(function), owner=owner
            )
        return found


def _forget_after_fork() -> None:
    """A forked child has none of the parent's hung workers; its cool-downs carry over."""
    global _lock
    _lock = threading.Lock()
    for bound in list(_bounds.values()):
        bound.hung = 0
    for owner in _owners.values():
        owner.hung = 0


os.register_at_fork(after_in_child=_forget_after_fork)

"""The bound on one hook callback: ``plugins.hook_callback_timeout``, cool-down and hung workers.

A :class:`CallbackBound` belongs to one implementation (one callback) of a bounded hook. The
callback gives its caller an answer, or a :class:`~hermes_hooks.errors.HookTimeoutError`, within
the bound:

- a sync callback runs on a worker thread, with the hook call's other implementations
  (:mod:`hermes_hooks.calling.handoff`: one handoff per hook call); at the bound the caller
  stops waiting and the worker is *abandoned*, never joined: it keeps running until the
  callback returns, and is then reused;
- an async callback is awaited on the caller's loop (async path) or on the worker's own loop
  (sync path) and cancelled at the bound;
- after a timeout the callback is skipped for :data:`COOLDOWN_SECONDS`, and while
  :data:`MAX_HUNG_WORKERS` of its abandoned workers are still running it is skipped as well;
  every bounded callback of a plugin is skipped while :data:`MAX_HUNG_PER_PLUGIN` of that
  plugin's abandoned workers are still running, so a plugin with hundreds of hung callbacks
  holds a few threads, and the skips are charged to it alone.

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

_SETTING: Final = "plugins.hook_callback_timeout"

SELF_BOUNDED_ATTR: Final = "__hermes_self_bounded__"
"""Set true on a hook implementation that enforces its own time limit (a shell hook, killed at
its ``timeout``): ``plugins.hook_callback_timeout`` does not bound it as well, so a hook's own
longer ``timeout`` is honoured, as Hermes' shell hooks enforce their own subprocess timeout."""


@final
class PluginHung:
    """How many abandoned workers one plugin's callbacks hold, together."""

    __slots__ = ("hung", "plugin")

    def __init__(self, plugin: str) -> None:
        self.plugin = plugin
        self.hung = 0


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


def _consume(task: asyncio.Future[Any]) -> None:
    """Retrieve a cancelled-at-the-bound task's outcome, so asyncio does not log it as lost."""
    if not task.cancelled():
        task.exception()


@final
class BoundSetting:
    """The current ``plugins.hook_callback_timeout`` in seconds; ``0`` or less: no bound.

    One per manager, shared by its guards and hook callers, and set when the config is read, so
    that a call reads one attribute rather than the config.
    """

    __slots__ = ("seconds",)

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds

    def __repr__(self) -> str:
        return f"BoundSetting({self.seconds!r})"


class CallbackBound:
    """Runs one callback within a bound, with its cool-down and its count of hung workers.

    A bounded hook call hands its implementations to :mod:`hermes_hooks.calling.handoff`, which
    asks each one's bound whether to skip it (:meth:`skip_reason`) and tells it of a timeout
    (:meth:`expired`) and of the worker it abandoned (:meth:`hold`, :meth:`release`).
    :meth:`call` and :meth:`acall` run one callback on its own, the same way.

    :param is_async: the callback is a coroutine function (awaited rather than sent to a worker
        in the async path).
    """

    __slots__ = ("_lock", "hung", "is_async", "owner", "suppressed_until")

    def __init__(self, *, is_async: bool, owner: PluginHung | None = None) -> None:
        self.is_async = is_async
        self.suppressed_until = 0.0
        #: This callback's abandoned workers still running; ``owner.hung``: its plugin's.
        self.hung = 0
        self.owner = owner if owner is not None else PluginHung("")
        self._lock = threading.Lock()

    # -- bookkeeping ----------------------------------------------------------------------------

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

    def _admit(self, bound: float) -> None:
        reason = self.skip_reason(bound)
        if reason is not None:
            raise HookTimeoutError(reason)

    def expired(self, bound: float) -> HookTimeoutError:
        """Start the cool-down; return the error a call past the bound turns into."""
        with self._lock:
            self.suppressed_until = time.monotonic() + COOLDOWN_SECONDS
        return HookTimeoutError(f"did not finish within {bound:g} s ({_SETTING})")

    def hold(self) -> None:
        """Count one more abandoned worker still running this callback."""
        with _owners_lock:
            self.hung += 1
            self.owner.hung += 1

    def release(self) -> None:
        """An abandoned worker of this callback returned."""
        with _owners_lock:
            self.hung -= 1
            self.owner.hung -= 1

    @property
    def held(self) -> bool:
        """Whether a skip may be due: a cool-down set, or abandoned workers still running."""
        return bool(self.hung or self.suppressed_until or self.owner.hung)

    # -- calls ------------------------------------------------------------------------------------

    def call(
        self,
        function: Callable[..., Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None,
        bound: float,
    ) -> Any:
        """Call from synchronous code; return its result within ``bound`` seconds.

        An awaitable result runs on the worker's own loop and is cancelled at the bound.

        :raises HookTimeoutError: the bound expired, or the callback is being skipped.
        """
        from hermes_hooks.calling import handoff

        self._admit(bound)
        step = handoff.raising_step(function, args, kwargs, self)
        return handoff.run((step,), {}, seconds=bound)[0]

    async def acall(
        self,
        function: Callable[..., Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None,
        bound: float,
    ) -> Any:
        """Call from a coroutine; awaitables are awaited on the running loop, within ``bound``.

        A coroutine runs as a task of its own in the calling task's plugin-side context
        (:mod:`hermes_hooks.calling.contexts`); a sync callback on a worker, in the same
        context.

        :raises HookTimeoutError: the bound expired, or the callback is being skipped.
        """
        import asyncio

        from hermes_hooks.calling import contexts, handoff

        self._admit(bound)
        loop = asyncio.get_running_loop()
        started = loop.time()
        side = contexts.for_call()
        if self.is_async:
            result = function(*args, **(kwargs or {}))
        else:
            step = handoff.raising_step(function, args, kwargs, self)
            result = (await handoff.arun((step,), {}, seconds=bound, side=side))[0]
        if not inspect.isawaitable(result):
            return result
        return await self._await(result, max(bound - (loop.time() - started), 0.0), bound, side)

    async def _await(
        self,
        awaitable: Awaitable[Any],
        remaining: float,
        bound: float,
        side: contexts.PluginSide | None = None,
    ) -> Any:
        """Await on this loop; at the bound cancel it and return at once, whatever it does then.

        It runs as a task of its own, so that a coroutine that swallows the cancellation keeps
        only itself running, not its caller; the task runs in the plugin-side context ``side``,
        which is replaced when the task is abandoned.
        """
        import asyncio

        loop = asyncio.get_running_loop()
        if side is not None and inspect.iscoroutine(awaitable):
            task: asyncio.Future[Any] = loop.create_task(awaitable, context=side.context)
        else:
            task = asyncio.ensure_future(awaitable)
        try:
            await workers.wait_until_done(loop, task, remaining)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not task.done():
            task.add_done_callback(_consume)
            task.cancel()
            if side is not None:
                side.replace()  # the abandoned task may go on in the old context
            raise self.expired(bound)
        return task.result()


_bounds: weakref.WeakKeyDictionary[object, CallbackBound] = weakref.WeakKeyDictionary()
_bounds_lock = threading.Lock()
_owners: dict[str, PluginHung] = {}
_owners_lock = threading.Lock()


def plugin_hung(plugin: str) -> PluginHung:
    """Return the count of abandoned workers shared by every callback of plugin ``plugin``."""
    with _owners_lock:
        found = _owners.get(plugin)
        if found is None:
            found = _owners[plugin] = PluginHung(plugin)
        return found


def _forget_after_fork() -> None:
    """A forked child has none of the parent's hung workers; its cool-downs carry over."""
    global _bounds_lock, _owners_lock
    _bounds_lock = threading.Lock()
    _owners_lock = threading.Lock()
    for bound in list(_bounds.values()):
        bound._lock = threading.Lock()
        bound.hung = 0
    for owner in _owners.values():
        owner.hung = 0


os.register_at_fork(after_in_child=_forget_after_fork)


def bound_for(function: object, plugin: str = "") -> CallbackBound:
    """Return the :class:`CallbackBound` of a callback, the same one while the callback lives.

    Registering a plugin again (``ctx.register_hook`` after load) makes new hookimpls for the
    same functions; their cool-down and hung workers carry over.

    :param plugin: the plugin whose callback it is: its abandoned workers count on that
        plugin's :func:`plugin_hung` too.
    """
    owner = plugin_hung(plugin)
    with _bounds_lock:
        try:
            found = _bounds.get(function)
        except TypeError:  # not weakly referenceable: its own bound, for as long as the guard
            return CallbackBound(is_async=is_async_callable(function), owner=owner)
        if found is None:
            found = CallbackBound(is_async=is_async_callable(function), owner=owner)
            _bounds[function] = found
        return found

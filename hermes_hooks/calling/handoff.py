"""One handoff per bounded hook call: its implementations run in order on a worker thread.

A bounded call is a :class:`Batch` of steps, one per implementation. A worker runs a shipment
of batches (the concurrent calls of one event loop share one), each in its caller's plugin-side
context and each step within its own deadline, which the caller watches: an overrun step is
abandoned with its worker, the rest goes on on a fresh one. See
docs/explanation/async-and-timeouts.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

import pluggy

from hermes_hooks.calling import contexts, workers
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.errors import HookTimeoutError

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

if TYPE_CHECKING:
    import asyncio

    from hermes_hooks.calling.gate import GateWatch

__all__ = ["GUARD_ATTR", "Batch", "CallObserver", "Step", "arun", "call_within", "notify", "run"]

logger = logging.getLogger("hermes_hooks")

CallObserver = Callable[[str, str, float, str], None]
"""``fn(hook_name, plugin_key, seconds, outcome)``, told of each implementation call."""

GUARD_ATTR: Final = "__hermes_guard__"
"""On a guarded plain implementation: its :class:`~hermes_hooks.calling.guards.Guard`."""

POSITIONAL: Final = 0  # target(*args)
KEYWORDS: Final = 1  # target(**kwargs): a register_hook callback taking **kwargs
EXPLICIT: Final = 2  # get() gives (args, kwargs) for guard.function

SPLIT_SECONDS: float = 0.01
"""A step running longer than this (twice the GIL's switch interval) sends the calls shipped
behind it on to other workers."""

StepGuard = Any  # a guards.Guard (or _Raising): calls the step, and says what a failure becomes
Step = tuple[Any, Callable[[Mapping[str, object]], Any], bool, str, StepGuard, int, Any, Any]
"""``(impl, get, single, owner, guard, kind, entry, target)``, made by :func:`step_of`."""

_WORKER: Final = 1  # who settled a step, or took a batch's place in a shipment
_CALLER: Final = 2
_GONE: Final = 3  # the caller left (Ctrl-C, cancellation)
_LOST: Final = object()
_PLAIN_TYPES: Final = frozenset({str, dict, list, tuple, int, float, bool, bytes, type(None)})


def notify(
    observers: Sequence[CallObserver], hook: str, owner: str, seconds: float, outcome: str
) -> None:
    """Tell each observer of one implementation call; one that raises is logged, never felt."""
    for observer in tuple(observers):
        try:
            observer(hook, owner, seconds, outcome)
        except KeyboardInterrupt:
            raise
        except BaseException:
            logger.warning("call observer %r raised; ignored", observer, exc_info=True)


# -- what the guards and the hook caller share with this module ----------------------------------


class Sink:
    """What a facade call of one hook wants from its guards: each result with its plugin."""

    __slots__ = ("hook", "records", "watch")

    def __init__(
        self, hook: str, records: list[tuple[str, object]], watch: GateWatch | None = None
    ) -> None:
        self.hook, self.records, self.watch = hook, records, watch


StepsCache = dict[int, tuple[list[pluggy.HookImpl], tuple[Step, ...], dict[object, int]]]
"""A hook caller's batches by first guard (steps, each guard's step): cleared on a change."""


class PendingCall:
    """A bounded call pluggy's loop runs on this thread: its first guard runs the batch."""

    __slots__ = (
        "cache",
        "exact",
        "firstresult",
        "hook",
        "impls",
        "kwargs",
        "outer",
        "ran",
        "values",
    )

    def __init__(
        self,
        hook: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, object],
        firstresult: bool,
        exact: bool,
        cache: StepsCache | None = None,
    ) -> None:
        self.hook, self.impls, self.kwargs, self.cache = hook, impls, kwargs, cache
        self.firstresult, self.exact = firstresult, exact
        self.ran: dict[object, int] | None = None  # each batched guard's step, once run
        self.values: list[Any] = []
        self.outer: PendingCall | None = None  # the call open on this thread before it


class _PerThread(threading.local):
    batch: Batch | None = None
    sink: Sink | None = None
    call: PendingCall | None = None  # the innermost open
    courier: _Courier | None = None  # of the loop running in this thread


_local = THREAD = _PerThread()
"""This thread's open batch, facade call and pending bounded call (a guard's entry reads
``THREAD.call`` itself)."""

OPEN_SINKS: Final[list[None]] = []
"""One item per thread whose facade call is open: the guards look for a sink only then."""


def on_worker() -> bool:
    """Tell whether this thread is running a bounded call's implementations right now."""
    return _local.batch is not None


def sink() -> Sink | None:
    """Return the facade call this thread is in, if any."""
    return _local.sink


def set_sink(value: Sink | None) -> Sink | None:
    """Make ``value`` this thread's facade call; return the one it replaces."""
    previous, _local.sink = _local.sink, value
    if value is not None:
        OPEN_SINKS.append(None)
    if previous is not None:
        OPEN_SINKS.pop()
    return previous


def answer(guard: StepGuard, args: Sequence[Any], kwargs: Mapping[str, Any], seconds: float) -> Any:
    """What bounded ``guard`` returns, called by pluggy's loop off a worker: from its pending
    call's batch (the first guard runs it), or handed off alone; either way the worker told the
    facade call's watch after the step."""
    current = _local.sink if OPEN_SINKS else None
    watch = current.watch if current is not None and current.hook == guard.hook_name else None
    call = _local.call
    if call is not None:
        ran = call.ran
        if ran is None and call.hook == guard.hook_name:
            steps, ran = _batch_steps(call, guard)
            call.ran = ran
            if steps:
                call.values = run(steps, call.kwargs, seconds, call.firstresult, call.exact, watch)
        if ran:
            position = ran.get(guard)
            if position is not None:
                return call.values[position]
    step = explicit_step(guard, args, kwargs, guard.plugin_key)
    return run((step,), {}, seconds, watch=watch)[0]


def _batch_steps(call: PendingCall, first: StepGuard) -> tuple[tuple[Step, ...], dict[object, int]]:
    """The steps of ``first`` and the bounded plain implementations after it, in call order."""
    cache, key = call.cache, id(first)
    cached = cache.get(key) if cache is not None else None
    if cached is not None and cached[0] == call.impls:
        return cached[1], cached[2]
    steps: list[Step] = []
    for impl in reversed(call.impls):
        guard: Any = getattr(impl.function, GUARD_ATTR, None)
        if impl.wrapper or impl.hookwrapper or (not steps and guard is not first):
            continue
        if guard is None or guard.bound is None or impl.function is not guard.entry:
            break  # replaced (a recorder's wrapper): from here each on its own
        if impl.kwargnames:
            break  # keyword arguments with defaults: likewise
        steps.append(step_of(impl))
    positions = {step[4]: index for index, step in enumerate(steps)}
    if cache is not None:
        cache[key] = (list(call.impls), tuple(steps), positions)
    return tuple(steps), positions


def step_of(impl: pluggy.HookImpl) -> Step:
    """The step of a guarded implementation (kept on its guard's entry)."""
    step: Step | None = getattr(impl.function, "__hermes_step__", None)
    if step is None or step[0] is not impl:
        guard: Any = getattr(impl.function, GUARD_ATTR)
        names = impl.argnames
        get: Any = itemgetter(*names) if names else lambda _: ()
        kind = KEYWORDS if guard.kw_target is not None else POSITIONAL
        target = guard.kw_target if kind == KEYWORDS else guard.target
        step = (impl, get, len(names) == 1, impl.plugin_name, guard, kind, guard.entry, target)
        setattr(impl.function, "__hermes_step__", step)  # noqa: B010
    return step


def explicit_step(
    guard: StepGuard, args: Sequence[Any], kwargs: Mapping[str, Any] | None, owner: str = ""
) -> Step:
    """A step calling ``guard.function(*args, **kwargs)``."""
    call = (tuple(args), dict(kwargs or {}))
    return (None, lambda _: call, False, owner, guard, EXPLICIT, None, None)


class _Raising:
    """The guard of a plain callable: its failures are raised, not made values."""

    __slots__ = ("bound", "function")
    check = kw_target = entry = None
    hook_name = plugin_key = ""
    observers: Final[tuple[CallObserver, ...]] = ()  # its caller tells them itself

    def __init__(self, function: Callable[..., Any], bound: Any) -> None:
        self.function, self.bound = function, bound

    def failed(self, exc: BaseException) -> Any:
        raise exc


def raising_step(
    function: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any] | None, bound: Any
) -> Step:
    """A step calling ``function(*args, **kwargs)`` whose failures are raised to the caller."""
    return explicit_step(_Raising(function, bound), args, kwargs)


# -- the worker's side ---------------------------------------------------------------------------


class Batch:
    """One bounded call's steps, as its caller and the workers share them."""

    __slots__ = (
        "cancel",
        "claims",
        "error",
        "exact",
        "firstresult",
        "future",
        "index",
        "kwargs",
        "seconds",
        "side",
        "start",
        "started",
        "steps",
        "stopped",
        "values",
        "watch",
    )

    def __init__(
        self,
        steps: Sequence[Step],
        kwargs: Mapping[str, object],
        seconds: float,
        firstresult: bool,
        exact: bool,
        watch: GateWatch | None,
        side: contexts.PluginSide,
    ) -> None:
        self.steps, self.kwargs, self.seconds, self.side = steps, kwargs, seconds, side
        self.firstresult, self.exact, self.watch = firstresult, exact, watch
        self.values: list[Any] = [None] * len(steps)
        self.start = 0  # the next step to run
        self.index, self.started = -1, 0.0  # the step under way, and since when
        self.claims: dict[int, int] = {}  # who settled each step
        self.cancel: list[Any] | None = None  # an awaitable on the worker's own loop
        self.error: BaseException | None = None
        self.stopped = False  # its caller left
        self.future: asyncio.Future[None] | None = None  # the async caller's


class _Ship:
    """Batches one worker runs in order; ``taken`` claims each one's place."""

    __slots__ = ("batches", "courier", "current", "cut", "job", "over", "taken", "timer")

    def __init__(self, batches: list[Batch], courier: _Courier) -> None:
        self.batches, self.courier = batches, courier
        self.taken: dict[int, int] = {}
        self.current = -1  # the place of the batch under way
        self.cut = len(batches)  # the caller took the places from here on
        self.over = False
        self.timer: asyncio.TimerHandle | None = None  # the courier's next look at it
        self.job: workers.Job | None = None

    def cut_rest(self) -> list[Batch]:
        """Take the places behind the current batch that the worker has not reached."""
        start, end, self.cut = self.current + 1, self.cut, self.current + 1
        take = self.taken.setdefault
        return [self.batches[at] for at in range(start, end) if take(at, _CALLER) is _CALLER]


def _serve(work: _Ship | Batch) -> None:
    """Run a thread's batch (in its context), or a shipment's batches in order, each in its
    caller's context; on a worker."""
    if type(work) is Batch:
        _serve_batch(work)
        return
    ship: Any = work
    try:
        for position, batch in enumerate(ship.batches):
            if ship.taken.setdefault(position, _WORKER) is not _WORKER:
                return  # the caller sent the rest elsewhere
            ship.current = position
            if batch.side.context.run(_serve_batch, batch):
                ship.courier.finished(batch)
    finally:
        ship.over = True
        ship.courier.finished(ship)  # its watch can stop now


def _serve_batch(batch: Batch) -> bool:
    """Run a batch from ``batch.start``; return whether it is done (``False``: given up)."""
    previous, _local.batch = _local.batch, batch
    try:
        return _serve_steps(batch)
    except BaseException as exc:
        batch.error = exc
        return True
    finally:
        _local.batch = previous


def _serve_steps(batch: Batch) -> bool:
    steps, kwargs, values, settle = batch.steps, batch.kwargs, batch.values, batch.claims.setdefault
    watch, monotonic = batch.watch, time.monotonic
    for index in range(batch.start, len(steps)):
        if batch.stopped:
            return False
        impl, get, single, owner, guard, kind, entry, target = steps[index]
        bound = guard.bound
        if impl is not None and impl.function is not entry:
            if (value := _call_replacement(batch, index, impl.function, get, single)) is _LOST:
                return False
        elif (bound.hung or bound.suppressed_until or bound.owner.hung) and (
            reason := bound.skip_reason(batch.seconds)
        ) is not None:
            value = guard.failed(HookTimeoutError(reason))
        else:
            try:  # KeyError: pluggy's HookCallError
                args: Any = get(kwargs) if kind != KEYWORDS else _keywords(batch, guard)
            except KeyError as exc:
                raise _missing(exc) from exc
            batch.started = monotonic()  # then which step: see _overdue
            batch.index = index
            error: BaseException | None = None
            try:
                if kind == POSITIONAL:
                    value = target(args) if single else target(*args)
                elif kind == KEYWORDS:
                    value = target(**args)
                else:
                    value = guard.function(*args[0], **args[1])
                if value is not None and type(value) not in _PLAIN_TYPES:
                    value = _await_here(value, batch) if inspect.isawaitable(value) else value
            except BaseException as exc:
                error, value = exc, None
            if settle(index, _WORKER) is not _WORKER:
                bound.release()  # the caller gave up on it and counted this worker as hung
                return False
            if guard.observers:
                seconds, outcome = (
                    monotonic() - batch.started,
                    "error" if error is not None else "ok",
                )
                notify(guard.observers, guard.hook_name, owner, seconds, outcome)
            if error is not None:
                value = guard.failed(error)
            elif value is not None and (check := guard.check) is not None and not check(value):
                value = guard.unfit(value)
        if watch is not None:
            watch.check(owner)
        if value is not None:
            values[index] = value
            if batch.firstresult:
                return True
    return True


def _keywords(batch: Batch, guard: StepGuard) -> Mapping[str, object]:
    return batch.kwargs if batch.exact else guard.select(batch.kwargs)


def _missing(exc: KeyError) -> pluggy.HookCallError:
    return pluggy.HookCallError(f"hook call must provide argument {exc.args[0]!r}")


def _call_replacement(
    batch: Batch, index: int, function: Callable[..., Any], get: Any, single: bool
) -> Any:
    """Call what replaced a guarded implementation (it calls the guard itself, inline here)."""
    try:
        args = get(batch.kwargs)
    except KeyError as exc:
        raise _missing(exc) from exc
    batch.started = time.monotonic()
    batch.index = index
    try:
        value = function(args) if single else function(*args)
    finally:
        if batch.claims.setdefault(index, _WORKER) is not _WORKER:
            batch.steps[index][4].bound.release()
            return _LOST  # noqa: B012 - given up: what it raised or returned is not ours
    return value


def _await_here(awaitable: Any, batch: Batch) -> Any:
    """Run an awaitable on this worker's own loop, cancellable by the caller at the deadline
    (inline on a thread whose loop is running, no worker being free: on a helper loop)."""
    import asyncio

    from hermes_hooks.calling import aio

    if asyncio._get_running_loop() is not None:
        try:
            return aio.resolve(awaitable, timeout=batch.seconds)
        except aio.ResolveTimeoutError as exc:
            raise HookTimeoutError(str(exc)) from None

    coro = awaitable if inspect.iscoroutine(awaitable) else aio.awaited(awaitable)
    handle: list[Any] = []
    batch.cancel = handle
    try:
        return asyncio.run(aio.run_cancellable(coro, handle))
    finally:
        batch.cancel = None


# -- the caller's side ---------------------------------------------------------------------------


def _overdue(batch: Batch) -> float | None:
    """Give up the step under way when past its deadline (``None``); else the seconds left."""
    index = batch.index  # first which step, then since when: see _serve_steps
    left = batch.started + batch.seconds - time.monotonic()
    if index < 0 or left > 0:
        return batch.seconds if index < 0 else left
    guard = batch.steps[index][4]
    guard.bound.hold()
    claim = batch.claims.setdefault(index, _CALLER)
    if claim is not _CALLER:
        guard.bound.release()  # _WORKER: it finished just now; _GONE: held once already
        return 0.001 if claim is _WORKER else None
    if batch.cancel:
        from hermes_hooks.calling import aio

        aio.cancel_from_afar(batch.cancel)  # an awaitable on the worker's loop stops at once
    batch.side.replace()  # the abandoned call still runs in the old context
    if batch.watch is not None:  # what it changed so far is undone, and its own, before the next
        with contextlib.suppress(Exception):  # it may be changing them still: then the late check
            batch.watch.check(batch.steps[index][3])
    if guard.observers:
        notify(guard.observers, guard.hook_name, guard.plugin_key, batch.seconds, "timeout")
    try:
        batch.values[index] = guard.failed(guard.bound.expired(batch.seconds))
    except BaseException as exc:
        batch.error = exc
    return None


def _go_on(batch: Batch) -> bool:
    """After a step was given up: whether the batch goes on, from the step after it."""
    index = batch.index
    batch.start, batch.index = index + 1, -1
    if batch.error is not None or batch.stopped or index + 1 >= len(batch.steps):
        return False
    return not (batch.firstresult and batch.values[index] is not None)


def run(
    steps: Sequence[Step],
    kwargs: Mapping[str, object],
    seconds: float,
    firstresult: bool = False,
    exact: bool = True,
    watch: GateWatch | None = None,
) -> list[Any]:
    """Run the steps on a worker, each within ``seconds``; return each step's result.

    :raises HookCallError: an implementation names an argument the call does not provide.
    :raises BaseException: what a guard raises (strict mode, ``KeyboardInterrupt``).
    """
    batch = Batch(steps, kwargs, seconds, firstresult, exact, watch, contexts.for_call())
    while True:
        try:
            job = workers.submit(_serve, (batch,), context=batch.side.context)
        except workers.WorkerUnavailableError:
            _inline(batch)  # no thread to be had: load alone never refuses a call
            return outcome(batch)
        timeout: float | None = seconds
        while timeout is not None:
            try:
                if job.wait(timeout):
                    return outcome(batch)
            except BaseException:
                give_up(batch)  # Ctrl-C while waiting: the worker may still be busy
                job.abandon()
                raise
            timeout = _overdue(batch)
        job.abandon()  # its step was given up: its worker leaves the pool's count
        if not _go_on(batch):
            return outcome(batch)


def outcome(batch: Batch) -> list[Any]:
    """Each step's result, or raise what the batch raised."""
    if batch.error is not None:
        error, batch.error = batch.error, None  # no reference cycle through the traceback
        raise error
    return batch.values


def give_up(batch: Batch) -> None:
    """The caller stops waiting altogether: the worker stops after its current step."""
    batch.stopped = True
    if (index := batch.index) >= 0:
        bound = batch.steps[index][4].bound
        bound.hold()
        if batch.claims.setdefault(index, _GONE) is not _GONE:
            bound.release()
    batch.side.replace()


def _inline(batch: Batch) -> None:
    """No worker could be had (:data:`workers.MAX_WORKERS` busy): run the steps here, unbounded."""
    try:
        batch.side.context.run(_serve_batch, batch)
    except RuntimeError as exc:
        if "cannot enter context" not in str(exc):
            raise
        _serve_batch(batch)  # its context is entered elsewhere: this thread's own


# -- the async path: one courier per event loop ---------------------------------------------------


class _Courier:
    """Ships the bounded calls of one loop's tasks to workers together; hands back results."""

    __slots__ = ("done", "loop", "queue", "waking")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: list[Batch] = []  # to ship at the loop's next turn
        self.done: deque[Batch | _Ship] = deque()  # finished on a worker, to hand back
        self.waking = False

    def add(self, batch: Batch) -> None:
        self.queue.append(batch)
        if len(self.queue) == 1:
            self.loop.call_soon(self._ship)

    def _ship(self) -> None:
        batches, self.queue = self.queue, []
        self.send(batches)

    def send(self, batches: list[Batch]) -> None:
        """Start a worker on ``batches``; with none to be had, run them here."""
        ship = _Ship(batches, self)
        try:
            ship.job = workers.submit(_serve, (ship,), context=contextvars.Context())
        except workers.WorkerUnavailableError:
            for batch in batches:
                _inline(batch)
                _settle(batch)
            return
        ship.timer = self.loop.call_later(SPLIT_SECONDS, self._watch, ship)

    def finished(self, done: Batch | _Ship) -> None:
        """A worker finished a batch or a shipment: wake the loop once for all meanwhile."""
        self.done.append(done)
        if not self.waking:
            self.waking = True
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                self.loop.call_soon_threadsafe(self._deliver)

    def _deliver(self) -> None:
        self.waking = False
        while self.done:
            done = self.done.popleft()
            if isinstance(done, Batch):
                _settle(done)
            elif done.timer is not None:
                done.timer.cancel()

    def _watch(self, ship: _Ship) -> None:
        """Give up an overrun step, and pass on what waits behind a slow one."""
        if ship.over:
            return
        current = ship.batches[max(ship.current, 0)]
        left = _overdue(current) if ship.current >= 0 else SPLIT_SECONDS
        if left is None:
            if ship.job is not None:
                ship.job.abandon()  # its worker leaves the pool's count
            rest = ship.cut_rest()
            if _go_on(current):
                rest.insert(0, current)
            else:
                _settle(current)
            if rest:
                self.send(rest)
            return
        behind = ship.cut - ship.current - 1 > 0
        if behind and current.index >= 0 and time.monotonic() - current.started > SPLIT_SECONDS:
            rest = ship.cut_rest()  # in two: repeated, this spreads them out in a few steps
            for part in (rest[: (len(rest) + 1) // 2], rest[(len(rest) + 1) // 2 :]):
                if part:
                    self.send(part)
            behind = False
        wait = min(left, SPLIT_SECONDS) if behind else left
        ship.timer = self.loop.call_later(wait, self._watch, ship)


def _settle(batch: Batch) -> None:
    if batch.future is not None and not batch.future.done():
        batch.future.set_result(None)


def send(batch: Batch) -> asyncio.Future[None]:
    """Hand ``batch`` to the running loop's courier; return the future done when it is."""
    loop = sys.modules["asyncio"].get_running_loop()  # imported: we are awaited
    courier = _local.courier
    if courier is None or courier.loop is not loop:
        courier = _local.courier = _Courier(loop)
    future: asyncio.Future[None] = loop.create_future()
    batch.future = future
    courier.add(batch)
    return future


async def arun(
    steps: Sequence[Step],
    kwargs: Mapping[str, object],
    *,
    seconds: float,
    firstresult: bool = False,
    exact: bool = True,
    side: contexts.PluginSide | None = None,
    watch: GateWatch | None = None,
) -> list[Any]:
    """:func:`run` for a coroutine, shipped with the loop's other bounded calls.

    :param side: the plugin-side context to run in; the calling task's by default.
    """
    batch = Batch(steps, kwargs, seconds, firstresult, exact, watch, side or contexts.for_call())
    try:
        await send(batch)
    except BaseException:
        give_up(batch)  # our caller went away; the worker may still be busy
        raise
    return outcome(batch)


def call_within(function: Callable[..., Any], args: Sequence[Any], seconds: float) -> Any:
    """Run ``function(*args)`` on a worker, in the caller's plugin-side context, within ``seconds``.

    :raises TimeoutError: it did not finish within ``seconds`` (it goes on in the background).
    :raises WorkerUnavailableError: no worker thread could be had.
    """
    side = contexts.for_call()
    before = side.context.copy()  # what an abandoned call set midway is not kept
    job = workers.submit(function, args, context=side.context)
    try:
        finished = job.wait(seconds)
    except BaseException:
        if job.abandon():  # Ctrl-C while waiting: it may still be busy
            side.replace(before)
        raise
    if not finished and job.abandon():
        side.replace(before)
        raise TimeoutError(f"did not finish within {seconds:g} s")
    return job.result()

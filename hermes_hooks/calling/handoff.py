"""One handoff per bounded hook call: its implementations run in order on one worker thread.

A bounded hook call (``plugins.hook_callback_timeout`` above zero) hands its implementations to
one worker (:mod:`hermes_hooks.calling.workers`) as a :class:`Batch`, runs there in the
caller's plugin-side context (:mod:`hermes_hooks.calling.contexts`), and the caller waits. Each
implementation still has its own deadline, ``bound`` seconds from its own start: the worker
notes which step it is on and since when, and the caller, woken at the earliest deadline,
checks it. An implementation past its deadline is *abandoned* with its worker, its timeout is
recorded against its plugin (cool-down, hung-worker count, the hook's policy), and the rest of
the call goes on on a fresh worker. The worker and the caller settle each step with one atomic
claim (``dict.setdefault``), so a step that finishes just as its deadline passes counts once,
either as its result or as a timeout.

Every call runs through pluggy's own loop; the batch is how its guards share one handoff. The
hook caller opens a :class:`PendingCall` around pluggy's loop (:func:`push_pending`); the first
bounded guard pluggy calls (:func:`answer`) runs itself and the plain implementations after it
as one batch, in the order pluggy's loop will ask for them, and each later guard returns its
own result from it. A guard the batch did not reach (a recorder's replacement in between,
keyword arguments with defaults, a call not made through the hook caller) hands off alone.

A facade call tells the guards what it wants back through this thread's :class:`Sink`: each
result with its plugin, and the tool gate's watch to tell after each implementation.

A hook called from inside a bounded call (a plugin's ``ctx.llm`` firing ``pre_api_request``)
runs inline on that worker: :func:`on_worker` tells the guards so. Its time counts against
the outer implementation's deadline.

What a step is: ``(impl, get, single, owner, guard, kind, ...)``, made by :func:`step_of`, where
``get`` takes the call's keyword arguments and returns the implementation's, and ``guard`` (a
:class:`~hermes_hooks.calling.guards.Guard`, or any :class:`StepGuard`) knows how to call it
and what its failure means; ``kind`` is :data:`POSITIONAL` (``guard.target(*args)``),
:data:`KEYWORDS` (``guard.kw_target(**kwargs)``, a ``register_hook`` callback taking
``**kwargs``) or :data:`EXPLICIT` (``get`` returns ``(args, kwargs)`` for ``guard.function``).
When ``impl.function`` is no longer ``guard.entry`` (a recorder wrapped it), the replacement
is called instead, as pluggy would, and what it raises propagates.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final, Protocol

import pluggy

from hermes_hooks.calling import contexts, workers
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.errors import HookTimeoutError

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

if TYPE_CHECKING:
    import asyncio

    from hermes_hooks.calling.gate import GateWatch

__all__ = [
    "EXPLICIT",
    "CallObserver",
    "GUARD_ATTR",
    "KEYWORDS",
    "POSITIONAL",
    "Batch",
    "BoundState",
    "Step",
    "StepGuard",
    "arun",
    "call_within",
    "notify",
    "on_worker",
    "run",
]

logger = logging.getLogger("hermes_hooks")

CallObserver = Callable[[str, str, float, str], None]
"""``fn(hook_name, plugin_key, seconds, outcome)``: told of each implementation call (its own
time; ``outcome`` is ``"ok"``, ``"error"`` or ``"timeout"``); see ``pm.add_call_observer``."""


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


GUARD_ATTR: Final = "__hermes_guard__"
"""On a guarded plain implementation: its :class:`~hermes_hooks.calling.guards.Guard`."""

POSITIONAL: Final = 0
KEYWORDS: Final = 1
EXPLICIT: Final = 2

_WORKER: Final = 1
_CALLER: Final = 2
_RECHECK: Final = 0.001
"""Seconds before looking again when a step finished just as its deadline passed."""

# What most hook results are, and never awaitable: told apart before the slower ABC check.
_PLAIN_TYPES: Final = frozenset({str, dict, list, tuple, int, float, bool, bytes, type(None)})


class BoundState(Protocol):
    """The cool-down and hung-worker count of one callback (a ``CallbackBound``)."""

    @property
    def held(self) -> bool: ...

    def skip_reason(self, seconds: float) -> str | None: ...
    def expired(self, seconds: float) -> HookTimeoutError: ...
    def hold(self) -> None: ...
    def release(self) -> None: ...


class StepGuard(Protocol):
    """How a step calls its implementation, and what a failure or a misfit turns into."""

    @property
    def bound(self) -> BoundState | None: ...
    @property
    def check(self) -> Callable[[object], bool] | None: ...
    @property
    def target(self) -> Callable[..., Any]: ...
    @property
    def function(self) -> Callable[..., Any]: ...
    @property
    def kw_target(self) -> Callable[..., Any] | None: ...
    @property
    def entry(self) -> Callable[..., Any] | None: ...
    @property
    def hook_name(self) -> str: ...
    @property
    def plugin_key(self) -> str: ...
    @property
    def observers(self) -> Sequence[CallObserver]: ...

    def select(self, kwargs: Mapping[str, object]) -> dict[str, object]: ...
    def failed(self, exc: BaseException) -> Any: ...
    def unfit(self, result: object) -> Any: ...


Step = tuple[
    "pluggy.HookImpl | None",
    Callable[[Mapping[str, object]], Any],
    bool,
    str,
    StepGuard,
    int,
    Any,
    Any,
]
"""``(impl, get, single, owner, guard, kind, entry, target)``: a batch's steps; the last two
are the guard's entry and what it calls."""


class Sink:
    """What a facade call of one hook wants from its guards: each result with its plugin."""

    __slots__ = ("hook", "records", "watch")

    def __init__(
        self, hook: str, records: list[tuple[str, object]], watch: GateWatch | None = None
    ) -> None:
        self.hook = hook
        self.records = records
        self.watch = watch


class PendingCall:
    """A bounded hook call pluggy's loop is running on this thread, for its first guard to batch.

    The hook caller opens one around pluggy's loop (:func:`pending`); the first bounded guard
    pluggy calls runs itself and the plain implementations after it on one worker, in the order
    pluggy's loop will ask for them, and each later guard returns what it already got.
    """

    __slots__ = ("cache", "exact", "firstresult", "hook", "impls", "kwargs", "ran")

    def __init__(
        self,
        hook: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, object],
        firstresult: bool,
        exact: bool,
        cache: StepsCache | None = None,
    ) -> None:
        self.hook = hook
        #: The hook caller's batches, reused while its list of implementations stays.
        self.cache = cache
        self.impls = impls
        self.kwargs = kwargs
        self.firstresult = firstresult
        self.exact = exact
        #: Each guard that ran in the batch, with what it returned; ``None`` before the batch.
        self.ran: dict[object, Any] | None = None


class _PerThread(threading.local):
    batch: Batch | None = None
    sink: Sink | None = None
    calls: list[PendingCall] | None = None


_local = _PerThread()


def on_worker() -> bool:
    """Tell whether this thread is running a bounded call's implementations right now."""
    return _local.batch is not None


def thread_state() -> threading.local:
    """The per-thread state the compiled guards read (``batch``, ``sink``), as it is shared."""
    return _local


def sink() -> Sink | None:
    """Return the facade call this thread is in, if any."""
    return _local.sink


OPEN_SINKS: Final[list[None]] = []
"""One item per thread whose facade call is open: the compiled guards look for a sink only
while it is not empty (a list's ``append`` and ``pop`` are atomic, its truth one check)."""


def set_sink(value: Sink | None) -> Sink | None:
    """Make ``value`` this thread's facade call; return the one it replaces."""
    previous = _local.sink
    _local.sink = value
    if value is not None:
        OPEN_SINKS.append(None)
    if previous is not None:
        OPEN_SINKS.pop()
    return previous


def push_pending(call: PendingCall) -> None:
    """Open a bounded call around pluggy's loop (:class:`PendingCall`)."""
    calls = _local.calls
    if calls is None:
        calls = _local.calls = []
    calls.append(call)


def pop_pending() -> None:
    """Close the bounded call opened last on this thread."""
    calls = _local.calls
    if calls:
        calls.pop()


def answer(guard: StepGuard, args: Sequence[Any], kwargs: Mapping[str, Any], seconds: float) -> Any:
    """What bounded ``guard`` returns, called by pluggy's loop off a worker.

    Inside a :class:`PendingCall` of its hook, the first guard runs the batch (one handoff for
    the call) and each guard then returns its own result from it; otherwise, or for a guard the
    batch did not reach, it is handed off alone.
    """
    calls = _local.calls
    if calls:
        call = calls[-1]
        if call.hook == guard.hook_name:
            ran = call.ran
            if ran is None:  # the first guard: it runs the batch, the later ones read from it
                current = _local.sink if OPEN_SINKS else None
                hook = guard.hook_name
                watch = current.watch if current is not None and current.hook == hook else None
                _run_pending(call, guard, seconds, watch)
                ran = call.ran
                assert ran is not None
            found_here = ran.get(guard, _NOT_RUN)
            if found_here is not _NOT_RUN:
                return found_here
    found = run((explicit_step(guard, args, kwargs, guard.plugin_key),), {}, seconds=seconds)
    return found[0][1] if found else None


_NOT_RUN: Final = object()
"""What a batch's results give for a guard it did not reach."""

StepsCache = dict[int, tuple[list[pluggy.HookImpl], tuple["Step", ...]]]
"""A hook caller's batches, by first guard: emptied whenever the hook's list changes."""


def _batch_steps(call: PendingCall, first: StepGuard) -> tuple[Step, ...]:
    """The steps of ``first`` and the bounded plain implementations after it, in call order."""
    cache, key = call.cache, id(first)
    cached = cache.get(key) if cache is not None else None
    if cached is not None and cached[0] == call.impls:
        return cached[1]
    steps: list[Step] = []
    for impl in reversed(call.impls):
        if impl.wrapper or impl.hookwrapper:
            continue
        guard: Any = getattr(impl.function, GUARD_ATTR, None)
        if not steps and guard is not first:
            continue
        if (
            guard is None
            or guard.bound is None
            or impl.function is not guard.entry
            or impl.kwargnames
        ):
            break  # replaced (a recorder's wrapper), or keywords: from here each on its own
        steps.append(step_of(impl))
    if cache is not None:
        cache[key] = (list(call.impls), tuple(steps))
    return tuple(steps)


def _run_pending(call: PendingCall, first: StepGuard, seconds: float, watch: Any) -> None:
    """Run ``first`` and the bounded plain implementations after it on one worker."""
    steps = _batch_steps(call, first)
    call.ran = {}
    if not steps:
        return
    found = run(
        steps,
        call.kwargs,
        seconds=seconds,
        firstresult=call.firstresult,
        exact=call.exact,
        watch=watch,
    )
    values = dict(found)
    last = found[-1][0] if call.firstresult and found else len(steps) - 1
    call.ran = {steps[index][4]: values.get(index) for index in range(last + 1)}


def step_of(impl: pluggy.HookImpl) -> Step:
    """The step of a guarded implementation: how a batch calls it."""
    guard: Any = getattr(impl.function, GUARD_ATTR)
    names = impl.argnames
    get: Callable[[Mapping[str, object]], Any] = itemgetter(*names) if names else _no_args
    if guard.kw_target is not None:
        kind, target = KEYWORDS, guard.kw_target
    else:
        kind, target = POSITIONAL, guard.target
    return (impl, get, len(names) == 1, impl.plugin_name, guard, kind, guard.entry, target)


def _no_args(kwargs: Mapping[str, object]) -> tuple[()]:
    return ()


def missing_argument(exc: KeyError) -> pluggy.HookCallError:
    """pluggy's own error for an argument the call does not provide."""
    return pluggy.HookCallError(f"hook call must provide argument {exc.args[0]!r}")


class Batch:
    """One bounded call's implementations, as the caller and its worker share them."""

    __slots__ = (
        "cancel",
        "claims",
        "exact",
        "firstresult",
        "index",
        "kwargs",
        "results",
        "seconds",
        "start",
        "started",
        "steps",
        "watch",
    )

    def __init__(
        self,
        steps: Sequence[Step],
        kwargs: Mapping[str, object],
        results: list[Any],
        start: int,
        seconds: float,
        firstresult: bool,
        exact: bool,
        watch: GateWatch | None = None,
    ) -> None:
        self.steps = steps
        #: A gated call's watch, told after each step (on the worker).
        self.watch = watch
        self.kwargs = kwargs
        #: ``(step index, value)`` of each non-``None`` result, in call order.
        self.results = results
        self.start = start
        self.seconds = seconds
        self.firstresult = firstresult
        #: The call's keywords are exactly the hook's arguments: passed on as they are.
        self.exact = exact
        #: The step the worker is on (-1 before the first) and when it started it, for the
        #: caller's deadline.
        self.index = -1
        self.started = 0.0
        #: Who settled each step: the worker (its result counts) or the caller (a timeout).
        self.claims: dict[int, int] = {}
        #: ``[(loop, task)]`` of an awaitable the worker is running, to cancel from afar.
        self.cancel: list[Any] | None = None


# -- the worker's side ----------------------------------------------------------------------------


def _serve(batch: Batch) -> None:
    """Run a batch's steps, in order, from ``batch.start``; runs on a worker, in its context."""
    previous = _local.batch
    _local.batch = batch
    try:
        _serve_steps(batch)
    finally:
        _local.batch = previous


def _serve_steps(batch: Batch) -> None:
    steps, kwargs, results, claims = batch.steps, batch.kwargs, batch.results, batch.claims
    exact, firstresult, seconds = batch.exact, batch.firstresult, batch.seconds
    monotonic = time.monotonic
    watch = batch.watch
    for index in range(batch.start, len(steps)):
        impl, get, single, owner, guard, kind, entry, target = steps[index]
        if impl is not None and impl.function is not entry:
            value = _call_replacement(impl, get, single, kwargs, batch, index)
            if value is _ABANDONED:
                return
        elif (
            (bound := guard.bound) is not None
            and bound.held
            and (reason := bound.skip_reason(seconds)) is not None
        ):
            value = guard.failed(HookTimeoutError(reason))
        else:
            try:  # the common case, POSITIONAL, first; KeyError: pluggy's HookCallError
                args: Any = (
                    get(kwargs) if kind != KEYWORDS else kwargs if exact else guard.select(kwargs)
                )
            except KeyError as exc:
                raise missing_argument(exc) from exc
            error: BaseException | None = None
            # Its start, then which step it is: the caller reads them the other way round, so
            # a deadline it works out is never earlier than the step's own.
            batch.started = monotonic()
            batch.index = index
            try:
                if kind == POSITIONAL:
                    value = target(args) if single else target(*args)
                elif kind == KEYWORDS:
                    value = target(**args)
                else:
                    positional, named = args
                    value = guard.function(*positional, **named)
                if (
                    value is not None
                    and type(value) not in _PLAIN_TYPES
                    and inspect.isawaitable(value)
                ):
                    value = _await_here(value, batch)
            except BaseException as exc:
                error = exc
                value = None
            if claims.setdefault(index, _WORKER) is not _WORKER:
                return  # the caller gave up on this step and went on without this worker
            if guard.observers:
                _tell(guard, owner, batch.started, error)
            if error is not None:
                value = guard.failed(error)
            elif value is not None and guard.check is not None and not guard.check(value):
                value = guard.unfit(value)
        if watch is not None:
            watch.check(owner)
        if value is not None:
            results.append((index, value))
            if firstresult:
                return


def _tell(guard: StepGuard, owner: str, started: float, error: BaseException | None) -> None:
    """Tell the call observers of one step that ran (its own time, since ``started``)."""
    outcome = "ok" if error is None else "error"
    notify(guard.observers, guard.hook_name, owner, time.monotonic() - started, outcome)


_ABANDONED: Final = object()


def _call_replacement(
    impl: pluggy.HookImpl,
    get: Callable[[Mapping[str, object]], Any],
    single: bool,
    kwargs: Mapping[str, object],
    batch: Batch,
    index: int,
) -> Any:
    """Call what replaced a guarded implementation (it calls the guard itself, inline here)."""
    try:
        args = get(kwargs)
    except KeyError as exc:
        raise missing_argument(exc) from exc
    function = impl.function
    batch.started = time.monotonic()
    batch.index = index
    try:
        value = function(args) if single else function(*args)
    except BaseException:
        if batch.claims.setdefault(index, _WORKER) is not _WORKER:
            return _ABANDONED
        raise
    if batch.claims.setdefault(index, _WORKER) is not _WORKER:
        return _ABANDONED
    return value


def _await_here(awaitable: Any, batch: Batch) -> Any:
    """Run an awaitable on this worker's own loop, cancellable by the caller at the deadline."""
    import asyncio

    from hermes_hooks.calling import aio

    coro = awaitable if inspect.iscoroutine(awaitable) else aio.awaited(awaitable)
    handle: list[Any] = []
    batch.cancel = handle
    try:
        return asyncio.run(aio.run_cancellable(coro, handle))
    finally:
        batch.cancel = None


# -- the caller's side ----------------------------------------------------------------------------


def run(
    steps: Sequence[Step],
    kwargs: Mapping[str, object],
    *,
    seconds: float,
    firstresult: bool = False,
    exact: bool = True,
    watch: GateWatch | None = None,
) -> list[tuple[int, Any]]:
    """Run the steps on one worker, each within ``seconds``; return their non-``None`` results.

    Each result comes with the index of its step: ``[(index, value), ...]``, in call order.

    :param watch: a gated call's watch, told after each step.

    :raises HookCallError: an implementation names an argument the call does not provide.
    :raises BaseException: what a guard raises (strict mode, ``KeyboardInterrupt``).
    """
    results: list[tuple[int, Any]] = []
    start = 0
    side = contexts.for_call()
    while start < len(steps):
        batch = Batch(steps, kwargs, results, start, seconds, firstresult, exact, watch)
        try:
            job = workers.submit(_serve, (batch,), context=side.context)
        except workers.WorkerUnavailableError:
            _inline(batch, side)  # no thread to be had: load alone never refuses a call
            return results
        abandoned = _wait(batch, job, side)
        if abandoned is None:
            job.result()  # raises what the batch raised
            return results
        if firstresult and results:
            return results
        start = abandoned + 1
    return results


def _wait(batch: Batch, job: workers.Job, side: contexts.PluginSide) -> int | None:
    """Wait for the batch, deadline by deadline; return the step abandoned, or ``None``."""
    seconds = batch.seconds
    timeout = seconds
    while True:
        try:
            if job.wait(timeout):
                return None
        except BaseException:
            _give_up(batch, job, side)  # Ctrl-C while waiting: the worker may still be busy
            raise
        timeout, abandoned = _check_deadline(batch, job, side)
        if abandoned is not None:
            return abandoned


def _check_deadline(
    batch: Batch, job: workers.Job, side: contexts.PluginSide
) -> tuple[float, int | None]:
    """Look at the step the worker is on: the time left to wait, or the step given up."""
    seconds = batch.seconds
    index = batch.index  # first which step, then since when: see _serve_steps
    if index < 0:
        return seconds, None  # the worker has not started yet
    started = batch.started
    left = started + seconds - time.monotonic()
    if left > 0:
        return left, None
    if batch.claims.setdefault(index, _CALLER) is not _CALLER:
        return _RECHECK, None  # it finished just now: its next step is about to show
    _overrun(batch, job, side, index)
    return 0.0, index


def _overrun(batch: Batch, job: workers.Job, side: contexts.PluginSide, index: int) -> None:
    """Give up on step ``index``: count its worker as hung and apply the hook's policy."""
    guard = batch.steps[index][4]
    bound = guard.bound
    assert bound is not None, "only bounded steps are handed off"
    bound.hold()
    if not job.abandon(bound.release):
        bound.release()  # the worker ended after all, just now
    if batch.cancel:
        from hermes_hooks.calling import aio

        aio.cancel_from_afar(batch.cancel)  # an awaitable on the worker's loop stops at once
    side.replace()  # the abandoned call still runs in the old context
    if guard.observers:
        notify(guard.observers, guard.hook_name, guard.plugin_key, batch.seconds, "timeout")
    value = guard.failed(bound.expired(batch.seconds))
    if value is not None:
        batch.results.append((index, value))


def _give_up(batch: Batch, job: workers.Job, side: contexts.PluginSide) -> None:
    """The caller stops waiting altogether: the worker stops after its current step."""
    index = max(batch.index, batch.start)
    while index < len(batch.steps) and batch.claims.setdefault(index, _CALLER) is not _CALLER:
        index += 1
    if index < len(batch.steps):
        bound = batch.steps[index][4].bound
        if bound is not None:
            bound.hold()
            if not job.abandon(bound.release):
                bound.release()
    side.replace()


def _inline(batch: Batch, side: contexts.PluginSide) -> None:
    """No worker could be had (:data:`workers.MAX_WORKERS` busy): run the steps here, unbounded.

    Refusing would turn load into blocked tool calls and skipped transforms charged to plugins
    that did nothing wrong; a hung plugin is skipped before it gets here (its cap), so what runs
    inline is the others' work.
    """
    try:
        side.context.run(_serve, batch)
    except RuntimeError as exc:
        if "cannot enter context" not in str(exc):
            raise
        _serve(batch)  # its context is entered elsewhere: this thread's own


async def arun(
    steps: Sequence[Step],
    kwargs: Mapping[str, object],
    *,
    seconds: float,
    firstresult: bool = False,
    exact: bool = True,
    side: contexts.PluginSide | None = None,
    watch: GateWatch | None = None,
) -> list[tuple[int, Any]]:
    """:func:`run` for a coroutine: the loop keeps running while the worker works.

    :param side: the plugin-side context to run in; the calling task's by default.
    :param watch: a gated call's watch, told after each step.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    results: list[tuple[int, Any]] = []
    start = 0
    if side is None:
        side = contexts.for_call()
    while start < len(steps):
        batch = Batch(steps, kwargs, results, start, seconds, firstresult, exact, watch)
        try:
            job = workers.submit(_serve, (batch,), loop=loop, context=side.context)
        except workers.WorkerUnavailableError:
            _inline(batch, side)
            return results
        abandoned = await _await_batch(batch, job, side, loop)
        if abandoned is None:
            job.result()
            return results
        if firstresult and results:
            return results
        start = abandoned + 1
    return results


async def _await_batch(
    batch: Batch, job: workers.Job, side: contexts.PluginSide, loop: asyncio.AbstractEventLoop
) -> int | None:
    import asyncio

    timeout = batch.seconds
    while True:
        try:
            if await job.wait_async(timeout):
                return None
        except asyncio.CancelledError:
            _give_up(batch, job, side)  # our caller went away; the worker may still be busy
            raise
        timeout, abandoned = _check_deadline(batch, job, side)
        if abandoned is not None:
            return abandoned


def call_within(function: Callable[..., Any], args: Sequence[Any], seconds: float) -> Any:
    """Run ``function(*args)`` on a worker, in the caller's plugin-side context, within ``seconds``.

    For work that is not a hook call (a plugin's import and ``register(ctx)``): at the bound the
    worker is abandoned, never joined, and the context it runs in is replaced.

    :raises TimeoutError: it did not finish within ``seconds`` (it goes on in the background).
    :raises WorkerUnavailableError: no worker thread could be had.
    """
    side = contexts.for_call()
    job = workers.submit(function, args, context=side.context)
    try:
        finished = job.wait(seconds)
    except BaseException:
        if job.abandon():  # Ctrl-C while waiting: it may still be busy
            side.replace()
        raise
    if not finished and job.abandon():
        side.replace()
        raise TimeoutError(f"did not finish within {seconds:g} s")
    return job.result()


class _Raising:
    """A :class:`StepGuard` for a plain callable: its failures are raised, not made values."""

    __slots__ = (
        "bound",
        "check",
        "entry",
        "function",
        "hook_name",
        "kw_target",
        "plugin_key",
        "target",
    )

    #: Its caller, a guard's coroutine, tells the observers itself.
    observers: Final[tuple[CallObserver, ...]] = ()

    def __init__(self, function: Callable[..., Any], bound: BoundState) -> None:
        self.hook_name = self.plugin_key = ""
        self.function = self.target = function
        self.bound = bound
        self.check = None
        self.kw_target = None
        self.entry = None

    def select(self, kwargs: Mapping[str, object]) -> dict[str, object]:
        return dict(kwargs)

    def failed(self, exc: BaseException) -> Any:
        raise exc

    def unfit(self, result: object) -> Any:
        return result


def explicit_step(
    guard: StepGuard, args: Sequence[Any], kwargs: Mapping[str, Any] | None, owner: str = ""
) -> Step:
    """A step calling ``guard.function(*args, **kwargs)``."""
    call = (tuple(args), dict(kwargs or {}))
    return (None, lambda _: call, False, owner, guard, EXPLICIT, None, None)


def raising_step(
    function: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None,
    bound: BoundState,
) -> Step:
    """A step calling ``function(*args, **kwargs)`` whose failures are raised to the caller."""
    return explicit_step(_Raising(function, bound), args, kwargs)

"""Awaitables from synchronous code (:func:`resolve`), and hook calls from asynchronous code
(:func:`start`: a batch, or pluggy's loop as a coroutine). Docs:/explanation/async-and-timeouts.md.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import threading
from collections.abc import Awaitable, Coroutine, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn

import pluggy

from hermes_hooks.calling import contexts, handoff, workers
from hermes_hooks.calling.pluggy_private import ContractHookCaller, Monitor, live_hookimpls
from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

if TYPE_CHECKING:
    from hermes_hooks.calling.gate import GateWatch

__all__ = [
    "ACALL_ATTR",
    "DEFAULT_HELPER_TIMEOUT",
    "ResolveTimeoutError",
    "collected",
    "finish",
    "finish_teardowns",
    "is_awaitable",
    "raise_wrapfail",
    "resolve",
    "start",
]

DEFAULT_HELPER_TIMEOUT: float = 600.0
"""Seconds a sync caller inside a running loop waits for an awaitable when it names no bound."""

MAX_HUNG_HELPERS: int = 8
"""Helper loops still running past their caller's bound; beyond, :func:`resolve` refuses at once."""

ACALL_ATTR: Final = "__hermes_acall__"
"""On a guarded implementation: its coroutine function for the async path."""

_hung_helpers = 0
_hung_lock = threading.Lock()
_pass_through: tuple[type[BaseException], ...] | None = None
_PLAIN_TYPES: Final = frozenset({str, dict, list, tuple, int, float, bool, bytes, type(None)})


def pass_through() -> tuple[type[BaseException], ...]:
    """What a guard never swallows: ``KeyboardInterrupt``, and ``CancelledError`` once asyncio is
    imported (it is not imported for this)."""
    global _pass_through
    if _pass_through is not None:
        return _pass_through
    exceptions = sys.modules.get("asyncio.exceptions")
    if exceptions is None:
        return (KeyboardInterrupt,)
    _pass_through = (KeyboardInterrupt, exceptions.CancelledError)
    return _pass_through


class ResolveTimeoutError(TimeoutError):
    """An awaitable run on the helper loop did not finish within the caller's bound."""


def is_awaitable(value: object) -> bool:
    """Return whether ``value`` must be awaited to get a result."""
    return type(value) not in _PLAIN_TYPES and inspect.isawaitable(value)


async def awaited(value: Awaitable[Any]) -> Any:
    """A coroutine awaiting ``value`` (for awaitables that are not coroutines)."""
    return await value


async def run_cancellable(coro: Coroutine[Any, Any, Any], handle: list[Any]) -> Any:
    """Run ``coro`` as a task whose loop and task are put in ``handle`` (to cancel from afar)."""
    import asyncio

    task = asyncio.ensure_future(coro)
    handle.append((asyncio.get_running_loop(), task))
    return await task


def cancel_from_afar(handle: list[Any]) -> None:
    """Cancel the task :func:`run_cancellable` put in ``handle``, from any thread."""
    if handle:
        loop, task = handle[0]
        with contextlib.suppress(RuntimeError):  # that loop has finished already
            loop.call_soon_threadsafe(task.cancel)


def resolve(value: Any, *, timeout: float | None = None) -> Any:
    """Return ``value``, or the result of awaiting it when it is awaitable.

    With no running loop here it runs on a fresh loop; inside one, on a worker's own loop, and
    the caller waits at most ``timeout`` (:data:`DEFAULT_HELPER_TIMEOUT`), then it is cancelled.

    :raises ResolveTimeoutError: the awaitable did not finish within the bound.
    """
    if not inspect.isawaitable(value):
        return value
    coro: Coroutine[Any, Any, Any] = value if inspect.iscoroutine(value) else awaited(value)
    import asyncio  # here, not at start-up: most commands never see an awaitable

    if asyncio._get_running_loop() is None:
        return asyncio.run(coro)
    bound = DEFAULT_HELPER_TIMEOUT if timeout is None else timeout
    if _hung_helpers >= MAX_HUNG_HELPERS:
        coro.close()
        raise ResolveTimeoutError(
            f"refused: {_hung_helpers} helper loops are still running past their bound"
        )
    handle: list[Any] = []
    runner = run_cancellable(coro, handle)
    try:
        # Past the pool's limit if need be: this thread's loop waits on it, so there is at most
        # one such helper per blocked loop (and MAX_HUNG_HELPERS abandoned ones).
        job = workers.submit(asyncio.run, (runner,), beyond_limit=True)
    except workers.WorkerUnavailableError as exc:  # the OS refused a thread
        runner.close()
        coro.close()
        raise ResolveTimeoutError(f"no helper loop for the awaitable: {exc}") from None
    if job.wait(bound) or not _hold(job):
        return job.result()
    cancel_from_afar(handle)  # a coroutine that honours the cancellation frees its helper at once
    raise ResolveTimeoutError(f"the awaitable did not finish within {bound:g} s")


def _hold(job: workers.Job) -> bool:
    """Abandon a helper job, counting it as hung until it ends; return whether it was running."""
    global _hung_helpers
    with _hung_lock:
        if not job.abandon(_release):
            return False
        _hung_helpers += 1
        return True


def _release() -> None:
    global _hung_helpers
    with _hung_lock:
        _hung_helpers -= 1


def _forget_after_fork() -> None:
    global _hung_helpers, _hung_lock
    _hung_lock, _hung_helpers = threading.Lock(), 0


os.register_at_fork(after_in_child=_forget_after_fork)


# -- the async multicall --------------------------------------------------------------------------


def _batchable(impl: pluggy.HookImpl) -> Any:
    """Return the guard of a plain sync implementation that is to run on a worker, or ``None``."""
    guard: Any = getattr(impl.function, handoff.GUARD_ATTR, None)
    if guard is None or guard.bound is None or guard.bound.is_async or impl.kwargnames:
        return None
    if impl.hookwrapper or impl.wrapper or impl.function is not guard.entry:
        return None
    return guard if guard.setting.seconds > 0 else None


def _plain_steps(impls: Sequence[pluggy.HookImpl]) -> tuple[handoff.Step, ...] | None:
    """The steps of ``impls`` when each is :func:`_batchable`, else ``None``; kept on the first
    one's guard entry while the list stays the same."""
    if not impls:
        return None
    cached = getattr(impls[0].function, "__hermes_plain__", None)
    if cached is not None and cached[0] == impls:
        return cached[1]  # type: ignore[no-any-return]
    if not all(_batchable(impl) is not None for impl in impls):
        return None
    steps = tuple(handoff.step_of(impl) for impl in reversed(impls))
    setattr(impls[0].function, "__hermes_plain__", (list(impls), steps))  # noqa: B010
    return steps


def start(
    caller: pluggy.HookCaller,
    kwargs: Mapping[str, object],
    *,
    concurrent: bool = False,
    watch: GateWatch | None = None,
) -> handoff.Batch | Coroutine[Any, Any, object]:
    """Begin ``caller(**kwargs)`` for a coroutine: a bounded call of plain sync implementations
    goes to a worker as one :class:`~handoff.Batch` (await its ``future``, then :func:`collected`);
    any other is the :meth:`_AsyncCall.amulticall` coroutine to await (arguments: see there),
    inside the manager's call monitors (``add_hookcall_monitoring``, tracing) when it has any.
    """
    monitors = caller.monitors if isinstance(caller, ContractHookCaller) else ()
    if monitors:
        impls = live_hookimpls(caller).copy()  # what pluggy hands its monitors
        return _monitored(monitors, impls, caller, kwargs, concurrent, watch)
    return _start(caller, kwargs, concurrent, watch)


async def _monitored(
    monitors: Sequence[Monitor],
    impls: list[pluggy.HookImpl],
    caller: pluggy.HookCaller,
    kwargs: Mapping[str, object],
    concurrent: bool,
    watch: GateWatch | None,
) -> object:
    """The call with its monitors told, as pluggy's ``add_hookcall_monitoring`` wraps its loop:
    the newest outermost, each ``after`` given the outcome of what it wraps."""
    before, after = monitors[-1]
    before(caller.name, impls, kwargs)
    try:
        if len(monitors) > 1:
            value = await _monitored(monitors[:-1], impls, caller, kwargs, concurrent, watch)
        else:
            value = await finish(_start(caller, kwargs, concurrent, watch))
        outcome: pluggy.Result[object] = pluggy.Result(value, None)
    except BaseException as exc:
        outcome = pluggy.Result(None, exc)
    after(outcome, caller.name, impls, kwargs)
    return outcome.get_result()


def _start(
    caller: pluggy.HookCaller,
    kwargs: Mapping[str, object],
    concurrent: bool,
    watch: GateWatch | None,
) -> handoff.Batch | Coroutine[Any, Any, object]:
    firstresult = bool(caller.spec.opts.get("firstresult")) if caller.spec is not None else False
    impls = live_hookimpls(caller)  # not copied: a batch's steps are a tuple of their own
    steps = _plain_steps(impls) if not handoff.on_worker() else None
    if steps is None or (seconds := steps[0][4].setting.seconds) <= 0:
        concurrent = concurrent and not firstresult and watch is None
        # a copy: an implementation may register plugins
        return _AsyncCall(kwargs, firstresult, concurrent, watch).amulticall(list(impls))
    batch = handoff.Batch(steps, kwargs, seconds, firstresult, False, watch, contexts.for_call())
    handoff.send(batch)
    return batch


async def finish(call: handoff.Batch | Coroutine[Any, Any, object]) -> object:
    """Await what :func:`start` began; return pluggy's result (a cancelled wait gives the batch
    up: its worker may still be busy)."""
    if type(call) is not handoff.Batch:
        return await call  # type: ignore[misc]
    batch: Any = call
    try:
        await batch.future
    except BaseException:
        handoff.give_up(batch)
        raise
    return collected(batch)


def collected(batch: handoff.Batch) -> object:
    """The answer of a call :func:`start` handed to a worker, once its future is done."""
    found: list[object] = []
    watch = batch.watch
    _collect(batch.steps, handoff.outcome(batch), found, None if watch is None else watch.records)
    return (found[0] if found else None) if batch.firstresult else found


def _collect(
    steps: Sequence[handoff.Step],
    values: Sequence[object],
    results: list[object],
    records: list[tuple[str, object]] | None,
) -> bool:
    """Add a batch's results (and records); tell whether there was one."""
    for step, value in zip(steps, values, strict=True):
        if value is not None:
            results.append(value)
            if records is not None:
                records.append((step[3], value))
    return bool(results)


class _AsyncCall:
    """A call with wrappers or ``async def`` implementations, as pluggy's ``_multicall`` makes it.

    Runs of consecutive bounded sync implementations go to a worker as one batch; ``async def``
    ones are awaited between them. With ``concurrent`` (observer hooks only) the plain
    implementations run concurrently, each in a context of its own. A gated call's ``watch`` is
    told after each implementation and wrapper half, and records each plain result's plugin.
    """

    def __init__(
        self,
        kwargs: Mapping[str, object],
        firstresult: bool,
        concurrent: bool,
        watch: GateWatch | None,
    ) -> None:
        self.kwargs, self.firstresult = kwargs, firstresult
        self.records = None if watch is None else watch.records
        self.concurrent, self.watch = concurrent, watch
        self.results: list[object] = []
        self.exception: BaseException | None = None
        self.teardowns: list[Generator[None, object, object]] = []
        self.pending: list[tuple[Sequence[handoff.Step] | str, Awaitable[Any]]] = []
        self.batch: list[handoff.Step] = []
        self.seconds = 0.0

    async def amulticall(self, impls: Sequence[pluggy.HookImpl]) -> object:
        """Call ``impls`` (in pluggy's order, reversed); return pluggy's result."""
        try:
            await self.run(impls)
        except BaseException as exc:
            self.exception = exc
        finally:
            for _, awaitable in self.pending:
                if inspect.iscoroutine(awaitable):
                    awaitable.close()  # never started because an earlier step failed
        results = self.results
        result: object = (results[0] if results else None) if self.firstresult else results
        return finish_teardowns(self.teardowns, result, self.exception)

    async def run(self, impls: Sequence[pluggy.HookImpl]) -> None:
        """Run the implementations in call order; stop at the first answer of a firstresult."""
        on_worker = handoff.on_worker()
        for impl in reversed(impls):
            guard = None if on_worker else _batchable(impl)
            if guard is not None:
                self.seconds = guard.setting.seconds
                self.batch.append(handoff.step_of(impl))
                continue
            if await self.flush():
                return
            args, kwargs = _arguments(impl, self.kwargs)
            if impl.hookwrapper or impl.wrapper:
                self.set_up(impl, args, kwargs)
            elif self.concurrent:
                self.pending.append((impl.plugin_name, _call_plain(impl, args, kwargs)))
            elif await self.plain(impl, args, kwargs):
                return
        await self.flush()
        if self.pending:
            await _gather(self.pending, self.results, self.records)

    async def flush(self) -> bool:
        """Run the sync implementations gathered so far; tell whether the call is answered."""
        if not self.batch:
            return False
        steps = tuple(self.batch)
        self.batch.clear()
        if self.concurrent:  # one handoff for them, gathered with the async ones
            run = handoff.arun(steps, self.kwargs, seconds=self.seconds, exact=False)
            self.pending.append((steps, run))
            return False
        values = await handoff.arun(
            steps,
            self.kwargs,
            seconds=self.seconds,
            firstresult=self.firstresult,
            exact=False,
            watch=self.watch,
        )
        return _collect(steps, values, self.results, self.records) and self.firstresult

    def set_up(self, impl: pluggy.HookImpl, args: list[object], kwargs: dict[str, Any]) -> None:
        """Run a wrapper up to its yield, as pluggy's loop does; keep its teardown."""
        wrapper: Any = impl.function  # a generator function (pluggy types it loosely)
        gen: Generator[None, object, object] = (
            _old_style(impl, args, kwargs) if impl.hookwrapper else wrapper(*args, **kwargs)
        )
        try:
            next(gen)
        except StopIteration:
            raise_wrapfail(gen, "did not yield")
        if self.watch is not None:
            self.watch.check(impl.plugin_name, " before its yield")
            gen = self.watch.teardown(gen, impl.plugin_name)
            next(gen)
        self.teardowns.append(gen)

    async def plain(
        self, impl: pluggy.HookImpl, args: list[object], kwargs: dict[str, Any]
    ) -> bool:
        """Await one plain implementation; tell whether the call is answered."""
        res = await _call_plain(impl, args, kwargs)
        if self.watch is not None:
            self.watch.check(impl.plugin_name)
        if res is None:
            return False
        self.results.append(res)
        if self.records is not None:
            self.records.append((impl.plugin_name, res))
        return self.firstresult


def _arguments(
    impl: pluggy.HookImpl, caller_kwargs: Mapping[str, object]
) -> tuple[list[object], dict[str, object]]:
    """An implementation's arguments out of the call's, as pluggy's loop takes them."""
    try:
        args = [caller_kwargs[name] for name in impl.argnames]
        kwargs = {n: caller_kwargs[n] for n in impl.kwargnames if n in caller_kwargs}
    except KeyError as exc:
        raise pluggy.HookCallError(f"hook call must provide argument {exc.args[0]!r}") from exc
    return args, kwargs


async def _call_plain(impl: pluggy.HookImpl, args: list[object], kwargs: dict[str, Any]) -> Any:
    acall = getattr(impl.function, ACALL_ATTR, None)
    if acall is not None:
        return await acall(*args, **kwargs)
    result = impl.function(*args, **kwargs)
    if result is not None and inspect.isawaitable(result):
        result = await result
    return result


async def _gather(
    pending: list[tuple[Sequence[handoff.Step] | str, Awaitable[Any]]],
    results: list[object],
    records: list[tuple[str, object]] | None,
) -> None:
    """Await the plain implementations together; results (and the first error) in run order."""
    import asyncio

    owners = [owner for owner, _ in pending]
    outcomes = await asyncio.gather(
        *(awaitable for _, awaitable in pending), return_exceptions=True
    )
    pending.clear()
    error: BaseException | None = None
    for owner, outcome in zip(owners, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            error = error or outcome
        elif isinstance(owner, str):
            if outcome is not None:
                results.append(outcome)
                if records is not None:
                    records.append((owner, outcome))
        else:
            _collect(owner, outcome, results, records)
    if error is not None:
        raise error


def _old_style(
    impl: pluggy.HookImpl, args: Sequence[object], kwargs: Mapping[str, object] | None
) -> Generator[None, object, object]:
    """An old-style hookwrapper as a new-style one, as pluggy's ``run_old_style_hookwrapper``."""
    teardown: Any = impl.function(*args, **(kwargs or {}))
    try:
        next(teardown)
    except StopIteration:
        raise_wrapfail(teardown, "did not yield")
    try:
        res = yield
        result: pluggy.Result[object] = pluggy.Result(res, None)
    except BaseException as exc:
        result = pluggy.Result(None, exc)
    try:
        teardown.send(result)
    except StopIteration:
        pass
    else:
        raise_wrapfail(teardown, "has second yield")
    finally:
        teardown.close()
    return result.get_result()


def raise_wrapfail(wrapper: Generator[None, Any, Any], message: str) -> NoReturn:
    """Raise pluggy's ``RuntimeError`` for a wrapper that does not yield or yields twice."""
    code = getattr(wrapper, "gi_code")  # noqa: B009 - typeshed's Generator has no gi_code
    raise RuntimeError(
        f"wrap_controller at {code.co_name!r} {code.co_filename}:{code.co_firstlineno} {message}"
    )


def finish_teardowns(
    teardowns: Sequence[Generator[None, object, object]],
    result: object,
    exception: BaseException | None,
) -> object:
    """Run wrapper teardowns newest first, exactly as pluggy's ``_multicall`` does."""
    for teardown in reversed(teardowns):
        try:
            if exception is not None:
                try:
                    teardown.throw(exception)
                except RuntimeError as error:
                    # A StopIteration thrown into a generator comes out as a RuntimeError.
                    if isinstance(exception, StopIteration) and error.__cause__ is exception:
                        teardown.close()
                        continue
                    raise
            else:
                teardown.send(result)
            teardown.close()  # unreachable for a well-behaved wrapper: its finalizers now
        except StopIteration as stop:
            result, exception = stop.value, None
            continue
        except BaseException as error:
            exception = error
            continue
        raise_wrapfail(teardown, "has second yield")
    if exception is not None:
        raise exception
    return result

"""Awaitables from synchronous code, and hook calls from asynchronous code.

- :func:`resolve` gives the result of an awaitable to a sync caller: with no running loop in
  the thread it runs to completion here; inside a running loop it runs on a helper thread's own
  loop, and the caller waits at most a bound (so a coroutine that needs the caller's blocked loop
  cannot deadlock it).
- :func:`amulticall` is pluggy's ``_multicall`` for async callers: the same order, wrappers and
  ``firstresult``, with each plain implementation awaited on the caller's loop.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import threading
from collections.abc import Awaitable, Coroutine, Generator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn

import pluggy

from hermes_hooks.calling import handoff, workers
from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

if TYPE_CHECKING:
    from hermes_hooks.calling.gate import GateWatch

__all__ = [
    "ACALL_ATTR",
    "finish_teardowns",
    "raise_wrapfail",
    "DEFAULT_HELPER_TIMEOUT",
    "ResolveTimeoutError",
    "amulticall",
    "is_awaitable",
    "resolve",
]

DEFAULT_HELPER_TIMEOUT: float = 600.0
"""Seconds a sync caller inside a running loop waits for an awaitable when it names no bound."""

MAX_HUNG_HELPERS: int = 8
"""Helper loops still running past their caller's bound; beyond, :func:`resolve` refuses at once."""

_hung_helpers = 0
_hung_lock = threading.Lock()

ACALL_ATTR: Final = "__hermes_acall__"
"""On a guarded implementation: its coroutine function for the async path."""


_KEYBOARD: Final[tuple[type[BaseException], ...]] = (KeyboardInterrupt,)
_pass_through: tuple[type[BaseException], ...] | None = None


def pass_through() -> tuple[type[BaseException], ...]:
    """Return what a guard never swallows: ``KeyboardInterrupt`` and ``asyncio.CancelledError``.

    Used as ``except pass_through():``, evaluated only when something was raised. Until asyncio
    is imported no ``CancelledError`` can exist, so asyncio is not imported for it.
    """
    global _pass_through
    if _pass_through is not None:
        return _pass_through
    exceptions = sys.modules.get("asyncio.exceptions")
    if exceptions is None:
        return _KEYBOARD
    _pass_through = (KeyboardInterrupt, exceptions.CancelledError)
    return _pass_through


class ResolveTimeoutError(TimeoutError):
    """An awaitable run on the helper loop did not finish within the caller's bound."""


# What most hook results are, and never awaitable: told apart before the slower ABC check.
_PLAIN_TYPES: Final = frozenset({str, dict, list, tuple, int, float, bool, bytes, type(None)})


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

    With no running loop in this thread the awaitable runs to completion on a fresh loop here.
    Inside a running loop it runs on a worker thread's own loop (the caller's loop cannot be
    re-entered), and the caller waits at most ``timeout`` seconds
    (:data:`DEFAULT_HELPER_TIMEOUT` when ``None``); then the awaitable is cancelled.

    :raises ResolveTimeoutError: the awaitable did not finish within the bound.
    """
    if not inspect.isawaitable(value):
        return value
    coro: Coroutine[Any, Any, Any] = value if inspect.iscoroutine(value) else awaited(value)
    import asyncio  # here, not at start-up: most commands never see an awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    bound = DEFAULT_HELPER_TIMEOUT if timeout is None else timeout
    if _hung_helpers >= MAX_HUNG_HELPERS:
        coro.close()
        raise ResolveTimeoutError(
            f"refused: {_hung_helpers} helper loops are still running past their bound"
        )
    handle: list[Any] = []
    try:
        job = workers.submit(asyncio.run, (run_cancellable(coro, handle),))
    except workers.WorkerUnavailableError as exc:
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
    """A forked child has none of the parent's helper threads."""
    global _hung_helpers, _hung_lock
    _hung_lock = threading.Lock()
    _hung_helpers = 0


os.register_at_fork(after_in_child=_forget_after_fork)


# -- the async multicall ---------------------------------------------------------------------------


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


async def _call_plain(impl: pluggy.HookImpl, args: list[object], kwargs: dict[str, Any]) -> Any:
    acall = getattr(impl.function, ACALL_ATTR, None)
    if acall is not None:
        return await acall(*args, **kwargs)
    result = impl.function(*args, **kwargs)
    if result is not None and inspect.isawaitable(result):
        result = await result
    return result


def _batchable(impl: pluggy.HookImpl) -> Any:
    """Return the guard of a sync implementation that is to run on a worker now, or ``None``."""
    guard: Any = getattr(impl.function, handoff.GUARD_ATTR, None)
    if (
        guard is None
        or guard.bound is None
        or guard.bound.is_async
        or guard.setting.seconds <= 0
        or impl.function is not guard.entry
        or impl.kwargnames
    ):
        return None
    return guard


async def amulticall(
    hook_name: str,
    hook_impls: Sequence[pluggy.HookImpl],
    caller_kwargs: Mapping[str, object],
    firstresult: bool,
    *,
    records: list[tuple[str, object]] | None = None,
    concurrent: bool = False,
    watch: GateWatch | None = None,
) -> object:
    """Call ``hook_impls`` as pluggy's ``_multicall`` does, awaiting each plain implementation.

    Implementations run in pluggy's order (wrappers' set-up first, then the plain ones, newest
    first); a ``firstresult`` call stops at the first non-``None`` result; wrappers see and may
    replace the result or the exception, exactly as in pluggy. Sync implementations of a
    bounded hook that come one after the other run on one worker, as one handoff
    (:mod:`hermes_hooks.calling.handoff`); ``async def`` ones are awaited here, between them.

    :param records: receives ``(plugin name, result)`` for each non-``None`` plain result.
    :param concurrent: run the plain implementations concurrently (observer hooks only: their
        results are not combined, and none can stop the others). Each runs in a context of its
        own, so what they set in context variables is not kept.
    :param watch: a gated call's watch (never concurrent), told after each implementation and
        each half of a wrapper.
    """
    call = _AsyncCall(caller_kwargs, firstresult, records, concurrent, watch)
    try:
        await call.run(reversed(hook_impls))
    except BaseException as exc:
        call.exception = exc
    finally:
        for awaitable in (a for _, a in call.pending if inspect.iscoroutine(a)):
            awaitable.close()  # never started because an earlier step failed
    results = call.results
    result: object = (results[0] if results else None) if firstresult else results
    return finish_teardowns(call.teardowns, result, call.exception)


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


class _AsyncCall:
    """One call of :func:`amulticall`: what it has run, what it holds, what it found."""

    def __init__(
        self,
        caller_kwargs: Mapping[str, object],
        firstresult: bool,
        records: list[tuple[str, object]] | None,
        concurrent: bool,
        watch: GateWatch | None,
    ) -> None:
        self.kwargs, self.firstresult, self.records = caller_kwargs, firstresult, records
        self.concurrent, self.watch = concurrent, watch
        self.results: list[object] = []
        self.exception: BaseException | None = None
        self.teardowns: list[Generator[None, object, object]] = []
        self.pending: list[tuple[str, Awaitable[Any]]] = []  # (plugin, what to await)
        self.shared: list[handoff.Step] | None = None  # the sync observers' one batch
        self.batch: list[handoff.Step] = []
        self.seconds = 0.0

    def found(self, owner: str, value: object) -> None:
        self.results.append(value)
        if self.records is not None:
            self.records.append((owner, value))

    async def run(self, impls: Iterable[pluggy.HookImpl]) -> None:
        """Run the implementations in call order; stop at the first answer of a firstresult."""
        on_worker = handoff.on_worker()
        for impl in impls:
            guard = None if on_worker or impl.hookwrapper or impl.wrapper else _batchable(impl)
            if guard is not None:
                self.gather_sync(impl, guard)
                continue
            if self.batch and await self.flush():
                return
            args, kwargs = _arguments(impl, self.kwargs)
            if impl.hookwrapper or impl.wrapper:
                self.set_up(impl, args, kwargs)
            elif self.concurrent:
                self.pending.append((impl.plugin_name, _call_plain(impl, args, kwargs)))
            elif await self.plain(impl, args, kwargs):
                return
        if self.batch:
            await self.flush()
        if self.pending:
            await _gather(self.pending, self.results, self.records)

    def gather_sync(self, impl: pluggy.HookImpl, guard: Any) -> None:
        """A bounded sync implementation joins the batch that goes to one worker."""
        if not self.concurrent:
            self.seconds = guard.setting.seconds
            self.batch.append(handoff.step_of(impl))
            return
        # One handoff for all the call's sync observers, beside the async ones.
        if self.shared is None:
            self.shared = []
            self.pending.append((_SHARED, _batch_of(self.shared, self.kwargs, guard)))
        self.shared.append(handoff.step_of(impl))

    async def flush(self) -> bool:
        """Run the sync implementations gathered so far; tell whether the call is answered."""
        steps = tuple(self.batch)
        self.batch.clear()
        found = await handoff.arun(
            steps,
            self.kwargs,
            seconds=self.seconds,
            firstresult=self.firstresult,
            exact=False,
            watch=self.watch,
        )
        answered = False
        for step, value in zip(steps, found, strict=True):
            if value is not None:
                self.found(step[3], value)
                answered = self.firstresult
        return answered

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
        self.found(impl.plugin_name, res)
        return self.firstresult


_SHARED: Final = "<the sync implementations' batch>"
"""The owner of a pending entry that is one batch: it gives ``[(plugin, value), ...]``."""


async def _batch_of(steps: list[handoff.Step], kwargs: Mapping[str, object], guard: Any) -> Any:
    """The sync implementations of a concurrent call, on one worker, awaited with the others."""
    found = await handoff.arun(tuple(steps), kwargs, seconds=guard.setting.seconds, exact=False)
    return [(step[3], value) for step, value in zip(steps, found, strict=True)]


async def _gather(
    pending: list[tuple[str, Awaitable[Any]]],
    results: list[object],
    records: list[tuple[str, object]] | None,
) -> None:
    """Await the plain implementations together; results (and the first error) in run order."""
    owners = [owner for owner, _ in pending]
    awaitables = [awaitable for _, awaitable in pending]
    pending.clear()
    import asyncio

    outcomes = await asyncio.gather(*awaitables, return_exceptions=True)
    error: BaseException | None = None
    for owner, outcome in zip(owners, outcomes, strict=True):
        if isinstance(outcome, BaseException):
            error = error or outcome
            continue
        for plugin, value in outcome if owner is _SHARED else [(owner, outcome)]:
            if value is not None:
                results.append(value)
                if records is not None:
                    records.append((plugin, value))
    if error is not None:
        raise error


def raise_wrapfail(wrapper: Generator[None, Any, Any], message: str) -> NoReturn:
    """Raise the ``RuntimeError`` pluggy raises for a wrapper that does not yield or yields twice.

    Worded as pluggy 1.7 words it (``wrap_controller at 'name' file:line did not yield``).
    """
    code = getattr(wrapper, "gi_code")  # noqa: B009 - typeshed's Generator has no gi_code
    raise RuntimeError(
        f"wrap_controller at {code.co_name!r} {code.co_filename}:{code.co_firstlineno} {message}"
    )


def finish_teardowns(
    teardowns: Sequence[Generator[None, object, object]],
    result: object,
    exception: BaseException | None,
) -> object:
    """Run wrapper teardowns newest first, exactly as pluggy's ``_multicall`` does.

    Each teardown receives the result so far (or has the exception thrown into it) and may
    replace it; the final result is returned, or the final exception raised.
    """
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
            # Unreachable for a well-behaved wrapper: force its finalizers now.
            teardown.close()
        except StopIteration as stop:
            result = stop.value
            exception = None
            continue
        except BaseException as error:
            exception = error
            continue
        raise_wrapfail(teardown, "has second yield")
    if exception is not None:
        raise exception
    return result

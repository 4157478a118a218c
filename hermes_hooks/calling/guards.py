"""Fault isolation: run every hook implementation under its hook's contract.

:func:`guard_hookimpl` replaces a registered ``pluggy.HookImpl``'s function with a guard that
catches what the implementation raises and checks what it returns. A failure is reported to the
manager (which logs and counts it on the plugin) and then turns into ``None`` (fail open) or the
hook's safe decision (fail closed). In strict mode the failure is raised instead, with a note
naming the plugin and the hook. Wrappers that fail before their ``yield`` are passed through;
one that fails after it, never yields, yields twice or returns a value that does not fit leaves
the inner result as it was.

For a hook whose contract has ``timeout=True``, while ``plugins.hook_callback_timeout`` is above
zero, each call of a plain implementation runs within that bound through a
:class:`~hermes_hooks.calling.bounds.CallbackBound`; a call past the bound, or skipped after
one, is a failure like a raise (:class:`~hermes_hooks.errors.HookTimeoutError`). Otherwise it
runs inline, as in pluggy, and an awaitable it returns is resolved
(:func:`hermes_hooks.calling.aio.resolve`).
Wrappers always run inline: their two halves share the caller's frame and context variables
(a tracing span opened before the ``yield`` is closed after it), which a worker would split.
Each plain guard also carries a coroutine function for the async path
(:data:`hermes_hooks.calling.aio.ACALL_ATTR`), where awaitables are awaited on the caller's loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator
from typing import Any, Final, Protocol

import pluggy

from hermes_hooks.calling import aio
from hermes_hooks.calling.bounds import CallbackBound, bound_for
from hermes_hooks.errors import HookResultError, HookTimeoutError
from hermes_hooks.spec.contract import HookContract, Policy

__all__ = ["FailureReporter", "TimeoutSource", "guard_hookimpl", "is_guarded"]

TimeoutSource = Callable[[], float]
"""Returns the current ``plugins.hook_callback_timeout`` in seconds; ``0`` or less: no bound."""

_GUARDED: Final = "__hermes_guarded__"

# Never swallowed: the person pressed Ctrl-C, or the task running the hook is being cancelled
# (asyncio.CancelledError, looked up only once something was raised: see aio.pass_through).
_pass_through = aio.pass_through


class FailureReporter(Protocol):
    """Receives one failure of one implementation: who, which hook, and what went wrong."""

    def __call__(
        self, plugin_key: str, hook_name: str, message: str, exc: BaseException | None
    ) -> None: ...


def is_guarded(function: object) -> bool:
    """Return whether ``function`` is already a guard made by this module."""
    return getattr(function, _GUARDED, False) is True


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_NOTE_PREFIX: Final = "raised by plugin "


def _annotate(exc: BaseException, plugin_key: str, hook_name: str) -> BaseException:
    """Add a note naming the plugin and hook, unless an inner guard already named its raiser."""
    if not any(note.startswith(_NOTE_PREFIX) for note in getattr(exc, "__notes__", ())):
        exc.add_note(f"{_NOTE_PREFIX}{plugin_key!r} in hook {hook_name!r}")
    return exc


def _close(gen: Generator[Any, Any, Any]) -> None:
    """Close a misbehaving wrapper's generator; what its clean-up raises is not ours to raise."""
    with contextlib.suppress(Exception):
        gen.close()


def _location(function: Callable[..., Any]) -> str:
    code = getattr(function, "__code__", None)
    module = getattr(function, "__module__", "?")
    qualname = getattr(function, "__qualname__", repr(function))
    if code is None:
        return f"{module}:{qualname}"
    return f"{module}:{qualname} ({code.co_filename}:{code.co_firstlineno})"


def guard_hookimpl(
    impl: pluggy.HookImpl,
    hook_name: str,
    contract: HookContract,
    report: FailureReporter,
    *,
    strict: bool,
    firstresult: bool,
    timeout: TimeoutSource | None = None,
) -> None:
    """Replace ``impl.function`` with a guarded version (once; a second call does nothing).

    :param timeout: the source of ``plugins.hook_callback_timeout``, read at every call; it
        bounds the implementation only when the hook's contract has ``timeout=True``.
    """
    if is_guarded(impl.function):
        return
    function = impl.function
    plugin_key = impl.plugin_name
    guarded: Callable[..., Any]
    if impl.hookwrapper:
        guarded = _guard_old_wrapper(function, plugin_key, hook_name, report, strict)
    elif impl.wrapper:
        guarded = _guard_wrapper(
            function, plugin_key, hook_name, contract, report, strict, firstresult
        )
    else:
        bounded = bound_for(function) if contract.timeout and timeout is not None else None
        guarded = _guard_call(
            function, plugin_key, hook_name, contract, report, strict, bounded, timeout
        )
    setattr(guarded, _GUARDED, True)
    setattr(guarded, "__wrapped_impl__", function)  # noqa: B010
    # pluggy marks HookImpl.function Final for type checkers only; argnames stay the original's.
    setattr(impl, "function", guarded)  # noqa: B010


def _resolve(result: Any) -> Any:
    """Resolve an awaitable an unbounded implementation returned to a sync caller."""
    try:
        return aio.resolve(result)
    except aio.ResolveTimeoutError as exc:
        raise HookTimeoutError(str(exc)) from None


def _guard_call(
    function: Callable[..., Any],
    plugin_key: str,
    hook_name: str,
    contract: HookContract,
    report: FailureReporter,
    strict: bool,
    bounded: CallbackBound | None,
    timeout: TimeoutSource | None,
) -> Callable[..., Any]:
    check = contract.check
    closed = contract.policy is Policy.CLOSED
    safe_result = contract.safe_result

    def failed(exc: BaseException) -> Any:
        """Report a failure (not in strict mode) and return what the hook's policy makes of it."""
        message = _describe(exc)
        report(plugin_key, hook_name, message, exc)
        if closed and safe_result is not None:
            return safe_result(plugin_key, message)
        return None

    def unfit(result: object) -> None:
        message = f"returned {type(result).__name__} {result!r:.200}, expected {contract.expects}"
        if strict:
            raise HookResultError(
                f"plugin {plugin_key!r} hook {hook_name!r} ({_location(function)}) {message}"
            )
        report(plugin_key, hook_name, message, None)

    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            if bounded is not None and timeout is not None and (bound := timeout()) > 0:
                result = bounded.call(function, args, kwargs, bound)
            else:  # without kwargs, no empty ** dict: a cheaper call
                result = function(*args, **kwargs) if kwargs else function(*args)
                if result is not None and aio.is_awaitable(result):
                    result = _resolve(result)
        except _pass_through():
            raise
        except BaseException as exc:
            if strict:
                # A bare raise keeps the plugin's own traceback, cause and context.
                _annotate(exc, plugin_key, hook_name)
                raise
            return failed(exc)
        if result is None or check is None or check(result):
            return result
        return unfit(result)

    async def aguarded(*args: Any, **kwargs: Any) -> Any:
        try:
            if bounded is not None and timeout is not None and (bound := timeout()) > 0:
                result = await bounded.acall(function, args, kwargs, bound)
            else:
                result = function(*args, **kwargs)
                if result is not None and aio.is_awaitable(result):
                    result = await result
        except _pass_through():
            raise
        except BaseException as exc:
            if strict:
                _annotate(exc, plugin_key, hook_name)
                raise
            return failed(exc)
        if result is None or check is None or check(result):
            return result
        return unfit(result)

    setattr(guarded, aio.ACALL_ATTR, aguarded)
    return guarded


def _wrapper_expects(contract: HookContract, firstresult: bool) -> str:
    if firstresult:
        return f"None or {contract.expects}"
    if contract.check is None:
        return "a list"
    return f"a list whose items are each {contract.expects}"


def _guard_wrapper(
    function: Callable[..., Any],
    plugin_key: str,
    hook_name: str,
    contract: HookContract,
    report: FailureReporter,
    strict: bool,
    firstresult: bool,
) -> Callable[..., Generator[None, object, object]]:
    expects = _wrapper_expects(contract, firstresult)

    check = contract.check

    def fits(value: object) -> bool:
        if firstresult:
            return value is None or check is None or check(value)
        # A wrapper of a collect hook may add results; each must fit like an impl's return.
        if not isinstance(value, list):
            return False
        if check is not None:
            for item in value:
                if item is not None and not check(item):
                    return False
        return True

    def fail(message: str) -> None:
        """Raise in strict mode, else report; for failures that have no exception of their own."""
        if strict:
            error = RuntimeError(f"wrapper {_location(function)} {message}")
            raise _annotate(error, plugin_key, hook_name)
        report(plugin_key, hook_name, f"wrapper {message}", None)

    def guarded(*args: Any, **kwargs: Any) -> Generator[None, object, object]:
        try:
            gen = function(*args, **kwargs) if kwargs else function(*args)
            next(gen)
        except StopIteration:
            # Raised here, it would become "generator raised StopIteration" (PEP 479).
            fail("failed before its yield: did not yield")
            return (yield)
        except _pass_through():
            raise
        except BaseException as exc:
            if strict:
                _annotate(exc, plugin_key, hook_name)
                raise
            report(plugin_key, hook_name, f"wrapper failed before its yield: {_describe(exc)}", exc)
            return (yield)
        try:
            inner = yield
        except BaseException as exc:
            # An inner implementation raised (strict mode, or Ctrl-C): let the wrapper see it.
            try:
                gen.throw(exc)
            except StopIteration as stop:
                return stop.value
            except BaseException as raised:
                if raised is not exc and not isinstance(raised, _pass_through()):
                    if strict:
                        _annotate(raised, plugin_key, hook_name)
                        raise
                    message = f"wrapper failed after its yield: {_describe(raised)}"
                    report(plugin_key, hook_name, message, raised)
                    raise exc from None
                raise
            _close(gen)
            fail("has a second yield")
            raise
        try:
            gen.send(inner)
        except StopIteration as stop:
            value = stop.value
            # fits(value), with its commonest answers inlined: this runs on every call.
            if firstresult:
                if value is None or check is None or check(value):
                    return value
            elif (type(value) is list and (check is None or not value)) or fits(value):
                return value
            message = f"wrapper returned {type(stop.value).__name__}, expected {expects}"
            if strict:
                raise HookResultError(
                    f"plugin {plugin_key!r} hook {hook_name!r} ({_location(function)}): {message}"
                ) from None
            report(plugin_key, hook_name, message, None)
            return inner
        except _pass_through():
            raise
        except BaseException as exc:
            if strict:
                _annotate(exc, plugin_key, hook_name)
                raise
            report(plugin_key, hook_name, f"wrapper failed after its yield: {_describe(exc)}", exc)
            return inner
        _close(gen)
        fail("has a second yield")
        return inner

    return guarded


def _guard_old_wrapper(
    function: Callable[..., Any],
    plugin_key: str,
    hook_name: str,
    report: FailureReporter,
    strict: bool,
) -> Callable[..., Generator[None, pluggy.Result[object], None]]:
    def failure(message: str) -> BaseException | None:
        """Return the error to raise in strict mode, else report and return ``None``."""
        if strict:
            error = RuntimeError(f"hookwrapper {_location(function)} {message}")
            return _annotate(error, plugin_key, hook_name)
        report(plugin_key, hook_name, f"hookwrapper {message}", None)
        return None

    def guarded(*args: Any, **kwargs: Any) -> Generator[None, pluggy.Result[object], None]:
        try:
            gen = function(*args, **kwargs)
            next(gen)
        except StopIteration:
            error = failure("failed before its yield: did not yield")
            if error is not None:
                raise error from None
            yield
            return
        except _pass_through():
            raise
        except BaseException as exc:
            if strict:
                _annotate(exc, plugin_key, hook_name)
                raise
            report(
                plugin_key, hook_name, f"hookwrapper failed before its yield: {_describe(exc)}", exc
            )
            yield
            return
        outcome = yield
        try:
            gen.send(outcome)
        except StopIteration:
            return
        except BaseException as exc:
            if exc is outcome.exception:
                return  # the wrapper re-raised the inner failure, which the outcome carries
            if isinstance(exc, _pass_through()):
                raise
            if strict:
                # Raising from an old-style teardown makes pluggy warn; set it as the outcome.
                outcome.force_exception(_annotate(exc, plugin_key, hook_name))
                return
            message = f"hookwrapper failed after its yield: {_describe(exc)}"
            report(plugin_key, hook_name, message, exc)
            return
        _close(gen)
        error = failure("has a second yield")
        if error is not None:
            outcome.force_exception(error)

    return guarded

"""Fault isolation: run every hook implementation under its hook's contract.

:func:`guard_hookimpl` replaces a registered ``pluggy.HookImpl``'s function with a guard that
catches what the implementation raises and checks what it returns. A failure is reported to the
manager (which logs and counts it on the plugin) and then turns into ``None`` (fail open) or the
hook's safe decision (fail closed). In strict mode the failure is raised instead, with a note
naming the plugin and the hook. Wrappers that fail before their ``yield`` are passed through.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from typing import Any, Final, Protocol

import pluggy

from hermes_hooks.contract import HookContract, Policy
from hermes_hooks.errors import HookResultError

__all__ = ["FailureReporter", "guard_hookimpl", "is_guarded"]

_GUARDED: Final = "__hermes_guarded__"

# Never swallowed: the person pressed Ctrl-C, or the task running the hook is being cancelled.
_PASS_THROUGH: Final = (KeyboardInterrupt, asyncio.CancelledError)


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


def _annotate(exc: BaseException, plugin_key: str, hook_name: str) -> BaseException:
    exc.add_note(f"raised by plugin {plugin_key!r} in hook {hook_name!r}")
    return exc


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
) -> None:
    """Replace ``impl.function`` with a guarded version (once; a second call does nothing)."""
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
        guarded = _guard_call(function, plugin_key, hook_name, contract, report, strict)
    setattr(guarded, _GUARDED, True)
    setattr(guarded, "__wrapped_impl__", function)  # noqa: B010
    # pluggy marks HookImpl.function Final for type checkers only; argnames stay the original's.
    setattr(impl, "function", guarded)  # noqa: B010


def _guard_call(
    function: Callable[..., Any],
    plugin_key: str,
    hook_name: str,
    contract: HookContract,
    report: FailureReporter,
    strict: bool,
) -> Callable[..., Any]:
    check = contract.check
    closed = contract.policy is Policy.CLOSED
    safe_result = contract.safe_result

    def guarded(*args: Any) -> Any:
        try:
            result = function(*args)
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            if strict:
                raise _annotate(exc, plugin_key, hook_name) from None
            message = _describe(exc)
            report(plugin_key, hook_name, message, exc)
            if closed and safe_result is not None:
                return safe_result(plugin_key, message)
            return None
        if result is not None and check is not None and not check(result):
            message = (
                f"returned {type(result).__name__} {result!r:.200}, expected {contract.expects}"
            )
            if strict:
                raise HookResultError(
                    f"plugin {plugin_key!r} hook {hook_name!r} ({_location(function)}) {message}"
                )
            report(plugin_key, hook_name, message, None)
            return None
        return result

    return guarded


def _guard_wrapper(
    function: Callable[..., Any],
    plugin_key: str,
    hook_name: str,
    contract: HookContract,
    report: FailureReporter,
    strict: bool,
    firstresult: bool,
) -> Callable[..., Generator[None, object, object]]:
    def fits(value: object) -> bool:
        if firstresult:
            return value is None or contract.fits(value)
        return isinstance(value, list)

    def guarded(*args: Any) -> Generator[None, object, object]:
        try:
            gen = function(*args)
            next(gen)
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            if strict:
                raise _annotate(exc, plugin_key, hook_name) from None
            reason = "did not yield" if isinstance(exc, StopIteration) else _describe(exc)
            report(plugin_key, hook_name, f"wrapper failed before its yield: {reason}", exc)
            return (yield)
        try:
            inner = yield
        except BaseException as exc:
            # An inner implementation raised (strict mode, or Ctrl-C): let the wrapper see it.
            try:
                gen.throw(exc)
            except StopIteration as stop:
                return stop.value
            gen.close()
            raise RuntimeError(f"wrapper {_location(function)} has a second yield") from exc
        try:
            gen.send(inner)
        except StopIteration as stop:
            if fits(stop.value):
                return stop.value
            message = f"wrapper returned {type(stop.value).__name__}, expected {contract.expects}"
            if strict:
                raise HookResultError(
                    f"plugin {plugin_key!r} hook {hook_name!r}: {message}"
                ) from None
            report(plugin_key, hook_name, message, None)
            return inner
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            if strict:
                raise _annotate(exc, plugin_key, hook_name) from None
            report(plugin_key, hook_name, f"wrapper failed after its yield: {_describe(exc)}", exc)
            return inner
        gen.close()
        report(plugin_key, hook_name, "wrapper has a second yield", None)
        return inner

    return guarded


def _guard_old_wrapper(
    function: Callable[..., Any],
    plugin_key: str,
    hook_name: str,
    report: FailureReporter,
    strict: bool,
) -> Callable[..., Generator[None, object, None]]:
    def guarded(*args: Any) -> Generator[None, object, None]:
        try:
            gen = function(*args)
            next(gen)
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            if strict:
                raise _annotate(exc, plugin_key, hook_name) from None
            reason = "did not yield" if isinstance(exc, StopIteration) else _describe(exc)
            report(plugin_key, hook_name, f"hookwrapper failed before its yield: {reason}", exc)
            yield
            return
        outcome = yield
        try:
            gen.send(outcome)
        except StopIteration:
            return
        except _PASS_THROUGH:
            raise
        except BaseException as exc:
            if strict:
                raise _annotate(exc, plugin_key, hook_name) from None
            report(
                plugin_key, hook_name, f"hookwrapper failed after its yield: {_describe(exc)}", exc
            )
            return
        gen.close()
        report(plugin_key, hook_name, "hookwrapper has a second yield", None)

    return guarded

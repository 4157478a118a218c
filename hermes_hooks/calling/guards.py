"""Fault isolation: run every hook implementation under its hook's contract.

:func:`guard_hookimpl` replaces a registered ``pluggy.HookImpl``'s function with a guard that
catches what the implementation raises and checks what it returns. A failure is reported to the
manager (which logs and counts it on the plugin) and then turns into ``None`` (fail open) or the
hook's safe decision (fail closed). In strict mode the failure is raised instead, with a note
naming the plugin and the hook. Wrappers that fail before their ``yield`` are passed through;
one that fails after it, never yields, yields twice or returns a value that does not fit leaves
the inner result as it was.

For a hook whose contract has ``timeout=True``, while ``plugins.hook_callback_timeout`` is above
zero, each plain implementation runs within that bound, on a worker thread: the first guard
pluggy's loop calls in a ``pm.hook.<name>(...)`` call hands it and the plain implementations
after it to one worker (:mod:`hermes_hooks.calling.handoff`), and the later guards return their
own results from it; a guard called otherwise (``call_extra``, a historic replay) hands off
its one call. A call
past the bound, or skipped after one, is a failure like a raise
(:class:`~hermes_hooks.errors.HookTimeoutError`). Otherwise, and on a worker already, it runs
inline, as in pluggy, and an awaitable it returns is resolved
(:func:`hermes_hooks.calling.aio.resolve`).
Wrappers always run inline: their two halves share the caller's frame and context variables
(a tracing span opened before the ``yield`` is closed after it), which a worker would split.
Each plain guard also carries a coroutine function for the async path
(:data:`hermes_hooks.calling.aio.ACALL_ATTR`), where awaitables are awaited on the caller's loop.
"""

from __future__ import annotations

import contextlib
import functools
import time
import types
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, Final, Protocol, final

import pluggy

from hermes_hooks.calling import aio, handoff
from hermes_hooks.calling.bounds import SELF_BOUNDED_ATTR, BoundSetting, CallbackBound, bound_for
from hermes_hooks.calling.results import (
    SETTING as RESULT_SETTING,
    ResultLimit,
    bounded_check,
    oversized,
)
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.errors import HookResultError, HookTimeoutError
from hermes_hooks.spec.contract import HookContract, Policy

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = [
    "DIRECT_CALL_ATTR",
    "FailureReporter",
    "Guard",
    "guard_hookimpl",
    "guard_of",
    "is_guarded",
]

_GUARDED: Final = "__hermes_guarded__"
GUARD_ATTR: Final = handoff.GUARD_ATTR

DIRECT_CALL_ATTR: Final = "__hermes_direct__"
"""On a ``register_hook`` adapter: ``(callback, takes_kwargs, hook argument names)``.

With ``takes_kwargs`` a batch calls ``callback(**kwargs)`` with the call's keyword
arguments; without, ``callback(*args)`` with the adapter's own arguments (the adapter takes them
in the callback's order, so that this is the same call)."""

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
    setting: BoundSetting | None = None,
    limit: ResultLimit | None = None,
    observers: Sequence[handoff.CallObserver] = (),
) -> None:
    """Replace ``impl.function`` with a guarded version (once; a second call does nothing).

    :param setting: the manager's ``plugins.hook_callback_timeout``; it bounds the
        implementation only when the hook's contract has ``timeout=True`` and the
        implementation does not bound itself
        (:data:`~hermes_hooks.calling.bounds.SELF_BOUNDED_ATTR`).
    :param limit: the manager's ``plugins.max_hook_result_bytes``; a plain implementation's
        result past it, or a wrapper's own, is a failure under the hook's policy.
    :param observers: the manager's call observers (a list it changes in place), told of each
        call of a plain implementation.
    """
    if is_guarded(impl.function):
        return
    function = impl.function
    plugin_key = impl.plugin_name
    guarded: Callable[..., Any]
    if impl.hookwrapper or impl.wrapper:
        guarded = _wrapper_guard(impl, hook_name, contract, report, strict, firstresult, limit)
    else:
        bounded = (
            setting is not None
            and contract.timeout
            and not getattr(function, SELF_BOUNDED_ATTR, False)
        )
        guard = Guard(
            function,
            plugin_key,
            hook_name,
            contract,
            report,
            strict=strict,
            bound=bound_for(function, plugin_key) if bounded else None,
            setting=setting if bounded else None,
            limit=limit,
            observers=observers,
            argnames=tuple(impl.argnames),
            defaulted=bool(impl.kwargnames),
        )
        guarded = guard.entry
    setattr(guarded, _GUARDED, True)
    setattr(guarded, "__wrapped_impl__", function)  # noqa: B010
    # pluggy marks HookImpl.function Final for type checkers only; argnames stay the original's.
    setattr(impl, "function", guarded)  # noqa: B010


def _wrapper_guard(
    impl: pluggy.HookImpl,
    hook_name: str,
    contract: HookContract,
    report: FailureReporter,
    strict: bool,
    firstresult: bool,
    limit: ResultLimit | None,
) -> Callable[..., Generator[None, Any, Any]]:
    """The guard of a wrapper, old-style (``hookwrapper=True``) or new (``wrapper=True``)."""
    function, owner = impl.function, impl.plugin_name
    if impl.hookwrapper:
        inner = _guard_old_wrapper(function, owner, hook_name, report, strict, limit)
        return _gated(inner, owner, hook_name, old_style=True)
    guarded = _guard_wrapper(
        function, owner, hook_name, contract, report, strict, firstresult, limit
    )
    return _gated(guarded, owner, hook_name, old_style=False)


def _gated(
    guarded: Callable[..., Generator[None, Any, Any]],
    owner: str,
    hook_name: str,
    *,
    old_style: bool,
) -> Callable[..., Generator[None, Any, Any]]:
    """A guarded wrapper whose halves the current gated call's watch checks, when there is one.

    The watch (:class:`~hermes_hooks.calling.gate.GateWatch`) sees what the guard makes of the
    wrapper: a misbehaving wrapper has already been turned into a well-behaved one.
    """

    def entry(*args: Any, **kwargs: Any) -> Generator[None, Any, Any]:
        gen = guarded(*args, **kwargs)
        current = handoff.sink()
        if current is None or current.hook != hook_name or current.watch is None:
            return gen
        watched: Generator[None, Any, Any] = _watched(gen, current.watch, owner, old_style)
        return watched

    return entry


def _watched(
    gen: Generator[None, Any, Any], watch: Any, owner: str, old_style: bool
) -> Generator[None, Any, Any]:
    next(gen)  # the guard's set-up: it yields once, or raises what must not be swallowed
    watch.check(owner, " before its yield")
    if old_style:
        return (yield from watch.old_style_teardown(gen, owner))
    return (yield from watch.teardown(gen, owner))


def guard_of(function: object) -> Guard | None:
    """Return the :class:`Guard` behind a guarded implementation, or ``None``."""
    guard = getattr(function, GUARD_ATTR, None)
    return guard if isinstance(guard, Guard) else None


def _resolve(result: Any) -> Any:
    """Resolve an awaitable an unbounded implementation returned to a sync caller."""
    try:
        return aio.resolve(result)
    except aio.ResolveTimeoutError as exc:
        raise HookTimeoutError(str(exc)) from None


@final
class Guard:
    """The contract one plain implementation runs under, and how to call it.

    pluggy's loop, and every other caller, calls :attr:`entry`, the guarded function (it hands
    a bounded call to a worker when it is not on one already); a bounded call's batch
    (:mod:`hermes_hooks.calling.handoff`) calls :attr:`target` (or :attr:`kw_target`) itself on
    the worker and hands failures to :meth:`failed` and misfits to :meth:`unfit`.

    :ivar function: the implementation as registered (for a ``register_hook`` callback, its
        adapter, which takes the hook's arguments positionally as pluggy passes them).
    :ivar target: what a batch calls with the arguments ``impl.argnames`` name, positionally:
        the function, or the callback behind an adapter when that is the same call.
    :ivar kw_target: a ``register_hook`` callback taking ``**kwargs``, which a batch calls with
        the call's keyword arguments as they are; ``None`` otherwise.
    :ivar bound: the callback's :class:`~hermes_hooks.calling.bounds.CallbackBound`, for a
        hook with a timeout; ``None`` otherwise.
    :ivar check: the hook's check of a non-``None`` result, behind the bound on its size
        (:func:`~hermes_hooks.calling.results.bounded_check`) when there is one.
    """

    __slots__ = (
        "bound",
        "check",
        "closed",
        "entry",
        "expects",
        "function",
        "hook_name",
        "kw_names",
        "kw_target",
        "limit",
        "observers",
        "plugin_key",
        "report",
        "safe_result",
        "setting",
        "strict",
        "target",
    )

    def __init__(
        self,
        function: Callable[..., Any],
        plugin_key: str,
        hook_name: str,
        contract: HookContract,
        report: FailureReporter,
        *,
        strict: bool,
        bound: CallbackBound | None,
        setting: BoundSetting | None,
        limit: ResultLimit | None = None,
        observers: Sequence[handoff.CallObserver] = (),
        argnames: tuple[str, ...] = (),
        defaulted: bool = False,
    ) -> None:
        self.function = function
        self.observers = observers
        self.plugin_key = plugin_key
        self.hook_name = hook_name
        self.limit = limit
        self.check = contract.check if limit is None else bounded_check(contract.check, limit)
        self.expects = contract.expects
        self.closed = contract.policy is Policy.CLOSED
        self.safe_result = contract.safe_result
        self.report = report
        self.strict = strict
        self.bound = bound
        self.setting = setting
        self.target: Callable[..., Any] = function
        self.kw_target: Callable[..., Any] | None = None
        self.kw_names: tuple[str, ...] = ()
        direct = getattr(function, DIRECT_CALL_ATTR, None)
        if direct is not None:
            callback, takes_kwargs, names = direct
            if takes_kwargs:
                self.kw_target, self.kw_names = callback, tuple(names)
            else:
                self.target = callback
        self.entry = self._compile(argnames, defaulted)

    def __repr__(self) -> str:
        return f"<Guard of plugin {self.plugin_key!r} for {self.hook_name!r}>"

    def failed(self, exc: BaseException) -> Any:
        """Report a failure and return what the hook's policy makes of it.

        :raises BaseException: ``exc`` itself in strict mode (with a note naming the plugin),
            and always for ``KeyboardInterrupt`` and a task's cancellation.
        """
        if isinstance(exc, _pass_through()):
            raise exc
        if self.strict:
            _annotate(exc, self.plugin_key, self.hook_name)
            raise exc
        message = _describe(exc)
        self.report(self.plugin_key, self.hook_name, message, exc)
        if self.closed and self.safe_result is not None:
            return self.safe_result(self.plugin_key, message)
        return None

    def unfit(self, result: object) -> Any:
        """Report a returned value that does not fit the hook; it counts as ``None``.

        A value past ``plugins.max_hook_result_bytes`` is a failure instead: it counts as what
        the hook's policy makes of one (``None``, or the safe decision).
        """
        too_big = _too_big(result, self.limit)
        if too_big is not None:
            return self._oversized(too_big)
        message = f"returned {type(result).__name__} {result!r:.200}, expected {self.expects}"
        if self.strict:
            raise HookResultError(
                f"plugin {self.plugin_key!r} hook {self.hook_name!r} "
                f"({_location(self.function)}) {message}"
            )
        self.report(self.plugin_key, self.hook_name, message, None)

    def _oversized(self, message: str) -> Any:
        if self.strict:
            raise HookResultError(
                f"plugin {self.plugin_key!r} hook {self.hook_name!r} "
                f"({_location(self.function)}) {message}"
            )
        self.report(self.plugin_key, self.hook_name, message, None)
        if self.closed and self.safe_result is not None:
            return self.safe_result(self.plugin_key, message)
        return None

    def settle(self, result: Any) -> Any:
        """Return what a non-``None`` result of an inline call counts as (awaited, checked)."""
        if aio.is_awaitable(result):
            try:
                result = _resolve(result)
            except BaseException as exc:
                return self.failed(exc)
            if result is None:
                return None
        check = self.check
        if check is None or check(result):
            return result
        return self.unfit(result)

    def observed(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        """An inline call while observers are attached: the call, timed and told to them."""
        function = self.target if self.kw_target is None else self.function
        outcome = "ok"
        start = time.perf_counter()
        try:
            result = function(*args, **kwargs)
            if result is not None:
                result = self.settle(result)
        except BaseException as exc:
            outcome = "error"
            result = self.failed(exc)
        finally:
            elapsed = time.perf_counter() - start
            handoff.notify(self.observers, self.hook_name, self.plugin_key, elapsed, outcome)
        return result

    def select(self, kwargs: Mapping[str, object]) -> dict[str, object]:
        """The hook's arguments out of ``kwargs``, for a ``**kwargs`` callback.

        :raises KeyError: one is missing (pluggy's loop would raise ``HookCallError``).
        """
        return {name: kwargs[name] for name in self.kw_names}

    def _compile(self, argnames: tuple[str, ...], defaulted: bool) -> Callable[..., Any]:
        """The guarded function: takes exactly ``argnames``, positionally, as pluggy passes them.

        Compiled once per signature (:data:`_ENTRY_SOURCE`): pluggy's loop calls one frame that
        calls the implementation, or a ``register_hook`` callback straight (without its adapter's
        frame, and by keyword when it takes ``**kwargs`` and the hook's own arguments), with no
        ``*args`` packed and unpacked on the way. A bounded one hands itself to a worker when it
        is not on one already; while observers are attached, each call is timed
        (:meth:`observed`).
        """
        by_keyword = self.kw_target is not None and argnames == self.kw_names and not defaulted
        callee = self.kw_target if by_keyword else self.target
        if self.kw_target is not None and not by_keyword:
            callee = self.function  # the adapter: it knows what the callback takes
        namespace: dict[str, Any] = {
            "__tracebackhide__": hide_in_pytest,
            "_hh_setting": self.setting if self.setting is not None else BoundSetting(0.0),
            "_hh_local": handoff.thread_state(),
            "_hh_open": handoff.OPEN_SINKS,
            "_hh_answer": handoff.answer,
            "_hh_guard": self,
            "_hh_empty": {},
            "_hh_callback": callee,
            "_hh_failed": self.failed,
            "_hh_settle": self.settle,
            "_hh_hook": self.hook_name,
            "_hh_owner": self.plugin_key,
            "_hh_observers": self.observers,
            "_hh_observed": self.observed,
        }
        bounded = self.bound is not None and self.setting is not None
        code = _entry_code(argnames, by_keyword, defaulted, bounded)
        entry = types.FunctionType(code, namespace, "guarded")
        entry.__qualname__ = "Guard.entry"
        setattr(entry, aio.ACALL_ATTR, self._make_aentry())
        setattr(entry, GUARD_ATTR, self)
        return entry

    def _make_aentry(self) -> Callable[..., Any]:
        """The coroutine function the async path awaits in place of :attr:`entry`."""
        function, bound, setting, check = self.function, self.bound, self.setting, self.check
        failed, unfit, observers = self.failed, self.unfit, self.observers
        hook_name, owner, seen = self.hook_name, self.plugin_key, handoff.notify
        self_bounded = bool(getattr(function, SELF_BOUNDED_ATTR, False))

        async def aguarded(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter() if observers else 0.0
            try:
                if (
                    bound is not None
                    and setting is not None
                    and setting.seconds > 0
                    and not handoff.on_worker()
                ):
                    result = await bound.acall(function, args, kwargs, setting.seconds)
                elif self_bounded:  # it blocks until its own limit: never on the caller's loop
                    import asyncio

                    result = await asyncio.to_thread(function, *args, **kwargs)
                else:
                    result = function(*args, **kwargs)
                    if result is not None and aio.is_awaitable(result):
                        result = await result
            except BaseException as exc:
                if observers:
                    outcome = "timeout" if isinstance(exc, HookTimeoutError) else "error"
                    seen(observers, hook_name, owner, time.perf_counter() - start, outcome)
                return failed(exc)
            if observers:
                seen(observers, hook_name, owner, time.perf_counter() - start, "ok")
            if result is None or check is None or check(result):
                return result
            return unfit(result)

        return aguarded


_ENTRY_SOURCE: Final = """
def guarded({params}):
    {bounded}if _hh_observers:
        _hh_result = _hh_observed({packed}, {named})
    else:
        try:
            _hh_result = _hh_callback({call})
        except BaseException as _hh_exc:
            _hh_result = _hh_failed(_hh_exc)
        else:
            if _hh_result is not None:
                _hh_result = _hh_settle(_hh_result)
    if _hh_open:
        _hh_current = _hh_local.sink
        if _hh_current is not None and _hh_current.hook == _hh_hook:
            if _hh_current.watch is not None:
                _hh_current.watch.check(_hh_owner)
            if _hh_result is not None:
                _hh_current.records.append((_hh_owner, _hh_result))
    return _hh_result
"""
_BOUNDED_BRANCH: Final = """if _hh_setting.seconds > 0 and _hh_local.batch is None:
        _hh_result = _hh_answer(_hh_guard, {packed}, {named}, _hh_setting.seconds)
    el"""
"""What :meth:`Guard._compile` compiles, for the implementation's own argument names; a bounded
guard's starts with :data:`_BOUNDED_BRANCH`. Off the hot path: a sink looked up only while one
is open on some thread (:data:`~hermes_hooks.calling.handoff.OPEN_SINKS`)."""


@functools.lru_cache(maxsize=256)
def _entry_code(
    argnames: tuple[str, ...], by_keyword: bool, defaulted: bool, bounded: bool
) -> types.CodeType:
    """The code of a guard taking ``argnames`` (an implementation's: identifiers).

    :param defaulted: the implementation has arguments with defaults, which pluggy passes by
        keyword when the call has them: the guard takes and passes on ``**kwargs`` too.
    """
    params = ", ".join(argnames)
    packed = "(" + params + ("," if argnames else "") + ")"
    call = ", ".join(f"{name}={name}" for name in argnames) if by_keyword else params
    named = "_hh_empty"
    if defaulted:
        params, call, named = (
            ", ".join([*argnames, "**_hh_named"]),
            ", ".join([*argnames, "**_hh_named"]),
            "_hh_named",
        )
    branch = _BOUNDED_BRANCH.format(packed=packed, named=named) if bounded else ""
    source = _ENTRY_SOURCE.format(
        params=params, packed=packed, call=call, named=named, bounded=branch
    )
    module = compile(source, "<hermes_hooks guard>", "exec")
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


def _too_big(value: object, limit: ResultLimit | None) -> str | None:
    """Say how *value* is past *limit*, or return ``None`` when it is within it (or no limit)."""
    if limit is None:
        return None
    bound = limit.bytes
    size = oversized(value, bound)
    if size is None:
        return None
    kind = type(value).__name__
    held = f"of {size} bytes" if isinstance(value, str | bytes | bytearray) else "holding more"
    return f"returned {kind} {held}, more than {RESULT_SETTING} ({bound} bytes) allows"


def _added(value: object, inner: object) -> list[object]:
    """What a wrapper's result holds that the inner result it was given does not (by identity)."""
    if value is inner:
        return []
    if isinstance(value, list) and isinstance(inner, list):
        kept = {id(item) for item in inner}
        return [item for item in value if id(item) not in kept]
    return [value]


def _added_too_big(value: object, inner: object, limit: ResultLimit) -> str | None:
    """Say how the first thing a wrapper added to *inner* is past *limit*, or ``None``."""
    for item in _added(value, inner):
        too_big = _too_big(item, limit)
        if too_big is not None:
            return too_big
    return None


def _wrapper_expects(contract: HookContract, firstresult: bool) -> str:
    if firstresult:
        return f"None or {contract.expects}"
    if contract.check is None:
        return "a list"
    return f"a list whose items are each {contract.expects}"


class _WrapperGuard:
    """How one new-style wrapper's misbehaviour is turned into a well-behaved wrapper's."""

    __slots__ = (
        "check",
        "expects",
        "firstresult",
        "function",
        "hook_name",
        "limit",
        "plugin_key",
        "report",
        "strict",
    )

    def __init__(
        self,
        function: Callable[..., Any],
        plugin_key: str,
        hook_name: str,
        contract: HookContract,
        report: FailureReporter,
        strict: bool,
        firstresult: bool,
        limit: ResultLimit | None,
    ) -> None:
        self.function, self.plugin_key, self.hook_name = function, plugin_key, hook_name
        self.check, self.expects = contract.check, _wrapper_expects(contract, firstresult)
        self.report, self.strict, self.firstresult, self.limit = report, strict, firstresult, limit

    def fits(self, value: object) -> bool:
        check = self.check
        if self.firstresult:
            return value is None or check is None or check(value)
        # A wrapper of a collect hook may add results; each must fit like an impl's return.
        if not isinstance(value, list):
            return False
        return check is None or all(item is None or check(item) for item in value)

    def fail(self, message: str) -> None:
        """Raise in strict mode, else report; for failures that have no exception of their own."""
        if self.strict:
            error = RuntimeError(f"wrapper {_location(self.function)} {message}")
            raise _annotate(error, self.plugin_key, self.hook_name)
        self.report(self.plugin_key, self.hook_name, f"wrapper {message}", None)

    def raised(self, exc: BaseException, when: str) -> None:
        """The wrapper's own exception ``when`` (before, after) its yield: raised if strict."""
        if self.strict:
            raise _annotate(exc, self.plugin_key, self.hook_name)
        message = f"wrapper failed {when} its yield: {_describe(exc)}"
        self.report(self.plugin_key, self.hook_name, message, exc)

    def misfit(self, message: str) -> None:
        """A result that does not fit: :class:`HookResultError` if strict, else reported."""
        if self.strict:
            raise HookResultError(
                f"plugin {self.plugin_key!r} hook {self.hook_name!r} "
                f"({_location(self.function)}): {message}"
            ) from None
        self.report(self.plugin_key, self.hook_name, message, None)

    def start(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the wrapper up to its yield; return its generator, ``None`` if it failed there."""
        try:
            gen = self.function(*args, **kwargs) if kwargs else self.function(*args)
            next(gen)
        except StopIteration:
            # Raised here, it would become "generator raised StopIteration" (PEP 479).
            self.fail("failed before its yield: did not yield")
            return None
        except _pass_through():
            raise
        except BaseException as exc:
            self.raised(exc, "before")
            return None
        return gen

    def thrown(self, gen: Generator[None, object, object], exc: BaseException) -> object:
        """An inner implementation raised (strict mode, Ctrl-C): let the wrapper see it."""
        try:
            gen.throw(exc)
        except StopIteration as stop:
            return stop.value
        except BaseException as raised:
            if raised is not exc and not isinstance(raised, _pass_through()):
                self.raised(raised, "after")
                raise exc from None
            raise
        _close(gen)
        self.fail("has a second yield")
        raise exc

    def sent(self, gen: Generator[None, object, object], inner: object) -> object:
        """Send the inner result; return what the wrapper makes of it, if it fits."""
        try:
            gen.send(inner)
        except StopIteration as stop:
            return self.settle(stop.value, inner)
        except _pass_through():
            raise
        except BaseException as exc:
            self.raised(exc, "after")
            return inner
        _close(gen)
        self.fail("has a second yield")
        return inner

    def settle(self, value: object, inner: object) -> object:
        """The wrapper's result when it fits (and what it added is within the bound), else inner."""
        limit = self.limit
        if limit is not None and value is not inner and value is not None:
            too_big = _added_too_big(value, inner, limit)
            if too_big is not None:
                self.misfit(f"wrapper {too_big}")
                return inner
        check = self.check
        # fits(value), with its commonest answers first: this runs on every call.
        if self.firstresult:
            if value is None or check is None or check(value):
                return value
        elif (type(value) is list and (check is None or not value)) or self.fits(value):
            return value
        self.misfit(f"wrapper returned {type(value).__name__}, expected {self.expects}")
        return inner


def _guard_wrapper(
    function: Callable[..., Any],
    plugin_key: str,
    hook_name: str,
    contract: HookContract,
    report: FailureReporter,
    strict: bool,
    firstresult: bool,
    limit: ResultLimit | None = None,
) -> Callable[..., Generator[None, object, object]]:
    guard = _WrapperGuard(
        function, plugin_key, hook_name, contract, report, strict, firstresult, limit
    )

    def guarded(*args: Any, **kwargs: Any) -> Generator[None, object, object]:
        gen = guard.start(args, kwargs)
        if gen is None:
            return (yield)
        try:
            inner = yield
        except BaseException as exc:
            return guard.thrown(gen, exc)
        return guard.sent(gen, inner)

    return guarded


class _OldWrapperGuard:
    """How one old-style ``hookwrapper=True`` implementation's misbehaviour is contained."""

    __slots__ = ("function", "hook_name", "limit", "plugin_key", "report", "strict")

    def __init__(
        self,
        function: Callable[..., Any],
        plugin_key: str,
        hook_name: str,
        report: FailureReporter,
        strict: bool,
        limit: ResultLimit | None,
    ) -> None:
        self.function, self.plugin_key, self.hook_name = function, plugin_key, hook_name
        self.report, self.strict, self.limit = report, strict, limit

    def failure(self, message: str) -> BaseException | None:
        """Return the error to raise in strict mode, else report and return ``None``."""
        if self.strict:
            error = RuntimeError(f"hookwrapper {_location(self.function)} {message}")
            return _annotate(error, self.plugin_key, self.hook_name)
        self.report(self.plugin_key, self.hook_name, f"hookwrapper {message}", None)
        return None

    def start(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the wrapper up to its yield; return its generator, ``None`` if it failed there."""
        try:
            gen = self.function(*args, **kwargs)
            next(gen)
        except StopIteration:
            error = self.failure("failed before its yield: did not yield")
            if error is not None:
                raise error from None
            return None
        except _pass_through():
            raise
        except BaseException as exc:
            if self.strict:
                _annotate(exc, self.plugin_key, self.hook_name)
                raise
            message = f"hookwrapper failed before its yield: {_describe(exc)}"
            self.report(self.plugin_key, self.hook_name, message, exc)
            return None
        return gen

    def finish(self, gen: Any, outcome: pluggy.Result[object]) -> None:
        """Send the outcome; contain what the teardown does wrong."""
        inner_exc = outcome.exception
        before = outcome.get_result() if inner_exc is None else None
        try:
            gen.send(outcome)
        except StopIteration:
            if self.limit is not None and outcome.exception is None:
                self.undo_oversized(outcome, before, inner_exc)
            return
        except BaseException as exc:
            if exc is outcome.exception:
                return  # the wrapper re-raised the inner failure, which the outcome carries
            if isinstance(exc, _pass_through()):
                raise
            if self.strict:
                # Raising from an old-style teardown makes pluggy warn; set it as the outcome.
                outcome.force_exception(_annotate(exc, self.plugin_key, self.hook_name))
                return
            message = f"hookwrapper failed after its yield: {_describe(exc)}"
            self.report(self.plugin_key, self.hook_name, message, exc)
            return
        _close(gen)
        error = self.failure("has a second yield")
        if error is not None:
            outcome.force_exception(error)

    def undo_oversized(
        self, outcome: pluggy.Result[object], before: object, inner_exc: BaseException | None
    ) -> None:
        """Put back the inner outcome when the result the wrapper forced is past the bound."""
        after = outcome.get_result()
        if after is before or self.limit is None:
            return
        too_big = _added_too_big(after, before, self.limit)
        if too_big is None:
            return
        if inner_exc is not None:
            outcome.force_exception(inner_exc)
        else:
            outcome.force_result(before)
        error = self.failure(too_big)
        if error is not None:
            outcome.force_exception(error)


def _guard_old_wrapper(
    function: Callable[..., Any],
    plugin_key: str,
    hook_name: str,
    report: FailureReporter,
    strict: bool,
    limit: ResultLimit | None = None,
) -> Callable[..., Generator[None, pluggy.Result[object], None]]:
    guard = _OldWrapperGuard(function, plugin_key, hook_name, report, strict, limit)

    def guarded(*args: Any, **kwargs: Any) -> Generator[None, pluggy.Result[object], None]:
        gen = guard.start(args, kwargs)
        if gen is None:
            yield
            return
        outcome = yield
        guard.finish(gen, outcome)

    return guarded

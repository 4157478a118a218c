"""Fault isolation: every hook implementation runs under its hook's contract.

:func:`guard_hookimpl` replaces a registered ``pluggy.HookImpl``'s function with a guard that
catches what it raises and checks what it returns, under the hook's policy (fail open or
closed, strict mode raising). A wrapper's guard turns a misbehaving wrapper into a well-behaved
one. See ``docs/explanation/isolation.md``.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, Final, NamedTuple, Protocol, final

import pluggy

from hermes_hooks.calling import aio, handoff
from hermes_hooks.calling.bounds import SELF_BOUNDED_ATTR, BoundSetting, bound_for
from hermes_hooks.calling.results import SETTING, ResultLimit, bounded_check, oversized
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.errors import HookResultError, HookTimeoutError
from hermes_hooks.spec.contract import HookContract, Policy

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = ["DIRECT_CALL_ATTR", "FailureReporter", "Guard", "guard_hookimpl", "is_guarded"]

_GUARDED: Final = "__hermes_guarded__"
DIRECT_CALL_ATTR: Final = "__hermes_direct__"
"""On a ``register_hook`` adapter: ``(callback, takes_kwargs, hook argument names)``: the
guard calls the callback itself, by keyword or (in the adapter's order) by position."""
_NOTE: Final = "raised by plugin "
_pass_through = aio.pass_through  # KeyboardInterrupt, a task's cancellation: never swallowed


class FailureReporter(Protocol):
    """Receives one failure of one implementation: who, which hook, and what went wrong."""

    def __call__(
        self, plugin_key: str, hook_name: str, message: str, exc: BaseException | None
    ) -> None: ...


def is_guarded(function: object) -> bool:
    """Return whether ``function`` is already a guard made by this module."""
    return getattr(function, _GUARDED, False) is True


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _annotate(exc: BaseException, plugin_key: str, hook_name: str) -> BaseException:
    """Add a note naming the plugin and hook, unless an inner guard already named its raiser."""
    if not any(note.startswith(_NOTE) for note in getattr(exc, "__notes__", ())):
        exc.add_note(f"{_NOTE}{plugin_key!r} in hook {hook_name!r}")
    return exc


def _location(function: Callable[..., Any]) -> str:
    where = f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', function)}"
    code = getattr(function, "__code__", None)
    return where if code is None else f"{where} ({code.co_filename}:{code.co_firstlineno})"


def _too_big(value: object, limit: ResultLimit | None) -> str | None:
    """Say how ``value`` is past ``limit``; ``None`` when it is within it (or no limit)."""
    size = None if limit is None else oversized(value, limit.bytes)
    if size is None or limit is None:
        return None
    held = f"of {size} bytes" if isinstance(value, str | bytes | bytearray) else "holding more"
    return (
        f"returned {type(value).__name__} {held}, more than {SETTING} ({limit.bytes} bytes) allows"
    )


def _added_too_big(value: object, inner: object, limit: ResultLimit | None) -> str | None:
    """Say how the first thing a wrapper added to ``inner`` (by identity) is past ``limit``."""
    if limit is None or value is inner or value is None:
        return None
    added = [value]
    if isinstance(value, list) and isinstance(inner, list):
        kept = {id(item) for item in inner}
        added = [item for item in value if id(item) not in kept]
    return next(filter(None, (_too_big(item, limit) for item in added)), None)


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

    :param setting: ``plugins.hook_callback_timeout``; it bounds a plain implementation of a
        hook whose contract has ``timeout=True``, unless it bounds itself.
    :param limit: ``plugins.max_hook_result_bytes``, applied to results.
    :param observers: the manager's call observers (changed in place), told of each plain call.
    """
    if is_guarded(impl.function):
        return
    function = impl.function
    terms = _Terms(hook_name, contract, report, strict, firstresult, setting, limit, observers)
    guarded: Callable[..., Any]
    if impl.hookwrapper or impl.wrapper:
        guarded = functools.partial(_WrapperGuard.entry, _WrapperGuard(impl, terms))
    else:
        guarded = Guard(impl, terms).entry
    setattr(guarded, _GUARDED, True)
    setattr(guarded, "__wrapped_impl__", function)  # noqa: B010
    # pluggy marks HookImpl.function Final for type checkers only; argnames stay the original's.
    setattr(impl, "function", guarded)  # noqa: B010


class _Terms(NamedTuple):
    """What the guards of one hook share: its contract, and how its failures are told."""

    hook_name: str
    contract: HookContract
    report: FailureReporter
    strict: bool
    firstresult: bool
    setting: BoundSetting | None
    limit: ResultLimit | None
    observers: Sequence[handoff.CallObserver]


class _Owned:
    """Who an implementation is, and how its failures are told: raised if strict, else reported."""

    def __init__(self, impl: pluggy.HookImpl, terms: _Terms) -> None:
        self.function: Callable[..., Any] = impl.function
        self.plugin_key, self.hook_name = impl.plugin_name, terms.hook_name
        self.report, self.strict, self.limit = terms.report, terms.strict, terms.limit

    def raised(self, exc: BaseException, prefix: str = "") -> None:
        """The implementation's own exception: raised with a note if strict, else reported."""
        if self.strict:
            raise _annotate(exc, self.plugin_key, self.hook_name)
        self.report(self.plugin_key, self.hook_name, prefix + _describe(exc), exc)

    def misfit(self, message: str) -> None:
        """A result that does not fit: :class:`HookResultError` if strict, else reported."""
        if self.strict:
            raise HookResultError(
                f"plugin {self.plugin_key!r} hook {self.hook_name!r} "
                f"({_location(self.function)}) {message}"
            ) from None
        self.report(self.plugin_key, self.hook_name, message, None)


@final
class Guard(_Owned):
    """The contract one plain implementation runs under, and how to call it.

    pluggy's loop and every other caller call :attr:`entry`; a bounded call's batch
    (:mod:`~hermes_hooks.calling.handoff`) calls :attr:`target` (or :attr:`kw_target`) itself
    and hands failures to :meth:`failed` and misfits to :meth:`unfit`.
    """

    def __init__(self, impl: pluggy.HookImpl, terms: _Terms) -> None:
        super().__init__(impl, terms)
        contract, limit, function = terms.contract, terms.limit, self.function
        self.observers = terms.observers
        self.check = contract.check if limit is None else bounded_check(contract.check, limit)
        self.expects, self.safe_result = contract.expects, contract.safe_result
        self.closed = contract.policy is Policy.CLOSED
        bounded = contract.timeout and not getattr(function, SELF_BOUNDED_ATTR, False)
        self.setting = terms.setting if bounded else None
        self.bound = bound_for(function, self.plugin_key) if self.setting is not None else None
        callback, by_keyword, names = getattr(function, DIRECT_CALL_ATTR, (function, False, ()))
        self.target: Callable[..., Any] = function if by_keyword else callback
        self.kw_target: Callable[..., Any] | None = callback if by_keyword else None
        self.kw_names: tuple[str, ...] = tuple(names) if by_keyword else ()
        self.entry = self.compile(tuple(impl.argnames), bool(impl.kwargnames))

    def __repr__(self) -> str:
        return f"<Guard of plugin {self.plugin_key!r} for {self.hook_name!r}>"

    def _safe(self, message: str) -> Any:
        """What a failure counts as: the hook's safe decision when it fails closed, else None."""
        if self.closed and self.safe_result is not None:
            return self.safe_result(self.plugin_key, message)
        return None

    def failed(self, exc: BaseException) -> Any:
        """Report a failure; return what the hook's policy makes of it (raise it, if strict)."""
        if isinstance(exc, _pass_through()):
            raise exc
        self.raised(exc)
        return self._safe(_describe(exc))

    def unfit(self, result: object) -> Any:
        """Report a result that does not fit the hook: it counts as ``None``; one past
        ``plugins.max_hook_result_bytes`` counts as a failure under the hook's policy."""
        too_big = _too_big(result, self.limit)
        if too_big is not None:
            self.misfit(too_big)
            return self._safe(too_big)
        self.misfit(f"returned {type(result).__name__} {result!r:.200}, expected {self.expects}")
        return None

    def settle(self, result: Any) -> Any:
        """What a non-``None`` result of an inline call counts as (awaited, checked)."""
        if aio.is_awaitable(result):
            try:
                result = aio.resolve(result)
            except aio.ResolveTimeoutError as exc:
                timeout = HookTimeoutError(str(exc))
                timeout.__suppress_context__ = True
                return self.failed(timeout)
            except BaseException as exc:
                return self.failed(exc)
            if result is None:
                return None
        if self.check is None or self.check(result):
            return result
        return self.unfit(result)

    def select(self, kwargs: Mapping[str, object]) -> dict[str, object]:
        """The hook's arguments out of ``kwargs`` (:raises KeyError: one is missing)."""
        return {name: kwargs[name] for name in self.kw_names}

    def slow(self, *args: Any, **kwargs: Any) -> Any:
        """The entry's rare cases: a bound to hand the call to, observers, a facade call's sink."""
        setting = self.setting
        if setting is not None and setting.seconds > 0 and not handoff.on_worker():
            return self.note(handoff.answer(self, args, kwargs, setting.seconds))
        function = self.target if self.kw_target is None else self.function
        start, outcome = time.perf_counter(), "error"
        try:
            result = function(*args, **kwargs)
            if result is not None:
                result = self.settle(result)
            outcome = "ok"
        except BaseException as exc:
            result = self.failed(exc)
        finally:
            self._tell(start, outcome)
        return self._record(result)

    def _record(self, result: Any) -> Any:
        """Tell this thread's facade call of this hook (if any) of the result and the call."""
        current = handoff.sink() if handoff.OPEN_SINKS else None
        if current is not None and current.hook == self.hook_name:
            if current.watch is not None:
                current.watch.check(self.plugin_key)
            if result is not None:
                current.records.append((self.plugin_key, result))
        return result

    def note(self, result: Any) -> Any:
        """:meth:`_record` for a result from a worker, which told the watch already."""
        current = handoff.sink() if handoff.OPEN_SINKS else None
        if result is not None and current is not None and current.hook == self.hook_name:
            current.records.append((self.plugin_key, result))
        return result

    def compile(self, argnames: tuple[str, ...], defaulted: bool) -> Callable[..., Any]:
        """The guarded function, taking ``argnames`` positionally as pluggy passes them."""
        by_keyword = self.kw_target is not None and argnames == self.kw_names and not defaulted
        # Not by keyword, a **kwargs callback is called through its adapter (the target then).
        callee = self.kw_target if by_keyword else self.target
        make = _entry_maker(argnames, by_keyword, defaulted, self.setting is not None)
        cells = (self.observers, handoff.OPEN_SINKS, self.setting, self.slow, callee)
        entry: Callable[..., Any] = make(
            *cells, self.failed, self.settle, self._record, handoff.THREAD, self
        )
        entry.__qualname__ = "Guard.entry"
        setattr(entry, aio.ACALL_ATTR, self.acall)
        setattr(entry, handoff.GUARD_ATTR, self)
        return entry

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        """What the async path awaits in place of :attr:`entry`, on the caller's loop."""
        function, bound, setting = self.function, self.bound, self.setting
        start = time.perf_counter()
        try:
            if bound and setting and setting.seconds > 0 and not handoff.on_worker():
                result = await bound.acall(function, args, kwargs, setting.seconds)
            elif getattr(function, SELF_BOUNDED_ATTR, False):  # never block the caller's loop
                import asyncio

                result = await asyncio.to_thread(function, *args, **kwargs)
            else:
                result = function(*args, **kwargs)
                if result is not None and aio.is_awaitable(result):
                    result = await result
        except BaseException as exc:
            self._tell(start, "timeout" if isinstance(exc, HookTimeoutError) else "error")
            return self.failed(exc)
        self._tell(start, "ok")
        if result is None or self.check is None or self.check(result):
            return result
        return self.unfit(result)

    def _tell(self, start: float, outcome: str) -> None:
        if self.observers:
            elapsed = time.perf_counter() - start
            handoff.notify(self.observers, self.hook_name, self.plugin_key, elapsed, outcome)


_ENTRY_SOURCE: Final = """
def make(_hh_observers, _hh_open, _hh_setting, _hh_slow, _hh_callback, _hh_failed, _hh_settle,
         _hh_record, _hh_local, _hh_me):
    def guarded({args}):
        if _hh_observers{bounded}:{answered}
            return _hh_slow({args})
        try:
            _hh_result = _hh_callback({call})
        except BaseException as _hh_exc:
            _hh_result = _hh_failed(_hh_exc)
        else:
            if _hh_result is not None:
                _hh_result = _hh_settle(_hh_result)
        if _hh_open:
            return _hh_record(_hh_result)
        return _hh_result
    return guarded
"""
"""What :meth:`Guard.compile` compiles, once per signature; the values are closure cells (one
code object, shared by guards with different values: globals would defeat its caches)."""

_ANSWERED: Final = """
            _hh_call = _hh_local.call
            if _hh_call is not None and _hh_call.ran:
                _hh_at = _hh_call.ran.get(_hh_me)
                if _hh_at is not None:
                    _hh_result = _hh_call.values[_hh_at]
                    return _hh_me.note(_hh_result) if _hh_open else _hh_result"""
"""A bounded entry's answer when its call's batch ran it already (the first guard runs the
batch, :func:`handoff.answer`): read here, the hot case of a bounded call."""


@functools.lru_cache(maxsize=256)
def _entry_maker(
    argnames: tuple[str, ...], by_keyword: bool, defaulted: bool, bounded: bool
) -> Callable[..., Callable[..., Any]]:
    """The maker of guards taking ``argnames`` (and ``**kwargs`` when pluggy passes defaults)."""
    args = ", ".join([*argnames, "**_hh_named"] if defaulted else argnames)
    call = ", ".join(f"{name}={name}" for name in argnames) if by_keyword else args
    rare = " or _hh_setting.seconds > 0.0" if bounded else ""
    answered = _ANSWERED if bounded else ""
    source = _ENTRY_SOURCE.format(args=args, call=call, bounded=rare, answered=answered)
    scope: dict[str, Any] = {"__tracebackhide__": hide_in_pytest}
    exec(compile(source, "<hermes_hooks guard>", "exec"), scope)
    maker: Callable[..., Callable[..., Any]] = scope["make"]
    return maker


class _WrapperGuard(_Owned):
    """How one wrapper's misbehaviour is contained, new-style (``wrapper=True``) or old."""

    def __init__(self, impl: pluggy.HookImpl, terms: _Terms) -> None:
        super().__init__(impl, terms)
        contract, self.firstresult = terms.contract, terms.firstresult
        self.old_style = bool(impl.hookwrapper)
        self.kind = "hookwrapper" if impl.hookwrapper else "wrapper"
        self.check, expects = contract.check, contract.expects
        self.expects = f"None or {expects}" if self.firstresult else "a list"
        if not self.firstresult and contract.check is not None:
            self.expects = f"a list whose items are each {expects}"

    def entry(self, *args: Any, **kwargs: Any) -> Generator[None, Any, Any]:
        """What pluggy calls: the contained wrapper, its halves watched in a gated call."""
        old_style = self.old_style
        gen = self.run_old(args, kwargs) if old_style else self.run(args, kwargs)
        current = handoff.sink() if handoff.OPEN_SINKS else None
        if current is None or current.hook != self.hook_name or current.watch is None:
            return gen
        return _watched(gen, current.watch, self.plugin_key, old_style)

    def failure(self, message: str, gen: Any = None) -> BaseException | None:
        """A failure with no exception of its own: the error to raise if strict, else reported."""
        if gen is not None:  # the misbehaving generator: what its clean-up raises is not ours
            with contextlib.suppress(Exception):
                gen.close()
        if self.strict:
            error = RuntimeError(f"{self.kind} {_location(self.function)} {message}")
            return _annotate(error, self.plugin_key, self.hook_name)
        self.report(self.plugin_key, self.hook_name, f"{self.kind} {message}", None)
        return None

    def start(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the wrapper up to its yield; return its generator, ``None`` if it failed there."""
        try:
            gen = self.function(*args, **kwargs)
            next(gen)
        except StopIteration:  # raised here, it would become a RuntimeError (PEP 479)
            error = self.failure("failed before its yield: did not yield")
            if error is not None:
                raise error from None
            return None
        except _pass_through():
            raise
        except BaseException as exc:
            self.raised(exc, f"{self.kind} failed before its yield: ")
            return None
        return gen

    def run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Generator[None, Any, Any]:
        """A new-style wrapper, contained: the inner result or exception goes on unless it fits."""
        gen = self.start(args, kwargs)
        if gen is None:
            return (yield)
        try:
            inner = yield
        except BaseException as exc:
            return self.finish(gen, gen.throw, exc, exc)
        return self.finish(gen, gen.send, inner, None)

    def finish(self, gen: Any, step: Any, inner: Any, thrown: BaseException | None) -> Any:
        """Send the inner result (or throw the inner exception) into the wrapper's teardown."""
        try:
            step(inner)
        except StopIteration as stop:
            return stop.value if thrown is not None else self.settle(stop.value, inner)
        except BaseException as raised:
            if raised is thrown or isinstance(raised, _pass_through()):
                raise
            self.raised(raised, "wrapper failed after its yield: ")
            if thrown is not None:
                raise thrown from None
            return inner
        if (error := self.failure("has a second yield", gen)) is not None:
            raise error from thrown
        if thrown is not None:
            raise thrown
        return inner

    def settle(self, value: object, inner: object) -> object:
        """The wrapper's result when it fits (and what it added is within the bound), else inner."""
        if value is inner:  # what the guarded implementations gave, checked already
            return value
        too_big = _added_too_big(value, inner, self.limit)
        if too_big is not None:
            self.misfit(f"wrapper {too_big}")
            return inner
        check = self.check
        if self.firstresult:
            if value is None or check is None or check(value):
                return value
        elif isinstance(value, list) and (
            check is None or all(item is None or check(item) for item in value)
        ):
            return value
        self.misfit(f"wrapper returned {type(value).__name__}, expected {self.expects}")
        return inner

    def run_old(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Generator[None, Any, None]:
        """An old-style wrapper, contained: sent pluggy's ``Result``, whose forcing is checked."""
        gen = self.start(args, kwargs)
        outcome: pluggy.Result[object] = yield
        if gen is None:
            return
        inner_exc = outcome.exception
        before = outcome.get_result() if inner_exc is None else None
        try:
            gen.send(outcome)
        except StopIteration:
            too_big = None
            if outcome.exception is None:
                too_big = _added_too_big(outcome.get_result(), before, self.limit)
            if too_big is not None:  # put back the inner outcome, and tell
                if inner_exc is not None:
                    outcome.force_exception(inner_exc)
                else:
                    outcome.force_result(before)
                if (error := self.failure(too_big)) is not None:
                    outcome.force_exception(error)
        except BaseException as exc:
            if exc is outcome.exception:
                return  # it re-raised the inner failure, which the outcome carries
            if isinstance(exc, _pass_through()):
                raise
            if self.strict:  # raising from an old-style teardown makes pluggy warn
                outcome.force_exception(_annotate(exc, self.plugin_key, self.hook_name))
                return
            self.raised(exc, "hookwrapper failed after its yield: ")
        else:
            if (error := self.failure("has a second yield", gen)) is not None:
                outcome.force_exception(error)


def _watched(
    gen: Generator[None, Any, Any], watch: Any, owner: str, old_style: bool
) -> Generator[None, Any, Any]:
    """A contained wrapper whose halves a gated call's watch checks."""
    next(gen)  # the guard's set-up: it yields once, or raises what must not be swallowed
    watch.check(owner, " before its yield")
    if old_style:
        return (yield from watch.old_style_teardown(gen, owner))
    return (yield from watch.teardown(gen, owner))

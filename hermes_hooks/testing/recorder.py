"""Recording hook calls: what every hook was called with, what each plugin returned, in order.

:class:`HookRecorder` watches one plugin manager with pluggy's
``add_hookcall_monitoring`` (so it sees raw ``pm.hook.X(...)`` calls and the facade's alike)
and registers a probe that implements every hook, last and returning ``None``, so that hooks
no plugin implements still reach pluggy and show in the order of a turn. Each implementation
is given a recording wrapper the first time one of its hooks is called, to keep what it
returned; the wrappers are removed again by :meth:`HookRecorder.close`.
"""

from __future__ import annotations

import contextvars
import difflib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs
import pluggy

from hermes_hooks.calling.aio import ACALL_ATTR
from hermes_hooks.spec.markers import hookimpl

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["PROBE_NAME", "HookCall", "HookCalls", "HookRecorder", "ImplResult", "is_probe"]

PROBE_NAME: Final = "hermes-hook-recorder"
"""The name the recorder's probe is registered under (it returns ``None`` from every hook)."""

_RECORDING: Final = "__hermes_recording__"
_MISSING: Final = object()


@attrs.frozen
class ImplResult:
    """What one implementation gave in one hook call.

    :param plugin: the plugin that owns the implementation (its key).
    :param value: what it returned (``None`` when it raised).
    :param error: what it raised, if it raised (strict mode).
    """

    plugin: str
    value: Any
    error: BaseException | None = None


@attrs.define(eq=False)
class HookCall:
    """One call of one hook.

    :param name: the hook.
    :param kwargs: the arguments it was called with; dicts, lists and tuples are copied when
        recorded, so later changes by the host do not show here.
    :param impl_results: what each (non-wrapper) implementation returned, in run order.
    :param result: what pluggy returned: the list of results for collecting hooks, the first
        result (or ``None``) for first-result hooks.
    :param error: what the call raised, if it raised (strict mode).
    """

    name: str
    kwargs: dict[str, Any]
    impl_results: list[ImplResult] = attrs.Factory(list)
    result: Any = None
    error: BaseException | None = None
    _in_impl: bool = attrs.field(default=False, repr=False)

    def __getitem__(self, argument: str) -> Any:
        return self.kwargs[argument]

    @property
    def plugins(self) -> list[str]:
        """The plugins whose implementations ran, in run order (wrappers left out)."""
        return [r.plugin for r in self.impl_results]

    def result_of(self, plugin: str) -> Any:
        """Return what ``plugin`` returned in this call.

        :raises KeyError: no implementation of ``plugin`` ran in this call.
        """
        for impl_result in self.impl_results:
            if impl_result.plugin == plugin:
                return impl_result.value
        raise KeyError(f"{plugin!r} did not run in this {self.name} call; {self.plugins} did")

    def describe(self, keys: Sequence[str] | None = None) -> str:
        """Return ``name(arg=value, ...)``, with only ``keys`` when given."""
        shown = self.kwargs if keys is None else {k: self.kwargs.get(k, _MISSING) for k in keys}
        parts = [f"{k}={_short(v)}" for k, v in shown.items()]
        return f"{self.name}({', '.join(parts)})"


def _short(value: object, limit: int = 100) -> str:
    text = "<missing>" if value is _MISSING else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _snapshot(value: Any) -> Any:
    """Copy plain containers (dict, list, tuple) all the way down; keep other objects."""
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snapshot(v) for v in value]
    if isinstance(value, tuple) and type(value) is tuple:
        return tuple(_snapshot(v) for v in value)
    return value


class HookCalls(Sequence[HookCall]):
    """A sequence of recorded hook calls, with the questions tests ask of them.

    :param calls: the calls, in the order they started.
    :param known_hooks: the hook names of the manager, to point out a misspelled name.
    :param argnames: returns a hook's argument names (``None`` for an unknown hook).
    """

    def __init__(
        self,
        calls: Sequence[HookCall],
        *,
        known_hooks: Sequence[str] = (),
        argnames: Callable[[str], Sequence[str] | None] | None = None,
    ) -> None:
        self._calls = calls
        self._known_hooks = known_hooks
        self._argnames = argnames

    def __len__(self) -> int:
        return len(self._calls)

    def __getitem__(self, index: Any) -> Any:
        return self._calls[index]

    def __iter__(self) -> Iterator[HookCall]:
        return iter(list(self._calls))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {len(self)} calls: {' '.join(self.names())}>"

    def since(self, start: int) -> HookCalls:
        """Return the calls after the first ``start`` ones (``len(calls)`` taken earlier)."""
        calls = list(self._calls)[start:]
        return HookCalls(calls, known_hooks=self._known_hooks, argnames=self._argnames)

    def names(self) -> list[str]:
        """Return the name of every call, in order: the hooks of a turn as they fired."""
        return [call.name for call in list(self._calls)]

    def calls(self, name: str | None = None) -> list[HookCall]:
        """Return the calls of hook ``name`` (of every hook when ``None``), in order."""
        if name is not None:
            self._check_name(name)
        return [c for c in list(self._calls) if name is None or c.name == name]

    def last(self, name: str) -> HookCall:
        """Return the last call of hook ``name``.

        :raises AssertionError: it was not called (saying which hooks were).
        """
        __tracebackhide__ = True
        calls = self.calls(name)
        if not calls:
            raise AssertionError(f"{name} was not called; {self._called()}")
        return calls[-1]

    def assert_called(self, name: str, /, **expected: Any) -> HookCall:
        """Return the first call of ``name`` whose arguments include ``expected``.

        Values are compared with ``==`` (so ``unittest.mock.ANY`` matches anything).

        :raises AssertionError: no call matched; the message shows each call's arguments that
            differ, or which hooks were called when this one was not.
        """
        __tracebackhide__ = True
        self._check_arguments(name, expected)
        calls = self.calls(name)
        for call in calls:
            if all(call.kwargs.get(k, _MISSING) == v for k, v in expected.items()):
                return call
        wanted = ", ".join(f"{k}={_short(v)}" for k, v in expected.items())
        if not calls:
            raise AssertionError(f"{name} was not called; {self._called()}")
        lines = [
            f"{name} was called {_times(len(calls))}, never with {wanted}:",
            *(f"  #{i}: {_differences(call, expected)}" for i, call in enumerate(calls, 1)),
        ]
        raise AssertionError("\n".join(lines))

    def assert_not_called(self, name: str) -> None:
        """Check that hook ``name`` was not called.

        :raises AssertionError: it was, with each call's arguments.
        """
        __tracebackhide__ = True
        calls = self.calls(name)
        if calls:
            lines = [f"{name} was called {_times(len(calls))}:"]
            lines += [f"  #{i}: {call.describe()}" for i, call in enumerate(calls, 1)]
            raise AssertionError("\n".join(lines))

    def _called(self) -> str:
        names = list(dict.fromkeys(self.names()))
        return f"the hooks called were: {', '.join(names)}" if names else "no hook was called"

    def _check_name(self, name: str) -> None:
        __tracebackhide__ = True
        if self._known_hooks and name not in self._known_hooks:
            close = difflib.get_close_matches(name, self._known_hooks, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise AssertionError(f"{name!r} is not a hook of this manager{hint}")

    def _check_arguments(self, name: str, expected: Mapping[str, Any]) -> None:
        __tracebackhide__ = True
        self._check_name(name)
        argnames = self._argnames(name) if self._argnames is not None else None
        if argnames is None:
            return
        unknown = [k for k in expected if k not in argnames]
        if unknown:
            raise AssertionError(
                f"{name} has no argument {', '.join(map(repr, unknown))}; its arguments are "
                f"{', '.join(argnames)}"
            )


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _differences(call: HookCall, expected: Mapping[str, Any]) -> str:
    parts = []
    for key, value in expected.items():
        found = call.kwargs.get(key, _MISSING)
        if found == value:
            parts.append(f"{key}={_short(found)}")
        else:
            parts.append(f"{key}={_short(found)} (expected {_short(value)})")
    return ", ".join(parts)


def is_probe(plugin_name: str) -> bool:
    """Return whether ``plugin_name`` is a recorder's probe."""
    return plugin_name == PROBE_NAME or plugin_name.startswith(PROBE_NAME + "-")


class _Probe:
    """Implements every hook, last, returning ``None``: hooks no plugin implements still fire."""


def _make_probe(hook_names: Sequence[str]) -> _Probe:
    probe = _Probe()
    for name in hook_names:

        def observe() -> None:
            return None

        observe.__name__ = f"observe_{name}"
        setattr(probe, observe.__name__, hookimpl(specname=name, trylast=True)(observe))
    return probe


class HookRecorder(HookCalls):
    """Records every hook call of a plugin manager until :meth:`close`.

    :param pm: the manager to watch.
    :param probe: register a probe implementing every hook, so that hooks nobody implements
        still reach pluggy (the facade skips those) and show in :meth:`names`.
    """

    def __init__(self, pm: PluginManager, *, probe: bool = True) -> None:
        self._all: list[HookCall] = []
        super().__init__(self._all, known_hooks=pm.known_hooks(), argnames=pm.hook_argnames)
        self.pm = pm
        self._lock = threading.Lock()
        self._stack: contextvars.ContextVar[tuple[HookCall, ...]] = contextvars.ContextVar(
            "hermes_hook_recorder_stack", default=()
        )
        self._tokens: dict[int, contextvars.Token[tuple[HookCall, ...]]] = {}
        self._wrapped: list[tuple[pluggy.HookImpl, Callable[..., Any], Callable[..., Any]]] = []
        self._probe: _Probe | None = None
        self._undo = pm.add_hookcall_monitoring(self._before, self._after)
        if probe:
            self._probe = _make_probe(self._known_hooks)
            # A second recorder on the same manager gets a probe of its own.
            name = PROBE_NAME if pm.get_plugin(PROBE_NAME) is None else f"{PROBE_NAME}-{id(self)}"
            pm.register(self._probe, name=name)

    def clear(self) -> None:
        """Forget the calls recorded so far."""
        with self._lock:
            self._all.clear()

    def close(self) -> None:
        """Stop recording: undo the monitoring, unregister the probe, unwrap the implementations."""
        self._undo()
        if self._probe is not None and self.pm.is_registered(self._probe):
            self.pm.unregister(self._probe)
        self._probe = None
        for impl, original, wrapper in self._wrapped:
            if impl.function is wrapper:
                setattr(impl, "function", original)  # noqa: B010 - Final for type checkers only
        self._wrapped.clear()

    # -- monitoring ------------------------------------------------------------------------------

    def _before(
        self, hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]
    ) -> None:
        call = HookCall(hook_name, {k: _snapshot(v) for k, v in kwargs.items()})
        with self._lock:
            self._all.append(call)
        for impl in hook_impls:
            self._wrap(impl)
        self._tokens[id(call)] = self._stack.set((*self._stack.get(), call))

    def _after(
        self,
        outcome: pluggy.Result[Any],
        hook_name: str,
        hook_impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
        stack = self._stack.get()
        if not stack:
            return
        call = stack[-1]
        token = self._tokens.pop(id(call), None)
        if token is not None:
            self._stack.reset(token)
        call.error = outcome.exception
        if outcome.exception is None:
            call.result = outcome.get_result()

    def _wrap(self, impl: pluggy.HookImpl) -> None:
        original = impl.function
        if impl.wrapper or impl.hookwrapper or is_probe(impl.plugin_name):
            return
        if getattr(original, _RECORDING, None) is self:
            return
        plugin = impl.plugin_name
        stack = self._stack

        def recording(*args: Any, **kwargs: Any) -> Any:
            __tracebackhide__ = True
            active = stack.get()
            call = active[-1] if active else None
            # A facade's recording copy calls the plugin's wrapped function: record it once.
            if call is None or call._in_impl:
                return original(*args, **kwargs)
            call._in_impl = True
            try:
                value = original(*args, **kwargs)
            except BaseException as exc:
                call.impl_results.append(ImplResult(plugin, None, exc))
                raise
            finally:
                call._in_impl = False
            call.impl_results.append(ImplResult(plugin, value))
            return value

        # Keep what isolation and introspection read from the function (guard markers).
        recording.__dict__.update(getattr(original, "__dict__", {}))
        acall = getattr(original, ACALL_ATTR, None)
        if acall is not None:  # what the async path awaits in its place: recorded too
            setattr(recording, ACALL_ATTR, _recording_async(acall, plugin, stack))
        setattr(recording, _RECORDING, self)
        setattr(impl, "function", recording)  # noqa: B010 - Final for type checkers only
        self._wrapped.append((impl, original, recording))


def _recording_async(
    acall: Callable[..., Any],
    plugin: str,
    stack: contextvars.ContextVar[tuple[HookCall, ...]],
) -> Callable[..., Any]:
    """The coroutine function the async path awaits for a recorded implementation: each call
    recorded in the hook call open in its task (concurrent observers each record their own)."""

    async def arecording(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        active = stack.get()
        if not active:
            return await acall(*args, **kwargs)
        try:
            value = await acall(*args, **kwargs)
        except BaseException as exc:
            active[-1].impl_results.append(ImplResult(plugin, None, exc))
            raise
        active[-1].impl_results.append(ImplResult(plugin, value))
        return value

    return arecording

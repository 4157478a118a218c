"""One handoff per bounded call: ``pm.hook.X(...)`` gives what it gives inline, and monitored.

Every call runs through pluggy's own loop. For a bounded hook (the default
``plugins.hook_callback_timeout``), the first guard pluggy calls runs the call's plain
implementations on one worker and each later guard returns its own result from that batch.
The differential runs each random set of implementations three ways on one manager: bounded
(one handoff), bounded with a no-op call monitor installed, and inline
(``hook_callback_timeout: 0``, each implementation called by pluggy's loop itself). Results,
raised errors, warnings and the order the implementations ran in must be the same.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pluggy
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from plugin_builders import pluggy_loop

from hermes_hooks import hookimpl
from hermes_hooks.calling.facade import call_attributed
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

RAISE = object()
HOME = Path("/nonexistent/hermes-home")

# Observer (collect, unchecked) and first-result (checked: str) hooks, with their arguments.
# The hookspecs' own arguments (telemetry_schema_version included), as the manager knows them.
HOOK_ARGS = {
    hook: tuple(inspect.signature(getattr(hookspecs, hook)).parameters)
    for hook in ("on_session_start", "transform_terminal_output")
}
VALUES: list[object] = [None, None, "a", "b", "", 7, {"k": 1}, RAISE]

ImplSpec = tuple[str, str | None, object, tuple[str, ...]]


@st.composite
def impl_specs(draw: st.DrawFn, hook: str) -> list[ImplSpec]:
    names = HOOK_ARGS[hook]
    specs = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["plain", "plain", "plain", "wrapper", "hookwrapper"]),
                st.sampled_from([None, None, "tryfirst", "trylast"]),
                st.sampled_from(VALUES),
                # 0, 1 or several arguments: every shape of argument getter.
                st.lists(st.sampled_from(names), unique=True, max_size=3).map(tuple),
            ),
            max_size=6,
        )
    )
    return specs


def _make_plugin(hook: str, index: int, spec: ImplSpec, log: list[str]) -> object:
    kind, order, value, argnames = spec
    name = f"p{index}"
    opts: dict[str, Any] = {"tryfirst": order == "tryfirst", "trylast": order == "trylast"}
    params = ", ".join(argnames)

    def plain(*args: object) -> object:
        log.append(f"{name}{args!r}")
        if value is RAISE:
            raise RuntimeError(f"{name} fails")
        return value

    # A wrapper's value says how it behaves: None passes the result through, RAISE raises
    # after its yield, 7 catches an inner error (and answers 7), "" never yields, {"k": 1}
    # yields twice, and any other value replaces the result (an old-style one forces it).
    def wrapper(*args: object) -> Generator[None, Any, Any]:
        log.append(f"{name}:before")
        if value == "":
            return None
        try:
            result = yield
        except Exception as exc:
            log.append(f"{name}:saw {type(exc).__name__}")
            if value == 7:
                return 7
            raise
        log.append(f"{name}:after")
        if value == {"k": 1}:
            yield
        if value is RAISE:
            raise RuntimeError(f"{name} fails after")
        return result if value is None or value == 7 else value

    def hookwrapper(*args: object) -> Generator[None, pluggy.Result[Any], None]:
        log.append(f"{name}:before")
        if value == "":
            return
        outcome = yield
        log.append(f"{name}:after {outcome.exception is not None}")
        if value == {"k": 1}:
            yield
        if value is RAISE:
            raise RuntimeError(f"{name} fails after")
        if value == 7:
            outcome.force_exception(RuntimeError(f"{name} forced"))
        elif value is not None:
            outcome.force_result(value)

    body = {"plain": plain, "wrapper": wrapper, "hookwrapper": hookwrapper}[kind]
    if kind != "plain":
        opts[kind] = True
    # pluggy reads the implementation's parameter names: give it exactly ``argnames``.
    namespace: dict[str, Any] = {"body": body}
    delegate = "yield from" if kind != "plain" else ""
    exec(f"def {hook}({params}):\n    return ({delegate} body({params}))\n", namespace)
    return type(name, (), {hook: staticmethod(hookimpl(**opts)(namespace[hook]))})()


def manager_with(
    hook: str, specs: Sequence[ImplSpec], log: list[str], *, strict: bool = False
) -> PluginManager:
    pm = PluginManager(HOME, strict=strict)
    for index, spec in enumerate(specs):
        pm.register(_make_plugin(hook, index, spec, log), name=f"p{index}")
    return pm


@contextmanager
def inline(pm: PluginManager) -> Iterator[None]:
    """Turn the bound off: pluggy's loop calls each guarded implementation itself."""
    seconds = pm.callback_bound.seconds
    pm.callback_bound.seconds = 0.0
    try:
        yield
    finally:
        pm.callback_bound.seconds = seconds


def outcome(call: Callable[[], object], log: list[str]) -> tuple[str, object, list[str]]:
    """Return what a call gave, or the error it raised, and what ran, in order."""
    log.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            kind, value = "result", call()
        except BaseException as exc:
            kind, value = "error", f"{type(exc).__name__}: {exc}"
    ran = list(log) + [f"warning: {w.category.__name__}" for w in caught]
    return kind, value, ran


EXAMPLES = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@EXAMPLES
@given(
    data=st.data(),
    hook=st.sampled_from(sorted(HOOK_ARGS)),
    strict=st.booleans(),
    leave_out=st.sampled_from([None, 0, 1]),
)
def test_a_bounded_call_gives_what_pluggys_loop_gives_inline(
    data: st.DataObject, hook: str, strict: bool, leave_out: int | None
) -> None:
    specs = data.draw(impl_specs(hook))
    log: list[str] = []
    pm = manager_with(hook, specs, log, strict=strict)
    assert pm.callback_bound.seconds > 0
    kwargs: dict[str, object] = {name: f"<{name}>" for name in HOOK_ARGS[hook]}
    if leave_out is not None:  # a missing argument: pluggy's HookCallError, when its turn comes
        del kwargs[HOOK_ARGS[hook][leave_out]]
    call = getattr(pm.hook, hook)
    bounded = outcome(lambda: call(**kwargs), log)
    with pluggy_loop(pm):
        monitored = outcome(lambda: call(**kwargs), log)
    with inline(pm):
        looped = outcome(lambda: call(**kwargs), log)
    assert bounded == looped
    assert monitored == looped


def test_implementations_added_and_removed_between_calls_are_seen() -> None:
    log: list[str] = []
    pm = manager_with("on_session_start", [("plain", None, 1, ("session_id",))], log)
    assert pm.hook.on_session_start(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION, session_id="s", model="m", platform="p"
    ) == [1]
    late = _make_plugin("on_session_start", 9, ("plain", "tryfirst", 2, ()), log)
    pm.register(late, name="late")
    assert pm.hook.on_session_start(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION, session_id="s", model="m", platform="p"
    ) == [2, 1]
    pm.unregister(late)
    assert pm.hook.on_session_start(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION, session_id="s", model="m", platform="p"
    ) == [1]
    wrapper = _make_plugin("on_session_start", 8, ("wrapper", None, None, ()), log)
    pm.register(wrapper, name="wrapper")
    assert pm.hook.on_session_start(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION, session_id="s", model="m", platform="p"
    ) == [1]


def test_subset_callers_and_call_extra_are_pluggys() -> None:
    log: list[str] = []
    specs: list[ImplSpec] = [("plain", None, n, ("session_id",)) for n in (1, 2, 3)]
    pm = manager_with("on_session_start", specs, log)
    kwargs = {
        "session_id": "s",
        "model": "m",
        "platform": "p",
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    }
    subset = pm.subset_hook_caller("on_session_start", [pm.get_plugin("p1")])
    assert subset(**kwargs) == [3, 1]
    extra = pm.hook.on_session_start.call_extra([lambda session_id: 0], kwargs)
    assert extra == [0, 3, 2, 1]
    assert pm.hook.on_session_start(**kwargs) == [3, 2, 1]


def test_each_implementations_function_is_read_at_every_call() -> None:
    log: list[str] = []
    pm = manager_with("on_session_start", [("plain", None, 1, ("session_id",))], log)
    (impl,) = pm.hook.on_session_start.get_hookimpls()
    impl.function = lambda session_id: f"replaced {session_id}"  # type: ignore[misc]
    assert pm.hook.on_session_start(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION, session_id="s", model="m", platform="p"
    ) == ["replaced s"]


def test_attributed_calls_name_the_plugin_of_each_result() -> None:
    log: list[str] = []
    specs: list[ImplSpec] = [
        ("plain", None, "a", ()),
        ("plain", None, None, ()),
        ("plain", "tryfirst", "b", ()),
    ]
    pm = manager_with("transform_terminal_output", specs, log)
    kwargs = dict.fromkeys(HOOK_ARGS["transform_terminal_output"], "x")
    assert pm.hook.transform_terminal_output(**kwargs) == "b"
    assert call_attributed(pm, "transform_terminal_output", kwargs) == [("p2", "b")]
    collect = manager_with("on_session_start", specs, log)
    kwargs = dict.fromkeys(HOOK_ARGS["on_session_start"], "x")
    assert call_attributed(collect, "on_session_start", kwargs) == [("p2", "b"), ("p0", "a")]
    with inline(collect):
        assert call_attributed(collect, "on_session_start", kwargs) == [("p2", "b"), ("p0", "a")]


def test_strict_errors_propagate_from_a_bounded_call_with_their_note() -> None:
    log: list[str] = []
    specs: list[ImplSpec] = [("plain", None, 1, ()), ("plain", None, RAISE, ())]
    pm = manager_with("on_session_start", specs, log, strict=True)
    with pytest.raises(RuntimeError, match="p1 fails") as info:
        pm.hook.on_session_start(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id="s",
            model="m",
            platform="p",
        )
    assert any("'p1'" in note for note in getattr(info.value, "__notes__", []))
    assert log == ["p1()"]  # the one that raised ran first, and the call stopped there


# -- register_hook callbacks, called straight from the batch -------------------------------------

# Every shape of callback Hermes plugins write: the batch calls the callback itself (with the
# call's keywords, or by position when that is the same call); pluggy's loop calls the adapter.
SHIM_SHAPES = {
    "kwargs": "def callback(**kwargs):\n    return body(sorted(kwargs.items()))\n",
    "named+kwargs": "def callback(command, output, **kwargs):\n"
    "    return body((command, output, sorted(kwargs)))\n",
    "reordered": "def callback(output, command):\n    return body((output, command))\n",
    "keyword-only": "def callback(*, output):\n    return body(output)\n",
    "with a default": "def callback(command, extra=1):\n    return body((command, extra))\n",
    "positional-only default": "def callback(x=0, /, *, env_type):\n    return body(env_type)\n",
}


def _shim_plugin(index: int, shape: str, value: object, log: list[str]) -> object:
    from hermes_hooks.plugins.loading import PluginHooks, make_hook_adapter

    name = f"s{index}"

    def body(seen: object) -> object:
        log.append(f"{name}{seen!r}")
        if value is RAISE:
            raise RuntimeError(f"{name} fails")
        return value

    namespace: dict[str, Any] = {"body": body}
    exec(SHIM_SHAPES[shape], namespace)
    hook = "transform_terminal_output"
    spec = HOOK_ARGS[hook]
    adapter = make_hook_adapter(hook, namespace["callback"], spec, owner=name)
    return PluginHooks(name, None, {}, [(hook, adapter)])


@EXAMPLES
@given(
    shapes=st.lists(
        st.tuples(st.sampled_from(sorted(SHIM_SHAPES)), st.sampled_from(VALUES)), max_size=5
    ),
    call=st.sampled_from(["every argument", "an extra one", "a defaulted one left out"]),
    strict=st.booleans(),
)
def test_register_hook_callbacks_get_from_a_batch_what_pluggys_loop_gives_them(
    shapes: list[tuple[str, object]], call: str, strict: bool
) -> None:
    hook = "transform_terminal_output"
    log: list[str] = []
    pm = PluginManager(HOME, strict=strict)
    for index, (shape, value) in enumerate(shapes):
        pm.register(_shim_plugin(index, shape, value, log), name=f"s{index}")
    kwargs: dict[str, object] = {name: f"<{name}>" for name in HOOK_ARGS[hook]}
    if call == "an extra one":
        kwargs["not_a_hook_argument"] = 1
    elif call == "a defaulted one left out":
        del kwargs["env_type"]
    caller = getattr(pm.hook, hook)
    planned = outcome(lambda: caller(**kwargs), log)
    with pluggy_loop(pm):
        looped = outcome(lambda: caller(**kwargs), log)
    assert planned == looped
    inline = PluginManager(HOME, strict=strict)
    inline.plugins_config = type(inline.plugins_config)(hook_callback_timeout=0)
    for index, (shape, value) in enumerate(shapes):
        inline.register(_shim_plugin(index, shape, value, log), name=f"s{index}")
    assert outcome(lambda: getattr(inline.hook, hook)(**kwargs), log) == planned

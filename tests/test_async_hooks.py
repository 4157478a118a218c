"""The async path: ``await Hooks(pm).a<hook>(...)`` and async implementations on the sync path.

A differential property test runs random sets of implementations (plain sync and ``async def``,
new-style wrappers and old-style hookwrappers, tryfirst/trylast, fitting, unfitting and raising
returns) through raw pluggy, the sync facade and the async facade: the order and the answers
must be the same. Then real plugin folders in a temporary home pin the rules one by one.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path
from typing import Any

import pluggy
import pytest
from homes import shared_module_home as home  # noqa: F401  (the fixture)
from hypothesis import HealthCheck, given, settings, strategies as st
from plugin_builders import PRE_TOOL_CALL_KWARGS, PluginHome, info

from hermes_hooks import hookimpl
from hermes_hooks.calling import workers as _workers
from hermes_hooks.calling.facade import Hooks, acall_hook
from hermes_hooks.errors import HookResultError
from hermes_hooks.plugins.config import PluginsConfig
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec.hookspecs import HOOK_NAMES, TELEMETRY_SCHEMA_VERSION

RAISE = object()
TOOL_VALUES: list[object] = [
    None,
    {"action": "block", "message": "b1"},
    {"action": "approve", "message": "a1", "rule_key": "r1"},
    {"action": "modify", "args": {"x": 1}},
    {"action": "modify", "args": {"x": 2, "y": 1}},
    {"blocked": True, "reason": "legacy"},
    42,
    RAISE,
]
TEXT_VALUES: list[object] = [None, "r1", "r2", "", 5, RAISE]

ImplSpec = tuple[str, bool, str | None, object, str]


@pytest.fixture(autouse=True)
def _idle_workers_stop() -> Iterator[None]:
    yield
    _workers.shutdown_idle()


def impl_specs(values: list[object]) -> st.SearchStrategy[list[ImplSpec]]:
    kind = st.sampled_from(["plain", "plain", "plain", "wrapper", "hookwrapper"])
    is_async = st.booleans()
    order = st.sampled_from([None, None, "tryfirst", "trylast"])
    wrap = st.sampled_from(["pass", "replace", "reverse"])
    return st.lists(st.tuples(kind, is_async, order, st.sampled_from(values), wrap), max_size=6)


def make_plugin(hook: str, index: int, spec: ImplSpec, log: list[str]) -> object:
    kind, is_async, order, value, wrap = spec
    name = f"p{index}"
    opts: dict[str, Any] = {"tryfirst": order == "tryfirst", "trylast": order == "trylast"}

    def answer() -> object:
        log.append(name)
        if value is RAISE:
            raise RuntimeError(f"{name} fails")
        return value

    def plain(self: object) -> object:
        return answer()

    async def aplain(self: object) -> object:
        await asyncio.sleep(0)
        return answer()

    def wrapper(self: object) -> Generator[None, Any, Any]:
        log.append(f"{name}:before")
        result = yield
        log.append(f"{name}:after")
        if wrap == "replace":
            return "from the wrapper" if isinstance(result, str) or result is None else result
        if wrap == "reverse" and isinstance(result, list):
            return list(reversed(result))
        return result

    def hookwrapper(self: object) -> Generator[None, pluggy.Result[Any], None]:
        log.append(f"{name}:before")
        outcome = yield
        log.append(f"{name}:after")
        if wrap == "replace" and isinstance(outcome.get_result(), str):
            outcome.force_result("forced")

    function: Callable[..., object]
    if kind == "wrapper":
        function, opts["wrapper"] = wrapper, True
    elif kind == "hookwrapper":
        function, opts["hookwrapper"] = hookwrapper, True
    else:
        function = aplain if is_async else plain
    return type(name, (), {hook: hookimpl(**opts)(function)})()


def manager_with(hook: str, specs: list[ImplSpec], log: list[str], timeout: float) -> PluginManager:
    pm = PluginManager(Path("/nonexistent/hermes-home"))
    pm.plugins_config = PluginsConfig(hook_callback_timeout=timeout)
    for index, spec in enumerate(specs):
        pm.register(make_plugin(hook, index, spec, log), name=f"p{index}")
    return pm


EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOOL_KWARGS: Mapping[str, Any] = PRE_TOOL_CALL_KWARGS


@EXAMPLES
@given(specs=impl_specs(TOOL_VALUES), timeout=st.sampled_from([0.0, 30.0]))
def test_pre_tool_call_is_the_same_sync_async_and_raw(
    specs: list[ImplSpec], timeout: float
) -> None:
    log: list[str] = []
    pm = manager_with("pre_tool_call", specs, log, timeout)
    hooks = Hooks(pm)

    raw = pm.hook.pre_tool_call(**TOOL_KWARGS)
    raw_log = log[:]
    log.clear()
    decision = hooks.pre_tool_call(**TOOL_KWARGS)
    assert log == raw_log
    log.clear()

    async def both() -> tuple[Any, Any]:
        araw = await acall_hook(pm, "pre_tool_call", TOOL_KWARGS)
        araw_log = log[:]
        log.clear()
        return araw, (await hooks.apre_tool_call(**TOOL_KWARGS), araw_log)

    araw, (adecision, araw_log) = asyncio.run(both())
    assert araw_log == raw_log, "the async path ran the implementations in another order"
    assert log == raw_log
    assert araw == raw
    assert adecision == decision


TEXT_KWARGS: dict[str, Any] = {
    "tool_name": "t",
    "args": {},
    "result": "original",
    "task_id": "",
    "session_id": "",
    "tool_call_id": "",
    "turn_id": "",
    "api_request_id": "",
    "duration_ms": 1,
    "status": "ok",
    "error_type": None,
    "error_message": None,
    "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
}


@EXAMPLES
@given(specs=impl_specs(TEXT_VALUES), timeout=st.sampled_from([0.0, 30.0]))
def test_a_first_result_hook_is_the_same_sync_async_and_raw(
    specs: list[ImplSpec], timeout: float
) -> None:
    log: list[str] = []
    pm = manager_with("transform_tool_result", specs, log, timeout)
    hooks = Hooks(pm)
    raw = pm.hook.transform_tool_result(**TEXT_KWARGS)
    raw_log = log[:]
    log.clear()
    answer = hooks.transform_tool_result(**TEXT_KWARGS)
    log.clear()
    araw = asyncio.run(acall_hook(pm, "transform_tool_result", TEXT_KWARGS))
    assert log == raw_log, "firstresult must stop the async path where it stops pluggy"
    log.clear()
    aanswer = asyncio.run(hooks.atransform_tool_result(**TEXT_KWARGS))
    assert (araw, aanswer) == (raw, answer)


def test_every_hook_has_an_async_method_with_the_same_arguments() -> None:
    for name in HOOK_NAMES:
        method, amethod = getattr(Hooks, name), getattr(Hooks, f"a{name}")
        assert inspect.iscoroutinefunction(amethod), name
        assert amethod.__name__ == f"a{name}"
        assert inspect.signature(amethod).parameters == inspect.signature(method).parameters


# -- real plugin folders ---------------------------------------------------------------------------


SHARED = "hermes_async_test_shared"
"""A module the plugins of one test import to share a log (on sys.path for that test only)."""
SHARED_CODE = "log = []\n"


def load(home: PluginHome, timeout: float | None = None) -> PluginManager:
    """Write ``config.yaml`` (with ``plugins.hook_callback_timeout`` when given) and load."""
    pm = home.load_bounded(timeout)
    if timeout is not None:
        assert pm.plugins_config.hook_callback_timeout == timeout
    return pm


def shared_log() -> list[Any]:
    log: list[Any] = importlib.import_module(SHARED).log
    return log


ASYNC_GUARD = """
import asyncio
import threading

from hermes_hooks import hookimpl

seen = []


@hookimpl
async def pre_tool_call(tool_name, args):
    await asyncio.sleep(0)
    seen.append((tool_name, threading.current_thread().name))
    if args.get("path", "").startswith("/etc/"):
        return {"action": "block", "message": "async guard: /etc is off limits"}
    return None


@hookimpl
async def transform_tool_result(result):
    await asyncio.sleep(0)
    return result.upper()
"""

SYNC_GUARD = """
from hermes_hooks import hookimpl

calls = []


@hookimpl
def pre_tool_call(tool_name, args):
    calls.append(tool_name)
    return {"action": "modify", "args": {"checked": True}}


@hookimpl
def transform_tool_result(result):
    calls.append("transform")
    return None


def on_start(session_id, **kwargs):
    calls.append(("start", session_id))


def register(ctx):
    ctx.register_hook("on_session_start", on_start)
"""


def module_of(pm: PluginManager, key: str) -> Any:
    plugin = pm.get_plugin(key)
    assert plugin is not None, key
    return plugin.module


@pytest.mark.parametrize("timeout", [0.0, 30.0])
def test_async_and_sync_plugins_answer_the_same_on_both_paths(
    home: PluginHome, timeout: float
) -> None:
    home.add_plugin("async_guard", ASYNC_GUARD)
    home.add_plugin("sync_guard", SYNC_GUARD)
    pm = load(home, timeout)
    hooks = Hooks(pm)
    call: dict[str, Any] = {"tool_name": "write_file", "args": {"path": "/etc/passwd"}}

    sync_decision = hooks.pre_tool_call(**call)
    sync_text = hooks.transform_tool_result(tool_name="t", args={}, result="done")
    hooks.on_session_start(session_id="s1")

    async def turn() -> tuple[Any, str]:
        decision = await hooks.apre_tool_call(**call)
        text = await hooks.atransform_tool_result(tool_name="t", args={}, result="done")
        await hooks.aon_session_start(session_id="s2")
        return decision, text

    async_decision, async_text = asyncio.run(turn())
    assert sync_decision == async_decision
    assert async_decision.is_blocked
    assert async_decision.plugin == "async_guard"
    assert async_decision.args == {"path": "/etc/passwd", "checked": True}
    assert sync_text == async_text == "DONE"
    # sync_guard loaded after async_guard, so it runs first (pluggy: newest first).
    assert module_of(pm, "sync_guard").calls == [
        "write_file",
        "transform",
        ("start", "s1"),
        "write_file",
        "transform",
        ("start", "s2"),
    ]


def test_async_implementations_run_on_the_callers_loop_in_the_async_path(home: PluginHome) -> None:
    home.add_plugin("async_guard", ASYNC_GUARD)
    pm = load(home)

    async def turn() -> str:
        await Hooks(pm).apre_tool_call(tool_name="read_file", args={})
        return threading.current_thread().name

    loop_thread = asyncio.run(turn())
    assert module_of(pm, "async_guard").seen == [("read_file", loop_thread)]


def test_the_sync_path_runs_async_implementations_outside_and_inside_a_running_loop(
    home: PluginHome,
) -> None:
    home.add_plugin("async_guard", ASYNC_GUARD)
    pm = load(home, timeout=0)  # no bound: resolved inline, or on a helper loop in a loop
    hooks = Hooks(pm)
    assert hooks.pre_tool_call(tool_name="patch", args={"path": "/etc/x"}).is_blocked
    assert module_of(pm, "async_guard").seen[-1] == ("patch", threading.current_thread().name)

    async def host_with_a_loop_calling_sync() -> tuple[bool, str]:
        # A sync call from inside the host's loop must neither re-enter nor deadlock it.
        decision = hooks.pre_tool_call(tool_name="patch", args={"path": "/etc/y"})
        return decision.is_blocked, hooks.transform_tool_result(tool_name="t", args={}, result="a")

    assert asyncio.run(host_with_a_loop_calling_sync()) == (True, "A")
    helper = module_of(pm, "async_guard").seen[-1][1]
    assert helper != threading.current_thread().name


def test_order_firstresult_and_wrappers_are_pluggys_on_the_async_path(home: PluginHome) -> None:
    head = f"import asyncio\nfrom {SHARED} import log\nfrom hermes_hooks import hookimpl\n"
    home.add_plugin(
        "a_first",
        head
        + """
@hookimpl(tryfirst=True)
async def transform_llm_output(response_text):
    log.append("first")
    await asyncio.sleep(0)
    return None
""",
    )
    home.add_plugin(
        "b_middle",
        head
        + """
@hookimpl
def transform_llm_output(response_text):
    log.append("middle")
    return response_text + "!"
""",
    )
    home.add_plugin(
        "c_last",
        head
        + """
@hookimpl(trylast=True)
async def transform_llm_output(response_text):
    log.append("last")
    return "never asked"
""",
    )
    home.add_plugin(
        "d_around",
        head
        + """
@hookimpl(wrapper=True)
def transform_llm_output():
    log.append("around:before")
    text = yield
    log.append("around:after")
    return text.replace("!", "?")
""",
    )
    pm = load(home)
    log = shared_log()
    hooks = Hooks(pm)

    sync = hooks.transform_llm_output(response_text="hi")
    sync_log = log[:]
    log.clear()
    result = asyncio.run(hooks.atransform_llm_output(response_text="hi"))

    assert sync == result == "hi?"
    assert log == sync_log == ["around:before", "first", "middle", "around:after"]


def waiter(me: str, other: str) -> str:
    """A plugin whose ``post_tool_call`` starts, then waits until ``other``'s has started."""
    return f"""
import asyncio
from {SHARED} import log
from hermes_hooks import hookimpl

started = {{}}


@hookimpl
async def post_tool_call(tool_name):
    log.append("{me}:start")
    while "{other}:start" not in log:
        await asyncio.sleep(0.001)
    log.append("{me}:end")
"""


def test_observers_run_concurrently_when_the_host_asks(home: PluginHome) -> None:
    home.add_plugin("a", waiter("a", "b"))
    home.add_plugin("b", waiter("b", "a"))
    pm = load(home)
    hooks = Hooks(pm, concurrent_observers=True)

    async def turn() -> None:
        # In order, "b" would wait for "a" forever: only concurrent implementations both end.
        await asyncio.wait_for(hooks.apost_tool_call(tool_name="t", args={}, result="r"), 10)

    asyncio.run(turn())
    log = shared_log()
    assert sorted(log[:2]) == ["a:start", "b:start"]
    assert sorted(log[2:]) == ["a:end", "b:end"]
    assert info(pm, "a").hook_errors == info(pm, "b").hook_errors == 0


def test_observers_run_in_order_by_default(home: PluginHome) -> None:
    head = f"import asyncio\nfrom {SHARED} import log\nfrom hermes_hooks import hookimpl\n"
    home.add_plugin(
        "quick",
        head + '@hookimpl\nasync def post_tool_call(tool_name):\n    log.append("quick")\n',
    )
    home.add_plugin(
        "slow",
        head
        + """
@hookimpl
async def post_tool_call(tool_name):
    log.append("slow:start")
    await asyncio.sleep(0.01)
    log.append("slow:end")
""",
    )
    pm = load(home)
    asyncio.run(Hooks(pm).apost_tool_call(tool_name="t", args={}, result="r"))
    assert shared_log() == ["slow:start", "slow:end", "quick"]


FAILING = """
from hermes_hooks import hookimpl


@hookimpl
async def pre_tool_call(tool_name):
    raise RuntimeError("the async guard broke")


@hookimpl
async def post_tool_call(tool_name):
    raise ValueError("the async logger broke")


@hookimpl
async def transform_tool_result(result):
    return 42
"""


def test_async_failures_follow_the_hooks_policy(home: PluginHome) -> None:
    home.add_plugin("failing", FAILING)
    pm = load(home)
    hooks = Hooks(pm)

    async def turn() -> tuple[Any, str]:
        decision = await hooks.apre_tool_call(tool_name="t", args={})
        await hooks.apost_tool_call(tool_name="t", args={}, result="r")
        return decision, await hooks.atransform_tool_result(tool_name="t", args={}, result="r")

    decision, text = asyncio.run(turn())
    assert decision.is_blocked
    assert decision.plugin == "failing"
    assert "RuntimeError: the async guard broke" in (decision.message or "")
    assert text == "r"  # 42 does not fit: skipped
    status = info(pm, "failing")
    assert status.hook_errors == 3
    assert status.hook_timeouts == 0


def test_strict_mode_raises_async_failures(home: PluginHome) -> None:
    home.add_plugin("failing", FAILING)
    home.write_config()
    pm = PluginManager(home.root, strict=True)
    home.managers.append(pm)
    pm.discover_and_load()
    with pytest.raises(RuntimeError, match="the async guard broke") as raised:
        asyncio.run(Hooks(pm).apre_tool_call(tool_name="t", args={}))
    assert "raised by plugin 'failing' in hook 'pre_tool_call'" in raised.value.__notes__
    with pytest.raises(HookResultError, match="returned int 42"):
        asyncio.run(Hooks(pm).atransform_tool_result(tool_name="t", args={}, result="r"))


def test_defaulted_parameters_arrive_by_keyword_on_both_paths(home: PluginHome) -> None:
    # pluggy 1.7 passes an implementation's defaulted parameters by keyword.
    home.add_plugin(
        "defaults",
        """
        from hermes_hooks import hookimpl


        @hookimpl
        def transform_llm_output(response_text, platform="nowhere"):
            return f"{response_text} on {platform}"
        """,
    )
    pm = load(home)
    hooks = Hooks(pm)
    assert hooks.transform_llm_output(response_text="hi", platform="tg") == "hi on tg"
    assert asyncio.run(hooks.atransform_llm_output(response_text="hi", platform="tg")) == (
        "hi on tg"
    )


def test_the_listener_hears_async_calls_too(home: PluginHome) -> None:
    heard: list[str] = []
    pm = load(home)
    hooks = Hooks(pm, listener=heard.append)
    decision = asyncio.run(hooks.apre_tool_call(tool_name="t", args={"a": 1}))
    assert heard == ["pre_tool_call"]
    assert decision.action == "allow"
    assert decision.args == {"a": 1}


class UsesDefaults:
    @hookimpl
    def pre_tool_call(self, tool_name: str, task_id: str, middleware_trace: list[int]) -> object:
        middleware_trace.append(1)
        return {"action": "block", "message": f"{task_id!r} {middleware_trace}"}


@pytest.mark.parametrize("timeout", [0.0, 30.0], ids=["unbounded", "bounded"])
def test_acall_hook_fills_in_the_contracts_defaults_as_the_sync_call_does(timeout: float) -> None:
    pm = manager_with("pre_tool_call", [], [], timeout)
    pm.register(UsesDefaults(), name="defaults")
    given: dict[str, Any] = {"tool_name": "x", "args": {}}
    expected = [{"action": "block", "message": "'' [1]"}]  # a fresh list on every call
    for _ in range(2):
        assert pm.hook.pre_tool_call(**given) == expected
        assert asyncio.run(acall_hook(pm, "pre_tool_call", given)) == expected
    assert given == {"tool_name": "x", "args": {}}  # the caller's mapping is left alone


def test_acall_hook_warns_about_an_argument_without_a_default_as_pluggy_does() -> None:
    pm = manager_with("pre_tool_call", [], [], 0.0)
    pm.register(UsesDefaults(), name="defaults")
    missing = pytest.raises(pluggy.HookCallError, match="'tool_name'")
    with pytest.warns(UserWarning, match="'tool_name'.* cannot be found") as sync, missing:
        pm.hook.pre_tool_call(args={})

    async def host() -> object:
        return await acall_hook(pm, "pre_tool_call", {"args": {}})

    missing = pytest.raises(pluggy.HookCallError, match="'tool_name'")
    with pytest.warns(UserWarning, match="'tool_name'.* cannot be found") as async_, missing:
        asyncio.run(host())
    assert [str(w.message) for w in async_] == [str(w.message) for w in sync]
    assert [w.filename for w in async_] == [w.filename for w in sync] == [__file__]

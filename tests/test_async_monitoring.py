"""Async hook calls are told to pluggy's call monitors exactly as sync ones are.

pluggy's ``add_hookcall_monitoring`` (and ``enable_tracing``, built on it) wraps pluggy's loop,
which is synchronous. The async path (``acall_hook``, ``await Hooks(pm).a<name>(...)``) tells the
same monitors, in the same order, with the same arguments and outcome.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pluggy
import pytest
from plugin_builders import PRE_TOOL_CALL_KWARGS

from hermes_hooks import hookimpl
from hermes_hooks.calling import workers
from hermes_hooks.calling.facade import Hooks, acall_hook
from hermes_hooks.dashboard import counters as counters_module
from hermes_hooks.dashboard.counters import HookCounters
from hermes_hooks.plugins.config import PluginsConfig
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.testing.recorder import HookRecorder

TOOL_KWARGS: Mapping[str, Any] = PRE_TOOL_CALL_KWARGS
BLOCK = {"action": "block", "message": "no"}


@pytest.fixture(autouse=True)
def _idle_workers_stop() -> Iterator[None]:
    yield
    workers.shutdown_idle()


class Blocks:
    @hookimpl
    def pre_tool_call(self, tool_name: str) -> object:
        return BLOCK if tool_name == "terminal" else None


class Quiet:
    @hookimpl
    def pre_tool_call(self, args: object) -> None:
        return None


class AsyncBlocks:
    @hookimpl
    async def pre_tool_call(self, tool_name: str) -> object:
        await asyncio.sleep(0)
        return BLOCK


class Watches:
    @hookimpl
    def post_tool_call(self, result: str) -> None:
        return None


class Raises:
    @hookimpl
    def pre_tool_call(self) -> None:
        raise ValueError("broken plugin")


def manager(*plugins: object, timeout: float = 0.0, strict: bool = False) -> PluginManager:
    pm = PluginManager(Path("/nonexistent/hermes-home"), strict=strict)
    pm.plugins_config = PluginsConfig(hook_callback_timeout=timeout)
    for index, plugin in enumerate(plugins):
        pm.register(plugin, name=f"p{index}-{type(plugin).__name__}")
    return pm


Seen = list[tuple[object, ...]]


def recorder(seen: Seen, tag: str = "") -> tuple[Callable[..., None], Callable[..., None]]:
    """A monitor pair that records what pluggy hands it."""

    def before(name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        seen.append((tag, "before", name, [i.plugin_name for i in impls], dict(kwargs)))

    def after(
        outcome: pluggy.Result[Any],
        name: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
        error = outcome.exception
        got = repr(error) if error is not None else outcome.get_result()
        seen.append((tag, "after", name, [i.plugin_name for i in impls], got))

    return before, after


@pytest.mark.parametrize("timeout", [0.0, 30.0], ids=["unbounded", "bounded"])
@pytest.mark.parametrize(
    "plugins", [(Blocks(), Quiet()), (Quiet(), AsyncBlocks())], ids=["sync", "async"]
)
def test_acall_hook_is_monitored_as_the_sync_call_is(
    plugins: tuple[object, ...], timeout: float
) -> None:
    pm = manager(*plugins, timeout=timeout)
    seen: Seen = []
    undo = pm.add_hookcall_monitoring(*recorder(seen))
    try:
        answer = asyncio.run(acall_hook(pm, "pre_tool_call", dict(TOOL_KWARGS)))
        async_seen = list(seen)
        seen.clear()
        if not any(isinstance(p, AsyncBlocks) for p in plugins):  # the same call, in sync
            assert pm.hook.pre_tool_call(**TOOL_KWARGS) == answer
            assert seen == async_seen
    finally:
        undo()
    assert answer == [BLOCK]
    names = [f"p{i}-{type(p).__name__}" for i, p in enumerate(plugins)]
    assert async_seen == [
        ("", "before", "pre_tool_call", names, TOOL_KWARGS),
        ("", "after", "pre_tool_call", names, [BLOCK]),
    ]


@pytest.mark.parametrize("timeout", [0.0, 30.0], ids=["unbounded", "bounded"])
def test_the_facades_coroutine_methods_are_monitored(timeout: float) -> None:
    pm = manager(Blocks(), Watches(), timeout=timeout)
    seen: Seen = []
    undo = pm.add_hookcall_monitoring(*recorder(seen))
    try:
        decision = asyncio.run(Hooks(pm).apre_tool_call(tool_name="terminal", args={}))
        asyncio.run(Hooks(pm).apost_tool_call(tool_name="terminal", args={}, result="r"))
    finally:
        undo()
    assert decision.action == "block"
    assert [(where, name) for _, where, name, _, _ in seen] == [
        ("before", "pre_tool_call"),
        ("after", "pre_tool_call"),
        ("before", "post_tool_call"),
        ("after", "post_tool_call"),
    ]
    assert seen[1][4] == [BLOCK]  # pluggy's raw result, before the facade combines it
    assert seen[3][3] == ["p1-Watches"]


def test_monitors_nest_and_undo_as_pluggys_do_on_both_paths() -> None:
    pm = manager(Blocks())
    seen: Seen = []
    undo_first = pm.add_hookcall_monitoring(*recorder(seen, "first"))
    pm.add_hookcall_monitoring(*recorder(seen, "second"))
    pm.hook.pre_tool_call(**TOOL_KWARGS)
    sync_order = [(tag, where) for tag, where, *_ in seen]
    seen.clear()
    asyncio.run(acall_hook(pm, "pre_tool_call", dict(TOOL_KWARGS)))
    async_order = [(tag, where) for tag, where, *_ in seen]
    assert async_order == sync_order
    assert sync_order == [
        ("second", "before"),
        ("first", "before"),
        ("first", "after"),
        ("second", "after"),
    ]
    undo_first()  # as in pluggy, it also drops the monitor added after it
    seen.clear()
    pm.hook.pre_tool_call(**TOOL_KWARGS)
    asyncio.run(acall_hook(pm, "pre_tool_call", dict(TOOL_KWARGS)))
    assert seen == []


def test_tracing_writes_the_same_lines_for_a_sync_and_an_async_call() -> None:
    pm = manager(Blocks(), Quiet())
    lines: list[str] = []
    pm.trace.root.setwriter(lines.append)
    undo = pm.enable_tracing()
    try:
        pm.hook.pre_tool_call(**TOOL_KWARGS)
        sync_lines = list(lines)
        lines.clear()
        asyncio.run(acall_hook(pm, "pre_tool_call", dict(TOOL_KWARGS)))
    finally:
        undo()
    assert any("pre_tool_call" in line for line in sync_lines)
    assert lines == sync_lines


@pytest.mark.parametrize("timeout", [0.0, 30.0], ids=["unbounded", "bounded"])
def test_after_is_given_the_failure_a_strict_call_raises(timeout: float) -> None:
    pm = manager(Raises(), timeout=timeout, strict=True)
    seen: Seen = []
    undo = pm.add_hookcall_monitoring(*recorder(seen))
    try:
        with pytest.raises(ValueError, match="broken plugin"):
            asyncio.run(acall_hook(pm, "pre_tool_call", dict(TOOL_KWARGS)))
    finally:
        undo()
    assert [where for _, where, *_ in seen] == ["before", "after"]
    assert "broken plugin" in str(seen[1][4])


def test_a_monitor_that_raises_fails_the_async_call_as_it_fails_the_sync_one() -> None:
    pm = manager(Blocks())

    def before(*_: object) -> None:
        raise RuntimeError("monitor broke")

    undo = pm.add_hookcall_monitoring(before, lambda *_: None)
    try:
        with pytest.raises(RuntimeError, match="monitor broke"):
            pm.hook.pre_tool_call(**TOOL_KWARGS)
        with pytest.raises(RuntimeError, match="monitor broke"):
            asyncio.run(acall_hook(pm, "pre_tool_call", dict(TOOL_KWARGS)))
    finally:
        undo()


# -- what is built on the monitors: the test recorder, the dashboard's counters ------------------


class Defaulted:
    @hookimpl
    def pre_tool_call(self, tool_name: str, task_id: str = "unset") -> object:
        return {"action": "block", "message": task_id}


class AsyncObserver:
    @hookimpl
    async def post_tool_call(self, tool_name: str) -> str:
        await asyncio.sleep(0)
        return f"saw {tool_name}"


def test_the_recorder_keeps_each_plugins_result_of_an_async_call() -> None:
    pm = manager(Blocks(), AsyncObserver(), Watches())
    recorder = HookRecorder(pm)
    try:
        hooks = Hooks(pm, concurrent_observers=True)
        asyncio.run(hooks.apre_tool_call(tool_name="terminal", args={}))
        asyncio.run(hooks.apost_tool_call(tool_name="terminal", args={}, result="r"))
    finally:
        recorder.close()
    pre, post = recorder.calls("pre_tool_call"), recorder.calls("post_tool_call")
    assert [(r.plugin, r.value) for r in pre[0].impl_results] == [("p0-Blocks", BLOCK)]
    assert pre[0].result == [BLOCK]
    # Concurrent observers: each records its own result in the call of its task.
    assert sorted((r.plugin, r.value) for r in post[0].impl_results) == [
        ("p1-AsyncObserver", "saw terminal"),
        ("p2-Watches", None),
    ]


def test_the_recorder_passes_a_defaulted_argument_on_to_the_implementation() -> None:
    # pluggy passes an argument with a default by keyword; the recording wrapper must take it.
    pm = manager(Defaulted())
    recorder = HookRecorder(pm)
    try:
        kwargs = {**TOOL_KWARGS, "task_id": "given"}
        assert pm.hook.pre_tool_call(**kwargs) == [{"action": "block", "message": "given"}]
        answer = asyncio.run(acall_hook(pm, "pre_tool_call", kwargs))
    finally:
        recorder.close()
    assert answer == [{"action": "block", "message": "given"}]
    calls = recorder.calls("pre_tool_call")
    assert [call.error for call in calls] == [None, None]
    assert [len(call.impl_results) for call in calls] == [1, 1]


def test_the_dashboard_counters_time_interleaved_async_calls_each_on_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    readings = iter([0.0, 1.0, 2.0, 3.0])  # A starts, B starts, A ends, B ends
    monkeypatch.setattr(
        counters_module,
        "time",
        SimpleNamespace(perf_counter=lambda: next(readings), time=time.time),
    )
    steps = {name: asyncio.Event() for name in ("a in", "b in", "a go", "b go")}

    class Waits:
        @hookimpl
        async def post_tool_call(self) -> None:
            steps["a in"].set()
            await steps["a go"].wait()

        @hookimpl
        async def post_llm_call(self) -> None:
            steps["b in"].set()
            await steps["b go"].wait()

    pm = manager(Waits())
    counters = HookCounters().attach(pm)

    async def interleave() -> None:
        hooks = Hooks(pm)
        a = asyncio.create_task(hooks.apost_tool_call(tool_name="t", args={}, result="r"))
        await steps["a in"].wait()
        b = asyncio.create_task(
            hooks.apost_llm_call(user_message="u", assistant_response="r", conversation_history=[])
        )
        await steps["b in"].wait()
        steps["a go"].set()
        await a  # A ends while B is still running
        steps["b go"].set()
        await b

    asyncio.run(interleave())
    counters.detach()
    figures = counters.snapshot()
    assert figures["post_tool_call"]["seconds"] == 2.0
    assert figures["post_llm_call"]["seconds"] == 2.0

"""Async hook calls are told to pluggy's call monitors exactly as sync ones are.

pluggy's ``add_hookcall_monitoring`` (and ``enable_tracing``, built on it) wraps pluggy's loop,
which is synchronous. The async path (``acall_hook``, ``await Hooks(pm).a<name>(...)``) tells the
same monitors, in the same order, with the same arguments and outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pluggy
import pytest

from hermes_hooks import hookimpl
from hermes_hooks.calling import workers
from hermes_hooks.calling.facade import Hooks, acall_hook
from hermes_hooks.plugins.config import PluginsConfig
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

TOOL_KWARGS: dict[str, Any] = {
    "tool_name": "terminal",
    "args": {"x": 0},
    "task_id": "t",
    "session_id": "s",
    "tool_call_id": "c",
    "turn_id": "u",
    "api_request_id": "",
    "middleware_trace": [],
    "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
}
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

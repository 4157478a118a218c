"""Promises of the isolation, facade-and-gate and async pages, checked from the outside.

Each check builds a manager on real ``@hookimpl`` plugins (or a plugin folder whose
``register(ctx)`` calls ``ctx.register_hook``), calls it through ``Hooks(pm)`` sync and async,
bounded (``plugins.hook_callback_timeout`` 30) and inline (0), and pins what the pages promise
for hostile plugins: wrappers that yield twice, fail or tamper with the gate's results, nested
argument changes, oversized results, ``KeyboardInterrupt`` and other ``BaseException``s,
plugins registering or unregistering during a call or while another thread calls, context
variables per thread and task, and cancellation. No assertion is about time; every home is
under ``tmp_path``. Two promises that fail are written up in /work/notes/audit2-failures.md.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import sys
import threading
import types
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from homes import plugin_home  # noqa: F401  (the fixture)
from plugin_builders import PluginHome, status_of

from hermes_hooks import hookimpl
from hermes_hooks.calling.facade import Hooks, acall_hook
from hermes_hooks.errors import HookResultError
from hermes_hooks.plugins.config import PluginsConfig
from hermes_hooks.plugins.manager import PluginManager

NOWHERE = Path("/nonexistent/hermes-home")
MODES = pytest.mark.parametrize("timeout", [0.0, 30.0], ids=["inline", "bounded"])


def manager(timeout: float, *plugins: object, strict: bool = False, **config: Any) -> PluginManager:
    """A manager with *plugins* registered as ``p0``, ``p1``, ... and the settings given."""
    pm = PluginManager(NOWHERE, strict=strict)
    pm.plugins_config = PluginsConfig(hook_callback_timeout=timeout, **config)
    for index, plugin in enumerate(plugins):
        pm.register(plugin, name=f"p{index}")
    return pm


def transform(hooks: Hooks, *, sync: bool) -> str:
    """``transform_tool_result`` of ``"raw"`` through the facade, sync or async."""
    kwargs: dict[str, Any] = {"tool_name": "t", "args": {}, "result": "raw"}
    if sync:
        return hooks.transform_tool_result(**kwargs)
    return asyncio.run(hooks.atransform_tool_result(**kwargs))


class Upper:
    @hookimpl
    def transform_tool_result(self, result: str) -> str:
        return result.upper()


class YieldsTwice:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        result = yield
        yield
        return result


class Huge:
    @hookimpl
    def transform_tool_result(self) -> str:
        return "x" * 5000


class Interrupts:
    @hookimpl
    def transform_tool_result(self) -> str:
        raise KeyboardInterrupt


class NestedTamper:
    @hookimpl
    def pre_tool_call(self, args: dict[str, Any]) -> None:
        args["inner"]["path"] = "/etc/passwd"
        args["list"].append("extra")


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_a_wrapper_yielding_twice_is_contained(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Upper(), YieldsTwice())
    assert transform(Hooks(pm), sync=sync) == "RAW"


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_a_wrapper_yielding_twice_raises_in_strict_mode(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Upper(), YieldsTwice(), strict=True)
    with pytest.raises(RuntimeError, match="second yield"):
        transform(Hooks(pm), sync=sync)


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_a_result_past_the_size_bound_counts_as_none(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Huge(), max_hook_result_bytes=1000)
    assert transform(Hooks(pm), sync=sync) == "raw"


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_keyboard_interrupt_reaches_the_host(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Interrupts())
    with pytest.raises(KeyboardInterrupt):
        transform(Hooks(pm), sync=sync)


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_the_gate_restores_nested_arguments(timeout: float, sync: bool) -> None:
    pm = manager(timeout, NestedTamper())
    args: dict[str, Any] = {"inner": {"path": "/tmp/a"}, "list": ["a"]}
    hooks = Hooks(pm)
    if sync:
        decision = hooks.pre_tool_call(tool_name="write_file", args=args)
    else:
        decision = asyncio.run(hooks.apre_tool_call(tool_name="write_file", args=args))
    assert args == {"inner": {"path": "/tmp/a"}, "list": ["a"]}
    assert dict(decision.args) == {"inner": {"path": "/tmp/a"}, "list": ["a"]}
    assert decision.action == "allow"
    assert [t.plugin for t in decision.tampering] == ["p0"]


@MODES
def test_a_plugin_unregistering_itself_mid_call_does_not_break_it(timeout: float) -> None:
    pm = manager(timeout, Upper())

    class Leaves:
        @hookimpl
        def transform_tool_result(self) -> None:
            pm.unregister(self)

    pm.register(Leaves(), name="leaves")
    hooks = Hooks(pm)
    assert transform(hooks, sync=True) == "RAW"
    assert pm.get_plugin("leaves") is None
    assert transform(hooks, sync=True) == "RAW"


@MODES
def test_a_plugin_registered_during_a_call_answers_the_next_one(timeout: float) -> None:
    pm = manager(timeout)

    class Adds:
        @hookimpl
        def transform_tool_result(self) -> None:
            if pm.get_plugin("upper") is None:
                pm.register(Upper(), name="upper")

    pm.register(Adds(), name="adds")
    hooks = Hooks(pm)
    assert transform(hooks, sync=True) in {"raw", "RAW"}
    assert transform(hooks, sync=True) == "RAW"


class Boom(BaseException):
    """Not an ``Exception``: what a plugin raising something unusual raises."""


class RaisesBase:
    @hookimpl
    def transform_tool_result(self) -> str:
        raise Boom("unusual")


class Raises:
    @hookimpl
    def transform_tool_result(self) -> str:
        raise ValueError("plain failure")


class BlocksByRaising:
    @hookimpl
    def pre_tool_call(self) -> None:
        raise ValueError("gate failure")


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_a_raising_plugin_counts_as_none(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Upper(), Raises())
    assert transform(Hooks(pm), sync=sync) == "RAW"


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_strict_mode_raises_with_the_plugins_note(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Raises(), strict=True)
    with pytest.raises(ValueError, match="plain failure") as caught:
        transform(Hooks(pm), sync=sync)
    notes = getattr(caught.value, "__notes__", [])
    assert any("'p0'" in n and "'transform_tool_result'" in n for n in notes), notes


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_a_raising_gate_plugin_blocks(timeout: float, sync: bool) -> None:
    pm = manager(timeout, BlocksByRaising())
    hooks = Hooks(pm)
    if sync:
        decision = hooks.pre_tool_call(tool_name="terminal", args={"c": "ls"})
    else:
        decision = asyncio.run(hooks.apre_tool_call(tool_name="terminal", args={"c": "ls"}))
    assert decision.action == "block"


class WrapperRaisesAfter:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        yield
        raise ValueError("teardown failure")


class WrapperNeverYields:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        if self:
            raise ValueError("before the yield")
        yield


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("wrapper", [WrapperRaisesAfter, WrapperNeverYields])
def test_a_failing_wrapper_lets_the_inner_result_through(
    timeout: float, sync: bool, wrapper: type
) -> None:
    pm = manager(timeout, Upper(), wrapper())
    assert transform(Hooks(pm), sync=sync) == "RAW"


VAR: contextvars.ContextVar[str] = contextvars.ContextVar("audit2_var", default="unset")


class Remembers:
    """Sets a variable in one call, reads and resets it in the next (a tracing span's life)."""

    def __init__(self) -> None:
        self.token: contextvars.Token[str] | None = None
        self.seen: list[str] = []

    @hookimpl
    def transform_tool_result(self, result: str) -> None:
        if self.token is None:
            self.token = VAR.set(result)
        else:
            self.seen.append(VAR.get())
            VAR.reset(self.token)
            self.token = None


@MODES
def test_a_variable_set_in_one_hook_is_there_in_the_next_sync(timeout: float) -> None:
    plugin = Remembers()
    hooks = Hooks(manager(timeout, plugin))
    hooks.transform_tool_result(tool_name="t", args={}, result="first")
    hooks.transform_tool_result(tool_name="t", args={}, result="second")
    assert plugin.seen == ["first"]


@MODES
def test_a_variable_set_in_one_hook_is_there_in_the_next_async(timeout: float) -> None:
    plugin = Remembers()
    hooks = Hooks(manager(timeout, plugin))

    async def turn() -> None:
        await hooks.atransform_tool_result(tool_name="t", args={}, result="first")
        await hooks.atransform_tool_result(tool_name="t", args={}, result="second")

    asyncio.run(turn())
    assert plugin.seen == ["first"]


class PerTask:
    """Records what the variable holds at each call, then sets it to this call's result."""

    def __init__(self) -> None:
        self.seen: dict[str, list[str]] = {}

    @hookimpl
    def transform_tool_result(self, result: str, session_id: str) -> None:
        self.seen.setdefault(session_id, []).append(VAR.get())
        VAR.set(result)


@MODES
def test_two_tasks_never_see_each_others_plugin_variables(timeout: float) -> None:
    plugin = PerTask()
    hooks = Hooks(manager(timeout, plugin))

    async def session(name: str) -> None:
        for step in range(3):
            await hooks.atransform_tool_result(
                tool_name="t", args={}, result=f"{name}{step}", session_id=name
            )
            await asyncio.sleep(0)

    async def both() -> None:
        await asyncio.gather(session("a"), session("b"))

    asyncio.run(both())
    assert plugin.seen == {"a": ["unset", "a0", "a1"], "b": ["unset", "b0", "b1"]}


@MODES
def test_the_hosts_change_overrides_what_a_plugin_set(timeout: float) -> None:
    plugin = PerTask()
    hooks = Hooks(manager(timeout, plugin))

    def run() -> None:
        hooks.transform_tool_result(tool_name="t", args={}, result="p1", session_id="s")
        VAR.set("host")
        hooks.transform_tool_result(tool_name="t", args={}, result="p2", session_id="s")

    contextvars.copy_context().run(run)
    assert plugin.seen == {"s": ["unset", "host"]}


class Sleeper:
    def __init__(self) -> None:
        self.cancelled = asyncio.Event()

    @hookimpl
    async def transform_tool_result(self) -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


@MODES
def test_cancelling_an_async_call_cancels_the_plugin_and_the_caller(timeout: float) -> None:
    plugin = Sleeper()
    hooks = Hooks(manager(timeout, plugin))

    async def main() -> None:
        call = asyncio.ensure_future(
            hooks.atransform_tool_result(tool_name="t", args={}, result="raw")
        )
        await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(plugin.cancelled.wait(), 30)

    asyncio.run(main())


@MODES
@pytest.mark.parametrize("concurrent", [False, True], ids=["serial", "concurrent"])
def test_observers_are_the_same_sync_and_async(timeout: float, concurrent: bool) -> None:
    seen: list[str] = []

    class Observer:
        @hookimpl
        def on_session_start(self, session_id: str) -> None:
            seen.append(session_id)

    class Breaks:
        @hookimpl
        def on_session_start(self) -> None:
            raise ValueError("observer failure")

    pm = manager(timeout, Observer(), Breaks(), Observer())
    hooks = Hooks(pm, concurrent_observers=concurrent)
    hooks.on_session_start(session_id="sync")
    asyncio.run(hooks.aon_session_start(session_id="async"))
    assert sorted(seen) == ["async", "async", "sync", "sync"]


@MODES
def test_concurrent_observers_run_at_the_same_time(timeout: float) -> None:
    arrived: list[asyncio.Event] = []
    met: list[int] = []

    class Meets:
        def __init__(self, index: int) -> None:
            self.index = index

        @hookimpl
        async def post_tool_call(self) -> None:
            arrived[self.index].set()
            await asyncio.wait_for(arrived[1 - self.index].wait(), 30)
            met.append(self.index)

    pm = manager(timeout, Meets(0), Meets(1))
    hooks = Hooks(pm, concurrent_observers=True)

    async def main() -> None:
        arrived.extend([asyncio.Event(), asyncio.Event()])
        await hooks.apost_tool_call(tool_name="t", args={}, result="r")

    asyncio.run(main())
    assert sorted(met) == [0, 1]


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_a_base_exception_other_than_an_interrupt_is_contained(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Upper(), RaisesBase())
    assert transform(Hooks(pm), sync=sync) == "RAW"


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_strict_mode_rejects_an_oversized_result(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Huge(), strict=True, max_hook_result_bytes=1000)
    with pytest.raises(HookResultError):
        transform(Hooks(pm), sync=sync)


class ForcesHuge:
    @hookimpl(hookwrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, None]:
        outcome = yield
        outcome.force_result("y" * 5000)


class ReturnsHuge:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        yield
        return "y" * 5000


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("wrapper", [ForcesHuge, ReturnsHuge])
def test_a_wrapper_adding_an_oversized_result_is_undone(
    timeout: float, sync: bool, wrapper: type
) -> None:
    pm = manager(timeout, Upper(), wrapper(), max_hook_result_bytes=1000)
    assert transform(Hooks(pm), sync=sync) == "RAW"


class AsyncUpper:
    @hookimpl
    async def transform_tool_result(self, result: str) -> str:
        await asyncio.sleep(0)
        return result.upper()


@MODES
def test_an_awaitable_returned_to_a_sync_caller_is_awaited(timeout: float) -> None:
    hooks = Hooks(manager(timeout, AsyncUpper()))
    assert transform(hooks, sync=True) == "RAW"

    async def from_a_loop() -> str:
        return hooks.transform_tool_result(tool_name="t", args={}, result="raw")

    assert asyncio.run(from_a_loop()) == "RAW"


class TampersInWrapper:
    @hookimpl(wrapper=True)
    def pre_tool_call(self, args: dict[str, Any]) -> Generator[None, Any, Any]:
        args["inner"]["path"] = "/etc/shadow"
        result = yield
        args["inner"]["path"] = "/etc/passwd"
        return result


class Modifies:
    @hookimpl
    def pre_tool_call(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"action": "modify", "args": {**args, "seen": args["inner"]["path"]}}


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_the_next_implementation_sees_what_the_host_passed(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Modifies(), TampersInWrapper())
    args: dict[str, Any] = {"inner": {"path": "/tmp/a"}}
    hooks = Hooks(pm)
    if sync:
        decision = hooks.pre_tool_call(tool_name="write_file", args=args)
    else:
        decision = asyncio.run(hooks.apre_tool_call(tool_name="write_file", args=args))
    assert args == {"inner": {"path": "/tmp/a"}}
    assert decision.args["seen"] == "/tmp/a"
    assert decision.args["inner"] == {"path": "/tmp/a"}
    assert {t.plugin for t in decision.tampering} == {"p1"}


class Twice:
    """Two implementations of one hook (``specname``): a call must see both or neither."""

    def __init__(self, seen: list[tuple[str, str]]) -> None:
        self.seen = seen

    @hookimpl(specname="on_session_start")
    def first(self, session_id: str) -> None:
        self.seen.append((session_id, "first"))

    @hookimpl(specname="on_session_start")
    def second(self, session_id: str) -> None:
        self.seen.append((session_id, "second"))


@MODES
def test_a_call_meanwhile_runs_none_or_all_of_a_plugins_implementations(timeout: float) -> None:
    seen: list[tuple[str, str]] = []
    pm = manager(timeout)
    hooks = Hooks(pm)
    stop, called = threading.Event(), threading.Event()
    calls = [0]

    def caller() -> None:
        while not stop.is_set():
            calls[0] += 1
            hooks.on_session_start(session_id=str(calls[0]))
            called.set()

    thread = threading.Thread(target=caller)
    thread.start()
    try:
        for _ in range(300):
            plugin = Twice(seen)
            called.clear()
            pm.register(plugin, name="twice")
            called.wait(10)  # calls start while it registers, runs and unregisters
            pm.unregister(plugin)
    finally:
        stop.set()
        thread.join(60)
    assert not thread.is_alive()
    counts = collections.Counter(session for session, _ in seen)
    assert counts
    assert set(counts.values()) <= {2}, counts.most_common(3)


class BlocksAlways:
    @hookimpl
    def pre_tool_call(self) -> dict[str, Any]:
        return {"action": "block", "message": "no"}


class DropsResults:
    @hookimpl(hookwrapper=True)
    def pre_tool_call(self) -> Generator[None, Any, None]:
        outcome = yield
        outcome.force_result([])


class EditsInPlace:
    @hookimpl(wrapper=True)
    def pre_tool_call(self) -> Generator[None, Any, Any]:
        results = yield
        for item in results:
            if isinstance(item, dict):
                item["action"] = "allow"
        return results


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("wrapper", [DropsResults, EditsInPlace])
def test_a_wrapper_cannot_drop_or_edit_a_block(timeout: float, sync: bool, wrapper: type) -> None:
    pm = manager(timeout, BlocksAlways(), wrapper())
    hooks = Hooks(pm)
    if sync:
        decision = hooks.pre_tool_call(tool_name="terminal", args={"c": "rm"})
    else:
        decision = asyncio.run(hooks.apre_tool_call(tool_name="terminal", args={"c": "rm"}))
    assert decision.action == "block"


class SetsInAsync:
    @hookimpl
    async def transform_tool_result(self, result: str) -> None:
        VAR.set(result)


class Reads:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def transform_tool_result(self) -> None:
        self.seen.append(VAR.get())


@MODES
def test_what_an_async_implementation_sets_in_a_sync_call_is_not_kept(timeout: float) -> None:
    reader = Reads()
    hooks = Hooks(manager(timeout, reader, SetsInAsync()))

    def run() -> None:
        transform(hooks, sync=True)
        transform(hooks, sync=True)

    # A fresh thread: a bounded call's plugin side lives as long as its host thread.
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert reader.seen == ["unset", "unset"]


class ConcurrentSetter:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    async def post_tool_call(self, result: str) -> None:
        self.seen.append(VAR.get())
        VAR.set(result)


@MODES
def test_concurrent_observers_keep_nothing_they_set(timeout: float) -> None:
    plugin = ConcurrentSetter()
    hooks = Hooks(manager(timeout, plugin, ConcurrentSetter()), concurrent_observers=True)

    async def main() -> None:
        await hooks.apost_tool_call(tool_name="t", args={}, result="one")
        await hooks.apost_tool_call(tool_name="t", args={}, result="two")

    asyncio.run(main())
    assert plugin.seen == ["unset", "unset"]


class Blocks:
    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.left = threading.Event()

    @hookimpl
    def transform_tool_result(self) -> None:
        self.entered.set()
        self.release.wait(30)
        self.left.set()


def test_cancelling_a_bounded_async_call_stops_the_batch_after_the_step() -> None:
    later = Reads()
    blocks = Blocks()
    pm = manager(30.0, later, blocks)
    hooks = Hooks(pm)

    async def main() -> None:
        call = asyncio.ensure_future(
            hooks.atransform_tool_result(tool_name="t", args={}, result="raw")
        )
        while not blocks.entered.is_set():
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    try:
        asyncio.run(main())
    finally:
        blocks.release.set()
    # The worker stops after the step under way: the implementation after it never runs
    # (given a moment after that step returns, in which it would have).
    assert blocks.left.wait(60)
    pause = threading.Event()
    pause.wait(0.5)
    assert later.seen == []


TWIN_CODE = """
import audit2_shared


def register(ctx):
    def first(session_id, **_):
        audit2_shared.seen.append((session_id, "first"))

    def second(session_id, **_):
        audit2_shared.seen.append((session_id, "second"))

    ctx.register_hook("on_session_start", first)
    ctx.register_hook("on_session_start", second)
"""


@pytest.mark.parametrize("timeout", [None, 30.0], ids=["default", "bounded"])
def test_a_call_while_a_folder_plugin_loads_and_unloads_sees_both_callbacks_or_neither(
    plugin_home: PluginHome, monkeypatch: pytest.MonkeyPatch, timeout: float | None
) -> None:
    shared = types.ModuleType("audit2_shared")
    seen: list[tuple[str, str]] = []
    shared.seen = seen  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "audit2_shared", shared)
    plugin_home.add_plugin("twin", TWIN_CODE)
    pm = plugin_home.load_bounded(timeout)
    assert status_of(pm, "twin")[0] == "enabled"
    hooks = Hooks(pm)
    stop = threading.Event()
    calls = [0]

    def caller() -> None:
        while not stop.is_set():
            calls[0] += 1
            hooks.on_session_start(session_id=str(calls[0]))

    thread = threading.Thread(target=caller)
    thread.start()
    try:
        for _ in range(20):
            assert pm.unload_plugin("twin")
            pm.discover_and_load(force=True)  # loads it again
            pm.discover_and_load(force=True)  # reloads it while loaded
    finally:
        stop.set()
        thread.join(60)
    assert not thread.is_alive()
    assert status_of(pm, "twin")[0] == "enabled"
    counts = collections.Counter(session for session, _ in seen)
    assert counts
    assert set(counts.values()) <= {2}, counts.most_common(3)


class OldStyleYieldsTwice:
    @hookimpl(hookwrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, None]:
        yield
        yield


class RaisesBeforeYield:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        if self:
            raise ValueError("setup failure")
        return (yield)


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_an_old_style_wrapper_yielding_twice_is_contained(timeout: float, sync: bool) -> None:
    pm = manager(timeout, Upper(), OldStyleYieldsTwice())
    assert transform(Hooks(pm), sync=sync) == "RAW"


@MODES
@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
def test_strict_mode_raises_a_wrappers_setup_failure_with_its_note(
    timeout: float, sync: bool
) -> None:
    pm = manager(timeout, Upper(), RaisesBeforeYield(), strict=True)
    with pytest.raises(ValueError, match="setup failure") as caught:
        transform(Hooks(pm), sync=sync)
    assert any("'p1'" in note for note in getattr(caught.value, "__notes__", []))


@MODES
@pytest.mark.parametrize("hook", ["transform_tool_result", "pre_tool_call"])
def test_acall_hook_gives_the_sync_calls_raw_answer(timeout: float, hook: str) -> None:
    pm = manager(timeout, Upper(), Raises(), BlocksAlways(), BlocksByRaising())
    kwargs: dict[str, Any] = {"tool_name": "t", "args": {"a": 1}, "result": "raw"}
    if hook == "pre_tool_call":
        del kwargs["result"]
    raw = getattr(pm.hook, hook)(**kwargs)
    assert asyncio.run(acall_hook(pm, hook, kwargs)) == raw

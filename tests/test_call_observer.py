"""``pm.add_call_observer(fn)``: each implementation call told with its own time and outcome.

The dashboard's counters (``hermes_hooks/dashboard/counters.py``) attach one; these tests hold
the contract it relies on, on every path a call takes: inline (unbounded), on a worker (bounded),
past the bound, and awaited by the facade's coroutine methods.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_hooks import hookimpl
from hermes_hooks.calling import workers
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.plugins.manager import PluginManager

Seen = list[tuple[str, str, float, str]]


class Fast:
    @hookimpl
    def transform_terminal_output(self, output: str) -> str:
        return output.upper()


class Slow:
    @hookimpl
    def transform_terminal_output(self, output: str) -> None:
        time.sleep(0.05)


class Broken:
    @hookimpl
    def transform_terminal_output(self, output: str) -> str:
        raise RuntimeError("broken plugin")


def output_kwargs() -> dict[str, Any]:
    return {"command": "ls", "output": "a", "returncode": 0}


@pytest.fixture
def pm(tmp_path: Path) -> Iterator[PluginManager]:
    manager = PluginManager(tmp_path / "home")
    yield manager
    manager.callback_bound.seconds = 0.0


def observe(pm: PluginManager) -> tuple[Seen, Any]:
    seen: Seen = []
    undo = pm.add_call_observer(lambda *event: seen.append(event))
    return seen, undo


@pytest.mark.parametrize("bound", [0.0, 5.0], ids=["inline", "on-a-worker"])
def test_each_implementation_call_is_told_once_with_its_own_time(
    pm: PluginManager, bound: float
) -> None:
    pm.register(Slow(), "slow")
    pm.register(Broken(), "broken")
    pm.register(Fast(), "fast")
    pm.callback_bound.seconds = bound
    seen, _ = observe(pm)

    # pluggy runs the last registered first; the broken one fails open, the call goes on.
    assert pm.hook.transform_terminal_output(**output_kwargs()) == "A"

    assert [(hook, plugin, outcome) for hook, plugin, _, outcome in seen] == [
        ("transform_terminal_output", "fast", "ok")
    ]
    seen.clear()
    pm.unregister(name="fast")
    assert Hooks(pm).transform_terminal_output(**output_kwargs()) == "a"
    assert [(plugin, outcome) for _, plugin, _, outcome in seen] == [
        ("broken", "error"),
        ("slow", "ok"),
    ]
    assert seen[1][2] >= 0.04  # the slow one's own sleep, not the call's


def test_a_call_past_the_bound_is_told_as_a_timeout(pm: PluginManager) -> None:
    release = threading.Event()

    class Hung:
        @hookimpl
        def transform_terminal_output(self, output: str) -> None:
            release.wait(10)

    pm.register(Hung(), "hung")
    pm.register(Fast(), "fast")
    pm.callback_bound.seconds = 0.2
    seen, _ = observe(pm)
    try:
        assert pm.hook.transform_terminal_output(**output_kwargs()) == "A"
        pm.unregister(name="fast")
        assert pm.hook.transform_terminal_output(**output_kwargs()) is None
    finally:
        release.set()
    assert [(plugin, outcome) for _, plugin, _, outcome in seen] == [
        ("fast", "ok"),
        ("hung", "timeout"),
    ]
    assert seen[1][2] == pytest.approx(0.2)
    deadline = time.monotonic() + 10
    while workers.live_workers() and time.monotonic() < deadline:
        workers.shutdown_idle()
        time.sleep(0.01)


def test_the_coroutine_methods_tell_the_observers_too(pm: PluginManager) -> None:
    class Awaited:
        @hookimpl
        async def transform_terminal_output(self, output: str) -> None:
            await asyncio.sleep(0.05)

    pm.register(Awaited(), "awaited")
    pm.register(Broken(), "broken")
    seen, _ = observe(pm)
    result = asyncio.run(Hooks(pm).atransform_terminal_output(**output_kwargs()))
    assert result == "a"
    assert [(plugin, outcome) for _, plugin, _, outcome in seen] == [
        ("broken", "error"),
        ("awaited", "ok"),
    ]
    assert seen[1][2] >= 0.04


def test_register_hook_callbacks_are_observed_by_their_plugin(pm: PluginManager) -> None:
    class Plugin:
        @hookimpl
        def on_session_start(self, session_id: str) -> None:
            pass

    pm.register(Plugin(), "host-object")
    seen, _ = observe(pm)
    Hooks(pm).on_session_start(session_id="s1")
    assert [(hook, plugin, outcome) for hook, plugin, _, outcome in seen] == [
        ("on_session_start", "host-object", "ok")
    ]


def test_an_observer_that_raises_is_logged_and_the_call_is_unchanged(
    pm: PluginManager, caplog: pytest.LogCaptureFixture
) -> None:
    def hostile(*event: object) -> None:
        raise SystemExit("observer")

    pm.register(Fast(), "fast")
    pm.add_call_observer(hostile)
    seen, _ = observe(pm)
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        assert pm.hook.transform_terminal_output(**output_kwargs()) == "A"
    assert [plugin for _, plugin, _, _ in seen] == ["fast"]  # the next observer is still told
    assert "call observer" in caplog.text
    assert pm.get_failures("fast").count == 0  # nothing is blamed on the plugin


def test_undo_removes_the_observer_and_only_it(pm: PluginManager) -> None:
    pm.register(Fast(), "fast")
    first, undo_first = observe(pm)
    second, _ = observe(pm)
    undo_first()
    undo_first()  # twice is harmless
    pm.hook.transform_terminal_output(**output_kwargs())
    assert first == []
    assert [plugin for _, plugin, _, _ in second] == ["fast"]
    assert len(pm.call_observers) == 1


def test_the_dashboards_counters_get_each_implementations_own_time(pm: PluginManager) -> None:
    from hermes_hooks.dashboard.counters import HookCounters

    pm.register(Slow(), "slow")
    pm.register(Broken(), "broken")
    counters = HookCounters().attach(pm)
    pm.hook.transform_terminal_output(**output_kwargs())
    impls = counters.snapshot()["transform_terminal_output"]["impls"]
    assert impls["slow"]["timed"]
    assert impls["slow"]["seconds"] >= 0.04
    assert (impls["broken"]["timed"], impls["broken"]["errors"]) == (True, 1)
    counters.detach()
    assert pm.call_observers == []

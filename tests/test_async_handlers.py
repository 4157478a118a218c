"""Async tool handlers and async slash commands, called from sync code inside and outside a loop.

With no running loop the handler runs to completion on a fresh loop; inside the host's running
loop it runs on a helper loop, and the host waits at most a bound: a handler that needs the
host's (blocked) loop gets an error at the bound instead of a deadlock.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from host_helpers import ScriptedModel, plugin_module
from plugin_builders import isolated_home, user_plugin as write_plugin, wait_for, write_config

from hermes_hooks.calling import aio as _aio, workers as _workers
from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.manager import PluginManager

HANDLERS = """
import asyncio
import threading

seen = []
host_loop = []


async def echo(args, **kwargs):
    await asyncio.sleep(0)
    seen.append(threading.current_thread().name)
    return "async " + args["text"]


async def needs_the_host_loop(args, **kwargs):
    # Awaits work scheduled on the host's loop, which the host is blocking: a deadlock unbounded.
    future = asyncio.run_coroutine_threadsafe(asyncio.sleep(0, "late"), host_loop[0])
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        seen.append("cancelled")
        raise


async def later(raw_args):
    await asyncio.sleep(0)
    seen.append(threading.current_thread().name)
    return f"async says {raw_args}"


def register(ctx):
    ctx.register_tool("echo_async", "demo", {}, echo, is_async=True)
    ctx.register_tool("needs_loop", "demo", {}, needs_the_host_loop, is_async=True)
    ctx.register_command("later", later)
"""


@pytest.fixture
def pm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginManager]:
    home = isolated_home(tmp_path, monkeypatch)
    write_plugin(home, "handlers", HANDLERS)
    write_config(home, ["handlers"])
    manager = create_manager(home)
    yield manager
    manager.unload_all()
    deadline = time.monotonic() + 10
    while _workers.live_workers() and time.monotonic() < deadline:
        _workers.shutdown_idle()
        time.sleep(0.01)


def test_an_async_tool_outside_and_inside_a_running_loop(pm: PluginManager) -> None:
    seen = plugin_module(pm, "handlers").seen
    assert pm.tools.dispatch("echo_async", {"text": "sync"}) == "async sync"
    assert seen == [threading.current_thread().name]  # run to completion right here

    async def host() -> str:
        return pm.tools.dispatch("echo_async", {"text": "in loop"})

    assert asyncio.run(host()) == "async in loop"
    assert seen[-1] == "hermes-hooks-worker"  # on a helper loop, never the host's own


def test_an_async_command_outside_and_inside_a_running_loop(pm: PluginManager) -> None:
    session = Session(pm, ScriptedModel())
    assert session.send("/later hi")[0].text == "async says hi"

    async def host() -> str:
        reply = session.send("/later there")[0]
        return str(reply.text)

    assert asyncio.run(host()) == "async says there"
    assert plugin_module(pm, "handlers").seen[-1] == "hermes-hooks-worker"


def test_a_handler_that_needs_the_blocked_host_loop_fails_at_the_bound(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_aio, "DEFAULT_HELPER_TIMEOUT", 0.2)
    plugin = plugin_module(pm, "handlers")

    async def host() -> tuple[str, str]:
        plugin.host_loop[:] = [asyncio.get_running_loop()]
        blocked = pm.tools.dispatch("needs_loop", {})
        # The loop runs again: the helper's work can proceed, and later calls still work.
        await asyncio.sleep(0.05)
        return blocked, pm.tools.dispatch("echo_async", {"text": "after"})

    blocked, after = asyncio.run(host())
    assert "did not finish within 0.2 s" in json.loads(blocked)["error"]
    assert after == "async after"
    wait_for(lambda: "cancelled" in plugin.seen)


def test_hung_helper_loops_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_aio, "MAX_HUNG_HELPERS", 2)
    release = threading.Event()

    async def blocking() -> str:
        release.wait(30)  # blocks its helper loop: the cancellation cannot reach it
        return "done"

    async def host() -> list[str]:
        outcomes = []
        for _ in range(6):
            try:
                outcomes.append(_aio.resolve(blocking(), timeout=0.1))
            except _aio.ResolveTimeoutError as exc:
                outcomes.append(str(exc))
        return outcomes

    before = threading.active_count()
    try:
        outcomes = asyncio.run(host())
        assert threading.active_count() <= before + 2
    finally:
        release.set()
    assert outcomes[:2] == ["the awaitable did not finish within 0.1 s"] * 2
    assert all(o.startswith("refused: 2 helper loops") for o in outcomes[2:])
    wait_for(lambda: _aio._hung_helpers == 0)

    async def recovered() -> Any:
        return _aio.resolve(asyncio.sleep(0, "fine"), timeout=5)

    assert asyncio.run(recovered()) == "fine"

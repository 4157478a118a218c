"""``ctx.platform_actions`` under the gateway runner: a plugin's reaction and thread title
reach the platform's adapter (a Hermes-shaped platform plugin against a local chat server),
from the loop (awaited) and from another thread (waited for); without a runner, a method or
a connection the verb needs, the answer says which, in Hermes' codes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from gateway_support import LINE_PLUGIN, LineServer, running
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.compat.gateway_config import GatewayConfig, Platform, PlatformConfig
from hermes_hooks.host import create_manager
from hermes_hooks.host.gateway_runner import GatewayRunner
from hermes_hooks.plugins.newer_ctx import extras

# The line chat of gateway_support, whose adapter can also react and rename threads.
REACTING_PLATFORM = (
    LINE_PLUGIN
    + """

class ReactingAdapter(LineAdapter):
    async def add_reaction(self, chat_id, message_id, emoji):
        self._writer.write((json.dumps({"chat": chat_id, "reaction": emoji,
                                        "message": message_id}) + "\\n").encode())
        await self._writer.drain()
        return True


def register(ctx):
    ctx.register_platform("line_chat", "Line chat", lambda cfg: ReactingAdapter(cfg),
                          lambda: True)
"""
)

# Reacts to every message it sees before dispatch, from the gateway's loop.
ACTOR = """
import asyncio
from hermes_hooks import hookimpl

RESULTS = []
CTX = []


def register(ctx):
    CTX.append(ctx)

    async def pre_gateway_dispatch(event, gateway, session_store):
        answer = await ctx.platform_actions.add_reaction(
            "line_chat", event.source.chat_id, event.message_id or "?", "eyes")
        RESULTS.append(dict(answer))
        return None

    ctx.register_hook("pre_gateway_dispatch", pre_gateway_dispatch)
"""


def _config(port: int) -> GatewayConfig:
    platforms = {Platform("line_chat"): PlatformConfig(enabled=True, extra={"port": port})}
    return GatewayConfig(platforms=platforms, connect_timeout=2.0, drain_timeout=5.0)


def test_actions_reach_the_adapter_under_the_gateway_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "line_chat", REACTING_PLATFORM, manifest={"kind": "platform"})
    user_plugin(home, "actor", ACTOR, manifest={"capabilities": ["gateway.platform_actions"]})
    write_config(
        home,
        ["line_chat", "actor"],
        entries={"actor": {"granted_capabilities": ["gateway.platform_actions"]}},
    )
    pm = create_manager(home)
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "true")
    module: Any = pm.get_plugin_module("actor")
    ctx = module.CTX[0]
    assert ctx.platform_actions.add_reaction("line_chat", "c", "m", "x")["error"] == (
        "gateway_unavailable"  # no runner yet
    )

    async def scenario() -> tuple[Any, Any, list[dict[str, Any]]]:
        async with LineServer() as server:
            with pm.activate():
                runner = GatewayRunner(pm, config=_config(server.port))
            async with running(runner):
                await server.connected()
                server.say("ann", "ann", "hello", id="m7")
                seen = await server.replies(2)  # the reaction, then the answer
                # From a thread (a plugin's worker): the call waits for the adapter.
                renamed = await asyncio.to_thread(
                    ctx.platform_actions.set_thread_title, "line_chat", "ann", "t1", "New"
                )
                elsewhere = await asyncio.to_thread(
                    ctx.platform_actions.add_reaction, "irc", "ann", "m7", "x"
                )
        return renamed, elsewhere, seen

    renamed, elsewhere, seen = asyncio.run(scenario())
    assert {"chat": "ann", "reaction": "eyes", "message": "m7"} in seen
    assert module.RESULTS == [{"ok": True, "action": "add_reaction"}]
    assert renamed["ok"] is False
    assert renamed["error"] == "unsupported_platform_action"  # the adapter cannot rename
    assert elsewhere["error"] == "unknown_platform"
    assert extras(pm).platform_action_sink is None  # gone with the runner


def test_an_undeclared_or_ungranted_capability_never_reaches_the_sink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "actor", ACTOR, manifest={"capabilities": ["gateway.platform_actions"]})
    write_config(home, ["actor"])
    pm = create_manager(home)
    calls: list[Any] = []

    def sink(*arguments: Any) -> dict[str, Any]:
        calls.append(arguments)
        return {}

    extras(pm).platform_action_sink = sink
    ctx: Any = pm.get_plugin_module("actor").CTX[0]  # type: ignore[union-attr]
    refused = ctx.platform_actions.add_reaction("line_chat", "c", "m", "x")
    assert refused["error"] == "capability_not_granted"
    assert calls == []
    empty = ctx.platform_actions.add_reaction("line_chat", "", "m", "x")
    assert empty["error"] in ("capability_not_granted", "invalid_argument")

"""``hermes gateway run``'s runner with Hermes-shaped platform plugins against live servers."""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from gateway_support import (
    HA_PLUGIN,
    IRC_PLUGIN,
    LINE_PLUGIN,
    NTFY_PLUGIN,
    POLICY_PLUGIN,
    HomeAssistantServer,
    IrcClient,
    LineServer,
    NtfyServer,
    line_config,
    miniircd,
    running,
    running_gateway,
)
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.compat.gateway_config import GatewayConfig, Platform, PlatformConfig
from hermes_hooks.compat.gateway_pairing import PairingStore
from hermes_hooks.host import create_manager
from hermes_hooks.host.gateway_runner import GatewayRunner, backoff_delay
from hermes_hooks.plugins.manager import PluginManager


def gateway_home(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    platforms: Mapping[str, str],
    plugins: Mapping[str, str] | None = None,
    *,
    bundled: bool = False,
) -> Path:
    """An isolated home with these platform plugins and other plugins (key: code), enabled."""
    home = isolated_home(tmp_path, monkeypatch, bundled=bundled)
    for key, code in platforms.items():
        user_plugin(home, key, code, manifest={"kind": "platform"})
    for key, code in (plugins or {}).items():
        user_plugin(home, key, code)
    write_config(home, [*platforms, *(plugins or {})])
    return home


def gateway_manager(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    platforms: Mapping[str, str],
    plugins: Mapping[str, str] | None = None,
    *,
    bundled: bool = False,
) -> PluginManager:
    """A loaded manager on :func:`gateway_home`."""
    return create_manager(gateway_home(tmp_path, monkeypatch, platforms, plugins, bundled=bundled))


@pytest.fixture
def pm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginManager:
    return gateway_manager(
        tmp_path,
        monkeypatch,
        {"irc": IRC_PLUGIN, "line_chat": LINE_PLUGIN},
        {"policy": POLICY_PLUGIN},
    )


def seen(pm: PluginManager) -> list[tuple[str, str, str]]:
    module = pm.get_plugin_module("policy")
    assert module is not None
    return list(module.SEEN)


def test_the_backoff_doubles_from_30_s_and_stops_at_300_s() -> None:
    assert [backoff_delay(n, 30, 300) for n in range(1, 7)] == [30, 60, 120, 240, 300, 300]


def test_irc_end_to_end_against_a_real_irc_server(
    pm: PluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IRC_ALLOWED_USERS", "ann")
    with miniircd(tmp_path) as port:
        with pm.activate():
            config = GatewayConfig(
                platforms={
                    Platform("irc"): PlatformConfig(
                        enabled=True,
                        extra={
                            "server": "127.0.0.1",
                            "port": port,
                            "channel": "#hermes",
                            "nickname": "hermesbot",
                            # With an allow-list set, Hermes ignores unknown users unless the
                            # platform asks for pairing codes.
                            "unauthorized_dm_behavior": "pair",
                        },
                    )
                },
                connect_timeout=10,
            )
        runner = GatewayRunner(pm, config=config)

        async def scenario() -> None:
            ann, bob = IrcClient(port, "ann"), IrcClient(port, "bob")
            async with running(runner):
                await ann.start("#hermes")
                await bob.start("#hermes")
                for _ in range(200):
                    if runner.states["irc"].state == "connected":
                        break
                    await asyncio.sleep(0.05)
                ann.privmsg("#hermes", "hermesbot: secret plans")  # skipped by the plugin
                ann.privmsg("#hermes", "hermesbot: plz hello there")  # rewritten
                sender, target, text = await ann.next_line()
                assert (sender, target) == ("hermesbot", "#hermes")
                assert "offline model" in text
                bob.privmsg("hermesbot", "hi")  # a DM from someone not allowed
                sender, target, text = await bob.next_line()
                while target != "bob":
                    sender, target, text = await bob.next_line()
                assert (sender, target) == ("hermesbot", "bob")
                assert "don't recognize you" in text
                while "pairing code" not in text:  # Hermes' answer: a code to pass on
                    sender, target, text = await bob.next_line()
                code = text.split("`")[1]
                with pm.activate():
                    assert PairingStore().approve_code("irc", code) is not None
                bob.privmsg("hermesbot", "hi again")  # approved: now the agent answers
                sender, target, text = await bob.next_line()
                while target != "bob" or "offline model" not in text:
                    sender, target, text = await bob.next_line()
                await ann.close()
                await bob.close()

        asyncio.run(scenario())
    assert seen(pm)[:2] == [("irc", "text", "secret plans"), ("irc", "text", "plz hello there")]
    assert runner.gateway.sessions.keys() == []  # closed at the stop


def test_gateway_platform_event_reaches_the_hook_and_a_generated_image_goes_as_attachment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = gateway_manager(  # bundled: image_gen/local draws offline
        tmp_path, monkeypatch, {"line_chat": LINE_PLUGIN}, {"policy": POLICY_PLUGIN}, bundled=True
    )
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "true")

    async def scenario() -> None:
        async with running_gateway(pm) as (server, _runner):
            server.say("ann", "ann", "generate an image of a red fox")
            replies = await server.replies(2)
            photo = next(item for item in replies if "photo" in item)
            assert Path(photo["photo"]).is_file()
            assert photo["bytes"] > 0
            text = next(item for item in replies if "text" in item)["text"]
            assert "red fox" in text
            assert photo["photo"] not in text  # the path went as the attachment
            server.say("ann", "ann", "", event="reaction", payload={"emoji": "+1"})
            for _ in range(200):
                if ("line_chat", "reaction", "+1") in seen(pm):
                    break
                await asyncio.sleep(0.02)

    asyncio.run(scenario())
    assert ("line_chat", "reaction", "+1") in seen(pm)


def test_a_dropped_connection_mid_turn_reconnects_and_answers_once(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")
    module = importlib.import_module("hermes_hooks.host.gateway")
    release = asyncio.Event()
    original = module.Gateway.route

    async def scenario() -> None:
        loop = asyncio.get_running_loop()

        def slow_route(self: object, event: object) -> object:
            asyncio.run_coroutine_threadsafe(release.wait(), loop).result(20)
            return original(self, event)

        monkeypatch.setattr(module.Gateway, "route", slow_route)
        async with running_gateway(pm) as (server, runner):
            server.say("ann", "ann", "hello", id="1")
            await asyncio.sleep(0.2)
            server.drop()  # the platform hangs up while the turn runs
            await server.connected(2)  # the adapter is back
            release.set()
            replies = await server.replies(1)
            assert replies[0]["chat"] == "ann"
            assert replies[0]["text"]
            with pytest.raises(TimeoutError):
                await server.replies(1, timeout=0.5)
        assert runner.states["line_chat"].messages == 1

    asyncio.run(scenario())


def test_a_server_that_never_answers_the_handshake_is_bounded_and_others_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = gateway_manager(
        tmp_path, monkeypatch, {"line_chat": LINE_PLUGIN, "homeassistant": HA_PLUGIN}
    )
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")

    async def scenario() -> None:
        async with LineServer(greet=False) as mute, HomeAssistantServer(token="t") as good:
            with pm.activate():
                config = line_config(mute.port, connect_timeout=0.3)
                config.platforms[Platform("homeassistant")] = PlatformConfig(
                    enabled=True, token="t", extra={"url": good.url}
                )
            runner = GatewayRunner(pm, config=config)
            async with running(runner):
                for _ in range(200):
                    if good.subscribed():
                        break
                    await asyncio.sleep(0.02)
                await good.set_text("input_text.hermes", "hello", "ann")  # the other platform
                note = await asyncio.wait_for(good.notifications.get(), 15)
                assert note["message"]
                await asyncio.sleep(0.8)
                state = runner.states["line_chat"]
                assert state.state in ("retrying", "connecting")
                assert state.last_error_code == "connect_timeout"
                assert mute.connections >= 2  # retried with backoff, each attempt bounded
                assert runner.states["homeassistant"].state == "connected"
            assert runner.states["line_chat"].state == "stopped"

    asyncio.run(scenario())


def test_a_send_that_raises_is_counted_on_its_plugin_and_the_turn_is_kept(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")

    async def scenario() -> GatewayRunner:
        async with running_gateway(pm) as (server, runner):
            server.say("broken-chat", "ann", "hello")
            server.say("ann", "ann", "still there?")
            reply = await server.replies(1)
            assert reply[0]["chat"] == "ann"
        return runner

    runner = asyncio.run(scenario())
    info = pm.get_plugin_info("line_chat")
    assert info is not None
    assert info.hook_errors >= 1
    assert "ConnectionResetError" in (info.last_hook_error or "")
    assert runner.states["line_chat"].messages == 2  # both turns ran; only the send failed


def test_fifty_chats_at_once_each_answered_once_in_order(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")

    async def scenario() -> None:
        async with running_gateway(pm) as (server, _runner):
            for index in range(50):
                for turn in range(2):
                    server.say(f"chat{index}", f"user{index}", f"message {turn} of {index}")
            replies = await server.replies(100, timeout=60)
            with pytest.raises(TimeoutError):
                await server.replies(1, timeout=0.3)
        by_chat: dict[str, list[str]] = {}
        for reply in replies:
            by_chat.setdefault(reply["chat"], []).append(reply["text"])
        assert len(by_chat) == 50
        for index in range(50):
            texts = by_chat[f"chat{index}"]
            assert len(texts) == 2
            assert all(texts)

    asyncio.run(scenario())


def test_ntfy_end_to_end_against_a_local_ntfy_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = gateway_home(  # bundled: image_gen/local draws offline
        tmp_path, monkeypatch, {"ntfy": NTFY_PLUGIN}, {"policy": POLICY_PLUGIN}, bundled=True
    )
    pm = create_manager(home)
    monkeypatch.setenv("NTFY_ALLOWED_USERS", "hermes-in")

    async def scenario() -> None:
        async with NtfyServer() as server:
            monkeypatch.setenv("NTFY_SERVER_URL", server.url)
            monkeypatch.setenv("NTFY_TOPIC", "hermes-in")
            (home / "config.yaml").write_text(
                "plugins: {enabled: [ntfy, policy]}\n"
                "gateway: {platforms: {ntfy: {enabled: true}}, connect_timeout: 5}\n",
                encoding="utf-8",
            )
            runner = GatewayRunner(pm)  # the config as `hermes gateway run` reads it
            async with running(runner):
                for _ in range(200):
                    if server.subscribers("hermes-in"):
                        break
                    await asyncio.sleep(0.02)
                await server.post("hermes-in", "secret: do not answer")
                await server.post("hermes-in", "plz generate an image of a lighthouse")
                reply = await server.next_from_bot()
                attachment = await server.next_from_bot()
                assert "lighthouse" in reply["message"]
                assert attachment["attachment"]["name"].endswith(".png")
                assert attachment["attachment"]["size"] > 0
                with pytest.raises(TimeoutError):
                    await server.next_from_bot(timeout=0.5)  # the skipped one got nothing

    asyncio.run(scenario())
    assert seen(pm)[:2] == [
        ("ntfy", "text", "secret: do not answer"),
        ("ntfy", "text", "plz generate an image of a lighthouse"),
    ]


def test_home_assistant_end_to_end_against_a_local_websocket_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = gateway_manager(
        tmp_path, monkeypatch, {"homeassistant": HA_PLUGIN}, {"policy": POLICY_PLUGIN}
    )

    async def scenario() -> None:
        async with HomeAssistantServer(token="llat-123") as server:
            with pm.activate():
                config = GatewayConfig(
                    platforms={
                        Platform("homeassistant"): PlatformConfig(
                            enabled=True, token="llat-123", extra={"url": server.url}
                        )
                    }
                )
            runner = GatewayRunner(pm, config=config)
            async with running(runner):
                for _ in range(200):
                    if server.subscribed():
                        break
                    await asyncio.sleep(0.02)
                await server.set_text("input_text.hermes", "secret stuff", "user-ann")
                await server.set_text("input_text.hermes", "plz /help", "user-ann")
                note = await asyncio.wait_for(server.notifications.get(), 15)
                assert note["title"] == "Hermes"
                assert "/new" in note["message"]  # the rewrite became the /help slash command
                # Home Assistant events are the house's, not a person's: Hermes authorizes
                # them all (the token authenticated the connection), whoever's context.
                await server.set_text("input_text.hermes", "hello", "user-eve")
                note = await asyncio.wait_for(server.notifications.get(), 15)
                assert "offline model" in note["message"]
                assert server.notifications.empty()

    asyncio.run(scenario())
    assert [item[2] for item in seen(pm)] == ["secret stuff", "plz /help", "hello"]


def test_a_wrong_home_assistant_token_is_fatal_and_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = gateway_manager(tmp_path, monkeypatch, {"homeassistant": HA_PLUGIN})

    async def scenario() -> None:
        async with HomeAssistantServer(token="right") as server:
            with pm.activate():
                config = GatewayConfig(
                    platforms={
                        Platform("homeassistant"): PlatformConfig(
                            enabled=True, token="wrong", extra={"url": server.url}
                        )
                    },
                    reconnect_backoff_base=0.05,
                )
            runner = GatewayRunner(pm, config=config)
            async with running(runner):
                for _ in range(200):
                    found = runner.states.get("homeassistant")
                    if found is not None and found.state == "fatal":
                        break
                    await asyncio.sleep(0.02)
                state = runner.states["homeassistant"]
                assert (state.state, state.error_code) == ("fatal", "auth_invalid")

    asyncio.run(scenario())


def test_the_gateway_benchmark_runs_and_prints_its_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_home(tmp_path, monkeypatch)
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")
    from benchmarks import gateway as bench

    monkeypatch.setattr(bench, "CHATS", (1, 3))
    bench.main(["--messages", "1", "--workers", "2"])  # timings are not asserted
    table = capsys.readouterr().out
    assert "| 1 |" in table
    assert "| 3 |" in table
    assert "budget: framework under 2 ms p95" in table


def test_hermes_gateway_run_answers_irc_and_stops_cleanly_on_sigterm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import signal
    import subprocess
    import sys
    import time

    from cli_support import clean_env, hermes

    home = gateway_home(tmp_path, monkeypatch, {"irc": IRC_PLUGIN})
    state_file = home / "gateway_state.json"

    def state() -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(state_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data

    def irc_state() -> object:
        return state().get("platforms", {}).get("irc", {}).get("state")

    with miniircd(tmp_path) as port:
        env = {
            "IRC_SERVER": "127.0.0.1",
            "IRC_PORT": str(port),
            "IRC_CHANNEL": "#hermes",
            "IRC_NICKNAME": "hermesbot",
            "IRC_ALLOWED_USERS": "ann",
        }
        (home / "config.yaml").write_text(
            "plugins: {enabled: [irc]}\ngateway: {platforms: {irc: {enabled: true}}}\n",
            encoding="utf-8",
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "hermes_hooks", "gateway", "run"],
            env=clean_env(home, **env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 30
            while irc_state() != "connected":
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "irc never connected"
                time.sleep(0.05)
            listed = hermes(home, "plugins", "list", **dict[str, Any](env))
            assert "platforms: irc" in listed.stdout
            status = hermes(home, "gateway", "status", "--json", **dict[str, Any](env))
            report = json.loads(status.stdout)
            assert report["gateway_state"] == "running"
            assert report["platforms"][0]["name"] == "irc"
            assert report["platforms"][0]["state"] == "connected"

            async def talk() -> str:
                ann = IrcClient(port, "ann")
                await ann.start("#hermes")
                await asyncio.sleep(0.2)
                ann.privmsg("#hermes", "hermesbot: hi")
                _sender, _target, text = await ann.next_line()
                await ann.close()
                return text

            assert "offline model" in asyncio.run(talk())
        finally:
            proc.send_signal(signal.SIGTERM)
            _out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "gateway stopped" in err
        assert state()["gateway_state"] == "stopped"


INJECTOR = """
from hermes_hooks import hookimpl

CTX = []


def register(ctx):
    CTX.append(ctx)


@hookimpl
def gateway_platform_event(platform, event_type, payload):
    CTX[0].inject_message(f"the user reacted with {payload['emoji']}")
"""


def test_inject_message_outside_a_turn_becomes_a_turn_answered_in_the_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = gateway_manager(tmp_path, monkeypatch, {"line_chat": LINE_PLUGIN}, {"injector": INJECTOR})
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")

    async def scenario() -> None:
        async with running_gateway(pm) as (server, runner):
            server.say("ann", "ann", "hello")
            first = await server.replies(1)
            server.say("ann", "ann", "", event="reaction", payload={"emoji": "+1"})
            injected = await server.replies(1)
            assert first[0]["chat"] == injected[0]["chat"] == "ann"
            session = runner.gateway.sessions.get("agent:main:line_chat:dm:ann")
            assert session is not None
            said = [m["content"] for m in session.messages if m["role"] == "user"]
            assert said == ["hello", "the user reacted with +1"]

    asyncio.run(scenario())


def test_a_stop_waits_for_the_turn_in_flight_then_closes_every_session(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")
    module = importlib.import_module("hermes_hooks.host.gateway")
    original = module.Gateway.route
    entered = asyncio.Event()

    async def scenario() -> None:
        loop = asyncio.get_running_loop()

        def slow_route(self: object, event: object) -> object:
            loop.call_soon_threadsafe(entered.set)
            time.sleep(0.3)  # the turn is still running when the stop comes
            return original(self, event)

        monkeypatch.setattr(module.Gateway, "route", slow_route)
        async with LineServer() as server:
            with pm.activate():
                runner = GatewayRunner(pm, config=line_config(server.port))
            task = asyncio.create_task(runner.run())
            await server.connected()
            server.say("ann", "ann", "hello")
            await entered.wait()
            runner.request_stop()
            reply = await server.replies(1)
            assert reply[0]["chat"] == "ann"  # delivered before the adapter disconnected
            assert await asyncio.wait_for(task, 10) == 0
            assert runner.gateway.sessions.keys() == []
            assert runner.states["line_chat"].state == "stopped"

    asyncio.run(scenario())
    finalized = seen(pm)  # the policy plugin saw the one message
    assert finalized == [("line_chat", "text", "hello")]


WAKER = """
from gateway.session import build_session_key

CTX = []
KEYS = []


def register(ctx):
    CTX.append(ctx)
    ctx.register_hook("pre_gateway_dispatch", remember)


def remember(event, gateway, session_store, **_):
    KEYS.append(build_session_key(event.source))
"""


def test_inject_message_with_a_session_key_is_a_turn_answered_in_that_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "line_chat", LINE_PLUGIN, manifest={"kind": "platform"})
    user_plugin(home, "waker", WAKER)
    user_plugin(home, "nogrant", WAKER)
    grant = {
        "waker": {"allow_gateway_injection": True},
        "nogrant": {"allow_gateway_injection": "true"},
    }
    write_config(home, ["line_chat", "waker", "nogrant"], entries=grant)
    pm = create_manager(home)
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")
    waker, nogrant = (pm.get_plugin_module(name) for name in ("waker", "nogrant"))
    assert waker is not None
    assert nogrant is not None
    ctx = waker.CTX[0]
    assert not ctx.gateway_message_injection_available()  # no gateway yet

    async def scenario() -> None:
        async with running_gateway(pm) as (server, runner):
            server.say("ann", "ann", "hello")
            server.say("bob", "bob", "hi")
            first = await server.replies(2)
            assert sorted(item["chat"] for item in first) == ["ann", "bob"]
            ann_key = next(key for key in waker.KEYS if key.endswith(":ann"))
            assert ctx.gateway_message_injection_available()
            assert not nogrant.CTX[0].gateway_message_injection_available()  # "true" is no grant
            assert not nogrant.CTX[0].inject_message("psst", session_key=ann_key)
            assert not ctx.inject_message("to nobody", session_key="agent:main:x:dm:1")
            assert ctx.inject_message("/help as text", role="system", session_key=ann_key)
            (woken,) = await server.replies(1)
            assert woken["chat"] == "ann"  # the session's own chat, not the last one (bob)
            # What plugins acting outside a turn reach: Hermes' gateway.run reference.
            view = importlib.import_module("gateway.run")._gateway_runner_ref()
            assert view is not None
            assert view._gateway_loop is asyncio.get_running_loop()
            assert view.adapters == {Platform("line_chat"): runner.adapters["line_chat"]}
            session = runner.gateway.sessions.get(ann_key)
            assert session is not None
            said = [m["content"] for m in session.messages if m["role"] == "user"]
            assert said == ["hello", "[system] /help as text"]  # a turn, not a command
        assert not ctx.gateway_message_injection_available()  # the gateway stopped
        assert importlib.import_module("gateway.run")._gateway_runner_ref() is None

    asyncio.run(scenario())


ASKER = """
def register(ctx):
    ctx.register_hook(
        "pre_tool_call",
        lambda tool_name, **kw: {"action": "approve", "message": "runs a command"}
        if tool_name == "terminal"
        else None,
    )
"""


def test_an_approval_is_asked_in_the_chat_and_answered_by_approve_or_a_bare_no(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_hooks.backends.models.scripted import ScriptedModel
    from hermes_hooks.testing import tool_call

    pm = gateway_manager(tmp_path, monkeypatch, {"line_chat": LINE_PLUGIN}, {"asker": ASKER})
    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")
    model = ScriptedModel(
        [
            tool_call("terminal", command="echo approved-run"),
            "ran it",
            tool_call("terminal", command="echo second"),
            "did not run it",
        ]
    )

    async def scenario() -> None:
        async with running_gateway(pm, model) as (server, runner):
            server.say("ann", "ann", "please run it")
            (asked,) = await server.replies(1)
            assert "requires approval" in asked["text"]
            assert "echo approved-run" in asked["text"]
            assert "/approve" in asked["text"]
            # The chat's turn is still running: the answer must not wait behind it.
            server.say("ann", "ann", "/approve")
            answers = await server.replies(2)
            assert [a["text"] for a in answers] == [
                "✅ Command approved. The agent is resuming...",
                "ran it",
            ]
            server.say("ann", "ann", "and again")
            (asked,) = await server.replies(1)
            assert "echo second" in asked["text"]
            server.say("ann", "ann", "no")  # a bare word, while a request waits
            answers = await server.replies(2)
            assert [a["text"] for a in answers] == ["❌ Command denied.", "did not run it"]
            server.say("ann", "ann", "/deny")  # nothing waits now
            (late,) = await server.replies(1)
            assert late["text"] == "No pending command to deny."
            session = runner.gateway.sessions.get("agent:main:line_chat:dm:ann")
            assert session is not None
            results = [m["content"] for m in session.messages if m["role"] == "tool"]
            assert "approved-run" in results[0]
            assert "not approved (deny)" in results[1]

    asyncio.run(scenario())


def test_a_drain_marker_refuses_new_turns_until_it_is_removed(
    pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_hooks.compat import gateway_drain_control
    from hermes_hooks.host import gateway_runner

    monkeypatch.setenv("GATEWAY_ALLOW_ALL_USERS", "1")
    monkeypatch.setattr(gateway_runner, "DRAIN_POLL_SECONDS", 0.02)

    async def until(runner: GatewayRunner, draining: bool) -> None:
        for _ in range(500):
            if runner.draining is draining:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"the gateway never became draining={draining}")

    async def scenario() -> None:
        async with running_gateway(pm) as (server, runner):
            # What the dashboard's POST /api/gateway/drain writes.
            gateway_drain_control.write_drain_request(principal="ops", home=pm.hermes_home)
            await until(runner, True)
            server.say("ann", "ann", "hello while draining")
            (refused,) = await server.replies(1)
            assert refused["text"] == gateway_runner.DRAINING_TEXT
            assert runner.gateway.sessions.get("agent:main:line_chat:dm:ann") is None
            assert gateway_drain_control.clear_drain_request(home=pm.hermes_home)
            await until(runner, False)
            server.say("ann", "ann", "hello again")
            (answered,) = await server.replies(1)
            assert answered["text"] != gateway_runner.DRAINING_TEXT
            assert runner.gateway.sessions.get("agent:main:line_chat:dm:ann") is not None

    asyncio.run(scenario())


def test_a_drain_marker_of_an_earlier_boot_is_ignored(tmp_path: Path) -> None:
    from hermes_hooks.compat import gateway_drain_control as control

    assert not control.drain_requested(home=tmp_path)
    control.write_drain_request(home=tmp_path, suppress_notification=True)
    assert control.drain_requested(home=tmp_path)
    assert control.drain_notification_suppressed(home=tmp_path)
    marker = control.drain_request_path(tmp_path)
    marker.write_text('{"action": "drain", "epoch": "another-boot:1"}', encoding="utf-8")
    if control.current_instantiation_epoch():  # /proc tells this boot from the marker's
        assert not control.drain_requested(home=tmp_path)
    else:  # no epoch to compare: the marker is honoured, toward quiescing
        assert control.drain_requested(home=tmp_path)
    marker.write_text("{half written", encoding="utf-8")
    assert control.drain_requested(home=tmp_path)  # unreadable still counts: toward quiescing
    assert control.clear_drain_request(home=tmp_path)
    assert not control.clear_drain_request(home=tmp_path)

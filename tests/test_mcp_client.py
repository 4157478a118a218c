"""The MCP client: ``mcp_servers:`` read as Hermes reads it, the servers' tools as tools.

A real stdio MCP server written on the official SDK (``tests/mcp_demo_server.py``) is started
by the client; its tools go through every hook of the reference host, a plugin blocks one, a
hung one is bounded, a malformed schema refuses that tool alone, a plugin calls one through
``ctx.call_mcp`` within its allowlist, and a killed server's tools are unavailable until it is
back.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_support import home, invoke  # noqa: F401  (home is a fixture)
from mcp_support import NO_WIPE, demo_entry, requires_mcp
from plugin_builders import user_plugin, write_config

from hermes_hooks.backends.models.scripted import ScriptedModel, tool_call
from hermes_hooks.bridges.mcp_client import McpClient, envelope, install_mcp
from hermes_hooks.bridges.mcp_config import mcp_tool_name, read_servers
from hermes_hooks.host.runtime import create_manager
from hermes_hooks.host.session import Session
from hermes_hooks.plugins.manager import PluginManager


def test_tool_names_are_hermes_names() -> None:
    assert mcp_tool_name("my-files", "read.file") == "mcp_my_files_read_file"
    assert mcp_tool_name("gh", "list issues") == "mcp_gh_list_issues"


def test_a_bad_entry_names_its_field_and_the_others_are_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOK", "s3cret")
    config = {
        "mcp_servers": {
            "none": {"args": ["x"]},
            "slow": {"command": "srv", "timeout": "soon"},
            "both": {"command": "srv", "url": "http://127.0.0.1:1/mcp"},
            "good": {"command": "srv", "args": "-y 'a b'", "tools": {"include": ["t"]}},
            "web": {
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"X": 1, "T": "Bearer ${TOK}"},
                "enabled": False,
            },
        }
    }
    servers, problems = read_servers(config)
    assert [s.name for s in servers] == ["good", "web"]
    good, web = servers
    assert good.args == ("-y", "a b")
    assert good.transport == "stdio"
    assert good.offers("t")
    assert not good.offers("u")
    assert web.transport == "http"
    assert web.headers == {"X": "1", "T": "Bearer s3cret"}
    assert not web.enabled
    assert any("mcp_servers.none" in p and "'command'" in p and "'url'" in p for p in problems)
    assert any("mcp_servers.slow.timeout" in p and "'soon'" in p for p in problems)
    assert any("mcp_servers.both" in p for p in problems)
    assert read_servers({"mcp_servers": ["a"]})[1] == [
        "config.yaml: mcp_servers must be a mapping of server names, found list"
    ]


def test_the_envelope_is_hermess() -> None:
    assert envelope('{"result": "hi"}') == {"ok": True, "result": "hi"}
    assert envelope('{"error": "down"}') == {"ok": False, "error": "down"}
    cut = envelope(json.dumps({"result": "x" * 70_000}))
    assert cut["ok"]
    assert cut["truncated"] is True
    assert len(cut["result"]) < 70_000


TAG = """\
    from hermes_hooks import hookimpl

    @hookimpl
    def transform_tool_result(tool_name, result):
        return result + " [seen by tag]" if tool_name.startswith("mcp_") else None
    """

CALLER = """\
    import json

    def register(ctx):
        def ask(args, **kwargs):
            try:
                return json.dumps(ctx.call_mcp("demo", args["tool"], args.get("arguments"), 5))
            except PermissionError as exc:
                return json.dumps({"denied": str(exc)})
        ctx.register_tool("ask_" + ctx.plugin_id.replace("-", "_"), "t", {"description": "x"}, ask)
    """


@pytest.fixture
def demo(home: Path) -> Iterator[PluginManager]:
    user_plugin(home, "no-wipe", NO_WIPE)
    user_plugin(home, "tag", TAG)
    user_plugin(home, "caller", CALLER)
    user_plugin(home, "nosy", CALLER)
    write_config(
        home,
        enabled=["no-wipe", "tag", "caller", "nosy"],
        entries={"caller": {"mcp_allowlist": ["demo"]}},
        mcp_servers={"demo": demo_entry(timeout=1, tools={"exclude": ["big"]})},
    )
    pm = create_manager(home)
    client = install_mcp(pm)
    assert client is not None
    yield pm
    client.close()


@requires_mcp
def test_mcp_tools_run_through_every_hook_and_call_mcp_is_default_deny(
    demo: PluginManager,
) -> None:
    entry = demo.tools.get_entry("mcp_demo_echo")
    assert entry is not None
    assert entry.owner == "config:mcp:demo"
    assert entry.value.toolset == "mcp-demo"
    assert demo.tools.get("mcp_demo_wipe_disk") is not None  # "wipe-disk", sanitised
    assert demo.tools.get("mcp_demo_broken") is None  # its schema is not JSON Schema
    assert demo.tools.get("mcp_demo_big") is None  # tools.exclude
    model = ScriptedModel(
        [
            tool_call("mcp_demo_echo", text="hello"),
            tool_call("mcp_demo_wipe_disk"),
            tool_call("mcp_demo_hang"),
            "done",
        ]
    )
    with Session(demo, model) as session:
        turn = session.run_turn("go")
    echo, wipe, hang = turn.tool_calls
    assert echo.status == "ok"
    assert json.loads(echo.result.removesuffix(" [seen by tag]")) == {"result": "hello"}
    assert echo.result.endswith("[seen by tag]")  # transform_tool_result applied
    assert wipe.status == "blocked"
    assert wipe.decided_by == "no-wipe"
    assert wipe.error_message == "no-wipe: wiping disks is not allowed"
    assert hang.status == "error"
    assert "did not answer 'hang' within 1 s" in (hang.error_message or "")
    assert turn.text == "done"  # the hung server did not stall the turn

    # ctx.call_mcp, from the same server (one server start for both parts of the test):
    def ask(plugin: str, tool: str, **arguments: object) -> object:
        result = demo.tools.dispatch(f"ask_{plugin}", {"tool": tool, "arguments": arguments})
        return json.loads(result)

    assert ask("caller", "echo", text="hi") == {"ok": True, "result": "hi"}
    # The allowlist is per server, not per tool: a tool hidden from the model is callable.
    big = ask("caller", "big")
    assert isinstance(big, dict)
    assert big["ok"]
    assert big["truncated"] is True
    denied = ask("nosy", "echo", text="hi")
    assert isinstance(denied, dict)
    assert "plugins.entries.nosy.mcp_allowlist" in denied["denied"]


@requires_mcp
def test_a_killed_server_is_unavailable_then_back(home: Path) -> None:
    down = home / "down"
    entry = demo_entry(keepalive_interval=0.2, env={"MCP_DEMO_DOWN_FILE": str(down)})
    write_config(home, mcp_servers={"demo": entry})
    pm = create_manager(home)
    client = install_mcp(pm, backoff_base=0.2, backoff_max=0.5)
    assert isinstance(client, McpClient)
    try:
        first = json.loads(pm.tools.dispatch("mcp_demo_whoami", {}))["result"]
        down.touch()  # the restarted server will fail to start until this is gone
        os.kill(int(first), 9)
        reason = _wait_for(lambda: pm.tools.unavailable_reason("mcp_demo_echo"))
        assert "Offered while its MCP server is connected" in str(reason)
        failed = json.loads(pm.tools.dispatch("mcp_demo_echo", {"text": "x"}))
        assert "MCP server 'demo' is reconnecting" in failed["error"]
        down.unlink()
        _wait_for(lambda: pm.tools.is_available("mcp_demo_echo") or None)
        again = json.loads(pm.tools.dispatch("mcp_demo_whoami", {}))["result"]
        assert again != first
        assert json.loads(pm.tools.dispatch("mcp_demo_echo", {"text": "back"})) == {
            "result": "back"
        }
        # /reload-mcp in a chat reads mcp_servers: again: the tools follow tools.exclude.
        write_config(home, mcp_servers={"demo": {**entry, "tools": {"exclude": ["echo"]}}})
        with Session(pm, ScriptedModel([])) as session:
            (reply,) = session.send("/reload-mcp")
        assert reply.text == "demo: connected, 4 tools"
        assert pm.tools.get("mcp_demo_echo") is None
        assert pm.tools.is_available("mcp_demo_whoami")
    finally:
        client.close()


def _wait_for(probe: Callable[[], object], seconds: float = 20.0) -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not so within {seconds} s: {probe}")


@requires_mcp
def test_hermes_tools_lists_them_and_hermes_z_calls_one(home: Path) -> None:
    user_plugin(home, "no-wipe", NO_WIPE)
    write_config(home, enabled=["no-wipe"], mcp_servers={"demo": demo_entry()})
    listed = invoke("tools", "--json")
    assert listed.exit_code == 0, listed.output
    tools = {tool["name"]: tool for tool in json.loads(listed.stdout)}
    assert tools["mcp_demo_echo"]["owner"] == "config:mcp:demo"
    assert tools["mcp_demo_echo"]["available"] is True
    ran = invoke("-z", 'call `mcp_demo_echo` with {"text": "hello from MCP"}')
    assert ran.exit_code == 0, ran.output
    assert ran.stdout == "The mcp_demo_echo tool returned:\nhello from MCP\n"


def test_hermes_mcp_list_reads_the_section_without_connecting(home: Path) -> None:
    write_config(
        home,
        mcp_servers={
            "demo": demo_entry(tools={"exclude": ["hang"]}),
            "web": {"url": "http://127.0.0.1:9/mcp", "enabled": False},
            "bad": {"timeout": 3},
        },
    )
    result = invoke("mcp", "list", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(s["name"], s["transport"], s["enabled"]) for s in data["servers"]] == [
        ("demo", "stdio", True),
        ("web", "http", False),
    ]
    assert data["servers"][0]["tools"] == "all but hang"
    assert "mcp_servers.bad needs a 'command' (stdio) or a 'url'" in data["problems"][0]
    missing = invoke("mcp", "test", "nope")
    assert missing.exit_code == 1
    assert "no MCP server 'nope'" in missing.stderr


@requires_mcp
def test_a_server_that_never_answers_is_bounded_by_connect_timeout(
    home: Path,
) -> None:
    # It reads what the client sends and never answers (it ends when its stdin closes).
    silent = {"command": "sh", "args": ["-c", "cat > /dev/null"]}
    write_config(home, mcp_servers={"silent": {**silent, "connect_timeout": 0.5}})
    pm = create_manager(home)
    started = time.monotonic()
    client = install_mcp(pm, backoff_base=60)
    try:
        assert client is not None
        waited = time.monotonic() - started
        state = client.servers["silent"]
        assert waited < 30  # bounded by connect_timeout, not by the server
        assert state.status == "reconnecting"
        assert state.error == "no answer within connect_timeout (0.5 s)"
        assert "no MCP server named 'nope'" in client.call("nope", "x")
        refused = client.call("silent", "x")
        assert "MCP server 'silent' is reconnecting (no answer within connect_timeout" in refused
    finally:
        if client is not None:
            client.close()


def test_reload_mcp_is_offered_in_chat_even_before_any_server(home: Path) -> None:
    write_config(home)
    result = invoke("chat", input="/reload-mcp\n/exit\n")
    assert result.exit_code == 0, result.output
    assert "No MCP servers are configured (mcp_servers: in config.yaml)." in result.stdout

"""``hermes mcp serve``: a real MCP client session (the SDK's) lists and calls our tools.

Over stdio the client starts ``hermes mcp serve`` itself, on a home holding the README's
``no-rm`` plugin: ``tools/list`` has the host's tools, ``terminal`` runs, and ``rm -rf`` comes
back as a tool error carrying the plugin's message (while the plugin's ``print`` in
``post_tool_call`` does not break the protocol on stdout). Over streamable HTTP the server runs
in-process on a port the system picks, on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from cli_support import clean_env, home  # noqa: F401  (home is a fixture)
from mcp_support import add_readme_no_rm, requires_mcp
from plugin_builders import user_plugin, write_config

from hermes_hooks.bridges.mcp_client import install_mcp
from hermes_hooks.host.runtime import create_manager

pytestmark = requires_mcp

TOOLS = """\
    def register(ctx):
        ctx.register_tool(
            "shout", "demo",
            {"description": "Upper-case a text.",
             "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}},
            lambda args, **kw: args["text"].upper(),
        )
    """

EVENTS = """\
    from hermes_hooks import hookimpl

    @hookimpl
    def on_session_start(session_id, platform):
        open(__file__ + ".log", "a").write(f"start {platform}\\n")

    @hookimpl
    def on_session_finalize(session_id, reason):
        open(__file__ + ".log", "a").write(f"finalize {reason}\\n")
    """


def _texts(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def _session_checks(read: Any, write: Any) -> dict[str, Any]:
    from mcp import ClientSession

    async with ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        names = {tool.name for tool in listed.tools}
        ran = await session.call_tool("terminal", {"command": "echo hello"})
        blocked = await session.call_tool("terminal", {"command": "rm -rf /"})
        shouted = await session.call_tool("shout", {"text": "hi"})
        return {"names": names, "ran": ran, "blocked": blocked, "shouted": shouted}


def test_stdio_serve_answers_an_sdk_client_and_a_block_is_a_tool_error(
    home: Path,
) -> None:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    add_readme_no_rm(home)
    user_plugin(home, "shouter", TOOLS)
    events = user_plugin(home, "events", EVENTS)
    write_config(home, ["no-rm", "shouter", "events"])
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hermes_hooks", "mcp", "serve"],
        env=clean_env(home),
        cwd=str(home),
    )

    async def main() -> dict[str, Any]:
        async with stdio_client(parameters) as (read, write):
            return await _session_checks(read, write)

    seen = asyncio.run(main())
    assert {"terminal", "read_file", "shout"} <= seen["names"]
    assert not seen["ran"].is_error
    assert '"exit_code": 0' in _texts(seen["ran"])
    assert "hello" in _texts(seen["ran"])
    assert seen["blocked"].is_error
    assert _texts(seen["blocked"]) == "rm -rf is not allowed here"
    assert _texts(seen["shouted"]) == "HI"
    log = (events / "__init__.py.log").read_text()
    assert log.splitlines() == ["start mcp", "finalize mcp_serve_stopped"]


def test_http_serve_listens_on_loopback_and_answers(
    home: Path,
    tmp_path: Path,
) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from hermes_hooks.bridges.mcp_server import serve_http

    add_readme_no_rm(home)
    user_plugin(home, "shouter", TOOLS)
    write_config(home, ["no-rm", "shouter"])
    pm = create_manager(home)
    urls: list[str] = []
    servers: list[Any] = []
    started = threading.Event()

    def ready(server: Any) -> None:
        servers.append(server)
        started.set()

    thread = threading.Thread(
        target=serve_http, args=(pm,), kwargs={"port": 0, "announce": urls.append, "ready": ready}
    )
    thread.start()
    try:
        assert started.wait(30), "the server did not start"
        assert urls[0].startswith("http://127.0.0.1:")
        assert urls[0].endswith("/mcp")

        async def main() -> dict[str, Any]:
            async with (
                httpx2.AsyncClient() as http,
                streamable_http_client(urls[0], http_client=http) as (read, write),
            ):
                return await _session_checks(read, write)

        seen = asyncio.run(main())
        # Our MCP client, on a streamable HTTP entry of mcp_servers:, reaches the same server.
        other = tmp_path / "other-home"
        write_config(other, mcp_servers={"self": {"url": urls[0], "headers": {"X-Test": "1"}}})
        client_pm = create_manager(other)
        client = install_mcp(client_pm)
        assert client is not None
        try:
            shout = client_pm.tools.dispatch("mcp_self_shout", {"text": "over http"})
            rm = client_pm.tools.dispatch("mcp_self_terminal", {"command": "rm -rf /"})
        finally:
            client.close()
    finally:
        if servers:
            servers[0].should_exit = True
        thread.join(30)
    assert seen["blocked"].is_error
    assert _texts(seen["blocked"]) == "rm -rf is not allowed here"
    assert _texts(seen["shouted"]) == "HI"
    assert json.loads(shout) == {"result": "OVER HTTP"}
    assert json.loads(rm) == {"error": "rm -rf is not allowed here"}


def test_serve_refuses_an_address_that_is_not_loopback(home: Path) -> None:
    from hermes_hooks.bridges.mcp_server import serve_http

    pm = create_manager(home, load=False)
    with pytest.raises(ValueError, match="loopback only"):
        serve_http(pm, host="0.0.0.0", port=0)

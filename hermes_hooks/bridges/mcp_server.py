"""``hermes mcp serve``: the plugins' and the host's tools, published to any MCP client.

One reference-host :class:`~hermes_hooks.host.session.Session` lives as long as the server
(platform ``mcp``): ``on_session_start`` fires when the first client initialises,
``on_session_finalize`` when the server stops. ``tools/list`` answers the tools the session
offers now (those whose ``check_fn`` passes, MCP tools of ``mcp_servers:`` included); each
``tools/call`` is one tool call of the reference host's tool loop: ``pre_tool_call`` (block >
approve > modify), the approval gate, dispatch, ``post_tool_call`` and
``transform_tool_result``. A blocked call comes back as a tool error (``isError``) whose text is
the plugin's message; a call a plugin sends for approval is denied, as the host denies it with
nobody to ask (an MCP client has no approval prompt of ours).

The transports are the SDK's: stdio (the client starts ``hermes mcp serve``) and streamable
HTTP, on a loopback address only, at ``/mcp``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from hermes_hooks.host.session import Session
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["LOOPBACK", "ToolServer", "build_server", "serve_http", "serve_stdio"]

LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")
SERVER_NAME: Final = "hermes-hooks"


class ToolServer:
    """The host side of ``hermes mcp serve``: one session, its tools, one call at a time each."""

    def __init__(self, pm: PluginManager, session: Session | None = None) -> None:
        from hermes_hooks.host.session import Session

        self.pm = pm
        self.session = session or Session(pm, platform="mcp", attach=False)
        self._started = False
        self._lock = threading.Lock()

    def start(self) -> None:
        """Fire ``on_session_start`` once."""
        from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

        with self._lock:
            if self._started:
                return
            self._started = True
        self.session.hooks.on_session_start(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=self.session.session_id,
            model=self.session.model.model,
            platform=self.session.platform,
        )

    def definitions(self) -> list[dict[str, Any]]:
        """Return the OpenAI function definitions of the tools offered now."""
        return self.session.tool_definitions()

    def call(self, name: str, arguments: dict[str, Any] | None) -> tuple[bool, str]:
        """Run one tool call through every hook; return ``(is_error, text)``."""
        from hermes_hooks.backends.models.base import ToolCall
        from hermes_hooks.host.session import TurnState, new_id
        from hermes_hooks.host.toolloop import run_tool_call
        from hermes_hooks.host.tools import current_session

        self.start()
        offered = frozenset(d["function"]["name"] for d in self.definitions())
        turn = TurnState(turn_id=new_id("turn"), task_id=new_id("task"), offered_tools=offered)
        call = ToolCall(
            id=new_id("call"),
            name=name,
            arguments=json.dumps(arguments or {}, ensure_ascii=False, default=str),
        )
        token = current_session.set(self.session)
        try:
            record = run_tool_call(self.session, turn, call)
        finally:
            current_session.reset(token)
        if record.status == "blocked":
            return True, record.error_message or "blocked"
        if record.status == "error":
            return True, _error_text(record.result) or record.error_message or record.result
        return False, record.result

    def close(self) -> None:
        """Fire ``on_session_finalize``."""
        self.session.close("mcp_serve_stopped")


def _error_text(result: str) -> str | None:
    try:
        data = json.loads(result)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return str(error) if error else None


def build_server(tools: ToolServer) -> Any:
    """Return the SDK's low-level ``Server`` answering ``tools/list`` and ``tools/call``."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from hermes_hooks import __version__

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        definitions = await anyio.to_thread.run_sync(tools.definitions)
        listed = []
        for definition in definitions:
            function = definition["function"]
            listed.append(
                types.Tool(
                    name=function["name"],
                    description=function.get("description") or None,
                    input_schema=dict(function.get("parameters") or {"type": "object"}),
                )
            )
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        is_error, text = await anyio.to_thread.run_sync(tools.call, params.name, arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=is_error
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions="The tools of the Hermes plugins enabled here, run through their hooks.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(pm: PluginManager) -> None:
    """Serve MCP on stdin and stdout until the client closes them."""
    import anyio
    from mcp.server.stdio import stdio_server

    tools = ToolServer(pm)
    server = build_server(tools)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        tools.close()


def serve_http(
    pm: PluginManager,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    announce: Callable[[str], None] | None = None,
    ready: Callable[[Any], None] | None = None,
) -> None:
    """Serve MCP over streamable HTTP on ``http://host:port/mcp`` until interrupted.

    :param port: ``0`` lets the system pick a free port; ``announce`` gets the URL.
    :param ready: called with the uvicorn server once it listens (tests stop it through it).
    :raises ValueError: ``host`` is not a loopback address.
    """
    import asyncio

    import uvicorn

    if host not in LOOPBACK:
        raise ValueError(f"hermes mcp serve listens on loopback only, not on {host!r}")
    tools = ToolServer(pm)
    app = build_server(tools).streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        if server.started:
            bound = server.servers[0].sockets[0].getsockname()[1]
            shown = f"[{host}]" if ":" in host else host
            if announce is not None:
                announce(f"http://{shown}:{bound}/mcp")
            if ready is not None:
                ready(server)
        await task

    try:
        asyncio.run(main())
    finally:
        tools.close()

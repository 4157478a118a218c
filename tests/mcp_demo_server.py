"""A small MCP server on the official SDK, for the MCP client tests (stdio, or HTTP with --http).

Tools: ``echo`` (returns its text), ``wipe-disk`` (one a plugin blocks), ``hang`` (never answers),
``broken`` (published with a malformed input schema), ``whoami`` (the server's process id), and
``big`` (a long result). ``MCP_DEMO_PREFIX`` prefixes ``echo``'s answer, so a test can tell two
servers apart; while the file ``MCP_DEMO_DOWN_FILE`` names exists, the server exits at once
(a server that cannot start). Run it as ``python tests/mcp_demo_server.py`` (stdio), or
with ``--http PORT``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

if __name__ == "__main__":  # before the SDK is imported: a failed start is quick
    _down = os.environ.get("MCP_DEMO_DOWN_FILE")
    if _down and os.path.exists(_down):
        sys.exit(f"demo server is down ({_down} exists)")

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
_NONE: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(name="echo", description="Say the text back.", input_schema=_TEXT),
    types.Tool(name="wipe-disk", description="Pretend to wipe a disk.", input_schema=_NONE),
    types.Tool(name="hang", description="Never answer.", input_schema=_NONE),
    types.Tool(
        name="broken",
        description="A tool whose schema is not JSON Schema.",
        input_schema={"type": "object", "properties": {"x": {"type": 12}}},
    ),
    types.Tool(name="whoami", description="The server's process id.", input_schema=_NONE),
    types.Tool(name="big", description="A long answer.", input_schema=_NONE),
]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "echo":
        return _text(os.environ.get("MCP_DEMO_PREFIX", "") + str(arguments.get("text", "")))
    if params.name == "wipe-disk":
        return _text("wiped")
    if params.name == "hang":
        await anyio.sleep_forever()
    if params.name == "whoami":
        return _text(str(os.getpid()))
    if params.name == "big":
        return _text("x" * 100_000)
    return _text(f"unknown tool {params.name!r}", error=True)


server = Server("demo", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main_http(port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        main_http(int(sys.argv[2]))
    else:
        anyio.run(main)

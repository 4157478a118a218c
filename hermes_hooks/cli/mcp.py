"""``hermes mcp``: the MCP servers of ``mcp_servers:`` (list, test), and serving ours (serve)."""

from __future__ import annotations

import time
from typing import Any

import click

from hermes_hooks.cli.common import (
    build_manager,
    connect_mcp,
    echo_json,
    fit_table,
    terminal_width,
    warn,
)

__all__ = ["mcp"]


@click.group("mcp")
def mcp() -> None:
    """MCP both ways: the servers config.yaml lists (their tools become tools), and ours.

    \b
    Examples:
      hermes mcp list
      hermes mcp test files
      hermes mcp serve
      hermes mcp serve --http --port 8765
    """


def _servers(ctx: click.Context) -> tuple[Any, list[Any], list[str]]:
    from hermes_hooks.bridges.mcp_config import read_servers

    pm = build_manager(ctx, load=False)
    pm.reload_config()
    servers, problems = read_servers(pm.config)
    return pm, servers, problems


@mcp.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of servers.")
@click.pass_context
def list_servers(ctx: click.Context, as_json: bool) -> None:
    """List the MCP servers of mcp_servers: in config.yaml (nothing is started).

    Shows how each is reached (stdio command or URL), whether it is enabled and its tool
    filter; 'hermes mcp test NAME' connects to one. Wrong entries are reported by field.

    \b
    Examples:
      hermes mcp list
      hermes mcp list --json
    """
    _, servers, problems = _servers(ctx)
    rows = []
    for server in servers:
        tools = (
            f"only {', '.join(server.include)}"
            if server.include
            else (f"all but {', '.join(server.exclude)}" if server.exclude else "all")
        )
        rows.append(
            {
                "name": server.name,
                "transport": server.transport,
                "target": server.describe(),
                "enabled": server.enabled,
                "tools": tools,
                "timeout": server.timeout,
                "connect_timeout": server.connect_timeout,
            }
        )
    if as_json:
        echo_json({"servers": rows, "problems": problems})
        return
    for problem in problems:
        warn(problem)
    if not rows:
        click.echo("No MCP servers are configured: add them under mcp_servers: in config.yaml.")
        return
    table = [
        [
            row["name"],
            row["transport"],
            "yes" if row["enabled"] else "no",
            row["tools"],
            row["target"],
        ]
        for row in rows
    ]
    header = ["NAME", "TRANSPORT", "ENABLED", "TOOLS", "COMMAND OR URL"]
    for line in fit_table(header, table, terminal_width()):
        click.echo(line)


@mcp.command("test")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def test_server(ctx: click.Context, name: str, as_json: bool) -> None:
    """Connect to MCP server NAME, list its tools under their Hermes names, and disconnect.

    Exits 1 when NAME is not configured or the connection fails.

    \b
    Examples:
      hermes mcp test files
      hermes mcp test files --json
    """
    from hermes_hooks.bridges.mcp_client import McpClient, mcp_available

    pm, servers, problems = _servers(ctx)
    chosen = [server for server in servers if server.name == name]
    if not chosen:
        known = ", ".join(server.name for server in servers) or "none"
        hint = "; " + "; ".join(problems) if problems else ""
        raise click.ClickException(
            f"no MCP server {name!r} in mcp_servers (configured: {known}){hint}"
        )
    if not mcp_available():
        raise click.ClickException(
            "the 'mcp' package is not installed: pip install 'hermes-hooks[mcp]'"
        )
    server = chosen[0]
    if not server.enabled:
        warn(f"{name!r} has enabled: false; testing it anyway")
        import attrs

        server = attrs.evolve(server, enabled=True)
    started = time.perf_counter()
    client = McpClient(pm, [server], backoff_base=3600.0)
    try:
        client.wait_connected()
        state = client.servers[name]
        elapsed = round((time.perf_counter() - started) * 1000)
        report: dict[str, Any] = {
            "name": name,
            "connected": state.connected,
            "error": state.error,
            "milliseconds": elapsed,
            "tools": dict(sorted(state.tools.items())),
            "refused": dict(sorted(state.refused.items())),
            "filtered": [t for t in state.server_tools if not server.offers(t)],
        }
    finally:
        client.close()
    if as_json:
        echo_json(report)
    elif report["connected"]:
        click.echo(f"{name}: connected in {elapsed} ms, {len(report['tools'])} tools")
        for registered, original in report["tools"].items():
            click.echo(f"  {registered}  ({original})")
        for original, why in report["refused"].items():
            click.echo(f"  refused {original}: {why}")
        for original in report["filtered"]:
            click.echo(f"  filtered out {original} (tools.include / tools.exclude)")
    if not report["connected"]:
        if not as_json:
            click.echo(f"{name}: not connected: {report['error']}", err=True)
        ctx.exit(1)


@mcp.command("serve")
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP, not stdio.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The loopback address to listen on (with --http).",
)
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=int,
    help="The port to listen on (with --http); 0 picks a free one.",
)
@click.pass_context
def serve(ctx: click.Context, use_http: bool, host: str, port: int) -> None:
    """Publish the enabled plugins' tools and the host's tools to MCP clients.

    Each call runs through the same hooks as in 'hermes -z' (pre_tool_call, approvals,
    post_tool_call, transform_tool_result); a blocked call comes back as a tool error with
    the plugin's message. stdio by default (for a client that starts this command); with
    --http it listens on a loopback port at /mcp and prints the URL.

    \b
    Examples:
      claude mcp add hermes -- hermes mcp serve
      hermes mcp serve --http --port 8765
    """
    from hermes_hooks.bridges.mcp_server import LOOPBACK, serve_http, serve_stdio

    if use_http and host not in LOOPBACK:
        raise click.BadParameter(
            f"{host!r} is not a loopback address; use one of {', '.join(LOOPBACK)}",
            param_hint="--host",
        )
    pm = build_manager(ctx)
    connect_mcp(pm)  # the tools of mcp_servers: are served too
    if use_http:
        serve_http(pm, host=host, port=port, announce=lambda url: click.echo(url, err=True))
    else:
        serve_stdio(pm)

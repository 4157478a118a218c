"""``hermes plugins ...``: list what is installed, with the status an actual load gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from hermes_hooks.manager import PluginInfo, PluginManager

__all__ = ["plugins"]


def build_manager(ctx: click.Context) -> PluginManager:
    """Return a manager on the home chosen by ``--home``/``$HERMES_HOME``, discovered and loaded."""
    home: Path | None = ctx.find_root().meta.get("hermes.home")
    pm = PluginManager(home)
    pm.discover_and_load()
    return pm


@click.group()
def plugins() -> None:
    """List and inspect plugins.

    \b
    Example:
      hermes plugins list --all
    """


def _table(rows: list[list[str]], width: int) -> list[str]:
    headers = ["KEY", "STATUS", "VERSION", "KIND", "SOURCE", "DESCRIPTION"]
    table = [headers, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(headers) - 1)]
    lines = []
    for row in table:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        line = "  ".join([*cells, row[-1]])
        lines.append(line if len(line) <= width else line[: max(width - 1, 0)] + "…")
    return lines


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of plugin objects.")
@click.option("--all", "show_all", is_flag=True, help="Include bundled plugins.")
@click.option("--enabled", "only_enabled", is_flag=True, help="Only plugins that loaded.")
@click.option("--hook", "hook_name", metavar="NAME", help="Only plugins implementing hook NAME.")
@click.pass_context
def list_plugins(
    ctx: click.Context, as_json: bool, show_all: bool, only_enabled: bool, hook_name: str | None
) -> None:
    """List discovered plugins with the status an actual load gave them.

    \b
    Examples:
      hermes plugins list
      hermes plugins list --all --json
      hermes plugins list --hook pre_tool_call
    """
    pm = build_manager(ctx)
    infos: list[PluginInfo] = [
        info
        for info in pm.list_plugins()
        if (show_all or info.source != "bundled")
        and (not only_enabled or info.status == "enabled")
        and (hook_name is None or hook_name in info.hooks)
    ]
    if as_json:
        click.echo(json.dumps([info.to_dict() for info in infos], indent=2))
        return
    if not infos:
        hidden = sum(1 for info in pm.list_plugins() if info.source == "bundled")
        extra = f" ({hidden} bundled plugins hidden: use --all)" if hidden and not show_all else ""
        click.echo(
            f"No plugins found{extra}. Put a plugin folder in {pm.hermes_home / 'plugins'} and "
            "enable it with 'hermes plugins enable NAME'."
        )
        return
    width = shutil.get_terminal_size((100, 24)).columns
    rows = [
        [info.key, info.status, info.version or "-", info.kind, info.source, info.description]
        for info in infos
    ]
    lines = _table(rows, width)
    click.echo(lines[0])
    for line, info in zip(lines[1:], infos, strict=True):
        click.echo(line)
        if info.error:
            click.echo(f"    error: {info.error}")

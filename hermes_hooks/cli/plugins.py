"""``hermes plugins ...``: list, inspect, enable and disable plugins; install and check them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final

import attrs
import click

from hermes_hooks.cli.common import (
    build_manager,
    echo_json,
    fit_rows,
    fit_table,
    get_home,
    styled,
    terminal_width,
    wrap,
)
from hermes_hooks.cli.completion import complete_plugins
from hermes_hooks.cli.enabling import enable_candidate

if TYPE_CHECKING:
    from hermes_hooks.plugins.discovery import Candidate
    from hermes_hooks.plugins.manager import PluginInfo, PluginManager

__all__ = ["plugins"]


class AliasedGroup(click.Group):
    """A group whose commands also answer to short names (``ls``, ``rm``), as pip's and gh's."""

    aliases: ClassVar[Mapping[str, str]] = {"ls": "list", "rm": "remove"}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, self.aliases.get(cmd_name, cmd_name))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        _, command, rest = super().resolve_command(ctx, args)
        return (command.name if command else None), command, rest


@click.group(cls=AliasedGroup)
def plugins() -> None:
    """List, inspect, enable, disable, check, install and remove plugins.

    \b
    Examples:
      hermes plugins list --all
      hermes plugins enable no-rm
      hermes plugins doctor ./my-plugin
    """


# -- list -----------------------------------------------------------------------------------------


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

    A plugin that failed to load shows status 'error' and, on the next line, why. An
    invalid config.yaml is reported and the command exits 1, after the list.

    \b
    Examples:
      hermes plugins list
      hermes plugins list --all --json
      hermes plugins list --hook pre_tool_call
    """
    pm = build_manager(ctx)
    if _print_safe_mode(pm, as_json, show_all):
        return
    _print_list(pm, as_json, show_all, only_enabled, hook_name)
    if pm.config_error is not None:  # reported when it was read; the list used no config
        ctx.exit(1)


_STATUS_COLORS: Final = {"enabled": "green", "error": "red", "disabled": "yellow"}


def _status_style(cell: str) -> str:
    color = _STATUS_COLORS.get(cell.strip())
    return styled(cell, fg=color) if color else styled(cell, dim=True)


def _print_safe_mode(pm: PluginManager, as_json: bool, show_all: bool) -> bool:
    """In safe mode, list the plugins there are (manifests only) as not loaded; else False."""
    import os

    from hermes_hooks.plugins.config import SAFE_MODE_ENV, env_flag
    from hermes_hooks.plugins.discovery import discover_candidates

    if not env_flag(SAFE_MODE_ENV):
        return False
    env = {k: v for k, v in os.environ.items() if k != SAFE_MODE_ENV}
    found = [
        c
        for c in discover_candidates(hermes_home=pm.hermes_home, env=env)
        if show_all or c.source != "bundled"
    ]
    status = "not loaded: safe mode"
    if as_json:
        echo_json(
            [
                {
                    "key": c.key,
                    "status": status,
                    "source": c.source,
                    "version": c.manifest.version if c.manifest else None,
                    "path": str(c.path) if c.path else None,
                }
                for c in found
            ]
        )
        return True
    click.echo(f"Safe mode ({SAFE_MODE_ENV} is set): no plugin is loaded.", err=True)
    rows = [
        [c.key, status, (c.manifest.version if c.manifest else None) or "-", c.source]
        for c in found
    ]
    for line in fit_table(["KEY", "STATUS", "VERSION", "SOURCE"], rows, terminal_width()):
        click.echo(line)
    return True


def _print_list(
    pm: PluginManager, as_json: bool, show_all: bool, only_enabled: bool, hook_name: str | None
) -> None:
    everything = pm.list_plugins()
    infos = [
        info
        for info in everything
        if (show_all or info.source != "bundled")
        and (not only_enabled or info.status == "enabled")
        and (hook_name is None or hook_name in info.hooks)
    ]
    if as_json:
        echo_json([info.to_dict() for info in infos])
        return
    if not infos:
        hidden = sum(1 for info in everything if info.source == "bundled")
        extra = f" ({hidden} bundled plugins hidden: use --all)" if hidden and not show_all else ""
        click.echo(
            f"No plugins found{extra}. Install one with 'hermes plugins install PATH' or put a "
            f"plugin folder in {pm.hermes_home / 'plugins'}, then 'hermes plugins enable NAME'."
        )
        return
    width = terminal_width()
    refused = {info.key: [w for w in info.warnings if " refused: " in w] for info in infos}
    rows = [
        [
            info.key,
            info.status + ("!" if refused[info.key] else ""),  # a registration was refused
            info.version or "-",
            info.kind,
            info.source,
            info.description,
        ]
        for info in infos
    ]
    headers = ["KEY", "STATUS", "VERSION", "KIND", "SOURCE", "DESCRIPTION"]
    header, laid = fit_rows(headers, rows, width, styles={1: _status_style})
    for line in header:
        click.echo(line)
    for lines, info in zip(laid, infos, strict=True):
        for line in lines:
            click.echo(line)
        if info.error:
            for part in wrap(f"error: {info.error}", width, "    ", " " * 11):
                click.echo(part)
        for warning in refused[info.key]:
            for part in wrap(f"refused: {warning}", width, "    ", " " * 13):
                click.echo(part)
        if info.replacement:
            for part in wrap(f"note: {info.replacement}", width, "    ", " " * 10):
                click.echo(part)
        if info.platforms:  # kind: platform plugins (hermes gateway run connects them)
            names = ", ".join(info.platforms)
            for part in wrap(f"platforms: {names}", width, "    ", " " * 15):
                click.echo(part)


# -- enable / disable -----------------------------------------------------------------------------


def _resolve(ctx: click.Context, name: str) -> Candidate:
    from hermes_hooks.admin.actions import resolve_plugin

    return resolve_plugin(build_manager(ctx, load=False).discover(), name)


@plugins.command("enable")
@click.argument("name", shell_complete=complete_plugins)
@click.option(
    "--allow-tool-override/--no-allow-tool-override",
    "allow",
    default=None,
    help="Answer whether the plugin may replace host tools, without asking.",
)
@click.option(
    "--yes",
    is_flag=True,
    help="Trust a project plugin's files and install missing pip_dependencies without asking.",
)
@click.pass_context
def enable(ctx: click.Context, name: str, allow: bool | None, yes: bool) -> None:
    """Enable plugin NAME (a key, a folder name, a manifest name or a category leaf).

    Adds its key to plugins.enabled and removes it from plugins.disabled (a flat plugin's
    key is its manifest name, as in Hermes; its folder name resolves too). A memory or
    model-provider plugin is chosen by its family's key instead (memory.provider,
    model.provider), so enabling one says so. Missing pip_dependencies are offered for
    installation with pip (--yes installs them without asking; without a terminal and --yes
    they are not installed). When a plugin that is not bundled asks to replace host tools,
    you are asked once whether to allow it; without a terminal the answer is no. A project
    plugin is trusted as its files are now: enabling one shows its files and their digests,
    the plugin it would replace and its pip dependencies, and asks (--yes agrees; without a
    terminal and --yes it is not enabled). Their digests are recorded, it runs only the .py
    sources checked, and once they change it does not load until it is enabled again.

    \b
    Examples:
      hermes plugins enable no-rm
      hermes plugins enable openai --no-allow-tool-override
    """
    enable_candidate(ctx, _resolve(ctx, name), allow, yes=yes)


@plugins.command("disable")
@click.argument("name", shell_complete=complete_plugins)
@click.pass_context
def disable(ctx: click.Context, name: str) -> None:
    """Disable plugin NAME: add it to plugins.disabled, which beats plugins.enabled.

    \b
    Example:
      hermes plugins disable tool-log
    """
    from hermes_hooks.admin.actions import set_enabled

    candidate = _resolve(ctx, name)
    if set_enabled(get_home(ctx), candidate, False):
        click.echo(f"Plugin {candidate.key!r} disabled.")
    else:
        click.echo(f"Plugin {candidate.key!r} is already disabled.")


# -- info -----------------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if attrs.has(type(value)):
        return {f.name: _jsonable(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, frozenset | set):
        return sorted(_jsonable(v) for v in value)
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _hook_positions(pm: PluginManager, key: str) -> dict[str, dict[str, Any]]:
    from hermes_hooks.admin.introspect import list_hook_order

    positions: dict[str, dict[str, Any]] = {}
    for order in list_hook_order(pm):
        mine = [impl.position for impl in order.impls if impl.plugin == key]
        if mine:
            positions[order.hook] = {"positions": mine, "of": len(order.impls)}
    return positions


def _capability_grants(pm: PluginManager, key: str, manifest: Any) -> dict[str, bool]:
    """The capabilities the manifest declares, each with whether it is granted now."""
    from hermes_hooks.plugins.capabilities import capability_granted

    declared = list(getattr(manifest, "capabilities", ()) or ())
    entry = pm.plugins_config.entry(key)
    return {name: capability_granted(entry, name) for name in declared}


def _info_lines(info: PluginInfo, manifest: Any, extra: Mapping[str, Sequence[str]]) -> list[str]:
    def listed(values: Sequence[str]) -> str:
        return ", ".join(values) or "-"

    status = info.status + (f" ({info.reason})" if info.reason else "")
    if info.load_ms is not None:
        status += f", loaded in {info.load_ms:.1f} ms"
    rows: list[tuple[str, str]] = [
        ("description", info.description or "-"),
        ("version", info.version or "-"),
        ("kind", info.kind),
        ("source", info.source),
        ("path", info.path or "-"),
        ("status", status),
    ]
    if info.error:
        rows.append(("error", info.error))
    if manifest is not None:
        if manifest.author_display:
            rows.append(("author", manifest.author_display))
        for label, values in (
            ("requires env", manifest.required_env_names),
            ("pip deps", manifest.pip_dependencies),
            ("provides tools", manifest.provides_tools),
            ("provides hooks", manifest.provides_hooks),
        ):
            if values:
                rows.append((label, listed(values)))
    for label, values in extra.items():
        rows.append((label, listed(values)))
    if info.hook_errors:
        rows.append(("hook errors", f"{info.hook_errors}, last: {info.last_hook_error}"))
    rows.extend(("warning", warning) for warning in info.warnings)
    width = terminal_width()
    lines = [f"{info.key} ({info.name})" if info.name != info.key else info.key]
    for label, value in rows:
        lines.extend(wrap(value, width, f"  {label + ':':<16}", " " * 18))
    return lines


@plugins.command("info")
@click.argument("name", shell_complete=complete_plugins)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def info(ctx: click.Context, name: str, as_json: bool) -> None:
    """Show what is known of plugin NAME: manifest, status, and what it registered.

    Hooks are shown with their place in the call order (1 runs first).

    \b
    Examples:
      hermes plugins info no-rm
      hermes plugins info no-rm --json
    """
    from hermes_hooks.admin.actions import resolve_plugin
    from hermes_hooks.admin.introspect import registrations_of

    pm = build_manager(ctx)
    found = resolve_plugin(pm.list_plugins(), name)
    manifest = next((c.manifest for c in pm.discover() if c.key == found.key), None)
    positions = _hook_positions(pm, found.key)
    registered = registrations_of(pm, found.key)
    grants = _capability_grants(pm, found.key, manifest)
    if as_json:
        data = found.to_dict()
        data["capabilities"] = grants
        data["hook_order"] = positions
        data["providers"] = registered["providers"]
        data["manifest"] = _jsonable(manifest) if manifest is not None else None
        echo_json(data)
        return
    hooks = [
        f"{hook} ({', '.join(map(str, p['positions']))} of {p['of']})"
        for hook, p in sorted(positions.items())
    ]
    extra = {
        "hooks": hooks,
        "tools": registered["tools"],
        "commands": [f"/{n}" for n in registered["commands"]],
        "cli commands": [f"hermes {n}" for n in registered["cli_commands"]],
        "skills": registered["skills"],
        "providers": registered["providers"],
    }
    if grants:
        extra["capabilities"] = [
            f"{name} ({'granted' if granted else 'not granted'})"
            for name, granted in grants.items()
        ]
    if found.status != "enabled":
        extra = {k: v for k, v in extra.items() if v}
    for line in _info_lines(found, manifest, extra):
        click.echo(line)


@plugins.command("new")
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default="the current folder",
    help="Where the project folder NAME is made.",
)
@click.option("--description", default="", help="The plugin's one-line description.")
@click.option("--author", default="", help="The manifest's author.")
def new(name: str, parent: Path, description: str, author: str) -> None:
    """Start a plugin project NAME: the plugin, a test on the fixtures, a pyproject.toml.

    Writes NAME/pyproject.toml (a pip package with the hermes_agent.plugins entry point and
    the manifest and skills as package data), NAME/MODULE/plugin.yaml and __init__.py (a
    tool and a pre_tool_call hook through register(ctx)), NAME/MODULE/skills/ and
    NAME/tests/. Nothing is written over.

    \b
    Examples:
      hermes plugins new pr-review
      hermes plugins new pr-review --dir ~/src --description "Reviews pull requests"
    """
    from hermes_hooks.admin.scaffold import create_plugin_project

    made = create_plugin_project(name, parent, description=description, author=author)
    click.echo(f"Created plugin project {name!r} in {made.root}:")
    for relative in made.files:
        click.echo(f"  {relative}")
    module = made.module.name
    click.echo("")
    click.echo("Next:")
    click.echo(f"  cd {made.root} && pip install -e '.[test]' && python -m pytest")
    click.echo(f"  hermes plugins install ./{module} && hermes plugins enable {name}")


def _register_subcommands() -> None:
    from hermes_hooks.cli.config import plugin_config
    from hermes_hooks.cli.doctor import plugin_doctor
    from hermes_hooks.cli.install import install, remove, search, update

    plugins.add_command(install)
    plugins.add_command(remove)
    plugins.add_command(update)
    plugins.add_command(search)
    plugins.add_command(plugin_doctor)
    plugins.add_command(plugin_config)


_register_subcommands()

"""``hermes hooks`` (implementations in call order) and ``hermes tools`` (registered tools)."""

from __future__ import annotations

from typing import Any

import click
from click.shell_completion import CompletionItem

from hermes_hooks.cli.common import (
    build_manager,
    connect_mcp,
    echo_json,
    fit_table,
    is_terminal,
    terminal_width,
)
from hermes_hooks.cli.completion import complete_hooks
from hermes_hooks.cli.families import family_commands
from hermes_hooks.cli.shellhooks import add_shell_hook_commands

__all__ = ["hooks", "tools"]


def _options(impl: object) -> str:
    flags = [
        flag
        for flag in ("wrapper", "hookwrapper", "tryfirst", "trylast")
        if getattr(impl, flag, False)
    ]
    if getattr(impl, "via_register_hook", False):
        flags.append("register_hook")
    return ",".join(flags) or "-"


class HooksGroup(click.Group):
    """``hermes hooks [NAME]``: a first argument that is no sub-command is a hook's name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["show", *args]
        return super().parse_args(ctx, args)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The sub-commands, and the hook names ``hermes hooks NAME`` takes."""
        names = complete_hooks(ctx, self.params[0], incomplete) if self.params else []
        return [*super().shell_complete(ctx, incomplete), *names]


@click.group("hooks", cls=HooksGroup, invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of hooks.")
@click.pass_context
def hooks(ctx: click.Context, as_json: bool) -> None:
    """Show each hook's implementations in the order they run; manage the shell hooks.

    The first listed is entered first: pluggy runs later-registered plugins first, tryfirst
    and trylast move an implementation, and wrappers wrap around all the others. Without
    NAME, only hooks that have implementations are listed. Shell hooks (hooks: in
    config.yaml) show as plugin shell:COMMAND; list, test, revoke and doctor are about them.

    \b
    Examples:
      hermes hooks
      hermes hooks pre_tool_call --json
      hermes hooks list
    """
    if ctx.invoked_subcommand is None:
        _show(ctx, None, as_json)


@hooks.command("show", hidden=True)
@click.argument("name", shell_complete=complete_hooks)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of hooks.")
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Show hook NAME's implementations in the order they run.

    \b
    Example:
      hermes hooks pre_tool_call
    """
    _show(ctx, name, as_json)


def _show(ctx: click.Context, name: str | None, as_json: bool) -> None:
    from hermes_hooks.admin.actions import closest_names
    from hermes_hooks.admin.introspect import list_hook_order

    pm = build_manager(ctx)
    orders = list_hook_order(pm, name)
    if name is not None and not orders:
        close = closest_names(name, pm.known_hooks())
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise click.ClickException(f"Unknown hook {name!r}{hint}")
    if name is None:
        orders = [order for order in orders if order.impls]
    if as_json:
        echo_json([order.to_dict() for order in orders])
        return
    if not orders:
        click.echo("No hook has an implementation: no plugin is enabled ('hermes plugins list').")
        return
    width = terminal_width()
    for index, order in enumerate(orders):
        if index:
            click.echo("")
        known = "" if order.known else ", unknown to this host: never called"
        click.echo(f"{order.hook} ({order.mode}, fails {order.policy}{known})")
        if not order.impls:
            click.echo("  (no implementations)")
            continue
        rows = [
            [str(impl.position), impl.plugin, _options(impl), impl.function] for impl in order.impls
        ]
        inner = width - 2 if width is not None else None
        for line in fit_table(["#", "PLUGIN", "OPTIONS", "FUNCTION"], rows, inner):
            click.echo(f"  {line}")


add_shell_hook_commands(hooks)


class ToolsGroup(click.Group):
    """``hermes tools``: its own listing, and one sub-command per provider family.

    The families' commands are looked up when the command line is read, not when this module
    is imported: a family listed later (by a test, by a host) has its command too.
    """

    def _families(self) -> dict[str, click.Command]:
        return {command.name or "": command for command in family_commands()}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._families()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        return command if command is not None else self._families().get(cmd_name)


@click.group("tools", cls=ToolsGroup, invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of tools.")
@click.pass_context
def tools(ctx: click.Context, as_json: bool) -> None:
    """List registered tools, their owners, and whether each is available.

    On a terminal it then asks which provider each family uses (image generation...): choose
    a family, a provider and a model, and enter a missing API key, which is saved to
    $HERMES_HOME/.env. 'hermes tools FAMILY --provider NAME' does the same without asking.

    \b
    Examples:
      hermes tools
      hermes tools --json
    """
    if ctx.invoked_subcommand is not None:
        return
    from hermes_hooks.admin.introspect import list_tools

    pm = build_manager(ctx)
    connect_mcp(pm)
    infos = list_tools(pm)
    if as_json:
        echo_json([info.to_dict() for info in infos])
        return
    _print_tools(infos)
    if is_terminal():
        from hermes_hooks.cli.picker import run_picker

        run_picker(pm)


def _print_tools(infos: list[Any]) -> None:
    if not infos:
        click.echo("No tools are registered: enable a plugin that provides some.")
        return
    rows = [
        [info.name, info.toolset, info.owner, "yes" if info.available else f"no: {info.reason}"]
        for info in infos
    ]
    for line in fit_table(["NAME", "TOOLSET", "OWNER", "AVAILABLE"], rows, terminal_width()):
        click.echo(line)

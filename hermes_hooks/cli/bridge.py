"""Plugin CLI commands (``ctx.register_cli_command``) as ``hermes NAME`` click commands.

A plugin declares its arguments on an argparse parser, as in Hermes; the click command here
takes every argument raw and hands them to
:meth:`~hermes_hooks.registries.commands.CliCommand.run`, so
``hermes NAME --help`` is argparse's help and a bad argument is argparse's exit code 2.
"""

from __future__ import annotations

import json
from collections.abc import Set
from typing import TYPE_CHECKING, Any

import click

from hermes_hooks.cli.common import build_manager, warn

if TYPE_CHECKING:
    from hermes_hooks.registries.commands import CliCommand

__all__ = ["load_plugin_commands", "make_click_command", "show_result"]

_RAW_ARGS: dict[str, Any] = {
    "ignore_unknown_options": True,
    "allow_extra_args": True,
    "help_option_names": [],
}


def make_click_command(command: CliCommand) -> click.Command:
    """Return a click command that passes its raw arguments to the plugin's argparse parser."""

    @click.pass_context
    def run(ctx: click.Context) -> None:
        show_result(ctx, command.run(list(ctx.args)))

    summary = command.help or f"A command of plugin {command.owner!r}."
    return click.Command(
        command.name,
        callback=run,
        help=f"{command.description or summary}\n\n(from plugin {command.owner!r})",
        short_help=f"{summary} [{command.owner}]",
        context_settings=dict(_RAW_ARGS),
        add_help_option=False,
    )


def show_result(ctx: click.Context, result: object) -> None:
    """Turn what a plugin command's handler returned into output and an exit code.

    A ``str`` is printed (as is, with a newline added when it has none); an ``int`` is the exit
    code; ``None`` prints nothing; a ``dict`` or ``list`` is printed as JSON, anything else as
    ``str(result)``. A ``bool`` is not an exit code: ``True`` and ``False`` are printed.
    """
    if result is None:
        return
    if isinstance(result, int) and not isinstance(result, bool):
        ctx.exit(result)
    if isinstance(result, dict | list):
        text = json.dumps(result, indent=2, ensure_ascii=False, default=str)
    else:
        text = result if isinstance(result, str) else str(result)
    click.echo(text, nl=not text.endswith("\n"))


def load_plugin_commands(ctx: click.Context, builtin: Set[str]) -> dict[str, click.Command]:
    """Load the plugins and return their CLI commands; a clash with *builtin* is refused.

    A failure to load plugins at all (a broken config, say) is a warning: the built-in
    commands keep working.
    """
    from hermes_hooks.errors import HermesHooksError

    try:
        pm = build_manager(ctx)
    except HermesHooksError as exc:
        warn(f"plugin commands are not available: {exc}")
        return {}
    commands: dict[str, click.Command] = {}
    for name in pm.cli_commands.names():
        command = pm.cli_commands.get(name)
        if command is None:
            continue
        if name in builtin:
            warn(
                f"plugin {command.owner!r} registers CLI command {name!r}, which is a built-in "
                f"hermes command; the plugin's command is refused"
            )
            continue
        commands[name] = make_click_command(command)
    return commands

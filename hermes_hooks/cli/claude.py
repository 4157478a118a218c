"""``hermes claude-hook``: answer Claude Code's hook events; ``install`` writes its settings."""

from __future__ import annotations

import sys
from pathlib import Path

import click

__all__ = ["claude_hook"]


@click.group("claude-hook", invoke_without_command=True)
@click.pass_context
def claude_hook(ctx: click.Context) -> None:
    """Answer one Claude Code hook event: its JSON on stdin, Claude Code's JSON on stdout.

    PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart and
    SessionEnd run the enabled plugins' hooks (Bash is terminal, Read/Write/Edit are the file
    tools); a pre_tool_call block is a "deny" with the plugin's message. Exits 2 (a blocking
    error for Claude Code) when stdin is not a hook event. 'hermes claude-hook install' adds
    this command to Claude Code's settings.

    \b
    Examples:
      hermes claude-hook install
      echo '{"hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": "rm -rf /"}}' | hermes claude-hook
    """
    if ctx.invoked_subcommand is not None:
        return
    from hermes_hooks.bridges.claude_code import run

    root = ctx.find_root()
    home = root.params.get("home")
    ctx.exit(run(hermes_home=Path(home) if home else None))


@claude_hook.command("install")
@click.option("--project", is_flag=True, help="Write .claude/settings.json of this folder.")
@click.option(
    "--settings",
    "settings",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write this settings file instead.",
)
@click.pass_context
def install(ctx: click.Context, project: bool, settings: Path | None) -> None:
    """Add 'hermes claude-hook' to Claude Code's hook settings, for every event it answers.

    The user's ~/.claude/settings.json by default. The file's other settings and hooks are
    kept, installing twice adds nothing, and the file is replaced in one step.

    \b
    Examples:
      hermes claude-hook install
      hermes claude-hook install --project
    """
    from hermes_hooks.bridges.claude_settings import hook_command, install_hooks, settings_path
    from hermes_hooks.errors import ConfigError

    path = settings or settings_path(project)
    home = ctx.find_root().params.get("home")
    command = hook_command(Path(home) if home else None)
    try:
        added = install_hooks(path, command)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    if added:
        click.echo(f"{path}: {command} now answers {', '.join(added)}")
    else:
        click.echo(f"{path}: already set up ({command})")
    sys.stdout.flush()


@claude_hook.command("uninstall")
@click.option("--project", is_flag=True, help="Edit .claude/settings.json of this folder.")
@click.option(
    "--settings",
    "settings",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Edit this settings file instead.",
)
def uninstall(project: bool, settings: Path | None) -> None:
    """Remove 'hermes claude-hook' from Claude Code's hook settings; keep everything else.

    \b
    Examples:
      hermes claude-hook uninstall
      hermes claude-hook uninstall --project
    """
    from hermes_hooks.bridges.claude_settings import settings_path, uninstall_hooks
    from hermes_hooks.errors import ConfigError

    path = settings or settings_path(project)
    try:
        removed = uninstall_hooks(path)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    if removed:
        click.echo(f"{path}: hermes claude-hook no longer answers {', '.join(removed)}")
    else:
        click.echo(f"{path}: hermes claude-hook was not set up there")

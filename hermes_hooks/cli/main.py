"""The root ``hermes`` group, its error handling and its entry point."""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import click

from hermes_hooks import __version__

__all__ = ["PLUGIN_COMMANDS_HINT", "HermesGroup", "cli", "main"]

PLUGIN_COMMANDS_HINT = (
    "The commands of the enabled plugins run as 'hermes NAME' ('hermes NAME --help' for "
    "one); 'hermes plugins list' shows them. This help loads no plugin to list them."
)


class HermesGroup(click.Group):
    """The root group: built-in commands imported on first use, plugin commands on demand.

    Built-in commands are registered by import path (:meth:`add_lazy_command`), so that
    ``hermes --version`` imports none of them. Plugins are discovered and loaded only when a
    name that is not built in is looked up (never for ``--help``, ``--version`` or a built-in
    command's ``--help``); commands they registered with ``ctx.register_cli_command`` then run
    as ``hermes NAME``.
    Errors are shown as one line (``--debug`` shows the traceback), exit code 1.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands: dict[str, str] = {}

    def add_lazy_command(self, name: str, target: str) -> None:
        """Register built-in command *name*, imported from ``"package.module:attribute"``."""
        self.lazy_commands[name] = target

    def builtin_names(self) -> list[str]:
        """Return the names of the built-in commands, sorted."""
        return sorted(set(self.commands) | set(self.lazy_commands))

    def get_builtin(self, name: str) -> click.Command | None:
        """Return built-in command *name* (importing it if needed), or ``None``."""
        command = self.commands.get(name)
        if command is None and name in self.lazy_commands:
            module, _, attribute = self.lazy_commands[name].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            assert isinstance(command, click.Command)
            self.add_command(command, name)
        return command

    def plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        """Return the commands plugins registered (loading plugins once per invocation)."""
        meta = ctx.find_root().meta
        if "hermes.plugin_commands" not in meta:
            from hermes_hooks.cli.bridge import load_plugin_commands

            meta["hermes.plugin_commands"] = load_plugin_commands(ctx, set(self.builtin_names()))
        commands: dict[str, click.Command] = meta["hermes.plugin_commands"]
        return commands

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.get_builtin(cmd_name) or self.plugin_commands(ctx).get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.builtin_names()) | set(self.plugin_commands(ctx)))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        command = self.get_command(ctx, name)
        if command is None and not ctx.resilient_parsing:
            if name.startswith("-"):
                self.parse_args(ctx, args)  # an option after the command name: let click say so
            unloaded = _unloaded_plugin(ctx, name)
            if unloaded is not None:
                raise click.UsageError(unloaded, ctx)
            close = difflib.get_close_matches(name, self.list_commands(ctx))
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
        return (name if command else None), command, args[1:]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The help loads no plugin: it is instant and harmless whatever is installed. Plugin
        # commands already loaded in this run are listed; otherwise, where to find them.
        builtin = [(n, c) for n in self.builtin_names() if (c := self.get_builtin(n)) is not None]
        plugin = sorted(ctx.find_root().meta.get("hermes.plugin_commands", {}).items())
        for title, commands in (("Commands", builtin), ("Plugin commands", plugin)):
            visible = [(name, cmd) for name, cmd in commands if not cmd.hidden]
            if not visible:
                continue
            limit = formatter.width - 6 - max(len(name) for name, _ in visible)
            with formatter.section(title):
                formatter.write_dl([(n, c.get_short_help_str(limit)) for n, c in visible])
        if not plugin:
            with formatter.section("Plugin commands"):
                formatter.write_text(PLUGIN_COMMANDS_HINT)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["hermes.argv"] = tuple(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        from hermes_hooks.errors import HermesHooksError

        # A command asked for JSON gets its error as JSON too.
        wants_json = "--json" in ctx.meta.get("hermes.argv", ())
        try:
            result = super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # The reader went away (| head): click ends quietly, like other commands do.
            raise
        except Exception as exc:
            if ctx.meta.get("hermes.debug"):
                raise
            if wants_json:
                _echo_json_error(exc)
            elif str(exc) in ctx.meta.get("hermes.reported", ()):
                pass  # the config error this command already reported, once
            elif isinstance(exc, HermesHooksError):
                click.echo(f"{click.style('Error', fg='red')}: {exc}", err=True)
            else:
                click.echo(
                    f"{click.style('Error', fg='red')}: {type(exc).__name__}: {exc}"
                    " (--debug shows the traceback)",
                    err=True,
                )
            ctx.exit(1)
        if ctx.meta.get("hermes.config_error"):
            ctx.exit(1)  # every command exits 1 on a broken config.yaml, after what it could do
        return result


def _unloaded_plugin(ctx: click.Context, name: str) -> str | None:
    """Say so when *name* is a plugin that did not load (its command is then unknown)."""
    pm = ctx.find_root().meta.get("hermes.manager")
    if pm is None:
        return None
    for info in pm.list_plugins():
        if name not in (info.key, info.key.rsplit("/", 1)[-1]) or info.status == "enabled":
            continue
        if info.status == "disabled":
            how = f"it is disabled: 'hermes plugins enable {info.key}' enables it"
        elif info.status == "not enabled":
            how = f"it is not enabled: 'hermes plugins enable {info.key}' enables it"
        else:
            how = f"it did not load ({info.status}): 'hermes plugins info {info.key}' says why"
        return f"{name!r} is the command of plugin {info.key!r}, which is not loaded; {how}."
    return None


def _echo_json_error(exc: BaseException) -> None:
    """Print a failure as the JSON object ``--json`` commands give on failure, on stdout."""
    import json

    from hermes_hooks.errors import HermesHooksError

    message = str(exc) if isinstance(exc, HermesHooksError) else f"{type(exc).__name__}: {exc}"
    error: dict[str, Any] = {"error": message, "type": type(exc).__name__}
    candidates = getattr(exc, "candidates", None)
    if isinstance(candidates, tuple):
        error["candidates"] = list(candidates)
    click.echo(json.dumps(error, indent=2, ensure_ascii=False))


def _show_version(ctx: click.Context, param: click.Parameter, value: int) -> None:
    """``-V``: the version (imports no plugin code); ``-VV``: and the plugins that load."""
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"hermes, version {__version__}")
    if value >= 2:
        from hermes_hooks.cli.common import build_manager

        loaded = [info for info in build_manager(ctx).list_plugins() if info.status == "enabled"]
        click.echo("loaded plugins:" if loaded else "loaded plugins: none")
        for info in loaded:
            where = f" at {info.path}" if info.path else ""
            click.echo(f"  {info.key}-{info.version or '?'} ({info.source}){where}")
    ctx.exit()


def _set_disabled(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    # Eager and in the environment: every manager of this run, and its subprocesses, see it.
    if not value:
        return
    from hermes_hooks.plugins.config import DISABLE_PLUGINS_ENV

    before = os.environ.get(DISABLE_PLUGINS_ENV, "")
    os.environ[DISABLE_PLUGINS_ENV] = ",".join([*filter(None, before.split(",")), *value])


def _set_color(ctx: click.Context, param: click.Parameter, value: str) -> None:
    from hermes_hooks.cli.common import use_color

    ctx.meta["hermes.color"] = value
    ctx.color = use_color(ctx)  # click.echo strips the styles where this is False


def _set_home(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    ctx.meta["hermes.home"] = value
    return value


def _set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    # Eager, so that it is on before plugins are loaded to look up a plugin command.
    from hermes_hooks.plugins.config import DEBUG_ENV, is_truthy

    debug = value or is_truthy(os.environ.get(DEBUG_ENV))
    ctx.meta["hermes.debug"] = debug
    if debug:
        os.environ[DEBUG_ENV] = "1"
    return debug


def _set_accept_hooks(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:  # the environment carries it to the manager the command builds
        os.environ["HERMES_ACCEPT_HOOKS"] = "1"


_GLOBAL_OPTIONS: Final = (
    click.option(
        "-V",
        "--version",
        count=True,
        is_eager=True,
        expose_value=False,
        callback=_show_version,
        help="Show the version and exit; -VV also lists the plugins that load, as pytest -VV does.",
    ),
    click.option(
        "--home",
        type=click.Path(file_okay=False, path_type=Path),
        envvar="HERMES_HOME",
        help="The Hermes home folder (default: $HERMES_HOME or ~/.hermes).",
        callback=_set_home,
        is_eager=True,
    ),
    click.option(
        "--disable",
        "disable",
        multiple=True,
        metavar="NAME",
        callback=_set_disabled,
        is_eager=True,
        expose_value=False,
        help="Do not load plugin NAME in this run (repeatable; also HERMES_DISABLE_PLUGINS=a,b).",
    ),
    click.option(
        "--accept-hooks",
        is_flag=True,
        callback=_set_accept_hooks,
        is_eager=True,
        expose_value=False,
        help="Approve the shell hooks of config.yaml without asking (also HERMES_ACCEPT_HOOKS=1).",
    ),
    click.option(
        "--debug",
        is_flag=True,
        callback=_set_debug,
        is_eager=True,
        help="Show tracebacks and plugin loading decisions.",
    ),
    click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default="auto",
        callback=_set_color,
        is_eager=True,
        expose_value=False,
        help="Colour the output: auto (on a terminal, unless NO_COLOR; FORCE_COLOR forces it).",
    ),
    click.option(
        "-z",
        "--oneshot",
        metavar="PROMPT",
        help="Run one agent turn on PROMPT, print the answer and exit.",
    ),
    click.option(
        "--json", "as_json", is_flag=True, help="With -z: print the turn's events as JSON."
    ),
    click.option(
        "-m", "--model", "model", metavar="NAME", help="The model for this run (not saved)."
    ),
    click.option("--provider", metavar="NAME", help="The model provider for this run (not saved)."),
)
"""The options before the command (``hermes [OPTIONS] COMMAND``), in the order ``--help``
shows them."""


def _global_options(function: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_GLOBAL_OPTIONS):
        function = option(function)
    return function


@click.group(
    cls=HermesGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
)
@_global_options
@click.pass_context
def cli(
    ctx: click.Context,
    home: Path | None,
    debug: bool,
    oneshot: str | None,
    as_json: bool,
    model: str | None,
    provider: str | None,
) -> None:
    """Manage Hermes plugins and their hooks, and run the agent.

    With no command, on a terminal, it starts 'hermes chat' (as Hermes does); elsewhere it
    prints this help.

    -z PROMPT prints the answer alone on stdout (what plugins print, and progress, go to
    stderr); '-z -' reads the prompt from stdin. It exits 0 when the turn answered, 1 when it
    failed (the model request failed, or the turn ended in an error), 2 on a usage error (an
    empty prompt), 130 on Ctrl-C. -m/--model and --provider choose for this run only.

    \b
    Examples:
      hermes -z "Generate an image of a corgi in a spacesuit"
      git diff | hermes -z - --model gpt-4.1 --provider openai
      hermes plugins list --all
      hermes plugins enable no-rm
      hermes hooks pre_tool_call
      hermes doctor
    """
    ctx.meta["hermes.model_choice"] = (provider, model)
    if oneshot is not None:
        from hermes_hooks.cli.agent import read_prompt, run_oneshot

        run_oneshot(ctx, read_prompt(ctx, oneshot), as_json)
    elif as_json and ctx.invoked_subcommand is None:
        raise click.UsageError("--json here goes with -z PROMPT; commands have their own --json")
    elif ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            from hermes_hooks.cli.agent import chat

            ctx.invoke(chat)
        else:
            click.echo(ctx.get_help())


def _register_commands() -> None:
    cli.add_lazy_command("plugins", "hermes_hooks.cli.plugins:plugins")
    cli.add_lazy_command("hooks", "hermes_hooks.cli.hooks:hooks")
    cli.add_lazy_command("tools", "hermes_hooks.cli.hooks:tools")
    cli.add_lazy_command("skills", "hermes_hooks.cli.skills:skills")
    cli.add_lazy_command("memory", "hermes_hooks.cli.memory:memory")
    cli.add_lazy_command("doctor", "hermes_hooks.cli.doctor:doctor")
    cli.add_lazy_command("chat", "hermes_hooks.cli.agent:chat")
    cli.add_lazy_command("gateway", "hermes_hooks.cli.agent:gateway")
    cli.add_lazy_command("models", "hermes_hooks.cli.models:models")
    cli.add_lazy_command("mcp", "hermes_hooks.cli.mcp:mcp")
    cli.add_lazy_command("claude-hook", "hermes_hooks.cli.claude:claude_hook")
    cli.add_lazy_command("dashboard", "hermes_hooks.cli.dashboard:dashboard")
    cli.add_lazy_command("dashboard-auth", "hermes_hooks.cli.dashboard:dashboard_auth")
    cli.add_lazy_command("config", "hermes_hooks.cli.config:config")
    cli.add_lazy_command("completion", "hermes_hooks.cli.completion:completion")
    cli.add_lazy_command("version", "hermes_hooks.cli.completion:version")
    cli.add_lazy_command("kanban", "hermes_hooks.cli.kanban:kanban")
    cli.add_lazy_command("cron", "hermes_hooks.cli.cron:cron")
    cli.add_lazy_command("pairing", "hermes_hooks.cli.pairing:pairing")


_register_commands()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the ``hermes`` command (the console script's entry point).

    When the command is done, a thread a plugin left running does not keep the process alive
    for more than a short grace period (:mod:`hermes_hooks.cli.lifetime`).
    """
    try:
        cli.main(args=list(argv) if argv is not None else sys.argv[1:], prog_name="hermes")
    except SystemExit as exc:
        from hermes_hooks.cli.lifetime import finish

        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finish(code)
        raise

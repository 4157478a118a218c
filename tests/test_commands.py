"""Tests for hermes_hooks.registries.commands: slash commands and plugins' ``hermes <name>``."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from plugin_builders import PluginHome, home, info
from recording import noted

from hermes_hooks.errors import PluginLoadError, RegistrationError
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.registries.commands import (
    BUILTIN_CLI_COMMANDS,
    BUILTIN_SLASH_COMMANDS,
    CliCommand,
    CliCommandRegistry,
    CommandRegistry,
    normalize_command_name,
)

__all__ = ["home"]  # the fixture, imported for pytest


@pytest.fixture
def commands() -> CommandRegistry:
    """A slash-command registry with the host's built-ins reserved."""
    return CommandRegistry()


@pytest.fixture
def cli_commands() -> CliCommandRegistry:
    """A CLI-command registry with the framework's built-ins reserved."""
    return CliCommandRegistry()


def reply(raw_args: str) -> str:
    return f"reply:{raw_args}"


# --- slash command names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "stored"),
    [
        ("deploy", "deploy"),
        ("/deploy", "deploy"),
        ("Deploy", "deploy"),
        ("  /Deploy Now ", "deploy-now"),
        ("git status", "git-status"),
        ("//twice", "twice"),
        ("v1.2_beta", "v1.2_beta"),
    ],
)
def test_names_are_normalised(requested: str, stored: str) -> None:
    assert normalize_command_name(requested) == stored


@pytest.mark.parametrize("bad", ["", "/", "   ", "-dash-first", "semi;colon", "ünïcode", "a/b"])
def test_invalid_names_refused(commands: CommandRegistry, bad: str) -> None:
    with pytest.raises(RegistrationError, match=r"invalid|non-empty"):
        commands.register_command(bad, reply, owner="plug")
    assert commands.names() == []


def test_registered_under_normalised_name(commands: CommandRegistry) -> None:
    commands.register_command("/Deploy Now", reply, description="Ship it", owner="plug")

    command = commands.get("deploy-now")
    assert command is not None
    assert command.name == "deploy-now"
    assert command.owner == "plug"
    assert command.description == "Ship it"
    assert command.handler("x") == "reply:x"
    assert commands.get("/DEPLOY NOW") is command


def test_defaults_as_hermes(commands: CommandRegistry) -> None:
    commands.register_command("plain", reply, owner="plug")
    commands.register_command("hinted", reply, args_hint=" <file> ", owner="plug")
    commands.register_command("opts", reply, argument_mode="options", owner="plug")
    commands.register_command("odd", reply, argument_mode="weird", owner="plug")

    def mode(name: str) -> str | None:
        command = commands.get(name)
        assert command is not None
        argument_mode: str | None = command.argument_mode
        return argument_mode

    plain, hinted = commands.get("plain"), commands.get("hinted")
    assert plain is not None
    assert hinted is not None
    assert plain.description == "Plugin command"
    assert hinted.args_hint == "<file>"
    assert [mode(n) for n in ("plain", "hinted", "opts", "odd")] == [None, "text", "options", None]


@pytest.mark.parametrize("builtin", sorted(BUILTIN_SLASH_COMMANDS))
def test_host_builtins_refused(commands: CommandRegistry, builtin: str) -> None:
    with pytest.raises(RegistrationError, match=rf"'{builtin}' from plugin 'plug'.*built-in"):
        commands.register_command(f"/{builtin.upper()}", reply, owner="plug")
    assert commands.get(builtin) is None


def test_host_may_register_its_builtins(commands: CommandRegistry) -> None:
    commands.register_command("help", reply)
    assert commands.owner_of("help") == "<host>"


def test_handler_must_be_callable(commands: CommandRegistry) -> None:
    with pytest.raises(RegistrationError, match="handler must be callable"):
        commands.register_command("x", "nope", owner="plug")  # type: ignore[arg-type]


def test_plugin_registers_slash_command(home: PluginHome) -> None:
    home.add_plugin(
        "cmd_slash",
        """
        def register(ctx):
            ctx.register_command("/Cmd Slash", lambda raw: "got " + raw, "A command", "<what>")
        """,
    )
    pm = home.load()

    command = pm.commands.get("cmd-slash")
    assert command is not None
    assert command.owner == "cmd_slash"
    assert command.args_hint == "<what>"
    assert command.handler("it") == "got it"
    assert info(pm, "cmd_slash").commands == ("cmd-slash",)


def test_plugin_with_builtin_slash_command_is_refused_and_loads_the_rest(
    home: PluginHome,
) -> None:
    home.add_plugin(
        "cmd_builtin",
        """
        def register(ctx):
            ctx.register_command("other", lambda raw: "")
            ctx.register_command("/help", lambda raw: "mine")
            ctx.register_command("later", lambda raw: "after")
        """,
    )
    pm = home.load()

    # "register_command() will reject the name", as the Hermes guide says; the rest loads.
    status = info(pm, "cmd_builtin")
    assert (status.status, status.error) == ("enabled", None)
    assert pm.commands.names() == ["later", "other"]
    (warning,) = status.warnings
    assert "slash command '/help' refused" in warning
    assert "built-in" in warning


def test_a_refused_slash_command_fails_the_plugin_in_strict_mode(home: PluginHome) -> None:
    home.add_plugin(
        "cmd_strict",
        """
        def register(ctx):
            ctx.register_command("other", lambda raw: "")
            ctx.register_command("/help", lambda raw: "mine")
        """,
    )
    home.write_config()
    pm = PluginManager(home.root, strict=True)
    home.managers.append(pm)
    with pytest.raises(PluginLoadError, match=r"'help'.*built-in"):
        pm.discover_and_load()
    assert pm.commands.names() == []  # what it registered before failing is gone too


# --- CLI commands --------------------------------------------------------------------------------


def test_cli_command_with_argparse_setup(cli_commands: CliCommandRegistry) -> None:
    seen: list[argparse.Namespace] = []

    def setup(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("target")
        parser.add_argument("--count", type=int, default=1)
        parser.add_argument("--dry-run", action="store_true")

    def handler(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    cli_commands.register_cli_command("deploy", "Deploy things", setup, handler, owner="plug")
    command = cli_commands.get("deploy")
    assert isinstance(command, CliCommand)

    assert command.run(["prod", "--count", "3", "--dry-run"]) == 0

    (args,) = seen
    assert (args.target, args.count, args.dry_run) == ("prod", 3, True)


def test_cli_parser_describes_itself(cli_commands: CliCommandRegistry) -> None:
    cli_commands.register_cli_command(
        "deploy", "Deploy things", lambda p: None, lambda a: None, description="Long text"
    )
    command = cli_commands.get("deploy")
    assert command is not None

    parser = command.build_parser()

    assert parser.prog == "hermes deploy"
    assert parser.description == "Long text"


def test_cli_subparsers_with_func_defaults(cli_commands: CliCommandRegistry) -> None:
    calls: list[tuple[str, Any]] = []

    def setup(parser: argparse.ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="action")
        add = sub.add_parser("add")
        add.add_argument("name")
        add.set_defaults(func=lambda args: noted(calls, ("add", args.name), "added"))
        rm = sub.add_parser("rm")
        rm.add_argument("name")
        rm.set_defaults(func=lambda args: noted(calls, ("rm", args.name), "removed"))

    cli_commands.register_cli_command("crm", "Contacts", setup, owner="plug")
    command = cli_commands.get("crm")
    assert command is not None

    assert command.run(["add", "Jane"]) == "added"
    assert command.run(["rm", "Joe"]) == "removed"
    assert calls == [("add", "Jane"), ("rm", "Joe")]

    with pytest.raises(RegistrationError, match=r"'crm' of plugin 'plug' has no handler"):
        command.run([])


def test_cli_subparser_func_wins_over_handler_fn(cli_commands: CliCommandRegistry) -> None:
    # Hermes wires handler_fn as set_defaults(func=...) on the command's parser, so a
    # sub-command's own func default is what runs for that sub-command.
    def setup(parser: argparse.ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="action")
        sub.add_parser("status").set_defaults(func=lambda args: "status")
        sub.add_parser("other")

    cli_commands.register_cli_command("svc", "Service", setup, lambda args: "top", owner="plug")
    command = cli_commands.get("svc")
    assert command is not None

    assert command.run(["status"]) == "status"
    assert command.run(["other"]) == "top"
    assert command.run([]) == "top"


def test_cli_bad_arguments_exit_as_argparse_does(
    cli_commands: CliCommandRegistry, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_commands.register_cli_command(
        "deploy", "Deploy", lambda p: p.add_argument("target"), lambda a: 0
    )
    command = cli_commands.get("deploy")
    assert command is not None

    with pytest.raises(SystemExit) as exited:
        command.run([])
    assert exited.value.code == 2
    assert "the following arguments are required: target" in capsys.readouterr().err

    with pytest.raises(SystemExit) as exited:
        command.run(["--help"])
    assert exited.value.code == 0
    assert "usage: hermes deploy" in capsys.readouterr().out


@pytest.mark.parametrize("builtin", sorted(BUILTIN_CLI_COMMANDS))
def test_builtin_cli_names_refused(cli_commands: CliCommandRegistry, builtin: str) -> None:
    with pytest.raises(RegistrationError, match=rf"CLI command '{builtin}'.*built-in"):
        cli_commands.register_cli_command(builtin, "mine", lambda p: None, owner="plug")


def test_cli_command_arguments_checked(cli_commands: CliCommandRegistry) -> None:
    with pytest.raises(RegistrationError, match="setup_fn must be callable"):
        cli_commands.register_cli_command("x", "h", None, owner="plug")  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match="handler_fn must be callable"):
        cli_commands.register_cli_command("x", "h", lambda p: None, 3, owner="plug")  # type: ignore[arg-type]


def test_cli_command_name_collision_names_both(cli_commands: CliCommandRegistry) -> None:
    cli_commands.register_cli_command("crm", "a", lambda p: None, owner="alpha")

    with pytest.raises(RegistrationError, match=r"plugin 'beta'.*plugin 'alpha'"):
        cli_commands.register_cli_command("crm", "b", lambda p: None, owner="beta")


def test_plugin_registers_cli_command_as_hermes_plugins_do(home: PluginHome) -> None:
    home.add_plugin(
        "cmd_cli",
        """
        def _setup(subparser):
            subparser.add_argument("name")
            subparser.add_argument("--cadence", default="weekly")

        def _run(args):
            return f"{args.name}/{args.cadence}"

        def register(ctx):
            ctx.register_cli_command(
                name="cmd-cli", help="Keep in touch", setup_fn=_setup, handler_fn=_run,
                description="Contacts and cadences",
            )
        """,
    )
    pm = home.load()

    command = pm.cli_commands.get("cmd-cli")
    assert command is not None
    assert command.owner == "cmd_cli"
    assert command.help == "Keep in touch"
    assert command.run(["Jane", "--cadence", "monthly"]) == "Jane/monthly"
    assert info(pm, "cmd_cli").cli_commands == ("cmd-cli",)


def test_plugin_with_builtin_cli_name_is_refused_and_loads_the_rest(home: PluginHome) -> None:
    home.add_plugin(
        "cmd_clibuiltin",
        """
        def register(ctx):
            refused = ctx.register_cli_command("plugins", "mine", lambda p: None)
            assert refused is None
            ctx.register_cli_command("mine", "mine", lambda p: None)
        """,
    )
    pm = home.load()

    status = info(pm, "cmd_clibuiltin")
    assert (status.status, status.error) == ("enabled", None)
    assert status.cli_commands == ("mine",)
    (warning,) = status.warnings
    assert warning.startswith("CLI command 'plugins' refused: ")
    assert "built-in" in warning

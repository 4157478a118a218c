"""The ``hermes`` root command and ``hermes plugins list``: real processes on a temporary home."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import GOOD, clean_env, hermes, home, invoke, read_config
from plugin_builders import user_plugin, write_config

from hermes_hooks import __version__
from hermes_hooks.cli import cli
from hermes_hooks.cli.docgen import iter_commands

__all__ = ["home"]  # the fixture, imported for pytest

CLI_PLUGIN = """\
    def register(ctx):
        def setup(parser):
            parser.add_argument("--who", default="world")

        def hello(args):
            print(f"hello {args.who}")

        def boom(args):
            raise RuntimeError("boom")

        ctx.register_cli_command("hello", "Say hello", setup, hello)
        ctx.register_cli_command("boom", "Fail", setup, boom)
        ctx.register_cli_command("greet", "Return a greeting", setup, lambda a: f"hi {a.who}")
        ctx.register_cli_command("code", "Return an exit code", setup, lambda a: 3)
        ctx.register_cli_command("data", "Return data", setup, lambda a: {"who": a.who})
        ctx.register_cli_command("flag", "Return a bool", setup, lambda a: False)
    """


def test_version_prints_the_version_and_imports_no_plugin_code(home: Path) -> None:
    marker = home / "imported"
    user_plugin(home, "spy", f"open({str(marker)!r}, 'w').close()\n{GOOD}")
    write_config(home, ["spy"])
    result = hermes(home, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"hermes, version {__version__}"
    assert not marker.exists()
    assert invoke("-V").output.strip() == f"hermes, version {__version__}"


def test_double_v_lists_the_plugins_that_load(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    user_plugin(home, "idle", GOOD)
    write_config(home, ["good"])
    lines = hermes(home, "-VV").stdout.splitlines()
    assert lines[:2] == [f"hermes, version {__version__}", "loaded plugins:"]
    assert any(line.startswith("  good-1.0 (user) at ") for line in lines)
    assert "  image_gen/local-1.0.0 (bundled) at " in "\n".join(lines)  # bundled backends load
    assert not any("idle" in line for line in lines)  # not enabled


def test_every_command_has_help_with_an_example(home: Path) -> None:
    paths = []
    for path, _command, _ctx in iter_commands():
        args = path.split()[1:]
        result = invoke(*args, "--help")
        assert result.exit_code == 0, path
        assert "Example" in result.output, f"{path} --help has no example"
        paths.append(path)
    assert {"hermes plugins install", "hermes hooks", "hermes doctor"} <= set(paths)


def test_list_shows_enabled_and_broken_plugins_with_the_error(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    user_plugin(home, "broken", "raise RuntimeError('kaput')\n")
    user_plugin(home, "idle", GOOD)
    write_config(home, ["good", "broken"])
    result = hermes(home, "plugins", "list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["KEY", "STATUS", "VERSION", "KIND", "SOURCE", "DESCRIPTION"]
    rows = {line.split()[0]: line for line in lines[1:] if not line.startswith(" ")}
    assert rows["good"].split()[1] == "enabled"
    assert rows["broken"].split()[1] == "error"
    assert "not enabled" in rows["idle"]
    error_line = lines[lines.index(rows["broken"]) + 1]
    assert "RuntimeError: kaput" in error_line
    assert "broken/__init__.py:1" in error_line


def test_list_fits_a_narrow_terminal(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long = "A plugin whose description goes on and on well past the edge of any terminal"
    user_plugin(home, "good", GOOD, manifest={"description": long})
    user_plugin(home, "broken", "raise RuntimeError('a long message ' * 8)\n")
    write_config(home, ["good", "broken"])
    monkeypatch.setenv("COLUMNS", "80")
    output = invoke("plugins", "list").output
    lines = output.splitlines()
    assert "…" not in output  # whole words wrap, nothing is clipped
    assert " ".join(output.split()).count(long) == 1  # every word of it, in order
    assert "DESCRIPTION" in output  # no column is dropped
    for line in lines:  # only a single word longer than the width (a path) may overflow
        assert len(line) <= 80 or " " not in line.strip(), line
    assert sum(1 for line in lines if line.startswith("    error: ")) == 1
    assert any(line.startswith(" " * 11) for line in lines)  # the error wraps under itself


def test_list_into_a_pipe_is_never_clipped(home: Path) -> None:
    long = "A plugin whose description goes on and on well past the edge of any terminal"
    message = "a long message " * 8
    user_plugin(home, "good", GOOD, manifest={"description": long})
    user_plugin(home, "broken", f"raise RuntimeError({message!r})\n")
    write_config(home, ["good", "broken"])
    env = {k: v for k, v in clean_env(home).items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "plugins", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    assert long in done.stdout
    (error,) = [line for line in done.stdout.splitlines() if line.startswith("    error: ")]
    assert message.strip() in error  # one line, whole


def test_list_json_has_the_plugin_info_fields(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    write_config(home, ["good"])
    (info,) = json.loads(invoke("plugins", "list", "--json").output)
    assert info["key"] == "good"
    assert info["status"] == "enabled"
    assert info["version"] == "1.0"
    assert info["source"] == "user"
    assert info["hooks"] == ["pre_tool_call"]
    assert info["error"] is None
    for field in ("name", "kind", "path", "tools", "commands", "cli_commands", "skills"):
        assert field in info


def test_bundled_plugins_are_hidden_unless_all(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = hermes(home, "plugins", "list", "--json")
    assert json.loads(result.stdout) == []
    everything = json.loads(hermes(home, "plugins", "list", "--all", "--json").stdout)
    assert {"command-guard", "tool-log"} <= {info["key"] for info in everything}
    assert {info["source"] for info in everything} == {"bundled"}
    hint = hermes(home, "plugins", "list").stdout
    assert "No plugins found" in hint
    assert "--all" in hint
    assert str(home / "plugins") in hint


def test_list_filters_by_hook_and_enabled(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    user_plugin(home, "other", "def register(ctx):\n    pass\n")
    user_plugin(home, "off", GOOD)
    write_config(home, ["good", "other"])
    by_hook = json.loads(invoke("plugins", "list", "--json", "--hook", "pre_tool_call").output)
    assert [i["key"] for i in by_hook] == ["good"]
    enabled = json.loads(invoke("plugins", "list", "--json", "--enabled").output)
    assert [i["key"] for i in enabled] == ["good", "other"]


def test_broken_config_is_one_line_without_traceback(home: Path) -> None:
    write_config(home, text="plugins: [unclosed\n")
    result = hermes(home, "plugins", "list")
    assert result.returncode == 1  # the listing still works; the config error is reported
    assert "No plugins found" in result.stdout
    assert "config.yaml" in result.stderr
    assert "line 2" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_plugin_that_exits_does_not_end_the_command(home: Path) -> None:
    user_plugin(home, "quitter", "import sys\nsys.exit(3)\n")
    write_config(home, ["quitter"])
    (info,) = json.loads(invoke("plugins", "list", "--json").output)
    assert info["status"] == "error"
    assert "SystemExit" in info["error"]


def test_bare_hermes_prints_the_help_off_a_terminal(home: Path) -> None:
    result = hermes(home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: hermes [OPTIONS] [COMMAND] [ARGS]...")
    assert "starts 'hermes chat'" in result.stdout


def test_unknown_command_is_a_usage_error_with_the_closest_names(home: Path) -> None:
    result = invoke("plugin", "list")
    assert result.exit_code == 2
    assert "No such command 'plugin'. Did you mean 'plugins'?" in result.output


def test_plugin_cli_commands_run_as_hermes_subcommands(home: Path) -> None:
    user_plugin(home, "greeter", CLI_PLUGIN)
    write_config(home, ["greeter"])
    result = hermes(home, "hello", "--who", "you")
    assert (result.returncode, result.stdout) == (0, "hello you\n"), result.stderr
    helped = hermes(home, "hello", "--help")
    assert helped.returncode == 0
    assert "usage: hermes hello" in helped.stdout
    assert "--who" in helped.stdout
    bad = hermes(home, "hello", "--nope")
    assert bad.returncode == 2
    assert "unrecognized arguments: --nope" in bad.stderr
    listing = invoke("--help").output  # loads no plugin: it says where the commands are
    assert "'hermes plugins list' shows them" in listing.split("Plugin commands:")[1]
    listed = invoke("plugins", "list", "--json").output
    assert {"hello", "greet"} <= set(json.loads(listed)[0]["cli_commands"])


def test_what_a_plugin_command_returns_is_its_output_or_exit_code(home: Path) -> None:
    user_plugin(home, "greeter", CLI_PLUGIN)
    write_config(home, ["greeter"])
    assert (invoke("greet", "--who", "Ada").output, invoke("greet").exit_code) == ("hi Ada\n", 0)
    assert invoke("code").exit_code == 3
    assert invoke("code").output == ""
    assert json.loads(invoke("data", "--who", "Bo").output) == {"who": "Bo"}
    assert (invoke("flag").output, invoke("flag").exit_code) == ("False\n", 0)


def test_a_failing_command_is_one_line_unless_debug(home: Path) -> None:
    user_plugin(home, "greeter", CLI_PLUGIN)
    write_config(home, ["greeter"])
    result = hermes(home, "boom")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("Error: RuntimeError: boom")
    assert "Traceback" not in result.stderr
    debug = hermes(home, "--debug", "boom")
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr


def test_a_plugin_command_named_like_a_builtin_is_refused_with_a_warning(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_plugin(home, "greeter", CLI_PLUGIN)
    user_plugin(
        home,
        "squatter",
        'def register(ctx):\n    ctx.register_cli_command("hooks", "mine", lambda p: None)\n',
    )
    write_config(home, ["greeter", "squatter"])
    infos = {i["key"]: i for i in json.loads(invoke("plugins", "list", "--json").output)}
    # Refused alone, as Hermes' register_cli_command rejects the name: the plugin loads.
    assert infos["squatter"]["status"] == "enabled"
    assert infos["squatter"]["cli_commands"] == []
    (warning,) = infos["squatter"]["warnings"]
    assert "CLI command 'hooks' refused" in warning
    assert "built-in" in warning
    # A built-in the registry does not reserve (one added by the host) is refused by the CLI.
    monkeypatch.setattr(cli, "commands", dict(cli.commands))
    monkeypatch.setitem(cli.lazy_commands, "hello", "hermes_hooks.cli.hooks:tools")
    result = invoke("greet")  # not built in: the plugins' commands are loaded
    assert "plugin 'greeter' registers CLI command 'hello', which is a built-in" in result.stderr
    assert result.stdout == "hi world\n"
    assert "Plugin commands" not in invoke("hello", "--help").stdout  # the built-in one ran


def test_list_status_is_the_status_the_agent_host_gives(home: Path) -> None:
    # `terminal` is a host tool in `hermes -z`; the listing must not call such a plugin fine.
    user_plugin(
        home,
        "shadow",
        "def register(ctx):\n"
        "    ctx.register_tool('terminal', 'x', {}, lambda args, **kw: 'mine')\n",
    )
    write_config(home, ["shadow"])
    (info,) = json.loads(invoke("plugins", "list", "--json").output)
    assert info["status"] == "error"
    assert "host tool" in info["error"]


def test_a_plugin_is_turned_off_for_one_run_without_editing_config(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    user_plugin(home, "other", GOOD)
    write_config(home, ["good", "other"])
    listed = hermes(home, "--disable", "good", "plugins", "list", "--json")
    status = {p["key"]: (p["status"], p["reason"]) for p in json.loads(listed.stdout)}
    assert status["good"] == ("disabled", "disabled for this run (HERMES_DISABLE_PLUGINS)")
    assert status["other"][0] == "enabled"
    by_env = hermes(home, "plugins", "list", "--json", HERMES_DISABLE_PLUGINS="good, other")
    assert {p["status"] for p in json.loads(by_env.stdout) if p["source"] == "user"} == {"disabled"}
    again = hermes(home, "plugins", "list", "--json")
    assert {p["status"] for p in json.loads(again.stdout) if p["source"] == "user"} == {"enabled"}
    assert read_config(home)["plugins"]["enabled"] == ["good", "other"]

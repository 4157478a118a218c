"""The conventions users of pip, gh and llm expect: version, completion, aliases, safe mode,
and a plugin's command when the plugin is not loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import (
    GOOD,
    hermes,
    home as home,  # the fixture
    invoke,
)
from plugin_builders import user_plugin, write_config

from hermes_hooks import __version__
from hermes_hooks.spec.contract import HERMES_CONTRACT_VERSION


def test_version_names_the_framework_and_the_plugin_contract(home: Path) -> None:
    result = invoke("version")
    assert result.stdout.splitlines()[:2] == [
        f"hermes-hooks {__version__}",
        f"Hermes plugin contract {HERMES_CONTRACT_VERSION}",
    ]
    data = json.loads(invoke("version", "--json").stdout)
    assert data["plugin_contract"] == HERMES_CONTRACT_VERSION


def test_completion_scripts_and_names_from_the_home(tmp_path: Path) -> None:
    folder = tmp_path / "home"
    user_plugin(folder, "no-rm", GOOD)
    for shell in ("bash", "zsh", "fish"):
        script = invoke("completion", shell)
        assert script.exit_code == 0
        assert "_HERMES_COMPLETE" in script.stdout
    plugin = hermes(
        folder,
        COMP_WORDS="hermes plugins enable no",
        COMP_CWORD="3",
        _HERMES_COMPLETE="bash_complete",
    )
    assert plugin.stdout.split() == ["plain,no-rm"]
    hook = hermes(
        folder,
        COMP_WORDS="hermes hooks pre_tool",
        COMP_CWORD="2",
        _HERMES_COMPLETE="bash_complete",
    )
    assert hook.stdout.split() == ["plain,pre_tool_call"]


def test_ls_and_rm_are_list_and_remove(home: Path) -> None:
    user_plugin(home, "no-rm", GOOD)
    assert "no-rm" in invoke("plugins", "ls").stdout
    removed = invoke("plugins", "rm", "no-rm")
    assert removed.exit_code == 0, removed.output
    assert not (home / "plugins" / "no-rm").exists()


def test_safe_mode_lists_the_plugins_as_not_loaded(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_plugin(home, "no-rm", GOOD)
    write_config(home, ["no-rm"])
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    result = invoke("plugins", "list")
    assert result.exit_code == 0
    assert "no-rm" in result.stdout
    assert "not loaded: safe mode" in result.stdout


def test_the_command_of_a_plugin_not_enabled_says_how_to_enable_it(home: Path) -> None:
    user_plugin(home, "greeter", "def register(ctx):\n    pass\n")
    result = invoke("greeter")
    assert result.exit_code == 2
    assert "plugin 'greeter', which is not loaded" in result.stderr
    assert "'hermes plugins enable greeter'" in result.stderr


def test_long_work_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    from terminal_support import Terminal

    folder = tmp_path / "home"
    folder.mkdir()
    term = Terminal(folder, "doctor")
    term.expect("checking the environment and loading the plugins…")
    assert term.wait() in (0, 1)
    piped = hermes(folder, "doctor")
    assert "checking the environment" not in piped.stdout + piped.stderr

"""``hermes plugins enable/disable/info``: names, config writes and the tool-override consent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import GOOD, hermes, home, invoke, read_config
from plugin_builders import user_plugin, write_config

__all__ = ["home"]

OVERRIDER = """\
    def register(ctx):
        ctx.register_tool(
            "terminal", "shell", {"description": "a safer shell"}, lambda args, **kw: "ok",
            override=True,
        )
    """


def test_enable_disable_round_trip_keeps_other_settings(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    write_config(
        home,
        text="""\
        model:
          default: local
          fallbacks: [a, b]
        plugins:
          enabled: [other]
          entries:
            good:
              settings: {level: 3}
        """,
    )
    result = hermes(home, "plugins", "enable", "good")
    assert (result.returncode, result.stdout) == (0, "Plugin 'good' enabled.\n"), result.stderr
    listed = json.loads(hermes(home, "plugins", "list", "--json").stdout)
    assert [(i["key"], i["status"]) for i in listed] == [("good", "enabled")]
    assert read_config(home) == {
        "model": {"default": "local", "fallbacks": ["a", "b"]},
        "plugins": {
            "enabled": ["other", "good"],
            "entries": {"good": {"settings": {"level": 3}}},
        },
    }
    assert hermes(home, "plugins", "disable", "good").stdout == "Plugin 'good' disabled.\n"
    listed = json.loads(hermes(home, "plugins", "list", "--json").stdout)
    assert [(i["key"], i["status"]) for i in listed] == [("good", "disabled")]
    config = read_config(home)
    assert isinstance(config, dict)
    assert config["plugins"]["enabled"] == ["other"]
    assert config["plugins"]["disabled"] == ["good"]
    assert config["model"] == {"default": "local", "fallbacks": ["a", "b"]}
    # No temporary file is left next to the config.
    assert sorted(p.name for p in home.iterdir()) == [".config.yaml.lock", "config.yaml", "plugins"]


def test_enable_twice_says_so(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    assert invoke("plugins", "enable", "good").output == "Plugin 'good' enabled.\n"
    assert invoke("plugins", "enable", "good").output == "Plugin 'good' is already enabled.\n"
    assert invoke("plugins", "disable", "good").output == "Plugin 'good' disabled.\n"
    assert invoke("plugins", "disable", "good").output == "Plugin 'good' is already disabled.\n"


def test_names_resolve_by_key_folder_name_and_unique_leaf(home: Path) -> None:
    # A flat plugin's key is its manifest name, as in Hermes; its folder name resolves too.
    user_plugin(home, "folder-name", GOOD, manifest={"name": "manifest-name"})
    user_plugin(home, "image_gen/openai", GOOD)
    user_plugin(home, "a/same", GOOD)
    user_plugin(home, "b/same", GOOD)
    write_config(home, text="plugins:\n  disabled: [manifest-name]\n")
    assert invoke("plugins", "enable", "folder-name").output == (
        "Plugin 'manifest-name' enabled.\n"
    )
    assert invoke("plugins", "enable", "openai").output == "Plugin 'image_gen/openai' enabled.\n"
    assert read_config(home) == {
        "plugins": {"disabled": [], "enabled": ["manifest-name", "image_gen/openai"]}
    }
    ambiguous = invoke("plugins", "enable", "same")
    assert ambiguous.exit_code == 1
    assert "ambiguous" in ambiguous.stderr
    assert "'a/same', 'b/same'" in ambiguous.stderr


def test_unknown_name_exits_1_with_the_closest_names(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    result = hermes(home, "plugins", "enable", "goood")
    assert result.returncode == 1
    assert result.stderr == (
        "Error: Plugin 'goood' is not installed or bundled; did you mean 'good'?\n"
    )
    assert not (home / "config.yaml").exists()


def test_a_broken_config_is_reported_with_its_line_and_never_overwritten(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    broken = "model: local\nplugins:\n  enabled: [good\n"
    write_config(home, text=broken)
    result = invoke("plugins", "enable", "good")
    assert result.exit_code == 1
    assert "config.yaml: invalid YAML at line 4" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert (home / "config.yaml").read_text() == broken


def test_tool_override_needs_consent_and_no_terminal_means_no(home: Path) -> None:
    user_plugin(home, "shell", OVERRIDER)
    result = invoke("plugins", "enable", "shell")
    assert result.exit_code == 0
    assert "Plugin 'shell' asks to replace host tools: terminal." in result.output
    assert "no terminal to ask" in result.output
    assert read_config(home) == {"plugins": {"enabled": ["shell"]}}

    granted = invoke("plugins", "enable", "shell", "--allow-tool-override")
    assert "Allowed 'shell' to replace host tools" in granted.output
    entries = read_config(home)["plugins"]["entries"]
    assert entries == {"shell": {"allow_tool_override": True}}

    invoke("plugins", "enable", "shell", "--no-allow-tool-override")
    entries = read_config(home)["plugins"]["entries"]
    assert entries == {"shell": {"allow_tool_override": False}}


def test_tool_override_is_asked_once_on_a_terminal(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib
    import pkgutil

    import hermes_hooks.cli

    # Every cli module that took is_terminal by name, each imported before the patch (one
    # imported while it is active would keep the patched function for the rest of the run).
    for info in pkgutil.iter_modules(hermes_hooks.cli.__path__, "hermes_hooks.cli."):
        module = importlib.import_module(info.name)
        if hasattr(module, "is_terminal"):
            monkeypatch.setattr(module, "is_terminal", lambda: True)
    user_plugin(home, "shell", OVERRIDER)
    user_plugin(home, "plain", GOOD)
    asked = invoke("plugins", "enable", "shell", input="y\n")
    assert "Allow it to replace host tools?" in asked.output
    assert read_config(home)["plugins"]["entries"]["shell"] == {"allow_tool_override": True}
    again = invoke("plugins", "enable", "shell")
    assert again.output == "Plugin 'shell' is already enabled.\n"
    # A plugin that registers no override is not asked about it.
    assert invoke("plugins", "enable", "plain").output == "Plugin 'plain' enabled.\n"


def test_info_shows_manifest_status_and_hook_positions(home: Path) -> None:
    user_plugin(
        home,
        "first",
        """\
        from hermes_hooks import hookimpl

        @hookimpl(tryfirst=True)
        def pre_tool_call(tool_name):
            return None

        def register(ctx):
            ctx.register_tool("echo", "demo", {"description": "echo"}, lambda a, **k: "e")
            ctx.register_command("hi", lambda raw: "hi")
        """,
        manifest={"description": "goes first", "requires_env": ["HOME"], "author": "me"},
    )
    user_plugin(home, "second", GOOD)
    write_config(home, text="plugins:\n  enabled: [first, second]\n")
    text = invoke("plugins", "info", "first").output
    assert text.splitlines()[0] == "first"
    for expected in (
        "description:    goes first",
        "status:         enabled (listed in plugins.enabled)",
        "requires env:   HOME",
        "hooks:          pre_tool_call (1 of 2)",
        "tools:          echo",
        "commands:       /hi",
        "author:         me",
    ):
        assert expected in text
    data = json.loads(invoke("plugins", "info", "second", "--json").output)
    assert data["hook_order"] == {"pre_tool_call": {"positions": [2], "of": 2}}
    assert data["manifest"]["name"] == "second"
    assert data["manifest"]["version"] == "1.0"
    assert data["status"] == "enabled"
    missing = invoke("plugins", "info", "third")
    assert missing.exit_code == 1
    assert "Plugin 'third' is not installed or bundled" in missing.stderr


def test_info_json_gives_its_error_as_json_too(home: Path) -> None:
    user_plugin(home, "good", GOOD)
    result = invoke("plugins", "info", "godo", "--json")
    assert result.exit_code == 1
    error = json.loads(result.stdout)
    assert error["type"] == "PluginNotFoundError"
    assert "godo" in error["error"]
    assert error["candidates"] == ["good"]


MEMORY_LIKE = """\
    IMPORTED = True

    def register(ctx):
        ctx.register_memory_provider(object())
    """


def test_enabling_a_memory_plugin_says_its_family_key_decides(home: Path) -> None:
    # Hermes serves memory plugins through memory.provider, not plugins.enabled: enabling one
    # records it and says which key loads it, and how to set that key.
    user_plugin(home, "memory/mem0", MEMORY_LIKE)
    result = hermes(home, "plugins", "enable", "mem0")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Plugin 'memory/mem0' enabled.\n"
        "'memory/mem0' is a memory provider plugin: it loads when memory.provider names it "
        "('hermes tools memory --provider mem0').\n"
    )
    listed = {p["key"]: p for p in json.loads(hermes(home, "plugins", "list", "--json").stdout)}
    mem0 = listed["memory/mem0"]
    assert (mem0["kind"], mem0["kind_inferred"], mem0["status"], mem0["served_by"]) == (
        "exclusive", True, "not enabled", "memory.provider",
    )  # fmt: skip
    assert read_config(home) == {"plugins": {"enabled": ["memory/mem0"]}}

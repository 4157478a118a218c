"""Secrets asked by ``hermes plugins install`` are never echoed, and a key saved in
``$HERMES_HOME/.env`` counts as set wherever that is judged (a manager built in code too)."""

from __future__ import annotations

from pathlib import Path

from plugin_builders import user_plugin, write_config, write_plugin
from terminal_support import Terminal

from hermes_hooks.plugins.manager import PluginManager

NEEDS_KEY = {
    "name": "keyed",
    "version": "1.0.0",
    "requires_env": [{"name": "KEYED_TOKEN", "description": "the service's token"}],
}
CODE = "def register(ctx):\n    pass\n"


def test_install_asks_the_key_hidden_and_the_saved_key_is_set(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    source = write_plugin(tmp_path / "src", "keyed", CODE, manifest=NEEDS_KEY)
    term = Terminal(home, "plugins", "install", str(source), "--enable")
    screen = term.expect("KEYED_TOKEN: the service's token")
    screen += term.expect(":")  # the prompt itself
    term.type("s3cret-value\r")
    screen += term.expect("saved to")
    code = term.wait()
    screen += term.seen
    assert code == 0, screen
    assert "s3cret-value" not in screen
    assert "not set" not in screen
    assert "KEYED_TOKEN=" in (home / ".env").read_text(encoding="utf-8")


def test_a_manager_in_code_reads_the_homes_env_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_plugin(home, "keyed", CODE, manifest=NEEDS_KEY)
    write_config(home, ["keyed"])
    (home / ".env").write_text("KEYED_TOKEN=abc\n", encoding="utf-8")
    pm = PluginManager(home)
    try:
        pm.discover_and_load()
        info = pm.get_plugin_info("keyed")
        assert info is not None
        assert info.status == "enabled", info.error
    finally:
        pm.unload_all()

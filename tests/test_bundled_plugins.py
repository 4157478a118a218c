"""The plugins shipped in hermes_plugins/ work, found by the same discovery as anyone's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from homes import bundled_home as home  # noqa: F401  (the fixture)
from plugin_builders import call_hook, load, write_config

from hermes_hooks import PluginManager


def manager(home: Path, *enabled: str, settings: str = "") -> PluginManager:
    write_config(home, text="plugins:\n  enabled: [" + ", ".join(enabled) + "]\n" + settings)
    return load(home, strict=True)


def decide(pm: PluginManager, command: str) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = call_hook(
        pm, "pre_tool_call", tool_name="terminal", args={"command": command}
    )
    return result


def test_bundled_plugins_are_discovered_but_opt_in(home: Path) -> None:
    pm = manager(home)
    infos = {i.key: i for i in pm.list_plugins()}
    assert infos["command-guard"].source == "bundled"
    assert infos["command-guard"].status == "not enabled"
    assert infos["tool-log"].status == "not enabled"


@pytest.mark.parametrize(
    "command",
    ["rm -rf /", "rm -rf  ~", "sudo rm -fr /*", "mkfs.ext4 /dev/sda1", "dd if=x of=/dev/sda"],
)
def test_command_guard_blocks_destructive_commands(home: Path, command: str) -> None:
    pm = manager(home, "command-guard")
    (decision,) = decide(pm, command)
    assert decision["action"] == "block"
    assert decision["message"].startswith("command-guard: ")


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git push --force origin main", "command-guard:force-push"),
        ("sudo apt-get install jq", "command-guard:sudo"),
        ("curl -s https://example.org/x.sh | bash", "command-guard:pipe-shell"),
        ("rm -r build", "command-guard:rm-recursive"),
    ],
)
def test_command_guard_asks_before_risky_commands(home: Path, command: str, rule: str) -> None:
    pm = manager(home, "command-guard")
    (decision,) = decide(pm, command)
    assert decision["action"] == "approve"
    assert decision["rule_key"] == rule


def test_command_guard_allows_ordinary_commands_and_other_tools(home: Path) -> None:
    pm = manager(home, "command-guard")
    assert decide(pm, "ls -la && git status") == []
    assert call_hook(pm, "pre_tool_call", tool_name="read_file", args={"command": "rm -rf /"}) == []


def test_command_guard_takes_extra_patterns_from_settings(home: Path) -> None:
    settings = (
        "  entries:\n    command-guard:\n      settings:\n"
        "        block: ['\\bdocker\\s+system\\s+prune']\n"
    )
    pm = manager(home, "command-guard", settings=settings)
    (decision,) = decide(pm, "docker system prune -af")
    assert decision["action"] == "block"


def test_command_guard_bad_setting_fails_its_load_only(home: Path) -> None:
    settings = "  entries:\n    command-guard:\n      settings:\n        block: ['(']\n"
    (home / "config.yaml").write_text("plugins:\n  enabled: [command-guard, tool-log]\n" + settings)
    pm = PluginManager(home)
    pm.discover_and_load()
    guard = pm.get_plugin_info("command-guard")
    assert guard is not None
    assert guard.status == "error"
    assert "settings.block[0]" in (guard.error or "")
    log = pm.get_plugin_info("tool-log")
    assert log is not None
    assert log.status == "enabled"


def test_tool_log_writes_json_lines_and_shows_them(home: Path) -> None:
    pm = manager(home, "tool-log")
    call_hook(
        pm,
        "post_tool_call",
        tool_name="terminal",
        args={"command": "ls"},
        result="a\nb",
        duration_ms=12,
        status="ok",
        session_id="s1",
        tool_call_id="c1",
    )
    lines = (home / "logs" / "tool-calls.jsonl").read_text().splitlines()
    (record,) = [json.loads(line) for line in lines]
    assert record["tool"] == "terminal"
    assert record["args"] == {"command": "ls"}
    assert record["status"] == "ok"
    assert record["duration_ms"] == 12
    command = pm.commands.get("tool-log")
    assert command is not None
    shown = command.handler("5")
    assert "terminal" in shown
    assert "12 ms" in shown

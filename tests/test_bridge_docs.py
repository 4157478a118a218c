"""The how-tos of MCP and Claude Code say what the code does: their examples run here."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import yaml
from cli_support import home  # noqa: F401  (home is a fixture)
from mcp_support import add_readme_no_rm
from plugin_builders import user_plugin, write_config

from hermes_hooks import Hooks
from hermes_hooks.bridges.claude_code import run
from hermes_hooks.bridges.mcp_config import read_servers
from hermes_hooks.host.runtime import create_manager

DOCS = Path(__file__).resolve().parent.parent / "docs" / "how-to"


def blocks(name: str, language: str) -> list[str]:
    text = (DOCS / name).read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_the_mcp_client_how_to_config_reads_cleanly_and_its_guard_blocks(
    home: Path,
) -> None:
    config = yaml.safe_load(blocks("mcp-client.md", "yaml")[0])
    servers, problems = read_servers(config)
    assert problems == []
    files, search = servers
    assert (files.transport, files.offers("write_file"), files.offers("read_file")) == (
        "stdio",
        False,
        True,
    )
    assert (search.transport, search.enabled) == ("http", False)
    guard, digest = blocks("mcp-client.md", "python")
    user_plugin(home, "guard", guard)
    user_plugin(home, "notes-digest", digest)
    grant = yaml.safe_load(blocks("mcp-client.md", "yaml")[1])
    write_config(home, ["guard", "notes-digest"], entries=grant["plugins"]["entries"])
    pm = create_manager(home)
    decision = Hooks(pm).pre_tool_call(tool_name="mcp_files_write_file", args={"path": "x"})
    assert (decision.action, decision.message) == ("block", "MCP writes are not allowed here")
    # Granted, but no server is configured here: the envelope says so, the plugin reports it.
    answer = pm.tools.dispatch("notes_digest", {"path": "/srv/notes/todo.md"})
    assert answer.startswith("could not read it: MCP server 'files' is not configured")


def test_the_claude_code_how_to_example_answers_as_shown(home: Path) -> None:
    add_readme_no_rm(home)
    write_config(home, ["no-rm"])
    text = (DOCS / "claude-code-hooks.md").read_text(encoding="utf-8")
    shown = re.search(r"\$ echo '(.*?)' \| hermes claude-hook\n\s+(\{[^\n]*\})\n", text, re.S)
    assert shown is not None
    event, expected = shown.groups()
    out = io.StringIO()
    assert run(io.StringIO(event), out, hermes_home=home) == 0
    assert out.getvalue().strip() == expected
    settings = json.loads(blocks("claude-code-hooks.md", "json")[0])
    assert settings["hooks"]["PreToolUse"][0]["matcher"] == "*"


def test_the_claude_code_how_to_state_example_blocks_after_its_budget(
    home: Path,
) -> None:
    user_plugin(home, "budget", blocks("claude-code-hooks.md", "python")[0])
    write_config(home, ["budget"])
    stored = home / "claude-code" / "sessions" / "s1.json"
    stored.parent.mkdir(parents=True)
    stored.write_text(json.dumps({"budget.calls": 200}))  # as 200 earlier processes left it
    event = {
        "session_id": "s1",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": "/a"},
    }
    out = io.StringIO()
    assert run(io.StringIO(json.dumps(event)), out, hermes_home=home) == 0
    reason = json.loads(out.getvalue())["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == "200 tool calls this session: stop and ask"
    assert json.loads(stored.read_text()) == {"budget.calls": 201}

"""``hermes claude-hook``: Claude Code's hook events, answered by the enabled plugins' hooks.

The inputs are Claude Code's documented hook JSON (``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name``, ``tool_name``, ``tool_input``, ``tool_use_id``...); the answers
are read back as Claude Code reads them (``hookSpecificOutput.permissionDecision``...). Most
run in-process through :func:`~hermes_hooks.bridges.claude_code.run`; one runs the real
command, as Claude Code would.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import clean_env, home, invoke  # noqa: F401  (home is a fixture)
from mcp_support import add_readme_no_rm
from plugin_builders import user_plugin, write_config

from hermes_hooks.bridges.claude_code import from_hermes_args, hermes_tool, run, to_hermes_args
from hermes_hooks.bridges.claude_settings import install_hooks

BASE = {
    "session_id": "abc123",
    "transcript_path": "/tmp/claude/abc123.jsonl",
    "cwd": "/tmp",
    "permission_mode": "default",
}


def pre_tool_use(tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        **BASE,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }


def ask(home: Path, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = run(io.StringIO(json.dumps(event)), out, hermes_home=home)
    return code, json.loads(out.getvalue())


def test_the_readme_plugin_denies_rm_rf_through_the_real_command(home: Path) -> None:
    add_readme_no_rm(home)
    write_config(home, ["no-rm"])
    event = pre_tool_use("Bash", {"command": "rm -rf /", "description": "Delete everything"})
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "claude-hook"],
        input=json.dumps(event),
        env=clean_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "rm -rf is not allowed here",
        }
    }


def test_an_allowed_call_gets_no_opinion_and_prints_stay_off_stdout(home: Path) -> None:
    add_readme_no_rm(home)  # its post_tool_call prints "terminal took 0 ms"
    write_config(home, ["no-rm"])
    assert ask(home, pre_tool_use("Bash", {"command": "ls"})) == (0, {})
    post = {
        **BASE,
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_response": {"stdout": "a\n", "stderr": "", "interrupted": False},
        "tool_use_id": "toolu_01",
    }
    assert ask(home, post) == (0, {})  # stdout held the answer only: it parsed


MODIFY = """\
    from hermes_hooks import hookimpl

    @hookimpl
    def pre_tool_call(tool_name, args):
        if tool_name == "write_file" and args["path"].endswith(".env"):
            return {"action": "approve", "message": "writing a .env file"}
        if tool_name == "terminal" and args["command"].startswith("pip install"):
            return {"action": "modify", "args": {"command": args["command"] + " --dry-run"}}
        return None

    @hookimpl
    def transform_tool_result(tool_name, result):
        return result.replace("secret", "[redacted]") if "secret" in result else None

    @hookimpl
    def pre_llm_call(user_message, is_first_turn):
        return f"first={is_first_turn}: the repository uses tabs"
    """


def test_approve_modify_transform_and_context_in_claude_codes_words(home: Path) -> None:
    user_plugin(home, "house", MODIFY)
    write_config(home, ["house"])
    _, approve = ask(home, pre_tool_use("Write", {"file_path": "/p/.env", "content": "A=1"}))
    assert approve["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert approve["hookSpecificOutput"]["permissionDecisionReason"] == "writing a .env file"
    _, modify = ask(home, pre_tool_use("Bash", {"command": "pip install x", "timeout": 5000}))
    assert modify["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert modify["hookSpecificOutput"]["updatedInput"] == {
        "command": "pip install x --dry-run",
        "timeout": 5000,
    }
    post = {
        **BASE,
        "hook_event_name": "PostToolUse",
        "tool_name": "mcp__vault__get",
        "tool_input": {},
        "tool_response": "the secret is 42",
    }
    _, rewritten = ask(home, post)
    assert rewritten["hookSpecificOutput"]["updatedMCPToolOutput"] == "the [redacted] is 42"
    prompt = {**BASE, "hook_event_name": "UserPromptSubmit", "prompt": "add a test"}
    _, first = ask(home, prompt)
    _, second = ask(home, prompt)  # a new process would read the session's state the same way
    assert first["hookSpecificOutput"] == {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": "first=True: the repository uses tabs",
    }
    assert second["hookSpecificOutput"]["additionalContext"].startswith("first=False")


COUNTER = """\
    from hermes_hooks import hookimpl
    from hermes_hooks.bridges.claude_code import session_state

    @hookimpl
    def pre_tool_call(tool_name):
        state = session_state()
        state["calls"] = state.get("calls", 0) + 1
        if state["calls"] > 2:
            return {"action": "block", "message": f"call {state['calls']}: budget spent"}
        return None

    @hookimpl
    def on_session_start(session_id, platform):
        session_state()["started"] = platform

    @hookimpl
    def post_llm_call(user_message, assistant_response):
        session_state()["last"] = [user_message, assistant_response]

    @hookimpl
    def on_session_finalize(session_id, reason):
        print("finalized", reason)
    """


def test_state_is_kept_per_session_across_calls_and_dropped_at_the_end(
    home: Path,
) -> None:
    user_plugin(home, "budget", COUNTER)
    write_config(home, ["budget"])
    start = {**BASE, "hook_event_name": "SessionStart", "source": "startup"}
    assert ask(home, start) == (0, {})
    call = pre_tool_use("Read", {"file_path": "/p/a.py"})
    assert ask(home, call) == (0, {})
    assert ask(home, call) == (0, {})
    _, third = ask(home, call)
    assert third["hookSpecificOutput"]["permissionDecisionReason"] == "call 3: budget spent"
    other = ask(home, {**call, "session_id": "other"})
    assert other == (0, {})  # another session starts from nothing
    prompt = {**BASE, "hook_event_name": "UserPromptSubmit", "prompt": "fix it"}
    stop = {
        **BASE,
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": "Fixed.",
    }
    assert ask(home, prompt) == (0, {})
    assert ask(home, stop) == (0, {})
    stored = home / "claude-code" / "sessions" / "abc123.json"
    kept = json.loads(stored.read_text())
    assert (kept["started"], kept["calls"], kept["last"]) == (
        "claude-code",
        3,
        ["fix it", "Fixed."],
    )
    end = {**BASE, "hook_event_name": "SessionEnd", "reason": "logout"}
    assert ask(home, end) == (0, {})
    assert not stored.exists()
    assert ask(home, {**BASE, "hook_event_name": "Notification", "message": "hi"}) == (0, {})


def test_input_that_is_not_an_event_fails_closed(home: Path) -> None:
    out = io.StringIO()
    code = run(io.StringIO("not json"), out, hermes_home=home)
    assert code == 2
    assert out.getvalue() == ""
    assert run(io.StringIO('{"tool_name": "Bash"}'), out, hermes_home=home) == 2


def test_the_tool_table_maps_both_ways() -> None:
    assert hermes_tool("Bash") == "terminal"
    assert hermes_tool("Edit") == "patch"
    assert hermes_tool("mcp__my-files__read") == "mcp_my_files_read"
    assert hermes_tool("Frobnicate") == "Frobnicate"
    edit = {"file_path": "/a", "old_string": "x", "new_string": "y"}
    args = to_hermes_args("Edit", edit)
    assert args == {"mode": "replace", "path": "/a", "old_string": "x", "new_string": "y"}
    assert from_hermes_args("Edit", {**args, "new_string": "z"}, edit) == {
        **edit,
        "new_string": "z",
    }
    fetch = to_hermes_args("WebFetch", {"url": "https://x.test", "prompt": "p"})
    assert fetch == {"urls": ["https://x.test"], "prompt": "p"}
    assert to_hermes_args("Bash", {"command": "ls", "timeout": 120000})["timeout"] == 120


def test_install_keeps_the_file_and_adds_nothing_twice(home: Path, tmp_path: Path) -> None:
    settings = tmp_path / "project" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = {"matcher": "Bash", "hooks": [{"type": "command", "command": "my-guard"}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"PreToolUse": [mine]}}))
    result = invoke("claude-hook", "install", "--settings", str(settings))
    assert result.exit_code == 0, result.output
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["PreToolUse"][0] == mine
    ours = data["hooks"]["PreToolUse"][1]
    assert ours["matcher"] == "*"
    assert ours["hooks"][0]["command"].endswith("claude-hook")
    assert set(data["hooks"]) == {
        "PreToolUse",
        "PostToolUse",
        "UserPromptSubmit",
        "Stop",
        "SubagentStop",
        "SessionStart",
        "SessionEnd",
    }
    assert "matcher" not in data["hooks"]["Stop"][0]
    again = invoke("claude-hook", "install", "--settings", str(settings))
    assert "already set up" in again.stdout
    assert json.loads(settings.read_text()) == data
    gone = invoke("claude-hook", "uninstall", "--settings", str(settings))
    assert gone.exit_code == 0, gone.output
    assert json.loads(settings.read_text()) == {"model": "opus", "hooks": {"PreToolUse": [mine]}}
    settings.write_text("{broken")
    with pytest.raises(Exception, match="not valid JSON"):
        install_hooks(settings, "x")
    assert settings.read_text() == "{broken"  # never half-written, never replaced

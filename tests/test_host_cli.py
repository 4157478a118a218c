"""``hermes -z``, ``hermes chat`` and ``hermes gateway replay`` on a temporary home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result
from homes import workdir_home as home  # noqa: F401  (the fixture)
from host_helpers import ChatServer, chat_server
from plugin_builders import user_plugin, write_config

from hermes_hooks.cli import cli

__all__ = ["chat_server"]


def hermes(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_oneshot_prints_the_answer(home: Path) -> None:
    result = hermes("-z", "run `echo hello`")
    assert result.exit_code == 0
    assert result.output == "Ran `echo hello` (exit code 0):\nhello\n"


def test_oneshot_json_lists_hooks_tool_calls_and_the_result(home: Path) -> None:
    result = hermes("-z", "run `echo hello`", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert (data["ok"], data["provider"], data["model"]) == (True, "offline", "offline-rules-1")
    assert data["answer"] == "Ran `echo hello` (exit code 0):\nhello"
    (turn,) = data["turns"]
    assert turn["tool_calls"][0]["tool_name"] == "terminal"
    hooks = [e["hook"] for e in data["events"] if e["type"] == "hook"]
    assert hooks[:2] == ["on_session_start", "pre_llm_call"]
    assert hooks[-2:] == ["on_session_end", "on_session_finalize"]
    assert [e["type"] for e in data["events"]].count("tool_call") == 1


def test_oneshot_fails_with_exit_1_when_the_model_fails(home: Path) -> None:
    write_config(
        home,
        model={
            "provider": "openai-compatible",
            "base_url": "http://127.0.0.1:9/v1",
            "name": "m",
            "max_retries": 0,
        },
    )
    result = CliRunner().invoke(cli, ["-z", "hi"])
    assert result.exit_code == 1
    assert "The model request failed: cannot reach http://127.0.0.1:9/v1" in result.output


def test_a_bad_model_section_is_a_one_line_error(home: Path) -> None:
    write_config(home, model={"provider": "gpt"})
    result = CliRunner().invoke(cli, ["-z", "hi"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: model.provider 'gpt' is unknown")
    assert "Traceback" not in result.output


def test_json_without_oneshot_is_a_usage_error(home: Path) -> None:
    result = CliRunner().invoke(cli, ["--json"])
    assert result.exit_code == 2
    assert "--json here goes with -z PROMPT" in result.output


def test_oneshot_uses_the_configured_remote_model(home: Path, chat_server: ChatServer) -> None:
    write_config(
        home,
        model={"provider": "openai-compatible", "base_url": chat_server.base_url, "name": "remote"},
    )
    chat_server.reply_tool_call("terminal", {"command": "echo via-http"})
    chat_server.reply_text("It printed via-http.")
    result = hermes("-z", "run something")
    assert result.output == "It printed via-http.\n"
    assert (
        json.loads(chat_server.requests[1]["json"]["messages"][-1]["content"])["output"]
        == "via-http\n"
    )


def test_chat_runs_turns_and_commands_until_exit(home: Path) -> None:
    user_plugin(
        home,
        "hello-cmd",
        "def register(ctx):\n    ctx.register_command('hello', lambda raw: f'hello {raw}!')\n",
    )
    write_config(home, ["hello-cmd"])
    result = hermes("chat", input="/hello world\n\nrun `echo hi`\n/exit\nrun `echo never`\n")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert (
        lines[0] == "hermes chat on offline/offline-rules-1: /help lists the commands, /exit ends."
    )
    assert lines[1:] == ["hello world!", "Ran `echo hi` (exit code 0):", "hi", "Bye."]


def test_chat_ends_at_end_of_input(home: Path) -> None:
    result = hermes("chat", input="read missing.txt\n")
    assert result.exit_code == 0
    assert "read_file: 'missing.txt' is not found" in result.output


def test_gateway_replay(home: Path, tmp_path: Path) -> None:
    user_plugin(
        home,
        "mute",
        """
        from hermes_hooks import hookimpl

        @hookimpl
        def pre_gateway_dispatch(event):
            if event.sender == "spammer":
                return {"action": "skip", "reason": "muted sender"}
            if event.text.startswith("!"):
                return {"action": "rewrite", "text": "run `echo " + event.text[1:] + "`"}
            return None
        """,
    )
    write_config(home, ["mute"])
    events = tmp_path / "events.jsonl"
    events.write_text(
        '{"platform": "telegram", "sender": "ann", "text": "!hey"}\n'
        '{"platform": "telegram", "sender": "spammer", "text": "buy now"}\n'
    )
    result = hermes("gateway", "replay", str(events))
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith(
        "[1] telegram ann: 'run `echo hey`' (rewritten by a plugin) -> replied in session-"
    )
    assert lines[1:3] == ["    Ran `echo hey` (exit code 0):", "    hey"]
    assert lines[3] == "[2] telegram spammer: 'buy now' -> skipped: muted sender"
    as_json = hermes("gateway", "replay", "--json", str(events))
    outcomes = [json.loads(line) for line in as_json.output.splitlines()]
    assert [o["action"] for o in outcomes] == ["replied", "skipped"]


def test_gateway_replay_from_stdin_reports_bad_lines(home: Path) -> None:
    result = CliRunner().invoke(cli, ["gateway", "replay", "-"], input='{"text": "hi"}\n[1]\n')
    assert result.exit_code == 1
    assert (
        "[2] invalid: line 2: not a message event: expected a JSON object, found list"
        in result.output
    )
    assert "Error: 1 line(s) are not message events" in result.output


def test_the_main_job_runs_as_a_real_process(home: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HERMES_HOME=str(home), HERMES_BUNDLED_PLUGINS=os.environ["HERMES_BUNDLED_PLUGINS"])
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "-z", "read notes.txt"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "notes.txt:\nremember the milk\n"

"""Shell hooks: ``hooks:`` in config.yaml, consent keyed to the script, Hermes' and Claude Code's
answers, the process group killed at the timeout, and ``hermes hooks list|test|revoke|doctor``.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_support import hermes
from click.testing import CliRunner
from homes import workdir_home as home  # noqa: F401  (the fixture)
from host_helpers import ScriptedModel, text, tool_call

from hermes_hooks.cli.main import cli
from hermes_hooks.host import Session, create_manager
from hermes_hooks.host.shell_hooks import (
    ShellHookSpec,
    SpawnResult,
    approval_state,
    evaluate,
    parse_hooks,
    spawn,
)

# Claude Code's documented shape: read the event on stdin, exit 2 with a reason on stderr.
NO_RM = f"""\
#!{sys.executable}
import json, sys
event = json.load(sys.stdin)
command = (event.get("tool_input") or {{}}).get("command", "")
if event.get("tool_name") == "terminal" and "rm -rf" in command:
    print("no rm -rf here, please", file=sys.stderr)
    sys.exit(2)
"""


@pytest.fixture(autouse=True)
def hooks_not_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Set (not only absent), so that an --accept-hooks run in this process is undone after."""
    monkeypatch.setenv("HERMES_ACCEPT_HOOKS", "0")


def script(home: Path, name: str, body: str) -> Path:
    path = home / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    path.chmod(0o755)
    return path


def configure(home: Path, hooks: dict[str, Any], **more: Any) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump({"hooks": hooks, **more}, sort_keys=False))


def run(*args: str) -> Any:
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        runner = CliRunner()
    return runner.invoke(cli, list(args), catch_exceptions=False)


def test_a_claude_code_hook_blocks_rm_rf_in_hermes_z_once_consented(
    home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hook = script(home, "no_rm.py", NO_RM)
    configure(home, {"pre_tool_call": [{"command": str(hook), "matcher": "terminal"}]})
    victims = [tmp_path / f"victim{n}" for n in range(4)]
    for victim in victims:
        victim.mkdir()

    # Not approved, no terminal: the hook does not run, and says so.
    first = run("-z", f"run `rm -rf {victims[0]}`")
    assert not victims[0].exists()
    assert first.exit_code == 0
    assert "is not approved" in caplog.text
    assert "--accept-hooks" in caplog.text
    caplog.clear()

    # Approved on the command line (a real hermes process): the call is blocked.
    second = hermes(home, "--accept-hooks", "-z", f"run `rm -rf {victims[1]}`", cwd=tmp_path)
    assert victims[1].is_dir(), second.stderr
    assert "no rm -rf here, please" in second.stdout
    assert approval_state(home, ShellHookSpec("pre_tool_call", str(hook))) == "approved"

    # The approval is remembered.
    third = run("-z", f"run `rm -rf {victims[2]}`")
    assert victims[2].is_dir()
    assert "no rm -rf here, please" in third.stdout
    assert run("-z", "run `echo fine`").stdout.startswith("Ran `echo fine` (exit code 0)")

    # An edited script is a new script: asked about again, and meanwhile not run.
    hook.write_text(NO_RM + "# edited\n")
    caplog.clear()
    fourth = run("-z", f"run `rm -rf {victims[3]}`")
    assert fourth.exit_code == 0
    assert not victims[3].exists()
    assert "since its script changed" in caplog.text


def test_a_hung_hook_is_killed_at_its_timeout_with_its_children(home: Path) -> None:
    pid_file = home / "child.pid"
    hung = script(
        home,
        "hung.py",
        f"""\
        #!{sys.executable}
        import subprocess, sys, time
        child = subprocess.Popen(["sleep", "60"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """,
    )
    spec = ShellHookSpec("pre_tool_call", str(hung), timeout=1, fail_closed=True)
    result = spawn(spec, "{}")
    assert result.timed_out
    child = int(pid_file.read_text())
    for _ in range(100):  # the orphan is reaped by init once killed
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        pytest.fail(f"the hook's child {child} outlived the timeout")
    decision = evaluate(spec, result)
    assert decision is not None
    assert decision["action"] == "block"
    assert "timed out after 1 s" in decision["message"]
    open_spec = ShellHookSpec("pre_tool_call", str(hung), timeout=1)
    assert evaluate(open_spec, result) is None  # fails open without fail_closed


def test_a_hook_is_bounded_by_its_own_timeout_not_by_hook_callback_timeout(
    home: Path, tmp_path: Path
) -> None:
    slow = script(
        home,
        "slow.py",
        f"""\
        #!{sys.executable}
        import sys, time
        time.sleep(0.6)
        print("slow no", file=sys.stderr)
        sys.exit(2)
        """,
    )
    configure(
        home,
        {"pre_tool_call": [{"command": str(slow), "timeout": 30}]},
        hooks_auto_accept=True,
        plugins={"hook_callback_timeout": 0.2},
    )
    pm = create_manager(home)
    model = ScriptedModel(tool_call("terminal", {"command": "echo hi"}), text("ok"))
    result = Session(pm, model, cwd=tmp_path).run_turn("go")
    answer = result.tool_calls[0].result
    assert "slow no" in answer  # the script's own answer, given after 0.6 s
    assert "timed out" not in answer
    assert "did not finish" not in answer


def test_on_the_async_path_a_shell_hook_never_blocks_the_callers_loop(home: Path) -> None:
    import asyncio

    from hermes_hooks import Hooks

    slow = script(
        home,
        "slow_async.py",
        f"""\
        #!{sys.executable}
        import sys, time
        time.sleep(0.3)
        print("no", file=sys.stderr)
        sys.exit(2)
        """,
    )
    configure(home, {"pre_tool_call": [{"command": str(slow)}]}, hooks_auto_accept=True)
    pm = create_manager(home)
    order: list[str] = []

    async def scenario() -> Any:
        async def tick() -> None:
            while True:
                order.append("tick")
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        decision = await Hooks(pm).apre_tool_call(tool_name="terminal", args={"command": "x"})
        order.append("done")
        ticker.cancel()
        return decision

    decision = asyncio.run(scenario())
    assert decision.action == "block"
    assert decision.message == "no"
    assert order.index("done") > 1  # the loop ran other tasks while the script ran


@pytest.mark.parametrize(
    ("event", "result", "answer"),
    [
        ("pre_tool_call", SpawnResult(0, '{"action": "block", "message": "no"}'), "block:no"),
        ("pre_tool_call", SpawnResult(0, '{"decision": "block", "reason": "cc"}'), "block:cc"),
        (
            "pre_tool_call",
            SpawnResult(
                0,
                '{"hookSpecificOutput": {"hookEventName": "PreToolUse", '
                '"permissionDecision": "deny", "permissionDecisionReason": "denied"}}',
            ),
            "block:denied",
        ),
        ("pre_tool_call", SpawnResult(2, "", "from stderr"), "block:from stderr"),
        ("pre_tool_call", SpawnResult(2, ""), "block:Blocked by shell hook."),
        ("pre_tool_call", SpawnResult(0, "not json"), None),
        ("pre_tool_call", SpawnResult(1, ""), None),
        ("pre_llm_call", SpawnResult(0, '{"context": "remember X"}'), "context:remember X"),
        ("post_tool_call", SpawnResult(2, "", "ignored"), None),
        (
            "pre_verify",
            SpawnResult(0, '{"decision": "block", "reason": "tests"}'),
            "continue:tests",
        ),
    ],
)
def test_hermes_and_claude_code_answers(event: str, result: SpawnResult, answer: Any) -> None:
    decision = evaluate(ShellHookSpec(event, "x"), result)
    if answer is None:
        assert decision is None
        return
    assert decision is not None
    kind, _, message = answer.partition(":")
    field = {"block": "message", "context": "context", "continue": "message"}[kind]
    assert decision.get("action", kind) == kind
    assert decision[field] == message


def test_a_modify_answer_rewrites_the_tool_call_and_pre_llm_call_context(
    home: Path, tmp_path: Path
) -> None:
    modify = script(
        home,
        "modify.sh",
        """\
        #!/bin/sh
        cat > /dev/null
        echo '{"decision": "modify", "tool_input": {"command": "echo rewritten"}}'
        """,
    )
    context = script(home, "context.sh", '#!/bin/sh\necho \'{"context": "from a script"}\'\n')
    configure(
        home,
        {
            "pre_tool_call": [{"command": str(modify)}],
            "pre_llm_call": [{"command": f"sh {context}"}],
        },
        hooks_auto_accept=True,
    )
    pm = create_manager(home)
    model = ScriptedModel(tool_call("terminal", {"command": "echo original"}), text("ok"))
    result = Session(pm, model, cwd=tmp_path).run_turn("go")
    assert "rewritten" in result.tool_calls[0].result
    assert "from a script" in json.dumps(model.requests[0]["messages"])
    owners = {info.plugin for order in _orders(pm) for info in order.impls}
    assert f"shell:{modify}" in owners


def _orders(pm: Any) -> Any:
    from hermes_hooks.admin.introspect import list_hook_order

    return list_hook_order(pm, None)


def test_bad_entries_are_refused_alone() -> None:
    specs, problems = parse_hooks(
        {
            "pre_tool_call": [
                {"command": "ok.sh", "matcher": "terminal", "timeout": 5},
                {"matcher": "x"},
                {"command": "bad.sh", "matcher": "("},
                {"command": "big.sh", "timeout": 9999},
            ],
            "pre_tool_cal": [{"command": "typo.sh"}],
            "transform_api_error_classification": [{"command": "x.sh"}],
            "on_session_start": [{"command": "s.sh", "fail_closed": True}],
            "post_tool_call": "not a list",
        }
    )
    assert [(s.event, s.command, s.timeout) for s in specs] == [
        ("pre_tool_call", "ok.sh", 5),
        ("pre_tool_call", "big.sh", 300),
        ("on_session_start", "s.sh", 60),
    ]
    assert specs[2].fail_closed is False
    text_of = "\n".join(problems)
    assert "hooks.pre_tool_call[1]: 'command' must be a non-empty string" in text_of
    assert "not a valid regex" in text_of
    assert "did you mean 'pre_tool_call'?" in text_of
    assert "Python plugins only" in text_of
    assert "hooks.post_tool_call: expected a list" in text_of


def test_safe_mode_runs_no_shell_hook(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = home / "ran"
    hook = script(home, "mark.sh", f"#!/bin/sh\ntouch {marker}\n")
    configure(home, {"on_session_start": [{"command": str(hook)}]}, hooks_auto_accept=True)
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    Session(create_manager(home), ScriptedModel(text("hi"))).run_turn("hi")
    assert not marker.exists()
    monkeypatch.delenv("HERMES_SAFE_MODE")
    Session(create_manager(home), ScriptedModel(text("hi"))).run_turn("hi")
    assert marker.exists()


def test_hermes_hooks_list_test_revoke_and_doctor(home: Path) -> None:
    hook = script(home, "no_rm.py", NO_RM)
    missing = home / "hooks" / "missing.sh"
    configure(
        home,
        {
            "pre_tool_call": [{"command": str(hook), "matcher": "terminal"}],
            "post_tool_call": [{"command": str(missing)}],
        },
    )
    listed = json.loads(run("hooks", "list", "--json").stdout)
    assert [(h["event"], h["approval"], h["owner"]) for h in listed["hooks"]] == [
        ("pre_tool_call", "unapproved", f"shell:{hook}"),
        ("post_tool_call", "unapproved", f"shell:{missing}"),
    ]
    tested = run("hooks", "test", "pre_tool_call", "--payload", '{"args": {"command": "rm -rf /"}}')
    assert tested.exit_code == 0
    assert "no rm -rf here, please" in tested.stdout
    assert "exit 2" in tested.stdout
    assert run("hooks", "test", "pre_tool_cal").exit_code == 1

    run("--accept-hooks", "plugins", "list")  # approves them, as any command that loads
    assert json.loads(run("hooks", "list", "--json").stdout)["hooks"][0]["approval"] == "approved"
    doctor = run("hooks", "doctor")
    assert doctor.exit_code == 1
    assert "script not found" in doctor.stdout
    assert "ran in" in doctor.stdout
    assert "Revoked 1 approval" in run("hooks", "revoke", str(hook)).stdout
    assert json.loads(run("hooks", "list", "--json").stdout)["hooks"][0]["approval"] == (
        "unapproved"
    )
    # hermes hooks NAME still shows that hook's implementations.
    assert run("hooks", "pre_tool_call").exit_code == 0

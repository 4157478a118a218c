"""One turn end to end, with real plugin folders in a temporary home: the exact hook order,
what each hook receives, and how the turn ends when something goes wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from homes import recording_home as home  # noqa: F401  (the fixture)
from host_helpers import (
    ONE_TOOL_TURN,
    ScriptedModel,
    names,
    plugin_module,
    recorded,
    text,
    tool_call,
)
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.backends.models import ModelError, ModelResponse
from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.manager import PluginManager


def test_the_hooks_of_a_turn_fire_in_this_exact_order(home: Path, tmp_path: Path) -> None:
    pm = create_manager(home)
    session = Session(pm, cwd=tmp_path)  # the offline model: "run `...`" calls terminal
    result = session.run_turn("run `echo hello`")
    assert result.completed
    assert result.text == "Ran `echo hello` (exit code 0):\nhello"
    assert names(recorded(pm)) == ONE_TOOL_TURN
    session.run_turn("thanks")
    assert names(recorded(pm))[len(ONE_TOOL_TURN) :] == [
        "pre_llm_call",
        "pre_api_request",
        "post_api_request",
        "transform_llm_output",
        "post_llm_call",
        "on_session_end",
    ]
    session.close()
    assert names(recorded(pm))[-1] == "on_session_finalize"


def test_every_hook_gets_the_ids_of_its_turn(home: Path, tmp_path: Path) -> None:
    pm = create_manager(home)
    session = Session(pm, cwd=tmp_path, platform="cli")
    result = session.run_turn("run `echo hi`")
    calls = dict(reversed(recorded(pm)))  # the first call of each hook
    sid, tid = session.session_id, result.turn_id
    assert calls["on_session_start"] == {
        "session_id": sid,
        "model": "offline-rules-1",
        "platform": "cli",
        "telemetry_schema_version": "hermes.observer.v1",
    }
    # Every fire site stamps the observer schema, as Hermes' invoke_hook does.
    assert {kw["telemetry_schema_version"] for _, kw in recorded(pm)} == {"hermes.observer.v1"}
    assert calls["pre_llm_call"]["is_first_turn"] is True
    assert calls["pre_llm_call"]["user_message"] == "run `echo hi`"
    assert calls["pre_llm_call"]["conversation_history"][-1] == {
        "role": "user",
        "content": "run `echo hi`",
    }
    pre, post = calls["pre_tool_call"], calls["post_tool_call"]
    assert (pre["tool_name"], pre["args"], pre["session_id"], pre["turn_id"]) == (
        "terminal",
        {"command": "echo hi"},
        sid,
        tid,
    )
    assert pre["tool_call_id"] == post["tool_call_id"] == "call_1"
    assert (
        pre["api_request_id"]
        == post["api_request_id"]
        == calls["pre_api_request"]["api_request_id"]
    )
    assert pre["task_id"] == result.task_id
    assert (post["status"], post["error_type"], post["error_message"]) == ("ok", None, None)
    assert isinstance(post["duration_ms"], int)
    assert calls["transform_terminal_output"]["returncode"] == 0
    assert calls["pre_api_request"]["tool_count"] >= 2
    assert calls["pre_api_request"]["request_messages"][0]["role"] == "system"
    end = calls["on_session_end"]
    assert (end["completed"], end["failed"], end["interrupted"]) == (True, False, False)
    assert end["turn_exit_reason"] == "text_response(stop)"
    assert calls["post_llm_call"]["assistant_response"] == result.text


CONTEXT_PLUGIN = """
from hermes_hooks import hookimpl

@hookimpl
def pre_llm_call(is_first_turn):
    return {"context": "Remember: the user likes short answers."} if is_first_turn else None
"""


def test_pre_llm_call_context_goes_to_this_requests_user_message_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "context", CONTEXT_PLUGIN)
    write_config(home, ["context"])
    model = ScriptedModel(text("one"), text("two"))
    session = Session(create_manager(home), model)
    first = session.run_turn("hello")
    session.run_turn("again")
    assert first.context == "Remember: the user likes short answers."
    sent = model.requests[0]["messages"]
    assert sent[0] == {"role": "system", "content": session.full_system_prompt()}
    assert sent[0]["content"].startswith(session.system_prompt + "\n\n# Memory\n")
    assert sent[1] == {
        "role": "user",
        "content": "hello\n\nRemember: the user likes short answers.",
    }
    assert session.messages[0] == {"role": "user", "content": "hello"}
    assert model.requests[1]["messages"][1] == {"role": "user", "content": "hello"}
    assert model.requests[1]["messages"][-1] == {"role": "user", "content": "again"}


TRANSFORMS = """
from hermes_hooks import hookimpl

@hookimpl
def transform_tool_result(result):
    return result.replace("secret", "[redacted]")

@hookimpl
def transform_llm_output(response_text):
    return response_text + " (checked)"

@hookimpl
def transform_terminal_output(output):
    return output.replace("\\n", " [terminal]\\n")
"""


def test_transforms_change_what_the_model_and_the_user_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "transforms", TRANSFORMS)
    write_config(home, ["transforms"])
    session = Session(create_manager(home), cwd=tmp_path)
    result = session.run_turn("run `echo secret`")
    assert result.tool_calls[0].result == '{"output": "[redacted] [terminal]\\n", "exit_code": 0}'
    assert result.text == "Ran `echo secret` (exit code 0):\n[redacted] [terminal] (checked)"
    assert session.messages[-1] == {"role": "assistant", "content": result.text}


def test_a_failing_model_ends_the_turn_as_failed_with_on_session_end(home: Path) -> None:
    pm = create_manager(home)
    model = ScriptedModel(ModelError("HTTP 401: bad key", status_code=401, reason="auth"))
    result = Session(pm, model).run_turn("hi")
    assert (result.completed, result.failed, result.exit_reason) == (False, True, "api_error(auth)")
    assert "bad key" in result.text
    assert names(recorded(pm)) == [
        "on_session_start",
        "pre_llm_call",
        "pre_api_request",
        "transform_api_error_classification",
        "api_request_error",
        "on_session_end",
    ]
    error = recorded(pm)[4][1]
    assert (error["status_code"], error["retryable"], error["reason"]) == (401, False, "auth")
    end = recorded(pm)[-1][1]
    assert (end["failed"], end["completed"], end["turn_exit_reason"]) == (
        True,
        False,
        "api_error(auth)",
    )


def test_a_provider_bug_is_reported_like_a_failed_request(home: Path) -> None:
    pm = create_manager(home)

    def broken(messages: object) -> ModelResponse:
        raise KeyError("choices")

    result = Session(pm, ScriptedModel(broken)).run_turn("hi")
    assert result.failed
    assert result.exit_reason == "api_error(provider_error)"
    assert "KeyError" in (result.error or "")


def test_the_iteration_limit_ends_a_turn_without_post_llm_call(home: Path) -> None:
    pm = create_manager(home)
    model = ScriptedModel(*[tool_call("read_file", {"path": "x"}, f"c{i}") for i in range(5)])
    result = Session(pm, model, max_iterations=2).run_turn("loop")
    assert result.exit_reason == "max_iterations_reached(2/2)"
    assert not result.completed
    assert len(result.tool_calls) == 2
    assert "post_llm_call" not in names(recorded(pm))
    assert names(recorded(pm))[-1] == "on_session_end"


VERIFY = """
from hermes_hooks import hookimpl
from hermes_hooks.host import record_changed_path

def register(ctx):
    def edit(args, **kwargs):
        record_changed_path(args["path"])
        return '{"ok": true}'
    ctx.register_tool("edit", "files", {"parameters": {"type": "object"}}, edit)

SEEN = []

@hookimpl
def pre_verify(attempt, final_response, changed_paths):
    SEEN.append((attempt, final_response, changed_paths))
    if attempt == 0:
        return {"action": "continue", "message": "Run the tests for " + ", ".join(changed_paths)}
    return None
"""


def test_pre_verify_sends_the_agent_back_when_a_tool_changed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "verify", VERIFY)
    write_config(home, ["verify"])
    pm = create_manager(home)
    model = ScriptedModel(tool_call("edit", {"path": "b.py"}), text("done"), text("tested"))
    result = Session(pm, model).run_turn("fix it")
    assert result.text == "tested"
    assert model.requests[2]["messages"][-2:] == [
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "Run the tests for b.py"},
    ]
    assert plugin_module(pm, "verify").SEEN == [
        (0, "done", ["b.py"]),
        (1, "tested", ["b.py"]),
    ]


def test_hook_failures_never_end_the_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(
        home,
        "noisy",
        """
        from hermes_hooks import hookimpl

        @hookimpl
        def post_tool_call():
            raise RuntimeError("observer broke")

        @hookimpl
        def transform_llm_output():
            raise RuntimeError("transform broke")
        """,
    )
    write_config(home, ["noisy"])
    pm: PluginManager = create_manager(home)
    result = Session(pm, cwd=tmp_path).run_turn("run `echo ok`")
    assert result.completed
    assert result.text == "Ran `echo ok` (exit code 0):\nok"
    info = pm.get_plugin_info("noisy")
    assert info is not None
    assert info.hook_errors == 2


def test_one_answer_asking_for_thousands_of_tool_calls_runs_only_the_bound(home: Path) -> None:
    """``max_iterations`` bounds model calls; ``max_tool_calls`` bounds the calls of one answer
    (issue 26, item 14): the rest are not run, the model is told, and the turn goes on."""
    from hermes_hooks.backends.models.base import ToolCall

    pm = create_manager(home)
    flood = ModelResponse(
        tool_calls=tuple(ToolCall(f"c{i}", "read_file", '{"path": "x"}') for i in range(20_000)),
        finish_reason="tool_calls",
    )
    model = ScriptedModel(flood, text("done"))
    session = Session(pm, model, max_tool_calls=4)
    result = session.run_turn("flood")
    assert result.completed
    assert result.text == "done"
    assert len(result.tool_calls) == 4
    second = model.requests[1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert [c["id"] for c in assistant["tool_calls"]] == ["c0", "c1", "c2", "c3"]
    tool_messages = [m for m in second if m["role"] == "tool"]
    assert len(tool_messages) == 4
    assert "19996 more tool calls" in tool_messages[-1]["content"]
    assert "max_tool_calls (4)" in tool_messages[-1]["content"]
    assert Session(pm, ScriptedModel()).max_tool_calls == 32

"""The hooks Hermes added since the seeds, fired by the reference host where it has the surface.

Streaming runs against a real HTTP server on 127.0.0.1 that speaks server-sent events as OpenAI
and Anthropic do; a stream observer that blocks does not hold up a single token.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from host_helpers import ChatServer, ScriptedModel, text, tool_call
from plugin_builders import PluginHome, home, recorder_module

from hermes_hooks import Hooks
from hermes_hooks.backends.models import ModelError, ModelResponse, ToolCall
from hermes_hooks.backends.models.anthropic import AnthropicMessagesModel
from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel
from hermes_hooks.host import Session, create_manager

__all__ = ["home"]

REC = "hermes_test_newer_hooks"

RECORD_ALL = f"""
import {REC} as rec

def make(name):
    def record(**kwargs):
        if rec.gate is not None and name == "on_stream_delta":
            rec.gate.wait(30)
        rec.calls.append((name, kwargs))
    return record

def register(ctx):
    for name in rec.hooks:
        ctx.register_hook(name, make(name))
"""


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Any:
    return recorder_module(monkeypatch, REC, calls=[], hooks=[], gate=None)


def recording(home: PluginHome, rec: Any, *hooks: str) -> Any:
    rec.hooks[:] = hooks
    home.add_plugin("recorder", RECORD_ALL)
    home.write_config()
    return create_manager(home.root)


def sse(*events: tuple[str | None, Any]) -> str:
    lines = []
    for event, data in events:
        if event is not None:
            lines.append(f"event: {event}")
        lines.append(f"data: {data if isinstance(data, str) else json.dumps(data)}")
        lines.append("")
    return "\n".join(lines) + "\n"


def openai_chunks(*pieces: str) -> str:
    chunks: list[tuple[str | None, Any]] = [
        (None, {"model": "served", "choices": [{"delta": {"content": p}}]}) for p in pieces
    ]
    chunks.append((None, {"choices": [{"delta": {}, "finish_reason": "stop"}]}))
    chunks.append((None, "[DONE]"))
    return sse(*chunks)


# -- streaming ----------------------------------------------------------------------------------


def test_on_stream_delta_a_blocked_observer_does_not_delay_the_tokens(
    home: PluginHome, rec: Any
) -> None:
    pm = recording(home, rec, "on_stream_start", "on_stream_delta", "on_stream_end")
    rec.gate = threading.Event()  # the observer blocks on every delta until the test says
    shown: list[str] = []
    with ChatServer() as server:
        server.reply(openai_chunks("Hel", "lo ", "wor", "ld"))
        model = OpenAICompatibleModel(server.base_url, "m")
        session = Session(pm, model)
        session.on_text = shown.append
        result = session.run_turn("hi")
        # Every token was shown and the turn is over while the observer still waits.
        assert shown == ["Hel", "lo ", "wor", "ld"]
        assert result.text == "Hello world"
        # No delta reached the blocked observer; on_stream_end has a worker of its own and
        # may already have been delivered (how soon depends only on thread scheduling).
        called = [name for name, _ in rec.calls]
        assert called[0] == "on_stream_start"
        assert "on_stream_delta" not in called
        rec.gate.set()
        assert session.stream_observers() is not None
        session.close()
    assert server.requests[0]["json"]["stream"] is True
    deltas = [kw["delta"] for name, kw in rec.calls if name == "on_stream_delta"]
    assert deltas == ["Hel", "lo ", "wor", "ld"]
    (end,) = [kw for name, kw in rec.calls if name == "on_stream_end"]
    assert (end["final_text"], end["finished"], end["error"]) == ("Hello world", True, None)
    assert end["session_id"] == session.session_id
    assert end["iteration"] == 1
    assert (end["provider"], end["model"], end["surface"]) == ("openai-compatible", "m", "cli")


def test_on_stream_start_and_end_frame_an_anthropic_stream_with_a_tool_call(
    home: PluginHome, rec: Any, tmp_path: Path
) -> None:
    pm = recording(home, rec, "on_stream_start", "on_stream_end", "on_interim_message")
    tool_stream = sse(
        ("message_start", {"type": "message_start", "message": {"model": "claude-x"}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Lo"},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "oking."},
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_9", "name": "terminal"},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"command": "ec'},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": 'ho hi"}'},
            },
        ),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ("message_stop", {"type": "message_stop"}),
    )
    answer = sse(
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Done"},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    )
    with ChatServer() as server:
        server.reply(tool_stream)
        server.reply(answer)
        model = AnthropicMessagesModel(server.root, "claude-x", api_key="k")
        with Session(pm, model, cwd=tmp_path) as session:
            result = session.run_turn("say hi")
            assert session._streams is not None
            assert session._streams.flush()
    assert result.text == "Done"
    assert [(c.tool_name, c.args) for c in result.tool_calls] == [
        ("terminal", {"command": "echo hi"})
    ]
    # Each hook has its own worker: the order holds per hook, not across hooks.
    by_hook: dict[str, list[dict[str, Any]]] = {}
    for name, kwargs in rec.calls:
        by_hook.setdefault(name, []).append(kwargs)
    assert [c["iteration"] for c in by_hook["on_stream_start"]] == [1, 2]
    assert [(c["final_text"], c["iteration"]) for c in by_hook["on_stream_end"]] == [
        ("Looking.", 1),
        ("Done", 2),
    ]
    (interim,) = by_hook["on_interim_message"]
    assert (interim["text"], interim["already_streamed"], interim["iteration"]) == (
        "Looking.",
        True,
        1,
    )


def test_on_stream_end_reports_a_stream_that_failed(home: PluginHome, rec: Any) -> None:
    pm = recording(home, rec, "on_stream_end")
    with ChatServer() as server:
        server.reply({"error": {"message": "bad key"}}, status=401)
        session = Session(pm, OpenAICompatibleModel(server.base_url, "m"), max_retries=0)
        result = session.run_turn("hi")
        session.close()
    assert result.failed
    (end,) = [kw for _, kw in rec.calls]
    assert end["finished"] is False
    assert "HTTP 401" in end["error"]


def test_on_interim_message_fires_after_a_response_that_was_not_streamed(
    home: PluginHome, rec: Any, tmp_path: Path
) -> None:
    pm = recording(home, rec, "on_interim_message")
    thinking = ModelResponse(
        text="First, a look.",
        tool_calls=(ToolCall("c1", "terminal", '{"command": "echo x"}'),),
        finish_reason="tool_calls",
    )

    class Whole(ScriptedModel):
        def stream(self, *args: Any, **kwargs: Any) -> ModelResponse:
            raise AssertionError("streamed without a reason")

    session = Session(pm, Whole(thinking, text("ok")), cwd=tmp_path)
    session.run_turn("look")
    session.close()
    (interim,) = [kw for _, kw in rec.calls]
    assert (interim["text"], interim["already_streamed"]) == ("First, a look.", False)


# -- model errors -------------------------------------------------------------------------------

CLASSIFIER = """
def classify(status_code=None, error_message="", **kwargs):
    if status_code == 400 and "overloaded" in error_message:
        return {"reason": "overloaded", "retryable": True}
    return {"reason": "not-a-reason"}

def register(ctx):
    ctx.register_hook("transform_api_error_classification", classify)
"""


def test_transform_api_error_classification_makes_a_failure_retryable(home: PluginHome) -> None:
    home.add_plugin("classifier", CLASSIFIER)
    home.write_config()
    pm = create_manager(home.root)
    busy = ModelError("HTTP 400: upstream overloaded", status_code=400, reason="bad_request")
    model = ScriptedModel(busy, text("fine"))
    result = Session(pm, model, retry_backoff=0).run_turn("hi")
    assert result.text == "fine"
    assert len(model.requests) == 2
    # A different error: the plugin's answer does not fit, so the host's classification stands.
    other = ModelError("HTTP 400: bad field", status_code=400, reason="bad_request")
    result = Session(pm, ScriptedModel(other, text("never")), retry_backoff=0).run_turn("hi")
    assert result.failed
    assert result.exit_reason == "api_error(bad_request)"


def test_transform_api_error_classification_gets_hermes_arguments(
    home: PluginHome, rec: Any
) -> None:
    pm = recording(home, rec, "transform_api_error_classification")
    error = ModelError("HTTP 429: slow down", status_code=429, reason="rate_limit")
    Session(pm, ScriptedModel(error), max_retries=0).run_turn("hi")
    (call,) = [kw for _, kw in rec.calls]
    assert call["status_code"] == 429
    assert call["error"] is error
    assert (call["error_type"], call["provider"], call["num_messages"]) == (
        "ModelError",
        "scripted",
        2,
    )
    assert "slow down" in call["error_message"]


# -- skills, slash commands, the loop -----------------------------------------------------------


def test_on_skill_lifecycle_fires_when_a_skill_loads(
    home: PluginHome, rec: Any, tmp_path: Path
) -> None:
    skill = home.root / "skills" / "notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: notes\ndescription: Take notes\n---\nWrite them down.\n")
    pm = recording(home, rec, "on_skill_lifecycle")
    model = ScriptedModel(
        tool_call("skill_view", {"name": "notes"}),
        tool_call("skill_view", {"name": "notes"}),
        tool_call("skill_view", {"name": "missing"}),
        text("ok"),
    )
    session = Session(pm, model, cwd=tmp_path)
    session.run_turn("load notes")
    calls = [kw for _, kw in rec.calls]
    assert [(c["action"], c["skill_name"], c["use_count"], c["reused"]) for c in calls] == [
        ("loaded", "notes", 1, False),
        ("loaded", "notes", 2, True),
    ]
    assert calls[0]["session_id"] == session.session_id
    assert calls[0]["provenance"] == "local"


def test_pre_command_sees_skills_and_the_alias_used(home: PluginHome, rec: Any) -> None:
    pm = recording(home, rec, "pre_command")
    session = Session(pm, ScriptedModel())
    first_id = session.session_id
    session.send("/skills")
    session.send("/reset now")
    session.send("/nonsense")
    assert [(kw["command"], kw["alias_used"], kw["args_raw"]) for _, kw in rec.calls] == [
        ("skills", None, ""),
        ("new", "reset", "now"),
    ]
    assert rec.calls[0][1]["surface"] == "cli"
    assert rec.calls[0][1]["session_key"] == first_id


def test_pre_command_fires_for_a_gateway_command(home: PluginHome, rec: Any) -> None:
    from hermes_hooks.host import Gateway, MessageEvent

    pm = recording(home, rec, "pre_command")
    gateway = Gateway(pm, model=ScriptedModel())
    gateway.dispatch(MessageEvent(text="/skills", platform="telegram", sender="ann"))
    (call,) = [kw for _, kw in rec.calls]
    assert (call["surface"], call["command"], call["platform"]) == ("gateway", "skills", "telegram")


INTERRUPTER = f"""
import {REC} as rec

def register(ctx):
    def later(**kwargs):
        ctx.inject_message("stop that")
    ctx.register_hook("post_tool_call", later)
    ctx.register_hook("agent_loop_stopped", lambda **kw: rec.calls.append(kw))
"""


def test_agent_loop_stopped_fires_when_a_running_turn_is_interrupted(
    home: PluginHome, rec: Any, tmp_path: Path
) -> None:
    home.add_plugin("interrupter", INTERRUPTER)
    home.write_config()
    pm = create_manager(home.root)
    model = ScriptedModel(tool_call("terminal", {"command": "echo 1"}), text("never"))
    session = Session(pm, model, cwd=tmp_path)
    result = session.run_turn("go")
    assert result.interrupted
    (call,) = rec.calls
    assert (call["session_key"], call["platform"], call["reason"]) == (
        session.session_id,
        "cli",
        "interrupt",
    )


# -- the observers without a fire site in the reference host ------------------------------------


def test_on_room_member_activity_reaches_a_plugin_with_its_payload(
    home: PluginHome, rec: Any
) -> None:
    pm = recording(home, rec, "on_room_member_activity")
    Hooks(pm).on_room_member_activity(
        room_id="r1", kind="message.delta", payload={"text": "hi"}, member_id="m1", seq=3
    )
    (call,) = [kw for _, kw in rec.calls]
    assert (call["room_id"], call["kind"], call["payload"], call["seq"]) == (
        "r1",
        "message.delta",
        {"text": "hi"},
        3,
    )
    assert call["telemetry_schema_version"] == "hermes.observer.v1"


def test_gateway_platform_event_reaches_a_plugin_with_hermes_arguments(
    home: PluginHome, rec: Any
) -> None:
    pm = recording(home, rec, "gateway_platform_event")
    Hooks(pm).gateway_platform_event(
        platform="telegram", event_type="reaction", payload={"emoji": "👍", "message_id": "7"}
    )
    (call,) = [kw for _, kw in rec.calls]
    assert (call["platform"], call["event_type"], call["payload"]["emoji"]) == (
        "telegram",
        "reaction",
        "👍",
    )


# -- transcription ------------------------------------------------------------------------------

STT_PLUGIN = f"""
from pathlib import Path
import {REC} as rec
from agent.transcription_provider import TranscriptionProvider

class Echo(TranscriptionProvider):
    name = "echo-stt"

    def transcribe(self, file_path, *, model=None, language=None, **extra):
        rec.calls.append(("transcribe", dict(file_path=file_path, model=model,
                                              language=language, **extra)))
        text = Path(file_path).read_text()
        return {{"success": True, "transcript": text, "provider": self.name}}

class Builtin(Echo):
    name = "groq"

def glossary(prompt=None, **kwargs):
    rec.calls.append(("pre_transcription", kwargs))
    return {{"prompt": "Names: Ada", "file_path": "/etc/passwd"}}

def language(**kwargs):
    return {{"language": "fr", "model": 3}}  # a model that is not a string: the answer is refused

def register(ctx):
    ctx.register_transcription_provider(Echo())
    ctx.register_transcription_provider(Builtin())  # refused alone, with a warning
    ctx.register_hook("pre_transcription", glossary)
    ctx.register_hook("pre_transcription", language)
"""


def test_pre_transcription_changes_the_prompt_but_never_the_file(
    home: PluginHome, rec: Any, tmp_path: Path
) -> None:
    from hermes_hooks.backends.transcription import transcribe

    home.add_plugin("stt", STT_PLUGIN)
    home.write_config()
    audio = tmp_path / "note.txt"
    audio.write_text("hello there")
    pm = create_manager(home.root)
    result = transcribe(pm, audio, source="gateway", language="en")
    assert result == {"success": True, "transcript": "hello there", "provider": "echo-stt"}
    hook = next(kw for name, kw in rec.calls if name == "pre_transcription")
    assert (hook["file_path"], hook["provider"], hook["source"], hook["language"]) == (
        str(audio),
        "echo-stt",
        "gateway",
        "en",
    )
    call = next(kw for name, kw in rec.calls if name == "transcribe")
    assert call == {
        "file_path": str(audio),
        "model": None,
        "language": "en",
        "prompt": "Names: Ada",
    }
    assert pm.transcription.names() == ["echo-stt"]
    info = pm.get_plugin_info("stt")
    assert info is not None
    assert any("built-in speech-to-text engine" in w for w in info.warnings)
    missing = transcribe(pm, tmp_path / "nope.wav")
    assert missing["success"] is False
    assert "no audio file" in missing["error"]


def test_on_stream_delta_hermes_chat_prints_the_tokens_once_as_they_arrive(
    home: PluginHome, rec: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from hermes_hooks.cli.main import cli

    rec.hooks[:] = ["on_stream_delta"]
    home.add_plugin("recorder", RECORD_ALL)
    with ChatServer() as server:
        server.reply(openai_chunks("Stream", "ed ", "answer"))
        home.write_config()
        config = home.root / "config.yaml"
        config.write_text(
            config.read_text()
            + f"model:\n  provider: openai-compatible\n  base_url: {server.base_url}\n"
            "  name: m\n"
        )
        monkeypatch.chdir(home.root)
        result = CliRunner().invoke(cli, ["chat"], input="hello\n/exit\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("Streamed answer") == 1
    assert "Streamed answer\n" in result.output
    assert [kw["delta"] for _, kw in rec.calls] == ["Stream", "ed ", "answer"]

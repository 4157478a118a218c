"""The openai-compatible provider against a real HTTP server on 127.0.0.1, tool calls included."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from host_helpers import RECORDER, ChatServer, chat_server, completion, names, recorded
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.backends.models import ModelError, ModelSettings, ToolCall, create_model
from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel
from hermes_hooks.errors import ConfigError
from hermes_hooks.host import Session, create_manager

__all__ = ["chat_server"]


def model_for(server: ChatServer, **options: object) -> OpenAICompatibleModel:
    return OpenAICompatibleModel(server.base_url, "test-model", timeout=10, **options)  # type: ignore[arg-type]


def test_a_text_answer(chat_server: ChatServer) -> None:
    chat_server.reply_text("Hello!")
    with_tools = [{"type": "function", "function": {"name": "terminal", "parameters": {}}}]
    model = model_for(chat_server, api_key="sk-test")
    response = model.complete(
        [{"role": "user", "content": "hi"}], with_tools, temperature=0.5, max_tokens=20
    )
    model.close()
    assert (response.text, response.finish_reason, response.model) == (
        "Hello!",
        "stop",
        "served-model",
    )
    assert response.usage == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    (request,) = chat_server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["json"] == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": with_tools,
        "temperature": 0.5,
        "max_tokens": 20,
    }


def test_tool_calls_with_string_or_object_arguments(chat_server: ChatServer) -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {"name": "terminal", "arguments": '{"command": "ls"}'},
            },
            {"type": "function", "function": {"name": "read_file", "arguments": {"path": "x"}}},
            {"type": "function", "function": {"arguments": "{}"}},
        ],
    }
    chat_server.reply(completion(message, "tool_calls"))
    response = model_for(chat_server).complete([{"role": "user", "content": "go"}])
    assert response.text == ""
    assert response.tool_calls == (
        ToolCall("a", "terminal", '{"command": "ls"}'),
        ToolCall("call_2", "read_file", '{"path": "x"}'),
    )
    assert "Authorization" not in chat_server.requests[0]["headers"]


@pytest.mark.parametrize(
    ("status", "body", "reason", "retryable"),
    [
        (429, {"error": {"message": "slow down"}}, "rate_limit", True),
        (503, "upstream down", "server_error", True),
        (401, {"error": "bad key"}, "auth", False),
        (400, {"error": {"message": "no such model"}}, "bad_request", False),
        (200, "not json", "bad_response", False),
        (200, {"choices": []}, "bad_response", False),
    ],
)
def test_failures_become_model_errors(
    chat_server: ChatServer, status: int, body: object, reason: str, retryable: bool
) -> None:
    chat_server.reply(body, status=status)
    with pytest.raises(ModelError) as caught:
        model_for(chat_server).complete([{"role": "user", "content": "x"}])
    assert (caught.value.reason, caught.value.retryable) == (reason, retryable)
    if status >= 400:
        assert caught.value.status_code == status
        assert f"HTTP {status}" in str(caught.value)


def test_an_unreachable_server_is_a_retryable_connection_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAICompatibleModel(f"http://127.0.0.1:{port}/v1", "m", timeout=5)
    with pytest.raises(ModelError, match="cannot reach") as caught:
        model.complete([{"role": "user", "content": "x"}])
    assert (caught.value.reason, caught.value.retryable) == ("connection", True)


def test_settings_need_a_base_url_and_a_name(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"needs model.base_url and model.name"):
        create_model(ModelSettings(provider="openai-compatible"))
    monkeypatch.setenv("TEST_HERMES_KEY", "sk-from-env")
    model = create_model(
        ModelSettings(
            provider="openai-compatible",
            name="m",
            base_url="http://127.0.0.1:9/v1/",
            api_key_env="TEST_HERMES_KEY",
        )
    )
    assert isinstance(model, OpenAICompatibleModel)
    assert (model.base_url, model.describe()) == ("http://127.0.0.1:9/v1", "openai-compatible/m")
    model.close()


def test_a_whole_turn_with_a_tool_call_over_http(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "recorder", RECORDER)
    monkeypatch.setenv("TEST_HERMES_KEY", "sk-turn")
    write_config(
        home,
        ["recorder"],
        model={
            "provider": "openai-compatible",
            "base_url": chat_server.base_url,
            "name": "remote-model",
            "api_key_env": "TEST_HERMES_KEY",
        },
    )
    (tmp_path / "note.txt").write_text("remote hello\n")
    chat_server.reply_tool_call("read_file", {"path": "note.txt"}, call_id="call_abc")
    chat_server.reply_text("The note says hello.")
    pm = create_manager(home)
    session = Session(pm, cwd=tmp_path)
    result = session.run_turn("What does note.txt say?")
    session.close()
    session.model.close()
    assert result.completed
    assert result.text == "The note says hello."
    assert [call.tool_name for call in result.tool_calls] == ["read_file"]
    first, second = (r["json"] for r in chat_server.requests)
    assert first["model"] == "remote-model"
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "terminal"}
    assert second["messages"][-2]["tool_calls"][0]["id"] == "call_abc"
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_abc"
    assert json.loads(tool_message["content"])["content"] == "remote hello"
    api = [kw for name, kw in recorded(pm) if name == "post_api_request"]
    assert [(kw["provider"], kw["response_model"], kw["finish_reason"]) for kw in api] == [
        ("openai-compatible", "served-model", "tool_calls"),
        ("openai-compatible", "served-model", "stop"),
    ]
    assert api[0]["base_url"] == chat_server.base_url
    assert api[0]["usage"]["total_tokens"] == 15
    assert "pre_tool_call" in names(recorded(pm))


def test_a_retryable_failure_is_retried_and_reported(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "recorder", RECORDER)
    write_config(home, ["recorder"])
    chat_server.reply({"error": {"message": "busy"}}, status=429)
    chat_server.reply_text("second time lucky")
    pm = create_manager(home)
    model = model_for(chat_server)
    session = Session(pm, model, retry_backoff=0, max_retries=1)
    result = session.run_turn("hi")
    assert result.text == "second time lucky"
    api = [(n, kw) for n, kw in recorded(pm) if "api_request" in n]
    assert [(n, kw.get("retry_count")) for n, kw in api] == [
        ("pre_api_request", 0),
        ("api_request_error", 0),
        ("pre_api_request", 1),
        ("post_api_request", None),
    ]
    error = api[1][1]
    assert (error["status_code"], error["reason"], error["retryable"]) == (429, "rate_limit", True)
    assert error["error"]["message"].endswith("busy")

"""``api_mode: anthropic_messages`` against a real HTTP server on 127.0.0.1 speaking the
Anthropic Messages API: the system prompt, ``tool_use`` and ``tool_result`` blocks, a whole turn
with a tool call, errors in Anthropic's shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from host_helpers import ChatServer, chat_server
from plugin_builders import isolated_home

from hermes_hooks.backends.models import ModelError, ProviderProfile, ToolCall
from hermes_hooks.backends.models.anthropic import AnthropicMessagesModel, to_anthropic
from hermes_hooks.host import Session, create_manager

__all__ = ["chat_server"]

TERMINAL = {
    "type": "function",
    "function": {
        "name": "terminal",
        "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}


def model_for(server: ChatServer, **options: object) -> AnthropicMessagesModel:
    return AnthropicMessagesModel(server.root, "claude-test", timeout=10, **options)  # type: ignore[arg-type]


def test_a_request_has_the_system_prompt_tools_key_and_version(chat_server: ChatServer) -> None:
    chat_server.reply_message({"type": "text", "text": "Hello "}, {"type": "text", "text": "you"})
    model = model_for(chat_server, api_key="sk-ant-test")
    response = model.complete(
        [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "hi"},
        ],
        [TERMINAL],
        temperature=0.2,
    )
    model.close()
    assert (response.text, response.finish_reason, response.model) == (
        "Hello you",
        "stop",
        "claude-served",
    )
    assert response.usage == {"input_tokens": 12, "output_tokens": 7}
    (request,) = chat_server.requests
    assert request["path"] == "/v1/messages"
    assert request["headers"]["x-api-key"] == "sk-ant-test"
    assert request["headers"]["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in request["headers"]
    assert request["json"] == {
        "model": "claude-test",
        "max_tokens": 4096,
        "system": "You are terse.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "tools": [
            {
                "name": "terminal",
                "description": "Run a shell command.",
                "input_schema": TERMINAL["function"]["parameters"],  # type: ignore[index]
            }
        ],
        "temperature": 0.2,
    }


def test_tool_use_blocks_become_tool_calls(chat_server: ChatServer) -> None:
    chat_server.reply_tool_use("terminal", {"command": "ls"}, call_id="toolu_abc")
    response = model_for(chat_server).complete([{"role": "user", "content": "list"}], [TERMINAL])
    assert response.text == "Let me check."
    assert response.finish_reason == "tool_calls"
    assert response.tool_calls == (ToolCall("toolu_abc", "terminal", '{"command": "ls"}'),)


def test_the_conversation_is_translated_both_ways() -> None:
    system, turns = to_anthropic(
        [
            {"role": "system", "content": "one"},
            {"role": "developer", "content": "two"},
            {"role": "user", "content": [{"type": "text", "text": "look"},
                                         {"type": "image_url",
                                          "image_url": {"url": "data:image/png;base64,iVBO"}}]},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "read_file", "arguments": '{"path": "a"}'}},
                {"id": "c2", "type": "function",
                 "function": {"name": "read_file", "arguments": {"path": "b"}}},
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "A"},
            {"role": "tool", "tool_call_id": "c2", "content": "B"},
            {"role": "user", "content": "and?"},
        ]
    )  # fmt: skip
    assert system == "one\n\ntwo"
    assert turns == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "c2", "name": "read_file", "input": {"path": "b"}},
            ],
        },
        {
            # The tool results and the next user message are one user turn: roles alternate.
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "A"},
                {"type": "tool_result", "tool_use_id": "c2", "content": "B"},
                {"type": "text", "text": "and?"},
            ],
        },
    ]


def test_a_whole_turn_with_a_tool_call_runs_on_the_messages_api(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    (tmp_path / "notes.txt").write_text("the answer is 42\n", encoding="utf-8")
    chat_server.reply_tool_use("read_file", {"path": "notes.txt"}, call_id="toolu_1")
    chat_server.reply_message({"type": "text", "text": "The notes say 42."})
    pm = create_manager(home)
    model = model_for(chat_server, api_key="sk-ant-test")
    session = Session(pm, model, cwd=tmp_path, retry_backoff=0)
    result = session.run_turn("what do my notes say?")
    session.close("test")
    model.close()
    assert (result.failed, result.text) == (False, "The notes say 42.")
    second = chat_server.requests[1]["json"]
    assert second["system"] == session.full_system_prompt()
    assistant, results = second["messages"][-2:]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file",
             "input": {"path": "notes.txt"}},
        ],
    }  # fmt: skip
    (block,) = results["content"]
    assert (results["role"], block["type"], block["tool_use_id"]) == (
        "user",
        "tool_result",
        "toolu_1",
    )
    assert "the answer is 42" in block["content"]


def test_errors_in_anthropics_shape_become_model_errors(chat_server: ChatServer) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    chat_server.reply(overloaded, status=529)
    with pytest.raises(ModelError, match=r"answered HTTP 529: Overloaded") as caught:
        model_for(chat_server).complete([{"role": "user", "content": "x"}])
    assert (caught.value.reason, caught.value.retryable) == ("server_error", True)
    chat_server.reply({"type": "message", "content": "not a list"})
    with pytest.raises(ModelError, match="did not send a message") as bad:
        model_for(chat_server).complete([{"role": "user", "content": "x"}])
    assert bad.value.reason == "bad_response"


def test_a_profile_sets_max_tokens_headers_and_the_base_url_with_v1(
    chat_server: ChatServer,
) -> None:
    class Capped(ProviderProfile):
        def get_max_tokens(self, model: str | None) -> int | None:
            return 1000 if model == "claude-small" else 8000

    profile = Capped(name="capped", api_mode="anthropic_messages", default_headers={"X-App": "t"})
    model = AnthropicMessagesModel(chat_server.base_url, "claude-small", profile=profile)
    chat_server.reply_message({"type": "text", "text": "ok"})
    assert model.complete([{"role": "user", "content": "x"}]).text == "ok"
    (request,) = chat_server.requests
    assert request["path"] == "/v1/messages"  # base URL given with /v1: not doubled
    assert request["json"]["max_tokens"] == 1000
    assert request["headers"]["X-App"] == "t"
    assert model.provider == "capped"
    assert json.loads(json.dumps(request["json"]["messages"])) == [
        {"role": "user", "content": [{"type": "text", "text": "x"}]}
    ]

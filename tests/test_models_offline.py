"""The offline model's documented rules, the provider registry and the ``model:`` settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_hooks.backends.models import (
    ModelSettings,
    create_model,
    list_providers,
    register_provider,
)
from hermes_hooks.backends.models.offline import OfflineModel, json_skeleton, pick_tool
from hermes_hooks.errors import ConfigError


def offered(*names: str) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]


ALL_TOOLS = offered("terminal", "read_file", "image_generate", "delegate_task")


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("run `echo hello`", ("terminal", {"command": "echo hello"})),
        ("Please execute `ls -la` for me", ("terminal", {"command": "ls -la"})),
        ("run: uname -a", ("terminal", {"command": "uname -a"})),
        ("read README.md", ("read_file", {"path": "README.md"})),
        ("Show me the file docs/index.md.", ("read_file", {"path": "docs/index.md"})),
        (
            "Generate an image of a corgi in a spacesuit",
            ("image_generate", {"prompt": "a corgi in a spacesuit"}),
        ),
        ("draw me a picture of the sea!", ("image_generate", {"prompt": "the sea"})),
        ("delegate: run `pwd`", ("delegate_task", {"goal": "run `pwd`"})),
        ("read the room", None),
        ("hello there", None),
    ],
)
def test_the_rules(prompt: str, expected: tuple[str, dict[str, Any]] | None) -> None:
    assert pick_tool(prompt) == expected


def test_a_picked_tool_becomes_a_tool_call_when_offered() -> None:
    response = OfflineModel().complete([{"role": "user", "content": "run `ls`"}], ALL_TOOLS)
    assert response.finish_reason == "tool_calls"
    (call,) = response.tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "call_1",
        "terminal",
        {"command": "ls"},
    )


def test_a_tool_that_is_not_offered_gets_an_honest_answer() -> None:
    response = OfflineModel().complete(
        [{"role": "user", "content": "generate an image of a cat"}], offered("terminal")
    )
    assert not response.tool_calls
    assert "image_generate tool, which is not available" in response.text
    assert "stand-in" in response.text


def test_a_plain_prompt_gets_the_introduction_and_is_deterministic() -> None:
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    first = OfflineModel().complete(messages, ALL_TOOLS)
    assert first == OfflineModel().complete(messages, ALL_TOOLS)
    assert "rule-based stand-in, not an LLM" in first.text
    assert first.text.endswith("You said: What is the capital of France?")


def test_tool_results_are_summarized() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "run `echo hi`"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "function": {"name": "terminal", "arguments": '{"command": "echo hi"}'},
                },
                {"id": "c2", "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}},
                {"id": "c3", "function": {"name": "other", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"output": "hi\\n", "exit_code": 0}'},
        {"role": "tool", "tool_call_id": "c2", "content": '{"path": "a.txt", "content": "A"}'},
        {"role": "tool", "tool_call_id": "c3", "content": '{"error": "blocked by policy"}'},
    ]
    text = OfflineModel().complete(messages, ALL_TOOLS).text
    assert text.split("\n\n") == [
        "Ran `echo hi` (exit code 0):\nhi",
        "a.txt:\nA",
        "The other call failed: blocked by policy",
    ]


def test_json_answers_are_the_schema_skeleton() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "tags": {"type": "array"},
            "kind": {"enum": ["a", "b"]},
            "level": {"type": "number", "default": 3},
            "inner": {"properties": {"ok": {"type": ["null", "boolean"]}}},
        },
    }
    response = OfflineModel().complete([{"role": "user", "content": "x"}], json_schema=schema)
    assert json.loads(response.text) == {
        "name": "",
        "count": 0,
        "tags": [],
        "kind": "a",
        "level": 3,
        "inner": {"ok": False},
    }
    assert json_skeleton("not a schema") == {}


def test_create_model_from_settings_and_unknown_providers() -> None:
    assert isinstance(create_model(ModelSettings()), OfflineModel)
    assert create_model(ModelSettings(name="mine")).model == "mine"
    with pytest.raises(ConfigError, match=r"'ofline' is unknown.*did you mean 'offline'"):
        create_model(ModelSettings(provider="ofline"))


def test_register_provider_adds_a_name() -> None:
    register_provider("Test-Echo", lambda settings: OfflineModel(f"echo-{settings.name}"))
    assert "test-echo" in list_providers()
    assert create_model(ModelSettings(provider="test-echo", name="x")).model == "echo-x"


def test_model_settings_from_config(tmp_path: Path) -> None:
    assert ModelSettings.from_config({}) == ModelSettings()
    assert ModelSettings.from_config({"model": "gpt-x"}).name == "gpt-x"
    settings = ModelSettings.from_config(
        {
            "model": {
                "provider": "OpenAI-Compatible",
                "model": "m1",
                "base_url": "http://127.0.0.1:1/v1",
                "api_key_env": "MY_KEY",
                "timeout": 5,
                "max_retries": 0,
            }
        }
    )
    assert (settings.provider, settings.name, settings.timeout, settings.max_retries) == (
        "openai-compatible",
        "m1",
        5.0,
        0,
    )
    with pytest.raises(
        ConfigError,
        match=r"conf\.yaml: model\.timeout: expected a number of seconds, found a string",
    ):
        ModelSettings.from_config({"model": {"timeout": "soon"}}, source=Path("conf.yaml"))
    with pytest.raises(
        ConfigError, match=r"config: model: expected a string or a mapping \(provider, "
    ):
        ModelSettings.from_config({"model": ["x"]})
    with pytest.raises(
        ConfigError,
        match=r"model\.max_retries: expected a whole number, 0 or more, found an integer \(-1\)",
    ):
        ModelSettings.from_config({"model": {"max_retries": -1}})

"""The scripted model on its own: each step's answer, the requests it keeps, its reports."""

from __future__ import annotations

import json

import pytest

from hermes_hooks.backends.models import ModelError, ModelResponse, ToolCall
from hermes_hooks.backends.models.scripted import (
    ScriptedModel,
    ScriptedRequest,
    ScriptMismatchError,
    tool_call,
)

USER = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]
TOOLS = [{"type": "function", "function": {"name": "terminal", "parameters": {}}}]


def test_each_kind_of_step_answers_one_request() -> None:
    response = ModelResponse(text="as is")

    def echo(request: ScriptedRequest) -> str:
        return f"you said {request.last_text}"

    model = ScriptedModel(
        [
            "plain",
            tool_call("terminal", command="ls"),
            [tool_call("read_file", path="a"), tool_call("http", {"content-type": "x"}, url="u")],
            response,
            echo,
        ]
    )
    assert model.complete(USER, TOOLS) == ModelResponse(text="plain", model="scripted-1")
    one = model.complete(USER, TOOLS)
    assert one.tool_calls == (ToolCall("call_1", "terminal", '{"command": "ls"}'),)
    assert one.finish_reason == "tool_calls"
    two = model.complete(USER, TOOLS)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in two.tool_calls] == [
        ("call_2", "read_file", {"path": "a"}),
        ("call_3", "http", {"content-type": "x", "url": "u"}),
    ]
    assert model.complete(USER) is response
    assert model.complete(USER).text == "you said hello there"
    assert [r.number for r in model.requests] == [1, 2, 3, 4, 5]
    assert model.requests[0].tools == ("terminal",)
    assert model.remaining == []
    model.check()


def test_an_error_step_is_raised() -> None:
    error = ModelError("rate limited", retryable=True, reason="rate_limit")
    model = ScriptedModel([error, "after"])
    with pytest.raises(ModelError) as raised:
        model.complete(USER)
    assert raised.value is error
    assert model.complete(USER).text == "after"
    model.check()


def test_a_request_past_the_end_is_a_model_error_and_a_mismatch() -> None:
    model = ScriptedModel("only")
    model.complete(USER)
    with pytest.raises(ModelError, match="the script has no step 2: it has 1 step") as raised:
        model.complete([*USER, {"role": "user", "content": "and?"}], json_schema={"type": "object"})
    assert (raised.value.reason, raised.value.retryable) == ("script_exhausted", False)
    with pytest.raises(ScriptMismatchError) as failed:
        model.check(ended="api_error(script_exhausted)")
    assert str(failed.value) == (
        "the model was asked 2 times, but the script has 1 step "
        "(the turn ended: api_error(script_exhausted))\n"
        "  step 1: answer 'only'  → request 1, after the user message 'hello there'\n"
        "+ request 2, after the user message 'and?' (asking for JSON)  → not scripted"
    )
    assert isinstance(failed.value, AssertionError)


def test_steps_left_over_are_a_mismatch_and_load_starts_afresh() -> None:
    model = ScriptedModel(["a", ModelError("x"), ModelResponse(tool_calls=(ToolCall("i", "t"),))])
    model.complete(USER)
    with pytest.raises(ScriptMismatchError) as failed:
        model.check()
    assert failed.value.report == (
        "  step 1: answer 'a'  → request 1, after the user message 'hello there'\n"
        "- step 2: raise ModelError('x', reason='error')  → never reached\n"
        "- step 3: ModelResponse(text='', tool_calls=[t])  → never reached"
    )
    model.load(["b"])
    assert (model.steps, model.requests, model.remaining) == (["b"], [], ["b"])
    model.extend([tool_call("t")])
    assert model.remaining == ["b", tool_call("t")]


def test_a_long_message_is_shortened_in_the_report() -> None:
    model = ScriptedModel()
    with pytest.raises(ModelError):
        model.complete([{"role": "user", "content": "word " * 100}])
    assert len(model.report()) < 200
    assert model.report().endswith("…'  → not scripted")


def test_a_step_of_an_unknown_kind_says_what_fits() -> None:
    model = ScriptedModel([42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"script step 1 is int 42: expected a str \(an answer\)"):
        model.complete(USER)


def test_repr_of_tool_calls_reads_like_the_call_that_made_them() -> None:
    assert repr(tool_call("terminal", command="ls")) == "tool_call('terminal', command='ls')"
    assert repr(tool_call("h", {"a-b": 1})) == "tool_call('h', {'a-b': 1})"
    assert tool_call("t", {"a": 1}, b=2).args == {"a": 1, "b": 2}

"""Middleware (``ctx.register_middleware``), on a real tool call and a real HTTP model call.

A plugin written against Hermes' ``hermes_cli.middleware`` names registers the four kinds; the
reference host runs them at Hermes' four call sites, against an OpenAI-compatible server on
127.0.0.1. The chain's rules (copy-on-change, the trace, fail-open, one ``next_call``) are
checked on the served module directly.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from host_helpers import ChatServer, chat_server
from plugin_builders import PluginHome, home, info

from hermes_hooks.backends.models.openai_compat import OpenAICompatibleModel
from hermes_hooks.host import Session, create_manager

__all__ = ["chat_server", "home"]

GUARD = """
from hermes_cli.middleware import (
    LLM_EXECUTION_MIDDLEWARE, TOOL_REQUEST_MIDDLEWARE, LLMExecutionBlocked,
)

SEEN = []

def rewrite_args(tool_name, args, original_args, **ctx):
    SEEN.append(("tool_request", tool_name, ctx["middleware_schema_version"]))
    if tool_name == "echo":
        return {"args": {**args, "text": args["text"].upper()}, "source": "guard",
                "reason": "shout"}

def around_tool(tool_name, args, next_call, **ctx):
    SEEN.append(("tool_execution", tool_name, dict(args)))
    return next_call(args) + " (wrapped)"

def rewrite_request(request, original_request, **ctx):
    SEEN.append(("llm_request", len(request["messages"])))
    messages = [*request["messages"], {"role": "user", "content": "(be brief)"}]
    return {"request": {**request, "messages": messages}}

def around_model(request, next_call, **ctx):
    SEEN.append(("llm_execution", request["messages"][-1]["content"]))
    if "forbidden" in str(request["messages"]):
        raise LLMExecutionBlocked("no forbidden words", metadata={"decision": "block"})
    return next_call(request)

def broken(request, next_call, **ctx):
    raise ValueError("broken before next_call")

def register(ctx):
    ctx.register_tool("echo", "demo", {"name": "echo", "description": "echo", "parameters": {
        "type": "object", "properties": {"text": {"type": "string"}}}},
        lambda args, **kw: "echo:" + args["text"])
    ctx.register_middleware(TOOL_REQUEST_MIDDLEWARE, rewrite_args)
    ctx.register_middleware("tool_execution", around_tool)
    ctx.register_middleware("api_request", rewrite_request)  # Hermes' older alias
    ctx.register_middleware(LLM_EXECUTION_MIDDLEWARE, broken)  # fails open, counted
    ctx.register_middleware(LLM_EXECUTION_MIDDLEWARE, around_model)
    ctx.register_middleware("nonsense", around_model)  # refused alone
"""


@pytest.fixture
def session(home: PluginHome, chat_server: ChatServer, tmp_path: Path) -> Iterator[Session]:
    home.add_plugin("guard", GUARD)
    home.write_config()
    pm = create_manager(home.root)
    home.managers.append(pm)
    model = OpenAICompatibleModel(chat_server.base_url, "m")
    with Session(pm, model, cwd=tmp_path, retry_backoff=0.0) as running:
        yield running
    model.close()


def test_the_four_kinds_run_at_hermes_call_sites(session: Session, chat_server: ChatServer) -> None:
    chat_server.reply_tool_call("echo", {"text": "hi"})
    chat_server.reply_text("done")
    result = session.run_turn("say hi")
    assert result.text == "done"
    (call,) = result.tool_calls
    assert call.result == "echo:HI (wrapped)"  # request rewritten, then the handler wrapped
    first = chat_server.requests[0]["json"]
    assert first["messages"][-1] == {"role": "user", "content": "(be brief)"}
    seen = session.pm.get_plugin_module("guard").SEEN  # type: ignore[union-attr]
    assert ("tool_request", "echo", "hermes.middleware.v1") in seen
    assert ("tool_execution", "echo", {"text": "HI"}) in seen
    assert ("llm_execution", "(be brief)") in seen
    guard = info(session.pm, "guard")
    assert guard.hook_errors == 2  # the broken llm_execution middleware, once per model call
    assert "broken before next_call" in (guard.last_hook_error or "")
    assert any("unknown middleware kind 'nonsense'" in w for w in guard.warnings)


def test_llm_execution_blocked_stops_the_model_call(
    session: Session, chat_server: ChatServer
) -> None:
    result = session.run_turn("say something forbidden")
    assert result.failed
    assert "no forbidden words" in result.text
    assert chat_server.requests == []  # the model was never called


def test_the_chain_rules_of_the_served_module(home: PluginHome) -> None:
    calls: list[str] = []

    def twice(request: dict[str, Any], next_call: Any, **ctx: Any) -> Any:
        next_call(request)
        return next_call(request)  # a second call is refused: RuntimeError, counted

    def after(request: dict[str, Any], next_call: Any, **ctx: Any) -> Any:
        next_call(request)
        raise ValueError("after next_call")  # the downstream result stands

    home.add_plugin("empty", "def register(ctx):\n    pass\n")
    pm = home.load()
    pm.middleware.add("empty", "llm_execution", after)
    pm.middleware.add("empty", "llm_execution", twice)
    from hermes_cli.middleware import apply_llm_request_middleware, run_llm_execution_middleware

    def terminal(request: dict[str, Any]) -> str:
        calls.append("model")
        return "answer"

    with pm.activate():
        untouched = apply_llm_request_middleware({"messages": []})
        assert (untouched.changed, untouched.trace) == (False, [])
        # the second next_call is refused (counted); the first one's result stands
        assert run_llm_execution_middleware({"messages": []}, terminal) == "answer"
    assert calls == ["model"]  # the model ran once
    plugin = info(pm, "empty")
    assert plugin.hook_errors == 2
    assert "after next_call" in (plugin.last_hook_error or "")

    pm.middleware.remove_owner("empty")
    pm.middleware.add("empty", "llm_execution", after)

    def downstream_fails(request: dict[str, Any]) -> str:
        raise ConnectionError("the provider is down")

    with pm.activate():
        assert run_llm_execution_middleware({"messages": []}, terminal) == "answer"
        with pytest.raises(ConnectionError, match="the provider is down"):  # untouched
            run_llm_execution_middleware({"messages": []}, downstream_fails)
    assert info(pm, "empty").hook_errors == 3  # the downstream failure is not the plugin's

"""Tests for hermes_hooks.registries.tools: ``register_tool`` as Hermes has it, and dispatch."""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest
from plugin_builders import PluginHome, home, info
from recording import noted

from hermes_hooks.errors import PluginToolOverrideError, RegistrationError
from hermes_hooks.plugins.context import PluginContext
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.registries.base import HOST
from hermes_hooks.registries.tools import ToolRegistry

__all__ = ["home"]  # the fixture, imported for pytest

SCHEMA: dict[str, Any] = {
    "description": "Echo the text back.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def echo(args: dict[str, Any], **kwargs: Any) -> str:
    return f"echo:{args.get('text', '')}"


@pytest.fixture
def tools() -> ToolRegistry:
    """A tool registry on its own, with no operator grants."""
    return ToolRegistry()


def error_of(result: str) -> str:
    """Return the ``error`` of a dispatch result, failing when it is not an error object."""
    payload = json.loads(result)
    assert isinstance(payload, dict)
    error = payload.get("error")
    assert isinstance(error, str), payload
    return error


# --- the signature -------------------------------------------------------------------------------


def test_ctx_register_tool_signature_is_hermes() -> None:
    parameters = inspect.signature(PluginContext.register_tool).parameters
    assert [(p.name, p.default) for p in list(parameters.values())[1:]] == [
        ("name", inspect.Parameter.empty),
        ("toolset", inspect.Parameter.empty),
        ("schema", inspect.Parameter.empty),
        ("handler", inspect.Parameter.empty),
        ("check_fn", None),
        ("requires_env", None),
        ("is_async", False),
        ("description", ""),
        ("emoji", ""),
        ("override", False),
    ]
    assert all(
        p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in list(parameters.values())[1:]
    )


def test_plugin_registers_tool_positionally_and_by_keyword(home: PluginHome) -> None:
    home.add_plugin(
        "tools_sig",
        """
        def handler(args, **kwargs):
            return "ok"

        def register(ctx):
            ctx.register_tool("tools_sig_pos", "demo", {"description": "d"}, handler,
                              None, ["TOOLS_SIG_ENV"], False, "positional", "*", False)
            ctx.register_tool(name="tools_sig_kw", toolset="demo", schema={}, handler=handler,
                              description="by keyword", emoji="!")
        """,
    )
    pm = home.load()

    assert info(pm, "tools_sig").status == "enabled"
    positional = pm.tools.get("tools_sig_pos")
    keyword = pm.tools.get("tools_sig_kw")
    assert positional is not None
    assert keyword is not None
    assert positional.requires_env == ("TOOLS_SIG_ENV",)
    assert (positional.description, positional.emoji) == ("positional", "*")
    assert (keyword.description, keyword.emoji, keyword.owner) == ("by keyword", "!", "tools_sig")


def test_registration_checks_its_arguments(tools: ToolRegistry) -> None:
    with pytest.raises(RegistrationError, match="handler must be callable"):
        tools.register_tool("t", "demo", SCHEMA, "not callable")  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match="schema must be a mapping"):
        tools.register_tool("t", "demo", ["nope"], echo)  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match=r"schema\['parameters'\].*found list"):
        tools.register_tool("t", "demo", {"parameters": []}, echo)
    with pytest.raises(RegistrationError, match="check_fn must be callable"):
        tools.register_tool("t", "demo", SCHEMA, echo, check_fn=True)  # type: ignore[arg-type]
    with pytest.raises(RegistrationError, match="toolset must be a non-empty string"):
        tools.register_tool("t", "", SCHEMA, echo)
    assert tools.names() == []


def test_description_comes_from_the_schema_when_not_given(tools: ToolRegistry) -> None:
    tools.register_tool("t", "demo", SCHEMA, echo)
    entry = tools.get("t")
    assert entry is not None
    assert entry.description == "Echo the text back."


# --- definitions ---------------------------------------------------------------------------------


def test_definitions_are_openai_function_schemas(tools: ToolRegistry) -> None:
    tools.register_tool("echo", "demo", SCHEMA, echo)
    tools.register_tool("bare", "demo", {}, echo, description="No schema given.")

    assert tools.definitions() == [
        {
            "type": "function",
            "function": {
                "name": "bare",
                "description": "No schema given.",
                "parameters": {"type": "object", "properties": {}},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "echo",
                "description": "Echo the text back.",
                "parameters": SCHEMA["parameters"],
            },
        },
    ]


def test_definitions_only_for_tools_whose_check_passes(tools: ToolRegistry) -> None:
    def broken_check() -> bool:
        raise RuntimeError("docker is not running")

    tools.register_tool("yes", "demo", SCHEMA, echo, check_fn=lambda: True)
    tools.register_tool("no", "demo", SCHEMA, echo, check_fn=lambda: False)
    tools.register_tool("broken", "demo", SCHEMA, echo, check_fn=broken_check)
    tools.register_tool("plain", "demo", SCHEMA, echo)

    assert [d["function"]["name"] for d in tools.definitions()] == ["plain", "yes"]
    assert tools.unavailable_reason("no") == "check_fn returned false"

    def only_at_night() -> bool:
        """Offered at night only.

        More text that the reason leaves out.
        """
        return False

    tools.register_tool("owl", "demo", SCHEMA, echo, check_fn=only_at_night)
    assert tools.unavailable_reason("owl") == "not offered now: Offered at night only"
    reason = tools.unavailable_reason("broken")
    assert reason is not None
    assert "RuntimeError: docker is not running" in reason
    assert tools.is_available("yes")
    assert not tools.is_available("missing")


def test_definitions_need_required_env(
    tools: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLS_TEST_KEY", raising=False)
    tools.register_tool("keyed", "demo", SCHEMA, echo, requires_env=["TOOLS_TEST_KEY"])
    tools.register_tool("one_name", "demo", SCHEMA, echo, requires_env="TOOLS_TEST_KEY")

    assert tools.definitions() == []
    assert tools.unavailable_reason("keyed") == "environment variable TOOLS_TEST_KEY is not set"

    monkeypatch.setenv("TOOLS_TEST_KEY", "secret")
    assert [d["function"]["name"] for d in tools.definitions()] == ["keyed", "one_name"]


def test_definitions_filtered_by_toolset(tools: ToolRegistry) -> None:
    tools.register_tool("web_search", "web", SCHEMA, echo)
    tools.register_tool("web_fetch", "web", SCHEMA, echo)
    tools.register_tool("terminal", "shell", SCHEMA, echo)

    def names(toolsets: Any) -> list[str]:
        return [d["function"]["name"] for d in tools.definitions(toolsets)]

    assert names(["web"]) == ["web_fetch", "web_search"]
    assert names({"shell", "web"}) == ["terminal", "web_fetch", "web_search"]
    assert names("shell") == ["terminal"]
    assert names([]) == []
    assert names(None) == ["terminal", "web_fetch", "web_search"]


# --- dispatch ------------------------------------------------------------------------------------


def test_dispatch_passes_args_and_kwargs(tools: ToolRegistry) -> None:
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def handler(args: dict[str, Any], **kwargs: Any) -> str:
        seen.append((args, kwargs))
        return "done"

    tools.register_tool("t", "demo", SCHEMA, handler)

    assert tools.dispatch("t", {"text": "hi"}, task_id="42") == "done"
    assert tools.dispatch("t") == "done"
    assert tools.dispatch("t", '{"text": "from json"}') == "done"
    assert seen == [({"text": "hi"}, {"task_id": "42"}), ({}, {}), ({"text": "from json"}, {})]


def test_dispatch_unknown_tool_suggests_closest(tools: ToolRegistry) -> None:
    tools.register_tool("web_search", "web", SCHEMA, echo)

    error = error_of(tools.dispatch("web_serch", {}))

    assert error.startswith("Unknown tool: 'web_serch'")
    assert "did you mean 'web_search'?" in error
    assert "did you mean" not in error_of(tools.dispatch("zzz", {}))


def test_dispatch_raising_handler_gives_error(tools: ToolRegistry) -> None:
    def handler(args: dict[str, Any], **kwargs: Any) -> str:
        raise KeyError("no such file")

    tools.register_tool("t", "demo", SCHEMA, handler, owner="plug")

    payload = json.loads(tools.dispatch("t", {}))

    assert payload["error"] == "Tool 't' failed: KeyError: 'no such file'"
    assert (payload["tool"], payload["owner"]) == ("t", "plug")


def test_dispatch_bounds_a_huge_error(tools: ToolRegistry) -> None:
    def handler(args: dict[str, Any], **kwargs: Any) -> str:
        raise ValueError("x" * 100_000)

    tools.register_tool("t", "demo", SCHEMA, handler)

    error = error_of(tools.dispatch("t", {}))

    assert len(error) < 2100
    assert error.endswith("[truncated]")


@pytest.mark.parametrize("value", [None, 42, {"a": 1}, b"bytes", ["x"]])
def test_dispatch_non_string_return_gives_error(tools: ToolRegistry, value: object) -> None:
    tools.register_tool("t", "demo", SCHEMA, lambda args, **kw: value)

    error = error_of(tools.dispatch("t", {}))

    assert f"returned {type(value).__name__}, expected a string" in error


@pytest.mark.parametrize("args", ["[1, 2]", "{not json", 42, ["a"]])
def test_dispatch_bad_arguments_give_error(tools: ToolRegistry, args: Any) -> None:
    called: list[object] = []
    tools.register_tool("t", "demo", SCHEMA, lambda a, **kw: noted(called, a, "ok"))

    assert "bad arguments" in error_of(tools.dispatch("t", args))
    assert called == []


def test_dispatch_with_a_non_string_name_gives_error(tools: ToolRegistry) -> None:
    assert "Unknown tool" in error_of(tools.dispatch(None, {}))  # type: ignore[arg-type]


def test_async_handler_awaited_outside_a_loop(tools: ToolRegistry) -> None:
    async def handler(args: dict[str, Any], **kwargs: Any) -> str:
        await asyncio.sleep(0)
        return f"async:{args['text']}"

    tools.register_tool("t", "demo", SCHEMA, handler, is_async=True)

    assert tools.dispatch("t", {"text": "a"}) == "async:a"


def test_async_handler_awaited_inside_a_running_loop(tools: ToolRegistry) -> None:
    async def handler(args: dict[str, Any], **kwargs: Any) -> str:
        await asyncio.sleep(0)
        return f"async:{args['text']}"

    async def failing(args: dict[str, Any], **kwargs: Any) -> str:
        await asyncio.sleep(0)
        raise RuntimeError("async boom")

    tools.register_tool("t", "demo", SCHEMA, handler, is_async=True)
    tools.register_tool("f", "demo", SCHEMA, failing, is_async=True)

    async def agent_turn() -> tuple[str, str]:
        # A sync dispatch from inside the agent's own loop must neither re-enter nor deadlock it.
        return tools.dispatch("t", {"text": "in loop"}), tools.dispatch("f", {})

    result, failure = asyncio.run(agent_turn())

    assert result == "async:in loop"
    assert "RuntimeError: async boom" in error_of(failure)


def test_async_handler_returning_non_string_gives_error(tools: ToolRegistry) -> None:
    async def handler(args: dict[str, Any], **kwargs: Any) -> object:
        return {"not": "a string"}

    tools.register_tool("t", "demo", SCHEMA, handler, is_async=True)

    assert "returned dict" in error_of(tools.dispatch("t", {}))


# --- plugins and host tools ----------------------------------------------------------------------

OVERRIDE_PLUGIN = """
def handler(args, **kwargs):
    return "plugin read_file"

def register(ctx):
    ctx.register_tool("read_file", "plugin_fs", {"description": "replacement"}, handler,
                      override={override})
"""


def load_with_host_tool(home: PluginHome) -> PluginManager:
    """Return a manager with host tool ``read_file`` registered before plugins load."""
    home.write_config()
    pm = home.manager()
    pm.tools.register_tool(
        "read_file", "file", {"description": "host"}, lambda args, **kw: "host read_file"
    )
    pm.discover_and_load()
    return pm


def test_plugin_without_override_cannot_replace_host_tool(home: PluginHome) -> None:
    home.add_plugin("tools_shadow", OVERRIDE_PLUGIN.replace("{override}", "False"))
    home.entry("tools_shadow", allow_tool_override=True)

    pm = load_with_host_tool(home)

    status = info(pm, "tools_shadow")
    assert status.status == "error"
    assert status.error is not None
    assert "PluginToolOverrideError" in status.error
    assert "override=True" in status.error
    assert pm.tools.owner_of("read_file") == HOST
    assert pm.tools.dispatch("read_file", {}) == "host read_file"


def test_plugin_override_without_operator_grant_fails(home: PluginHome) -> None:
    home.add_plugin("tools_nogrant", OVERRIDE_PLUGIN.replace("{override}", "True"))

    pm = load_with_host_tool(home)

    status = info(pm, "tools_nogrant")
    assert status.status == "error"
    assert status.error is not None
    assert "plugins.entries.tools_nogrant.allow_tool_override: true" in status.error
    assert pm.tools.dispatch("read_file", {}) == "host read_file"


def test_operator_grant_must_be_a_real_true(home: PluginHome) -> None:
    home.add_plugin("tools_strgrant", OVERRIDE_PLUGIN.replace("{override}", "True"))
    home.entry("tools_strgrant", allow_tool_override="true")

    pm = load_with_host_tool(home)

    assert info(pm, "tools_strgrant").status == "error"
    assert pm.tools.owner_of("read_file") == HOST


def test_override_with_grant_replaces_and_unload_restores(home: PluginHome) -> None:
    home.add_plugin("tools_granted", OVERRIDE_PLUGIN.replace("{override}", "True"))
    home.entry("tools_granted", allow_tool_override=True)

    pm = load_with_host_tool(home)

    assert info(pm, "tools_granted").status == "enabled"
    assert pm.tools.owner_of("read_file") == "tools_granted"
    assert pm.tools.dispatch("read_file", {}) == "plugin read_file"

    assert pm.unload_plugin("tools_granted")

    assert pm.tools.owner_of("read_file") == HOST
    assert pm.tools.dispatch("read_file", {}) == "host read_file"


def test_override_error_is_a_permission_error(tools: ToolRegistry) -> None:
    tools.register_tool("read_file", "file", SCHEMA, echo)

    with pytest.raises(PermissionError, match="tool 'read_file', which is a host tool"):
        tools.register_tool("read_file", "x", SCHEMA, echo, owner="plug")
    with pytest.raises(PluginToolOverrideError, match="has not allowed it"):
        tools.register_tool("read_file", "x", SCHEMA, echo, owner="plug", override=True)


def test_override_does_not_reach_another_plugins_tool() -> None:
    tools = ToolRegistry(allow_override=lambda owner: True)
    tools.register_tool("shared", "a", SCHEMA, echo, owner="alpha")

    with pytest.raises(RegistrationError, match=r"plugin 'beta'.*plugin 'alpha'"):
        tools.register_tool("shared", "b", SCHEMA, echo, owner="beta", override=True)


def test_plugin_tool_dispatched_through_the_manager(home: PluginHome) -> None:
    home.add_plugin(
        "tools_async",
        """
        import asyncio

        async def handler(args, **kwargs):
            await asyncio.sleep(0)
            return "async " + args["text"]

        def register(ctx):
            ctx.register_tool("tools_async_echo", "demo", {}, handler, is_async=True)
        """,
    )
    pm = home.load()

    async def turn() -> str:
        return pm.tools.dispatch("tools_async_echo", {"text": "plugin"})

    assert pm.tools.dispatch("tools_async_echo", {"text": "sync"}) == "async sync"
    assert asyncio.run(turn()) == "async plugin"

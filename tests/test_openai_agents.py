"""The OpenAI Agents SDK runs Hermes plugins: their tools, their guards, their observers.

The SDK's own scripted model (``agents.testing.ScriptedModel``) plays the model, so nothing
reaches the network (tracing is off). The README's ``no-rm`` plugin stops ``terminal`` with
``rm -rf``; the model receives the plugin's message and the command never runs.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="the 'openai-agents' extra is not installed")

from agents import Agent, FunctionTool, RunConfig, Runner, Tool
from agents.testing import ScriptedModel, assistant_message, function_call
from cli_support import home  # noqa: F401  (home is a fixture)
from mcp_support import add_readme_no_rm
from plugin_builders import user_plugin, write_config

from hermes_hooks.adapters.openai_agents import (
    HermesRunHooks,
    hermes_guardrails,
    hermes_tools,
)
from hermes_hooks.host.runtime import create_manager

PLUGIN = """\
    from hermes_hooks import hookimpl

    seen = []

    def register(ctx):
        ctx.register_tool(
            "shout", "demo",
            {"description": "Upper-case a text.",
             "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                            "required": ["text"]}},
            lambda args, **kw: args["text"].upper(),
        )

    @hookimpl
    def pre_tool_call(tool_name, args):
        if tool_name == "shout" and args.get("text") == "whisper":
            return {"action": "modify", "args": {"text": "quietly"}}
        return None

    @hookimpl
    def transform_tool_result(tool_name, result):
        return result + "!" if tool_name == "shout" else None

    @hookimpl
    def on_session_start(platform):
        seen.append(f"start {platform}")

    @hookimpl
    def post_tool_call(tool_name, status):
        seen.append(f"{tool_name} {status}")

    @hookimpl
    def post_llm_call(assistant_response):
        seen.append(f"answer {assistant_response}")
    """


@pytest.fixture(autouse=True)
def _close_the_sdks_default_loop() -> Iterator[None]:
    """``Runner.run_sync`` leaves the thread a default event loop it never closes; close it,
    or its garbage collection warns in whichever test runs next."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:
            loop = None
    if loop is not None and not loop.is_running() and not loop.is_closed():
        loop.close()
    asyncio.set_event_loop(None)


def _outputs(result: Any) -> list[str]:
    return [
        str(item.output)
        for item in result.new_items
        if getattr(item, "type", "") == "tool_call_output_item"
    ]


def test_a_run_calls_a_plugin_tool_and_is_stopped_by_a_pre_tool_call_block(
    home: Path,
    tmp_path: Path,
) -> None:
    add_readme_no_rm(home)
    user_plugin(home, "shouter", PLUGIN)
    write_config(home, ["no-rm", "shouter"])
    pm = create_manager(home)
    marker = tmp_path / "still-here"
    marker.touch()
    model = ScriptedModel(
        [
            [function_call("shout", {"text": "hi"}, call_id="c1")],
            [function_call("shout", {"text": "whisper"}, call_id="c2")],
            [function_call("terminal", {"command": f"rm -rf {marker}"}, call_id="c3")],
            [assistant_message("done")],
        ]
    )
    tools: list[Tool] = [*hermes_tools(pm, names=["shout", "terminal"])]  # list is invariant
    agent = Agent(name="helper", model=model, tools=tools)
    result = Runner.run_sync(
        agent, "go", hooks=HermesRunHooks(pm), run_config=RunConfig(tracing_disabled=True)
    )
    assert result.final_output == "done"
    assert _outputs(result) == ["HI!", "QUIETLY!", "rm -rf is not allowed here"]
    assert marker.exists()  # the block kept the command from running
    model.assert_complete()
    seen = __import__("hermes_plugins.shouter", fromlist=["seen"]).seen
    assert seen == [
        "start openai-agents",
        "shout ok",
        "shout ok",
        "terminal blocked",
        "answer done",
    ]


def test_the_guardrails_guard_a_tool_of_the_sdks_own(home: Path) -> None:
    add_readme_no_rm(home)
    write_config(home, ["no-rm"])
    pm = create_manager(home)
    ran: list[str] = []

    async def run_terminal(context: Any, text: str) -> str:
        ran.append(json.loads(text)["command"])
        return "ok"

    before, after = hermes_guardrails(pm)
    tool = FunctionTool(
        name="terminal",
        description="Run a command.",
        params_json_schema={"type": "object", "properties": {"command": {"type": "string"}}},
        on_invoke_tool=run_terminal,
        strict_json_schema=False,
        tool_input_guardrails=[before],
        tool_output_guardrails=[after],
    )
    model = ScriptedModel(
        [
            [function_call("terminal", {"command": "rm -rf /"}, call_id="c1")],
            [function_call("terminal", {"command": "ls"}, call_id="c2")],
            [assistant_message("ok")],
        ]
    )
    agent = Agent(name="helper", model=model, tools=[tool])
    result = Runner.run_sync(agent, "go", run_config=RunConfig(tracing_disabled=True))
    assert _outputs(result) == ["rm -rf is not allowed here", "ok"]
    assert ran == ["ls"]


def test_the_how_to_example_runs_as_shown(home: Path) -> None:
    import re

    add_readme_no_rm(home)
    write_config(home, ["no-rm"])
    pm = create_manager(home)
    doc = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "openai-agents.md"
    example = re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)[2]
    namespace: dict[str, Any] = {"pm": pm, "hermes_tools": hermes_tools}
    exec(compile(example, str(doc), "exec"), namespace)
    result = namespace["result"]
    assert result.final_output == "done"
    assert _outputs(result) == ["rm -rf is not allowed here"]

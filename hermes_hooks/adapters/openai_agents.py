"""Hermes plugins inside the OpenAI Agents SDK (``pip install 'hermes-hooks[openai-agents]'``).

- :func:`hermes_tools` turns the tools of ``pm.tools`` (the plugins' and the host's, those
  offered now) into the SDK's ``FunctionTool`` objects, each with the two guardrails below;
- :func:`hermes_guardrails` is the pair of tool guardrails, usable on any ``FunctionTool``:
  the input guardrail runs ``pre_tool_call`` (a block, or an ``approve`` nobody can answer,
  is ``reject_content`` with the plugin's message: the model gets the message and the tool
  does not run); the output guardrail runs ``post_tool_call`` and ``transform_tool_result`` (a
  rewritten result is what the model gets);
- :class:`HermesRunHooks` gives the observers their hooks: ``on_session_start`` when the run's
  first agent starts, ``pre_api_request`` and ``post_api_request`` around each model call,
  ``post_llm_call`` and ``on_session_end`` when an agent produces its final output.

A ``modify`` changes the arguments a Hermes tool runs with. An SDK guardrail cannot change
the arguments of a tool of someone else's, so there a ``modify`` rejects the call, telling the
model the arguments the plugin wants (it may call again with them).

Usage::

    from agents import Agent, Runner
    from hermes_hooks.adapters.openai_agents import HermesRunHooks, hermes_tools
    from hermes_hooks.host.runtime import create_manager

    pm = create_manager()
    agent = Agent(name="helper", tools=hermes_tools(pm))
    result = Runner.run_sync(agent, "list the files", hooks=HermesRunHooks(pm))
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from agents import (
    FunctionTool,
    RunHooks,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)

from hermes_hooks.calling.facade import Hooks

if TYPE_CHECKING:
    from agents.tool_context import ToolContext

    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["PLATFORM", "HermesRunHooks", "hermes_guardrails", "hermes_tools"]

PLATFORM: Final = "openai-agents"


class _Decisions:
    """What ``pre_tool_call`` decided for each call id, for the tool that then runs."""

    def __init__(self) -> None:
        self._args: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def keep(self, call_id: str, args: dict[str, Any]) -> None:
        with self._lock:
            self._args[call_id] = args

    def take(self, call_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._args.pop(call_id, None)


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _ids(context: Any, session_id: str) -> dict[str, str]:
    call_id = str(getattr(context, "tool_call_id", "") or "")
    return {
        "session_id": session_id,
        "task_id": session_id,
        "turn_id": session_id,
        "tool_call_id": call_id,
    }


def hermes_guardrails(
    pm: PluginManager,
    *,
    session_id: str | None = None,
    _decisions: _Decisions | None = None,
    _own: frozenset[str] = frozenset(),
) -> tuple[ToolInputGuardrail[Any], ToolOutputGuardrail[Any]]:
    """Return the input and the output tool guardrails that run the plugins' tool hooks.

    :param session_id: the ``session_id`` the hooks get (a fresh one by default).
    """
    hooks = Hooks(pm)
    session = session_id or f"session-{uuid.uuid4().hex[:12]}"
    decisions = _decisions or _Decisions()

    def before(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        name = context.tool_name
        args = _arguments(context.tool_arguments)
        ids = _ids(context, session)
        decision = hooks.pre_tool_call(
            tool_name=name,
            args=args,
            session_id=ids["session_id"],
            task_id=ids["task_id"],
            turn_id=ids["turn_id"],
            tool_call_id=ids["tool_call_id"],
        )
        if decision.action in ("block", "approve"):  # no approver here: an approval is denied
            if decision.action == "block":
                message = decision.message or f"blocked by {decision.plugin}"
            else:
                message = f"not approved (deny): {decision.message or 'a plugin asks for approval'}"
            _post(
                hooks,
                name,
                args,
                json.dumps({"error": message}),
                "blocked",
                message,
                context,
                session,
            )
            return ToolGuardrailFunctionOutput.reject_content(message, output_info=decision.plugin)
        changed = dict(decision.args)
        if changed != args:
            if name not in _own:
                wanted = json.dumps(changed, ensure_ascii=False, default=str)
                message = f"Hermes plugin {decision.plugin!r} changed the arguments: call {name} "
                message += f"again with {wanted}"
                return ToolGuardrailFunctionOutput.reject_content(message)
            decisions.keep(context.tool_call_id, changed)
        return ToolGuardrailFunctionOutput.allow()

    def after(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        name = context.tool_name
        args = _arguments(context.tool_arguments)
        result = (
            data.output
            if isinstance(data.output, str)
            else json.dumps(data.output, ensure_ascii=False, default=str)
        )
        error = _error_of(result)
        final = _post(
            hooks, name, args, result, "error" if error else "ok", error, context, session
        )
        if final != result:
            return ToolGuardrailFunctionOutput.reject_content(final, output_info="rewritten")
        return ToolGuardrailFunctionOutput.allow()

    return (
        ToolInputGuardrail(guardrail_function=before, name="hermes_pre_tool_call"),
        ToolOutputGuardrail(guardrail_function=after, name="hermes_transform_tool_result"),
    )


def _error_of(result: str) -> str | None:
    if not result.startswith("{"):
        return None
    try:
        data = json.loads(result)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return str(error) if error else None


def _post(
    hooks: Hooks,
    name: str,
    args: dict[str, Any],
    result: str,
    status: str,
    error: str | None,
    context: Any,
    session: str,
) -> str:
    """Fire ``post_tool_call`` (and ``transform_tool_result`` for a call that ran)."""
    common: dict[str, Any] = {
        "tool_name": name,
        "args": args,
        "result": result,
        "duration_ms": 0,
        "status": status,
        "error_type": None
        if status == "ok"
        else ("plugin_block" if status == "blocked" else "tool_error"),
        "error_message": error,
        **_ids(context, session),
    }
    hooks.post_tool_call(**common)
    if status == "blocked":
        return result
    final = hooks.transform_tool_result(**common)
    return final if isinstance(final, str) else result


def hermes_tools(
    pm: PluginManager,
    *,
    names: Iterable[str] | None = None,
    session_id: str | None = None,
) -> list[FunctionTool]:
    """Return the tools ``pm`` offers now as SDK tools, guarded by the plugins' hooks.

    :param names: only these tools (by name); every available one by default.
    :param session_id: the ``session_id`` the hooks get (a fresh one by default).
    """
    definitions = pm.tools.definitions()
    wanted = set(names) if names is not None else None
    chosen = [
        d["function"] for d in definitions if wanted is None or d["function"]["name"] in wanted
    ]
    own = frozenset(function["name"] for function in chosen)
    decisions = _Decisions()
    before, after = hermes_guardrails(pm, session_id=session_id, _decisions=decisions, _own=own)
    tools = []
    for function in chosen:
        name = function["name"]

        async def invoke(context: ToolContext[Any], text: str, _name: str = name) -> str:
            import anyio.to_thread

            args = decisions.take(context.tool_call_id) or _arguments(text)
            result: str = await anyio.to_thread.run_sync(
                lambda: pm.tools.dispatch(_name, args, task_id=context.tool_call_id)
            )
            return result

        tools.append(
            FunctionTool(
                name=name,
                description=str(function.get("description") or ""),
                params_json_schema=dict(function.get("parameters") or {"type": "object"}),
                on_invoke_tool=invoke,
                strict_json_schema=False,
                tool_input_guardrails=[before],
                tool_output_guardrails=[after],
            )
        )
    return tools


class HermesRunHooks(RunHooks[Any]):
    """The SDK's run hooks, firing the observers' Hermes hooks.

    :param session_id: the ``session_id`` the hooks get (a fresh one by default).
    """

    def __init__(self, pm: PluginManager, *, session_id: str | None = None) -> None:
        self.hooks = Hooks(pm)
        self.session_id = session_id or f"session-{uuid.uuid4().hex[:12]}"
        self._started = False
        self._requests = 0
        self._user_message = ""
        self._messages: list[dict[str, Any]] = []

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        if self._started:
            return
        self._started = True
        self.hooks.on_session_start(
            session_id=self.session_id,
            model=str(getattr(agent, "model", "") or ""),
            platform=PLATFORM,
        )

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: str | None, input_items: list[Any]
    ) -> None:
        self._requests += 1
        self._messages = [item for item in input_items if isinstance(item, dict)]
        for item in input_items:
            if isinstance(item, dict) and item.get("role") == "user":
                content = item.get("content")
                self._user_message = content if isinstance(content, str) else str(content)
        self.hooks.pre_api_request(
            session_id=self.session_id,
            task_id=self.session_id,
            turn_id=self.session_id,
            api_call_count=self._requests,
            message_count=len(input_items),
            request_messages=self._messages,
            user_message=self._user_message,
            platform=PLATFORM,
        )

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        self.hooks.post_api_request(
            session_id=self.session_id,
            task_id=self.session_id,
            turn_id=self.session_id,
            api_call_count=self._requests,
            platform=PLATFORM,
        )

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        text = output if isinstance(output, str) else json.dumps(output, default=str)
        self.hooks.post_llm_call(
            session_id=self.session_id,
            task_id=self.session_id,
            turn_id=self.session_id,
            user_message=self._user_message,
            assistant_response=text,
            conversation_history=self._messages,
            platform=PLATFORM,
        )
        self.hooks.on_session_end(
            session_id=self.session_id,
            task_id=self.session_id,
            turn_id=self.session_id,
            completed=True,
            failed=False,
            interrupted=False,
            turn_exit_reason="agent_end",
            platform=PLATFORM,
        )

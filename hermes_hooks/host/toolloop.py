"""One tool call, from the model's request to the result the model sees.

``pre_tool_call`` (block > approve > modify) → the approval gate when the decision is
``approve`` → dispatch through ``pm.tools`` → ``post_tool_call`` → ``transform_tool_result``.
A blocked call never runs: the block message goes back to the model as the tool's result,
``post_tool_call`` reports ``status="blocked"`` and ``transform_tool_result`` does not fire.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from hermes_hooks.backends.models.base import ToolCall, dumps
from hermes_hooks.host.approval import (
    APPROVING_CHOICES,
    ApprovalRequest,
    ask_approval,
    through_transport,
)
from hermes_hooks.host.records import ToolCallRecord
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.host.session import Session, TurnState
    from hermes_hooks.spec.decisions import ToolDecision

__all__ = ["parse_arguments", "result_error", "run_tool_call"]

logger = logging.getLogger(__name__)


class _CallIds(TypedDict):
    task_id: str
    session_id: str
    tool_call_id: str
    turn_id: str
    api_request_id: str


def parse_arguments(text: str) -> dict[str, Any]:
    """Return the arguments of a tool call from the model's JSON text.

    :raises ValueError: the text is not a JSON object.
    """
    value = json.loads(text) if text.strip() else {}
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, found {type(value).__name__}")
    return value


def result_error(result: str) -> str | None:
    """Return the error a tool result carries (``{"error": ...}``), or ``None``."""
    if not result.startswith("{"):
        return None
    try:
        data = json.loads(result)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return str(error) if error else None


def _shown_command(tool_name: str, args: dict[str, Any]) -> str:
    command = args.get("command")
    if tool_name == "terminal" and isinstance(command, str):
        return command
    return f"{tool_name}({dumps(args)})"


def run_tool_call(session: Session, turn: TurnState, call: ToolCall) -> ToolCallRecord:
    """Run one tool call with every hook and return its record (``result`` is what to send)."""
    hooks = session.hooks
    ids: _CallIds = {
        "task_id": turn.task_id,
        "session_id": session.session_id,
        "tool_call_id": call.id,
        "turn_id": turn.turn_id,
        "api_request_id": turn.api_request_id,
    }
    try:
        args = parse_arguments(call.arguments)
    except ValueError as exc:
        message = f"the arguments of {call.name!r} are not a JSON object: {exc}"
        return _finish(session, call, {}, dumps({"error": message}), 0, ids)
    # tool_request middleware: the arguments every hook, gate and handler then sees
    applied = session.pm.apply_middleware("tool_request", "args", args, tool_name=call.name, **ids)
    args = applied.payload
    decision = hooks.pre_tool_call(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
        tool_name=call.name,
        args=args,  # the gate undoes a plugin's change to them in place
        **ids,
    )
    for conflict in decision.conflicts:
        logger.warning("pre_tool_call modify conflict on %s: %s", call.name, conflict.describe())
    # The facade logged each change it undid and counted it on the plugin; the record keeps it.
    conflicts = tuple(conflict.describe() for conflict in decision.conflicts) + tuple(
        tampering.describe() for tampering in decision.tampering
    )
    effective = dict(decision.args)
    action, error_type = decision.action, "plugin_block"
    message = decision.message or ""
    if action == "approve":
        action, error_type, message = _approve(session, turn, call, decision, effective)
    if action == "block":
        text = message or "blocked"
        result = dumps({"error": text})
        hooks.post_tool_call(
            **_outcome(call, effective, result, 0, "blocked", error_type, text, ids)
        )
        return ToolCallRecord(
            tool_call_id=call.id,
            tool_name=call.name,
            args=effective,
            status="blocked",
            result=result,
            error_type=error_type,
            error_message=text,
            decided_by=decision.plugin,
            conflicts=conflicts,
        )
    if call.name not in turn.offered_tools:
        why = session.pm.tools.unavailable_reason(call.name) or "it was not offered this turn"
        result = dumps({"error": f"tool {call.name!r} is not available: {why}"})
        return _finish(session, call, effective, result, 0, ids, conflicts)
    started = time.perf_counter()

    def handler(final_args: dict[str, Any]) -> str:
        return session.dispatch_tool(call.name, final_args, task_id=turn.task_id)

    # tool_execution middleware wraps the tool's handler (next_call runs it)
    result = session.pm.run_middleware(
        "tool_execution", "args", effective, handler, tool_name=call.name, **ids
    )
    if not isinstance(result, str):
        result = dumps(result)
    duration_ms = round((time.perf_counter() - started) * 1000)
    return _finish(session, call, effective, result, duration_ms, ids, conflicts)


def _approve(
    session: Session,
    turn: TurnState,
    call: ToolCall,
    decision: ToolDecision,
    effective: dict[str, Any],
) -> tuple[Literal["allow", "block"], str, str]:
    """A plugin asked for approval: ask the session's approver (unless a rule approved for the
    session covers the call); return the action (``allow`` or ``block``), the error type and
    the message for a block."""
    message = decision.message or ""
    pattern = decision.rule_key or f"plugin:{decision.plugin}"
    if pattern in session.approved_rules:
        return "allow", "plugin_block", message
    request = ApprovalRequest(
        tool_name=call.name,
        args=effective,
        command=_shown_command(call.name, effective),
        description=message or "a plugin asks for approval",
        pattern_key=pattern,
        session_key=session.session_id,
        surface=session.surface,
        turn_id=turn.turn_id,
        tool_call_id=call.id,
    )
    choice = ask_approval(session.hooks, through_transport(session.pm, session.approver), request)
    if choice in ("session", "always"):
        # "always" is kept for this session only: the reference host persists nothing.
        session.approved_rules.add(pattern)
    if choice in APPROVING_CHOICES:
        return "allow", "plugin_block", message
    return "block", "approval_denied", f"not approved ({choice}): {message}"


def _outcome(
    call: ToolCall,
    args: dict[str, Any],
    result: str,
    duration_ms: int,
    status: str,
    error_type: str | None,
    error: str | None,
    ids: _CallIds,
) -> dict[str, Any]:
    """What ``post_tool_call`` and ``transform_tool_result`` are told about a finished call."""
    return {
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
        "tool_name": call.name,
        "args": args,
        "result": result,
        "duration_ms": duration_ms,
        "status": status,
        "error_type": error_type,
        "error_message": error,
        **ids,
    }


def _finish(
    session: Session,
    call: ToolCall,
    args: dict[str, Any],
    result: str,
    duration_ms: int,
    ids: _CallIds,
    conflicts: tuple[str, ...] = (),
) -> ToolCallRecord:
    """Fire ``post_tool_call`` and ``transform_tool_result`` for a call that ran (or failed)."""
    hooks = session.hooks
    error = result_error(result)
    status: Any = "error" if error is not None else "ok"
    error_type = "tool_error" if error is not None else None
    outcome = _outcome(call, args, result, duration_ms, status, error_type, error, ids)
    hooks.post_tool_call(**outcome)
    final = hooks.transform_tool_result(**outcome)
    return ToolCallRecord(
        tool_call_id=call.id,
        tool_name=call.name,
        args=args,
        status=status,
        result=final,
        duration_ms=duration_ms,
        error_type=error_type,
        error_message=error,
        conflicts=conflicts,
    )

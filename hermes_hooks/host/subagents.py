"""Subagents: a child session works on a goal; ``subagent_start``/``subagent_stop`` frame it."""

from __future__ import annotations

import time
import weakref
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.models.base import dumps
from hermes_hooks.host.records import SubagentOutcome, ToolCallRecord
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.host.session import Session
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["run_subagent", "tool_call_history"]

_INPUT_PREVIEW: Final = 200
"""Characters of each tool input kept in ``tool_call_history`` (metadata, not content)."""


def tool_call_history(records: tuple[ToolCallRecord, ...]) -> list[dict[str, Any]]:
    """Return the child's tool calls as ``subagent_stop`` reports them: metadata only."""
    history = []
    for record in records:
        text = dumps(record.args)
        history.append(
            {
                "tool_name": record.tool_name,
                "tool_input": text[:_INPUT_PREVIEW],
                "input_bytes": len(text.encode()),
                "output_bytes": len(record.result.encode()),
                "status": record.status,
            }
        )
    return history


_RUNNING: weakref.WeakKeyDictionary[PluginManager, dict[str | None, Session]] = (
    weakref.WeakKeyDictionary()
)
"""The children running now, per manager (what ``ctx.subagent_lifecycle`` shows)."""


def running_subagents(pm: PluginManager) -> list[dict[str, Any]]:
    """Snapshots of the subagents running on ``pm``'s sessions."""
    return [
        {
            "subagent_id": child.subagent_id,
            "role": child.role,
            "depth": child.depth,
            "session_id": child.session_id,
        }
        for child in list(_RUNNING.get(pm, {}).values())
    ]


def run_subagent(
    parent: Session, goal: str, *, context: str = "", role: str = "leaf"
) -> SubagentOutcome:
    """Run one turn of a child session on ``goal`` and report how it went."""
    from hermes_hooks.host.session import new_id
    from hermes_hooks.plugins.newer_ctx import extras

    child = parent.spawn_child(role)
    lifecycle = extras(parent.pm)
    if lifecycle.subagent_lookup is None:
        manager = weakref.ref(parent.pm)  # the lookup lives in a table keyed weakly by it

        def lookup() -> list[dict[str, Any]]:
            pm = manager()
            return running_subagents(pm) if pm is not None else []

        lifecycle.subagent_lookup = lookup
    child.subagent_id = new_id("subagent")
    parent_turn_id = parent.turn.turn_id if parent.turn is not None else ""
    parent.hooks.subagent_start(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
        parent_session_id=parent.session_id,
        parent_turn_id=parent_turn_id,
        parent_subagent_id=parent.subagent_id,
        child_session_id=child.session_id,
        child_subagent_id=child.subagent_id,
        child_role=role,
        child_goal=goal,
    )
    started = time.perf_counter()
    status, summary = "error", None
    records: tuple[ToolCallRecord, ...] = ()
    _RUNNING.setdefault(parent.pm, {})[child.subagent_id] = child
    try:
        result = child.run_turn(f"{goal}\n\n{context}" if context else goal)
        records = result.tool_calls
        summary = result.text or None
        status = (
            "completed" if result.completed else "interrupted" if result.interrupted else "failed"
        )
        if parent.memory is not None:
            parent.memory.delegated(goal, summary or "", child_session_id=child.session_id)
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        _RUNNING.get(parent.pm, {}).pop(child.subagent_id, None)
        duration_ms = round((time.perf_counter() - started) * 1000)
        parent.hooks.subagent_stop(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            parent_session_id=parent.session_id,
            parent_turn_id=parent_turn_id,
            child_session_id=child.session_id,
            child_role=role,
            child_summary=summary,
            child_status=status,
            tool_call_history=tool_call_history(records),
            duration_ms=duration_ms,
        )
    return SubagentOutcome(
        child_session_id=child.session_id,
        child_subagent_id=child.subagent_id,
        status=status,
        summary=summary,
        duration_ms=duration_ms,
        tool_calls=records,
    )

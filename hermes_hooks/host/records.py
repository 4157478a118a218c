"""What a turn leaves behind: the record of each tool call and the turn's result."""

from __future__ import annotations

from typing import Any, Literal

import attrs

__all__ = ["CommandReply", "SubagentOutcome", "ToolCallRecord", "TurnResult"]

ToolStatus = Literal["ok", "error", "blocked"]


@attrs.frozen
class ToolCallRecord:
    """One tool call of a turn, as it ended.

    :param args: the arguments it ran with (after every ``modify``).
    :param status: ``ok``, ``error`` (the result carries an error) or ``blocked``.
    :param result: what the model saw, after ``transform_tool_result``.
    :param decided_by: the plugin whose block or approve decided, if any.
    :param conflicts: ``modify`` conflicts, described.
    """

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    status: ToolStatus
    result: str
    duration_ms: int = 0
    error_type: str | None = None
    error_message: str | None = None
    decided_by: str | None = None
    conflicts: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return the record as a JSON-ready dict."""
        data = attrs.asdict(self)
        data["conflicts"] = list(self.conflicts)
        return data


@attrs.frozen
class TurnResult:
    """The outcome of one turn.

    :param text: the final response (after ``transform_llm_output``), or what went wrong.
    :param exit_reason: why the loop ended, e.g. ``text_response(stop)``,
        ``interrupted``, ``api_error(timeout)``, ``max_iterations_reached(8/8)``.
    :param context: what ``pre_llm_call`` added to the user message, if anything.
    :param recalled: the memory providers' recalled context added to it, if any (fenced in
        ``<memory-context>``).
    """

    session_id: str
    turn_id: str
    task_id: str
    user_message: str
    text: str
    completed: bool
    failed: bool
    interrupted: bool
    exit_reason: str
    tool_calls: tuple[ToolCallRecord, ...] = ()
    api_calls: int = 0
    error: str | None = None
    context: str | None = None
    recalled: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a JSON-ready dict."""
        data = attrs.asdict(self, recurse=False)
        data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        return data


@attrs.frozen
class CommandReply:
    """What a slash command answered.

    :param exit: the command asks the surface to end the session (``/exit``).
    """

    command: str
    text: str
    exit: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return the reply as a JSON-ready dict."""
        return attrs.asdict(self)


@attrs.frozen
class SubagentOutcome:
    """How a delegated child session ended."""

    child_session_id: str
    child_subagent_id: str
    status: str
    summary: str | None
    duration_ms: int
    tool_calls: tuple[ToolCallRecord, ...] = ()

"""Every hook of the Hermes plugin contract: its typed signature, its documentation, its contract.

Hook and argument names are the ones Hermes fires (``hermes_cli/plugins.py`` ``VALID_HOOKS`` and
the fire sites in ``model_tools.py``, ``agent/*.py``, ``tools/*.py``, ``gateway/run.py`` and
``hermes_cli/kanban_db.py``); they are API, because plugins name them. Each hookspec carries a
:class:`~hermes_hooks.spec.contract.HookContract` (mode, result check, error policy) that the
manager reads to guard every implementation, and the ``defaults`` of the arguments a host may
leave out, from which the typed facade's methods are generated. Pluggy hookspecs have no body:
the docstring is the body.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from hermes_hooks.spec.contract import (
    Mode,
    Policy,
    contract,
    is_context,
    is_error_classification,
    is_gateway_decision,
    is_non_empty_str,
    is_str,
    is_tool_decision,
    is_transcription_override,
    is_verify_decision,
)
from hermes_hooks.spec.markers import hookspec

TELEMETRY_SCHEMA_VERSION: Final = "hermes.observer.v1"
"""The observer payload schema every hook call carries, as Hermes' ``invoke_hook`` stamps it."""

_FAILURE_MESSAGE_LIMIT: Final = 200
"""The failure text is cut here: it becomes the tool result the model reads."""


def _block_naming_plugin(plugin_key: str, message: str) -> dict[str, str]:
    """Build the fail-closed ``pre_tool_call`` decision for a plugin that raised or timed out."""
    return {
        "action": "block",
        "message": (
            f"pre_tool_call plugin {plugin_key!r} failed, so the tool call was blocked: "
            f"{message[:_FAILURE_MESSAGE_LIMIT]}"
        ),
    }


# -- tools ---------------------------------------------------------------------------------------


@hookspec
@contract(
    Mode.COLLECT,
    policy=Policy.CLOSED,
    check=is_tool_decision,
    expects=(
        '{"action": "block", "message": str}, '
        '{"action": "approve", "message"?: str, "rule_key"?: str}, '
        '{"action": "modify", "args": {...}} or the legacy {"blocked": True, "reason"?: str}'
    ),
    safe_result=_block_naming_plugin,
    defaults={
        "task_id": "",
        "session_id": "",
        "tool_call_id": "",
        "turn_id": "",
        "api_request_id": "",
        "middleware_trace": [],
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
    protects=("args",),
)
def pre_tool_call(
    tool_name: str,
    args: dict[str, Any],
    task_id: str,
    session_id: str,
    tool_call_id: str,
    turn_id: str,
    api_request_id: str,
    middleware_trace: list[dict[str, Any]],
    telemetry_schema_version: str,
) -> dict[str, Any] | None:
    """Fires once immediately before every tool call runs, built-in and plugin tools alike.

    :param tool_name: the tool about to run, e.g. ``"terminal"`` or ``"read_file"``.
    :param args: the arguments the model passed to the tool (after type coercion).
    :param task_id: the task the call belongs to; ``""`` when unset.
    :param session_id: the current session; ``""`` when unset.
    :param tool_call_id: the model's id for this tool call; ``""`` when unset.
    :param turn_id: the current turn; ``""`` when unset.
    :param api_request_id: the API request that produced the call; ``""`` when unset.
    :param middleware_trace: what the tool-request middleware did to the arguments, in order.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ``None`` to stay out of it, ``{"action": "block", "message": str}`` to veto (the
        message becomes the tool result), ``{"action": "approve", "message"?, "rule_key"?}`` to
        send the call to the human-approval gate, ``{"action": "modify", "args": {...}}`` to merge
        new arguments over the old, or the legacy ``{"blocked": True, "reason": str}``. All
        decisions combine as block > approve > modify.

    Error policy: closed; a raising or timed-out implementation blocks the call with a message
    naming the plugin.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "task_id": "",
        "session_id": "",
        "tool_call_id": "",
        "turn_id": "",
        "api_request_id": "",
        "duration_ms": 0,
        "status": "ok",
        "error_type": None,
        "error_message": None,
        "middleware_trace": [],
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def post_tool_call(
    tool_name: str,
    args: dict[str, Any],
    result: str,
    task_id: str,
    session_id: str,
    tool_call_id: str,
    turn_id: str,
    api_request_id: str,
    duration_ms: int,
    status: Literal["ok", "error", "blocked"],
    error_type: str | None,
    error_message: str | None,
    middleware_trace: list[dict[str, Any]],
    telemetry_schema_version: str,
) -> None:
    """Fires once after every tool call returns, is blocked, or fails.

    :param tool_name: the tool that ran.
    :param args: the arguments the tool ran with.
    :param result: the tool result the model will see, usually a JSON string.
    :param task_id: the task the call belongs to; ``""`` when unset.
    :param session_id: the current session; ``""`` when unset.
    :param tool_call_id: the model's id for this tool call; ``""`` when unset.
    :param turn_id: the current turn; ``""`` when unset.
    :param api_request_id: the API request that produced the call; ``""`` when unset.
    :param duration_ms: how long the tool's dispatch took, in milliseconds (0 when blocked).
    :param status: ``"ok"``, ``"error"`` (the result carries an error) or ``"blocked"`` (a
        ``pre_tool_call`` decision stopped it).
    :param error_type: ``"tool_error"``, ``"plugin_block"`` and the like; ``None`` when ok.
    :param error_message: the error or block message; ``None`` when ok.
    :param middleware_trace: what the tool-request middleware did to the arguments, in order.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec(firstresult=True)
@contract(
    Mode.FIRST_RESULT,
    check=is_str,
    expects="a str that replaces the tool result (an empty string counts)",
    defaults={
        "task_id": "",
        "session_id": "",
        "tool_call_id": "",
        "turn_id": "",
        "api_request_id": "",
        "duration_ms": 0,
        "status": "ok",
        "error_type": None,
        "error_message": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def transform_tool_result(
    tool_name: str,
    args: dict[str, Any],
    result: str,
    task_id: str,
    session_id: str,
    tool_call_id: str,
    turn_id: str,
    api_request_id: str,
    duration_ms: int,
    status: Literal["ok", "error"],
    error_type: str | None,
    error_message: str | None,
    telemetry_schema_version: str,
) -> str | None:
    """Fires after ``post_tool_call`` and before the tool result is appended to the conversation.

    :param tool_name: the tool that ran.
    :param args: the arguments the tool ran with.
    :param result: the final result string from tool dispatch.
    :param task_id: the task the call belongs to; ``""`` when unset.
    :param session_id: the current session; ``""`` when unset.
    :param tool_call_id: the model's id for this tool call; ``""`` when unset.
    :param turn_id: the current turn; ``""`` when unset.
    :param api_request_id: the API request that produced the call; ``""`` when unset.
    :param duration_ms: how long the tool's dispatch took, in milliseconds.
    :param status: ``"ok"`` or ``"error"``, derived from the result.
    :param error_type: ``"tool_error"`` when the result carries an error, else ``None``.
    :param error_message: the error text from the result, else ``None``.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: a ``str`` that replaces the result (the first one wins), or ``None`` to keep it.

    Error policy: open; a raising implementation is skipped and the result stays unchanged.
    """


@hookspec(firstresult=True)
@contract(
    Mode.FIRST_RESULT,
    check=is_str,
    expects="a str that replaces the captured terminal output",
    defaults={"task_id": "", "env_type": "", "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION},
)
def transform_terminal_output(
    command: str,
    output: str,
    returncode: int | None,
    task_id: str,
    env_type: str,
    telemetry_schema_version: str,
) -> str | None:
    """Fires when the terminal tool or a background process hands captured output to the model.

    :param command: the shell command that produced the output.
    :param output: combined stdout and stderr after bounded capture, before redaction.
    :param returncode: the exit code; ``None`` while a background process still runs.
    :param task_id: the effective task; ``""`` when unset.
    :param env_type: the execution environment type; ``""`` for background processes.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: a ``str`` that replaces the output (the first one wins; the final output limit
        still applies), or ``None`` to keep it.

    Error policy: open; a raising implementation is skipped and the output stays unchanged.
    """


# -- the model ----------------------------------------------------------------------------------


@hookspec(firstresult=True)
@contract(
    Mode.FIRST_RESULT,
    check=is_non_empty_str,
    expects="a non-empty str that replaces the final response",
    defaults={
        "session_id": "",
        "model": "",
        "platform": "",
        "turn_id": "",
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def transform_llm_output(
    response_text: str,
    session_id: str,
    model: str,
    platform: str,
    turn_id: str,
    telemetry_schema_version: str,
) -> str | None:
    """Fires once per turn on the final response, before it is stored and delivered.

    :param response_text: the assistant's final response text for this turn.
    :param session_id: the current session; ``""`` for one-shot runs.
    :param model: the model that produced the response.
    :param platform: where the session runs (``"cli"``, ``"telegram"``, ...); ``""`` when unset.
    :param turn_id: the current turn.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: a non-empty ``str`` that replaces the response (the first one wins), or ``None``;
        an empty string does not count.

    Error policy: open; a raising implementation is skipped and the response stays unchanged.
    """


@hookspec
@contract(
    Mode.COLLECT,
    check=is_context,
    expects='a str or {"context": str}, appended to the user message',
    defaults={
        "session_id": "",
        "task_id": "",
        "turn_id": "",
        "is_first_turn": False,
        "model": "",
        "platform": "",
        "parent_session_id": "",
        "sender_id": "",
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def pre_llm_call(
    session_id: str,
    task_id: str,
    turn_id: str,
    user_message: str | list[dict[str, Any]],
    conversation_history: list[dict[str, Any]],
    is_first_turn: bool,
    model: str,
    platform: str,
    parent_session_id: str,
    sender_id: str,
    telemetry_schema_version: str,
) -> str | dict[str, str] | None:
    """Fires once per turn, after context compression and before the tool-calling loop starts.

    :param session_id: the current session.
    :param task_id: the task of this turn.
    :param turn_id: the current turn.
    :param user_message: the user's message before any injection; a list of content parts
        on a multimodal turn.
    :param conversation_history: a copy of the whole message list (OpenAI format).
    :param is_first_turn: whether this is the first turn of a new session.
    :param model: the model identifier, e.g. ``"anthropic/claude-sonnet-4.6"``.
    :param platform: where the session runs (``"cli"``, ``"telegram"``, ...); ``""`` when unset.
    :param parent_session_id: the delegating session for a subagent; ``""`` otherwise.
    :param sender_id: the id of the user who sent the message; ``""`` when unknown.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: a ``str`` or ``{"context": str}`` to add context to this turn's user message (never
        the system prompt); every fitting return is joined with blank lines. ``None`` adds nothing.

    Error policy: open; a raising implementation is skipped and adds no context.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "session_id": "",
        "task_id": "",
        "turn_id": "",
        "model": "",
        "platform": "",
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def post_llm_call(
    session_id: str,
    task_id: str,
    turn_id: str,
    user_message: str | list[dict[str, Any]],
    assistant_response: str,
    conversation_history: list[dict[str, Any]],
    model: str,
    platform: str,
    telemetry_schema_version: str,
) -> None:
    """Fires once per successful turn, after the tool loop produced a final response.

    :param session_id: the current session.
    :param task_id: the task of this turn.
    :param turn_id: the current turn.
    :param user_message: the user's original message for this turn.
    :param assistant_response: the final response, after ``transform_llm_output``.
    :param conversation_history: a copy of the whole message list after the turn.
    :param model: the model identifier.
    :param platform: where the session runs; ``""`` when unset.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "task_id": "",
        "turn_id": "",
        "api_request_id": "",
        "session_id": "",
        "user_message": "",
        "conversation_history": [],
        "platform": "",
        "model": "",
        "provider": "",
        "base_url": "",
        "api_mode": "chat_completions",
        "api_call_count": 1,
        "retry_count": 0,
        "message_count": 0,
        "tool_count": 0,
        "approx_input_tokens": 0,
        "request_char_count": 0,
        "max_tokens": None,
        "started_at": 0.0,
        "middleware_trace": [],
        "request": {},
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def pre_api_request(
    task_id: str,
    turn_id: str,
    api_request_id: str,
    session_id: str,
    user_message: str | list[dict[str, Any]],
    conversation_history: list[dict[str, Any]],
    platform: str,
    model: str,
    provider: str,
    base_url: str,
    api_mode: str,
    api_call_count: int,
    retry_count: int,
    request_messages: list[dict[str, Any]],
    message_count: int,
    tool_count: int,
    approx_input_tokens: int,
    request_char_count: int,
    max_tokens: int | None,
    started_at: float,
    middleware_trace: list[dict[str, Any]],
    request: dict[str, Any],
    telemetry_schema_version: str,
) -> None:
    """Fires for every provider attempt (retries included), immediately before it is sent.

    :param task_id: the task of this turn.
    :param turn_id: the current turn.
    :param api_request_id: the id shared by every attempt of one logical request.
    :param session_id: the current session.
    :param user_message: the user's message for this turn (raw, unsanitized).
    :param conversation_history: the message list (raw, unsanitized).
    :param platform: where the session runs.
    :param model: the model identifier.
    :param provider: the provider name, e.g. ``"openrouter"``.
    :param base_url: the endpoint base URL.
    :param api_mode: the wire protocol, e.g. ``"chat_completions"``.
    :param api_call_count: which API call of the turn this is, from 1.
    :param retry_count: which retry of this request this is, from 0.
    :param request_messages: the messages sent on the wire (raw, unsanitized).
    :param message_count: how many messages are sent.
    :param tool_count: how many tool schemas are sent.
    :param approx_input_tokens: a rough estimate of the input tokens.
    :param request_char_count: the size of the request in characters.
    :param max_tokens: the output-token cap, or ``None`` for the provider default.
    :param started_at: when the attempt started (``time.time()``).
    :param middleware_trace: what the request middleware did, in order.
    :param request: the sanitized request envelope ``{"method", "body"}``; prefer it.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "task_id": "",
        "turn_id": "",
        "api_request_id": "",
        "session_id": "",
        "platform": "",
        "model": "",
        "provider": "",
        "base_url": "",
        "api_mode": "chat_completions",
        "api_call_count": 1,
        "api_duration": 0.0,
        "started_at": 0.0,
        "ended_at": 0.0,
        "first_chunk_at": None,
        "first_delta_at": None,
        "finish_reason": None,
        "message_count": 0,
        "response_model": None,
        "response": {},
        "usage": None,
        "assistant_message": None,
        "assistant_content_chars": 0,
        "assistant_tool_call_count": 0,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def post_api_request(
    task_id: str,
    turn_id: str,
    api_request_id: str,
    session_id: str,
    platform: str,
    model: str,
    provider: str,
    base_url: str,
    api_mode: str,
    api_call_count: int,
    api_duration: float,
    started_at: float,
    ended_at: float,
    first_chunk_at: float | None,
    first_delta_at: float | None,
    finish_reason: str | None,
    message_count: int,
    response_model: str | None,
    response: dict[str, Any],
    usage: dict[str, Any] | None,
    assistant_message: Any,
    assistant_content_chars: int,
    assistant_tool_call_count: int,
    telemetry_schema_version: str,
) -> None:
    """Fires after a provider response has been received and normalized successfully.

    :param task_id: the task of this turn.
    :param turn_id: the current turn.
    :param api_request_id: the id shared by every attempt of one logical request.
    :param session_id: the current session.
    :param platform: where the session runs.
    :param model: the requested model identifier.
    :param provider: the provider name.
    :param base_url: the endpoint base URL.
    :param api_mode: the wire protocol.
    :param api_call_count: which API call of the turn this is, from 1.
    :param api_duration: how long the attempt took, in seconds.
    :param started_at: when the attempt started (``time.time()``).
    :param ended_at: when the attempt ended (``time.time()``).
    :param first_chunk_at: when the first stream event arrived; ``None`` when not streamed.
    :param first_delta_at: when the first text delta arrived; ``None`` when not streamed.
    :param finish_reason: the provider's finish reason, e.g. ``"stop"`` or ``"tool_calls"``.
    :param message_count: how many messages were sent.
    :param response_model: the model the provider reports having served.
    :param response: the sanitized response envelope; prefer it.
    :param usage: the normalized token usage; ``None`` when the provider reported none.
    :param assistant_message: the raw normalized assistant message (may hold user content).
    :param assistant_content_chars: the length of the assistant text.
    :param assistant_tool_call_count: how many tool calls the response asks for.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "task_id": "",
        "turn_id": "",
        "api_request_id": "",
        "session_id": "",
        "platform": "",
        "model": "",
        "provider": "",
        "base_url": "",
        "api_mode": "chat_completions",
        "api_call_count": 1,
        "api_duration": 0.0,
        "started_at": 0.0,
        "ended_at": 0.0,
        "first_chunk_at": None,
        "first_delta_at": None,
        "status_code": None,
        "retry_count": None,
        "max_retries": None,
        "retryable": None,
        "reason": None,
        "request": {},
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def api_request_error(
    task_id: str,
    turn_id: str,
    api_request_id: str,
    session_id: str,
    platform: str,
    model: str,
    provider: str,
    base_url: str,
    api_mode: str,
    api_call_count: int,
    api_duration: float,
    started_at: float,
    ended_at: float,
    first_chunk_at: float | None,
    first_delta_at: float | None,
    status_code: int | None,
    retry_count: int | None,
    max_retries: int | None,
    retryable: bool | None,
    reason: str | None,
    error: dict[str, str],
    request: dict[str, Any],
    telemetry_schema_version: str,
) -> None:
    """Fires for every failed provider attempt.

    :param task_id: the task of this turn.
    :param turn_id: the current turn.
    :param api_request_id: the id shared by every attempt of one logical request.
    :param session_id: the current session.
    :param platform: where the session runs.
    :param model: the requested model identifier.
    :param provider: the provider name.
    :param base_url: the endpoint base URL.
    :param api_mode: the wire protocol.
    :param api_call_count: which API call of the turn this is, from 1.
    :param api_duration: how long the attempt took before failing, in seconds.
    :param started_at: when the attempt started (``time.time()``).
    :param ended_at: when the attempt failed (``time.time()``).
    :param first_chunk_at: when the first stream event arrived; ``None`` if none did.
    :param first_delta_at: when the first text delta arrived; ``None`` if none did.
    :param status_code: the HTTP status, when there was one.
    :param retry_count: which retry this was, when known.
    :param max_retries: how many retries are allowed, when known.
    :param retryable: whether the failure will be retried, when known.
    :param reason: the classified failure reason, e.g. ``"rate_limit"``, when known.
    :param error: ``{"type": str, "message": str}``; the message may hold provider data.
    :param request: the sanitized request envelope ``{"method", "body"}``.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


# -- sessions ------------------------------------------------------------------------------------


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={"model": "", "platform": "", "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION},
)
def on_session_start(
    session_id: str,
    model: str,
    platform: str,
    telemetry_schema_version: str,
) -> None:
    """Fires once on the first turn of a brand-new session, not when a session continues.

    :param session_id: the new session.
    :param model: the model identifier.
    :param platform: where the session runs.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "task_id": "",
        "turn_id": "",
        "completed": False,
        "failed": False,
        "interrupted": False,
        "turn_exit_reason": "",
        "model": "",
        "platform": "",
        "reason": None,
        "api_request_id": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def on_session_end(
    session_id: str,
    task_id: str,
    turn_id: str,
    completed: bool,
    failed: bool,
    interrupted: bool,
    turn_exit_reason: str,
    model: str,
    platform: str,
    reason: str | None,
    api_request_id: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires at the very end of every turn whatever its outcome, and when a CLI exits mid-turn.

    :param session_id: the session.
    :param task_id: the task of the turn.
    :param turn_id: the turn that ended.
    :param completed: whether the agent produced a final response.
    :param failed: whether the turn failed.
    :param interrupted: whether the turn was interrupted (new message, ``/stop``, quit).
    :param turn_exit_reason: why the loop ended, e.g. ``"text_response(stop)"``.
    :param model: the model identifier.
    :param platform: where the session runs.
    :param reason: why an exit path ended the turn (CLI and TUI exits only), else ``None``.
    :param api_request_id: the request in flight when an exit path fired, else ``None``.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "platform": "",
        "reason": None,
        "old_session_id": None,
        "new_session_id": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def on_session_finalize(
    session_id: str | None,
    platform: str,
    reason: str | None,
    old_session_id: str | None,
    new_session_id: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires when the CLI, TUI or gateway tears down an active session (``/new``, quit, shutdown).

    :param session_id: the outgoing session; ``None`` when no session was active.
    :param platform: ``"cli"``, ``"tui"`` or the messaging platform name.
    :param reason: why the session was torn down, when the surface says.
    :param old_session_id: the outgoing session on a gateway reset, else ``None``.
    :param new_session_id: the replacement session on a gateway reset, else ``None``.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped. Not bounded by
    the callback timeout: this is the last chance to flush state.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "platform": "",
        "reason": None,
        "old_session_id": None,
        "new_session_id": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def on_session_reset(
    session_id: str | None,
    platform: str,
    reason: str | None,
    old_session_id: str | None,
    new_session_id: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires at a session boundary, after the replacement session exists (``/new``, ``/reset``).

    :param session_id: the new session, already rotated; ``None`` if none could be made.
    :param platform: ``"cli"``, ``"tui"`` or the messaging platform name.
    :param reason: why the session was reset (CLI and gateway), else ``None``.
    :param old_session_id: the outgoing session (gateway only), else ``None``.
    :param new_session_id: the replacement session (gateway only), else ``None``.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped. Not bounded by
    the callback timeout.
    """


# -- subagents -----------------------------------------------------------------------------------


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "parent_turn_id": "",
        "parent_subagent_id": None,
        "child_role": "leaf",
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def subagent_start(
    parent_session_id: str | None,
    parent_turn_id: str,
    parent_subagent_id: str | None,
    child_session_id: str | None,
    child_subagent_id: str,
    child_role: str,
    child_goal: str,
    telemetry_schema_version: str,
) -> None:
    """Fires once per child agent, after ``delegate_task`` built it and before it runs.

    :param parent_session_id: the delegating agent's session.
    :param parent_turn_id: the parent turn that asked for the delegation; ``""`` when unknown.
    :param parent_subagent_id: the parent's own subagent id when it is itself a subagent, else
        ``None``.
    :param child_session_id: the session allocated for the child.
    :param child_subagent_id: the child's stable subagent id.
    :param child_role: the child's effective role, ``"leaf"`` or ``"orchestrator"``.
    :param child_goal: the goal the child will work on (may hold user content).
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored; this hook cannot stop the child (block ``delegate_task`` in
        ``pre_tool_call`` instead).

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "parent_turn_id": "",
        "child_role": None,
        "child_summary": None,
        "tool_call_history": [],
        "duration_ms": 0,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def subagent_stop(
    parent_session_id: str | None,
    parent_turn_id: str,
    child_session_id: str | None,
    child_role: str | None,
    child_summary: str | None,
    child_status: str,
    tool_call_history: list[dict[str, Any]],
    duration_ms: int,
    telemetry_schema_version: str,
) -> None:
    """Fires once per child agent after ``delegate_task`` finishes, on the parent's thread.

    :param parent_session_id: the delegating agent's session.
    :param parent_turn_id: the parent turn that asked for the delegation; ``""`` when unknown.
    :param child_session_id: the child's session.
    :param child_role: the child's role; ``None`` when roles are not enabled.
    :param child_summary: the final response the child returned, if any.
    :param child_status: ``"completed"``, ``"failed"``, ``"interrupted"``, ``"timeout"`` or
        ``"error"``.
    :param tool_call_history: the child's tool calls in order, metadata only (``tool_name``,
        bounded ``tool_input``, ``input_bytes``, ``output_bytes``, ``status``).
    :param duration_ms: wall-clock time the child ran, in milliseconds.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped. Runs on the
    caller's thread, never on a timeout worker.
    """


# -- streaming output ----------------------------------------------------------------------------

_STREAM_DEFAULTS: Final[dict[str, object]] = {
    "turn_id": "",
    "iteration": 0,
    "session_id": "",
    "model": "",
    "provider": "",
    "surface": "cli",
    "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
}

_STREAM_COMMON: Final = """
    :param turn_id: the turn streaming; ``""`` when unknown.
    :param iteration: the model call of the turn (1 for the first).
    :param session_id: the current session.
    :param model: the model identifier.
    :param provider: the model's provider (``model.provider``).
    :param surface: where the stream is shown: ``"cli"``, ``"gateway"`` or a platform name.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped, and the stream
    goes on. Delivered off the token path: the host puts each event on a bounded queue per
    implementation, with one worker each, so a slow implementation never delays the tokens; when
    its queue is full its own oldest event is dropped. Not bounded by the callback timeout.
"""


@hookspec
@contract(Mode.OBSERVE, timeout=False, defaults=_STREAM_DEFAULTS)
def on_stream_start(
    turn_id: str,
    iteration: int,
    session_id: str,
    model: str,
    provider: str,
    surface: str,
    telemetry_schema_version: str,
) -> None:
    """Fires when a streaming model response begins, before its first delta."""


on_stream_start.__doc__ = (on_stream_start.__doc__ or "") + "\n" + _STREAM_COMMON


@hookspec
@contract(Mode.OBSERVE, timeout=False, defaults=_STREAM_DEFAULTS)
def on_stream_delta(
    delta: str,
    kind: Literal["text", "reasoning"],
    turn_id: str,
    iteration: int,
    session_id: str,
    model: str,
    provider: str,
    surface: str,
    telemetry_schema_version: str,
) -> None:
    """Fires for each piece of text a streaming response brings, in order.

    :param delta: the new text (raw model output).
    :param kind: ``"text"``, or ``"reasoning"`` when ``plugins.stream_reasoning_deltas`` is on.
    """


on_stream_delta.__doc__ = (on_stream_delta.__doc__ or "") + _STREAM_COMMON


@hookspec
@contract(Mode.OBSERVE, timeout=False, defaults={**_STREAM_DEFAULTS, "error": None})
def on_stream_end(
    final_text: str,
    finished: bool,
    error: str | None,
    turn_id: str,
    iteration: int,
    session_id: str,
    model: str,
    provider: str,
    surface: str,
    telemetry_schema_version: str,
) -> None:
    """Fires when a streaming response finished or failed, after the stream closed.

    :param final_text: the whole text the stream assembled.
    :param finished: whether the stream ended normally.
    :param error: what went wrong when it did not, else ``None``.
    """


on_stream_end.__doc__ = (on_stream_end.__doc__ or "") + _STREAM_COMMON


@hookspec
@contract(Mode.OBSERVE, timeout=False, defaults={**_STREAM_DEFAULTS, "already_streamed": False})
def on_interim_message(
    text: str,
    already_streamed: bool,
    turn_id: str,
    iteration: int,
    session_id: str,
    model: str,
    provider: str,
    surface: str,
    telemetry_schema_version: str,
) -> None:
    """Fires when the model says something mid-turn (beside tool calls), before its answer.

    It fires after streaming and non-streaming responses alike.

    :param text: the interim assistant text.
    :param already_streamed: whether the person already saw it as stream deltas.
    """


on_interim_message.__doc__ = (on_interim_message.__doc__ or "") + _STREAM_COMMON


# -- model errors --------------------------------------------------------------------------------


@hookspec
@contract(
    Mode.COLLECT,
    check=is_error_classification,
    expects=(
        '{"reason": <FailoverReason name>, "retryable"?: bool, "should_compress"?: bool, '
        '"should_rotate_credential"?: bool, "should_fallback"?: bool, "message"?: str, '
        '"error_context"?: {...}}'
    ),
    defaults={
        "provider": "",
        "model": "",
        "status_code": None,
        "error_type": "",
        "error_code": None,
        "error_message": "",
        "error_body": None,
        "approx_tokens": 0,
        "context_length": None,
        "num_messages": 0,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def transform_api_error_classification(
    provider: str,
    model: str,
    status_code: int | None,
    error_type: str,
    error_code: str | None,
    error_message: str,
    error_body: Any,
    error: Any,
    approx_tokens: int,
    context_length: int | None,
    num_messages: int,
    telemetry_schema_version: str,
) -> dict[str, Any] | None:
    """Fires once per failed model request, before the host classifies it for retry and failover.

    :param provider: the model's provider.
    :param model: the model identifier.
    :param status_code: the HTTP status, when there was one.
    :param error_type: the exception's class name.
    :param error_code: the provider's error code, when it sent one.
    :param error_message: the error's text (may be unredacted provider or user data).
    :param error_body: the provider's error body, when there was one (may be unredacted).
    :param error: the exception itself.
    :param approx_tokens: the request's size in tokens, roughly (characters / 4).
    :param context_length: the model's context window, when known.
    :param num_messages: how many messages the request sent.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ``None`` to leave the classification to the host, or a dict naming a
        ``reason`` (a FailoverReason name: ``rate_limit``, ``context_overflow``, ``auth``...)
        with optional ``retryable``, ``should_compress``, ``should_rotate_credential``,
        ``should_fallback`` (bools), ``message`` and ``error_context``. Every implementation
        runs, then the first fitting answer wins (run all, then pick the first); the host's
        retry decision follows its ``retryable``.

    Error policy: open; a raising implementation is skipped and the host classifies the error.
    """


# -- skills --------------------------------------------------------------------------------------


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "provenance": "",
        "task_id": "",
        "session_id": "",
        "use_count": 0,
        "reused": False,
        "reuse_after_patch": False,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def on_skill_lifecycle(
    action: str,
    skill_name: str,
    provenance: str,
    task_id: str,
    session_id: str,
    use_count: int,
    reused: bool,
    reuse_after_patch: bool,
    telemetry_schema_version: str,
) -> None:
    """Fires after a skill's usage state changed: loaded, created, patched, archived, restored...

    :param action: what happened: ``"loaded"``, ``"created"``, ``"patched"``, ``"installed"``,
        ``"archived"``, ``"restored"``, ``"stale"``.
    :param skill_name: the skill's local name (``plugin:skill`` for a plugin's skill).
    :param provenance: where the skill comes from: ``"local"``, ``"plugin"``, ``"hub"``...
    :param task_id: the task that caused it; ``""`` when none.
    :param session_id: the session that caused it; ``""`` when none.
    :param use_count: how often the skill was used, this time included.
    :param reused: whether the skill had been used before.
    :param reuse_after_patch: whether this use is the first after a patch.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


# -- the agent loop and slash commands -----------------------------------------------------------


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "platform": "",
        "reason": "",
        "invalidation_reason": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def agent_loop_stopped(
    session_key: str,
    platform: str,
    reason: str,
    invalidation_reason: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires right after a running agent turn was interrupted (``/stop``, ``/new`` mid-turn).

    :param session_key: the session whose turn stopped.
    :param platform: where the session runs.
    :param reason: why: ``"stop"``, ``"new"``, ``"interrupt"``...
    :param invalidation_reason: why the session was invalidated too, if it was.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    defaults={
        "surface": "cli",
        "alias_used": None,
        "args_raw": "",
        "session_key": "",
        "platform": "",
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def pre_command(
    surface: Literal["cli", "gateway"],
    command: str,
    alias_used: str | None,
    args_raw: str,
    session_key: str,
    platform: str,
    telemetry_schema_version: str,
) -> None:
    """Fires before a recognized slash command's handler runs, on the CLI and the gateway.

    :param surface: ``"cli"`` or ``"gateway"``.
    :param command: the command's canonical name, without the slash.
    :param alias_used: the alias typed, when it was not the canonical name; else ``None``.
    :param args_raw: what followed the command (may hold user content or secrets).
    :param session_key: the session the command runs in.
    :param platform: where the session runs.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored (in Hermes' v1 of this hook, a directive is logged, not obeyed).

    Error policy: open; a raising implementation is logged, counted and skipped, and the
    command runs.
    """


# -- transcription -------------------------------------------------------------------------------


@hookspec
@contract(
    Mode.COLLECT,
    check=is_transcription_override,
    expects='{"prompt"?: str, "language"?: str, "model"?: str}',
    defaults={
        "provider": "",
        "model": None,
        "language": None,
        "prompt": None,
        "source": "",
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def pre_transcription(
    file_path: str,
    provider: str,
    model: str | None,
    language: str | None,
    prompt: str | None,
    source: str,
    telemetry_schema_version: str,
) -> dict[str, str] | None:
    """Fires after the transcription provider is chosen and before it runs.

    :param file_path: the audio file (read-only: an answer cannot change it).
    :param provider: the transcription provider chosen (``stt.provider``).
    :param model: the model the provider will use, if set.
    :param language: the language hint, if set.
    :param prompt: the prompt sent with the audio, if set.
    :param source: what asked for the transcription: ``"tool"``, ``"gateway"``, ``"cli"``.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ``None``, or a dict changing ``prompt``, ``language`` and ``model``; answers are
        applied in the order the implementations ran, a later one winning per field.

    Error policy: open; a raising implementation is skipped and the transcription runs with
    what the others answered.
    """


# -- group chat ----------------------------------------------------------------------------------


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "thread_id": "",
        "member_id": "",
        "turn_id": "",
        "task_id": "",
        "execution_generation": 0,
        "seq": 0,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def on_room_member_activity(
    room_id: str,
    thread_id: str,
    member_id: str,
    turn_id: str,
    task_id: str,
    execution_generation: int,
    kind: str,
    seq: int,
    payload: dict[str, Any],
    telemetry_schema_version: str,
) -> None:
    """Fires per runtime event of a hosted group-chat member's turn (tool started, delta...).

    :param room_id: the room.
    :param thread_id: the thread in the room; ``""`` for the main one.
    :param member_id: the member whose session emitted the event.
    :param turn_id: the member's turn.
    :param task_id: the member's task.
    :param execution_generation: which run of the member this is (it grows on restarts).
    :param kind: the event: ``"tool.started"``, ``"tool.completed"``, ``"message.delta"``...
    :param seq: the event's number in the member's stream.
    :param payload: the client-safe event body (approval commands redacted).
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped. Delivered off
    the token path, on the same bounded queues as the stream hooks.
    """


# -- the gateway and the verify gate --------------------------------------------------------------


@hookspec(firstresult=True)
@contract(
    Mode.FIRST_RESULT,
    check=is_gateway_decision,
    expects='{"action": "skip", "reason"?: str}, {"action": "rewrite", "text": str} '
    'or {"action": "allow"}',
    timeout=False,
    defaults={
        "gateway": None,
        "session_store": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def pre_gateway_dispatch(
    event: Any,
    gateway: Any,
    session_store: Any,
    telemetry_schema_version: str,
) -> dict[str, str] | None:
    """Fires once per incoming non-internal gateway message, before auth, pairing and dispatch.

    The three arguments are the host's own live objects, so their types belong to the host.

    :param event: the normalized inbound message (``.text``, ``.source``, ``.message_id``, ...).
    :param gateway: the running gateway, e.g. to send a side-channel reply through its adapters.
    :param session_store: the session store, e.g. to ingest the message into a transcript.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ``{"action": "skip", "reason": str}`` to drop the message,
        ``{"action": "rewrite", "text": str}`` to replace its text and dispatch it, or
        ``{"action": "allow"}`` / ``None`` for normal dispatch; the first fitting one wins.

    Error policy: open; a raising implementation is skipped and the message is dispatched
    normally. Not bounded by the callback timeout.
    """


@hookspec(firstresult=True)
@contract(
    Mode.FIRST_RESULT,
    check=is_verify_decision,
    expects='{"action": "continue", "message"?: str} or {"decision": "block", "reason"?: str}',
    defaults={
        "session_id": "",
        "platform": "",
        "model": "",
        "coding": True,
        "attempt": 0,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def pre_verify(
    session_id: str,
    platform: str,
    model: str,
    coding: bool,
    attempt: int,
    final_response: str,
    changed_paths: list[str],
    telemetry_schema_version: str,
) -> dict[str, str] | None:
    """Fires once per turn that edited code, when the agent is about to deliver its answer.

    :param session_id: the current session.
    :param platform: where the session runs.
    :param model: the model identifier.
    :param coding: whether the turn is in the coding posture (in a code workspace).
    :param attempt: how often this turn was already sent back (0 the first time).
    :param final_response: the answer the agent is about to deliver.
    :param changed_paths: the files edited this turn, sorted and never empty.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ``{"action": "continue", "message": str}`` (or the Claude Code Stop form
        ``{"decision": "block", "reason": str}``) to keep the agent working with the message as
        a new user turn; ``None`` lets the turn finish. The first fitting one wins, and the
        number of continuations per turn is capped by the host.

    Error policy: open; a raising implementation is skipped and the turn finishes normally.
    """


# -- approvals -----------------------------------------------------------------------------------


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "description": "",
        "pattern_key": "",
        "pattern_keys": [],
        "session_key": "",
        "surface": "cli",
        "turn_id": "",
        "tool_call_id": "",
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def pre_approval_request(
    command: str,
    description: str,
    pattern_key: str,
    pattern_keys: list[str],
    session_key: str,
    surface: str,
    turn_id: str,
    tool_call_id: str,
    telemetry_schema_version: str,
) -> None:
    """Fires before a dangerous command is put to a person or to the smart-approval model.

    :param command: the command or script being assessed (redacted on gateway and smart paths).
    :param description: why the command was flagged, all matching reasons combined.
    :param pattern_key: the primary pattern that matched, e.g. ``"rm_rf"``.
    :param pattern_keys: every pattern that matched.
    :param session_key: the session asking, useful to scope notifications per chat.
    :param surface: ``"cli"``, ``"gateway"`` or ``"smart"``.
    :param turn_id: the current turn; ``""`` when unknown.
    :param tool_call_id: the tool call that needs approval; ``""`` when unknown.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored; this hook cannot veto or pre-answer (use ``pre_tool_call``).

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "description": "",
        "pattern_key": "",
        "pattern_keys": [],
        "session_key": "",
        "surface": "cli",
        "turn_id": "",
        "tool_call_id": "",
        "decided_by": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def post_approval_response(
    command: str,
    description: str,
    pattern_key: str,
    pattern_keys: list[str],
    session_key: str,
    surface: str,
    turn_id: str,
    tool_call_id: str,
    choice: str,
    decided_by: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires after an approval was decided, timed out or withdrawn, or could not be delivered.

    :param command: the command or script that was assessed.
    :param description: why the command was flagged.
    :param pattern_key: the primary pattern that matched.
    :param pattern_keys: every pattern that matched.
    :param session_key: the session that asked.
    :param surface: ``"cli"``, ``"gateway"`` or ``"smart"``.
    :param turn_id: the current turn; ``""`` when unknown.
    :param tool_call_id: the tool call that needed approval; ``""`` when unknown.
    :param choice: ``"once"``, ``"session"``, ``"always"``, ``"deny"``, ``"timeout"``,
        ``"cancelled"``, ``"notify_failed"``, ``"smart_approve"`` or ``"smart_deny"``.
    :param decided_by: ``"aux_llm"`` for smart decisions; ``None`` on prompted surfaces.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


# -- the kanban board ----------------------------------------------------------------------------


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "profile_name": "default",
        "board": None,
        "assignee": None,
        "run_id": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def kanban_task_claimed(
    task_id: str,
    profile_name: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    telemetry_schema_version: str,
) -> None:
    """Fires in the dispatcher after a task's claim is committed, right before its worker starts.

    :param task_id: the claimed task.
    :param profile_name: the active profile; ``"default"`` when it cannot be resolved.
    :param board: the board the task is on; ``None`` for the default board.
    :param assignee: who the task is assigned to, if anyone.
    :param run_id: the run started by this claim, if known.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "profile_name": "default",
        "board": None,
        "assignee": None,
        "run_id": None,
        "summary": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def kanban_task_completed(
    task_id: str,
    profile_name: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    summary: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires after a task's completion is committed, usually in the worker process.

    :param task_id: the completed task.
    :param profile_name: the active profile; ``"default"`` when it cannot be resolved.
    :param board: the board the task is on; ``None`` for the default board.
    :param assignee: who the task is assigned to, if anyone.
    :param run_id: the run that completed it, if known.
    :param summary: the worker's summary (may hold project or user content), if any.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "profile_name": "default",
        "board": None,
        "assignee": None,
        "run_id": None,
        "reason": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def kanban_task_blocked(
    task_id: str,
    profile_name: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    reason: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires after a task moves to blocked, usually in the worker process.

    :param task_id: the blocked task.
    :param profile_name: the active profile; ``"default"`` when it cannot be resolved.
    :param board: the board the task is on; ``None`` for the default board.
    :param assignee: who the task is assigned to, if anyone.
    :param run_id: the run that blocked it, if known.
    :param reason: why the task is blocked (may hold project or user content), if given.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


_KANBAN_DEFAULTS: Final[dict[str, object]] = {
    "profile_name": "default",
    "board": None,
    "assignee": None,
    "run_id": None,
    "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
}

_KANBAN_COMMON: Final = """
    :param task_id: the task.
    :param profile_name: the active profile; ``"default"`` when it cannot be resolved.
    :param board: the board the task is on; ``None`` for the default board.
    :param assignee: who the task is assigned to, if anyone.
    :param run_id: the task's current run, if known.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped. Fired after the
    board's write is committed, never inside it.
"""


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={**_KANBAN_DEFAULTS, "worker_pid": None, "workspace_path": None},
)
def on_kanban_worker_spawned(
    task_id: str,
    profile_name: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    worker_pid: int | None,
    workspace_path: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires in the dispatcher after a task's worker started and its pid was stored.

    :param worker_pid: the worker's process id.
    :param workspace_path: the worker's folder (may reveal project layout or user names).
    """


on_kanban_worker_spawned.__doc__ = (on_kanban_worker_spawned.__doc__ or "") + _KANBAN_COMMON


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        **_KANBAN_DEFAULTS,
        "worker_pid": None,
        "exit_kind": "unknown",
        "exit_code": None,
        "outcome": None,
        "retry_status": None,
    },
)
def on_kanban_worker_exited(
    task_id: str,
    profile_name: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    worker_pid: int | None,
    exit_kind: str,
    exit_code: int | None,
    outcome: str | None,
    retry_status: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires after the dispatcher found a task's worker dead and reclaimed the task.

    :param worker_pid: the dead worker's process id.
    :param exit_kind: ``"clean_exit"``, ``"rate_limited"``, ``"nonzero_exit"``, ``"signaled"``
        or ``"unknown"``.
    :param exit_code: the worker's exit code, when known.
    :param outcome: what the reclaim did with the task (``"requeued"``, ``"blocked"``...).
    :param retry_status: whether the task will be retried, and how.
    """


on_kanban_worker_exited.__doc__ = (on_kanban_worker_exited.__doc__ or "") + _KANBAN_COMMON


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        **_KANBAN_DEFAULTS,
        "worker_pid": None,
        "heartbeat_stale": True,
        "retry_status": None,
    },
)
def on_kanban_worker_stale_claim(
    task_id: str,
    profile_name: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    worker_pid: int | None,
    heartbeat_stale: bool,
    retry_status: str | None,
    telemetry_schema_version: str,
) -> None:
    """Fires after a claim whose time ran out was reclaimed (a live worker extending it does not).

    :param worker_pid: the claiming worker's process id, if known.
    :param heartbeat_stale: whether the worker's heartbeat had stopped too.
    :param retry_status: whether the task will be retried, and how.
    """


on_kanban_worker_stale_claim.__doc__ = (on_kanban_worker_stale_claim.__doc__ or "") + _KANBAN_COMMON


@hookspec
@contract(Mode.OBSERVE, timeout=False, defaults={**_KANBAN_DEFAULTS, "changed_fields": []})
def on_kanban_task_updated(
    task_id: str,
    profile_name: str,
    board: str | None,
    assignee: str | None,
    run_id: int | None,
    changed_fields: list[str],
    telemetry_schema_version: str,
) -> None:
    """Fires after a committed write of a task outside claim, complete and block (edits, assign).

    :param changed_fields: the names of the fields written, never their values.
    """


on_kanban_task_updated.__doc__ = (on_kanban_task_updated.__doc__ or "") + _KANBAN_COMMON


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "board": None,
        "profile_name": "default",
        "dry_run": False,
        "outcome": "ok",
        "result": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def on_kanban_dispatch_tick(
    board: str | None,
    profile_name: str,
    dry_run: bool,
    outcome: Literal["ok", "skipped_locked", "idle"],
    result: Any,
    telemetry_schema_version: str,
) -> None:
    """Fires once per dispatcher tick, after the board's dispatch lock was released.

    :param board: the board ticked; ``None`` for the default board.
    :param profile_name: the active profile; ``"default"`` when it cannot be resolved.
    :param dry_run: whether the tick only looked.
    :param outcome: ``"ok"``, ``"skipped_locked"`` (another dispatcher held the lock) or
        ``"idle"`` (nothing to do).
    :param result: what the tick did (tasks spawned, reclaimed, blocked...; holds task ids,
        assignees and workspace paths).
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


# -- gateway platform events (also added by the gateway's branch: keep one at merge) --------------


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={"telemetry_schema_version": TELEMETRY_SCHEMA_VERSION},
)
def gateway_platform_event(
    platform: str,
    event_type: str,
    payload: dict[str, Any],
    telemetry_schema_version: str,
) -> None:
    """Fires when the gateway normalized a platform-native event (a reaction, an edit...).

    Only after the gateway's authorization of the sender succeeded; the payload is a plain dict,
    never a raw SDK object or an adapter handle.

    :param platform: the platform, e.g. ``"telegram"`` or ``"discord"``.
    :param event_type: ``"reaction"``, ``"message_edited"``, ``"message_deleted"``,
        ``"thread_created"``, ``"thread_renamed"``...
    :param payload: the event's fields, whose shape depends on ``event_type``.
    :param telemetry_schema_version: the schema of the payload, ``"hermes.observer.v1"`` (Hermes'
        observer contract), so a plugin can tell which payload shape it receives.
    :returns: ignored.

    Error policy: open; a raising implementation is logged, counted and skipped.
    """


HOOK_NAMES: Final[tuple[str, ...]] = (
    "pre_tool_call",
    "post_tool_call",
    "transform_tool_result",
    "transform_terminal_output",
    "transform_llm_output",
    "pre_llm_call",
    "post_llm_call",
    "pre_api_request",
    "post_api_request",
    "api_request_error",
    "on_session_start",
    "on_session_end",
    "on_session_finalize",
    "on_session_reset",
    "subagent_start",
    "subagent_stop",
    "pre_gateway_dispatch",
    "pre_verify",
    "pre_approval_request",
    "post_approval_response",
    "kanban_task_claimed",
    "kanban_task_completed",
    "kanban_task_blocked",
    "on_stream_start",
    "on_stream_delta",
    "on_stream_end",
    "on_interim_message",
    "transform_api_error_classification",
    "on_skill_lifecycle",
    "agent_loop_stopped",
    "pre_command",
    "pre_transcription",
    "on_room_member_activity",
    "on_kanban_worker_spawned",
    "on_kanban_worker_exited",
    "on_kanban_worker_stale_claim",
    "on_kanban_task_updated",
    "on_kanban_dispatch_tick",
    "gateway_platform_event",
)
"""Every hook this module declares, in declaration order."""

VALID_HOOKS: Final[frozenset[str]] = frozenset(HOOK_NAMES)
"""The same names as a set, under the name Hermes uses (``hermes_cli.plugins.VALID_HOOKS``)."""

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
    """Fires once immediately before every tool call runs, built-in and plugin tools alike. If the
    model calls three tools in parallel, it fires three times.

    :param tool_name: The tool about to run, e.g. `"terminal"` or `"read_file"`.
    :param args: The arguments the model passed to the tool, after type coercion.
    :param task_id: The task the call belongs to; `""` when unset.
    :param session_id: The current session; `""` when unset.
    :param tool_call_id: The model's id for this tool call; `""` when unset.
    :param turn_id: The current turn; `""` when unset.
    :param api_request_id: The API request that produced the call; `""` when unset.
    :param middleware_trace: What the tool-request middleware did to the arguments, in order.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: `None` to stay out of it, or one decision:

        - `{"action": "block", "message": str}` vetoes the call; the message becomes the tool
          result;
        - `{"action": "approve", "message"?: str, "rule_key"?: str}` sends the call to the
          human-approval gate (a denial, a timeout or a gate error blocks it);
        - `{"action": "modify", "args": {...}}` merges new arguments over the old ones before
          the tool runs;
        - the legacy `{"blocked": True, "reason": str}` is a block.

        Decisions combine as **block > approve > modify**, whatever the order of the
        implementations. Several `modify` results merge key by key; on a conflicting key the
        implementation that runs first wins and the conflict is reported. The typed facade returns
        one decision object; a raw `pm.hook.pre_tool_call(...)` returns the list of results, as
        pluggy does.

    Error policy: Closed: an implementation that raises or exceeds the callback timeout becomes a
    block whose message names the plugin, so a broken guard never lets a call through unvetted.

    ```python
    from hermes_hooks import hookimpl

    PROTECTED = ("/etc/", "/usr/")


    @hookimpl
    def pre_tool_call(tool_name, args):
        path = str(args.get("path", ""))
        if tool_name in {"write_file", "patch"} and path.startswith(PROTECTED):
            return {"action": "approve", "message": f"write to {path}", "rule_key": "system-write"}
        return None
    ```
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
    """Fires once after every tool call returns, is blocked by a `pre_tool_call` decision, or fails
    (the error then arrives as the result).

    :param tool_name: The tool that ran.
    :param args: The arguments the tool ran with.
    :param result: The tool result the model will see, usually a JSON string.
    :param task_id: The task the call belongs to; `""` when unset.
    :param session_id: The current session; `""` when unset.
    :param tool_call_id: The model's id for this tool call; `""` when unset.
    :param turn_id: The current turn; `""` when unset.
    :param api_request_id: The API request that produced the call; `""` when unset.
    :param duration_ms: How long the tool's dispatch took, in milliseconds; 0 when blocked.
    :param status: `"error"` when the result carries an error, `"blocked"` when a `pre_tool_call`
        decision stopped the call.
    :type status: `"ok" | "error" | "blocked"`
    :param error_type: E.g. `"tool_error"` or `"plugin_block"`; `None` when ok.
    :type error_type: `str | None`
    :param error_message: The error or block message; `None` when ok.
    :type error_message: `str | None`
    :param middleware_trace: What the tool-request middleware did to the arguments, in order.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped.

    ```python
    from collections import Counter

    from hermes_hooks import hookimpl

    failures = Counter()


    @hookimpl
    def post_tool_call(tool_name, status):
        if status != "ok":
            failures[tool_name] += 1
    ```
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
    """Fires after `post_tool_call` and before the tool result is appended to the conversation, for
    every tool, so a plugin can rewrite what the model sees.

    :param tool_name: The tool that ran.
    :param args: The arguments the tool ran with.
    :param result: The final result string from tool dispatch.
    :param task_id: The task the call belongs to; `""` when unset.
    :param session_id: The current session; `""` when unset.
    :param tool_call_id: The model's id for this tool call; `""` when unset.
    :param turn_id: The current turn; `""` when unset.
    :param api_request_id: The API request that produced the call; `""` when unset.
    :param duration_ms: How long the tool's dispatch took, in milliseconds.
    :param status: Derived from the result.
    :type status: `"ok" | "error"`
    :param error_type: `"tool_error"` when the result carries an error, else `None`.
    :type error_type: `str | None`
    :param error_message: The error text from the result, else `None`.
    :type error_message: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: A `str` that replaces the result (an empty string counts); the first fitting one wins.
        `None` keeps the result.

    Error policy: Open: a raising implementation is skipped and the result stays unchanged.

    ```python
    import re

    from hermes_hooks import hookimpl

    SECRET = re.compile(r"sk-[A-Za-z0-9]{32,}")


    @hookimpl
    def transform_tool_result(result):
        return SECRET.sub("[REDACTED]", result) if SECRET.search(result) else None
    ```
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
    """Fires when the terminal tool has captured a foreground command's output, and when background
    process output (poll, wait, log, completion notices) is on its way to the model. It runs before
    `transform_tool_result` and before secret redaction.

    :param command: The shell command that produced the output.
    :param output: Combined stdout and stderr after bounded capture.
    :param returncode: The exit code; `None` while a background process still runs.
    :type returncode: `int | None`
    :param task_id: The effective task; `""` when unset.
    :param env_type: The execution environment type; `""` for background processes.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: A `str` that replaces the output; the first fitting one wins and the terminal tool's
        final output limit still applies. `None` keeps the output.

    Error policy: Open: a raising implementation is skipped and the output stays unchanged.

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def transform_terminal_output(command, output):
        if command.startswith("find ") and len(output) > 50_000:
            head = "\\n".join(output.splitlines()[:40])
            return f"{head}\\n[{output.count(chr(10))} paths in total, first 40 shown]"
        return None
    ```
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
    """Fires once per turn on the final response, after the tool loop and before the response is
    stored and delivered, so the stored transcript is what the user saw. It does not fire on
    interrupted or empty turns.

    :param response_text: The assistant's final response text for this turn.
    :param session_id: The current session; `""` for one-shot runs.
    :param model: The model that produced the response.
    :param platform: Where the session runs (`"cli"`, `"telegram"`, ...); `""` when unset.
    :param turn_id: The current turn.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: A non-empty `str` that replaces the response; the first fitting one wins. `None` or an
        empty string keeps the response.

    Error policy: Open: a raising implementation is skipped and the response stays unchanged.

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def transform_llm_output(response_text, platform):
        if platform == "telegram":
            return response_text.replace("**", "*")
        return None
    ```
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
    """Fires once per turn, after context compression and before the tool-calling loop starts (not
    once per API call).

    :param session_id: The current session.
    :param task_id: The task of this turn.
    :param turn_id: The current turn.
    :param user_message: The user's message before any injection; a list of content parts on a
        multimodal turn.
    :type user_message: `str | list[dict[str, Any]]`
    :param conversation_history: A copy of the whole message list, OpenAI format.
    :param is_first_turn: Whether this is the first turn of a new session.
    :param model: The model identifier, e.g. `"anthropic/claude-sonnet-4.6"`.
    :param platform: Where the session runs; `""` when unset.
    :param parent_session_id: The delegating session for a subagent; `""` otherwise.
    :param sender_id: The id of the user who sent the message; `""` when unknown.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: A `str` or `{"context": str}` to add context to this turn. Every fitting return is
        collected, joined with blank lines and appended to the current user message, never to the
        system prompt, so the prompt cache survives. `None` adds nothing.

    Error policy: Open: a raising implementation is skipped and contributes no context.

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def pre_llm_call(is_first_turn):
        if is_first_turn:
            return {"context": "The user prefers short answers."}
        return None
    ```
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
    """Fires once per successful turn, after the tool loop produced a final response. It does not
    fire on interrupted turns or when the iteration limit ends a turn without a response.

    :param session_id: The current session.
    :param task_id: The task of this turn.
    :param turn_id: The current turn.
    :param user_message: The user's original message for this turn.
    :type user_message: `str | list[dict[str, Any]]`
    :param assistant_response: The final response, after `transform_llm_output`.
    :param conversation_history: A copy of the whole message list after the turn.
    :param model: The model identifier.
    :param platform: Where the session runs; `""` when unset.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped.

    ```python
    import logging

    from hermes_hooks import hookimpl

    log = logging.getLogger(__name__)


    @hookimpl
    def post_llm_call(session_id, assistant_response, model):
        log.info("session=%s model=%s chars=%d", session_id, model, len(assistant_response))
    ```
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
    """Fires for every provider attempt (retries and fallbacks included), immediately before it is
    sent. `user_message`, `conversation_history` and `request_messages` are raw and unsanitized for
    compatibility; new plugins should read the sanitized `request`.

    :param task_id: The task of this turn.
    :param turn_id: The current turn.
    :param api_request_id: The id shared by every attempt of one logical request.
    :param session_id: The current session.
    :param user_message: The user's message for this turn (raw).
    :type user_message: `str | list[dict[str, Any]]`
    :param conversation_history: The message list (raw).
    :param platform: Where the session runs.
    :param model: The model identifier.
    :param provider: The provider name, e.g. `"openrouter"`.
    :param base_url: The endpoint base URL.
    :param api_mode: The wire protocol, e.g. `"chat_completions"`.
    :param api_call_count: Which API call of the turn this is, from 1.
    :param retry_count: Which retry of this request this is, from 0.
    :param request_messages: The messages sent on the wire (raw).
    :param message_count: How many messages are sent.
    :param tool_count: How many tool schemas are sent.
    :param approx_input_tokens: A rough estimate of the input tokens.
    :param request_char_count: The size of the request in characters.
    :param max_tokens: The output-token cap, or `None` for the provider default.
    :type max_tokens: `int | None`
    :param started_at: When the attempt started (`time.time()`).
    :param middleware_trace: What the request middleware did, in order.
    :param request: The sanitized request envelope `{"method", "body"}`.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped.

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def pre_api_request(model, approx_input_tokens, retry_count):
        if retry_count:
            print(f"retry {retry_count} of a ~{approx_input_tokens}-token request to {model}")
    ```
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

    :param task_id: The task of this turn.
    :param turn_id: The current turn.
    :param api_request_id: The id shared by every attempt of one logical request.
    :param session_id: The current session.
    :param platform: Where the session runs.
    :param model: The requested model identifier.
    :param provider: The provider name.
    :param base_url: The endpoint base URL.
    :param api_mode: The wire protocol.
    :param api_call_count: Which API call of the turn this is, from 1.
    :param api_duration: How long the attempt took, in seconds.
    :param started_at: When the attempt started (`time.time()`).
    :param ended_at: When the attempt ended (`time.time()`).
    :param first_chunk_at: When the first stream event arrived; `None` when not streamed.
    :type first_chunk_at: `float | None`
    :param first_delta_at: When the first text delta arrived; `None` when not streamed.
    :type first_delta_at: `float | None`
    :param finish_reason: The provider's finish reason, e.g. `"stop"` or `"tool_calls"`.
    :type finish_reason: `str | None`
    :param message_count: How many messages were sent.
    :param response_model: The model the provider reports having served.
    :type response_model: `str | None`
    :param response: The sanitized response envelope; prefer it.
    :param usage: The normalized token usage; `None` when the provider reported none.
    :type usage: `dict[str, Any] | None`
    :param assistant_message: The raw normalized assistant message; may hold user content.
    :param assistant_content_chars: The length of the assistant text.
    :param assistant_tool_call_count: How many tool calls the response asks for.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped.

    ```python
    from collections import Counter

    from hermes_hooks import hookimpl

    tokens = Counter()


    @hookimpl
    def post_api_request(model, usage):
        if usage:
            tokens[model] += usage.get("total_tokens", 0)
    ```
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
    """Fires for every failed provider attempt, with its timing, status and retry state.

    :param task_id: The task of this turn.
    :param turn_id: The current turn.
    :param api_request_id: The id shared by every attempt of one logical request.
    :param session_id: The current session.
    :param platform: Where the session runs.
    :param model: The requested model identifier.
    :param provider: The provider name.
    :param base_url: The endpoint base URL.
    :param api_mode: The wire protocol.
    :param api_call_count: Which API call of the turn this is, from 1.
    :param api_duration: How long the attempt took before failing, in seconds.
    :param started_at: When the attempt started (`time.time()`).
    :param ended_at: When the attempt failed (`time.time()`).
    :param first_chunk_at: When the first stream event arrived; `None` if none did.
    :type first_chunk_at: `float | None`
    :param first_delta_at: When the first text delta arrived; `None` if none did.
    :type first_delta_at: `float | None`
    :param status_code: The HTTP status, when there was one.
    :type status_code: `int | None`
    :param retry_count: Which retry this was, when known.
    :type retry_count: `int | None`
    :param max_retries: How many retries are allowed, when known.
    :type max_retries: `int | None`
    :param retryable: Whether the failure will be retried, when known.
    :type retryable: `bool | None`
    :param reason: The classified failure reason, e.g. `"rate_limit"`, when known.
    :type reason: `str | None`
    :param error: `{"type": str, "message": str}`; the message may hold provider data.
    :param request: The sanitized request envelope `{"method", "body"}`.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped.

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def api_request_error(provider, status_code, retryable, error):
        if status_code == 429 and not retryable:
            print(f"{provider} is rate limiting us: {error['message']}")
    ```
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
    """Fires once on the first turn of a brand-new session, after the system prompt is built and
    before the tool loop starts. It does not fire when an existing session continues.

    :param session_id: The new session.
    :param model: The model identifier.
    :param platform: Where the session runs.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped.

    ```python
    import time

    from hermes_hooks import hookimpl

    started = {}


    @hookimpl
    def on_session_start(session_id):
        started[session_id] = time.monotonic()
    ```
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
    """Fires at the very end of every turn, whatever its outcome, and from a CLI's exit handler when
    the user quits mid-turn (then `completed` is false and `interrupted` true, and some fields may
    be missing from that reduced payload).

    :param session_id: The session.
    :param task_id: The task of the turn.
    :param turn_id: The turn that ended.
    :param completed: Whether the agent produced a final response.
    :param failed: Whether the turn failed.
    :param interrupted: Whether the turn was interrupted (new message, `/stop`, quit).
    :param turn_exit_reason: Why the loop ended, e.g. `"text_response(stop)"`.
    :param model: The model identifier.
    :param platform: Where the session runs.
    :param reason: Why an exit path ended the turn (CLI and TUI exits only), else `None`.
    :type reason: `str | None`
    :param api_request_id: The request in flight when an exit path fired, else `None`.
    :type api_request_id: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped.

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def on_session_end(session_id, completed, interrupted):
        outcome = "completed" if completed else ("interrupted" if interrupted else "failed")
        print(f"turn in {session_id} {outcome}")
    ```
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
    """Fires when the CLI, the TUI or the gateway tears down an active session, e.g. on `/new`, when
    the CLI quits with an active agent, or on gateway shutdown. Use it to flush state tied to the
    outgoing session id. On a gateway reset the replacement session already exists.

    :param session_id: The outgoing session; `None` when no session was active.
    :type session_id: `str | None`
    :param platform: `"cli"`, `"tui"` or the messaging platform name.
    :param reason: Why the session was torn down, when the surface says.
    :type reason: `str | None`
    :param old_session_id: The outgoing session on a gateway reset, else `None`.
    :type old_session_id: `str | None`
    :param new_session_id: The replacement session on a gateway reset, else `None`.
    :type new_session_id: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout: this is the last chance to flush state, and abandoning it could lose some.

    ```python
    from hermes_hooks import hookimpl

    buffers = {}


    @hookimpl
    def on_session_finalize(session_id):
        if session_id is not None:
            pending = buffers.pop(session_id, [])
            print(f"flushing {len(pending)} records for {session_id}")
    ```
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
    """Fires at a CLI or TUI session boundary, or when the gateway swaps in a new session for an
    active chat, after the replacement session exists. On a gateway reset the order is: replacement
    created, `on_session_finalize` for the old session, `on_session_reset` for the new one, then
    `on_session_start` on the first inbound turn.

    :param session_id: The new session, already rotated; `None` if none could be made.
    :type session_id: `str | None`
    :param platform: `"cli"`, `"tui"` or the messaging platform name.
    :param reason: Why the session was reset (CLI and gateway), else `None`.
    :type reason: `str | None`
    :param old_session_id: The outgoing session (gateway only), else `None`.
    :type old_session_id: `str | None`
    :param new_session_id: The replacement session (gateway only), else `None`.
    :type new_session_id: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout.

    ```python
    from hermes_hooks import hookimpl

    caches = {}


    @hookimpl
    def on_session_reset(old_session_id, session_id):
        caches.pop(old_session_id, None)
        caches[session_id] = {}
    ```
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
    """Fires once per child agent, after `delegate_task` has built the child and before it runs; a
    batch of three tasks fires it three times. It is an observer only: to stop a delegation, block
    the `delegate_task` tool in `pre_tool_call`.

    :param parent_session_id: The delegating agent's session.
    :type parent_session_id: `str | None`
    :param parent_turn_id: The parent turn that asked for the delegation; `""` when unknown.
    :param parent_subagent_id: The parent's own subagent id when it is itself a subagent, else
        `None`.
    :type parent_subagent_id: `str | None`
    :param child_session_id: The session allocated for the child.
    :type child_session_id: `str | None`
    :param child_subagent_id: The child's stable subagent id.
    :param child_role: The child's effective role, `"leaf"` or `"orchestrator"`.
    :param child_goal: The goal the child will work on; may hold user content.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored; returning a value cannot stop or change the child.

    Error policy: Open: a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout.

    ```python
    from hermes_hooks import hookimpl

    tree = {}


    @hookimpl
    def subagent_start(parent_session_id, child_session_id, child_role):
        tree.setdefault(parent_session_id, []).append((child_session_id, child_role))
    ```
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
    """Fires once per child agent after `delegate_task` finishes, serialised on the parent's thread
    once all children are done, so a callback never runs concurrently with itself for one
    delegation.

    :param parent_session_id: The delegating agent's session.
    :type parent_session_id: `str | None`
    :param parent_turn_id: The parent turn that asked for the delegation; `""` when unknown.
    :param child_session_id: The child's session.
    :type child_session_id: `str | None`
    :param child_role: The child's role; `None` when roles are not enabled.
    :type child_role: `str | None`
    :param child_summary: The final response the child returned, if any.
    :type child_summary: `str | None`
    :param child_status: `"completed"`, `"failed"`, `"interrupted"`, `"timeout"` or `"error"`.
    :param tool_call_history: The child's tool calls in order, metadata only: `tool_name`, bounded
        `tool_input`, `input_bytes`, `output_bytes`, `status`.
    :param duration_ms: Wall-clock time the child ran, in milliseconds.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped. It runs on the
    caller's thread, never on a timeout worker, so it is not bounded by the callback timeout.

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def subagent_stop(parent_session_id, child_role, child_status, duration_ms):
        print(f"{parent_session_id}: {child_role} {child_status} in {duration_ms} ms")
    ```
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
    """Fires when a streaming model response begins, before its first delta.

    :param turn_id: The turn streaming; `""` when unknown.
    :param iteration: The model call of the turn (1 for the first).
    :param session_id: The current session.
    :param model: The model identifier.
    :param provider: The model's provider (`model.provider`).
    :param surface: Where the stream is shown: `"cli"`, `"gateway"` or a platform name.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped, and the stream goes
    on. Delivered off the token path: the host puts each event on a bounded queue per
    implementation, with one worker each, so a slow implementation never delays the tokens; when its
    queue is full its own oldest event is dropped. Not bounded by the callback timeout.

    ```python
    def observe(**kwargs):
        print("on_stream_start", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_stream_start", observe)
    ```
    """


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

    :param delta: The new text (raw model output).
    :param kind: `"text"`, or `"reasoning"` when `plugins.stream_reasoning_deltas` is on.
    :type kind: `Literal['text', 'reasoning']`
    :param turn_id: The turn streaming; `""` when unknown.
    :param iteration: The model call of the turn (1 for the first).
    :param session_id: The current session.
    :param model: The model identifier.
    :param provider: The model's provider (`model.provider`).
    :param surface: Where the stream is shown: `"cli"`, `"gateway"` or a platform name.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped, and the stream goes
    on. Delivered off the token path: the host puts each event on a bounded queue per
    implementation, with one worker each, so a slow implementation never delays the tokens; when its
    queue is full its own oldest event is dropped. Not bounded by the callback timeout.

    ```python
    def on_delta(delta, kind, **kwargs):
        if kind == "text":
            print(delta, end="", flush=True)


    def register(ctx):
        ctx.register_hook("on_stream_delta", on_delta)
    ```
    """


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

    :param final_text: The whole text the stream assembled.
    :param finished: Whether the stream ended normally.
    :param error: What went wrong when it did not, else `None`.
    :type error: `str | None`
    :param turn_id: The turn streaming; `""` when unknown.
    :param iteration: The model call of the turn (1 for the first).
    :param session_id: The current session.
    :param model: The model identifier.
    :param provider: The model's provider (`model.provider`).
    :param surface: Where the stream is shown: `"cli"`, `"gateway"` or a platform name.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped, and the stream goes
    on. Delivered off the token path: the host puts each event on a bounded queue per
    implementation, with one worker each, so a slow implementation never delays the tokens; when its
    queue is full its own oldest event is dropped. Not bounded by the callback timeout.

    ```python
    def observe(**kwargs):
        print("on_stream_end", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_stream_end", observe)
    ```
    """


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

    :param text: The interim assistant text.
    :param already_streamed: Whether the person already saw it as stream deltas.
    :param turn_id: The turn streaming; `""` when unknown.
    :param iteration: The model call of the turn (1 for the first).
    :param session_id: The current session.
    :param model: The model identifier.
    :param provider: The model's provider (`model.provider`).
    :param surface: Where the stream is shown: `"cli"`, `"gateway"` or a platform name.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped, and the stream goes
    on. Delivered off the token path: the host puts each event on a bounded queue per
    implementation, with one worker each, so a slow implementation never delays the tokens; when its
    queue is full its own oldest event is dropped. Not bounded by the callback timeout.

    ```python
    def observe(**kwargs):
        print("on_interim_message", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_interim_message", observe)
    ```
    """


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

    :param provider: The model's provider.
    :param model: The model identifier.
    :param status_code: The HTTP status, when there was one.
    :type status_code: `int | None`
    :param error_type: The exception's class name.
    :param error_code: The provider's error code, when it sent one.
    :type error_code: `str | None`
    :param error_message: The error's text (may be unredacted provider or user data).
    :param error_body: The provider's error body, when there was one (may be unredacted).
    :param error: The exception itself.
    :param approx_tokens: The request's size in tokens, roughly (characters / 4).
    :param context_length: The model's context window, when known.
    :type context_length: `int | None`
    :param num_messages: How many messages the request sent.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: `None` to leave the classification to the host, or a dict naming a `reason` (a
        FailoverReason name: `rate_limit`, `context_overflow`, `auth`...) with optional `retryable`,
        `should_compress`, `should_rotate_credential`, `should_fallback` (bools), `message` and
        `error_context`. Every implementation runs, then the first fitting answer wins (run all,
        then pick the first); the host's retry decision follows its `retryable`.

    Error policy: Open; a raising implementation is skipped and the host classifies the error.

    ```python
    def classify(status_code=None, error_message="", **kwargs):
        if status_code == 400 and "quota" in error_message:
            return {"reason": "billing", "retryable": False, "should_fallback": True}
        return None


    def register(ctx):
        ctx.register_hook("transform_api_error_classification", classify)
    ```
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

    :param action: What happened: `"loaded"`, `"created"`, `"patched"`, `"installed"`, `"archived"`,
        `"restored"`, `"stale"`.
    :param skill_name: The skill's local name (`plugin:skill` for a plugin's skill).
    :param provenance: Where the skill comes from: `"local"`, `"plugin"`, `"hub"`...
    :param task_id: The task that caused it; `""` when none.
    :param session_id: The session that caused it; `""` when none.
    :param use_count: How often the skill was used, this time included.
    :param reused: Whether the skill had been used before.
    :param reuse_after_patch: Whether this use is the first after a patch.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped.

    ```python
    def on_skill(action, skill_name, **kwargs):
        print(f"skill {skill_name}: {action}")


    def register(ctx):
        ctx.register_hook("on_skill_lifecycle", on_skill)
    ```
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

    :param session_key: The session whose turn stopped.
    :param platform: Where the session runs.
    :param reason: Why: `"stop"`, `"new"`, `"interrupt"`...
    :param invalidation_reason: Why the session was invalidated too, if it was.
    :type invalidation_reason: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped.

    ```python
    def observe(**kwargs):
        print("agent_loop_stopped", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("agent_loop_stopped", observe)
    ```
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

    :param surface: `"cli"` or `"gateway"`.
    :type surface: `Literal['cli', 'gateway']`
    :param command: The command's canonical name, without the slash.
    :param alias_used: The alias typed, when it was not the canonical name; else `None`.
    :type alias_used: `str | None`
    :param args_raw: What followed the command (may hold user content or secrets).
    :param session_key: The session the command runs in.
    :param platform: Where the session runs.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored (in Hermes' v1 of this hook, a directive is logged, not obeyed).

    Error policy: Open; a raising implementation is logged, counted and skipped, and the command
    runs.

    ```python
    def audit(command, args_raw="", surface="cli", **kwargs):
        print(f"/{command} {args_raw} on {surface}")


    def register(ctx):
        ctx.register_hook("pre_command", audit)
    ```
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

    :param file_path: The audio file (read-only: an answer cannot change it).
    :param provider: The transcription provider chosen (`stt.provider`).
    :param model: The model the provider will use, if set.
    :type model: `str | None`
    :param language: The language hint, if set.
    :type language: `str | None`
    :param prompt: The prompt sent with the audio, if set.
    :type prompt: `str | None`
    :param source: What asked for the transcription: `"tool"`, `"gateway"`, `"cli"`.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: `None`, or a dict changing `prompt`, `language` and `model`; answers are applied in
        the order the implementations ran, a later one winning per field.

    Error policy: Open; a raising implementation is skipped and the transcription runs with what the
    others answered.

    ```python
    def glossary(prompt=None, **kwargs):
        return {"prompt": ((prompt or "") + " Names: Hermes, Ada.").strip()}


    def register(ctx):
        ctx.register_hook("pre_transcription", glossary)
    ```
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

    :param room_id: The room.
    :param thread_id: The thread in the room; `""` for the main one.
    :param member_id: The member whose session emitted the event.
    :param turn_id: The member's turn.
    :param task_id: The member's task.
    :param execution_generation: Which run of the member this is (it grows on restarts).
    :param kind: The event: `"tool.started"`, `"tool.completed"`, `"message.delta"`...
    :param seq: The event's number in the member's stream.
    :param payload: The client-safe event body (approval commands redacted).
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped. Delivered off the
    token path, on the same bounded queues as the stream hooks. Not bounded by the callback timeout.

    The reference host fires it for the gateway's group chats: the room is `<platform>:<chat id>`,
    a member is a session in it (its session key), and its events are `turn.started`,
    `request.opened`, `tool.started`, `tool.completed` (`tool_name`, `status`, `duration_ms`),
    `turn.completed` or `turn.error`; tool arguments are not sent. Direct chats fire none.

    ```python
    def observe(**kwargs):
        print("on_room_member_activity", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_room_member_activity", observe)
    ```
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
    """Fires once per incoming gateway message, after the internal-event guard and before auth,
    pairing and agent dispatch. Internal events (background-process completions and the like) skip
    it. It is the place for message-flow policies such as listen-only groups or human handover.

    :param event: The normalized inbound message (`.text`, `.source`, `.message_id`, `.internal`,
        ...).
    :type event: `Any` (the host's message event)
    :param gateway: The running gateway, e.g. to send a side-channel reply through its adapters.
    :type gateway: `Any` (the host's gateway)
    :param session_store: The session store, e.g. to ingest the message into a transcript silently.
    :type session_store: `Any` (the host's session store)
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: The first fitting decision wins:

        - `{"action": "skip", "reason": str}` drops the message: no reply, no pairing, no auth;
        - `{"action": "rewrite", "text": str}` replaces the message text and dispatches it normally;
        - `{"action": "allow"}` or `None` dispatches normally.

    Error policy: Open: a raising implementation is skipped and the message is dispatched normally.
    Not bounded by the callback timeout, because dropping or passing a message on a timeout would
    both be wrong for a policy gate; a callback that never returns holds up that message.

    ```python
    from hermes_hooks import hookimpl

    MUTED_CHATS = {"-100123"}


    @hookimpl
    def pre_gateway_dispatch(event):
        if str(event.source.chat_id) in MUTED_CHATS:
            return {"action": "skip", "reason": "muted chat"}
        return None
    ```
    """


# -- issue 23: the gateway's platform events ---------------------------------------------------


@hookspec
@contract(
    Mode.OBSERVE,
    timeout=False,
    defaults={
        "platform": "",
        "event_type": "",
        "payload": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
)
def gateway_platform_event(
    platform: str,
    event_type: str,
    payload: dict[str, Any] | None,
    telemetry_schema_version: str,
) -> None:
    """Fires for each event a platform adapter reports that is not a message (a reaction, a member
    joining, a read receipt), after the gateway's authorization check on the event's source: an
    unknown user's events are not published. Observer only, as in Hermes, where the gateway calls
    `invoke_hook("gateway_platform_event", **event)`.

    :param platform: The platform's name (`"irc"`, `"telegram"`...).
    :param event_type: What happened, as the adapter names it (`"reaction"`...).
    :param payload: The adapter's details (a copy; `{}` from the gateway).
    :type payload: `dict[str, Any] | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Nothing; a result is ignored.

    Error policy: Open: a raising implementation is counted on its plugin and never breaks the
    adapter's receive loop. Not bounded by the callback timeout (the gateway runs it on a worker
    thread, off the event loop).

    ```python
    from hermes_hooks import hookimpl

    REACTIONS = []


    @hookimpl
    def gateway_platform_event(platform, event_type, payload):
        if event_type == "reaction":
            REACTIONS.append((platform, payload.get("emoji")))
    ```
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
    """Fires once per turn in which the agent edited code, at the point it would accept its final
    answer (after the built-in verify-on-stop check), so a policy can send it back to work. It fires
    again after each continuation, up to a cap set by the host.

    :param session_id: The current session.
    :param platform: Where the session runs.
    :param model: The model identifier.
    :param coding: Whether the turn is in the coding posture (in a code workspace).
    :param attempt: How often this turn was already sent back; 0 the first time.
    :param final_response: The answer the agent is about to deliver.
    :param changed_paths: The files edited this turn, sorted and never empty.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: `{"action": "continue", "message": str}`, or the Claude Code Stop form `{"decision":
        "block", "reason": str}`, keeps the agent working with the message as a new user turn; the
        first fitting one wins. `None` lets the turn finish. Gate on `attempt` to make a hook
        one-shot.

    Error policy: Open: a raising implementation is skipped and the turn finishes normally.

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def pre_verify(coding, attempt, changed_paths):
        if attempt or not coding:
            return None
        if any(path.endswith(".py") for path in changed_paths):
            return {"action": "continue", "message": "Run the test suite, then finish."}
        return None
    ```
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
    """Fires before a dangerous command is put to a person (CLI, TUI, gateway, ACP clients) or, with
    smart approvals, to the approval model. It is the place for notifiers and audit logs.

    :param command: The command or script being assessed; redacted on gateway and smart paths.
    :param description: Why the command was flagged, all matching reasons combined.
    :param pattern_key: The primary pattern that matched, e.g. `"rm_rf"`.
    :param pattern_keys: Every pattern that matched.
    :param session_key: The session asking, useful to scope notifications per chat.
    :param surface: `"cli"`, `"gateway"` or `"smart"`.
    :param turn_id: The current turn; `""` when unknown.
    :param tool_call_id: The tool call that needs approval; `""` when unknown.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored: this hook cannot veto or pre-answer an approval; use `pre_tool_call` to block
        a tool before it reaches the approval system.

    Error policy: Open: a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout (approvals have their own).

    ```python
    import subprocess

    from hermes_hooks import hookimpl


    @hookimpl
    def pre_approval_request(command, description):
        subprocess.Popen(["notify-send", "Hermes needs approval", f"{description}: {command[:80]}"])
    ```
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
    """Fires after an approval was decided, timed out or was withdrawn (the turn ended first), and
    when the gateway could not deliver the approval prompt at all.

    :param command: The command or script that was assessed.
    :param description: Why the command was flagged.
    :param pattern_key: The primary pattern that matched.
    :param pattern_keys: Every pattern that matched.
    :param session_key: The session that asked.
    :param surface: `"cli"`, `"gateway"` or `"smart"`.
    :param turn_id: The current turn; `""` when unknown.
    :param tool_call_id: The tool call that needed approval; `""` when unknown.
    :param choice: `"once"`, `"session"`, `"always"`, `"deny"`, `"timeout"`, `"cancelled"`,
        `"notify_failed"`, `"smart_approve"` or `"smart_deny"`.
    :param decided_by: `"aux_llm"` for smart decisions; `None` on prompted surfaces.
    :type decided_by: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout.

    ```python
    import logging

    from hermes_hooks import hookimpl

    log = logging.getLogger(__name__)


    @hookimpl
    def post_approval_response(command, choice, session_key):
        log.info("approval %s for %r in %s", choice, command[:60], session_key)
    ```
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
    """Fires in the dispatcher process after a task's claim is committed, right before its worker is
    started. Like every kanban hook it runs after the database commit, so it never holds the board's
    write lock and always sees durable state.

    :param task_id: The claimed task.
    :param profile_name: The active profile; `"default"` when it cannot be resolved.
    :param board: The board the task is on; `None` for the default board.
    :type board: `str | None`
    :param assignee: Who the task is assigned to, if anyone.
    :type assignee: `str | None`
    :param run_id: The run started by this claim, if known.
    :type run_id: `int | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout (the board has its own heartbeat and stale-claim reclaim).

    ```python
    from hermes_hooks import hookimpl


    @hookimpl
    def kanban_task_claimed(task_id, assignee, run_id):
        print(f"task {task_id} claimed for {assignee or 'anyone'} (run {run_id})")
    ```
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
    """Fires after a task's completion and clean-up are committed, usually in the worker process.

    :param task_id: The completed task.
    :param profile_name: The active profile; `"default"` when it cannot be resolved.
    :param board: The board the task is on; `None` for the default board.
    :type board: `str | None`
    :param assignee: Who the task is assigned to, if anyone.
    :type assignee: `str | None`
    :param run_id: The run that completed it, if known.
    :type run_id: `int | None`
    :param summary: The worker's summary, if any; may hold project or user content.
    :type summary: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout.

    ```python
    def on_done(task_id, summary=None, **kwargs):
        print(f"done: {task_id}: {(summary or '')[:80]}")


    def register(ctx):
        ctx.register_hook("kanban_task_completed", on_done)
    ```
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
    """Fires after a task moves to blocked, usually in the worker process; on the dependency-wait
    path it fires before that write transaction ends.

    :param task_id: The blocked task.
    :param profile_name: The active profile; `"default"` when it cannot be resolved.
    :param board: The board the task is on; `None` for the default board.
    :type board: `str | None`
    :param assignee: Who the task is assigned to, if anyone.
    :type assignee: `str | None`
    :param run_id: The run that blocked it, if known.
    :type run_id: `int | None`
    :param reason: Why the task is blocked, if given; may hold project or user content.
    :type reason: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open: a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout.

    ```python
    def on_blocked(task_id, reason=None, **kwargs):
        print(f"blocked: {task_id}: {reason or 'no reason given'}")


    def register(ctx):
        ctx.register_hook("kanban_task_blocked", on_blocked)
    ```
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

    :param task_id: The task.
    :param profile_name: The active profile; `"default"` when it cannot be resolved.
    :param board: The board the task is on; `None` for the default board.
    :type board: `str | None`
    :param assignee: Who the task is assigned to, if anyone.
    :type assignee: `str | None`
    :param run_id: The task's current run, if known.
    :type run_id: `int | None`
    :param worker_pid: The worker's process id.
    :type worker_pid: `int | None`
    :param workspace_path: The worker's folder (may reveal project layout or user names).
    :type workspace_path: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped. Fired after the
    board's write is committed, never inside it. Not bounded by the callback timeout.

    ```python
    def observe(**kwargs):
        print("on_kanban_worker_spawned", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_kanban_worker_spawned", observe)
    ```
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

    :param task_id: The task.
    :param profile_name: The active profile; `"default"` when it cannot be resolved.
    :param board: The board the task is on; `None` for the default board.
    :type board: `str | None`
    :param assignee: Who the task is assigned to, if anyone.
    :type assignee: `str | None`
    :param run_id: The task's current run, if known.
    :type run_id: `int | None`
    :param worker_pid: The dead worker's process id.
    :type worker_pid: `int | None`
    :param exit_kind: `"clean_exit"`, `"rate_limited"`, `"nonzero_exit"`, `"signaled"` or
        `"unknown"`.
    :param exit_code: The worker's exit code, when known.
    :type exit_code: `int | None`
    :param outcome: What the reclaim did with the task (`"requeued"`, `"blocked"`...).
    :type outcome: `str | None`
    :param retry_status: Whether the task will be retried, and how.
    :type retry_status: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped. Fired after the
    board's write is committed, never inside it. Not bounded by the callback timeout.

    ```python
    def observe(**kwargs):
        print("on_kanban_worker_exited", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_kanban_worker_exited", observe)
    ```
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

    :param task_id: The task.
    :param profile_name: The active profile; `"default"` when it cannot be resolved.
    :param board: The board the task is on; `None` for the default board.
    :type board: `str | None`
    :param assignee: Who the task is assigned to, if anyone.
    :type assignee: `str | None`
    :param run_id: The task's current run, if known.
    :type run_id: `int | None`
    :param worker_pid: The claiming worker's process id, if known.
    :type worker_pid: `int | None`
    :param heartbeat_stale: Whether the worker's heartbeat had stopped too.
    :param retry_status: Whether the task will be retried, and how.
    :type retry_status: `str | None`
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped. Fired after the
    board's write is committed, never inside it. Not bounded by the callback timeout.

    ```python
    def observe(**kwargs):
        print("on_kanban_worker_stale_claim", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_kanban_worker_stale_claim", observe)
    ```
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

    :param task_id: The task.
    :param profile_name: The active profile; `"default"` when it cannot be resolved.
    :param board: The board the task is on; `None` for the default board.
    :type board: `str | None`
    :param assignee: Who the task is assigned to, if anyone.
    :type assignee: `str | None`
    :param run_id: The task's current run, if known.
    :type run_id: `int | None`
    :param changed_fields: The names of the fields written, never their values.
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped. Fired after the
    board's write is committed, never inside it. Not bounded by the callback timeout.

    ```python
    def observe(**kwargs):
        print("on_kanban_task_updated", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_kanban_task_updated", observe)
    ```
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

    :param board: The board ticked; `None` for the default board.
    :type board: `str | None`
    :param profile_name: The active profile; `"default"` when it cannot be resolved.
    :param dry_run: Whether the tick only looked.
    :param outcome: `"ok"`, `"skipped_locked"` (another dispatcher held the lock) or `"idle"`
        (nothing to do).
    :type outcome: `Literal['ok', 'skipped_locked', 'idle']`
    :param result: What the tick did (tasks spawned, reclaimed, blocked...; holds task ids,
        assignees and workspace paths).
    :param telemetry_schema_version: The payload schema, `"hermes.observer.v1"`; see [the observer
        schema](#the-observer-schema).
    :returns: Ignored.

    Error policy: Open; a raising implementation is logged, counted and skipped. Not bounded by the
    callback timeout.

    ```python
    def observe(**kwargs):
        print("on_kanban_dispatch_tick", sorted(kwargs))


    def register(ctx):
        ctx.register_hook("on_kanban_dispatch_tick", observe)
    ```
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
    "gateway_platform_event",
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
)
"""Every hook this module declares, in declaration order."""

VALID_HOOKS: Final[frozenset[str]] = frozenset(HOOK_NAMES)
"""The same names as a set, under the name Hermes uses (``hermes_cli.plugins.VALID_HOOKS``)."""

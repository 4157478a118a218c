"""One model request of a turn: the messages sent, retries, and the three API hooks.

``pre_api_request`` fires before every attempt, then ``post_api_request`` after a response or
``api_request_error`` after a failure; a retryable failure is tried again, up to the session's
``max_retries``, waiting ``retry_backoff`` seconds (doubled each time, with jitter, and at
least what the server's ``Retry-After`` asks) in between: the retries run on tenacity, through
:func:`hermes_hooks.backends.models.retry.call_with_retries`, with the hooks in its callbacks.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import attrs

from hermes_hooks.backends.models import ModelError, ModelResponse
from hermes_hooks.backends.models.retry import call_with_retries
from hermes_hooks.registries.middleware import LLMExecutionBlocked
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.host.session import Session, TurnState

__all__ = ["build_request_messages", "send_request"]


def _ask(
    session: Session,
    turn: TurnState,
    messages: list[dict[str, Any]],
    definitions: list[dict[str, Any]],
    iteration: int,
) -> ModelResponse:
    """Ask the model once: streamed when someone watches the text (``session.on_text``) or a
    plugin implements a stream hook, else whole.

    The stream hooks go through the session's :class:`~hermes_hooks.host.streaming.
    StreamObservers`, off the token path; ``on_stream_end`` fires also when the stream fails.
    """
    model = session.model
    observers = session.stream_observers()
    if observers is not None and not observers.wants_stream():
        observers = None
    sink = session.on_text
    if observers is None and sink is None:
        return model.complete(messages, definitions)
    run = None
    if observers is not None:
        run = observers.start(
            turn_id=turn.turn_id,
            iteration=iteration,
            session_id=session.session_id,
            model=model.model,
            provider=model.provider,
            surface=session.platform if session.surface == "gateway" else session.surface,
        )
    parts: list[str] = []

    def on_delta(text: str, kind: str) -> None:
        if kind == "text":
            parts.append(text)
            if sink is not None:
                sink(text)
        if run is not None:
            run.delta(text, kind)

    try:
        response = model.stream(messages, definitions, on_delta=on_delta)
    except Exception as exc:
        if run is not None:
            run.end("".join(parts), finished=False, error=str(exc))
        raise
    if run is not None:
        run.end(response.text, finished=True)
    turn.streamed = bool(parts)
    if parts and session.on_text_end is not None:
        session.on_text_end()
    return response


def build_request_messages(
    session: Session, user_index: int, context: str | None
) -> list[dict[str, Any]]:
    """Return what is sent: the system prompt (with the memory providers' blocks), then the
    conversation, with the recalled memory and the plugins' context appended to this turn's
    user message (only in the request, never in the stored history).
    """
    messages: list[dict[str, Any]] = [{"role": "system", "content": session.full_system_prompt()}]
    for index, message in enumerate(session.messages):
        if index == user_index and context:
            content = message.get("content")
            if isinstance(content, list):
                message = {**message, "content": [*content, {"type": "text", "text": context}]}
            else:
                message = {**message, "content": f"{content}\n\n{context}"}
        messages.append(message)
    return messages


def _envelope(session: Session, messages: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    return {
        "method": "chat.completions.create",
        "body": {
            "model": session.model.model,
            "messages": messages,
            "tools": tools,
        },
    }


def _classify(
    session: Session, error: ModelError, messages: list[dict[str, Any]], chars: int
) -> None:
    """Let ``transform_api_error_classification`` reclassify a failure before retry decides.

    The first fitting answer sets the error's ``reason`` (a FailoverReason name) and, when it
    says, whether it is ``retryable``; with no answer the client's own classification stands.
    """
    cause = error.__cause__ if error.__cause__ is not None else error
    classification = session.hooks.transform_api_error_classification(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
        provider=session.model.provider,
        model=session.model.model,
        status_code=error.status_code,
        error_type=type(cause).__name__,
        error_code=None,
        error_message=str(error),
        error_body=None,
        error=cause,
        approx_tokens=chars // 4,
        context_length=None,
        num_messages=len(messages),
    )
    if classification is None:
        return
    error.reason = classification.reason
    if classification.retryable is not None:
        error.retryable = classification.retryable


def send_request(
    session: Session, turn: TurnState, user_index: int, context: str | None, api_call_count: int
) -> ModelResponse:
    """Send the turn's next model request and return the response.

    The retries are :func:`~hermes_hooks.backends.models.retry.call_with_retries`' (tenacity):
    each attempt fires ``pre_api_request`` and, on success, ``post_api_request``; a failure is
    reclassified by ``transform_api_error_classification`` inside the attempt (so that the retry
    decision sees the new class), and ``api_request_error`` fires before each wait (told the
    wait) and once more for the final failure (told no retry follows).

    :raises ModelError: every attempt failed (the last failure).
    """
    request = _Request.prepare(session, turn, user_index, context, api_call_count)
    try:
        return call_with_retries(
            request.attempt,
            max_retries=session.max_retries,
            backoff=session.retry_backoff,
            on_retry=lambda retry, error, delay: request.failed(error, delay),
        )
    except ModelError as error:
        request.failed(error, None)
        raise


@attrs.define(eq=False)
class _Request:
    """One model request of a turn, over its attempts: what is sent, what the hooks are told."""

    session: Session
    turn: TurnState
    api_call_count: int
    messages: list[dict[str, Any]]
    definitions: list[dict[str, Any]]
    provider_request: dict[str, Any]
    original_request: Any
    envelope: dict[str, Any]
    chars: int
    common: dict[str, Any]
    user_message: Any
    retry: int = -1  # the attempt under way, from 0
    started_at: float = 0.0
    clock: float = 0.0

    @classmethod
    def prepare(
        cls,
        session: Session,
        turn: TurnState,
        user_index: int,
        context: str | None,
        api_call_count: int,
    ) -> _Request:
        """Build the request, then let the ``llm_request`` middleware change it (before the
        hooks see it)."""
        from hermes_hooks.host.session import new_id

        model = session.model
        definitions = session.tool_definitions()
        turn.offered_tools = frozenset(d["function"]["name"] for d in definitions)
        messages = build_request_messages(session, user_index, context)
        envelope = _envelope(session, messages, sorted(turn.offered_tools))
        chars = len(json.dumps(messages, ensure_ascii=False, default=str))
        turn.api_request_id = new_id("req")
        common: dict[str, Any] = {
            "task_id": turn.task_id,
            "turn_id": turn.turn_id,
            "api_request_id": turn.api_request_id,
            "session_id": session.session_id,
            "platform": session.platform,
            "model": model.model,
            "provider": model.provider,
            "base_url": model.base_url,
            "api_mode": model.api_mode,
            "api_call_count": api_call_count,
        }
        # llm_request middleware: the provider's request (model, messages, tools)
        provider_request: dict[str, Any] = {
            "model": model.model,
            "messages": messages,
            "tools": definitions,
        }
        applied = session.pm.apply_middleware("llm_request", "request", provider_request, **common)
        if applied.changed:
            provider_request = applied.payload
            if isinstance(provider_request.get("messages"), list):
                messages = provider_request["messages"]
            if isinstance(provider_request.get("tools"), list):
                definitions = provider_request["tools"]
        return cls(
            session=session,
            turn=turn,
            api_call_count=api_call_count,
            messages=messages,
            definitions=definitions,
            provider_request=provider_request,
            original_request=applied.original_payload,
            envelope=envelope,
            chars=chars,
            common=common,
            user_message=session.messages[user_index]["content"],
        )

    def call_model(self, effective: dict[str, Any]) -> ModelResponse:
        """The model call the ``llm_execution`` middleware wraps (its ``next_call``)."""
        sent = effective.get("messages")
        tools = effective.get("tools")
        return _ask(
            self.session,
            self.turn,
            sent if isinstance(sent, list) else self.messages,
            tools if isinstance(tools, list) else self.definitions,
            self.api_call_count,
        )

    def attempt(self) -> ModelResponse:
        """One attempt: ``pre_api_request``, the call, then ``post_api_request``.

        :raises ModelError: the attempt failed (reclassified by the plugins).
        """
        self.retry += 1
        self.started_at = time.time()
        self.clock = time.perf_counter()
        self.session.hooks.pre_api_request(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            **self.common,
            user_message=self.user_message,
            conversation_history=[dict(m) for m in self.session.messages],
            retry_count=self.retry,
            request_messages=self.messages,
            message_count=len(self.messages),
            tool_count=len(self.definitions),
            approx_input_tokens=self.chars // 4,
            request_char_count=self.chars,
            max_tokens=None,
            started_at=self.started_at,
            request=self.envelope,
        )
        try:
            response = self.session.pm.run_middleware(
                "llm_execution", "request", self.provider_request, self.call_model,
                original_request=self.original_request, **self.common,
            )  # fmt: skip
            if not isinstance(response, ModelResponse):
                raise ModelError(
                    f"llm_execution middleware returned {type(response).__name__}, "
                    f"not the model's response",
                    reason="bad_response",
                )
        except LLMExecutionBlocked as exc:
            error: ModelError = ModelError(
                f"blocked by llm_execution middleware: {exc.reason}", reason="blocked"
            )
        except ModelError as exc:
            error = exc
        except Exception as exc:  # a provider bug must not skip the hooks or the turn's end
            error = ModelError(f"{type(exc).__name__}: {exc}", reason="provider_error")
            error.__cause__ = exc
        else:
            self.succeeded(response)
            return response
        _classify(self.session, error, self.messages, self.chars)
        raise error

    def succeeded(self, response: ModelResponse) -> None:
        """Tell the event log and ``post_api_request`` of a response."""
        ended_at = time.time()
        self.session._event(
            "api_request",
            turn_id=self.turn.turn_id,
            api_call_count=self.api_call_count,
            retry_count=self.retry,
            finish_reason=response.finish_reason,
            tool_calls=[call.name for call in response.tool_calls],
        )
        self.session.hooks.post_api_request(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            **self.common,
            api_duration=time.perf_counter() - self.clock,
            started_at=self.started_at,
            ended_at=ended_at,
            finish_reason=response.finish_reason,
            message_count=len(self.messages),
            response_model=response.model,
            response={
                "finish_reason": response.finish_reason,
                "model": response.model,
                "content_chars": len(response.text),
                "tool_calls": [call.name for call in response.tool_calls],
            },
            usage=dict(response.usage) if response.usage is not None else None,
            assistant_message=response.assistant_message(),
            assistant_content_chars=len(response.text),
            assistant_tool_call_count=len(response.tool_calls),
        )

    def failed(self, error: ModelError, delay: float | None) -> None:
        """Tell ``api_request_error`` and the event log of a failure; ``delay`` is the wait
        before the next attempt, ``None`` when none follows."""
        session = self.session
        session.hooks.api_request_error(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            **self.common,
            api_duration=time.perf_counter() - self.clock,
            started_at=self.started_at,
            ended_at=time.time(),
            status_code=error.status_code,
            retry_count=self.retry,
            max_retries=session.max_retries,
            retryable=delay is not None,
            reason=error.reason,
            error={"type": type(error).__name__, "message": str(error)},
            request=self.envelope,
        )
        session._event(
            "api_error",
            turn_id=self.turn.turn_id,
            retry_count=self.retry,
            error=str(error),
            retry_in=delay,
        )

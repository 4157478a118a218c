"""Streaming answers over HTTP: server-sent events for ``chat_completions`` and
``anthropic_messages``.

Both APIs stream when the request says ``"stream": true``: the answer comes as server-sent
events (``event:``/``data:`` lines, a blank line ends each), text in small deltas, tool calls in
fragments. :func:`stream_events` sends the request through the model's own client, headers and
timeouts (:class:`~hermes_hooks.backends.models.transport.HttpModel`) and yields each event;
:class:`ChatCompletionsStream` and :class:`AnthropicStream` assemble the events into the same
:class:`~hermes_hooks.backends.models.base.ModelResponse` the non-streaming call returns,
telling the sink each text delta as it arrives. This module sits beside the HTTP transport
(retries and deadlines are the transport's and the host's), so it never changes what a
non-streaming request does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs
import httpx

from hermes_hooks.backends.models.base import (
    ModelError,
    ModelResponse,
    StreamSink,
    ToolCall,
    dumps,
)
from hermes_hooks.backends.models.retry import parse_retry_after

if TYPE_CHECKING:
    from hermes_hooks.backends.models.transport import HttpModel

__all__ = [
    "AnthropicStream",
    "ChatCompletionsStream",
    "SseEvent",
    "parse_sse",
    "stream_events",
]

logger = logging.getLogger(__name__)

_MAX_ERROR_TEXT: Final = 500
WHOLE: Final = "hermes-hooks.whole-response"
"""The event name :func:`stream_events` gives a whole JSON answer (the server did not stream)."""
_RETRYABLE: Final = frozenset({408, 409, 425, 429})


@attrs.frozen
class SseEvent:
    """One server-sent event: its ``event:`` name (``"message"`` when none) and its data."""

    event: str
    data: str


def parse_sse(lines: Iterator[str]) -> Iterator[SseEvent]:
    """Yield the events of a server-sent event stream, given its lines (without newlines)."""
    event = "message"
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                yield SseEvent(event, "\n".join(data))
            event, data = "message", []
        elif line.startswith(":"):
            continue  # a comment, e.g. a keep-alive
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
    if data:
        yield SseEvent(event, "\n".join(data))


def _reason(status: int) -> str:
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    return "server_error" if status >= 500 else "bad_request"


def stream_events(
    model: HttpModel, url: str, body: Mapping[str, Any], headers: Mapping[str, str]
) -> Iterator[SseEvent]:
    """POST ``body`` to ``url`` and yield the events of the streamed answer.

    :raises ModelError: the server could not be reached, timed out or answered with an HTTP
        error (as for a non-streaming request).
    """
    sent = {**model.headers, **headers, "Accept": "text/event-stream"}
    who = f"{url} ({model.provider})"
    try:
        with model._client.stream("POST", url, json=dict(body), headers=sent) as response:
            status = response.status_code
            if status >= 400:
                text = response.read().decode("utf-8", "replace")[:_MAX_ERROR_TEXT]
                raise ModelError(
                    f"{who} answered HTTP {status}: {model.redact(text)}",
                    status_code=status,
                    retryable=status in _RETRYABLE or status >= 500,
                    reason=_reason(status),
                    retry_after=parse_retry_after(response.headers.get("Retry-After")),
                )
            if "event-stream" in response.headers.get("content-type", "").lower():
                yield from parse_sse(response.iter_lines())
                return
            # Not announced as a stream: a server that ignores "stream": true answers whole.
            text = response.read().decode("utf-8", "replace")
            try:
                whole = isinstance(json.loads(text), Mapping)
            except ValueError:
                whole = False
            if whole:
                yield SseEvent(WHOLE, text)
            else:
                yield from parse_sse(iter(text.splitlines()))
    except httpx.TimeoutException as exc:
        raise ModelError(
            f"{who} did not answer in time while streaming", retryable=True, reason="timeout"
        ) from exc
    except httpx.HTTPError as exc:
        raise ModelError(
            f"cannot reach {who}: {model.redact(str(exc))}", retryable=True, reason="connection"
        ) from exc


def _json(event: SseEvent, url: str) -> Any:
    try:
        return json.loads(event.data)
    except ValueError as exc:
        raise ModelError(
            f"{url} sent a stream event that is not JSON: {event.data[:_MAX_ERROR_TEXT]!r}",
            reason="bad_response",
        ) from exc


def _whole(response: ModelResponse, sink: StreamSink) -> ModelResponse:
    if response.text:
        sink(response.text, "text")
    return response


class ChatCompletionsStream:
    """Assembles an OpenAI chat completions stream (``chat.completion.chunk`` events)."""

    def __init__(self, sink: StreamSink) -> None:
        self.sink = sink
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish: str | None = None
        self.model: str | None = None
        self.usage: dict[str, Any] | None = None

    def feed(
        self, events: Iterator[SseEvent], url: str, whole: Callable[[Any], ModelResponse]
    ) -> ModelResponse:
        """Read ``events`` to the end (``[DONE]``) and return the assembled response; a whole
        answer (the server did not stream) is parsed by ``whole`` and told in one piece."""
        for event in events:
            if event.event == WHOLE:
                return _whole(whole(_json(event, url)), self.sink)
            if event.data.strip() == "[DONE]":
                break
            self._chunk(_json(event, url), url)
        return self.response()

    def _chunk(self, chunk: Any, url: str) -> None:
        if not isinstance(chunk, Mapping):
            return
        if isinstance(chunk.get("error"), Mapping):
            message = chunk["error"].get("message", chunk["error"])
            raise ModelError(f"{url} failed while streaming: {message}", reason="server_error")
        if isinstance(chunk.get("model"), str):
            self.model = chunk["model"]
        if isinstance(chunk.get("usage"), Mapping):
            self.usage = json.loads(dumps(chunk["usage"]))
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return
        choice = choices[0]
        if isinstance(choice.get("finish_reason"), str):
            self.finish = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, Mapping):
            return
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str) and delta[key]:
                self.sink(delta[key], "reasoning")
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.text.append(content)
            self.sink(content, "text")
        for fragment in delta.get("tool_calls") or ():
            if isinstance(fragment, Mapping):
                self._tool_fragment(fragment)

    def _tool_fragment(self, fragment: Mapping[str, Any]) -> None:
        index = fragment.get("index", len(self.calls))
        call = self.calls.setdefault(
            index if isinstance(index, int) else len(self.calls),
            {"id": "", "name": "", "arguments": ""},
        )
        if isinstance(fragment.get("id"), str):
            call["id"] = fragment["id"]
        function = fragment.get("function")
        if isinstance(function, Mapping):
            if isinstance(function.get("name"), str):
                call["name"] += function["name"]
            if isinstance(function.get("arguments"), str):
                call["arguments"] += function["arguments"]

    def response(self) -> ModelResponse:
        """The response assembled so far."""
        calls = tuple(
            ToolCall(
                id=call["id"] or f"call_{number + 1}",
                name=call["name"],
                arguments=call["arguments"] or "{}",
            )
            for number, (_, call) in enumerate(sorted(self.calls.items()))
            if call["name"]
        )
        return ModelResponse(
            text="".join(self.text),
            tool_calls=calls,
            finish_reason=self.finish,
            model=self.model,
            usage=self.usage,
        )


_ANTHROPIC_FINISH: Final = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


class AnthropicStream:
    """Assembles an Anthropic Messages stream (``message_start`` ... ``message_stop``)."""

    def __init__(self, sink: StreamSink) -> None:
        self.sink = sink
        self.blocks: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.model: str | None = None
        self.usage: dict[str, Any] = {}

    def feed(
        self, events: Iterator[SseEvent], url: str, whole: Callable[[Any], ModelResponse]
    ) -> ModelResponse:
        """Read ``events`` to ``message_stop`` and return the assembled response; a whole
        answer (the server did not stream) is parsed by ``whole`` and told in one piece."""
        for event in events:
            if event.event == WHOLE:
                return _whole(whole(_json(event, url)), self.sink)
            data = _json(event, url)
            if not isinstance(data, Mapping):
                continue
            kind = data.get("type", event.event)
            if kind == "message_stop":
                break
            self._event(kind, data, url)
        return self.response()

    def _event(self, kind: object, data: Mapping[str, Any], url: str) -> None:
        if kind == "error":
            error = data.get("error")
            message = error.get("message", error) if isinstance(error, Mapping) else error
            overloaded = isinstance(error, Mapping) and error.get("type") == "overloaded_error"
            raise ModelError(
                f"{url} failed while streaming: {message}",
                retryable=overloaded,
                reason="server_error",
            )
        if kind == "message_start" and isinstance(data.get("message"), Mapping):
            message = data["message"]
            if isinstance(message.get("model"), str):
                self.model = message["model"]
            if isinstance(message.get("usage"), Mapping):
                self.usage.update(json.loads(dumps(message["usage"])))
        elif kind == "content_block_start" and isinstance(data.get("content_block"), Mapping):
            block = dict(data["content_block"])
            block.setdefault("text", "")
            block["partial_json"] = ""
            self.blocks[int(data.get("index", len(self.blocks)))] = block
        elif kind == "content_block_delta" and isinstance(data.get("delta"), Mapping):
            self._delta(int(data.get("index", 0)), data["delta"])
        elif kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, Mapping) and isinstance(delta.get("stop_reason"), str):
                stop = delta["stop_reason"]
                self.finish = _ANTHROPIC_FINISH.get(stop, stop)
            if isinstance(data.get("usage"), Mapping):
                self.usage.update(json.loads(dumps(data["usage"])))

    def _delta(self, index: int, delta: Mapping[str, Any]) -> None:
        block = self.blocks.setdefault(index, {"type": "text", "text": "", "partial_json": ""})
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            block["text"] += delta["text"]
            self.sink(delta["text"], "text")
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            self.sink(delta["thinking"], "reasoning")
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            block["partial_json"] += delta["partial_json"]

    def response(self) -> ModelResponse:
        """The response assembled so far."""
        texts: list[str] = []
        calls: list[ToolCall] = []
        for index, block in sorted(self.blocks.items()):
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                raw = block.get("partial_json") or ""
                try:
                    arguments = dumps(json.loads(raw)) if raw else dumps(block.get("input") or {})
                except ValueError:
                    arguments = raw
                call_id = block.get("id")
                calls.append(
                    ToolCall(
                        id=call_id if isinstance(call_id, str) and call_id else f"toolu_{index}",
                        name=block["name"],
                        arguments=arguments,
                    )
                )
        return ModelResponse(
            text="".join(texts),
            tool_calls=tuple(calls),
            finish_reason=self.finish,
            model=self.model,
            usage=self.usage or None,
        )

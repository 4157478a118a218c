"""``api_mode: anthropic_messages``: the Anthropic Messages API over ``httpx``, whole or streamed.

The host's conversation is in OpenAI's chat format; this client translates it both ways:

- ``system`` (and ``developer``) messages become the request's ``system`` prompt;
- an assistant message's ``tool_calls`` become ``tool_use`` blocks, and ``tool`` messages become
  ``tool_result`` blocks of a user message (consecutive ones together: the API wants the roles to
  alternate, so neighbouring messages of one role are merged);
- ``image_url`` parts become ``image`` blocks (base64 for ``data:`` URLs, else by URL);
- tools are sent as ``{name, description, input_schema}``;
- the answer's ``text`` blocks are the reply, its ``tool_use`` blocks the tool calls, and
  ``stop_reason`` maps to ``stop``, ``tool_calls`` or ``length``.

Requests go to ``{base_url}/v1/messages`` (``{base_url}/messages`` when the base URL already
ends in ``/v1``) with ``x-api-key`` and ``anthropic-version: 2023-06-01``. The API requires
``max_tokens``: the caller's, else the profile's ``get_max_tokens``, else
:data:`DEFAULT_MAX_TOKENS`. There is no JSON mode: a structured request is asked for in words
(``ctx.llm.complete_structured`` does) and parsed from the text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from hermes_hooks.backends.models.base import (
    ModelResponse,
    StreamSink,
    ToolCall,
    dumps,
    message_text,
)
from hermes_hooks.backends.models.transport import HttpModel

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_MAX_TOKENS", "AnthropicMessagesModel", "to_anthropic"]

logger = logging.getLogger(__name__)

ANTHROPIC_VERSION: Final = "2023-06-01"
"""The ``anthropic-version`` header sent."""

DEFAULT_MAX_TOKENS: Final = 4096
"""``max_tokens`` when neither the caller nor the profile gives one (the API requires it)."""

_FINISH: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


def _image_block(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        media, _, data = url[len("data:") :].partition(";base64,")
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media or "image/png", "data": data},
        }
    return {"type": "image", "source": {"type": "url", "url": url}}


def _content_blocks(content: object) -> list[dict[str, Any]]:
    """Anthropic content blocks for an OpenAI message's ``content`` (a string or parts)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if isinstance(url, str) and url:
                blocks.append(_image_block(url))
        elif kind in ("image", "tool_use", "tool_result", "document"):
            blocks.append(dict(part))  # already Anthropic-shaped
    return blocks


def _tool_input(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    raw = function.get("arguments") if isinstance(function, Mapping) else None
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        parsed = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        logger.debug("tool call arguments are not JSON: %r", raw)
        return {}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def to_anthropic(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[str, list[dict[str, Any]]]:
    """Return ``(system prompt, messages)`` for the Messages API from OpenAI-format messages."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            text = message_text(message)
            if text:
                system.append(text)
        elif role == "assistant":
            blocks = _content_blocks(message.get("content"))
            for call in message.get("tool_calls") or []:
                if not isinstance(call, Mapping):
                    continue
                function = call.get("function")
                name = function.get("name") if isinstance(function, Mapping) else None
                if not isinstance(name, str):
                    continue
                call_id = call.get("id")
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call_id if isinstance(call_id, str) and call_id else name,
                        "name": name,
                        "input": _tool_input(call),
                    }
                )
            add("assistant", blocks)
        elif role == "tool":
            content = message.get("content")
            result = content if isinstance(content, str) else _content_blocks(content)
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": str(message.get("tool_call_id") or ""),
                        "content": result,
                    }
                ],
            )
        else:
            add("user", _content_blocks(message.get("content")))
    return "\n\n".join(system), turns


def _tool(definition: Mapping[str, Any]) -> dict[str, Any]:
    function = definition.get("function", definition)
    if not isinstance(function, Mapping):
        function = {}
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    tool: dict[str, Any] = {"name": function.get("name", ""), "input_schema": parameters}
    if function.get("description"):
        tool["description"] = function["description"]
    return tool


class AnthropicMessagesModel(HttpModel):
    """A model behind the Anthropic Messages API (``POST /v1/messages``).

    The keywords are :class:`~hermes_hooks.backends.models.transport.HttpModel`'s; the key is
    sent as ``x-api-key``.
    """

    provider = "anthropic"
    api_mode = "anthropic_messages"

    def auth_headers(self, api_key: str) -> dict[str, str]:
        """Anthropic's key header."""
        return {"x-api-key": api_key}

    @property
    def messages_url(self) -> str:
        """Where requests go."""
        root = self.base_url
        return f"{root}/messages" if root.endswith("/v1") else f"{root}/v1/messages"

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> ModelResponse:
        """Send one Messages request and normalize the answer.

        :param json_schema: not sent (the API has no JSON mode); the caller asks in words.
        :raises ModelError: the server could not be reached, timed out, answered with an HTTP
            error, or sent something that is not a message.
        """
        body, headers = self.request_body(messages, tools, model, temperature, max_tokens)
        url = self.messages_url
        data = self.post_json(url, body, headers)
        return self._parse(data, url)

    def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        on_delta: StreamSink,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> ModelResponse:
        """Send one Messages request with ``"stream": true``, telling ``on_delta`` the text as
        it arrives, and return the assembled answer.

        :raises ModelError: as :meth:`complete`, or the stream sent an ``error`` event.
        """
        from hermes_hooks.backends.models.streaming import AnthropicStream, stream_events

        body, headers = self.request_body(messages, tools, model, temperature, max_tokens)
        body["stream"] = True
        url = self.messages_url
        events = stream_events(self, url, body, headers)
        return AnthropicStream(on_delta).feed(events, url, lambda data: self._parse(data, url))

    def request_body(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        model: str | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """Return the body of a request, and its headers (the version and the profile's)."""
        model_id = model or self.model
        system, turns = to_anthropic(self.prepare_messages(messages))
        body: dict[str, Any] = {
            "model": model_id,
            "max_tokens": self.max_tokens_for(max_tokens, model_id) or DEFAULT_MAX_TOKENS,
            "messages": turns,
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [_tool(t) for t in tools]
        temperature = self.temperature_for(temperature)
        if temperature is not None:
            body["temperature"] = temperature
        fields, headers = self.profile_extras(model_id)
        body.update(fields)
        return body, {"anthropic-version": ANTHROPIC_VERSION, **headers}

    def _parse(self, data: Any, url: str) -> ModelResponse:
        content = data.get("content") if isinstance(data, Mapping) else None
        if not isinstance(content, list):
            raise self.bad_response(url, data, "a message")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for index, block in enumerate(content):
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                call_id = block.get("id")
                calls.append(
                    ToolCall(
                        id=call_id if isinstance(call_id, str) and call_id else f"toolu_{index}",
                        name=block["name"],
                        arguments=dumps(block.get("input") or {}),
                    )
                )
        stop = data.get("stop_reason")
        usage = data.get("usage")
        served = data.get("model")
        return ModelResponse(
            text="".join(texts),
            tool_calls=tuple(calls),
            finish_reason=_FINISH.get(stop, stop) if isinstance(stop, str) else None,
            model=served if isinstance(served, str) else None,
            usage=json.loads(dumps(usage)) if isinstance(usage, Mapping) else None,
        )

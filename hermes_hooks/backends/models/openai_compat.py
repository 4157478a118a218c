"""``api_mode: chat_completions``: OpenAI's chat completions with tool calling, over HTTP.

Works with any server that speaks OpenAI's ``POST /chat/completions`` (OpenAI, OpenRouter,
DeepSeek, Groq, vLLM, llama.cpp's server, Ollama's ``/v1``, LM Studio...): the
``openai-compatible`` backend (``model.base_url``, ``model.api_key_env``) and every profile of
that mode. The key is sent as a bearer token and never logged
(:mod:`~hermes_hooks.backends.models.transport`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_hooks.backends.models.base import (
    ModelResponse,
    ModelSettings,
    StreamSink,
    ToolCall,
    dumps,
    message_text,
)
from hermes_hooks.backends.models.transport import HttpModel
from hermes_hooks.errors import ConfigError

__all__ = ["OpenAICompatibleModel", "parse_tool_calls"]

logger = logging.getLogger(__name__)


def parse_tool_calls(raw: object) -> tuple[ToolCall, ...]:
    """Return the tool calls of an OpenAI assistant message's ``tool_calls``."""
    calls = []
    for index, item in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(item, Mapping):
            continue
        function = item.get("function")
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            continue
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            # Some servers send the arguments as an object; the conversation wants JSON text.
            arguments = dumps(arguments if arguments is not None else {})
        call_id = item.get("id")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) and call_id else f"call_{index + 1}",
                name=function["name"],
                arguments=arguments,
            )
        )
    return tuple(calls)


class OpenAICompatibleModel(HttpModel):
    """A model behind an OpenAI-compatible chat completions endpoint.

    :param base_url: the API root, e.g. ``http://127.0.0.1:8080/v1``; requests go to
        ``{base_url}/chat/completions``.
    :param model: the model id sent in every request.
    :param api_key: sent as ``Authorization: Bearer``; ``None`` sends no header (local servers).

    The other keywords are :class:`~hermes_hooks.backends.models.transport.HttpModel`'s.
    """

    provider = "openai-compatible"
    api_mode = "chat_completions"

    @classmethod
    def from_settings(cls, settings: ModelSettings) -> OpenAICompatibleModel:
        """Build it from ``model:`` settings.

        :raises ConfigError: ``model.base_url`` or ``model.name`` is missing.
        """
        missing = [
            field
            for field, value in (("base_url", settings.base_url), ("name", settings.name))
            if not value
        ]
        if missing:
            needed = " and ".join(f"model.{field}" for field in missing)
            raise ConfigError(
                f"model.provider 'openai-compatible' needs {needed} in config.yaml "
                f"(e.g. base_url: http://127.0.0.1:8080/v1, name: my-model)"
            )
        api_key = None
        if settings.api_key_env:
            api_key = os.environ.get(settings.api_key_env) or None
            if api_key is None:
                logger.warning(
                    "model.api_key_env names %s, which is not set: sending no API key",
                    settings.api_key_env,
                )
        return cls(
            settings.base_url or "",
            settings.name or "",
            api_key=api_key,
            timeout=settings.timeout,
            connect_timeout=settings.connect_timeout,
            deadline=settings.deadline,
            max_response_bytes=settings.max_response_bytes,
        )

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
        """Send one chat completions request and normalize the answer.

        :raises ModelError: the server could not be reached, timed out, answered with an HTTP
            error, or sent something that is not a chat completion.
        """
        body, headers = self.request_body(messages, tools, model, temperature, max_tokens)
        if json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": dict(json_schema)},
            }
        url = f"{self.base_url}/chat/completions"
        return self._parse(self.post_json(url, body, headers), url)

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
        """Send one chat completions request with ``"stream": true``, telling ``on_delta`` the
        text as it arrives, and return the assembled answer.

        :raises ModelError: as :meth:`complete`, or the stream reported an error.
        """
        from hermes_hooks.backends.models.streaming import ChatCompletionsStream, stream_events

        body, headers = self.request_body(messages, tools, model, temperature, max_tokens)
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        url = f"{self.base_url}/chat/completions"
        events = stream_events(self, url, body, headers)
        return ChatCompletionsStream(on_delta).feed(
            events, url, lambda data: self._parse(data, url)
        )

    def request_body(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        model: str | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """Return the body of a request, and the profile's extra headers."""
        model_id = model or self.model
        body: dict[str, Any] = {"model": model_id, "messages": self.prepare_messages(messages)}
        if tools:
            body["tools"] = list(tools)
        temperature = self.temperature_for(temperature)
        if temperature is not None:
            body["temperature"] = temperature
        max_tokens = self.max_tokens_for(max_tokens, model_id)
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        fields, headers = self.profile_extras(model_id)
        body.update(fields)
        return body, headers

    def _parse(self, data: Any, url: str) -> ModelResponse:
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError) as exc:
            raise self.bad_response(url, data, "a chat completion") from exc
        if not isinstance(message, Mapping):
            raise self.bad_response(url, message, "a message object")
        usage = data.get("usage")
        served = data.get("model")
        finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
        return ModelResponse(
            text=message_text(message),
            tool_calls=parse_tool_calls(message.get("tool_calls")),
            finish_reason=finish if isinstance(finish, str) else None,
            model=served if isinstance(served, str) else None,
            usage=json.loads(dumps(usage)) if isinstance(usage, Mapping) else None,
        )

"""The ``openai-compatible`` provider: chat completions with tool calling over HTTP.

Works with any server that speaks OpenAI's ``POST /chat/completions`` (OpenAI, OpenRouter,
vLLM, llama.cpp's server, Ollama's ``/v1``, LM Studio...). The key is read from the environment
variable named by ``model.api_key_env`` and sent as a bearer token; it is never logged.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final

import httpx

from hermes_hooks import __version__
from hermes_hooks.backends.models.base import (
    ModelError,
    ModelProvider,
    ModelResponse,
    ModelSettings,
    ToolCall,
    dumps,
    message_text,
)
from hermes_hooks.errors import ConfigError

__all__ = ["OpenAICompatibleModel"]

logger = logging.getLogger(__name__)

_RETRYABLE_STATUS: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_ERROR_TEXT: Final = 500


def _reason_for(status: int) -> str:
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status >= 500:
        return "server_error"
    return "bad_request"


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:_MAX_ERROR_TEXT]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])[:_MAX_ERROR_TEXT]
    if isinstance(error, str):
        return error[:_MAX_ERROR_TEXT]
    return response.text[:_MAX_ERROR_TEXT]


def _parse_tool_calls(raw: object) -> tuple[ToolCall, ...]:
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


class OpenAICompatibleModel(ModelProvider):
    """A model behind an OpenAI-compatible chat completions endpoint.

    :param base_url: the API root, e.g. ``http://127.0.0.1:8080/v1``; requests go to
        ``{base_url}/chat/completions``.
    :param model: the model id sent in every request.
    :param api_key: sent as ``Authorization: Bearer``; ``None`` sends no header (local servers).
    :param timeout: seconds one request may take.
    :param client: an ``httpx.Client`` to use instead of making one (it is not closed here).
    """

    provider = "openai-compatible"
    api_mode = "chat_completions"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        headers = {"User-Agent": f"hermes-hooks/{__version__}"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._owns_client = client is None
        self._client = client or httpx.Client(timeout=timeout)
        self._headers = headers

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
            settings.base_url or "", settings.name or "", api_key=api_key, timeout=settings.timeout
        )

    def close(self) -> None:
        """Close the HTTP connections (only when this object made the client)."""
        if self._owns_client:
            self._client.close()

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
        body: dict[str, Any] = {"model": model or self.model, "messages": list(messages)}
        if tools:
            body["tools"] = list(tools)
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": dict(json_schema)},
            }
        url = f"{self.base_url}/chat/completions"
        try:
            response = self._client.post(url, json=body, headers=self._headers)
        except httpx.TimeoutException as exc:
            raise ModelError(
                f"{url} did not answer in time: {exc}", retryable=True, reason="timeout"
            ) from exc
        except httpx.HTTPError as exc:
            raise ModelError(
                f"cannot reach {url}: {exc}", retryable=True, reason="connection"
            ) from exc
        if response.status_code >= 400:
            status = response.status_code
            raise ModelError(
                f"{url} answered HTTP {status}: {_error_text(response)}",
                status_code=status,
                retryable=status in _RETRYABLE_STATUS,
                reason=_reason_for(status),
            )
        return self._parse(response, url)

    @staticmethod
    def _parse(response: httpx.Response, url: str) -> ModelResponse:
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(
                f"{url} did not send a chat completion: {response.text[:_MAX_ERROR_TEXT]!r}",
                status_code=response.status_code,
                reason="bad_response",
            ) from exc
        if not isinstance(message, Mapping):
            raise ModelError(f"{url} sent a message that is not an object", reason="bad_response")
        usage = data.get("usage")
        served = data.get("model")
        finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
        return ModelResponse(
            text=message_text(message),
            tool_calls=_parse_tool_calls(message.get("tool_calls")),
            finish_reason=finish if isinstance(finish, str) else None,
            model=served if isinstance(served, str) else None,
            usage=json.loads(dumps(usage)) if isinstance(usage, Mapping) else None,
        )

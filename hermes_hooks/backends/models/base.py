"""The model-provider interface: messages and tools in, text and tool calls out."""

from __future__ import annotations

import abc
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from hermes_hooks.backends.http import DEFAULT_MAX_RESPONSE_BYTES
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins.settings import SECTIONS, keys_of, read_entries, read_mapping

__all__ = [
    "DEFAULT_PROVIDER",
    "ModelBackend",
    "ModelError",
    "ModelProvider",
    "ModelResponse",
    "ModelSettings",
    "ProviderEntry",
    "StreamSink",
    "ToolCall",
    "dumps",
    "message_text",
]

StreamSink = Callable[[str, str], None]
"""Told each piece of a streaming answer as it arrives: ``(delta, kind)``, where ``kind`` is
``"text"`` or ``"reasoning"``."""

DEFAULT_PROVIDER: Final = "offline"

DEFAULT_DEADLINE: Final = 300.0
"""Seconds one model request may take in all when ``model.timeout`` is not set."""
"""The provider used when ``config.yaml`` names none: embedded, deterministic, no network."""


@attrs.frozen
class ToolCall:
    """One tool call the model asks for.

    :param id: the model's id for the call, echoed back in the tool result message.
    :param name: the tool's name.
    :param arguments: the arguments as the JSON text the model sent.
    """

    id: str
    name: str
    arguments: str = "{}"

    def to_message(self) -> dict[str, Any]:
        """Return the call in OpenAI's ``tool_calls`` shape."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@attrs.frozen
class ModelResponse:
    """What one model request returned, normalized.

    :param text: the assistant text (``""`` when it only calls tools).
    :param tool_calls: the tool calls it asks for, in order.
    :param finish_reason: the provider's reason, e.g. ``"stop"`` or ``"tool_calls"``.
    :param model: the model the provider says it served, when it says.
    :param usage: token usage as the provider reported it, or ``None``.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = "stop"
    model: str | None = None
    usage: Mapping[str, Any] | None = None

    def assistant_message(self) -> dict[str, Any]:
        """Return the response as an OpenAI assistant message for the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [call.to_message() for call in self.tool_calls]
        return message


class ModelError(HermesHooksError):
    """A model request failed.

    :param message: what went wrong, for people.
    :param status_code: the HTTP status, when there was one.
    :param retryable: whether trying again may succeed (timeouts, rate limits, 5xx).
    :param reason: a short class of failure: ``"timeout"``, ``"connection"``,
        ``"rate_limit"``, ``"auth"``, ``"server_error"``, ``"bad_request"``,
        ``"bad_response"``, ``"unsupported"``.
    :param retry_after: the seconds the server asked to wait (``Retry-After``), when it did.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retryable: bool = False,
        reason: str = "error",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retryable = retryable
        self.reason = reason
        self.retry_after = retry_after


class ModelProvider(abc.ABC):
    """A chat model the host can ask: the one interface every provider implements.

    Subclasses set :attr:`provider` (the name in ``model.provider``), :attr:`model`,
    :attr:`base_url` and :attr:`api_mode`, and implement :meth:`complete`.
    """

    provider: str = ""
    model: str = ""
    base_url: str = ""
    api_mode: str = "chat_completions"

    @abc.abstractmethod
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
        """Return the model's answer to ``messages``, given the ``tools`` it may call.

        :param messages: the conversation in OpenAI chat format.
        :param tools: OpenAI function definitions of the tools offered.
        :param model: another model of the same provider, instead of :attr:`model`.
        :param json_schema: ask for a JSON answer that fits this schema.
        :raises ModelError: the request failed.
        """

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
        """Return the model's answer as :meth:`complete` does, telling ``on_delta`` its text as
        it arrives.

        A provider that cannot stream (this default) answers whole and tells ``on_delta`` the
        text in one piece. ``on_delta`` runs on the token path: it must return quickly.

        :raises ModelError: the request failed (possibly after some deltas were told).
        """
        response = self.complete(
            messages, tools, model=model, temperature=temperature, max_tokens=max_tokens
        )
        if response.text:
            on_delta(response.text, "text")
        return response

    def close(self) -> None:  # noqa: B027 - most providers hold nothing to release
        """Release what the provider holds (connections); it is not used afterwards."""

    def describe(self) -> str:
        """Return ``provider/model`` for messages and logs."""
        return f"{self.provider}/{self.model}"


class ModelBackend(abc.ABC):
    """A provider ``model.provider`` can name: it builds the model from the ``model:`` settings.

    The providers of the models family. ``offline`` and ``openai-compatible`` are the host's;
    :func:`hermes_hooks.backends.models.register_provider` adds one from a factory.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The name ``model.provider`` takes: lower case, no spaces."""

    @property
    def display_name(self) -> str:
        """Human-readable label; ``name`` by default."""
        return self.name

    def is_available(self) -> bool:
        """Return whether the backend can build a model now."""
        return True

    @abc.abstractmethod
    def create(self, settings: ModelSettings) -> ModelProvider:
        """Return the model ``settings`` describe.

        :raises ConfigError: the settings do not fit this provider.
        """


def message_text(message: Mapping[str, Any]) -> str:
    """Return the text of a chat message whose content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


@attrs.frozen
class ProviderEntry:
    """One profile's entry in the top-level ``providers:`` section of ``config.yaml``.

    :param base_url: the endpoint, instead of the profile's (a local server, a proxy).
    :param api_key_env: the variable holding its key, instead of the profile's ``env_vars``.
    :param default: the model to use when the caller names none (``model`` works too).
    """

    base_url: str | None = None
    api_key_env: str | None = None
    default: str | None = None

    @classmethod
    def read_section(
        cls, config: Mapping[str, Any], source: Path | None = None
    ) -> dict[str, ProviderEntry]:
        """Read the ``providers:`` section (by the settings table): profile names to entries.

        Fields this host does not read (Hermes' custom providers have more) are left alone.

        :raises ConfigError: the section or an entry is not a mapping, or a field read here is
            not a string.
        """

        def text(value: object) -> str | None:
            return (value.strip() or None) if isinstance(value, str) else None

        return {
            name.strip().lower(): cls(
                base_url=text(values["base_url"]),
                api_key_env=text(values["api_key_env"]),
                default=text(values["default"]) or text(values["model"]),
            )
            for name, values in read_entries(config, "providers", source=source).items()
        }


@attrs.frozen
class ModelSettings:
    """The ``model:`` section of ``config.yaml``.

    :param provider: which provider runs the model (``offline``, ``openai-compatible``, ...).
    :param name: the model id sent to the provider (``model.name``; Hermes' ``model.model``
        and ``model.default`` are read too).
    :param base_url: the provider's endpoint, e.g. ``http://127.0.0.1:8080/v1``.
    :param api_key_env: the environment variable holding the API key; the key itself is never
        written in ``config.yaml``.
    :param timeout: the read timeout: seconds to wait for the server's answer
        (``model.read_timeout``, or ``model.timeout``).
    :param deadline: seconds the whole request may take, connect, headers and body
        (``model.timeout``; 300 s when it is not set), so a server that sends a byte a second
        is cut off; see :mod:`hermes_hooks.backends.http`.
    :param max_response_bytes: the most bytes of one answer, once decoded
        (``model.max_response_bytes``, 64 MiB by default): a gzip bomb or a huge body is
        refused at the bound.
    :param connect_timeout: seconds to wait for a connection (``model.connect_timeout``).
    :param max_retries: how often a retryable failure is tried again.
    :param retry_backoff: seconds before the first retry, doubled for each further one.
    :param entries: the top-level ``providers:`` section: per profile, its ``base_url``,
        ``api_key_env`` and ``default`` model, used whichever provider ``model.provider``
        names (``ctx.llm`` may ask another one).
    """

    provider: str = DEFAULT_PROVIDER
    name: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    retry_backoff: float = 1.0
    temperature: float | None = None
    max_tokens: int | None = None
    connect_timeout: float = 10.0
    deadline: float = DEFAULT_DEADLINE
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    entries: Mapping[str, ProviderEntry] = attrs.field(factory=dict, hash=False)

    def entry(self, name: str) -> ProviderEntry:
        """Return ``providers.<name>`` (empty when the section has none)."""
        return self.entries.get(name.strip().lower(), ProviderEntry())

    @property
    def model(self) -> str | None:
        """The model id (:attr:`name`), as the models family's settings give it."""
        return self.name

    def choice(self, selection: object) -> str | None:
        """Return the provider ``model.provider`` names (the models family's one key)."""
        return self.provider

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, source: Path | None = None) -> ModelSettings:
        """Build the settings from a whole configuration (its ``model`` key).

        A string ``model: NAME`` is the model name with the default provider.

        :raises ConfigError: a value has the wrong type.
        """
        entries = ProviderEntry.read_section(config, source)
        section = config.get("model")
        read, _ = read_mapping(
            keys_of("model", SECTIONS["model"].names, defaults=False), section, source=source
        )
        if section is None:
            return cls(entries=entries)
        if isinstance(section, str):
            return cls(name=section, entries=entries)

        def first(*fields: str) -> Any:
            return next((read[f] for f in fields if read[f] is not None), None)

        def given(field: str) -> Any:  # the value, else the table's default
            key = SECTIONS["model"].key(field)
            assert key is not None
            return key.default if read[field] is None else read[field]

        timeout = first("read_timeout", "timeout")
        return cls(
            provider=(read["provider"] or DEFAULT_PROVIDER).strip().lower(),
            name=first("name", "model", "default"),
            base_url=read["base_url"],
            api_key_env=read["api_key_env"],
            timeout=timeout if timeout is not None else given("read_timeout"),
            max_retries=given("max_retries"),
            retry_backoff=float(given("retry_backoff")),
            temperature=read["temperature"],
            max_tokens=read["max_tokens"],
            connect_timeout=given("connect_timeout"),
            deadline=read["timeout"] if read["timeout"] is not None else DEFAULT_DEADLINE,
            max_response_bytes=given("max_response_bytes"),
            entries=entries,
        )


def dumps(value: object) -> str:
    """JSON text for tool results and arguments: compact, UTF-8 kept, unknown types as text."""
    return json.dumps(value, ensure_ascii=False, default=str)

"""The model-provider interface: messages and tools in, text and tool calls out."""

from __future__ import annotations

import abc
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from hermes_hooks.backends.http import DEFAULT_MAX_RESPONSE_BYTES
from hermes_hooks.errors import ConfigError, HermesHooksError

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


def _optional(value: object, kind: type | tuple[type, ...], field: str, where: str) -> Any:
    if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
        return value
    expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
    raise ConfigError(
        f"{where}: model.{field} must be {expected}, found {type(value).__name__} {value!r}"
    )


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
    def read_section(cls, section: object, where: str) -> dict[str, ProviderEntry]:
        """Read the ``providers:`` section: a mapping of profile names to entries.

        Fields this host does not read (Hermes' custom providers have more) are left alone.

        :raises ConfigError: the section or an entry is not a mapping, or a field read here is
            not a string.
        """
        if section is None:
            return {}
        if not isinstance(section, Mapping):
            raise ConfigError(
                f"{where}: providers must be a mapping of provider names to their settings "
                f"(base_url, api_key_env, default), found {type(section).__name__}"
            )
        entries: dict[str, ProviderEntry] = {}
        for name, entry in section.items():
            if not isinstance(entry, Mapping):
                raise ConfigError(
                    f"{where}: providers.{name} must be a mapping (base_url, api_key_env, "
                    f"default), found {type(entry).__name__}"
                )
            values: dict[str, str | None] = {}
            for field in ("base_url", "api_key_env", "default", "model"):
                raw = entry.get(field)
                if raw is not None and not isinstance(raw, str):
                    raise ConfigError(
                        f"{where}: providers.{name}.{field} must be a string, found "
                        f"{type(raw).__name__} {raw!r}"
                    )
                values[field] = raw.strip() or None if isinstance(raw, str) else None
            entries[str(name).strip().lower()] = cls(
                base_url=values["base_url"],
                api_key_env=values["api_key_env"],
                default=values["default"] or values["model"],
            )
        return entries


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
        where = str(source) if source is not None else "config.yaml"
        entries = ProviderEntry.read_section(config.get("providers"), where)
        section = config.get("model")
        if section is None:
            return cls(entries=entries)
        if isinstance(section, str):
            return cls(name=section, entries=entries)
        if not isinstance(section, Mapping):
            raise ConfigError(
                f"{where}: model must be a mapping (provider, name, base_url, ...), found "
                f"{type(section).__name__}"
            )
        provider = _optional(section.get("provider"), str, "provider", where)
        name = section.get("name", section.get("model", section.get("default")))
        timeout = _positive(section, ("read_timeout", "timeout"), where)
        whole = _positive(section, ("timeout",), where)
        size = _optional(section.get("max_response_bytes"), int, "max_response_bytes", where)
        if size is not None and size <= 0:
            raise ConfigError(f"{where}: model.max_response_bytes must be above 0, found {size}")
        connect = _positive(section, ("connect_timeout",), where)
        retries = _optional(section.get("max_retries"), int, "max_retries", where)
        backoff = _optional(section.get("retry_backoff"), (int, float), "retry_backoff", where)
        temperature = _optional(section.get("temperature"), (int, float), "temperature", where)
        if retries is not None and retries < 0:
            raise ConfigError(f"{where}: model.max_retries must be 0 or more, found {retries}")
        return cls(
            provider=(provider or DEFAULT_PROVIDER).strip().lower(),
            name=_optional(name, str, "name", where),
            base_url=_optional(section.get("base_url"), str, "base_url", where),
            api_key_env=_optional(section.get("api_key_env"), str, "api_key_env", where),
            timeout=float(timeout) if timeout is not None else 60.0,
            max_retries=retries if retries is not None else 2,
            retry_backoff=float(backoff) if backoff is not None else 1.0,
            temperature=float(temperature) if temperature is not None else None,
            max_tokens=_optional(section.get("max_tokens"), int, "max_tokens", where),
            connect_timeout=connect if connect is not None else 10.0,
            deadline=whole if whole is not None else DEFAULT_DEADLINE,
            max_response_bytes=size if size is not None else DEFAULT_MAX_RESPONSE_BYTES,
            entries=entries,
        )


def _positive(section: Mapping[str, Any], keys: tuple[str, ...], where: str) -> float | None:
    """Return the first of ``keys`` set in ``section``, a number of seconds above 0."""
    for key in keys:
        value = _optional(section.get(key), (int, float), key, where)
        if value is None:
            continue
        if value <= 0:
            raise ConfigError(f"{where}: model.{key} must be more than 0 seconds, found {value}")
        return float(value)
    return None


def dumps(value: object) -> str:
    """JSON text for tool results and arguments: compact, UTF-8 kept, unknown types as text."""
    return json.dumps(value, ensure_ascii=False, default=str)

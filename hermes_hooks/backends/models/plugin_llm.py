"""``ctx.llm``: model calls for plugins, on the host's active model, under a trust policy.

Hermes' ``agent.plugin_llm``: a plugin gets the model the host runs (or, with no host
running, the one ``config.yaml`` names), sync (:meth:`PluginLlm.complete`,
:meth:`PluginLlm.complete_structured`) or async (``acomplete``, ``acomplete_structured``). It
may steer the provider, the model, the agent id or the auth profile only when the operator
allows it::

    plugins:
      entries:
        my-plugin:
          llm:
            allow_provider_override: true
            allowed_providers: [openrouter, anthropic]   # optional; ["*"] allows any
            allow_model_override: true
            allowed_models: [gpt-4o-mini]            # optional; ["*"] allows any
            allow_agent_id_override: false
            allow_profile_override: false

A missing block means no overrides: asking for one raises :class:`PluginLlmTrustError`.
Provider names are compared as the models family resolves them, so an alias (``claude``)
matches its profile's name (``anthropic``) either way round. Every call is retried as the
host's own requests are (``model.max_retries``, jittered backoff, ``Retry-After``).
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import attrs

from hermes_hooks.backends.models import ModelProvider, get_active_model, get_models
from hermes_hooks.backends.models.base import ModelResponse
from hermes_hooks.backends.models.profile_backend import ProfileBackend
from hermes_hooks.backends.models.retry import call_with_retries
from hermes_hooks.errors import PluginLlmTrustError

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "LlmResult",
    "PluginLlm",
    "PluginLlmImageInput",
    "PluginLlmInput",
    "PluginLlmTextInput",
    "PluginLlmUsage",
    "StructuredResult",
    "TrustPolicy",
]

logger = logging.getLogger(__name__)

_FENCE: Final = re.compile(r"```(?:json)?\s*(.+?)```", re.DOTALL | re.IGNORECASE)
_JSON_ONLY: Final = (
    "Respond with a single JSON object that matches the requested shape. "
    "Do not include prose or markdown fences."
)


def _allowlist(raw: object) -> frozenset[str] | None:
    """``None`` when there is no list (or it holds ``"*"``), else the lower-cased names."""
    if not isinstance(raw, list):
        return None
    names = {item.strip().lower() for item in raw if isinstance(item, str) and item.strip()}
    return None if "*" in names else frozenset(names)


@attrs.frozen
class TrustPolicy:
    """What one plugin may steer, from ``plugins.entries.<id>.llm``; nothing by default."""

    plugin_id: str
    allow_provider_override: bool = False
    allowed_providers: frozenset[str] | None = None
    allow_model_override: bool = False
    allowed_models: frozenset[str] | None = None
    allow_agent_id_override: bool = False
    allow_profile_override: bool = False

    @classmethod
    def from_entry(cls, plugin_id: str, entry: Mapping[str, Any]) -> TrustPolicy:
        """Read the policy from the plugin's config entry (a missing ``llm`` block denies)."""
        section = entry.get("llm")
        if not isinstance(section, Mapping):
            return cls(plugin_id)
        return cls(
            plugin_id,
            allow_provider_override=section.get("allow_provider_override") is True,
            allowed_providers=_allowlist(section.get("allowed_providers")),
            allow_model_override=section.get("allow_model_override") is True,
            allowed_models=_allowlist(section.get("allowed_models")),
            allow_agent_id_override=section.get("allow_agent_id_override") is True,
            allow_profile_override=section.get("allow_profile_override") is True,
        )

    def check(
        self,
        provider: str | None,
        model: str | None,
        agent_id: str | None = None,
        profile: str | None = None,
        *,
        canonical: Callable[[str], str] | None = None,
    ) -> None:
        """Allow the requested overrides, or raise naming the setting that would allow them.

        :param canonical: maps a provider name to the one it stands for (an alias to its
            profile's name), applied to the request and the allow-list alike.
        :raises PluginLlmTrustError: an override the operator has not allowed.
        """
        where = f"plugins.entries.{self.plugin_id}.llm"
        for kind, requested, allowed in (
            ("agent id", agent_id, self.allow_agent_id_override),
            ("auth profile", profile, self.allow_profile_override),
        ):
            if requested and not allowed:
                setting = "agent_id" if kind == "agent id" else "profile"
                raise PluginLlmTrustError(
                    f"plugin {self.plugin_id!r} may not choose the {kind} (asked for "
                    f"{requested!r}): set {where}.allow_{setting}_override: true in config.yaml"
                )
        for kind, requested, allowed, listed in (
            ("provider", provider, self.allow_provider_override, self.allowed_providers),
            ("model", model, self.allow_model_override, self.allowed_models),
        ):
            if not requested:
                continue
            if not allowed:
                raise PluginLlmTrustError(
                    f"plugin {self.plugin_id!r} may not choose the {kind} (asked for "
                    f"{requested!r}): set {where}.allow_{kind}_override: true in config.yaml"
                )
            wanted = requested.strip().lower()
            if listed is not None and kind == "provider" and canonical is not None:
                listed = frozenset({*listed, *map(canonical, listed)})
                wanted = canonical(wanted)
            if listed is not None and wanted not in listed:
                raise PluginLlmTrustError(
                    f"plugin {self.plugin_id!r} asked for {kind} {requested!r}, which is not in "
                    f"{where}.allowed_{kind}s ({', '.join(sorted(listed)) or 'empty'})"
                )


def _count(usage: Mapping[str, Any], *names: str) -> int:
    for name in names:
        value = usage.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value:
            return int(value)
    return 0


@attrs.frozen
class PluginLlmUsage:
    """Token usage of one completion (Hermes' ``PluginLlmUsage``); zeros when not reported."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None

    @classmethod
    def from_mapping(cls, usage: Mapping[str, Any] | None) -> PluginLlmUsage:
        """Read OpenAI (``prompt_tokens``) or Anthropic (``input_tokens``) shaped usage."""
        if not usage:
            return cls()
        given = _count(usage, "prompt_tokens", "input_tokens")
        produced = _count(usage, "completion_tokens", "output_tokens")
        return cls(
            input_tokens=given,
            output_tokens=produced,
            total_tokens=_count(usage, "total_tokens") or given + produced,
            cache_read_tokens=_count(usage, "cache_read_input_tokens", "cache_read_tokens"),
            cache_write_tokens=_count(usage, "cache_creation_input_tokens", "cache_write_tokens"),
        )


@attrs.frozen
class PluginLlmTextInput:
    """A text block of :meth:`PluginLlm.complete_structured`'s ``input``."""

    text: str
    type: str = "text"


@attrs.frozen
class PluginLlmImageInput:
    """An image block: ``data`` (bytes, with ``mime_type``) or ``url`` (http(s) or ``data:``)."""

    data: bytes | None = None
    url: str | None = None
    mime_type: str = "image/png"
    file_name: str = ""
    type: str = "image"


PluginLlmInput: TypeAlias = PluginLlmTextInput | PluginLlmImageInput | Mapping[str, Any] | str
"""One input block: the classes above, or a dict of the same shape, or a plain string."""


@attrs.frozen
class LlmResult:
    """What :meth:`PluginLlm.complete` returns (Hermes' ``PluginLlmCompleteResult``)."""

    text: str
    provider: str
    model: str
    usage: PluginLlmUsage = attrs.field(factory=PluginLlmUsage)
    audit: Mapping[str, str] = attrs.field(factory=dict)
    agent_id: str = "default"


@attrs.frozen
class StructuredResult:
    """What :meth:`PluginLlm.complete_structured` returns (``PluginLlmStructuredResult``).

    :param parsed: the JSON value, when a JSON answer was asked for and could be parsed.
    :param content_type: ``"json"`` when ``parsed`` is set, else ``"text"``.
    """

    text: str
    provider: str
    model: str
    parsed: Any = None
    content_type: str = "text"
    usage: PluginLlmUsage = attrs.field(factory=PluginLlmUsage)
    audit: Mapping[str, str] = attrs.field(factory=dict)
    agent_id: str = "default"


def _input_part(block: object) -> dict[str, Any]:
    if isinstance(block, PluginLlmTextInput):
        return {"type": "text", "text": block.text}
    if isinstance(block, PluginLlmImageInput):
        block = {
            "type": "image",
            "data": block.data,
            "url": block.url,
            "mime_type": block.mime_type,
        }
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if not isinstance(block, Mapping):
        raise ValueError(f"an input block must be a str or a dict, found {type(block).__name__}")
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return {"type": "text", "text": block["text"]}
    if kind == "image":
        url = block.get("url")
        data = block.get("data")
        if isinstance(data, bytes | bytearray):
            mime = block.get("mime_type") or "image/png"
            url = f"data:{mime};base64,{base64.b64encode(bytes(data)).decode('ascii')}"
        if isinstance(url, str) and url:
            return {"type": "image_url", "image_url": {"url": url}}
        raise ValueError("an image input block needs 'data' (bytes) or 'url'")
    raise ValueError(f"unknown input block {dict(block)!r}: expected type 'text' or 'image'")


def _parse_json(text: str, schema: Mapping[str, Any] | None) -> Any:
    fenced = _FENCE.search(text)
    try:
        parsed = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        return None
    if schema is not None:
        try:
            jsonschema: Any = importlib.import_module("jsonschema")
        except ImportError:  # optional, as in Hermes: without it the shape is not checked
            logger.debug("jsonschema is not installed; the structured answer is not validated")
        else:
            try:
                jsonschema.validate(parsed, schema)
            except jsonschema.ValidationError as exc:
                raise ValueError(
                    f"the structured answer does not fit the schema: {exc.message}"
                ) from exc
    return parsed


class PluginLlm:
    """Model access for one plugin (``ctx.llm``); build it through the plugin's context.

    :param manager: the plugin manager of the host.
    :param plugin_id: the plugin's key, whose trust policy applies.
    """

    def __init__(self, manager: PluginManager, plugin_id: str) -> None:
        self._manager = manager
        self._plugin_id = plugin_id

    def policy(self) -> TrustPolicy:
        """Return the plugin's trust policy as the manager's config has it now."""
        entry = self._manager.plugins_config.entry(self._plugin_id)
        return TrustPolicy.from_entry(self._plugin_id, entry)

    def _canonical(self, name: str) -> str:
        """The name ``name`` stands for in the models family (itself when unknown)."""
        key = name.strip().lower()
        return get_models(self._manager).canonical(key) or key

    def _target(self, provider: str | None) -> tuple[ModelProvider, bool]:
        """Return the model to ask and whether it was made for this call (to close after)."""
        active = get_active_model(self._manager)
        wanted = self._canonical(provider) if provider else None
        if active is not None and (wanted is None or wanted == active.provider):
            return active, False
        registry = get_models(self._manager)
        settings = registry.settings()
        if wanted is not None and wanted != self._canonical(settings.provider):
            settings = attrs.evolve(settings, provider=wanted)
            if isinstance(registry.get_provider(wanted), ProfileBackend):
                # model.default, base_url and api_key_env are model.provider's; another
                # profile has its own (providers.<name> in config.yaml, else the profile's).
                settings = attrs.evolve(settings, name=None, base_url=None, api_key_env=None)
        return registry.create_model(settings), True

    def _call(
        self,
        messages: Sequence[Mapping[str, Any]],
        provider: str | None,
        model: str | None,
        *,
        agent_id: str | None = None,
        profile: str | None = None,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> tuple[str, str, str, PluginLlmUsage]:
        self.policy().check(provider, model, agent_id, profile, canonical=self._canonical)
        target, made = self._target(provider)
        settings = get_models(self._manager).settings()

        def ask() -> ModelResponse:
            return target.complete(
                messages,
                model=model or None,
                temperature=temperature,
                max_tokens=max_tokens,
                json_schema=json_schema,
            )

        try:
            response = call_with_retries(
                ask, max_retries=settings.max_retries, backoff=settings.retry_backoff
            )
        finally:
            if made:
                target.close()
        served = response.model or model or target.model
        return response.text, target.provider, served, PluginLlmUsage.from_mapping(response.usage)

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        provider: str | None = None,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        agent_id: str | None = None,
        profile: str | None = None,
        purpose: str | None = None,
    ) -> LlmResult:
        """Run a chat completion (OpenAI-format ``messages``) on the host's active model.

        :param timeout: accepted as Hermes takes it; the model provider's own timeout applies.
        :param agent_id: run as another agent (needs ``allow_agent_id_override``); recorded on
            the result, as this host runs one agent.
        :param profile: the auth profile to use (needs ``allow_profile_override``); recorded
            in the audit.
        :raises PluginLlmTrustError: an override not allowed for this plugin.
        :raises ModelError: the model request failed.
        """
        text, used_provider, used_model, usage = self._call(
            messages,
            provider,
            model,
            agent_id=agent_id,
            profile=profile,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        logger.info(
            "plugin %r ctx.llm.complete on %s/%s (%d tokens)",
            self._plugin_id,
            used_provider,
            used_model,
            usage.total_tokens,
        )
        return LlmResult(
            text=text,
            provider=used_provider,
            model=used_model,
            usage=usage,
            audit={
                "plugin_id": self._plugin_id,
                "purpose": purpose or "",
                "profile": profile or "",
            },
            agent_id=agent_id or "default",
        )

    def complete_structured(
        self,
        instructions: str,
        input: Sequence[PluginLlmInput],  # Hermes' name for it, though it shadows input()
        json_schema: Mapping[str, Any] | None = None,
        *,
        json_mode: bool = False,
        schema_name: str | None = None,
        system_prompt: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        agent_id: str | None = None,
        profile: str | None = None,
        purpose: str | None = None,
    ) -> StructuredResult:
        """Run a bounded completion over ``input`` blocks; parse JSON when it is asked for.

        :param instructions: what to do with the input.
        :param input: text (``str``, :class:`PluginLlmTextInput` or ``{"type": "text",
            "text"}``) and image (:class:`PluginLlmImageInput` or ``{"type": "image", "url" |
            "data"}``) blocks.
        :param json_schema: ask for a JSON answer of this shape (validated when the optional
            ``jsonschema`` package is installed).
        :param schema_name: named to the model next to the instructions, and in the audit.
        :raises ValueError: no instructions, no input, a bad block, or (with ``jsonschema``)
            an answer that does not fit the schema.
        :raises PluginLlmTrustError: an override not allowed for this plugin.
        """
        if not instructions or not instructions.strip():
            raise ValueError("complete_structured needs non-empty instructions")
        if not input:
            raise ValueError("complete_structured needs at least one input block")
        wants_json = json_mode or json_schema is not None
        system = [part for part in (system_prompt, _JSON_ONLY if wants_json else None) if part]
        header = instructions.strip()
        if schema_name:
            header += f"\n\nSchema name: {schema_name}"
        if json_schema is not None:
            header += "\n\nJSON schema:\n" + json.dumps(json_schema, sort_keys=True, default=str)
        user = [{"type": "text", "text": header}, *(_input_part(block) for block in input)]
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": "\n\n".join(system)})
        messages.append({"role": "user", "content": user})
        text, used_provider, used_model, usage = self._call(
            messages,
            provider,
            model,
            agent_id=agent_id,
            profile=profile,
            json_schema=json_schema,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        parsed = _parse_json(text, json_schema) if wants_json else None
        return StructuredResult(
            text=text,
            provider=used_provider,
            model=used_model,
            parsed=parsed,
            content_type="json" if parsed is not None else "text",
            usage=usage,
            audit={
                "plugin_id": self._plugin_id,
                "purpose": purpose or "",
                "profile": profile or "",
                "schema_name": schema_name or "",
            },
            agent_id=agent_id or "default",
        )

    async def acomplete(self, messages: Sequence[Mapping[str, Any]], **options: Any) -> LlmResult:
        """Async :meth:`complete` (same keywords), for plugins on an event loop.

        The model call runs on a worker thread, so the loop is not blocked.
        """
        return await asyncio.to_thread(self.complete, messages, **options)

    async def acomplete_structured(
        self, instructions: str, input: Sequence[PluginLlmInput], **options: Any
    ) -> StructuredResult:
        """Async :meth:`complete_structured` (same keywords), for plugins on an event loop."""
        return await asyncio.to_thread(self.complete_structured, instructions, input, **options)

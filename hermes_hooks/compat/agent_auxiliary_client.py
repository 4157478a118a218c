"""Hermes' ``agent.auxiliary_client``, the part plugins use: a side call to a model.

``call_llm(task=..., messages=...)`` runs one chat completion outside the conversation (a
summary, a title, a classification) and answers in the OpenAI SDK's shape
(``response.choices[0].message.content``, ``.usage``, ``.model``), as Hermes' does. The model
is the one ``auxiliary.<task>.provider`` / ``auxiliary.<task>.model`` name in ``config.yaml``
(``auto``, or nothing, means the host's model), unless ``provider`` / ``model`` are given; it
is built by the models family of the current manager, so any model-provider plugin serves.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any, Final

import attrs

from hermes_hooks.backends.models import ModelProvider, get_active_model, get_models
from hermes_hooks.backends.models.base import ModelResponse
from hermes_hooks.backends.models.profile_backend import ProfileBackend
from hermes_hooks.backends.models.retry import call_with_retries
from hermes_hooks.compat import hermes_cli_config
from hermes_hooks.compat.current import require_manager

__all__ = ["async_call_llm", "call_llm", "extract_content_or_reasoning"]

_THINK: Final = re.compile(
    r"<(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)>.*?"
    r"</(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)>",
    re.DOTALL | re.IGNORECASE,
)


def _task_config(task: str | None) -> Mapping[str, Any]:
    if not task:
        return {}
    section = hermes_cli_config.load_config().get("auxiliary")
    entry = section.get(task) if isinstance(section, dict) else None
    return entry if isinstance(entry, dict) else {}


def _model_for(provider: str | None, base_url: str | None) -> tuple[ModelProvider, bool]:
    """The model to ask and whether it was built for this call (to close after)."""
    pm = require_manager("agent.auxiliary_client")
    registry = get_models(pm)
    active = get_active_model(pm)
    wanted = (registry.canonical(provider) or provider.strip().lower()) if provider else None
    if active is not None and base_url is None and wanted in (None, active.provider):
        return active, False
    settings = registry.settings()
    if wanted is not None and wanted != registry.canonical(settings.provider):
        settings = attrs.evolve(settings, provider=wanted)
        if isinstance(registry.get_provider(wanted), ProfileBackend):
            settings = attrs.evolve(settings, name=None, base_url=None, api_key_env=None)
    if base_url:
        settings = attrs.evolve(settings, base_url=base_url)
    return registry.create_model(settings), True


def _as_openai(response: ModelResponse, model: str) -> SimpleNamespace:
    calls = [
        SimpleNamespace(
            id=call.id,
            type="function",
            function=SimpleNamespace(name=call.name, arguments=call.arguments),
        )
        for call in response.tool_calls
    ]
    message = SimpleNamespace(
        role="assistant", content=response.text, tool_calls=calls or None, reasoning=None
    )
    usage = dict(response.usage or {})
    return SimpleNamespace(
        choices=[SimpleNamespace(index=0, message=message, finish_reason=response.finish_reason)],
        model=response.model or model,
        usage=SimpleNamespace(
            prompt_tokens=int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0),
            completion_tokens=int(
                usage.get("completion_tokens") or usage.get("output_tokens") or 0
            ),
            total_tokens=int(usage.get("total_tokens") or 0),
        ),
    )


def call_llm(
    task: str | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    main_runtime: Mapping[str, Any] | None = None,
    messages: Sequence[Mapping[str, Any]],
    temperature: float | None = None,
    max_tokens: int | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    timeout: float | None = None,
    extra_body: Mapping[str, Any] | None = None,
    reasoning_config: Mapping[str, Any] | None = None,
    api_mode: str | None = None,
    stream: bool = False,
    stream_options: Mapping[str, Any] | None = None,
) -> Any:
    """Run one chat completion and return it in the OpenAI SDK's shape.

    :param task: the auxiliary task (``compression``, ``vision``, ``call``...), whose
        ``auxiliary.<task>`` settings choose the provider and model.
    :param api_key, main_runtime, timeout, extra_body, reasoning_config, api_mode,
        stream_options: accepted as Hermes takes them; the model's own configuration applies.
    :raises ModelError: the request failed (after the family's retries).
    :raises ConfigError: the provider named is unknown, or its settings do not fit.
    :raises ValueError: ``stream=True``: streaming is not served here.
    """
    if stream:
        raise ValueError("agent.auxiliary_client.call_llm(stream=True) is not served")
    config = _task_config(task)
    configured = str(config.get("provider") or "").strip()
    chosen_provider = provider or (configured if configured not in ("", "auto") else None)
    chosen_model = model or (str(config.get("model") or "").strip() or None)
    chosen_url = base_url or (str(config.get("base_url") or "").strip() or None)
    target, made = _model_for(chosen_provider, chosen_url)
    pm = require_manager("agent.auxiliary_client")
    settings = get_models(pm).settings()

    def ask() -> ModelResponse:
        return target.complete(
            messages,
            tuple(tools or ()),
            model=chosen_model,
            temperature=temperature,
            max_tokens=max_tokens,
        )

    try:
        answer = call_with_retries(
            ask, max_retries=settings.max_retries, backoff=settings.retry_backoff
        )
    finally:
        if made:
            target.close()
    return _as_openai(answer, chosen_model or target.model)


async def async_call_llm(
    task: str | None = None,
    *,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    main_runtime: Mapping[str, Any] | None = None,
    messages: Sequence[Mapping[str, Any]],
    temperature: float | None = None,
    max_tokens: int | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    timeout: float | None = None,
    extra_body: Mapping[str, Any] | None = None,
    reasoning_config: Mapping[str, Any] | None = None,
) -> Any:
    """:func:`call_llm`, run off the event loop (the current manager goes with it)."""
    return await asyncio.to_thread(
        call_llm,
        task,
        provider=provider,
        model=model,
        base_url=base_url,
        api_key=api_key,
        main_runtime=main_runtime,
        messages=messages,
        temperature=temperature,
        max_tokens=max_tokens,
        tools=tools,
        timeout=timeout,
        extra_body=extra_body,
        reasoning_config=reasoning_config,
    )


def extract_content_or_reasoning(response: Any) -> str:
    """Return a response's text: its content without inline think blocks, else its reasoning.

    The reasoning is read from ``message.reasoning``, ``message.reasoning_content`` and the
    ``text``/``summary`` of ``message.reasoning_details``; ``""`` when there is nothing.
    """
    message = response.choices[0].message
    content = (getattr(message, "content", None) or "").strip()
    if content:
        cleaned = _THINK.sub("", content).strip()
        if cleaned:
            return cleaned
    parts: list[str] = []
    for field in ("reasoning", "reasoning_content"):
        value = getattr(message, field, None)
        if isinstance(value, str) and value.strip() and value.strip() not in parts:
            parts.append(value.strip())
    details = getattr(message, "reasoning_details", None)
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, Mapping):
            text = detail.get("summary") or detail.get("content") or detail.get("text")
            if isinstance(text, str) and text.strip() and text.strip() not in parts:
                parts.append(text.strip())
    return "\n\n".join(parts)

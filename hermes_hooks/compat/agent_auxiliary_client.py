"""Hermes' ``agent.auxiliary_client``: the side model calls (summaries, titles, extraction).

Hermes resolves a provider and model per auxiliary task (``auxiliary.<task>`` in
``config.yaml``) and returns the OpenAI SDK's response object. Here :func:`call_llm` runs on the
host's active model, through the same path as ``ctx.llm`` (the calling plugin's, or the
host's), and returns an object of the same shape: ``response.choices[0].message.content``,
``response.model``, ``response.usage``. The provider, model, tool and streaming arguments are
accepted and not applied: the active model answers.
"""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace
from typing import Any

from hermes_hooks.compat.current import current_owner, require_manager

__all__ = ["async_call_llm", "call_llm", "extract_content_or_reasoning"]

_THINK_BLOCKS = re.compile(
    r"<(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)>.*?"
    r"</(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)>",
    re.DOTALL | re.IGNORECASE,
)


def call_llm(
    task: str | None = None,
    *,
    messages: list[dict[str, Any]],
    temperature: float | None = None,
    max_tokens: int | None = None,
    timeout: float | None = None,
    **_ignored: Any,
) -> Any:
    """Run one chat completion of ``messages`` on the active model; an OpenAI-shaped response.

    :param task: Hermes' auxiliary task name (``compression``, ``title_generation``...),
        recorded as the call's purpose.
    :raises ModelError: the model request failed.
    """
    from hermes_hooks.backends.models.plugin_llm import PluginLlm

    manager = require_manager("agent.auxiliary_client.call_llm")
    llm = PluginLlm(manager, current_owner(manager))
    result = llm.complete(
        messages,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=timeout,
        purpose=task or "auxiliary",
    )
    message = SimpleNamespace(role="assistant", content=result.text, tool_calls=None)
    usage = SimpleNamespace(
        prompt_tokens=result.usage.input_tokens,
        completion_tokens=result.usage.output_tokens,
        total_tokens=result.usage.total_tokens,
    )
    choice = SimpleNamespace(index=0, message=message, finish_reason="stop")
    return SimpleNamespace(choices=[choice], model=result.model, usage=usage)


async def async_call_llm(task: str | None = None, **kwargs: Any) -> Any:
    """:func:`call_llm` off the event loop (a worker thread), for async callers."""
    return await asyncio.to_thread(call_llm, task, **kwargs)


def extract_content_or_reasoning(response: Any) -> str:
    """The answer's text without inline think blocks; else its structured reasoning
    (``reasoning``, ``reasoning_content``, ``reasoning_details``); else ``""``."""
    message = response.choices[0].message
    content = (getattr(message, "content", None) or "").strip()
    if content:
        cleaned = _THINK_BLOCKS.sub("", content).strip()
        if cleaned:
            return cleaned
    parts: list[str] = []
    for field in ("reasoning", "reasoning_content"):
        value = getattr(message, field, None)
        if isinstance(value, str) and value.strip() and value.strip() not in parts:
            parts.append(value.strip())
    for detail in getattr(message, "reasoning_details", None) or []:
        if isinstance(detail, dict):
            summary = detail.get("summary") or detail.get("content") or detail.get("text")
            if summary and str(summary).strip() not in parts:
                parts.append(str(summary).strip())
    return "\n\n".join(parts)

"""Rough token counts, as Hermes estimates them before a request (``agent/model_metadata.py``).

About four characters a token, rounded up; a message counts its text, its tool calls'
arguments and a few tokens of framing. Real counts come from the model's ``usage`` when it
reports one; these are for when it does not, and for deciding before a request is sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_CONTEXT_LENGTH",
    "MESSAGE_OVERHEAD_TOKENS",
    "estimate_message_tokens",
    "estimate_messages_tokens_rough",
    "estimate_request_tokens_rough",
    "estimate_tokens_rough",
    "get_model_context_length",
    "usage_tokens",
]

CHARS_PER_TOKEN: Final = 4
MESSAGE_OVERHEAD_TOKENS: Final = 4
"""Tokens of framing per message (role, separators)."""
DEFAULT_CONTEXT_LENGTH: Final = 128_000
"""The context window assumed when neither ``model.context_length`` nor the model says."""
IMAGE_TOKEN_ESTIMATE: Final = 1_600
"""What an image part costs, whatever the size of its base64."""

_KNOWN: Final[tuple[tuple[str, int], ...]] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("deepseek", 128_000),
    ("llama", 131_072),
    ("qwen", 131_072),
    ("grok", 131_072),
)


def estimate_tokens_rough(text: object) -> int:
    """Return about how many tokens ``text`` is: its characters divided by four, rounded up."""
    if not text:
        return 0
    rendered = text if isinstance(text, str) else str(text)
    return (len(rendered) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _content_chars(content: object) -> tuple[int, int]:
    """Return (characters, image tokens) of a message's content."""
    if isinstance(content, str):
        return len(content), 0
    if isinstance(content, list):
        chars = images = 0
        for part in content:
            if not isinstance(part, Mapping):
                chars += len(str(part))
            elif part.get("type") in ("image_url", "image", "input_image"):
                images += IMAGE_TOKEN_ESTIMATE
            else:
                chars += len(str(part.get("text", "")))
        return chars, images
    return (len(str(content)) if content else 0), 0


def estimate_message_tokens(message: Mapping[str, Any]) -> int:
    """Return about how many tokens one chat message is, tool calls included."""
    chars, images = _content_chars(message.get("content"))
    for call in message.get("tool_calls") or ():
        if isinstance(call, Mapping):
            function = call.get("function")
            if isinstance(function, Mapping):
                chars += len(str(function.get("name", ""))) + len(
                    str(function.get("arguments", ""))
                )
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN + images + MESSAGE_OVERHEAD_TOKENS


def estimate_messages_tokens_rough(messages: Iterable[Mapping[str, Any]]) -> int:
    """Return about how many tokens a list of chat messages is."""
    return sum(estimate_message_tokens(message) for message in messages)


def estimate_request_tokens_rough(
    messages: Iterable[Mapping[str, Any]],
    *,
    system_prompt: str = "",
    tools: Sequence[Mapping[str, Any]] | None = None,
) -> int:
    """Return about how many tokens a whole request is: messages, system prompt and tools."""
    total = estimate_messages_tokens_rough(messages) + estimate_tokens_rough(system_prompt)
    if tools:
        total += estimate_tokens_rough(json.dumps(list(tools), ensure_ascii=False, default=str))
    return total


def get_model_context_length(model: str | None, configured: int | None = None) -> int:
    """Return the context window of ``model``: ``configured`` (``model.context_length``) when
    given, else a known model family's, else :data:`DEFAULT_CONTEXT_LENGTH`."""
    if configured:
        return configured
    name = (model or "").lower()
    for key, length in _KNOWN:
        if key in name:
            return length
    return DEFAULT_CONTEXT_LENGTH


def usage_tokens(usage: Mapping[str, Any] | None) -> dict[str, int] | None:
    """Return a model's usage as ``prompt_tokens``, ``completion_tokens`` and ``total_tokens``.

    OpenAI's names, or the ``input_tokens``/``output_tokens`` some providers report; ``None``
    when ``usage`` gives no prompt count.
    """
    if not usage:
        return None

    def number(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
                return int(value)
        return None

    prompt = number("prompt_tokens", "input_tokens")
    if prompt is None:
        return None
    completion = number("completion_tokens", "output_tokens") or 0
    total = number("total_tokens") or prompt + completion
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}

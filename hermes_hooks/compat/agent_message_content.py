"""Hermes' ``agent.message_content``: the visible text of a chat message's content.

Content comes as a string, a list of parts (chat completions' ``{"type": "text", "text"}``,
the Responses API's ``input_text``/``output_text``...) or one part; images and audio carry no
text. Parts may be mappings or objects with the same attributes, as in Hermes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["flatten_message_text"]

_NON_TEXT_PART_TYPES: Final = frozenset(
    {"image", "image_url", "input_image", "audio", "input_audio"}
)
_TEXT_KEYS: Final = ("text", "content", "input_text", "output_text", "summary_text")


def _field(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


def _text_of(part: Any) -> str:
    if part is None:
        return ""
    if isinstance(part, str):
        return part
    if str(_field(part, "type") or "").strip().lower() in _NON_TEXT_PART_TYPES:
        return ""
    for key in _TEXT_KEYS:
        text = _field(part, key)
        if isinstance(text, str):
            return text
    return ""


def flatten_message_text(content: Any, *, sep: str = "\n") -> str:
    """Return the text of ``content``: the text parts joined by ``sep``, non-text parts left out.

    ``None`` gives ``""``; an object with no text field gives its ``str()``.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return sep.join(chunk for chunk in (_text_of(part) for part in content) if chunk)
    text = _text_of(content)
    if text:
        return text
    try:
        return str(content)
    except Exception:
        return ""

"""Hermes' ``gateway.platforms.event``: the inbound message types every adapter produces.

The same objects as ``gateway.platforms.base``'s (Hermes moved them here and the base
re-exports them). ``MessageEvent`` has Hermes' current fields; build it with keywords.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from hermes_hooks.compat.gateway_session import SessionSource

__all__ = ["MessageEvent", "MessageType", "ProcessingOutcome"]


class MessageType(Enum):
    """What an inbound message carries."""

    TEXT = "text"
    LOCATION = "location"
    PHOTO = "photo"
    VIDEO = "video"
    AUDIO = "audio"
    VOICE = "voice"
    DOCUMENT = "document"
    STICKER = "sticker"
    COMMAND = "command"


class ProcessingOutcome(Enum):
    """How the gateway's handling of a message ended (``on_processing_complete``)."""

    SUCCESS = "success"
    FAILURE = "failure"
    CANCELLED = "cancelled"


@dataclass
class MessageEvent:
    """One inbound message, as every adapter produces it (Hermes' fields, in Hermes' order)."""

    text: str
    message_type: MessageType = MessageType.TEXT
    user_id: str | None = None
    user_name: str | None = None
    source: SessionSource = None  # type: ignore[assignment]  # Hermes' default; always set
    raw_message: Any = None
    message_id: str | None = None
    platform_update_id: int | None = None
    media_urls: list[str] = field(default_factory=list)
    media_types: list[str] = field(default_factory=list)
    media_text_inlined: list[bool | None] = field(default_factory=list)
    reply_to_message_id: str | None = None
    reply_to_text: str | None = None
    reply_to_author_id: str | None = None
    reply_to_author_name: str | None = None
    reply_to_is_own_message: bool = False
    prompt_response: dict[str, Any] | None = None
    auto_skill: str | list[str] | None = None
    channel_prompt: str | None = None
    channel_context: str | None = None
    internal: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    timestamp: datetime = field(default_factory=datetime.now)
    allow_gateway_control: bool = True

    # This host's short names, kept for plugins written against its earlier gateway event
    # (``event.platform``, ``event.sender``, ``event.chat_id``); Hermes' event has none of them.

    @property
    def platform(self) -> str:
        """The platform's name: ``source.platform.value``."""
        return str(getattr(self.source.platform, "value", self.source.platform))

    @property
    def sender(self) -> str:
        """The sender's id: ``source.user_id`` (the chat's, when there is none)."""
        return self.source.user_id or self.source.chat_id

    @property
    def chat_id(self) -> str:
        """The chat's id: ``source.chat_id``."""
        return self.source.chat_id

    def is_command(self) -> bool:
        """Whether the text is a ``/command`` (and the event may run commands)."""
        return self.allow_gateway_control and (self.text or "").lstrip().startswith("/")

    def get_command(self) -> str | None:
        """The command's name without ``/`` (and without ``@bot``), lowercased; ``None`` for
        plain text or a file path."""
        if not self.is_command():
            return None
        raw = (self.text or "").lstrip().split(maxsplit=1)[0][1:].lower().split("@", 1)[0]
        return None if "/" in raw else raw

    def get_command_args(self) -> str:
        """What follows the command (the whole text for plain text); dashes a phone's
        autocorrect turned into em and en dashes are turned back."""
        if not self.is_command():
            return self.text
        parts = (self.text or "").lstrip().split(maxsplit=1)
        args = parts[1] if len(parts) > 1 else ""
        return args.replace("\u2014\u2014", "--").replace("\u2014", "--").replace("\u2013", "-")

"""Hermes' ``gateway.session``: where a message came from, and the session key of a chat.

``build_session_key`` gives Hermes' keys: ``agent:main:<platform>:dm:<chat_id>`` for a direct
chat (``:<thread_id>`` appended in a thread), and
``agent:main:<platform>:<chat_type>:<chat_id>[:<thread_id>][:<user_id>]`` for a group, where
the user is appended when ``group_sessions_per_user`` (not in a thread unless
``thread_sessions_per_user``). WhatsApp ids are canonicalized first, as in Hermes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_hooks.compat.gateway_config import Platform
from hermes_hooks.compat.gateway_whatsapp_identity import canonical_whatsapp_identifier

__all__ = ["SessionSource", "build_session_key", "is_shared_multi_user_session"]

_CHAT_TYPE_PREFIX = {"group": "group: ", "channel": "channel: "}


@dataclass
class SessionSource:
    """Where a message originated (``event.source``): routes replies, keys the session."""

    platform: Platform
    chat_id: str
    chat_name: str | None = None
    chat_type: str = "dm"
    user_id: str | None = None
    user_name: str | None = None
    thread_id: str | None = None
    chat_topic: str | None = None
    user_id_alt: str | None = None
    chat_id_alt: str | None = None
    is_bot: bool = False
    scope_id: str | None = None
    guild_id: str | None = None
    parent_chat_id: str | None = None
    message_id: str | None = None
    role_authorized: bool = False
    profile: str | None = None

    def __post_init__(self) -> None:
        if self.scope_id is None and self.guild_id is not None:
            self.scope_id = self.guild_id
        elif self.scope_id is not None:
            self.guild_id = self.scope_id

    @property
    def description(self) -> str:
        """A human-readable description: ``DM with ann``, ``group: #hermes``..."""
        if self.platform == Platform.LOCAL:
            return "CLI terminal"
        user = self.user_name or self.user_id or "user"
        chat = self.chat_name or self.chat_id
        desc = (
            f"DM with {user}"
            if self.chat_type == "dm"
            else (f"{_CHAT_TYPE_PREFIX.get(self.chat_type, '')}{chat}")
        )
        return f"{desc}, thread: {self.thread_id}" if self.thread_id else desc

    _FIELDS = (
        "chat_id",
        "chat_name",
        "chat_type",
        "user_id",
        "user_name",
        "thread_id",
        "chat_topic",
    )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"platform": self.platform.value}
        data.update((name, getattr(self, name)) for name in self._FIELDS)
        for name in ("user_id_alt", "chat_id_alt", "parent_chat_id", "message_id", "profile"):
            value = getattr(self, name)
            if value:
                data[name] = value
        if self.scope_id:
            data["scope_id"] = data["guild_id"] = self.scope_id
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionSource:
        optional = (
            "chat_name",
            "user_id",
            "user_name",
            "thread_id",
            "chat_topic",
            "user_id_alt",
            "chat_id_alt",
            "parent_chat_id",
            "message_id",
            "profile",
        )
        values: dict[str, Any] = {name: data.get(name) for name in optional}
        return cls(
            platform=Platform(data["platform"]),
            chat_id=str(data["chat_id"]),
            chat_type=str(data.get("chat_type") or "dm"),
            scope_id=data.get("scope_id", data.get("guild_id")),
            **values,
        )


def _platform_value(platform: object) -> str:
    return str(getattr(platform, "value", platform))


def is_shared_multi_user_session(
    source: SessionSource,
    *,
    group_sessions_per_user: bool = True,
    thread_sessions_per_user: bool = False,
) -> bool:
    """Whether several users share the session of ``source``'s chat."""
    if source.chat_type == "dm":
        return False
    if source.thread_id:
        return not thread_sessions_per_user
    return not group_sessions_per_user


def build_session_key(
    source: SessionSource,
    group_sessions_per_user: bool = True,
    thread_sessions_per_user: bool = False,
) -> str:
    """Return Hermes' session key for ``source`` (see the module's description)."""
    platform = _platform_value(source.platform)
    whatsapp = platform == "whatsapp"
    if source.chat_type == "dm":
        chat_id = source.chat_id
        if whatsapp and chat_id:
            chat_id = canonical_whatsapp_identifier(chat_id) or chat_id
        if chat_id:
            if source.thread_id:
                return f"agent:main:{platform}:dm:{chat_id}:{source.thread_id}"
            return f"agent:main:{platform}:dm:{chat_id}"
        if source.thread_id:
            return f"agent:main:{platform}:dm:{source.thread_id}"
        return f"agent:main:{platform}:dm"
    participant = source.user_id_alt or source.user_id
    if participant and whatsapp:
        participant = canonical_whatsapp_identifier(str(participant)) or participant
    parts = ["agent:main", platform, source.chat_type or "group"]
    if source.chat_id:
        parts.append(str(source.chat_id))
    if source.thread_id:
        parts.append(str(source.thread_id))
    isolate = group_sessions_per_user and not (source.thread_id and not thread_sessions_per_user)
    if isolate and participant:
        parts.append(str(participant))
    return ":".join(parts)

"""Hermes' ``gateway.platforms.whatsapp_common``: WhatsApp behaviour shared by the bridge
adapter and the Cloud API adapter, whatever carries the messages.

:class:`WhatsAppBehaviorMixin` gates DMs and groups (through
:class:`~hermes_hooks.compat.gateway_access_policy_mixin.OwnAccessPolicyMixin`), matches
allow-lists across phone and LID forms (through ``gateway.whatsapp_identity``), detects
mentions and replies to the bot, drops broadcast chats, converts Markdown to WhatsApp's
syntax and budgets chunks for the self-chat reply prefix. The host adapter sets ``config``,
``name``, ``_dm_policy``, ``_group_policy``, ``_allow_from``, ``_group_allow_from``,
``_mention_patterns`` and ``_reply_prefix`` on itself first, as in Hermes.

This host ships no WhatsApp bridge: :func:`resolve_whatsapp_bridge_dir` names the home's
``scripts/whatsapp-bridge`` folder, where a bridge plugin installs it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hermes_hooks.compat.gateway_access_policy_mixin import OwnAccessPolicyMixin
from hermes_hooks.compat.gateway_platforms_shared import (
    decode_json_list_literal,
    extra_or_secret,
    get_scoped_secret,
)
from hermes_hooks.compat.gateway_whatsapp_identity import (
    expand_whatsapp_aliases,
    normalize_whatsapp_identifier,
)
from hermes_hooks.compat.hermes_constants import get_hermes_home

__all__ = [
    "WHATSAPP_BRIDGE_RUNTIME_INPUTS",
    "WhatsAppBehaviorMixin",
    "resolve_whatsapp_bridge_dir",
    "whatsapp_session_is_paired",
]

logger = logging.getLogger(__name__)

_get_wsecret = get_scoped_secret  # Hermes' adapters and tests import it by this name
_extra_or_wsecret = extra_or_secret

_TRUTHY = {"true", "1", "yes", "on"}

WHATSAPP_BRIDGE_RUNTIME_INPUTS: tuple[str, ...] = (
    "allowlist.js",
    "baileys_logger.js",
    "bridge.js",
    "bridge_helpers.js",
    "connection_close.js",
    "outbound_ids.js",
    "owner_message_gate.js",
    "package.json",
    "package-lock.json",
)
"""The files a WhatsApp bridge folder needs to run."""

_INVISIBLE = re.compile(r"[\u200b\u2060\u2063\ufeff]")
_ODD_SPACES = re.compile(r"[\u00a0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000]")
_ITALIC = re.compile(r"(?<!\*)\*(?!\s|\*)([^*\n]*?\S[^*\n]*?)\*(?!\*)")
_MARKDOWN_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\*\*(.+?)\*\*"), r"*\1*"),
    (re.compile(r"__(.+?)__"), r"*\1*"),
    (re.compile(r"~~(.+?)~~"), r"~\1~"),
)
_HEADER = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)
_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")


def _protect(pattern: str, text: str, tag: str) -> tuple[str, list[str]]:
    """Swap every match of ``pattern`` for a NUL-delimited placeholder; return the kept text."""
    kept: list[str] = []

    def hold(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return f"\x00{tag}{len(kept) - 1}\x00"

    return re.sub(pattern, hold, text), kept


def _header_as_bold(match: re.Match[str]) -> str:
    inner = match.group(1).strip()
    while len(inner) > 1 and inner.startswith("*") and inner.endswith("*"):
        inner = inner[1:-1].strip()
    return f"*{inner}*"


class WhatsAppBehaviorMixin(OwnAccessPolicyMixin):
    """What every WhatsApp adapter does the same way; it keeps no state of its own."""

    MAX_MESSAGE_LENGTH: int = 4096
    ALLOW_ALL_ENV_PREFIX = "WHATSAPP"
    supports_code_blocks = True
    DEFAULT_REPLY_PREFIX: str = "☤ *Hermes Agent*\n────────────\n"

    config: Any
    name: str
    _mention_patterns: Any
    _reply_prefix: str | None

    @classmethod
    def _sanitize_outbound_text(cls, content: str) -> str:
        """Drop zero-width format characters and turn odd Unicode spaces into plain ones."""
        if not content:
            return content
        return _ODD_SPACES.sub(" ", _INVISIBLE.sub("", content))

    def _effective_reply_prefix(self) -> str:
        """The prefix of replies in self-chat mode (``WHATSAPP_MODE``, the default); none in
        other modes; ``_reply_prefix``, then ``WHATSAPP_REPLY_PREFIX``, then the default."""
        if (_get_wsecret("WHATSAPP_MODE", "self-chat") or "self-chat") != "self-chat":
            return ""
        if self._reply_prefix is not None:
            return self._reply_prefix.replace("\\n", "\n")
        from_env = _get_wsecret("WHATSAPP_REPLY_PREFIX")
        if from_env is not None:
            return str(from_env).replace("\\n", "\n")
        return self.DEFAULT_REPLY_PREFIX

    def _outgoing_chunk_limit(self) -> int:
        """The chunk size left once the reply prefix is counted (at least 1024)."""
        return max(1024, self.MAX_MESSAGE_LENGTH - len(self._effective_reply_prefix()))

    def _whatsapp_require_mention(self) -> bool:
        configured = self.config.extra.get("require_mention")
        if configured is None:
            configured = _get_wsecret("WHATSAPP_REQUIRE_MENTION", "false") or "false"
        if isinstance(configured, str):
            return configured.lower() in _TRUTHY
        return bool(configured)

    def _whatsapp_free_response_chats(self) -> set[str]:
        """``extra.free_response_chats``, else ``WHATSAPP_FREE_RESPONSE_CHATS`` (CSV)."""
        return self._coerce_allow_list(
            _extra_or_wsecret(
                self.config.extra, "free_response_chats", "WHATSAPP_FREE_RESPONSE_CHATS"
            )
        )

    @staticmethod
    def _coerce_allow_list(raw: Any) -> set[str]:
        """An allow-list from a list, a JSON-list string or a comma-separated string."""
        if raw is None:
            return set()
        raw = decode_json_list_literal(raw)
        parts = raw if isinstance(raw, list) else str(raw).split(",")
        return {str(part).strip() for part in parts if str(part).strip()}

    @staticmethod
    def _select_allowlist(
        extra: dict[str, Any],
        config_keys: Iterable[str],
        env_keys: Iterable[str],
        read_env: Callable[[str], Any],
    ) -> tuple[str | None, Any]:
        """``(source, raw)``: a config key that is present wins (an empty list included),
        then the first environment variable with a value; ``(None, None)`` otherwise."""
        for key in config_keys:
            if key in extra:
                return "config", extra.get(key)
        for env in env_keys:
            raw = read_env(env)
            if raw:
                return env, raw
        return None, None

    def _select_dm_allowlist(
        self, extra: dict[str, Any], env_keys: Iterable[str], read_env: Callable[[str], Any]
    ) -> Any:
        """The raw DM allow-list; remembers where it came from for the live checks."""
        self._dm_allowlist_source, raw = self._select_allowlist(
            extra, ("allow_from", "allowFrom"), env_keys, read_env
        )
        return raw

    def _live_dm_allow_from(self) -> set[str]:
        """The DM allow-list in force now: one read from the environment is read again on
        every check (so a pairing approval or revocation applies at once; a removed variable
        means an empty list), one from the config is the in-memory set."""
        source = getattr(self, "_dm_allowlist_source", None)
        if isinstance(source, str) and source != "config":
            live = _get_wsecret(source)
            return self._coerce_allow_list(live) if live is not None else set()
        return set(self._allow_from or ())

    @staticmethod
    def _normalize_whatsapp_id(value: str | None) -> str:
        """A JID without its device part (``user:3@lid`` is ``user@lid``)."""
        if not value:
            return ""
        return re.sub(r":\d+(?=@)", "", str(value).strip())

    @staticmethod
    def _is_broadcast_chat(chat_id: str) -> bool:
        """Status updates and channel broadcasts, which are never answered."""
        cid = (chat_id or "").strip().lower()
        return cid == "status@broadcast" or cid.endswith(("@broadcast", "@newsletter"))

    @staticmethod
    def _matches_whatsapp_allowlist(candidate: str, allow_from: Any) -> bool:
        """Whether ``candidate`` is on ``allow_from`` under any of its phone or LID aliases
        (``*`` matches everyone)."""
        if not allow_from:
            return False
        if candidate in allow_from:
            return True
        aliases = expand_whatsapp_aliases(candidate)
        if not aliases:
            return False
        return any(
            entry == "*"
            or normalize_whatsapp_identifier(entry) in aliases
            or bool(expand_whatsapp_aliases(entry) & aliases)
            for entry in allow_from
        )

    def _entry_matches(self, entries: Iterable[str], target: str) -> bool:
        return self._matches_whatsapp_allowlist(target, entries)

    def _compile_mention_patterns(self) -> list[re.Pattern[str]]:
        """``extra.mention_patterns``, else ``WHATSAPP_MENTION_PATTERNS`` (a JSON list, or one
        pattern per line, or comma-separated), compiled case-insensitively; bad ones logged."""
        patterns = self.config.extra.get("mention_patterns")
        if patterns is None:
            raw = str(_get_wsecret("WHATSAPP_MENTION_PATTERNS", "") or "").strip()
            if raw:
                try:
                    patterns = json.loads(raw)
                except ValueError:
                    patterns = [line.strip() for line in raw.splitlines() if line.strip()]
                    patterns = patterns or [part.strip() for part in raw.split(",") if part]
        if patterns is None:
            return []
        if isinstance(patterns, str):
            patterns = [patterns]
        if not isinstance(patterns, list):
            logger.warning(
                "[%s] whatsapp mention_patterns must be a list or string; got %s",
                self.name,
                type(patterns).__name__,
            )
            return []
        compiled = []
        for pattern in patterns:
            if not isinstance(pattern, str) or not pattern.strip():
                continue
            try:
                compiled.append(re.compile(pattern, re.IGNORECASE))
            except re.error as exc:
                logger.warning(
                    "[%s] Invalid WhatsApp mention pattern %r: %s", self.name, pattern, exc
                )
        return compiled

    def _bot_ids_from_message(self, data: dict[str, Any]) -> set[str]:
        ids = (self._normalize_whatsapp_id(one) for one in data.get("botIds") or [])
        return {one for one in ids if one}

    def _message_is_reply_to_bot(self, data: dict[str, Any]) -> bool:
        quoted = self._normalize_whatsapp_id(data.get("quotedParticipant"))
        return bool(quoted) and quoted in self._bot_ids_from_message(data)

    def _message_mentions_bot(self, data: dict[str, Any]) -> bool:
        bot_ids = self._bot_ids_from_message(data)
        if not bot_ids:
            return False
        mentioned = {self._normalize_whatsapp_id(one) for one in data.get("mentionedIds") or []}
        if mentioned & bot_ids:
            return True
        body = str(data.get("body") or "").lower()
        bares = (bot_id.split("@", 1)[0].lower() for bot_id in bot_ids)
        return any(bare and (f"@{bare}" in body or bare in body) for bare in bares)

    def _message_matches_mention_patterns(self, data: dict[str, Any]) -> bool:
        body = str(data.get("body") or "")
        return any(pattern.search(body) for pattern in self._mention_patterns or ())

    def _message_addresses_bot(self, data: dict[str, Any]) -> bool:
        """A slash command, a reply to the bot, a mention of it or a mention pattern."""
        return (
            str(data.get("body") or "").strip().startswith("/")
            or self._message_is_reply_to_bot(data)
            or self._message_mentions_bot(data)
            or self._message_matches_mention_patterns(data)
        )

    def _reply_expected_for_message(self, data: dict[str, Any]) -> bool | None:
        """True for a DM or a group message addressed to the bot; False for group chatter
        clearly addressed elsewhere; None when it cannot be told."""
        if not data.get("isGroup"):
            return True
        if self._message_addresses_bot(data):
            return True
        body = str(data.get("body") or "").strip()
        unknown_quote = data.get("hasQuotedMessage") and not data.get("quotedParticipant")
        if not self._bot_ids_from_message(data) or unknown_quote:
            return None
        lead = re.match(r"@(\w+)", body)
        mentioned = {
            self._normalize_whatsapp_id(one).split("@", 1)[0]
            for one in data.get("mentionedIds") or ()
        }
        if (lead and lead.group(1) in mentioned) or data.get("quotedParticipant"):
            return False
        return None if "?" in body else False

    def _clean_bot_mention_text(self, text: str, data: dict[str, Any]) -> str:
        """``text`` without the ``@<bot>`` mentions (unchanged if nothing would be left)."""
        if not text:
            return text
        cleaned = text
        for bot_id in self._bot_ids_from_message(data):
            bare = bot_id.split("@", 1)[0]
            if bare:
                cleaned = re.sub(rf"@{re.escape(bare)}\b[,:\-]*\s*", "", cleaned)
        return cleaned.strip() or text

    def _should_process_message(self, data: dict[str, Any]) -> bool:
        """Whether a bridge message reaches the agent: never a broadcast; a DM by the DM
        intake policy; a group message by the group policy, then by the mention rules."""
        chat_id = str(data.get("chatId") or "")
        if self._is_broadcast_chat(chat_id):
            return False
        if not data.get("isGroup", False):
            sender = str(data.get("senderId") or data.get("from") or "")
            return self._is_dm_intake_allowed(sender)
        if not self._is_group_allowed(chat_id):
            return False
        if chat_id in self._whatsapp_free_response_chats() or not self._whatsapp_require_mention():
            return True
        return self._message_addresses_bot(data)

    def format_message(self, content: str) -> str:
        """Markdown in WhatsApp's syntax (``*bold*``, ``_italic_``, ``~strike~``, headers as
        bold, ``[text](url)`` as ``text (url)``), code spans and fences left as they are."""
        if not content:
            return content
        text, fences = _protect(r"```[\s\S]*?```", self._sanitize_outbound_text(content), "FENCE")
        text, codes = _protect(r"`[^`\n]+`", text, "CODE")
        text = _ITALIC.sub(r"_\1_", text)  # before bold, so **bold** does not turn italic
        for pattern, replacement in _MARKDOWN_RULES:
            text = pattern.sub(replacement, text)
        text = _HEADER.sub(_header_as_bold, text)
        text = _LINK.sub(r"\1 (\2)", text)
        for tag, kept in (("FENCE", fences), ("CODE", codes)):
            for index, original in enumerate(kept):
                text = text.replace(f"\x00{tag}{index}\x00", original)
        return text


def resolve_whatsapp_bridge_dir() -> Path:
    """The WhatsApp bridge folder: ``<home>/scripts/whatsapp-bridge`` (this host has no
    install tree of its own to hold one)."""
    return get_hermes_home() / "scripts" / "whatsapp-bridge"


def whatsapp_session_is_paired(session_path: str | Path) -> bool:
    """Whether the bridge session folder holds a finished pairing: a ``creds.json`` that is
    an object, not ``registered: false``, and not a pending ``pairingCode``."""
    creds = Path(session_path) / "creds.json"
    if not creds.exists():
        return False
    try:
        payload = json.loads(creds.read_text(encoding="utf-8"))
    except OSError:
        return True  # present but unreadable: presence was the old signal
    except (UnicodeDecodeError, ValueError):
        return False
    if not isinstance(payload, dict) or payload.get("registered") is False:
        return False
    return not (payload.get("pairingCode") and payload.get("registered") is not True)

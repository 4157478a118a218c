"""Hermes' ``gateway.whatsapp_identity``: one identity for a WhatsApp sender's JID shapes.

The bridge can name one person by a phone JID (``15551234567@s.whatsapp.net``) or a LID
(``999@lid``); the bridge's ``lid-mapping-*.json`` files under the home's WhatsApp session
folder link them, and the canonical identity is the shortest alias, as in Hermes.
"""

from __future__ import annotations

import json
import logging
import re

from hermes_hooks.compat.hermes_constants import get_hermes_dir

__all__ = [
    "canonical_whatsapp_identifier",
    "expand_whatsapp_aliases",
    "normalize_whatsapp_identifier",
    "to_whatsapp_jid",
]

logger = logging.getLogger(__name__)

_SAFE_IDENTIFIER = re.compile(r"^[A-Za-z0-9@.+\-]+$")
_BARE_PHONE = re.compile(r"^\+?[\d\s().\-]+$")


def normalize_whatsapp_identifier(value: str) -> str:
    """Strip JID, LID, device and ``+`` syntax down to the bare numeric identifier."""
    return str(value or "").strip().replace("+", "", 1).split(":", 1)[0].split("@", 1)[0]


def to_whatsapp_jid(value: str) -> str:
    """Return the JID an outbound send uses (a bare phone number gets its domain)."""
    if not value:
        return ""
    normalized = str(value).strip()
    if ":" in normalized and "@" in normalized:
        prefix, _, domain = normalized.partition("@")
        normalized = f"{prefix.split(':', 1)[0]}@{domain}"
    if "@" in normalized:
        return normalized
    if _BARE_PHONE.fullmatch(normalized):
        digits = re.sub(r"\D+", "", normalized)
        if digits:
            return f"{digits}@g.us" if len(digits) > 15 else f"{digits}@s.whatsapp.net"
    return normalized


def expand_whatsapp_aliases(identifier: str) -> set[str]:
    """Return every alias reachable from ``identifier`` through the bridge's mapping files
    (always including the normalized identifier itself; empty for an empty one)."""
    normalized = normalize_whatsapp_identifier(identifier)
    if not normalized:
        return set()
    folder = get_hermes_dir("platforms/whatsapp/session", "whatsapp/session")
    resolved: set[str] = set()
    queue = [normalized]
    while queue:
        current = queue.pop(0)
        if not current or current in resolved or not _SAFE_IDENTIFIER.match(current):
            continue
        resolved.add(current)
        for suffix in ("", "_reverse"):
            path = folder / f"lid-mapping-{current}{suffix}.json"
            if not path.exists():
                continue
            try:
                mapped = normalize_whatsapp_identifier(json.loads(path.read_text("utf-8")))
            except (OSError, ValueError) as exc:
                logger.debug("whatsapp_identity: cannot read %s: %s", path, exc)
                continue
            if mapped and mapped not in resolved:
                queue.append(mapped)
    return resolved


def canonical_whatsapp_identifier(identifier: str) -> str:
    """Return the stable identity of a sender across phone and LID forms."""
    normalized = normalize_whatsapp_identifier(identifier)
    if not normalized:
        return ""
    return min(expand_whatsapp_aliases(normalized), key=lambda alias: (len(alias), alias))

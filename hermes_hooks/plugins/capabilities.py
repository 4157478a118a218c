"""Plugin capabilities: what a manifest declares, what the operator granted, and the record.

Hermes' model (``hermes_cli/plugin_capabilities.py``): a manifest declares ``capabilities``
(ids of the table below, each mapping to a trust gate that exists); ``hermes plugins enable``
shows them and asks; the answer is stored under ``plugins.entries.<key>``:

- ``granted_capabilities``: the ids granted (a union with earlier grants);
- ``capabilities_consent``: ``{"hash", "granted_at"}``, the SHA-256 of the declared set the
  person saw, so a changed set is asked about again;
- each grant's legacy ``allow_*`` key too, so the gates that read those keep working.

A capability is live for a plugin (``ctx.has_capability``) when its manifest declares it and
it is granted, by ``granted_capabilities`` or its legacy key; an id the manifest did not
declare, or that this table does not know, is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import attrs

__all__ = [
    "CAPABILITIES",
    "CONSENT_KEY",
    "GRANTED_KEY",
    "Capability",
    "capability_granted",
    "capability_set_hash",
    "consent_needed",
    "known",
    "record_consent",
]

GRANTED_KEY: Final = "granted_capabilities"
CONSENT_KEY: Final = "capabilities_consent"


@attrs.frozen
class Capability:
    """One declarable capability: its id, its legacy key, what granting it risks."""

    id: str
    legacy_path: tuple[str, ...]
    description: str


CAPABILITIES: Final[Mapping[str, Capability]] = {
    c.id: c
    for c in (
        Capability(
            "tools.override",
            ("allow_tool_override",),
            "Replace built-in tools (terminal, write_file...): an override sees every call to "
            "that tool",
        ),
        Capability(
            "llm.provider_override",
            ("llm", "allow_provider_override"),
            "Run host-owned LLM calls against another provider than your active one (with "
            "your credentials)",
        ),
        Capability(
            "llm.model_override",
            ("llm", "allow_model_override"),
            "Choose which model host-owned LLM calls use (spend follows the model)",
        ),
        Capability(
            "llm.agent_id_override",
            ("llm", "allow_agent_id_override"),
            "Attribute its LLM calls to another agent id",
        ),
        Capability(
            "llm.profile_override",
            ("llm", "allow_profile_override"),
            "Run LLM calls under another auth profile",
        ),
        Capability(
            "llm.task_override",
            ("llm", "allow_task_override"),
            "Route its LLM calls through the host's built-in auxiliary task lanes",
        ),
        Capability(
            "gateway.platform_actions",
            ("allow_platform_actions",),
            "Act on connected chat platforms as the gateway bot (add reactions, rename "
            "threads) through ctx.platform_actions",
        ),
        Capability(
            "gateway.plugin_status",
            ("allow_plugin_status",),
            "Post transient status lines to the current conversation as the gateway bot",
        ),
    )
}
"""Hermes' capability ids (only those with an enforcing gate)."""


def known(capabilities: Iterable[object]) -> list[str]:
    """The known ids among ``capabilities``, without repeats, in order."""
    return [c for c in dict.fromkeys(capabilities) if isinstance(c, str) and c in CAPABILITIES]


def capability_set_hash(capabilities: Iterable[str]) -> str:
    """The SHA-256 of a set of ids (order-insensitive), as Hermes computes it."""
    return hashlib.sha256("\n".join(sorted(set(capabilities))).encode("utf-8")).hexdigest()


def _legacy_set(entry: Mapping[str, Any], capability: Capability) -> bool:
    node: object = entry
    for part in capability.legacy_path:
        if not isinstance(node, Mapping):
            return False
        node = node.get(part)
    return node is True


def capability_granted(entry: Mapping[str, Any], capability: str) -> bool:
    """Whether ``plugins.entries.<key>`` (``entry``) grants ``capability``; unknown: no."""
    spec = CAPABILITIES.get(capability)
    if spec is None:
        return False
    granted = entry.get(GRANTED_KEY)
    if isinstance(granted, list) and capability in granted:
        return True
    if isinstance(granted, Mapping) and granted.get(capability) is True:
        return True
    return _legacy_set(entry, spec)


def consent_needed(entry: Mapping[str, Any], declared: Iterable[str]) -> list[str]:
    """The declared capabilities to ask about now: none when the stored consent is for this
    very set; else those not granted yet (all of them at first)."""
    ids = known(declared)
    if not ids:
        return []
    consent = entry.get(CONSENT_KEY)
    stored = consent.get("hash") if isinstance(consent, Mapping) else None
    if stored == capability_set_hash(ids):
        return []
    granted = entry.get(GRANTED_KEY)
    already = set(granted) if isinstance(granted, list) else set()
    return [c for c in ids if c not in already]


def record_consent(
    home: Path, key: str, granted: Iterable[str], declared: Iterable[str]
) -> list[str]:
    """Store a consent decision for plugin ``key`` in ``home``'s ``config.yaml`` (atomically):
    the grants (with earlier ones), the hash of what was declared and shown, the legacy keys.

    :returns: the capabilities granted now, all told.
    :raises ConfigError: ``config.yaml`` cannot be read or written; it is left as is.
    """
    from hermes_hooks.plugins.configfile import update_config

    result: list[str] = []

    def mutate(config: dict[str, Any]) -> None:
        node: dict[str, Any] = config
        for field in ("plugins", "entries", key):
            child = node.get(field)
            if not isinstance(child, dict):
                child = node[field] = {}
            node = child
        previous = node.get(GRANTED_KEY)
        merged = known([*(previous if isinstance(previous, list) else []), *known(granted)])
        node[GRANTED_KEY] = sorted(merged)
        node[CONSENT_KEY] = {
            "hash": capability_set_hash(known(declared)),
            "granted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        for capability in merged:
            *parents, leaf = CAPABILITIES[capability].legacy_path
            target = node
            for part in parents:
                child = target.get(part)
                if not isinstance(child, dict):
                    child = target[part] = {}
                target = child
            target[leaf] = True
        result[:] = node[GRANTED_KEY]

    update_config(home, mutate)
    return result

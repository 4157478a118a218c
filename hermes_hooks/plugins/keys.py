"""Old plugin keys in ``config.yaml``, rewritten to the keys plugins have now.

A flat plugin is keyed by its manifest name, as in Hermes (the folder ``pr_review/`` with
``name: pr-review`` is ``pr-review``). Config written when keys were folder names still
matches through the plugin's aliases (see :class:`~hermes_hooks.plugins.discovery.Candidate`),
and the next config write (:func:`~hermes_hooks.plugins.config.update_config`) rewrites it:
``plugins.enabled`` and ``plugins.disabled`` items, and ``plugins.entries.<alias>`` with its
``trusted_hash`` and grants, move to the key.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_hooks.plugins.discovery import discover_candidates

__all__ = ["apply_renames", "find_renames"]

logger = logging.getLogger(__name__)


def find_renames(home: Path, cwd: Path | None = None) -> dict[str, str]:
    """Return ``{old folder key: key}`` for the folder plugins of ``home`` (manifests only)."""
    candidates = discover_candidates(hermes_home=home, cwd=cwd, include_entry_points=False)
    return {alias: c.key for c in candidates for alias in c.aliases}


def _rename_list(section: dict[str, Any], field: str, renames: Mapping[str, str]) -> list[str]:
    items = section.get(field)
    if not isinstance(items, list) or not any(i in renames for i in items):
        return []
    done = [f"plugins.{field}: {i!r} -> {renames[i]!r}" for i in items if i in renames]
    section[field] = list(dict.fromkeys(renames.get(i, i) for i in items))
    return done


def apply_renames(config: dict[str, Any], renames: Mapping[str, str]) -> list[str]:
    """Rewrite old keys in ``config`` (in place) to the current ones; return what changed.

    An entry under an old key moves to the new key; when both exist, the new key's values win
    and the old entry's other values are kept.
    """
    section = config.get("plugins")
    if not isinstance(section, dict) or not renames:
        return []
    done = _rename_list(section, "enabled", renames) + _rename_list(section, "disabled", renames)
    entries = section.get("entries")
    if isinstance(entries, dict):
        for alias, key in renames.items():
            if alias not in entries or alias == key:
                continue
            old = entries.pop(alias)
            new = entries.get(key)
            if isinstance(old, dict) and isinstance(new, dict):
                entries[key] = {**old, **new}
            elif new is None:
                entries[key] = old
            done.append(f"plugins.entries.{alias} -> plugins.entries.{key}")
    for change in done:
        logger.info("config.yaml: old plugin key rewritten: %s", change)
    return done

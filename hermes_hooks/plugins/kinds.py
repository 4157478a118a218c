"""Plugin kinds: the one inferred from a plugin's source, and the family that serves it.

A manifest without ``kind`` is ``standalone``, unless its folder or its ``__init__.py`` says
otherwise: as Hermes does (``hermes_cli/plugins_manifest.py``, ``plugins/memory`` and
``plugins/context_engine``), a cheap text scan of the first 8 KiB of the source, never an
import, marks a memory provider plugin ``exclusive``, a model-provider plugin (one that
registers a ``ProviderProfile``) ``model-provider`` and a context engine plugin
``context-engine``; a plugin in a ``memory/`` or ``context_engine/`` category folder is one of
those by where it sits, as Hermes loads every folder there. Plugins of these kinds are not
chosen by ``plugins.enabled`` but by their family, which declares the kind it serves with
``Family.plugin_kind`` at the extension point: an ``exclusive`` or ``context-engine`` plugin
loads when its family's key (``memory.provider``, ``context.engine``) names it; the plugins of
a kind in :data:`LOADED_ON_LOOKUP` (``model-provider``) are all imported together on the
family's first lookup, as Hermes imports every model-provider plugin on its first
``get_provider_profile``, so that any profile's aliases resolve. ``context-engine`` is not a
manifest kind, in Hermes either: it is only ever inferred.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Final

__all__ = [
    "CATEGORY_KINDS",
    "FAMILY_KINDS",
    "LOADED_ON_LOOKUP",
    "SCAN_LIMIT",
    "infer_kind",
    "infer_kind_of_folder",
    "infer_kind_of_module",
    "module_origin",
]

SCAN_LIMIT: Final = 8192
"""How many characters of a plugin's source the kind scan reads, as in Hermes."""

FAMILY_KINDS: Final[dict[str, tuple[str, str]]] = {
    "exclusive": ("memory provider", "memory.provider"),
    "model-provider": ("model provider", "model.provider"),
    "context-engine": ("context engine", "context.engine"),
    "cron-provider": ("cron scheduler", "cron.provider"),
}
"""The kinds a provider family serves instead of ``plugins.enabled``: what such a plugin is,
and the config key that selects it in Hermes (named in messages while no family serves it)."""

LOADED_ON_LOOKUP: Final = frozenset({"model-provider"})
"""The kinds whose plugins are imported all together when their family first looks one of
their registrations up (a profile by name or alias), never when plugins are listed. Bundled and
user plugins of such a kind need no ``plugins.enabled``; project and pip-installed ones do."""

CATEGORY_KINDS: Final[dict[str, str]] = {
    "memory": "exclusive",
    "context_engine": "context-engine",
    "cron_providers": "cron-provider",
}
"""Category folders whose plugins are of a family's kind by where they sit, as in Hermes
(``plugins/memory/<name>``, ``plugins/context_engine/<name>``)."""


def infer_kind(source: str) -> str | None:
    """Return the kind a plugin's source implies, or ``None`` when it implies none.

    A memory provider (``register_memory_provider`` or ``MemoryProvider`` in the text) is
    ``exclusive``; ``register_provider`` together with ``ProviderProfile`` is
    ``model-provider``; a context engine (``register_context_engine`` or ``ContextEngine``) is
    ``context-engine``; a cron scheduler (``register_cron_scheduler`` or ``CronScheduler``)
    ``cron-provider``, in that order. Only the first :data:`SCAN_LIMIT` characters are looked
    at.
    """
    text = source[:SCAN_LIMIT]
    if "register_memory_provider" in text or "MemoryProvider" in text:
        return "exclusive"
    if "register_provider" in text and "ProviderProfile" in text:
        return "model-provider"
    if "register_context_engine" in text or "ContextEngine" in text:
        return "context-engine"
    if "register_cron_scheduler" in text or "CronScheduler" in text:
        return "cron-provider"
    return None


def _read_head(path: Path) -> str:
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as stream:
            return stream.read(SCAN_LIMIT)
    except OSError:
        return ""


def infer_kind_of_folder(folder: Path, category: str | None = None) -> str | None:
    """Return the kind a plugin folder implies: its category's (:data:`CATEGORY_KINDS`), else
    what its ``__init__.py`` says (see :func:`infer_kind`).

    :param category: the category folder it sits in (``memory`` for ``memory/mem0``), if any.
    """
    by_place = CATEGORY_KINDS.get(category) if category else None
    return by_place or infer_kind(_read_head(folder / "__init__.py"))


def module_origin(module_name: str) -> Path | None:
    """Return the source file of ``module_name`` without importing it (or any parent of it).

    ``importlib.util.find_spec`` on a dotted name imports the parent packages, so only the
    top-level name is looked up that way; the rest is walked through the package folders.
    Namespace packages, extension modules and zipped modules give ``None``.
    """
    parts = [part for part in module_name.split(".") if part]
    if not parts:
        return None
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    origin = Path(spec.origin)
    locations = list(spec.submodule_search_locations or [])
    for part in parts[1:]:
        if not locations:
            return None
        found: Path | None = None
        for base in map(Path, locations):
            if (base / part / "__init__.py").is_file():
                found, locations = base / part / "__init__.py", [str(base / part)]
                break
            if (base / f"{part}.py").is_file():
                found, locations = base / f"{part}.py", []
                break
        if found is None:
            return None
        origin = found
    return origin if origin.suffix == ".py" else None


def infer_kind_of_module(module_name: str) -> str | None:
    """Return the kind the source of an entry point's module implies, without importing it."""
    origin = module_origin(module_name)
    return infer_kind(_read_head(origin)) if origin is not None else None

"""What ``hermes memory`` shows and does: the providers that run, and the builtin's facts.

The logic behind the command; :mod:`hermes_hooks.cli.memory` only formats. Reading never
creates the database: a home where no session ran yet has no facts, and says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hooks.backends.family import is_available_safe
from hermes_hooks.backends.memory.registry import get_memory
from hermes_hooks.backends.memory.store import Fact, FactStore, db_path, fts5_available
from hermes_hooks.errors import HermesHooksError

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["describe_memory", "forget_fact", "search_facts"]


def _open(home: Path) -> FactStore | None:
    path = db_path(home)
    return FactStore(path) if path.is_file() else None


def describe_memory(pm: PluginManager) -> dict[str, Any]:
    """Return what ``hermes memory status --json`` prints: the builtin and the external provider."""
    registry = get_memory(pm)
    out: dict[str, Any] = {"provider": None, "prefetch_timeout": None, "error": None}
    try:
        settings = registry.settings()
    except HermesHooksError as exc:
        out["error"] = str(exc)
        return out
    out.update(provider=settings.provider, prefetch_timeout=settings.prefetch_timeout)
    out["warnings"] = list(settings.warnings)
    path = db_path(pm.hermes_home)
    builtin: dict[str, Any] = {
        "enabled": settings.builtin,
        "path": str(path),
        "exists": path.is_file(),
        "facts": 0,
        "search": "fts5" if fts5_available() else "like",
    }
    if path.is_file():
        try:
            with FactStore(path) as store:
                builtin["facts"] = store.count()
                builtin["check"] = store.check()
        except Exception as exc:  # a damaged file is reported, not raised
            builtin["error"] = f"{type(exc).__name__}: {exc}"
    out["builtin"] = builtin
    external: dict[str, Any] | None = None
    if settings.provider is not None:
        external = {"name": None, "plugin": None, "available": False, "error": None}
        try:
            found = registry.external(settings)
        except HermesHooksError as exc:
            external["error"] = str(exc)
        else:
            assert found is not None
            info = pm.get_plugin_info(found.owner)
            external.update(
                name=found.name,
                plugin=found.owner,
                available=is_available_safe(found.provider),
                version=info.version if info is not None else "",
                warnings=list(info.warnings) if info is not None else [],
            )
    out["external"] = external
    return out


def search_facts(home: Path, query: str, limit: int = 10) -> list[Fact]:
    """Return the builtin's facts matching ``query``, the best first (none without a database)."""
    store = _open(home)
    if store is None:
        return []
    with store:
        return store.search(query, limit=limit)


def forget_fact(home: Path, fact_id: int) -> Fact | None:
    """Delete the builtin's fact ``fact_id``; return it, or ``None`` when there is none."""
    store = _open(home)
    if store is None:
        return None
    with store:
        return store.forget(fact_id)

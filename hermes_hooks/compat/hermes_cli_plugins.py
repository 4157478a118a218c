"""Hermes' ``hermes_cli.plugins``: its public plugin-system names, as this project has them.

``PluginManager`` and ``PluginContext`` are this project's classes (Hermes' method names; see
the ``ctx`` reference); ``get_plugin_manager()`` is the current manager (one is created, as
Hermes creates its singleton, when none exists); ``invoke_hook`` and ``discover_plugins`` run
on it.
"""

from __future__ import annotations

from typing import Any

from hermes_hooks.plugins import active
from hermes_hooks.plugins.context import PluginContext
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec.hookspecs import VALID_HOOKS

__all__ = [
    "VALID_HOOKS",
    "PluginContext",
    "PluginManager",
    "discover_plugins",
    "get_plugin_manager",
    "has_middleware",
    "invoke_hook",
    "invoke_middleware",
]


def get_plugin_manager() -> PluginManager:
    """Return the current manager, creating one for ``$HERMES_HOME`` when none exists."""
    manager = active.current_manager()
    return manager if manager is not None else PluginManager()


def discover_plugins(force: bool = False) -> None:
    """Discover and load the current manager's plugins (again with ``force``)."""
    get_plugin_manager().discover_and_load(force=force)


def invoke_hook(hook_name: str, **kwargs: Any) -> list[Any]:
    """Call hook ``hook_name`` on the current manager and return the non-``None`` results.

    ``telemetry_schema_version`` is stamped as Hermes stamps it; arguments left out are
    ``None``.
    """
    return get_plugin_manager().invoke_hook(hook_name, **kwargs)


def has_middleware(kind: str) -> bool:
    """Tell whether the current manager has middleware of ``kind`` (an alias is accepted)."""
    manager = active.current_manager()
    return manager is not None and manager.middleware.has(kind)


def invoke_middleware(kind: str, **kwargs: Any) -> list[Any]:
    """Call each middleware of ``kind`` with ``kwargs``; return the non-``None`` results.

    A failing one is counted on its plugin and skipped, as Hermes skips it.
    """
    manager = get_plugin_manager()
    results: list[Any] = []
    for entry in manager.middleware.entries(kind):
        try:
            result = entry.callback(**kwargs)
        except Exception as exc:
            manager.count_failure(entry.owner, f"middleware {entry.kind!r}", repr(exc))
            continue
        if result is not None:
            results.append(result)
    return results

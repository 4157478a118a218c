"""Hermes' ``gateway.platform_registry``: the platforms of the current manager.

The module's ``platform_registry`` is a view over the current manager's ``pm.platforms``: an
entry a plugin registers through it (``platform_registry.register(PlatformEntry(...))``) is
owned by that plugin and removed with it, exactly as ``ctx.register_platform`` does; ``get``,
``is_registered``, ``all_entries`` and ``create_adapter`` answer from the same registry.
Hermes' deferred loaders and per-profile scopes are not kept: every platform plugin is
loaded when the manager loads plugins.
"""

from __future__ import annotations

import weakref
from typing import Any

import attrs

from hermes_hooks.compat.current import current_owner, require_manager
from hermes_hooks.registries.base import HOST
from hermes_hooks.registries.platforms import PlatformEntry, PlatformRegistry as _Registry

__all__ = ["PlatformEntry", "PlatformRegistry", "platform_registry"]


def _registry() -> _Registry:
    registry: _Registry = require_manager("gateway.platform_registry").platforms
    return registry


_replaced: weakref.WeakKeyDictionary[_Registry, dict[str, list[PlatformEntry]]] = (
    weakref.WeakKeyDictionary()
)
"""Per registry and name, the entries a re-registration replaced, the latest last."""


def _register(registry: _Registry, manager: Any, owner: str, entry: PlatformEntry) -> None:
    fields = {
        field.name: getattr(entry, field.name)
        for field in attrs.fields(PlatformEntry)
        if field.name not in ("name", "label", "adapter_factory", "check_fn", "owner", "extra")
    }
    fields.update(entry.extra)
    registry.register_platform(
        entry.name, entry.label, entry.adapter_factory, entry.check_fn, owner=owner, **fields
    )
    if manager is not None:
        manager.add_platform(owner, entry.name.strip().lower())


class PlatformRegistry:
    """Hermes' registry class: one made by ``PlatformRegistry()`` holds its own entries, as
    Hermes' does; the module's ``platform_registry`` answers for the current manager."""

    def __init__(self) -> None:
        self._own: _Registry | None = _Registry()

    def _target(self, what: str) -> tuple[_Registry, Any, str]:
        if self._own is not None:
            return self._own, None, HOST
        manager = require_manager(f"gateway.platform_registry.{what}")
        return manager.platforms, manager, current_owner(manager)

    def _registry(self) -> _Registry:
        return self._own if self._own is not None else _registry()

    def register(self, entry: PlatformEntry, *, scope: str | None = None) -> None:
        """Register ``entry`` for the plugin whose code runs (last writer wins in Hermes, and
        ``unregister`` brings back the entry it replaced; a name another plugin holds is
        refused, as for ``ctx.register_platform``).

        :raises TypeError: ``entry`` is not a ``PlatformEntry``.
        """
        if not isinstance(entry, PlatformEntry):
            raise TypeError(f"register() expects a PlatformEntry, got {type(entry).__name__}")
        registry, manager, owner = self._target("register")
        previous = registry.get(entry.name)
        _register(registry, manager, owner, entry)
        if previous is not None and previous.owner == owner and previous is not entry:
            # Hermes' last writer wins; the entry it replaced comes back on unregister.
            _replaced.setdefault(registry, {}).setdefault(entry.name.strip().lower(), []).append(
                previous
            )

    def unregister(self, name: str, *, scope: str | None = None) -> bool:
        """Remove ``name`` if the running plugin (or the host) owns it; the entry it replaced,
        if any, is registered again (Hermes' override-then-unregister)."""
        registry, manager, owner = self._target("unregister")
        removed = registry.unregister(name, owner=owner)
        stack = _replaced.get(registry, {}).get(name.strip().lower(), [])
        if removed and stack:
            previous = stack.pop()
            _register(registry, manager, previous.owner, previous)
        return removed

    def get(self, name: str) -> PlatformEntry | None:
        """Return the entry of ``name``, or ``None``."""
        return self._registry().get(name)

    def is_registered(self, name: str) -> bool:
        """Return whether ``name`` is registered."""
        return name.strip().lower() in self._registry()

    def all_entries(self) -> list[PlatformEntry]:
        """Return every entry, sorted by name."""
        registry = self._registry()
        return [entry for name in registry.names() if (entry := registry.get(name)) is not None]

    def plugin_entries(self) -> list[PlatformEntry]:
        """Return the entries plugins registered."""
        return [entry for entry in self.all_entries() if entry.source == "plugin"]

    def create_adapter(self, name: str, config: Any) -> Any:
        """Build ``name``'s adapter for ``config``, or ``None`` when it cannot be built now
        (not registered, dependencies missing, not configured), as in Hermes."""
        from hermes_hooks.registries.platforms import AdapterUnavailable

        try:
            return self._registry().create_adapter(name, config)
        except AdapterUnavailable:
            return None


platform_registry = PlatformRegistry()
platform_registry._own = None  # the shared one: a view over the current manager's platforms
"""The registry the plugins and the gateway share."""

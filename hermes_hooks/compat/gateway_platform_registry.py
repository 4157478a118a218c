"""Hermes' ``gateway.platform_registry``: the platforms of the current manager.

``platform_registry`` is a view over the current manager's ``pm.platforms``: an entry a plugin
registers through it (``platform_registry.register(PlatformEntry(...))``) is owned by that
plugin and removed with it, exactly as ``ctx.register_platform`` does; ``get``,
``is_registered``, ``all_entries`` and ``create_adapter`` answer from the same registry.
Hermes' deferred loaders and per-profile scopes are not kept: every platform plugin is
loaded when the manager loads plugins.
"""

from __future__ import annotations

from typing import Any

import attrs

from hermes_hooks.compat.current import current_owner, require_manager
from hermes_hooks.registries.platforms import PlatformEntry, PlatformRegistry as _Registry

__all__ = ["PlatformEntry", "PlatformRegistry", "platform_registry"]


def _registry() -> _Registry:
    registry: _Registry = require_manager("gateway.platform_registry").platforms
    return registry


class PlatformRegistry:
    """Hermes' registry object, answering for the current manager."""

    def register(self, entry: PlatformEntry, *, scope: str | None = None) -> None:
        """Register ``entry`` for the plugin whose code runs (last writer wins in Hermes;
        here a name another plugin holds is refused, as for ``ctx.register_platform``).

        :raises TypeError: ``entry`` is not a ``PlatformEntry``.
        """
        if not isinstance(entry, PlatformEntry):
            raise TypeError(f"register() expects a PlatformEntry, got {type(entry).__name__}")
        manager = require_manager("gateway.platform_registry.register")
        owner = current_owner(manager)
        fields = {
            field.name: getattr(entry, field.name)
            for field in attrs.fields(PlatformEntry)
            if field.name not in ("name", "label", "adapter_factory", "check_fn", "owner", "extra")
        }
        fields.update(entry.extra)
        manager.platforms.register_platform(
            entry.name,
            entry.label,
            entry.adapter_factory,
            entry.check_fn,
            owner=owner,
            **fields,
        )
        manager.add_platform(owner, entry.name.strip().lower())

    def unregister(self, name: str, *, scope: str | None = None) -> bool:
        """Remove ``name`` if the running plugin (or the host) owns it."""
        manager = require_manager("gateway.platform_registry.unregister")
        return manager.platforms.unregister(name, owner=current_owner(manager))

    def get(self, name: str) -> PlatformEntry | None:
        """Return the entry of ``name``, or ``None``."""
        return _registry().get(name)

    def is_registered(self, name: str) -> bool:
        """Return whether ``name`` is registered."""
        return name.strip().lower() in _registry()

    def all_entries(self) -> list[PlatformEntry]:
        """Return every entry, sorted by name."""
        registry = _registry()
        return [entry for name in registry.names() if (entry := registry.get(name)) is not None]

    def plugin_entries(self) -> list[PlatformEntry]:
        """Return the entries plugins registered."""
        return [entry for entry in self.all_entries() if entry.source == "plugin"]

    def create_adapter(self, name: str, config: Any) -> Any:
        """Build ``name``'s adapter for ``config``, or ``None`` when it cannot be built now
        (not registered, dependencies missing, not configured), as in Hermes."""
        from hermes_hooks.registries.platforms import AdapterUnavailable

        try:
            return _registry().create_adapter(name, config)
        except AdapterUnavailable:
            return None


platform_registry = PlatformRegistry()
"""The registry the plugins and the gateway share."""

"""Hermes' ``agent.image_gen_registry``: the image providers of the current manager.

Module-level functions over the current manager's ``pm.image_gen``. A provider a plugin
registers here (at import, in ``register``, from a hook) is owned by that plugin and removed
with it; ``get_active_provider`` is the family's selection by ``image_gen.provider``.
"""

from __future__ import annotations

from hermes_hooks.backends.image_gen import IMAGE_GEN, ImageGenProvider
from hermes_hooks.compat.current import current_home, current_owner, require_manager
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins import active
from hermes_hooks.plugins.config import load_config

__all__ = [
    "_reset_for_tests",
    "get_active_provider",
    "get_provider",
    "list_providers",
    "register_provider",
]


def register_provider(provider: ImageGenProvider) -> None:
    """Register ``provider``; a later one of the same ``name`` replaces it (last writer wins).

    :raises TypeError: ``provider`` is not an ``ImageGenProvider``, as in Hermes.
    :raises RegistrationError: its ``name`` is not a non-empty string without spaces.
    """
    if not isinstance(provider, ImageGenProvider):
        raise TypeError(
            f"register_provider() expects an ImageGenProvider instance, got "
            f"{type(provider).__name__}"
        )
    manager = require_manager("agent.image_gen_registry.register_provider")
    IMAGE_GEN.registry(manager).register_provider(provider, owner=current_owner(manager))


def list_providers() -> list[ImageGenProvider]:
    """Return every registered provider, sorted by name."""
    return IMAGE_GEN.registry(require_manager("agent.image_gen_registry")).list_providers()


def get_provider(name: str) -> ImageGenProvider | None:
    """Return the provider registered under ``name``, or ``None``."""
    return IMAGE_GEN.registry(require_manager("agent.image_gen_registry")).get_provider(name)


def get_active_provider() -> ImageGenProvider | None:
    """Return the provider ``image_gen.provider`` selects now (see the reference), or ``None``.

    The selection is read from the ``config.yaml`` of the current home at each call, as Hermes
    reads it (the manager's home while it loads or calls plugin code, else ``$HERMES_HOME``).
    """
    registry = IMAGE_GEN.registry(require_manager("agent.image_gen_registry"))
    home = current_home()
    try:
        settings = IMAGE_GEN.settings_from(load_config(home), home / "config.yaml")
        return registry.select_provider(settings)
    except HermesHooksError:
        return None


def _reset_for_tests() -> None:
    """Hermes' test helper: forget every registered image provider.

    Of the current manager; when the process has none yet, of the one
    ``hermes_cli.plugins.get_plugin_manager()`` creates for the current home (Hermes' registry
    is a process global, always there).
    """
    manager = active.current_manager()
    if manager is None:
        from hermes_hooks.compat import hermes_cli_plugins

        manager = hermes_cli_plugins.get_plugin_manager()
    registry = IMAGE_GEN.registry(manager)
    while names := registry.names():
        for owner in {registry.owner_of(name) for name in names} - {None}:
            registry.remove_owner(str(owner))

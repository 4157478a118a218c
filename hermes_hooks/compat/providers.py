"""Hermes' ``providers``: the model-provider profiles of the current manager, by name or alias.

Model-provider plugins call :func:`register_provider` at import time; the profile lands in the
current manager's ``pm.models``, owned by the plugin being imported (it goes when the plugin
unloads). :func:`get_provider_profile` and :func:`list_providers` import every model-provider
plugin on their first call, as Hermes' discovery does, so that aliases resolve.

``providers.base`` (:mod:`hermes_hooks.compat.providers_base`) is served below this module: to
the import system it is a package (``__path__`` is empty, the finder serves its children).
"""

from __future__ import annotations

from hermes_hooks.backends.models import ProviderProfile, get_models
from hermes_hooks.backends.models.profiles import OMIT_TEMPERATURE
from hermes_hooks.compat.current import current_owner, require_manager

__all__ = [
    "OMIT_TEMPERATURE",
    "ProviderProfile",
    "get_provider_profile",
    "list_providers",
    "provider_source",
    "register_provider",
]

__path__: list[str] = []  # a package to the import system: providers.base is served below it
__hermes_compat__ = True  # the finder serves this package's children (providers.base)


def register_provider(profile: ProviderProfile) -> None:
    """Register ``profile`` by its name and aliases; a later one of the same name replaces it.

    :raises RegistrationError: ``profile`` is not a ``ProviderProfile``, or its name or
        aliases are not fit to be ``model.provider`` values.
    """
    manager = require_manager("providers.register_provider")
    get_models(manager).register_profile(profile, owner=current_owner(manager))


def get_provider_profile(name: str) -> ProviderProfile | None:
    """Return the profile registered under ``name`` or one of its aliases, or ``None``."""
    return get_models(require_manager("providers.get_provider_profile")).get_profile(name)


def list_providers() -> list[ProviderProfile]:
    """Return every registered profile, one per name, sorted by name."""
    return get_models(require_manager("providers.list_providers")).list_profiles()


def provider_source(name: str) -> str | None:
    """Return where the profile under ``name`` (or an alias) came from, or ``None``.

    The source of the plugin that registered it (``bundled``, ``user``, ``project``,
    ``entrypoint``), or ``runtime`` when host code registered it, as Hermes says.
    """
    manager = require_manager("providers.provider_source")
    registry = get_models(manager)
    key = registry.canonical(name)
    if key is None or registry.get_profile(key) is None:
        return None
    owner = registry.owner_of(key)
    info = manager.get_plugin_info(owner) if owner is not None else None
    return info.source if info is not None else "runtime"

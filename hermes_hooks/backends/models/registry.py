"""The models family: its declaration, and each manager's registry of backends and profiles.

``pm.models`` (:class:`ModelsRegistry`) holds the backends ``model.provider`` may name: the
host's ``offline`` and ``openai-compatible``, those of :func:`register_provider` (process-wide,
from a factory) and the profiles plugins register (:class:`ProviderProfile`, each wrapped in a
:class:`ProfileBackend`), with their aliases. A profile a plugin registers is owned by it and
goes when it unloads; a later profile of the same name (a user plugin over a bundled one)
displaces it until then, and so does a later alias.

Model-provider plugins are imported on the first lookup of a name that is not the host's: the
registry asks its manager to load every plugin of kind ``model-provider`` at once
(:meth:`PluginManager.load_deferred`), so that any alias resolves. Looking up ``offline`` or
``openai-compatible`` imports nothing, and neither does listing plugins.
"""

from __future__ import annotations

import difflib
import importlib
import threading
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.family import Family, ProviderRegistry, Selection
from hermes_hooks.backends.models.base import (
    DEFAULT_PROVIDER,
    ModelBackend,
    ModelProvider,
    ModelSettings,
)
from hermes_hooks.backends.models.profile_backend import ProfileBackend
from hermes_hooks.backends.models.profiles import ProviderProfile
from hermes_hooks.errors import ConfigError, RegistrationError
from hermes_hooks.plugins.config import config_path, load_config
from hermes_hooks.registries.base import HOST, Handle, Registry, describe_owner

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "BUILTIN_BACKENDS",
    "MODELS",
    "PROFILE_KIND",
    "FactoryBackend",
    "ModelsRegistry",
    "ProviderFactory",
    "create_model",
    "list_providers",
    "register_provider",
]

ProviderFactory = Callable[[ModelSettings], ModelProvider]
"""Builds a provider from the ``model:`` settings; raises ``ConfigError`` when they do not fit."""

BUILTIN_BACKENDS: Final[dict[str, str]] = {
    "offline": "hermes_hooks.backends.models.offline:OfflineModel",
    "openai-compatible": "hermes_hooks.backends.models.openai_compat:OpenAICompatibleModel",
}
"""The host's own backends, each imported only when it is chosen."""

PROFILE_KIND: Final = "model-provider"
"""The plugin kind this family serves: plugins that register a :class:`ProviderProfile`."""

_registered: dict[str, ModelBackend] = {}
_lock = threading.Lock()


class FactoryBackend(ModelBackend):
    """A backend built from a factory: ``factory(settings)`` returns the model.

    :param target: instead of a factory, ``"module:Class"`` whose ``from_settings`` is the
        factory, imported only when a model is built.
    """

    def __init__(
        self, name: str, factory: ProviderFactory | None = None, *, target: str | None = None
    ) -> None:
        if (factory is None) == (target is None):
            raise ValueError("give a factory or a target, not both")
        self._name = name.strip().lower()
        self._factory = factory
        self._target = target

    @property
    def name(self) -> str:
        return self._name

    def create(self, settings: ModelSettings) -> ModelProvider:
        factory = self._factory
        if factory is None:
            assert self._target is not None
            module_name, _, class_name = self._target.partition(":")
            factory = getattr(importlib.import_module(module_name), class_name).from_settings
            self._factory = factory
        return factory(settings)

    def __repr__(self) -> str:
        return f"<FactoryBackend {self._name!r}>"


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make ``model.provider: NAME`` build its model with ``factory``, in every manager.

    A later call for the same name wins; a backend a plugin registered in a manager wins over
    this process-wide one.
    """
    backend = FactoryBackend(name, factory)
    with _lock:
        _registered[backend.name] = backend


def list_providers() -> list[str]:
    """Return the provider names ``model.provider`` may take in any manager, sorted."""
    return sorted({*BUILTIN_BACKENDS, *_registered})


def unknown_provider(name: str, known: list[str]) -> ConfigError:
    """The error for ``model.provider`` naming no backend, with the closest names."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    return ConfigError(
        f"model.provider {name!r} is unknown: expected one of {', '.join(known)}{hint} "
        f"('hermes models' lists them)"
    )


def create_model(settings: ModelSettings) -> ModelProvider:
    """Build the model ``settings`` describe, with the host's and process-wide backends.

    A manager's own registry (:meth:`ModelsRegistry.create_model`) also knows the backends and
    profiles its plugins registered.

    :raises ConfigError: the provider is unknown (with the closest names) or its settings do
        not fit.
    """
    name = settings.provider
    backend = _registered.get(name)
    if backend is None and name in BUILTIN_BACKENDS:
        backend = FactoryBackend(name, target=BUILTIN_BACKENDS[name])
    if backend is None:
        raise unknown_provider(name, list_providers())
    return backend.create(settings)


def _lower(name: str) -> str:
    return name.strip().lower()


class ModelsRegistry(ProviderRegistry[ModelBackend]):
    """One manager's model backends: the host's two, the process-wide ones, and plugins'.

    :param home: the Hermes home whose ``config.yaml`` has the ``model:`` section.
    """

    def __init__(self, home: Path | None = None) -> None:
        super().__init__(MODELS, home)
        self._aliases: Registry[str] = Registry(
            "model provider alias", normalize=_lower, last_writer_wins=True
        )
        self._manager: weakref.ref[PluginManager] | None = None
        for name, target in BUILTIN_BACKENDS.items():
            self.register_provider(FactoryBackend(name, target=target), owner=HOST)

    # -- the manager, for loading model-provider plugins on the first lookup -------------------

    def bind(self, manager: PluginManager) -> None:
        """Load ``manager``'s model-provider plugins on this registry's first profile lookup."""
        self._manager = weakref.ref(manager)

    def load_profiles(self) -> None:
        """Import every model-provider plugin of the manager, once (later calls do nothing)."""
        manager = self._manager() if self._manager is not None else None
        if manager is not None:
            manager.load_deferred(PROFILE_KIND)

    # -- writing ------------------------------------------------------------------------------

    def set_acting_plugins(self, lookup: Callable[[], frozenset[str]] | None) -> None:
        """Let plugin code register only as itself, profiles and aliases alike."""
        super().set_acting_plugins(lookup)
        self._aliases.set_acting_plugins(lookup)

    def register_provider(self, provider: object, *, owner: str = HOST) -> Handle:
        """Register a backend, or a :class:`ProviderProfile` (see :meth:`register_profile`)."""
        if isinstance(provider, ProviderProfile):
            return self.register_profile(provider, owner=owner)
        return super().register_provider(provider, owner=owner)

    def register_profile(self, profile: ProviderProfile, *, owner: str = HOST) -> Handle:
        """Register ``profile`` under its name and aliases for ``owner``; the last writer wins.

        :returns: a handle whose ``unregister()`` removes the profile and its aliases,
            restoring what they displaced.
        :raises RegistrationError: ``profile`` is not a ``ProviderProfile``, its name is not a
            non-empty string without spaces, or an alias is not a string.
        """
        who = describe_owner(owner)
        if not isinstance(profile, ProviderProfile):
            raise RegistrationError(
                f"model provider profile from {who} is refused: expected a ProviderProfile "
                f"(from providers.base or hermes_hooks), found {type(profile).__name__}"
            )
        aliases: object = profile.aliases  # a plugin's dataclass is not type-checked
        if not isinstance(aliases, (tuple, list)) or not all(isinstance(a, str) for a in aliases):
            raise RegistrationError(
                f"model provider profile {profile.name!r} from {who} is refused: aliases must "
                f"be a tuple of strings, found {aliases!r}"
            )
        backend = ProfileBackend(profile)
        if not isinstance(profile.name, str):
            raise RegistrationError(
                f"model provider profile from {who} is refused: name must be a string, found "
                f"{profile.name!r}"
            )
        handles = [super().register_provider(backend, owner=owner)]
        try:
            for alias in backend.aliases:
                if alias != backend.name:
                    handles.append(self._aliases.register(alias, backend.name, owner=owner))
        except RegistrationError:
            for handle in reversed(handles):
                handle.unregister()
            raise

        def undo() -> None:
            for handle in reversed(handles):
                handle.unregister()

        return Handle(undo, backend.name, owner, "model provider")

    def remove_owner(self, owner: str) -> list[str]:
        """Remove every backend, profile and alias ``owner`` registered."""
        self._aliases.remove_owner(owner)
        return super().remove_owner(owner)

    # -- reading ------------------------------------------------------------------------------

    def canonical(self, name: object) -> str | None:
        """Return the name of the backend ``name`` stands for (itself, or an alias's target).

        A name that is not the host's imports the model-provider plugins first.
        """
        if not isinstance(name, str) or not name.strip():
            return None
        key = _lower(name)
        if key not in BUILTIN_BACKENDS:
            self.load_profiles()
        if super().get_provider(key) is not None:
            return key
        with _lock:
            if key in _registered:
                return key
        target = self._aliases.get(key)
        return target if target is not None and super().get_provider(target) is not None else None

    def get_provider(self, name: object) -> ModelBackend | None:
        """Return the backend ``model.provider: name`` builds with (an alias works), or ``None``.

        This manager's own registrations first (a plugin's, then the host's), then those of
        :func:`register_provider`.
        """
        key = self.canonical(name)
        if key is None:
            return None
        own = super().get_provider(key)
        if own is not None and self.owner_of(key) != HOST:
            return own
        with _lock:
            shared = _registered.get(key)
        return shared if shared is not None else own

    def get_profile(self, name: object) -> ProviderProfile | None:
        """Return the profile registered under ``name`` or one of its aliases, or ``None``."""
        backend = self.get_provider(name)
        return backend.profile if isinstance(backend, ProfileBackend) else None

    def aliases(self) -> dict[str, str]:
        """Return every alias and the name it leads to."""
        return {e.name: e.value for e in self._aliases.entries()}

    def aliases_of(self, name: str) -> list[str]:
        """Return the aliases that lead to ``name`` now, sorted."""
        key = _lower(name)
        return sorted(e.name for e in self._aliases.entries() if e.value == key)

    def names(self, *, owner: str | None = None) -> list[str]:
        """Return the provider names ``model.provider`` may take here (``owner``'s only).

        Without ``owner``, the model-provider plugins are imported first; with one (a
        plugin's status), nothing is.
        """
        if owner is not None:
            own = super().names(owner=owner)
            if owner != HOST:
                return own
            with _lock:
                return sorted({*own, *_registered})
        self.load_profiles()
        with _lock:
            return sorted({*super().names(), *_registered})

    def list_providers(self) -> list[ModelBackend]:
        """Return the backend of every name, sorted by name."""
        found = (self.get_provider(name) for name in self.names())
        return [backend for backend in found if backend is not None]

    def list_profiles(self) -> list[ProviderProfile]:
        """Return every registered profile (one per name), sorted by name."""
        return [b.profile for b in self.list_providers() if isinstance(b, ProfileBackend)]

    def settings(self) -> ModelSettings:
        """Read the ``model:`` and ``providers:`` sections of this registry's home now.

        :raises ConfigError: the file cannot be read or a section has wrong types.
        """
        home = self.config_home()
        return ModelSettings.from_config(load_config(home), source=config_path(home))

    def create_model(self, settings: ModelSettings | None = None) -> ModelProvider:
        """Build the model ``settings`` (by default this home's ``model:``) describe.

        :raises ConfigError: the provider is unknown (with the closest names) or its settings
            do not fit.
        """
        settings = settings if settings is not None else self.settings()
        backend = self.get_provider(settings.provider)
        if backend is None:
            raise unknown_provider(settings.provider, self.names())
        return backend.create(settings)


def _read_settings(config: Mapping[str, Any], source: Path | None) -> ModelSettings:
    return ModelSettings.from_config(config, source=source)


def _plugin_llm(manager: PluginManager, plugin_id: str) -> object:
    from hermes_hooks.backends.models.plugin_llm import PluginLlm

    return PluginLlm(manager, plugin_id)


def _bind(manager: PluginManager, registry: ProviderRegistry[ModelBackend]) -> None:
    if isinstance(registry, ModelsRegistry):
        registry.bind(manager)


MODELS: Final[Family[ModelBackend]] = Family(
    name="models",
    title="model",
    provider_type=ModelBackend,
    selections=(Selection("model.provider", default=DEFAULT_PROVIDER),),
    ctx_method="register_model_provider",
    provider_kind="model provider",
    registry_class=ModelsRegistry,
    read_settings=_read_settings,
    install_tools=_bind,
    context_attributes={"llm": _plugin_llm},
    plugin_kind=PROFILE_KIND,
)
"""The models family: ``model.provider`` chooses the backend of the host's model and ``ctx.llm``;
``ctx.register_model_provider`` registers a backend or a profile; it serves model-provider
plugins, imported on the first profile lookup."""

"""Model providers: the interface, the models family chosen by ``model.provider``, the active model.

The models are a provider family (:mod:`hermes_hooks.backends.family`, :data:`MODELS`): each
manager has a :class:`ModelsRegistry` (``pm.models``) of :class:`ModelBackend` values, which
build a :class:`ModelProvider` from the ``model:`` settings. Two backends ship:
``offline`` (:mod:`hermes_hooks.backends.models.offline`, the deterministic, rule-based default
that needs no key and no network) and ``openai-compatible``
(:mod:`hermes_hooks.backends.models.openai_compat`, chat completions over HTTP); each is
imported only when it is chosen. ``ctx.llm`` (:mod:`hermes_hooks.backends.models.plugin_llm`)
finds its model through the family too.
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
    ModelError,
    ModelProvider,
    ModelResponse,
    ModelSettings,
    ToolCall,
    message_text,
)
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.config import config_path, load_config
from hermes_hooks.registries.base import HOST

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "DEFAULT_PROVIDER",
    "MODELS",
    "FactoryBackend",
    "ModelBackend",
    "ModelError",
    "ModelProvider",
    "ModelResponse",
    "ModelSettings",
    "ModelsRegistry",
    "ProviderFactory",
    "ToolCall",
    "create_model",
    "get_active_model",
    "get_models",
    "list_providers",
    "load_model",
    "load_model_settings",
    "message_text",
    "register_provider",
    "set_active_model",
]

ProviderFactory = Callable[[ModelSettings], ModelProvider]
"""Builds a provider from the ``model:`` settings; raises ``ConfigError`` when they do not fit."""

_BUILTIN: Final[dict[str, str]] = {
    "offline": "hermes_hooks.backends.models.offline:OfflineModel",
    "openai-compatible": "hermes_hooks.backends.models.openai_compat:OpenAICompatibleModel",
}
_registered: dict[str, ModelBackend] = {}
_active: weakref.WeakKeyDictionary[PluginManager, ModelProvider] = weakref.WeakKeyDictionary()
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
    return sorted({*_BUILTIN, *_registered})


def _unknown(name: str, known: list[str]) -> ConfigError:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    return ConfigError(
        f"model.provider {name!r} is unknown: expected one of {', '.join(known)}{hint}"
    )


def create_model(settings: ModelSettings) -> ModelProvider:
    """Build the model ``settings`` describe, with the host's and process-wide backends.

    A manager's own registry (:meth:`ModelsRegistry.create_model`) also knows the backends its
    plugins registered.

    :raises ConfigError: the provider is unknown (with the closest names) or its settings do
        not fit.
    """
    name = settings.provider
    backend = _registered.get(name)
    if backend is None and name in _BUILTIN:
        backend = FactoryBackend(name, target=_BUILTIN[name])
    if backend is None:
        raise _unknown(name, list_providers())
    return backend.create(settings)


def _read_settings(config: Mapping[str, Any], source: Path | None) -> ModelSettings:
    return ModelSettings.from_config(config, source=source)


class ModelsRegistry(ProviderRegistry[ModelBackend]):
    """One manager's model backends: the host's two, the process-wide ones, and plugins'.

    :param home: the Hermes home whose ``config.yaml`` has the ``model:`` section.
    """

    def __init__(self, home: Path | None = None) -> None:
        super().__init__(MODELS, home)
        for name, target in _BUILTIN.items():
            self.register_provider(FactoryBackend(name, target=target), owner=HOST)

    def get_provider(self, name: object) -> ModelBackend | None:
        """Return the backend ``model.provider: name`` builds with, or ``None``.

        This manager's own registrations first (a plugin's, then the host's), then those of
        :func:`register_provider`.
        """
        if not isinstance(name, str):
            return None
        key = name.strip().lower()
        own = super().get_provider(key)
        if own is not None and self.owner_of(key) != HOST:
            return own
        with _lock:
            shared = _registered.get(key)
        return shared if shared is not None else own

    def names(self, *, owner: str | None = None) -> list[str]:
        """Return the provider names ``model.provider`` may take here (``owner``'s only)."""
        own = super().names(owner=owner)
        if owner is not None and owner != HOST:
            return own
        with _lock:
            return sorted({*own, *_registered})

    def list_providers(self) -> list[ModelBackend]:
        """Return the backend of every name, sorted by name."""
        found = (self.get_provider(name) for name in self.names())
        return [backend for backend in found if backend is not None]

    def settings(self) -> ModelSettings:
        """Read the ``model:`` section of this registry's home now.

        :raises ConfigError: the file cannot be read or the section has wrong types.
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
            raise _unknown(settings.provider, self.names())
        return backend.create(settings)


def _plugin_llm(manager: PluginManager, plugin_id: str) -> object:
    from hermes_hooks.backends.models.plugin_llm import PluginLlm

    return PluginLlm(manager, plugin_id)


MODELS: Final[Family[ModelBackend]] = Family(
    name="models",
    title="model",
    provider_type=ModelBackend,
    selections=(Selection("model.provider", default=DEFAULT_PROVIDER),),
    provider_kind="model provider",
    registry_class=ModelsRegistry,
    read_settings=_read_settings,
    context_attributes={"llm": _plugin_llm},
)
"""The models family: ``model.provider`` chooses the backend of the host's model and ``ctx.llm``."""


def load_model_settings(pm: PluginManager) -> ModelSettings:
    """Return the ``model:`` settings of ``pm``'s ``config.yaml`` (defaults when absent).

    :raises ConfigError: the file cannot be read or the section has wrong types.
    """
    home = pm.hermes_home
    return ModelSettings.from_config(load_config(home), source=config_path(home))


def load_model(pm: PluginManager) -> ModelProvider:
    """Build the model ``pm``'s ``config.yaml`` names (``offline`` when it names none).

    :raises ConfigError: the provider is unknown or its settings do not fit.
    """
    return get_models(pm).create_model(load_model_settings(pm))


def get_models(pm: PluginManager) -> ModelsRegistry:
    """Return ``pm``'s registry of model backends (``pm.models``), typed."""
    registry = MODELS.registry(pm)
    assert isinstance(registry, ModelsRegistry)
    return registry


def set_active_model(pm: PluginManager, model: ModelProvider | None) -> None:
    """Record the model the host runs for ``pm`` (what ``ctx.llm`` uses); ``None`` forgets it."""
    with _lock:
        if model is None:
            _active.pop(pm, None)
        else:
            _active[pm] = model


def get_active_model(pm: PluginManager) -> ModelProvider | None:
    """Return the model the host runs for ``pm``, or ``None`` when no host has said."""
    return _active.get(pm)

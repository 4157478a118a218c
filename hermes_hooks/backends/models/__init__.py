"""Model providers: the interface, the models family chosen by ``model.provider``, the active model.

The models are a provider family (:mod:`hermes_hooks.backends.family`, :data:`MODELS`, declared
in :mod:`~hermes_hooks.backends.models.registry`): each manager has a :class:`ModelsRegistry`
(``pm.models``) of :class:`ModelBackend` values, which build a :class:`ModelProvider` from the
``model:`` settings. Two backends are the host's: ``offline``
(:mod:`~hermes_hooks.backends.models.offline`, the deterministic, rule-based default that needs
no key and no network) and ``openai-compatible`` (chat completions at ``model.base_url``); each
is imported only when it is chosen. The others are *profiles*
(:class:`~hermes_hooks.backends.models.profiles.ProviderProfile`) that model-provider plugins
register, spoken by :mod:`~hermes_hooks.backends.models.openai_compat` (``chat_completions``)
and :mod:`~hermes_hooks.backends.models.anthropic` (``anthropic_messages``). ``ctx.llm``
(:mod:`~hermes_hooks.backends.models.plugin_llm`) finds its model through the family too.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

from hermes_hooks.backends.models.base import (
    DEFAULT_PROVIDER,
    ModelBackend,
    ModelError,
    ModelProvider,
    ModelResponse,
    ModelSettings,
    ProviderEntry,
    ToolCall,
    message_text,
)
from hermes_hooks.backends.models.profiles import OMIT_TEMPERATURE, ProviderProfile
from hermes_hooks.backends.models.registry import (
    MODELS,
    FactoryBackend,
    ModelsRegistry,
    ProviderFactory,
    create_model,
    list_providers,
    register_provider,
)
from hermes_hooks.plugins.config import config_path, load_config

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "DEFAULT_PROVIDER",
    "MODELS",
    "OMIT_TEMPERATURE",
    "FactoryBackend",
    "ModelBackend",
    "ModelError",
    "ModelProvider",
    "ModelResponse",
    "ModelSettings",
    "ModelsRegistry",
    "ProviderEntry",
    "ProviderFactory",
    "ProviderProfile",
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

_active: weakref.WeakKeyDictionary[PluginManager, ModelProvider] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


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

"""Model providers: the interface, the registry chosen by ``model.provider``, the active model.

Two providers ship: ``offline`` (:mod:`hermes_hooks.backends.models.offline`, the deterministic,
rule-based default that needs no key and no network) and ``openai-compatible``
(:mod:`hermes_hooks.backends.models.openai_compat`, chat completions over HTTP). Each is
imported only when it is chosen.
"""

from __future__ import annotations

import difflib
import importlib
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from hermes_hooks.backends.models.base import (
    DEFAULT_PROVIDER,
    ModelError,
    ModelProvider,
    ModelResponse,
    ModelSettings,
    ToolCall,
    message_text,
)
from hermes_hooks.errors import ConfigError

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "DEFAULT_PROVIDER",
    "ModelError",
    "ModelProvider",
    "ModelResponse",
    "ModelSettings",
    "ProviderFactory",
    "ToolCall",
    "create_model",
    "get_active_model",
    "list_providers",
    "message_text",
    "register_provider",
    "set_active_model",
]

ProviderFactory = Callable[[ModelSettings], ModelProvider]
"""Builds a provider from the ``model:`` settings; raises ``ConfigError`` when they do not fit."""

_BUILTIN: dict[str, str] = {
    "offline": "hermes_hooks.backends.models.offline:OfflineModel",
    "openai-compatible": "hermes_hooks.backends.models.openai_compat:OpenAICompatibleModel",
}
_registered: dict[str, ProviderFactory] = {}
_active: weakref.WeakKeyDictionary[PluginManager, ModelProvider] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Make ``model.provider: NAME`` build its model with ``factory``; a later call wins."""
    with _lock:
        _registered[name.strip().lower()] = factory


def list_providers() -> list[str]:
    """Return the provider names ``model.provider`` may take, sorted."""
    return sorted({*_BUILTIN, *_registered})


def create_model(settings: ModelSettings) -> ModelProvider:
    """Build the model ``settings`` describe.

    :raises ConfigError: the provider is unknown (with the closest names) or its settings do
        not fit.
    """
    name = settings.provider
    factory = _registered.get(name)
    if factory is None and name in _BUILTIN:
        module_name, _, class_name = _BUILTIN[name].partition(":")
        factory = getattr(importlib.import_module(module_name), class_name).from_settings
    if factory is None:
        close = difflib.get_close_matches(name, list_providers(), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ConfigError(
            f"model.provider {name!r} is unknown: expected one of "
            f"{', '.join(list_providers())}{hint}"
        )
    return factory(settings)


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

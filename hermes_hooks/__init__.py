"""hermes-hooks: a pluggy-based plugin and hook framework for LLM agents.

Plugins import the markers from here (``from hermes_hooks import hookimpl``); hosts build a
:class:`PluginManager`. Everything but the markers is imported on first use, so that
``import hermes_hooks`` stays cheap for the many processes that only need the markers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hermes_hooks.spec.markers import PROJECT_NAME, hookimpl, hookspec

if TYPE_CHECKING:
    from hermes_hooks.calling.facade import Hooks
    from hermes_hooks.errors import (
        ConfigError,
        HermesHooksError,
        HookResultError,
        HookTimeoutError,
        ManifestError,
        PluginLlmTrustError,
        PluginLoadError,
        PluginToolOverrideError,
        RegistrationError,
    )
    from hermes_hooks.plugins.context import PluginContext
    from hermes_hooks.plugins.manager import PluginInfo, PluginManager
    from hermes_hooks.plugins.manifest import PluginManifest
    from hermes_hooks.spec.contract import HookContract, Mode, Policy
    from hermes_hooks.spec.hookspecs import VALID_HOOKS

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "HermesHooksError",
    "HookContract",
    "HookResultError",
    "HookTimeoutError",
    "Hooks",
    "ManifestError",
    "Mode",
    "PROJECT_NAME",
    "PluginContext",
    "PluginInfo",
    "PluginLlmTrustError",
    "PluginLoadError",
    "PluginManager",
    "PluginManifest",
    "PluginToolOverrideError",
    "Policy",
    "RegistrationError",
    "VALID_HOOKS",
    "__version__",
    "hookimpl",
    "hookspec",
]

_LAZY: dict[str, str] = {
    "ConfigError": "hermes_hooks.errors",
    "HermesHooksError": "hermes_hooks.errors",
    "HookContract": "hermes_hooks.spec.contract",
    "HookResultError": "hermes_hooks.errors",
    "HookTimeoutError": "hermes_hooks.errors",
    "Hooks": "hermes_hooks.calling.facade",
    "ManifestError": "hermes_hooks.errors",
    "Mode": "hermes_hooks.spec.contract",
    "PluginContext": "hermes_hooks.plugins.context",
    "PluginInfo": "hermes_hooks.plugins.manager",
    "PluginLlmTrustError": "hermes_hooks.errors",
    "PluginLoadError": "hermes_hooks.errors",
    "PluginManager": "hermes_hooks.plugins.manager",
    "PluginManifest": "hermes_hooks.plugins.manifest",
    "PluginToolOverrideError": "hermes_hooks.errors",
    "Policy": "hermes_hooks.spec.contract",
    "RegistrationError": "hermes_hooks.errors",
    "VALID_HOOKS": "hermes_hooks.spec.hookspecs",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'hermes_hooks' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

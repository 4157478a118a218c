"""The Hermes modules this layer serves, by their Hermes names, and what serves each.

One table, so that a later provider family adds its module (``agent.memory_provider``,
``agent.context_engine``, ``providers``...) with one line here and the module itself. The
finder, ``hermes plugins doctor`` and the reference page all read it. Nothing is imported
here.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

__all__ = [
    "MODULES",
    "SELF_IMPORT_ROOT",
    "is_served",
    "load_module",
    "package_names",
    "provided_names",
    "top_names",
]

MODULES: Final[dict[str, str]] = {
    "agent.image_gen_provider": "hermes_hooks.compat.image_gen_provider",
    "agent.image_gen_registry": "hermes_hooks.compat.image_gen_registry",
    "agent.plugin_llm": "hermes_hooks.compat.plugin_llm",
    "agent.memory_provider": "hermes_hooks.compat.memory_provider",
    "agent.context_engine": "hermes_hooks.compat.context_engine",
    "agent.context_compressor": "hermes_hooks.compat.context_compressor",
    "agent.model_metadata": "hermes_hooks.compat.model_metadata",
    "tools.registry": "hermes_hooks.compat.tools_registry",
    "hermes_constants": "hermes_hooks.compat.hermes_constants",
    "hermes_cli.config": "hermes_hooks.compat.hermes_cli_config",
    "hermes_cli.plugins": "hermes_hooks.compat.hermes_cli_plugins",
    "utils": "hermes_hooks.compat.utils",
    # Issue 15, second half: web search, video generation, browsers.
    "agent.web_search_provider": "hermes_hooks.compat.web_search_provider",
    "agent.video_gen_provider": "hermes_hooks.compat.video_gen_provider",
    "agent.browser_provider": "hermes_hooks.compat.browser_provider",
    # Issue 24: the transcription family.
    "agent.transcription_provider": "hermes_hooks.compat.transcription_provider",
    "agent.tts_provider": "hermes_hooks.compat.tts_provider",
    "agent.terminal_env_provider": "hermes_hooks.compat.terminal_env_provider",
    "agent.terminal_env_registry": "hermes_hooks.compat.terminal_env_registry",
    "agent.secret_sources": "hermes_hooks.compat.secret_sources",
    "agent.secret_sources.base": "hermes_hooks.compat.secret_sources_base",
    "hermes_cli.approval_transport": "hermes_hooks.compat.hermes_cli_approval_transport",
    # Model-provider profiles (the models family); providers.base is served below providers.
    "providers": "hermes_hooks.compat.providers",
    "providers.base": "hermes_hooks.compat.providers_base",
    # Issue 30 item 2: dashboard auth.
    "hermes_cli.dashboard_auth": "hermes_hooks.compat.dashboard_auth",
    "hermes_cli.dashboard_auth.base": "hermes_hooks.compat.dashboard_auth_base",
    "hermes_cli.dashboard_auth.registry": "hermes_hooks.compat.dashboard_auth_registry",
    "hermes_cli.dashboard_auth.token_auth": "hermes_hooks.compat.dashboard_auth_token_auth",
    # Issue 23: the gateway's names, for kind: platform plugins.
    "gateway.config": "hermes_hooks.compat.gateway_config",
    "gateway.session": "hermes_hooks.compat.gateway_session",
    "gateway.status": "hermes_hooks.compat.gateway_status",
    "gateway.platform_registry": "hermes_hooks.compat.gateway_platform_registry",
    "gateway.whatsapp_identity": "hermes_hooks.compat.gateway_whatsapp_identity",
    "gateway.platforms.base": "hermes_hooks.compat.gateway_platforms_base",
    "gateway.platforms.helpers": "hermes_hooks.compat.gateway_platforms_helpers",
    "gateway.platforms._http_client_limits": "hermes_hooks.compat.gateway_http_client_limits",
    "gateway.platforms._shared": "hermes_hooks.compat.gateway_platforms_shared",
    "gateway.platforms.event": "hermes_hooks.compat.gateway_platforms_event",
    "agent.i18n": "hermes_hooks.compat.agent_i18n",
    "hermes_cli.colors": "hermes_hooks.compat.hermes_cli_colors",
    "hermes_cli._subprocess_compat": "hermes_hooks.compat.hermes_cli_subprocess_compat",
    # Issue 30: middleware, cron, the helper modules.
    "hermes_cli.middleware": "hermes_hooks.compat.hermes_cli_middleware",
    "cron.jobs": "hermes_hooks.compat.cron_jobs",
    "cron.executions": "hermes_hooks.compat.cron_executions",
    "cron.scheduler_provider": "hermes_hooks.compat.cron_scheduler_provider",
    "cron.scheduler": "hermes_hooks.compat.cron_scheduler",
    "hermes_cli.auth": "hermes_hooks.compat.hermes_cli_auth",
    "tools.interrupt": "hermes_hooks.compat.tools_interrupt",
    "tools.lazy_deps": "hermes_hooks.compat.tools_lazy_deps",
}
"""Each Hermes module name served, and the module of this layer that is it."""

SELF_IMPORT_ROOT: Final = "plugins"
"""Hermes' plugins import themselves by package path: ``plugins.<key>`` (see ``selfimports``)."""


def top_names() -> frozenset[str]:
    """Return the top-level names this layer may serve (``agent``, ``utils``, ``plugins``...)."""
    return frozenset({name.partition(".")[0] for name in MODULES} | {SELF_IMPORT_ROOT})


def package_names() -> frozenset[str]:
    """Return the packages that only hold served modules (``agent``, ``tools``, ``hermes_cli``)."""
    found: set[str] = set()
    for name in MODULES:
        parts = name.split(".")
        found.update(".".join(parts[:end]) for end in range(1, len(parts)))
    return frozenset(found - set(MODULES))


def is_served(name: str) -> bool:
    """Tell whether ``name`` is a module or package this layer serves (self-imports aside)."""
    return name in MODULES or name in package_names()


def load_module(name: str) -> ModuleType:
    """Import and return the module of this layer that serves Hermes module ``name``.

    :raises KeyError: ``name`` is not served.
    """
    return importlib.import_module(MODULES[name])


def provided_names(name: str) -> tuple[str, ...]:
    """Return the public names Hermes module ``name`` provides here (its ``__all__``)."""
    return tuple(getattr(load_module(name), "__all__", ()))

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

from hermes_hooks.spec.contract import HERMES_CONTRACT_VERSION

__all__ = [
    "MODULES",
    "PACKAGE_ATTRIBUTES",
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
    "gateway.pairing": "hermes_hooks.compat.gateway_pairing",
    "gateway.run": "hermes_hooks.compat.gateway_run",
    "gateway.platforms.base": "hermes_hooks.compat.gateway_platforms_base",
    "gateway.platforms.helpers": "hermes_hooks.compat.gateway_platforms_helpers",
    "gateway.platforms._http_client_limits": "hermes_hooks.compat.gateway_http_client_limits",
    "gateway.platforms._shared": "hermes_hooks.compat.gateway_platforms_shared",
    "gateway.platforms.event": "hermes_hooks.compat.gateway_platforms_event",
    "gateway.platforms.whatsapp_common": "hermes_hooks.compat.gateway_whatsapp_common",
    "gateway.platforms.access_policy_mixin": "hermes_hooks.compat.gateway_access_policy_mixin",
    "agent.i18n": "hermes_hooks.compat.agent_i18n",
    "agent.async_utils": "hermes_hooks.compat.agent_async_utils",
    "agent.secret_scope": "hermes_hooks.compat.agent_secret_scope",
    "hermes_cli.colors": "hermes_hooks.compat.hermes_cli_colors",
    "hermes_cli.gateway": "hermes_hooks.compat.hermes_cli_gateway",
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
    # Issue 30 item 5: the rest of the helper modules plugins import.
    "tools.url_safety": "hermes_hooks.compat.tools_url_safety",
    "tools.website_policy": "hermes_hooks.compat.tools_website_policy",
    "tools.xai_http": "hermes_hooks.compat.tools_xai_http",
    "tools.approval": "hermes_hooks.compat.tools_approval",
    "agent.file_safety": "hermes_hooks.compat.agent_file_safety",
    "agent.memory_manager": "hermes_hooks.compat.agent_memory_manager",
    "agent.message_content": "hermes_hooks.compat.agent_message_content",
    "agent.skill_commands": "hermes_hooks.compat.agent_skill_commands",
    "hermes_cli.cli_output": "hermes_hooks.compat.hermes_cli_cli_output",
    "hermes_cli.secret_prompt": "hermes_hooks.compat.hermes_cli_secret_prompt",
    "hermes_cli.urllib_security": "hermes_hooks.compat.hermes_cli_urllib_security",
    "agent.portal_tags": "hermes_hooks.compat.agent_portal_tags",
    "agent.auxiliary_client": "hermes_hooks.compat.agent_auxiliary_client",
    "tools.microsoft_graph_auth": "hermes_hooks.compat.tools_microsoft_graph_auth",
    "tools.microsoft_graph_client": "hermes_hooks.compat.tools_microsoft_graph_client",
    "tools.transcription_tools": "hermes_hooks.compat.tools_transcription_tools",
    "tools.tool_backend_helpers": "hermes_hooks.compat.tools_tool_backend_helpers",
    "tools.managed_tool_gateway": "hermes_hooks.compat.tools_managed_tool_gateway",
    "tools.web_tools": "hermes_hooks.compat.tools_web_tools",
    "hermes_cli.profiles": "hermes_hooks.compat.hermes_cli_profiles",
    # Issue 30 item 6: the YAML policy Hermes' tests and plugins read config with.
    "hermes_yaml": "hermes_hooks.compat.hermes_yaml",
    "gateway.drain_control": "hermes_hooks.compat.gateway_drain_control",
    "agent.redact": "hermes_hooks.compat.agent_redact",
    # Issue 28: the session store the dashboard and memory plugins read.
    "hermes_state": "hermes_hooks.compat.hermes_state",
    # Issue 30 item 6: the tool definitions Hermes' plugin tests read plugin tools through.
    "model_tools": "hermes_hooks.compat.model_tools",
}
"""Each Hermes module name served, and the module of this layer that is it."""

PACKAGE_ATTRIBUTES: Final[dict[str, dict[str, str]]] = {
    "hermes_cli": {"__version__": HERMES_CONTRACT_VERSION},
}
"""Names the served packages themselves hold (``from hermes_cli import __version__``)."""

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

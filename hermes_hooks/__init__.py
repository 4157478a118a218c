"""hermes-hooks: a pluggy-based plugin and hook framework for LLM agents.

Plugins import what they use from here (``from hermes_hooks import hookimpl``; the provider
ABCs and their helpers, ``from hermes_hooks import ImageGenProvider, success_response``) and
never from a layer package; hosts build a :class:`PluginManager`. Everything but the markers
is imported on first use, so that ``import hermes_hooks`` stays cheap for the many processes
that only need the markers.

This module is also the composition root: it lists the provider families and the
compatibility layer's import finder at the plugin layer's extension point, by dotted path, so
that no lower layer names a higher one (see ``docs/explanation/layout.md``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hermes_hooks.plugins import extensions as _extensions
from hermes_hooks.spec.markers import PROJECT_NAME, hookimpl, hookspec

if TYPE_CHECKING:
    from hermes_hooks.backends.browser import BrowserPage, BrowserProvider
    from hermes_hooks.backends.context_engine import (
        ContextCompressor,
        ContextEngine,
        estimate_messages_tokens_rough,
        estimate_tokens_rough,
    )
    from hermes_hooks.backends.home import active_home
    from hermes_hooks.backends.image_gen import (
        DEFAULT_ASPECT_RATIO,
        VALID_ASPECT_RATIOS,
        ImageGenProvider,
        error_response,
        get_images_dir,
        load_image_gen_section,
        normalize_reference_images,
        resolve_aspect_ratio,
        save_b64_image,
        save_image_bytes,
        save_url_image,
        success_response,
    )
    from hermes_hooks.backends.memory import (
        MemoryProvider,
        RecallStatus,
        is_trivial_prompt,
        spawn_context_thread,
    )
    from hermes_hooks.backends.models import (
        ModelBackend,
        ModelError,
        ModelProvider,
        ModelResponse,
        ModelSettings,
        ToolCall,
    )
    from hermes_hooks.backends.models import register_provider as register_model_provider
    from hermes_hooks.backends.models.profiles import OMIT_TEMPERATURE, ProviderProfile
    from hermes_hooks.backends.video_gen import (
        OpenAICompatibleVideoGenProvider,
        VideoGenProvider,
        get_videos_dir,
        save_b64_video,
        save_bytes_video,
        save_url_video,
    )
    from hermes_hooks.backends.video_gen import error_response as video_error_response
    from hermes_hooks.backends.video_gen import success_response as video_success_response
    from hermes_hooks.backends.web_search import (
        FetchError,
        UrlBlockedError,
        WebSearchProvider,
        document,
        fetch_url,
        get_provider_env,
        html_to_text,
        load_web_section,
        page_error,
        search_failure,
        search_results,
        web_result,
    )
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
    from hermes_hooks.spec.contract import HERMES_CONTRACT_VERSION, HookContract, Mode, Policy
    from hermes_hooks.spec.hookspecs import VALID_HOOKS

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_ASPECT_RATIO",
    "HERMES_CONTRACT_VERSION",
    "OMIT_TEMPERATURE",
    "PROJECT_NAME",
    "VALID_ASPECT_RATIOS",
    "VALID_HOOKS",
    "BrowserPage",
    "BrowserProvider",
    "ConfigError",
    "FetchError",
    "ContextCompressor",
    "ContextEngine",
    "HermesHooksError",
    "HookContract",
    "HookResultError",
    "HookTimeoutError",
    "Hooks",
    "ImageGenProvider",
    "ManifestError",
    "MemoryProvider",
    "Mode",
    "ModelBackend",
    "ModelError",
    "ModelProvider",
    "ModelResponse",
    "ModelSettings",
    "OpenAICompatibleVideoGenProvider",
    "PluginContext",
    "PluginInfo",
    "PluginLlmTrustError",
    "PluginLoadError",
    "PluginManager",
    "PluginManifest",
    "PluginToolOverrideError",
    "Policy",
    "ProviderProfile",
    "RecallStatus",
    "RegistrationError",
    "ToolCall",
    "UrlBlockedError",
    "VideoGenProvider",
    "WebSearchProvider",
    "__version__",
    "active_home",
    "document",
    "error_response",
    "fetch_url",
    "estimate_messages_tokens_rough",
    "estimate_tokens_rough",
    "get_images_dir",
    "get_provider_env",
    "get_videos_dir",
    "hookimpl",
    "hookspec",
    "html_to_text",
    "is_trivial_prompt",
    "load_image_gen_section",
    "load_web_section",
    "normalize_reference_images",
    "page_error",
    "register_model_provider",
    "resolve_aspect_ratio",
    "save_b64_image",
    "save_b64_video",
    "save_bytes_video",
    "save_image_bytes",
    "save_url_image",
    "save_url_video",
    "search_failure",
    "search_results",
    "spawn_context_thread",
    "success_response",
    "video_error_response",
    "video_success_response",
    "web_result",
]

_IMAGE_GEN = "hermes_hooks.backends.image_gen"
_MODELS = "hermes_hooks.backends.models"
# Issue 15, second half: the web search, video generation and browser families.
_WEB = "hermes_hooks.backends.web_search"
_VIDEO = "hermes_hooks.backends.video_gen"
_BROWSER = "hermes_hooks.backends.browser"
_PROFILES = "hermes_hooks.backends.models.profiles"
_MEMORY = "hermes_hooks.backends.memory"
_CONTEXT_ENGINE = "hermes_hooks.backends.context_engine"

_LAZY: dict[str, str] = {
    "ConfigError": "hermes_hooks.errors",
    "ContextCompressor": _CONTEXT_ENGINE,
    "ContextEngine": _CONTEXT_ENGINE,
    "DEFAULT_ASPECT_RATIO": _IMAGE_GEN,
    "HERMES_CONTRACT_VERSION": "hermes_hooks.spec.contract",
    "HermesHooksError": "hermes_hooks.errors",
    "HookContract": "hermes_hooks.spec.contract",
    "HookResultError": "hermes_hooks.errors",
    "HookTimeoutError": "hermes_hooks.errors",
    "Hooks": "hermes_hooks.calling.facade",
    "ImageGenProvider": _IMAGE_GEN,
    "ManifestError": "hermes_hooks.errors",
    "MemoryProvider": _MEMORY,
    "Mode": "hermes_hooks.spec.contract",
    "ModelBackend": _MODELS,
    "ModelError": _MODELS,
    "ModelProvider": _MODELS,
    "ModelResponse": _MODELS,
    "ModelSettings": _MODELS,
    "OMIT_TEMPERATURE": _PROFILES,
    "ProviderProfile": _PROFILES,
    "PluginContext": "hermes_hooks.plugins.context",
    "PluginInfo": "hermes_hooks.plugins.manager",
    "PluginLlmTrustError": "hermes_hooks.errors",
    "PluginLoadError": "hermes_hooks.errors",
    "PluginManager": "hermes_hooks.plugins.manager",
    "PluginManifest": "hermes_hooks.plugins.manifest",
    "PluginToolOverrideError": "hermes_hooks.errors",
    "Policy": "hermes_hooks.spec.contract",
    "RecallStatus": _MEMORY,
    "RegistrationError": "hermes_hooks.errors",
    "ToolCall": _MODELS,
    "VALID_ASPECT_RATIOS": _IMAGE_GEN,
    "VALID_HOOKS": "hermes_hooks.spec.hookspecs",
    "error_response": _IMAGE_GEN,
    "estimate_messages_tokens_rough": _CONTEXT_ENGINE,
    "estimate_tokens_rough": _CONTEXT_ENGINE,
    "get_images_dir": _IMAGE_GEN,
    "is_trivial_prompt": _MEMORY,
    "load_image_gen_section": _IMAGE_GEN,
    "normalize_reference_images": _IMAGE_GEN,
    "register_model_provider": f"{_MODELS}:register_provider",
    "resolve_aspect_ratio": _IMAGE_GEN,
    "save_b64_image": _IMAGE_GEN,
    "save_image_bytes": _IMAGE_GEN,
    "save_url_image": _IMAGE_GEN,
    "spawn_context_thread": _MEMORY,
    "success_response": _IMAGE_GEN,
    # browsers
    "BrowserPage": _BROWSER,
    "BrowserProvider": _BROWSER,
    # video generation
    "OpenAICompatibleVideoGenProvider": _VIDEO,
    "VideoGenProvider": _VIDEO,
    "get_videos_dir": _VIDEO,
    "save_b64_video": _VIDEO,
    "save_bytes_video": _VIDEO,
    "save_url_video": _VIDEO,
    "video_error_response": f"{_VIDEO}:error_response",
    "video_success_response": f"{_VIDEO}:success_response",
    # web search
    "active_home": "hermes_hooks.backends.home",
    "FetchError": _WEB,
    "UrlBlockedError": _WEB,
    "WebSearchProvider": _WEB,
    "document": _WEB,
    "fetch_url": _WEB,
    "get_provider_env": _WEB,
    "html_to_text": _WEB,
    "load_web_section": _WEB,
    "page_error": _WEB,
    "search_failure": _WEB,
    "search_results": _WEB,
    "web_result": _WEB,
}
"""Each public name not imported at once: ``module`` (the same name there) or ``module:name``."""

# The provider families, by dotted path: imported when a manager, a ctx or the CLI asks.
_extensions.add_family("image_gen", f"{_IMAGE_GEN}:IMAGE_GEN")
_extensions.add_family("models", f"{_MODELS}:MODELS")
_extensions.add_family("web_search", f"{_WEB}:WEB_SEARCH")
_extensions.add_family("video_gen", f"{_VIDEO}:VIDEO_GEN")
_extensions.add_family("browser", f"{_BROWSER}:BROWSER")
_extensions.add_family("memory", f"{_MEMORY}:MEMORY")
_extensions.add_family("context_engine", f"{_CONTEXT_ENGINE}:CONTEXT_ENGINE")
# Hermes' plugin-facing modules (agent.*, tools.registry, hermes_constants, plugins.<key>...):
# the finder is installed by the first manager that discovers plugins, nothing before.
_extensions.set_import_finder("hermes_hooks.compat.finder:install")
# Cron: the scheduler family, and what firing a job means (the reference host's session).
_extensions.add_family("cron", "hermes_hooks.backends.cron:CRON")
_extensions.add_service("cron.run_one_job", "hermes_hooks.host.cron:run_one_job")
_extensions.add_service("cron.tick", "hermes_hooks.host.cron:tick")


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'hermes_hooks' has no attribute {name!r}")
    module_name, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module_name), attribute or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

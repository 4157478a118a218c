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

from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.plugins import extensions as _extensions
from hermes_hooks.spec.markers import (
    PROJECT_NAME as PROJECT_NAME,
    hookimpl as hookimpl,
    hookspec as hookspec,
)

if TYPE_CHECKING:
    # The public names, each once. `from module import name as name` re-exports a name for type
    # checkers; at run time the same lines are read, on first need, into `__all__` and the lazy
    # imports (_public_names), so that importing the package imports only the markers.
    from hermes_hooks.backends.browser import (
        BrowserPage as BrowserPage,
        BrowserProvider as BrowserProvider,
    )
    from hermes_hooks.backends.context_engine import (
        ContextCompressor as ContextCompressor,
        ContextEngine as ContextEngine,
        estimate_messages_tokens_rough as estimate_messages_tokens_rough,
        estimate_tokens_rough as estimate_tokens_rough,
    )
    from hermes_hooks.backends.home import (
        active_home as active_home,
    )
    from hermes_hooks.backends.image_gen import (
        DEFAULT_ASPECT_RATIO as DEFAULT_ASPECT_RATIO,
        VALID_ASPECT_RATIOS as VALID_ASPECT_RATIOS,
        ImageGenProvider as ImageGenProvider,
        error_response as error_response,
        get_images_dir as get_images_dir,
        load_image_gen_section as load_image_gen_section,
        normalize_reference_images as normalize_reference_images,
        resolve_aspect_ratio as resolve_aspect_ratio,
        save_b64_image as save_b64_image,
        save_image_bytes as save_image_bytes,
        save_url_image as save_url_image,
        success_response as success_response,
    )
    from hermes_hooks.backends.memory import (
        MemoryProvider as MemoryProvider,
        RecallStatus as RecallStatus,
        is_trivial_prompt as is_trivial_prompt,
        spawn_context_thread as spawn_context_thread,
    )
    from hermes_hooks.backends.models import (
        ModelBackend as ModelBackend,
        ModelError as ModelError,
        ModelProvider as ModelProvider,
        ModelResponse as ModelResponse,
        ModelSettings as ModelSettings,
        ToolCall as ToolCall,
        get_models as get_models,
        register_provider as register_model_provider,  # noqa: F401
    )
    from hermes_hooks.backends.models.profiles import (
        OMIT_TEMPERATURE as OMIT_TEMPERATURE,
        ProviderProfile as ProviderProfile,
    )
    from hermes_hooks.backends.video_gen import (
        OpenAICompatibleVideoGenProvider as OpenAICompatibleVideoGenProvider,
        VideoGenProvider as VideoGenProvider,
        error_response as video_error_response,  # noqa: F401
        get_videos_dir as get_videos_dir,
        save_b64_video as save_b64_video,
        save_bytes_video as save_bytes_video,
        save_url_video as save_url_video,
        success_response as video_success_response,  # noqa: F401
    )
    from hermes_hooks.backends.web_search import (
        FetchError as FetchError,
        UrlBlockedError as UrlBlockedError,
        WebSearchProvider as WebSearchProvider,
        document as document,
        fetch_url as fetch_url,
        get_provider_env as get_provider_env,
        html_to_text as html_to_text,
        load_web_section as load_web_section,
        page_error as page_error,
        search_failure as search_failure,
        search_results as search_results,
        web_result as web_result,
    )
    from hermes_hooks.bridges.claude_code import session_state as session_state
    from hermes_hooks.calling.facade import (
        Hooks as Hooks,
    )
    from hermes_hooks.errors import (
        ConfigError as ConfigError,
        HermesHooksError as HermesHooksError,
        HookResultError as HookResultError,
        HookTimeoutError as HookTimeoutError,
        ManifestError as ManifestError,
        PluginLlmTrustError as PluginLlmTrustError,
        PluginLoadError as PluginLoadError,
        PluginToolOverrideError as PluginToolOverrideError,
        RegistrationError as RegistrationError,
    )
    from hermes_hooks.plugins.context import (
        PluginContext as PluginContext,
    )
    from hermes_hooks.plugins.manager import (
        PluginInfo as PluginInfo,
        PluginManager as PluginManager,
    )
    from hermes_hooks.plugins.manifest import (
        PluginManifest as PluginManifest,
    )
    from hermes_hooks.spec.contract import (
        HERMES_CONTRACT_VERSION as HERMES_CONTRACT_VERSION,
        HookContract as HookContract,
        Mode as Mode,
        Policy as Policy,
    )
    from hermes_hooks.spec.hookspecs import (
        VALID_HOOKS as VALID_HOOKS,
    )

__version__ = "0.1.0"

_EAGER: Final = ("PROJECT_NAME", "__version__", "hookimpl", "hookspec")
"""The public names bound at import: the markers (imported above) and the version."""

_IMAGE_GEN = "hermes_hooks.backends.image_gen"
_MODELS = "hermes_hooks.backends.models"
_WEB = "hermes_hooks.backends.web_search"
_VIDEO = "hermes_hooks.backends.video_gen"
_BROWSER = "hermes_hooks.backends.browser"
_MEMORY = "hermes_hooks.backends.memory"
_CONTEXT_ENGINE = "hermes_hooks.backends.context_engine"

_lazy: dict[str, str] | None = None


def _public_names() -> dict[str, str]:
    """Each lazily imported public name: ``module`` (the same name there) or ``module:name``.

    Read once from the ``TYPE_CHECKING`` block of this file, the one list of the public names.
    """
    global _lazy
    if _lazy is None:
        from hermes_hooks.spec.exports import lazy_names

        _lazy = lazy_names(__file__)
    return _lazy


# The provider families, by dotted path: imported when a manager, a ctx or the CLI asks.
_extensions.add_family("image_gen", f"{_IMAGE_GEN}:IMAGE_GEN")
_extensions.add_family("models", f"{_MODELS}:MODELS")
_extensions.add_family("web_search", f"{_WEB}:WEB_SEARCH")
_extensions.add_family("video_gen", f"{_VIDEO}:VIDEO_GEN")
_extensions.add_family("browser", f"{_BROWSER}:BROWSER")
_extensions.add_family("memory", f"{_MEMORY}:MEMORY")
_extensions.add_family("context_engine", f"{_CONTEXT_ENGINE}:CONTEXT_ENGINE")
# Issue 28: the dashboard-auth providers (ctx.register_dashboard_auth_provider).
_extensions.add_family("dashboard_auth", "hermes_hooks.backends.dashboard_auth:DASHBOARD_AUTH")
_extensions.add_family("transcription", "hermes_hooks.backends.transcription:TRANSCRIPTION")
_extensions.add_family("tts", "hermes_hooks.backends.tts:TTS")
# Issue 24: where the terminal tool runs, and where credentials come from.
_extensions.add_family("terminal_env", "hermes_hooks.backends.terminal_env:TERMINAL_ENV")
_extensions.add_family("secret_sources", "hermes_hooks.backends.secret_sources:SECRET_SOURCES")
# Hermes' plugin-facing modules (agent.*, tools.registry, hermes_constants, plugins.<key>...):
# the finder is installed by the first manager that discovers plugins, nothing before.
_extensions.set_import_finder("hermes_hooks.compat.finder:install")
_extensions.set_mcp_caller("hermes_hooks.bridges.mcp_client:call_from_plugin")
# Cron: the scheduler family, and what firing a job means (the reference host's session).
_extensions.add_family("cron", "hermes_hooks.backends.cron:CRON")
_extensions.add_service("cron.run_one_job", "hermes_hooks.host.cron:run_one_job")
_extensions.add_service("cron.tick", "hermes_hooks.host.cron:tick")


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value: Any = sorted([*_EAGER, *_public_names()])
    else:
        target = _public_names().get(name)
        if target is None:
            raise AttributeError(f"module 'hermes_hooks' has no attribute {name!r}")
        from hermes_hooks.spec.exports import load

        value = load(target, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | {*_EAGER, *_public_names()})

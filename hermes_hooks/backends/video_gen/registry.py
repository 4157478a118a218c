"""The video generation family: ``video_gen.provider`` chooses who serves ``video_generate``.

As for images: the configured provider serves even when it is unavailable (the tool then says
why, without calling it); unset, the single available provider serves, else the bundled
``offline`` placeholder. ``video_gen.model`` picks one of the provider's model families and
``video_gen.timeout`` (default 1200 s: video jobs take minutes) bounds each call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.family import Family, ProviderRegistry, Selection
from hermes_hooks.backends.video_gen.provider import VideoGenProvider

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["DEFAULT_PROVIDER", "VIDEO_GEN"]

DEFAULT_PROVIDER: Final = "offline"
"""Chosen when ``video_gen.provider`` is unset and more than one provider is available."""


def _capabilities(provider: VideoGenProvider) -> dict[str, Any]:
    try:
        caps = provider.capabilities()
    except Exception:  # a broken provider must not break the listing
        return {}
    return dict(caps) if isinstance(caps, Mapping) else {}


def _describe(provider: VideoGenProvider) -> dict[str, Any]:
    return {"capabilities": _capabilities(provider)}


def _detail_lines(described: Mapping[str, Any]) -> list[str]:
    if not described.get("loaded", True):
        return []
    caps = described.get("capabilities") or {}
    modalities = caps.get("modalities") or ["text"]
    line = "input: text and images" if "image" in modalities else "input: text"
    if caps.get("max_duration"):
        line += f"; up to {caps['max_duration']} s"
    return [line]


def _install_tools(manager: PluginManager, registry: ProviderRegistry[VideoGenProvider]) -> None:
    from hermes_hooks.backends.video_gen.tool import install_video_generate_tool

    install_video_generate_tool(manager, registry)


VIDEO_GEN: Final[Family[VideoGenProvider]] = Family(
    name="video_gen",
    title="video generation",
    provider_type=VideoGenProvider,
    selections=(Selection("video_gen.provider", default=DEFAULT_PROVIDER),),
    model_key="video_gen.model",
    cli_name="video-gen",
    cli_examples=("--provider offline", "--json"),
    ctx_method="register_video_gen_provider",
    provider_kind="video provider",
    install_tools=_install_tools,
    tool_names=("video_generate",),
    none_registered_hint="; the bundled 'video_gen/offline' needs no key",
    describe_extra=_describe,
    detail_lines=_detail_lines,
    categories=("video_gen",),
    manifest_field="provides_video_gen_providers",
    timeout_key="video_gen.timeout",
    default_timeout=1200.0,
)
"""The video generation family."""

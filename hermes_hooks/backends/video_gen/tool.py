"""The ``video_generate`` host tool: the chosen video provider, called as every family's is.

Offered on every manager (toolset ``video_gen``) while a video provider is registered. Each
call reads ``video_gen`` anew, chooses the provider, checks the source images against its
``capabilities()`` and calls ``generate()`` through
:func:`~hermes_hooks.backends.calls.call_provider` (available first, bounded by
``video_gen.timeout``, failures named), in the manager's home so that videos land in its
``cache/videos/``. The answer is the provider's dict, or :func:`error_response`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.calls import (
    ProviderCallError,
    call_provider,
    read_timeout,
    settle_media_result,
)
from hermes_hooks.backends.family import FamilyError, ProviderRegistry
from hermes_hooks.backends.home import using_hermes_home
from hermes_hooks.backends.video_gen.provider import (
    COMMON_ASPECT_RATIOS,
    COMMON_RESOLUTIONS,
    DEFAULT_ASPECT_RATIO,
    DEFAULT_RESOLUTION,
    VideoGenProvider,
    error_response,
)
from hermes_hooks.backends.video_gen.registry import VIDEO_GEN
from hermes_hooks.errors import ConfigError
from hermes_hooks.registries.base import HOST, Handle

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "TOOL_NAME",
    "VIDEO_GENERATE_SCHEMA",
    "install_video_generate_tool",
    "run_video_generate",
]

TOOL_NAME: Final = "video_generate"
TOOLSET: Final = "video_gen"

VIDEO_GENERATE_SCHEMA: Final[dict[str, Any]] = {
    "name": TOOL_NAME,
    "description": (
        "Generate a short video from a text prompt, or animate an image by passing image_url "
        "(when the configured provider supports it). Returns JSON whose `video` field is a URL "
        "or an absolute file path: give it to the user. Takes from seconds to minutes."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "What the video should show."},
            "image_url": {
                "type": "string",
                "description": "An image to animate (image-to-video); omit for text-to-video.",
            },
            "reference_image_urls": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Further reference images, where the provider takes them.",
            },
            "duration": {"type": "integer", "minimum": 1, "description": "Length in seconds."},
            "aspect_ratio": {
                "type": "string",
                "enum": list(COMMON_ASPECT_RATIOS),
                "default": DEFAULT_ASPECT_RATIO,
            },
            "resolution": {
                "type": "string",
                "enum": list(COMMON_RESOLUTIONS),
                "default": DEFAULT_RESOLUTION,
            },
            "negative_prompt": {"type": "string", "description": "What to avoid."},
            "audio": {"type": "boolean", "description": "Generate a soundtrack, if supported."},
            "seed": {"type": "integer", "description": "For reproducible results."},
        },
        "required": ["prompt"],
    },
}


def _caps(provider: VideoGenProvider) -> dict[str, Any]:
    try:
        caps = provider.capabilities()
    except Exception:
        return {"modalities": ["text"]}
    return dict(caps) if isinstance(caps, Mapping) else {"modalities": ["text"]}


def _int(value: object) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        return None


def run_video_generate(
    registry: ProviderRegistry[VideoGenProvider], args: Mapping[str, Any]
) -> dict[str, Any]:
    """Serve one ``video_generate`` call and return the provider's dict, or an error dict."""
    prompt = args.get("prompt")
    raw_ratio = args.get("aspect_ratio")
    aspect = raw_ratio.strip() if isinstance(raw_ratio, str) and raw_ratio.strip() else ""
    aspect = aspect or DEFAULT_ASPECT_RATIO

    def fail(error: str, error_type: str, provider: str = "", model: str = "") -> dict[str, Any]:
        return error_response(
            error=error,
            error_type=error_type,
            provider=provider,
            model=model,
            prompt=prompt if isinstance(prompt, str) else "",
            aspect_ratio=aspect,
        )

    if not isinstance(prompt, str) or not prompt.strip():
        return fail("prompt is required: describe the video to generate", "invalid_input")
    prompt = prompt.strip()
    home = registry.config_home()
    try:
        settings = registry.settings()
        provider = registry.select_provider(settings)
        timeout = read_timeout(VIDEO_GEN, settings.section, home / "config.yaml")
    except FamilyError as exc:
        return fail(str(exc), exc.error_type)
    except ConfigError as exc:
        return fail(f"cannot read the video_gen configuration: {exc}", "config_error")
    name = str(provider.name)
    image_url = args.get("image_url") if isinstance(args.get("image_url"), str) else None
    refs = [r for r in args.get("reference_image_urls") or [] if isinstance(r, str) and r]
    caps = _caps(provider)
    if (image_url or refs) and "image" not in (caps.get("modalities") or ["text"]):
        return fail(
            f"video provider {name!r} generates from text only and cannot use image_url or "
            f"reference_image_urls: omit them, or choose a provider that animates images "
            f"('hermes tools video-gen')",
            "modality_unsupported",
            name,
        )
    model = settings.model
    kwargs: dict[str, Any] = {"aspect_ratio": aspect}
    if model is not None:
        kwargs["model"] = model
    for key, value in (
        ("image_url", image_url),
        ("reference_image_urls", refs or None),
        ("duration", _int(args.get("duration"))),
        ("negative_prompt", args.get("negative_prompt")),
        ("audio", args.get("audio") if isinstance(args.get("audio"), bool) else None),
        ("seed", _int(args.get("seed"))),
    ):
        if value is not None:
            kwargs[key] = value
    resolution = args.get("resolution")
    if isinstance(resolution, str) and resolution.strip():
        kwargs["resolution"] = resolution.strip()
    try:
        with using_hermes_home(home):
            result: object = call_provider(
                VIDEO_GEN,
                provider,
                "generate",
                prompt,
                timeout=timeout,
                registry=registry,
                **kwargs,
            )
    except ProviderCallError as exc:
        return fail(str(exc), exc.error_type, name, model or "")
    except FamilyError as exc:
        return fail(str(exc), exc.error_type, name, model or "")
    return settle_media_result(
        result, field="video", a_what="a video", name=name, model=model or "", fail=fail
    )


def _handler(registry: ProviderRegistry[VideoGenProvider]) -> Callable[..., str]:
    def video_generate(args: Mapping[str, Any], **kwargs: Any) -> str:
        return json.dumps(run_video_generate(registry, args), ensure_ascii=False, default=str)

    return video_generate


def install_video_generate_tool(
    pm: PluginManager, registry: ProviderRegistry[VideoGenProvider]
) -> Handle:
    """Register ``video_generate`` as a host tool of ``pm``, offered while a provider is."""

    def has_provider() -> bool:
        """Offered while a video generation provider is registered (a video_gen plugin)."""
        return registry.has_providers()

    return pm.tools.register_tool(
        TOOL_NAME,
        TOOLSET,
        VIDEO_GENERATE_SCHEMA,
        _handler(registry),
        check_fn=has_provider,
        emoji="🎬",
        owner=HOST,
    )

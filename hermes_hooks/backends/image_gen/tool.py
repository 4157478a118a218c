"""The ``image_generate`` host tool: ask the registry for the active provider and call it.

Every manager offers the tool (:func:`install_image_generate_tool`), owned by the host and
available while at least one provider is registered. The provider is called as every family
calls one (:func:`~hermes_hooks.backends.calls.call_provider`): asked ``is_available()``
first, bounded by ``image_gen.timeout``. Whatever goes wrong (no provider, an unavailable
one, a provider that raises, hangs or returns the wrong type, source images it cannot use) comes
back to the model as the JSON of
:func:`~hermes_hooks.backends.image_gen.provider.error_response` with an ``error_type``; the
tool never raises.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

from hermes_hooks.backends.calls import (
    ProviderCallError,
    call_provider,
    read_timeout,
    settle_media_result,
)
from hermes_hooks.backends.image_gen.provider import (
    DEFAULT_ASPECT_RATIO,
    VALID_ASPECT_RATIOS,
    ImageGenProvider,
    error_response,
    normalize_reference_images,
    resolve_aspect_ratio,
    using_hermes_home,
)
from hermes_hooks.backends.image_gen.registry import (
    IMAGE_GEN,
    LIST_HINT,
    ImageGenError,
    ImageGenRegistry,
)
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.config import get_hermes_home
from hermes_hooks.registries.base import HOST, Handle
from hermes_hooks.registries.tools import ToolRegistry

__all__ = [
    "IMAGE_GENERATE_SCHEMA",
    "TOOLSET",
    "TOOL_NAME",
    "build_image_generate_schema",
    "install_image_generate_tool",
    "make_image_generate_handler",
    "run_image_generate",
]

logger = logging.getLogger(__name__)

TOOL_NAME: Final = "image_generate"
TOOLSET: Final = "image_gen"

IMAGE_GENERATE_SCHEMA: Final[dict[str, Any]] = {
    "name": TOOL_NAME,
    "description": (
        "Generate an image from a text prompt, or edit an existing image by passing image_url "
        "(when the configured provider supports editing). Returns JSON whose `image` field is "
        "a URL or an absolute file path: give it to the user."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "description": (
                    "What the image should show (text-to-image), or the edit to apply "
                    "(image-to-image). Be detailed and descriptive."
                ),
            },
            "aspect_ratio": {
                "type": "string",
                "enum": list(VALID_ASPECT_RATIOS),
                "default": DEFAULT_ASPECT_RATIO,
                "description": "landscape is wide (3:2), portrait tall (2:3), square 1:1.",
            },
            "image_url": {
                "type": "string",
                "description": (
                    "Source image to edit: a URL or an absolute local path. Omit for text-to-image."
                ),
            },
            "reference_image_urls": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Further reference images (style, character, composition).",
            },
        },
        "required": ["prompt"],
    },
}
"""The OpenAI function schema of ``image_generate`` with every parameter the handler accepts.

What the model is shown is narrower: :func:`build_image_generate_schema` for the active
provider's capabilities (as Hermes' dynamic schema), so ``image_url`` is offered only when the
provider can edit.
"""


def build_image_generate_schema(capabilities: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return the ``image_generate`` schema for a provider with these ``capabilities()``.

    ``image_url`` appears only when ``"image"`` is among the modalities, and
    ``reference_image_urls`` (with ``maxItems``) only when references are accepted as well.
    The handler still takes both either way and answers with a capability error.
    """
    caps = capabilities or {}
    modalities = caps.get("modalities") or ["text"]
    properties = IMAGE_GENERATE_SCHEMA["parameters"]["properties"]
    shown: dict[str, Any] = {
        "prompt": properties["prompt"],
        "aspect_ratio": properties["aspect_ratio"],
    }
    if "image" in modalities:
        clause = ", or edit an existing image by passing image_url"
        shown["image_url"] = properties["image_url"]
        max_refs = _as_int(caps.get("max_reference_images"), 0)
        if max_refs > 0:
            shown["reference_image_urls"] = {
                **properties["reference_image_urls"],
                "maxItems": max_refs,
            }
    else:
        clause = " (text-to-image only: the configured provider cannot edit images)"
    return {
        "name": TOOL_NAME,
        "description": (
            f"Generate an image from a text prompt{clause}. Returns JSON whose `image` field is "
            f"a URL or an absolute file path: give it to the user."
        ),
        "parameters": {"type": "object", "properties": shown, "required": ["prompt"]},
    }


class _ActiveProviderSchema(Mapping[str, Any]):
    """The tool's schema, rendered again from the active provider each time it is iterated.

    A host turns the schema into a definition with ``dict(schema)``, which iterates once and
    then reads each key: the keys are served from that one rendering.
    """

    def __init__(self, registry: ImageGenRegistry) -> None:
        self._registry = registry
        self._rendered: dict[str, Any] | None = None

    def _render(self) -> dict[str, Any]:
        provider = self._registry.get_active_provider()
        self._rendered = build_image_generate_schema(
            _capabilities(provider) if provider is not None else None
        )
        return self._rendered

    def __iter__(self) -> Iterator[str]:
        return iter(self._render())

    def __len__(self) -> int:
        return len(self._render())

    def __getitem__(self, key: str) -> Any:
        rendered = self._rendered if self._rendered is not None else self._render()
        return rendered[key]


class ImageGenHost(Protocol):
    """What :func:`install_image_generate_tool` needs of a manager."""

    @property
    def tools(self) -> ToolRegistry: ...

    @property
    def image_gen(self) -> ImageGenRegistry: ...


def _capabilities(provider: ImageGenProvider) -> dict[str, Any]:
    try:
        caps = provider.capabilities()
    except Exception as exc:
        logger.debug("image_gen provider %r: capabilities() raised %r", provider, exc)
        return {"modalities": ["text"], "max_reference_images": 0}
    return dict(caps) if isinstance(caps, Mapping) else {"modalities": ["text"]}


def _as_int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _check_sources(
    provider: ImageGenProvider, name: str, image_url: str | None, refs: list[str] | None
) -> tuple[str, str] | None:
    """Return ``(error, error_type)`` when the provider cannot take these source images."""
    sources = ([image_url] if image_url else []) + (refs or [])
    if not sources:
        return None
    caps = _capabilities(provider)
    modalities = caps.get("modalities") or ["text"]
    if "image" not in modalities:
        return (
            f"image provider {name!r} generates from text only and cannot use image_url or "
            f"reference_image_urls: omit them, or choose a provider that edits images "
            f"({LIST_HINT})",
            "modality_unsupported",
        )
    max_refs = _as_int(caps.get("max_reference_images"), 0)
    if refs and len(refs) > max_refs:
        return (
            f"image provider {name!r} takes at most {max_refs} reference images, "
            f"{len(refs)} were given",
            "too_many_images",
        )
    max_sources = _as_int(caps.get("max_source_images"), 0)
    if max_sources and len(sources) > max_sources:
        return (
            f"image provider {name!r} takes at most {max_sources} source images in all "
            f"(image_url and references), {len(sources)} were given",
            "too_many_images",
        )
    return None


def _model_ids(provider: ImageGenProvider) -> list[str]:
    try:
        models = provider.list_models()
    except Exception as exc:
        logger.debug("image_gen provider %r: list_models() raised %r", provider, exc)
        return []
    return [m["id"] for m in models if isinstance(m, Mapping) and isinstance(m.get("id"), str)]


def _check_model(
    provider: ImageGenProvider, name: str, model: str | None
) -> tuple[str, str] | None:
    """Return (error, error_type) when the configured ``image_gen.model`` is one the provider
    says it does not offer, else ``None``."""
    if model is None:
        return None
    known = _model_ids(provider)
    if not known or model in known:
        return None
    return (
        f"image_gen.model is {model!r}, which image provider {name!r} does not offer "
        f"(its models: {', '.join(known)}); choose one with 'hermes tools image-gen "
        f"--provider {name} --model ID'",
        "model_not_found",
    )


def run_image_generate(
    registry: ImageGenRegistry, args: Mapping[str, Any], *, home: Path | None = None
) -> dict[str, Any]:
    """Serve one ``image_generate`` call and return the provider's dict, or an error dict.

    :param args: ``prompt``, and optionally ``aspect_ratio``, ``image_url``,
        ``reference_image_urls``.
    :param home: where images are saved; the registry's home (else ``$HERMES_HOME``) by default.
    """
    aspect = resolve_aspect_ratio(args.get("aspect_ratio"))
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return error_response(
            error="prompt is required: describe the image to generate",
            error_type="invalid_input",
            aspect_ratio=aspect,
        )
    prompt = prompt.strip()
    raw_url = args.get("image_url")
    image_url = raw_url.strip() if isinstance(raw_url, str) and raw_url.strip() else None
    refs = normalize_reference_images(args.get("reference_image_urls"))

    def fail(error: str, error_type: str, provider: str = "", model: str = "") -> dict[str, Any]:
        return error_response(
            error=error,
            error_type=error_type,
            provider=provider,
            model=model,
            prompt=prompt,
            aspect_ratio=aspect,
        )

    try:
        settings = registry.settings()
        provider = registry.select_provider(settings)
        name = str(provider.name)
    except ImageGenError as exc:
        return fail(str(exc), exc.error_type)
    except ConfigError as exc:
        return fail(f"cannot read the image_gen configuration: {exc}", "config_error")

    problem = _check_sources(provider, name, image_url, refs)
    if problem is not None:
        return fail(*problem, provider=name)
    model = settings.model
    problem = _check_model(provider, name, model)
    if problem is not None:
        return fail(*problem, provider=name, model=model or "")

    given = {"model": model, "image_url": image_url, "reference_image_urls": refs or None}
    kwargs: dict[str, Any] = {"prompt": prompt, "aspect_ratio": aspect}
    kwargs.update((key, value) for key, value in given.items() if value is not None)
    target = home or registry.home or get_hermes_home()
    try:
        timeout = read_timeout(IMAGE_GEN, settings.section, registry.config_home())
    except ConfigError as exc:
        return fail(f"cannot read the image_gen configuration: {exc}", "config_error", name)
    try:
        with using_hermes_home(target):
            result: object = call_provider(
                IMAGE_GEN, provider, "generate", timeout=timeout, registry=registry, **kwargs
            )
    except ProviderCallError as exc:
        cause = exc.__cause__
        if isinstance(cause, TypeError) and (image_url is not None or refs):
            # A generate() written before image_url existed: say so instead of a bare TypeError.
            return fail(
                f"image provider {name!r} does not accept source images (its generate() has no "
                f"image_url/reference_image_urls parameters: {cause}); omit them for "
                f"text-to-image",
                "modality_unsupported",
                provider=name,
                model=model or "",
            )
        return fail(str(exc), exc.error_type, provider=name, model=model or "")
    except ImageGenError as exc:  # unavailable, or it did not answer in time
        return fail(str(exc), exc.error_type, provider=name, model=model or "")
    return settle_media_result(
        result, field="image", a_what="an image", name=name, model=model or "", fail=fail
    )


def make_image_generate_handler(
    registry: ImageGenRegistry, *, home: Path | None = None
) -> Callable[..., str]:
    """Return the tool handler ``handler(args: dict, **kwargs) -> str`` over ``registry``."""

    def image_generate(args: Mapping[str, Any], **kwargs: Any) -> str:
        result = run_image_generate(registry, args, home=home)
        return json.dumps(result, ensure_ascii=False, default=str)

    return image_generate


def install_image_generate_tool(pm: ImageGenHost) -> Handle:
    """Register ``image_generate`` as a host tool of ``pm``, available while a provider is."""
    registry = pm.image_gen

    def has_provider() -> bool:
        """Offered while an image generation provider is registered (an image_gen plugin)."""
        return registry.has_providers()

    return pm.tools.register_tool(
        TOOL_NAME,
        TOOLSET,
        _ActiveProviderSchema(registry),
        make_image_generate_handler(registry),
        check_fn=has_provider,
        description=IMAGE_GENERATE_SCHEMA["description"],
        emoji="🎨",
        owner=HOST,
    )

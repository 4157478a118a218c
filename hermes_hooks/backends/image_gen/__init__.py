"""Image generation: the provider contract, its registry and the ``image_generate`` tool.

A provider plugin written for Hermes works unchanged (``agent.image_gen_provider`` is served by
the compatibility layer); one written for hermes-hooks imports the names a provider uses from
``hermes_hooks``::

    from hermes_hooks import (
        DEFAULT_ASPECT_RATIO,
        ImageGenProvider,
        error_response,
        normalize_reference_images,
        resolve_aspect_ratio,
        save_b64_image,
        success_response,
    )

and registers with ``ctx.register_image_gen_provider(MyProvider())``. See
``docs/how-to/image-provider.md``.
"""

from __future__ import annotations

from hermes_hooks.backends.image_gen.provider import (
    DEFAULT_ASPECT_RATIO,
    VALID_ASPECT_RATIOS,
    ImageGenProvider,
    error_response,
    get_active_home,
    get_images_dir,
    normalize_reference_images,
    resolve_aspect_ratio,
    save_b64_image,
    save_image_bytes,
    save_url_image,
    success_response,
    using_hermes_home,
)
from hermes_hooks.backends.image_gen.registry import (
    DEFAULT_PROVIDER,
    IMAGE_GEN,
    ImageGenError,
    ImageGenRegistry,
    ImageGenSettings,
    NoImageProviderError,
    ProviderNotRegisteredError,
    is_available_safe,
    load_image_gen_section,
)
from hermes_hooks.backends.image_gen.tool import (
    IMAGE_GENERATE_SCHEMA,
    TOOL_NAME,
    TOOLSET,
    build_image_generate_schema,
    install_image_generate_tool,
    make_image_generate_handler,
    run_image_generate,
)

__all__ = [
    "DEFAULT_ASPECT_RATIO",
    "DEFAULT_PROVIDER",
    "IMAGE_GEN",
    "IMAGE_GENERATE_SCHEMA",
    "TOOLSET",
    "TOOL_NAME",
    "VALID_ASPECT_RATIOS",
    "ImageGenError",
    "ImageGenProvider",
    "ImageGenRegistry",
    "ImageGenSettings",
    "NoImageProviderError",
    "ProviderNotRegisteredError",
    "build_image_generate_schema",
    "error_response",
    "get_active_home",
    "get_images_dir",
    "install_image_generate_tool",
    "is_available_safe",
    "load_image_gen_section",
    "make_image_generate_handler",
    "normalize_reference_images",
    "resolve_aspect_ratio",
    "run_image_generate",
    "save_b64_image",
    "save_image_bytes",
    "save_url_image",
    "success_response",
    "using_hermes_home",
]

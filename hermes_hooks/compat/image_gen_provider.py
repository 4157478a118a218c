"""Hermes' ``agent.image_gen_provider``: the image provider ABC and its response helpers.

The same objects as :mod:`hermes_hooks.backends.image_gen.provider` (``ImageGenProvider`` is
the family's ABC, so a provider written for Hermes registers here unchanged). The savers write
under the home of the manager whose ``image_generate`` tool runs, else the current manager's.
"""

from __future__ import annotations

from pathlib import Path

from hermes_hooks.backends.image_gen import provider as _provider
from hermes_hooks.backends.image_gen.provider import (
    DEFAULT_ASPECT_RATIO,
    DEFAULT_URL_IMAGE_MAX_BYTES,
    VALID_ASPECT_RATIOS,
    ImageGenProvider,
    error_response,
    normalize_reference_images,
    resolve_aspect_ratio,
    success_response,
)
from hermes_hooks.compat.current import current_home

__all__ = [
    "DEFAULT_ASPECT_RATIO",
    "VALID_ASPECT_RATIOS",
    "ImageGenProvider",
    "error_response",
    "normalize_reference_images",
    "resolve_aspect_ratio",
    "save_b64_image",
    "save_url_image",
    "success_response",
]


def _home() -> Path:
    return _provider.get_active_home() or current_home()


def save_b64_image(b64_data: str, *, prefix: str = "image", extension: str = "png") -> Path:
    """Decode base64 image data and write it under ``$HERMES_HOME/cache/images/``.

    :returns: the absolute path, ``<prefix>_<YYYYMMDD_HHMMSS>_<short-uuid>.<ext>``.
    :raises ValueError: the data is not valid base64, or empty.
    """
    return _provider.save_b64_image(b64_data, prefix=prefix, extension=extension, home=_home())


def save_url_image(
    url: str,
    *,
    prefix: str = "image",
    timeout: float = 60.0,
    max_bytes: int = DEFAULT_URL_IMAGE_MAX_BYTES,
) -> Path:
    """Download an image URL and write it under ``$HERMES_HOME/cache/images/``.

    :returns: the absolute path of the saved file.
    :raises ValueError: not an image, too large, or empty.
    :raises httpx.HTTPError: the request failed or answered with an error status.
    """
    return _provider.save_url_image(
        url, prefix=prefix, timeout=timeout, max_bytes=max_bytes, home=_home()
    )

"""The ``ImageGenProvider`` ABC and the helpers a provider builds its answer with.

Faithful to Hermes' ``agent/image_gen_provider.py``: a provider implements ``name`` and
``generate()``; everything else has a default. ``generate()`` answers with the dict that
:func:`success_response` or :func:`error_response` builds; the ``image_generate`` tool turns it
into JSON for the model. Keys of that dict:

    success        bool
    image          str | None       URL or absolute file path
    model          str              provider-specific model identifier
    prompt         str              echoed prompt
    aspect_ratio   str              "landscape" | "square" | "portrait"
    modality       str              "text" | "image" (which mode was used; success only)
    provider       str              provider name (for diagnostics)
    error          str              only when success is False
    error_type     str              only when success is False

Images a provider receives as bytes, base64 or an (often short-lived) URL are written under
``$HERMES_HOME/cache/images/`` by :func:`save_image_bytes`, :func:`save_b64_image` and
:func:`save_url_image`. The home is the one of the manager whose ``image_generate`` tool is
running (set with :func:`using_hermes_home`), read when the image is saved, never at import
time.
"""

from __future__ import annotations

import abc
import re
from pathlib import Path
from typing import Any, Final

from hermes_hooks.backends.download import save_url
from hermes_hooks.backends.home import active_home, get_active_home, using_hermes_home

__all__ = [
    "DEFAULT_ASPECT_RATIO",
    "VALID_ASPECT_RATIOS",
    "ImageGenProvider",
    "error_response",
    "get_active_home",
    "get_images_dir",
    "normalize_reference_images",
    "resolve_aspect_ratio",
    "save_b64_image",
    "save_image_bytes",
    "save_url_image",
    "success_response",
    "using_hermes_home",
]

VALID_ASPECT_RATIOS: Final[tuple[str, ...]] = ("landscape", "square", "portrait")
"""The aspect ratios ``image_generate`` accepts."""
DEFAULT_ASPECT_RATIO: Final = "landscape"
"""What an absent or unknown aspect ratio becomes."""

_UNSAFE_NAME: Final = re.compile(r"[^A-Za-z0-9._-]+")


class ImageGenProvider(abc.ABC):
    """An image generation backend behind the ``image_generate`` tool.

    Subclasses implement :attr:`name` and :meth:`generate`; override the rest only as needed.
    Register an instance with ``ctx.register_image_gen_provider(provider)``.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Stable identifier used in ``image_gen.provider``: lower case, no spaces."""

    @property
    def display_name(self) -> str:
        """Human-readable label shown by ``hermes tools image-gen``; ``name.title()`` by default."""
        return self.name.title()

    def is_available(self) -> bool:
        """Return whether the provider can serve calls now (key set, dependency importable)."""
        return True

    def list_models(self) -> list[dict[str, Any]]:
        """Return the model catalog: dicts with ``id`` and optionally ``display``, ``speed``,
        ``strengths``, ``price``. Empty by default (no user-selectable models)."""
        return []

    def get_setup_schema(self) -> dict[str, Any]:
        """Return picker metadata: ``name``, ``badge``, ``tag`` and the ``env_vars`` to ask for.

        Each ``env_vars`` item is ``{"key": "X_API_KEY", "prompt": "...", "url": "..."}``.
        """
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}

    def default_model(self) -> str | None:
        """Return the model used when none is configured: the first catalog id, or ``None``."""
        models = self.list_models()
        if models:
            first = models[0].get("id")
            return first if isinstance(first, str) else None
        return None

    def capabilities(self) -> dict[str, Any]:
        """Return what the backend accepts: ``modalities`` (``"text"``, ``"image"``),
        ``max_reference_images`` and optionally ``max_source_images``. Text only by default."""
        return {"modalities": ["text"], "max_reference_images": 0}

    @abc.abstractmethod
    def generate(
        self,
        prompt: str,
        aspect_ratio: str = DEFAULT_ASPECT_RATIO,
        *,
        image_url: str | None = None,
        reference_image_urls: list[str] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Generate an image from ``prompt``, or edit ``image_url`` when it is given.

        :param image_url: the source image to edit (image-to-image); ``None`` for text-to-image.
        :param reference_image_urls: further style or composition references.
        :param kwargs: ``model`` (the configured ``image_gen.model``) and parameters of newer
            hosts; unknown keys must be ignored.
        :returns: the dict of :func:`success_response` or :func:`error_response`.
        """

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def resolve_aspect_ratio(value: object) -> str:
    """Return ``value`` as one of :data:`VALID_ASPECT_RATIOS`; anything else becomes the default.

    Forgiving on purpose: a model's typo should not cost it a turn.
    """
    if not isinstance(value, str):
        return DEFAULT_ASPECT_RATIO
    cleaned = value.strip().lower()
    return cleaned if cleaned in VALID_ASPECT_RATIOS else DEFAULT_ASPECT_RATIO


def normalize_reference_images(value: object) -> list[str] | None:
    """Return a clean list of URL or path strings from a string or a list, or ``None``.

    Blank and non-string items are dropped; ``None`` stands for "no references".
    """
    if value is None:
        return None
    items: object = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        return None
    out = [item.strip() for item in items if isinstance(item, str) and item.strip()]
    return out or None


def get_images_dir(home: Path | None = None) -> Path:
    """Return ``<home>/cache/images``, created if needed.

    :param home: the Hermes home; by default the one set by :func:`using_hermes_home`, else
        ``$HERMES_HOME`` (or ``~/.hermes``) read now.
    """
    base = home if home is not None else active_home()
    folder = Path(base) / "cache" / "images"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save_image_bytes(
    data: bytes, *, prefix: str = "image", extension: str = "png", home: Path | None = None
) -> Path:
    """Write image bytes to ``cache/images/<prefix>_<YYYYMMDD_HHMMSS>_<uuid8>.<ext>``.

    :param prefix: usually the provider name; characters unsafe in a file name become ``_``.
    :param home: the Hermes home (see :func:`get_images_dir`).
    :returns: the absolute path of the new file.
    :raises ValueError: ``data`` is empty.
    """
    if not data:
        raise ValueError("image data is empty; nothing to save")
    safe_prefix = _UNSAFE_NAME.sub("_", prefix).strip("._") or "image"
    safe_ext = _UNSAFE_NAME.sub("", extension.lstrip(".")).lower() or "png"
    import datetime  # here: only a provider saving an image needs these
    import uuid

    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
    path = get_images_dir(home) / f"{safe_prefix}_{stamp}_{uuid.uuid4().hex[:8]}.{safe_ext}"
    with path.open("xb") as fh:  # "x": never overwrite another call's image
        fh.write(data)
    return path.resolve()


def save_b64_image(
    b64_data: str, *, prefix: str = "image", extension: str = "png", home: Path | None = None
) -> Path:
    """Decode base64 image data (a ``data:`` URL too) and save it as :func:`save_image_bytes`.

    :returns: the absolute path of the new file.
    :raises ValueError: the data is not valid base64, or empty.
    """
    text = b64_data.strip()
    if text.startswith("data:"):
        text = text.partition(",")[2]
    text = "".join(text.split())  # some servers wrap base64 in lines
    import base64  # here: only a provider saving an image needs it

    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise ValueError(f"image data is not valid base64: {exc}") from exc
    return save_image_bytes(raw, prefix=prefix, extension=extension, home=home)


_URL_IMAGE_TYPES: Final[dict[str, str]] = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/jpg": "jpg",
    "image/webp": "webp",
    "image/gif": "gif",
}
_URL_SUFFIXES: Final = ("png", "jpg", "jpeg", "webp", "gif")
DEFAULT_URL_IMAGE_MAX_BYTES: Final = 25 * 1024 * 1024
"""The most :func:`save_url_image` downloads, as Hermes caps it."""


def _url_extension(url: str, content_type: str) -> str:
    extension = _URL_IMAGE_TYPES.get(content_type)
    if extension is not None:
        return extension
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    suffix = next((ext for ext in _URL_SUFFIXES if path.endswith(f".{ext}")), "png")
    return "jpg" if suffix == "jpeg" else suffix


def save_url_image(
    url: str,
    *,
    prefix: str = "image",
    timeout: float = 60.0,
    max_bytes: int = DEFAULT_URL_IMAGE_MAX_BYTES,
    home: Path | None = None,
) -> Path:
    """Download an image URL to ``cache/images/<prefix>_<YYYYMMDD_HHMMSS>_<uuid8>.<ext>``.

    For providers whose API answers with a short-lived URL (xAI, some OpenAI paths): the bytes
    are kept locally when the tool call completes, so a gateway still finds them later. The
    extension comes from the ``Content-Type`` (png, jpg, webp, gif), else the URL's suffix,
    else ``png``.

    :param home: the Hermes home (see :func:`get_images_dir`).
    :returns: the absolute path of the new file.
    :raises ValueError: not an ``http(s)`` URL, a ``Content-Type`` that is not an image (HTML,
        JSON, text), more than ``max_bytes``, or an empty body; no file is left behind.
    :raises httpx.HTTPError: the request failed or the server answered with an error status.
    """
    import datetime  # here: only a provider saving an image needs these
    import uuid

    safe_prefix = _UNSAFE_NAME.sub("_", prefix).strip("._") or "image"
    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")

    def target(extension: str) -> Path:
        return get_images_dir(home) / f"{safe_prefix}_{stamp}_{uuid.uuid4().hex[:8]}.{extension}"

    return save_url(
        url,
        what="image",
        a_what="an image",
        extension_of=_url_extension,
        target=target,
        timeout=timeout,
        max_bytes=max_bytes,
    )


def success_response(
    *,
    image: str,
    model: str,
    prompt: str,
    aspect_ratio: str,
    provider: str,
    modality: str = "text",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the uniform success dict; ``extra`` adds backend fields without replacing any."""
    payload: dict[str, Any] = {
        "success": True,
        "image": image,
        "model": model,
        "prompt": prompt,
        "aspect_ratio": aspect_ratio,
        "modality": modality,
        "provider": provider,
    }
    for key, value in (extra or {}).items():
        payload.setdefault(key, value)
    return payload


def error_response(
    *,
    error: str,
    error_type: str = "provider_error",
    provider: str = "",
    model: str = "",
    prompt: str = "",
    aspect_ratio: str = DEFAULT_ASPECT_RATIO,
) -> dict[str, Any]:
    """Return the uniform error dict: ``success`` false, no ``image``, ``error`` and its type."""
    return {
        "success": False,
        "image": None,
        "error": error,
        "error_type": error_type,
        "model": model,
        "prompt": prompt,
        "aspect_ratio": aspect_ratio,
        "provider": provider,
    }

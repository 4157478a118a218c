"""openai: the OpenAI Images API behind ``image_generate`` (generation and editing).

Three quality tiers of ``gpt-image-2`` are exposed as three model ids, as Hermes does::

    gpt-image-2-low     ~15s   fastest, good for iteration
    gpt-image-2-medium  ~40s   default, balanced
    gpt-image-2-high    ~2min  slowest, highest fidelity

Text-to-image posts JSON to ``<base_url>/images/generations``; with source images it posts
multipart to ``<base_url>/images/edits``. Base64 answers are saved with ``save_b64_image``;
URL answers are downloaded into the same cache (the bare URL is kept if that fails).

Configuration (``config.yaml``)::

    image_gen:
      provider: openai
      model: gpt-image-2-high           # one of the tiers
      openai:
        base_url: http://127.0.0.1:8080/v1   # any compatible server; or $OPENAI_BASE_URL
        api_model: gpt-image-2                # the model name sent to the server
        timeout: 300                          # seconds

The key comes from ``OPENAI_API_KEY``. Without it the provider is not *available* (it is not
picked automatically) but stays selectable, so a person who chose it gets its own error.
Model precedence, as in Hermes: ``$OPENAI_IMAGE_MODEL``, ``image_gen.openai.model``,
``image_gen.model``, then ``gpt-image-2-medium``.
"""

from __future__ import annotations

import base64
import logging
import os
from pathlib import Path
from typing import Any

from hermes_hooks import (
    DEFAULT_ASPECT_RATIO,
    ImageGenProvider,
    error_response,
    load_image_gen_section,
    normalize_reference_images,
    resolve_aspect_ratio,
    save_b64_image,
    save_image_bytes,
    success_response,
)

logger = logging.getLogger(__name__)

API_MODEL = "gpt-image-2"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-image-2-medium"
DEFAULT_TIMEOUT = 300.0
MAX_SOURCE_IMAGES = 16
MAX_IMAGE_BYTES = 25 * 1024 * 1024

MODELS: dict[str, dict[str, str]] = {
    "gpt-image-2-low": {
        "display": "GPT Image 2 (Low)",
        "speed": "~15s",
        "strengths": "Fast iteration, lowest cost",
        "quality": "low",
    },
    "gpt-image-2-medium": {
        "display": "GPT Image 2 (Medium)",
        "speed": "~40s",
        "strengths": "Balanced, the default",
        "quality": "medium",
    },
    "gpt-image-2-high": {
        "display": "GPT Image 2 (High)",
        "speed": "~2min",
        "strengths": "Highest fidelity, strongest prompt adherence",
        "quality": "high",
    },
}
SIZES = {"landscape": "1536x1024", "square": "1024x1024", "portrait": "1024x1536"}

# Magic numbers of the formats the Images API takes: a source must be one of them, so that a
# path the model names (~/.ssh/id_rsa, say) is never uploaded as an "image".
_IMAGE_SIGNATURES = {
    b"\x89PNG\r\n\x1a\n": ("png", "image/png"),
    b"\xff\xd8\xff": ("jpg", "image/jpeg"),
    b"GIF8": ("gif", "image/gif"),
}
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


class OpenAIError(Exception):
    """A failure with the ``error_type`` to report it under."""

    def __init__(self, message: str, error_type: str) -> None:
        super().__init__(message)
        self.error_type = error_type


def _sniff(data: bytes, where: str) -> tuple[str, str]:
    """Return ``(extension, mime)`` of image bytes, or raise when they are not an image."""
    for signature, kind in _IMAGE_SIGNATURES.items():
        if data.startswith(signature):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp", "image/webp"
    raise OpenAIError(
        f"source image {where} is not a PNG, JPEG, WebP or GIF image", "invalid_input"
    )


def _load_source(ref: str, client: Any) -> tuple[str, bytes, str]:
    """Return ``(filename, data, mime)`` of a source image: a URL, a data: URL or a local file."""
    lower = ref.lower()
    if lower.startswith(("http://", "https://")):
        response = client.get(ref, follow_redirects=True)
        if response.status_code >= 400:
            raise OpenAIError(
                f"could not download source image {ref}: HTTP {response.status_code}", "io_error"
            )
        data = response.content
        name = ref.split("?", 1)[0].rsplit("/", 1)[-1] or "image"
    elif lower.startswith("data:"):
        try:
            data = base64.b64decode(ref.partition(",")[2], validate=True)
        except ValueError as exc:
            raise OpenAIError(
                f"source image data: URL is not base64: {exc}", "invalid_input"
            ) from exc
        name = "image"
    else:
        path = Path(ref).expanduser()
        if not path.is_file():
            raise OpenAIError(f"source image {ref} is not a file or a URL", "invalid_input")
        if path.stat().st_size > MAX_IMAGE_BYTES:
            raise OpenAIError(f"source image {ref} is over 25 MB", "invalid_input")
        data = path.read_bytes()
        name = path.name
    if len(data) > MAX_IMAGE_BYTES:
        raise OpenAIError(f"source image {ref[:80]} is over 25 MB", "invalid_input")
    extension, mime = _sniff(data, ref[:80])
    if not name.lower().endswith(f".{extension}"):
        name = f"{name.rsplit('.', 1)[0]}.{extension}"
    return name, data, mime


def _api_error(response: Any) -> OpenAIError:
    try:
        body = response.json()
        message = body["error"]["message"] if isinstance(body.get("error"), dict) else body
    except Exception:
        message = response.text[:500]
    error_type = "auth_error" if response.status_code in (401, 403) else "api_error"
    return OpenAIError(f"OpenAI API error (HTTP {response.status_code}): {message}", error_type)


class OpenAIImageGenProvider(ImageGenProvider):
    """OpenAI ``images/generations`` and ``images/edits``.

    :param home: the Hermes home whose ``config.yaml`` holds ``image_gen.openai``.
    """

    def __init__(self, home: Path | None = None) -> None:
        self.home = home

    @property
    def name(self) -> str:
        return "openai"

    @property
    def display_name(self) -> str:
        return "OpenAI"

    def is_available(self) -> bool:
        return bool(os.environ.get("OPENAI_API_KEY"))

    def list_models(self) -> list[dict[str, Any]]:
        return [
            {
                "id": model_id,
                "display": meta["display"],
                "speed": meta["speed"],
                "strengths": meta["strengths"],
                "price": "varies",
            }
            for model_id, meta in MODELS.items()
        ]

    def default_model(self) -> str | None:
        return DEFAULT_MODEL

    def get_setup_schema(self) -> dict[str, Any]:
        return {
            "name": "OpenAI",
            "badge": "paid",
            "tag": "gpt-image-2 at low/medium/high quality - text-to-image and image editing",
            "env_vars": [
                {
                    "key": "OPENAI_API_KEY",
                    "prompt": "OpenAI API key",
                    "url": "https://platform.openai.com/api-keys",
                }
            ],
        }

    def capabilities(self) -> dict[str, Any]:
        return {
            "modalities": ["text", "image"],
            "max_reference_images": MAX_SOURCE_IMAGES - 1,
            "max_source_images": MAX_SOURCE_IMAGES,
        }

    def _settings(self) -> dict[str, Any]:
        if self.home is None:
            from hermes_hooks.plugins.config import get_hermes_home

            return load_image_gen_section(get_hermes_home(), self.name)
        return load_image_gen_section(self.home, self.name)

    def _resolve_model(self, settings: dict[str, Any], requested: object) -> str:
        for candidate in (os.environ.get("OPENAI_IMAGE_MODEL"), settings.get("model"), requested):
            if isinstance(candidate, str) and candidate in MODELS:
                return candidate
        return DEFAULT_MODEL

    def generate(
        self,
        prompt: str,
        aspect_ratio: str = DEFAULT_ASPECT_RATIO,
        *,
        image_url: str | None = None,
        reference_image_urls: list[str] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        prompt = (prompt or "").strip()
        aspect = resolve_aspect_ratio(aspect_ratio)
        requested = kwargs.get("model")
        model = requested if isinstance(requested, str) else DEFAULT_MODEL

        def fail(error: str, error_type: str) -> dict[str, Any]:
            return error_response(
                error=error,
                error_type=error_type,
                provider=self.name,
                model=model,
                prompt=prompt,
                aspect_ratio=aspect,
            )

        if not prompt:
            return fail("Prompt is required and must be a non-empty string", "invalid_input")
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            return fail(
                "OPENAI_API_KEY is not set: export it (https://platform.openai.com/api-keys), or "
                "choose another provider with 'hermes tools image-gen --provider NAME'",
                "auth_required",
            )
        try:
            settings = self._settings()
        except Exception as exc:
            return fail(f"cannot read image_gen.openai: {exc}", "config_error")
        model = self._resolve_model(settings, requested)
        sources = [image_url.strip()] if isinstance(image_url, str) and image_url.strip() else []
        sources += normalize_reference_images(reference_image_urls) or []
        if len(sources) > MAX_SOURCE_IMAGES:
            return fail(
                f"at most {MAX_SOURCE_IMAGES} source images, {len(sources)} given", "invalid_input"
            )
        base_url = str(
            settings.get("base_url") or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        ).rstrip("/")
        timeout = settings.get("timeout") or DEFAULT_TIMEOUT
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
            return fail(
                f"image_gen.openai.timeout must be seconds > 0, found {timeout!r}", "config_error"
            )
        fields = {
            "model": str(settings.get("api_model") or API_MODEL),
            "prompt": prompt,
            "size": SIZES[aspect],
            "quality": MODELS[model]["quality"],
            "n": 1,
        }
        try:
            image = self._post(key, base_url, timeout, fields, sources, model)
        except OpenAIError as exc:
            return fail(str(exc), exc.error_type)
        except Exception as exc:
            logger.debug("openai image request failed", exc_info=True)
            return fail(
                f"OpenAI image request failed: {type(exc).__name__}: {exc}", type(exc).__name__
            )
        return self._success(image, model, prompt, aspect, fields, edited=bool(sources))

    def _success(
        self,
        image: dict[str, str],
        model: str,
        prompt: str,
        aspect: str,
        fields: dict[str, Any],
        *,
        edited: bool,
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {"size": fields["size"], "quality": fields["quality"]}
        if image.get("revised_prompt"):
            extra["revised_prompt"] = image["revised_prompt"]
        return success_response(
            image=image["image"],
            model=model,
            prompt=prompt,
            aspect_ratio=aspect,
            provider=self.name,
            modality="image" if edited else "text",
            extra=extra,
        )

    def _post(
        self,
        key: str,
        base_url: str,
        timeout: float,
        fields: dict[str, Any],
        sources: list[str],
        model: str,
    ) -> dict[str, str]:
        """Ask the Images API (an edit of ``sources`` when there are any) and save the image.

        :raises OpenAIError: the API refused or answered without an image.
        """
        import httpx

        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(timeout=timeout, headers=headers) as client:
            if sources:
                loaded = [_load_source(ref, client) for ref in sources]
                field = "image" if len(loaded) == 1 else "image[]"
                response = client.post(
                    f"{base_url}/images/edits",
                    data={k: str(v) for k, v in fields.items()},
                    files=[(field, item) for item in loaded],
                )
            else:
                response = client.post(f"{base_url}/images/generations", json=fields)
            if response.status_code >= 400:
                raise _api_error(response)
            return self._save(response.json(), client, model)

    def _save(self, body: Any, client: Any, model: str) -> dict[str, str]:
        """Save the first image of an Images API answer; return its path (or URL)."""
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not data or not isinstance(data[0], dict):
            raise OpenAIError("OpenAI returned no image data", "empty_response")
        first = data[0]
        out = {"revised_prompt": str(first.get("revised_prompt") or "")}
        prefix = f"{self.name}_{model}"
        if first.get("b64_json"):
            out["image"] = str(save_b64_image(first["b64_json"], prefix=prefix))
            return out
        url = first.get("url")
        if not isinstance(url, str) or not url:
            raise OpenAIError("OpenAI answer has neither b64_json nor url", "empty_response")
        try:
            # Images API URLs expire: keep the bytes, as Hermes does.
            response = client.get(url, follow_redirects=True)
            response.raise_for_status()
            mime = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            extension = _EXTENSIONS.get(mime) or _sniff(response.content, url[:80])[0]
            out["image"] = str(
                save_image_bytes(response.content, prefix=prefix, extension=extension)
            )
        except Exception as exc:
            logger.warning("could not cache OpenAI image %s (%s); keeping the URL", url, exc)
            out["image"] = url
        return out


def register(ctx: Any) -> None:
    """Register the OpenAI provider, reading its settings from the host's home."""
    ctx.register_image_gen_provider(OpenAIImageGenProvider(home=ctx.hermes_home))

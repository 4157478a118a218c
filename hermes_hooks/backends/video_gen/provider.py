"""The ``VideoGenProvider`` ABC, its helpers, and ``OpenAICompatibleVideoGenProvider``.

Faithful to Hermes' ``agent/video_gen_provider.py``: one tool, ``video_generate``, covers
text-to-video and image-to-video (``image_url`` routes to the latter); a provider implements
``name`` and ``generate()`` and answers with the dict of :func:`success_response` or
:func:`error_response`. Keys of that dict::

    success         bool
    video           str | None      URL or absolute file path
    model           str             provider-specific model identifier
    prompt          str             echoed prompt
    modality        str             "text" | "image" (which mode was used)
    aspect_ratio    str             provider-native ("16:9") or ""
    duration        int             seconds (0 if not applicable)
    provider        str             provider name (for diagnostics)
    error           str             only when success is False
    error_type      str             only when success is False

Videos are written under ``$HERMES_HOME/cache/videos/`` (the home of the manager whose tool
runs) by :func:`save_b64_video`, :func:`save_bytes_video` and :func:`save_url_video`.
"""

from __future__ import annotations

import abc
import base64
import datetime
import logging
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any, Final

from hermes_hooks.backends.download import save_url
from hermes_hooks.backends.home import active_home

__all__ = [
    "COMMON_ASPECT_RATIOS",
    "COMMON_RESOLUTIONS",
    "DEFAULT_ASPECT_RATIO",
    "DEFAULT_RESOLUTION",
    "OpenAICompatibleVideoGenProvider",
    "VideoGenProvider",
    "error_response",
    "get_videos_dir",
    "save_b64_video",
    "save_bytes_video",
    "save_url_video",
    "success_response",
]

logger = logging.getLogger(__name__)

COMMON_ASPECT_RATIOS: Final[tuple[str, ...]] = ("16:9", "9:16", "1:1", "4:3", "3:4", "3:2", "2:3")
DEFAULT_ASPECT_RATIO: Final = "16:9"
COMMON_RESOLUTIONS: Final[tuple[str, ...]] = ("480p", "540p", "720p", "1080p")
DEFAULT_RESOLUTION: Final = "720p"
_UNSAFE_NAME: Final = re.compile(r"[^A-Za-z0-9._-]+")


class VideoGenProvider(abc.ABC):
    """A video generation backend behind the ``video_generate`` tool.

    Subclasses implement :attr:`name` and :meth:`generate`; the rest has Hermes' defaults.
    Register an instance with ``ctx.register_video_gen_provider(provider)``.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Stable identifier used in ``video_gen.provider``: lower case, no spaces."""

    @property
    def display_name(self) -> str:
        """Human-readable label shown by ``hermes tools video-gen``; ``name.title()``."""
        return self.name.title()

    def is_available(self) -> bool:
        """Return whether it can serve calls now (a key set, a dependency importable)."""
        return True

    def list_models(self) -> list[dict[str, Any]]:
        """Return the model families offered: dicts with ``id`` and optionally ``display``,
        ``speed``, ``strengths``, ``price``, ``modalities``. Empty by default."""
        return []

    def get_setup_schema(self) -> dict[str, Any]:
        """Return picker metadata: ``name``, ``badge``, ``tag`` and the ``env_vars`` to ask for."""
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}

    def default_model(self) -> str | None:
        """Return the model used when none is configured: the first catalog id, or ``None``."""
        models = self.list_models()
        if models:
            first = models[0].get("id")
            return first if isinstance(first, str) else None
        return None

    def capabilities(self) -> dict[str, Any]:
        """Return what the backend accepts (all keys optional); text-only by default."""
        return {
            "modalities": ["text"],
            "aspect_ratios": list(COMMON_ASPECT_RATIOS),
            "resolutions": list(COMMON_RESOLUTIONS),
            "max_duration": 10,
            "min_duration": 1,
            "supports_audio": False,
            "supports_negative_prompt": False,
            "max_reference_images": 0,
            "max_reference_videos": 0,
            "max_reference_audios": 0,
            "supports_first_frame": False,
            "supports_last_frame": False,
        }

    @abc.abstractmethod
    def generate(
        self,
        prompt: str,
        *,
        model: str | None = None,
        image_url: str | None = None,
        reference_image_urls: list[str] | None = None,
        duration: int | None = None,
        aspect_ratio: str = DEFAULT_ASPECT_RATIO,
        resolution: str = DEFAULT_RESOLUTION,
        negative_prompt: str | None = None,
        audio: bool | None = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Generate a video from ``prompt``, or animate ``image_url`` when it is given.

        ``kwargs`` may hold parameters of newer hosts: ignore unknown keys.
        """

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def get_videos_dir(home: Path | None = None) -> Path:
    """Return ``<home>/cache/videos``, created if needed (the active home by default)."""
    folder = Path(home if home is not None else active_home()) / "cache" / "videos"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _target(prefix: str, extension: str, home: Path | None) -> Path:
    safe_prefix = _UNSAFE_NAME.sub("_", prefix).strip("._") or "video"
    safe_ext = _UNSAFE_NAME.sub("", extension.lstrip(".")).lower() or "mp4"
    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S")
    return get_videos_dir(home) / f"{safe_prefix}_{stamp}_{uuid.uuid4().hex[:8]}.{safe_ext}"


def save_bytes_video(
    raw: bytes, *, prefix: str = "video", extension: str = "mp4", home: Path | None = None
) -> Path:
    """Write video bytes to ``cache/videos/<prefix>_<YYYYMMDD_HHMMSS>_<uuid8>.<ext>``.

    :returns: the absolute path of the new file.
    :raises ValueError: ``raw`` is empty.
    """
    if not raw:
        raise ValueError("video data is empty; nothing to save")
    path = _target(prefix, extension, home)
    with path.open("xb") as fh:  # "x": never overwrite another call's video
        fh.write(raw)
    return path.resolve()


def save_b64_video(
    b64_data: str, *, prefix: str = "video", extension: str = "mp4", home: Path | None = None
) -> Path:
    """Decode base64 video data (a ``data:`` URL too) and save it as :func:`save_bytes_video`.

    :raises ValueError: the data is not valid base64, or empty.
    """
    text = b64_data.strip()
    if text.startswith("data:"):
        text = text.partition(",")[2]
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
    except ValueError as exc:
        raise ValueError(f"video data is not valid base64: {exc}") from exc
    return save_bytes_video(raw, prefix=prefix, extension=extension, home=home)


_URL_VIDEO_TYPES: Final[dict[str, str]] = {
    "video/mp4": "mp4",
    "video/webm": "webm",
    "video/quicktime": "mov",
    "video/x-matroska": "mkv",
    "image/gif": "gif",
    "image/webp": "webp",
}


def _url_extension(url: str, content_type: str) -> str:
    extension = _URL_VIDEO_TYPES.get(content_type)
    if extension is not None:
        return extension
    path_part = url.split("?", 1)[0].lower()
    return next(
        (e for e in ("mp4", "webm", "mov", "mkv", "gif") if path_part.endswith("." + e)), "mp4"
    )


def save_url_video(
    url: str,
    *,
    prefix: str = "video",
    timeout: float = 180.0,
    max_bytes: int = 200 * 1024 * 1024,
    home: Path | None = None,
) -> Path:
    """Download a video URL into ``cache/videos/`` (the extension from its ``Content-Type``).

    For backends that answer with a short-lived delivery URL: the bytes are kept when the
    tool call completes.

    :raises ValueError: not an ``http(s)`` URL, not a video, larger than ``max_bytes`` or
        empty; no file is left behind.
    :raises httpx.HTTPError: the request failed or answered with an error status.
    """
    return save_url(
        url,
        what="video",
        a_what="a video",
        extension_of=_url_extension,
        target=lambda extension: _target(prefix, extension, home),
        timeout=timeout,
        max_bytes=max_bytes,
        chunk_bytes=256 * 1024,
    )


def success_response(
    *,
    video: str,
    model: str,
    prompt: str,
    modality: str = "text",
    aspect_ratio: str = "",
    duration: int = 0,
    provider: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the uniform success dict; ``extra`` adds backend fields without replacing any."""
    payload: dict[str, Any] = {
        "success": True,
        "video": video,
        "model": model,
        "prompt": prompt,
        "modality": modality,
        "aspect_ratio": aspect_ratio,
        "duration": int(duration) if duration else 0,
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
    aspect_ratio: str = "",
) -> dict[str, Any]:
    """Return the uniform error dict: ``success`` false, no ``video``, ``error`` and its type."""
    return {
        "success": False,
        "video": None,
        "error": error,
        "error_type": error_type,
        "model": model,
        "prompt": prompt,
        "aspect_ratio": aspect_ratio,
        "provider": provider,
    }


_TERMINAL: Final = frozenset({"completed", "succeeded", "failed", "error", "cancelled", "canceled"})


class OpenAICompatibleVideoGenProvider(VideoGenProvider):
    """Text/image-to-video over the OpenAI ``/videos`` API (create, poll, download).

    DeepInfra, OpenAI (Sora) and OpenRouter speak the same asynchronous job API, so a concrete
    backend declares only its identity and credentials::

        class FooVideoGenProvider(OpenAICompatibleVideoGenProvider):
            name = "foo"
            _env_key = "FOO_API_KEY"
            _default_base_url = "https://api.foo.com/v1/openai"
            def list_models(self):
                return [{"id": "foo-video-1"}]

    ``<NAME>_BASE_URL`` overrides the base URL. The job is polled every ``_poll_interval_s``
    seconds until ``_poll_deadline_s``; a finished job's delivery URL (``data[].url``) or its
    ``/videos/<id>/content`` is saved under ``$HERMES_HOME/cache/videos/``. Unlike Hermes it
    talks HTTP with ``httpx``, so the ``openai`` package is not needed.
    """

    _env_key: str = "OPENAI_API_KEY"
    _default_base_url: str = "https://api.openai.com/v1"
    _poll_interval_s: float = 5.0
    _poll_deadline_s: float = 900.0

    def _api_key(self) -> str:
        return os.environ.get(self._env_key, "").strip()

    def is_available(self) -> bool:
        return bool(self._api_key())

    def get_setup_schema(self) -> dict[str, Any]:
        return {
            "name": self.display_name,
            "badge": "paid",
            "tag": "",
            "env_vars": [{"key": self._env_key, "prompt": f"{self.display_name} API key"}],
        }

    def _base_url(self) -> str:
        override = os.environ.get(f"{self.name.upper().replace('-', '_')}_BASE_URL", "").strip()
        return (override or self._default_base_url).rstrip("/")

    def generate(
        self,
        prompt: str,
        *,
        model: str | None = None,
        image_url: str | None = None,
        reference_image_urls: list[str] | None = None,
        duration: int | None = None,
        aspect_ratio: str = DEFAULT_ASPECT_RATIO,
        resolution: str = DEFAULT_RESOLUTION,
        negative_prompt: str | None = None,
        audio: bool | None = None,
        seed: int | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        import httpx

        def fail(error: str, error_type: str, model_id: str = "") -> dict[str, Any]:
            return error_response(
                error=error,
                error_type=error_type,
                provider=self.name,
                model=model_id,
                prompt=prompt,
                aspect_ratio=aspect_ratio,
            )

        if not prompt or not prompt.strip():
            return fail("prompt is required", "invalid_request")
        key = self._api_key()
        if not key:
            return fail(f"{self._env_key} is not set", "missing_credentials")
        model_id = model or self.default_model()
        if not model_id:
            return fail(f"no {self.name} video model available", "no_model")
        body = _job_body(
            model_id,
            prompt,
            duration=duration,
            resolution=resolution,
            negative_prompt=negative_prompt,
            aspect_ratio=aspect_ratio,
            image_url=image_url,
            seed=seed,
        )
        base = self._base_url()
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60.0) as client:
            try:
                job = self._create_and_poll(client, body)
            except (httpx.HTTPError, TimeoutError, ValueError) as exc:
                return fail(f"{self.name} video generation failed: {exc}", "api_error", model_id)
            status = job.get("status")
            if status not in ("completed", "succeeded"):
                job_error = job.get("error")
                detail = str(job_error) if job_error else f"video job ended with status={status!r}"
                return fail(detail, "job_failed", model_id)
            url = _job_url(job)
            try:
                saved = self._save(client, job, url)
            except (httpx.HTTPError, ValueError, OSError) as exc:
                if not url:
                    return fail(
                        f"{self.name} video job succeeded but no output could be retrieved: {exc}",
                        "empty_response",
                        model_id,
                    )
                logger.debug("%s: saving the video failed (%s); returning its URL", self.name, exc)
                saved = url
        return success_response(
            video=saved,
            model=model_id,
            prompt=prompt,
            modality="image" if image_url else "text",
            aspect_ratio=aspect_ratio,
            duration=duration or 0,
            provider=self.name,
        )

    def _save(self, client: Any, job: dict[str, Any], url: str | None) -> str:
        """Save the finished job's video (from its URL, or its ``content``); return the path."""
        if url:
            return str(save_url_video(url, prefix=self.name))
        response = client.get(f"/videos/{job['id']}/content")
        response.raise_for_status()
        return str(save_bytes_video(response.content, prefix=self.name))

    def _create_and_poll(self, client: Any, body: dict[str, Any]) -> dict[str, Any]:
        """Create the job and poll it to a terminal status within ``_poll_deadline_s``.

        :raises TimeoutError: the deadline passed first.
        """
        response = client.post("/videos", json=body)
        response.raise_for_status()
        job: dict[str, Any] = response.json()
        if not isinstance(job, dict) or "id" not in job:
            raise ValueError(f"the server answered {job!r}, not a video job with an id")
        deadline = time.monotonic() + self._poll_deadline_s
        while job.get("status") not in _TERMINAL:
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"video job {job.get('id')} did not finish within "
                    f"{self._poll_deadline_s:g} s (last status={job.get('status')!r})"
                )
            time.sleep(self._poll_interval_s)
            response = client.get(f"/videos/{job['id']}")
            response.raise_for_status()
            job = response.json()
        return job


def _job_body(
    model_id: str,
    prompt: str,
    *,
    duration: int | None,
    resolution: str,
    negative_prompt: str | None,
    aspect_ratio: str,
    image_url: str | None,
    seed: int | None,
) -> dict[str, Any]:
    """The body creating a video job (OpenAI's ``/videos``): the fields given, no others."""
    body: dict[str, Any] = {"model": model_id, "prompt": prompt}
    if duration:
        body["seconds"] = str(duration)
    if resolution:
        body["size"] = resolution
    for name, value in (
        ("negative_prompt", negative_prompt),
        ("aspect_ratio", aspect_ratio),
        ("image_url", image_url),
        ("seed", seed),
    ):
        if value is not None:
            body[name] = value
    return body


def _job_url(job: dict[str, Any]) -> str | None:
    """The URL of a finished job's first video, when it gives one."""
    for item in job.get("data") or []:
        if isinstance(item, dict) and item.get("url"):
            return str(item["url"])
    return None

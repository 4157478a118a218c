"""Hermes' ``agent.video_gen_provider``: the video provider ABC, its helpers, the OpenAI one.

The same objects as :mod:`hermes_hooks.backends.video_gen.provider` (``VideoGenProvider`` is the
family's ABC, so a provider written for Hermes registers here unchanged). The savers write under
the home of the manager whose ``video_generate`` tool runs, else the current manager's.
"""

from __future__ import annotations

from pathlib import Path

from hermes_hooks.backends.home import get_active_home
from hermes_hooks.backends.video_gen import provider as _provider
from hermes_hooks.backends.video_gen.provider import (
    COMMON_ASPECT_RATIOS,
    COMMON_RESOLUTIONS,
    DEFAULT_ASPECT_RATIO,
    DEFAULT_RESOLUTION,
    OpenAICompatibleVideoGenProvider,
    VideoGenProvider,
    error_response,
    success_response,
)
from hermes_hooks.compat.current import current_home

__all__ = [
    "COMMON_ASPECT_RATIOS",
    "COMMON_RESOLUTIONS",
    "DEFAULT_ASPECT_RATIO",
    "DEFAULT_RESOLUTION",
    "OpenAICompatibleVideoGenProvider",
    "VideoGenProvider",
    "error_response",
    "save_b64_video",
    "save_bytes_video",
    "save_url_video",
    "success_response",
]


def _home() -> Path:
    return get_active_home() or current_home()


def save_b64_video(b64_data: str, *, prefix: str = "video", extension: str = "mp4") -> Path:
    """Decode base64 video data and write it under ``$HERMES_HOME/cache/videos/``."""
    return _provider.save_b64_video(b64_data, prefix=prefix, extension=extension, home=_home())


def save_bytes_video(raw: bytes, *, prefix: str = "video", extension: str = "mp4") -> Path:
    """Write raw video bytes under ``$HERMES_HOME/cache/videos/``."""
    return _provider.save_bytes_video(raw, prefix=prefix, extension=extension, home=_home())


def save_url_video(
    url: str, *, prefix: str = "video", timeout: float = 180.0, max_bytes: int = 200 * 1024 * 1024
) -> Path:
    """Download a video URL and write it under ``$HERMES_HOME/cache/videos/``."""
    return _provider.save_url_video(
        url, prefix=prefix, timeout=timeout, max_bytes=max_bytes, home=_home()
    )

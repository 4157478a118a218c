"""Video generation: the provider contract, its family and the ``video_generate`` tool.

A provider written for Hermes works unchanged (``agent.video_gen_provider`` is served by the
compatibility layer); one written for hermes-hooks imports from ``hermes_hooks``::

    from hermes_hooks import VideoGenProvider, video_success_response, save_bytes_video

(``video_success_response`` and ``video_error_response`` are this module's
``success_response`` and ``error_response``, renamed at the top level beside the image ones)
and registers with ``ctx.register_video_gen_provider(MyProvider())``. See
``docs/how-to/video-provider.md``.
"""

from __future__ import annotations

from hermes_hooks.backends.video_gen.provider import (
    COMMON_ASPECT_RATIOS,
    COMMON_RESOLUTIONS,
    DEFAULT_ASPECT_RATIO,
    DEFAULT_RESOLUTION,
    OpenAICompatibleVideoGenProvider,
    VideoGenProvider,
    error_response,
    get_videos_dir,
    save_b64_video,
    save_bytes_video,
    save_url_video,
    success_response,
)
from hermes_hooks.backends.video_gen.registry import DEFAULT_PROVIDER, VIDEO_GEN

__all__ = [
    "COMMON_ASPECT_RATIOS",
    "COMMON_RESOLUTIONS",
    "DEFAULT_ASPECT_RATIO",
    "DEFAULT_PROVIDER",
    "DEFAULT_RESOLUTION",
    "VIDEO_GEN",
    "OpenAICompatibleVideoGenProvider",
    "VideoGenProvider",
    "error_response",
    "get_videos_dir",
    "save_b64_video",
    "save_bytes_video",
    "save_url_video",
    "success_response",
]

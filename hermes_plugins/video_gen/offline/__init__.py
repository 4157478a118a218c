"""offline: a placeholder ``video_generate`` backend that needs no key and no network.

It is not a generative model: it draws a short animated GIF (a drifting gradient, shapes that
move, the prompt written on it, and a label saying it is a placeholder) so that the whole
video path — tool call, provider, file in ``$HERMES_HOME/cache/videos`` — can be tried on a
laptop, as the local image renderer does for images. The same prompt, aspect ratio and duration
always give the same clip. Durations are clamped to 1-4 seconds at 8 frames a second.
"""

from __future__ import annotations

from typing import Any

# hermes_hooks re-exports the last two under new names (`error_response as video_error_response`),
# which mypy's no-implicit-reexport does not count as exported; they are public all the same.
from hermes_hooks import (  # type: ignore[attr-defined]
    VideoGenProvider,
    save_bytes_video,
    video_error_response,
    video_success_response,
)

MODEL = "placeholder-clip"
NOTE = "offline placeholder video: an animation drawn from the prompt, not a generative model"
ASPECTS = ("16:9", "9:16", "1:1", "4:3", "3:4", "3:2", "2:3")
MAX_SECONDS = 4


class OfflineVideoGenProvider(VideoGenProvider):
    """Draws a deterministic placeholder GIF with Pillow."""

    @property
    def name(self) -> str:
        return "offline"

    @property
    def display_name(self) -> str:
        return "Offline placeholder"

    def is_available(self) -> bool:
        try:
            import PIL  # noqa: F401
        except ImportError:
            return False
        return True

    def unavailable_reason(self) -> str:
        return "Pillow is not installed (pip install Pillow)"

    def list_models(self) -> list[dict[str, Any]]:
        return [
            {
                "id": MODEL,
                "display": "Placeholder clip (not a generative model)",
                "speed": "<1s",
                "strengths": "offline, no key, deterministic",
                "price": "free",
                "modalities": ["text"],
            }
        ]

    def get_setup_schema(self) -> dict[str, Any]:
        return {
            "name": self.display_name,
            "badge": "offline",
            "tag": "Draws a placeholder animated GIF from the prompt; not a generative model",
            "env_vars": [],
        }

    def capabilities(self) -> dict[str, Any]:
        caps = super().capabilities()
        caps.update(aspect_ratios=list(ASPECTS), resolutions=["270p"], max_duration=MAX_SECONDS)
        return caps

    def generate(
        self,
        prompt: str,
        *,
        model: str | None = None,
        image_url: str | None = None,
        duration: int | None = None,
        aspect_ratio: str = "16:9",
        **kwargs: Any,
    ) -> dict[str, Any]:
        prompt = (prompt or "").strip()
        aspect = aspect_ratio if aspect_ratio in ASPECTS else "16:9"
        model = model or MODEL
        if not prompt:
            return video_error_response(
                error="prompt is required", error_type="invalid_input", provider=self.name
            )
        if image_url:
            return video_error_response(
                error="the offline placeholder cannot animate images; omit image_url",
                error_type="modality_unsupported",
                provider=self.name,
                model=model,
                prompt=prompt,
                aspect_ratio=aspect,
            )
        seconds = min(max(int(duration or 2), 1), MAX_SECONDS)
        from .render import render_gif

        data, width, height, frames = render_gif(prompt, aspect, seconds)
        path = save_bytes_video(data, prefix=self.name, extension="gif")
        return video_success_response(
            video=str(path),
            model=model,
            prompt=prompt,
            aspect_ratio=aspect,
            duration=seconds,
            provider=self.name,
            extra={"width": width, "height": height, "frames": frames, "format": "gif",
                   "note": NOTE},
        )  # fmt: skip


def register(ctx: Any) -> None:
    """Register the offline placeholder video provider."""
    ctx.register_video_gen_provider(OfflineVideoGenProvider())

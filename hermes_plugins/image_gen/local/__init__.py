"""local: an offline ``image_generate`` backend that needs no key and no network.

It is a placeholder renderer, not a generative model: it draws a PNG card (colours and shapes
derived from the prompt, the prompt written on it) so that the whole image path — tool call,
provider, file in ``$HERMES_HOME/cache/images`` — can be tried on a laptop. The same prompt
and aspect ratio always give the same picture. Sizes follow the OpenAI provider's: landscape
1536x1024, square 1024x1024, portrait 1024x1536.
"""

from __future__ import annotations

from typing import Any

from hermes_hooks import (
    DEFAULT_ASPECT_RATIO,
    ImageGenProvider,
    error_response,
    normalize_reference_images,
    resolve_aspect_ratio,
    save_image_bytes,
    success_response,
)

MODEL = "placeholder-card"
NOTE = "local placeholder renderer: a card drawn from the prompt, not a generative model"


class LocalImageGenProvider(ImageGenProvider):
    """Draws a deterministic placeholder PNG with Pillow."""

    @property
    def name(self) -> str:
        return "local"

    @property
    def display_name(self) -> str:
        return "Local placeholder"

    def is_available(self) -> bool:
        try:
            import PIL  # noqa: F401
        except ImportError:
            return False
        return True

    def list_models(self) -> list[dict[str, Any]]:
        return [
            {
                "id": MODEL,
                "display": "Placeholder card (not a generative model)",
                "speed": "<1s",
                "strengths": "offline, no key, deterministic",
                "price": "free",
            }
        ]

    def get_setup_schema(self) -> dict[str, Any]:
        return {
            "name": self.display_name,
            "badge": "offline",
            "tag": "Draws a placeholder card from the prompt with Pillow; not a generative model",
            "env_vars": [],
        }

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
        model = kwargs.get("model") or MODEL
        if not prompt:
            return error_response(
                error="Prompt is required",
                error_type="invalid_input",
                provider=self.name,
                model=model,
                aspect_ratio=aspect,
            )
        if image_url or normalize_reference_images(reference_image_urls):
            return error_response(
                error="the local placeholder renderer cannot edit images; omit image_url",
                error_type="modality_unsupported",
                provider=self.name,
                model=model,
                prompt=prompt,
                aspect_ratio=aspect,
            )
        try:
            from .render import render_png

            data, width, height = render_png(prompt, aspect)
            path = save_image_bytes(data, prefix=self.name, extension="png")
        except Exception as exc:
            return error_response(
                error=f"{type(exc).__name__}: {exc}",
                error_type=type(exc).__name__,
                provider=self.name,
                model=model,
                prompt=prompt,
                aspect_ratio=aspect,
            )
        return success_response(
            image=str(path),
            model=model,
            prompt=prompt,
            aspect_ratio=aspect,
            provider=self.name,
            extra={"width": width, "height": height, "note": NOTE},
        )


def register(ctx: Any) -> None:
    """Register the local placeholder provider."""
    ctx.register_image_gen_provider(LocalImageGenProvider())

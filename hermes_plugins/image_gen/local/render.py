"""Draw the placeholder card: a gradient, a few shapes and the prompt, all derived from a hash.

Everything random comes from ``random.Random(seed).random()`` (whose sequence Python keeps
stable for a seed) and the PNG carries no timestamp, so one prompt and aspect ratio give the
same bytes on every run with the same Pillow.
"""

from __future__ import annotations

import colorsys
import hashlib
import io
import random
from typing import Any

SIZES: dict[str, tuple[int, int]] = {
    "landscape": (1536, 1024),
    "square": (1024, 1024),
    "portrait": (1024, 1536),
}
LABEL = "hermes-hooks local placeholder renderer - not a generative model"


def _colour(rng: random.Random, *, lightness: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hls_to_rgb(rng.random(), lightness, 0.45 + 0.35 * rng.random())
    return int(r * 255), int(g * 255), int(b * 255)


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # Pillow without FreeType: the bitmap font
        return ImageFont.load_default()


def _wrap(text: str, font: Any, max_width: int, *, max_lines: int) -> list[str]:
    """Break ``text`` into lines no wider than ``max_width`` pixels; cut with "..." past the end."""
    lines: list[str] = []
    for word in text.split():
        while font.getlength(word) > max_width and len(word) > 1:  # a word too long for a line
            cut = len(word) - 1
            while cut > 1 and font.getlength(word[:cut]) > max_width:
                cut -= 1
            lines.append(word[:cut])
            word = word[cut:]
        if lines and font.getlength(f"{lines[-1]} {word}") <= max_width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    if len(lines) > max_lines:
        last = lines[max_lines - 1]
        while " " in last and font.getlength(last + " ...") > max_width:
            last = last.rsplit(" ", 1)[0]
        lines = [*lines[: max_lines - 1], last + " ..."]
    return lines or [""]


def render_png(prompt: str, aspect_ratio: str) -> tuple[bytes, int, int]:
    """Return ``(png_bytes, width, height)`` of the card for ``prompt`` at ``aspect_ratio``."""
    from PIL import Image, ImageDraw, PngImagePlugin

    width, height = SIZES[aspect_ratio]
    seed = hashlib.sha256(f"{aspect_ratio}\0{prompt}".encode()).digest()
    rng = random.Random(int.from_bytes(seed, "big"))

    top = Image.new("RGB", (width, height), _colour(rng, lightness=0.30))
    bottom = Image.new("RGB", (width, height), _colour(rng, lightness=0.62))
    angle = rng.random() * 360
    # Rotate the 256x256 ramp and keep its centre, which every rotation covers (no corners).
    mask = Image.linear_gradient("L").rotate(angle, resample=Image.Resampling.BILINEAR)
    mask = mask.crop((38, 38, 218, 218)).resize((width, height), Image.Resampling.BILINEAR)
    card = Image.composite(bottom, top, mask).convert("RGBA")

    shapes = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(shapes)
    for _ in range(6 + int(rng.random() * 7)):
        cx, cy = rng.random() * width, rng.random() * height
        radius = (0.05 + 0.2 * rng.random()) * min(width, height)
        fill = (*_colour(rng, lightness=0.4 + 0.4 * rng.random()), 70 + int(rng.random() * 60))
        box = (cx - radius, cy - radius, cx + radius, cy + radius)
        if rng.random() < 0.6:
            draw.ellipse(box, fill=fill)
        else:
            draw.rounded_rectangle(box, radius=radius / 4, fill=fill)
    card = Image.alpha_composite(card, shapes)

    overlay = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    margin = width // 16
    text_size = max(width // 24, 12)
    font = _font(text_size)
    lines = _wrap(prompt, font, width - 2 * margin, max_lines=6)
    line_height = int(text_size * 1.3)
    panel_top = height - margin - line_height * len(lines) - margin
    draw.rounded_rectangle(
        (margin // 2, panel_top, width - margin // 2, height - margin // 2),
        radius=margin // 3,
        fill=(0, 0, 0, 150),
    )
    for i, line in enumerate(lines):
        y = panel_top + margin // 2 + i * line_height
        draw.text((margin, y), line, font=font, fill="white")
    label_size = max(width // 64, 10)
    draw.rectangle((0, 0, width, label_size * 2), fill=(0, 0, 0, 120))
    draw.text((label_size, label_size // 2), LABEL, font=_font(label_size), fill=(255, 255, 255))
    card = Image.alpha_composite(card, overlay).convert("RGB")

    info = PngImagePlugin.PngInfo()
    info.add_text("Software", LABEL)
    info.add_text("Description", prompt)
    buffer = io.BytesIO()
    card.save(buffer, format="PNG", pnginfo=info)
    return buffer.getvalue(), width, height

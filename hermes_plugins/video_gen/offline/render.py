"""Draw the placeholder clip: a drifting gradient, shapes that move, the prompt, frame by frame.

Everything random comes from ``random.Random(seed)`` seeded by the prompt, the aspect ratio and
the duration, and the GIF has no timestamp, so the same request gives the same bytes on every
run with the same Pillow.
"""

from __future__ import annotations

import colorsys
import hashlib
import io
import math
import random
from typing import Any

LABEL = "hermes-hooks offline placeholder video - not a generative model"
FPS = 8
SIZES: dict[str, tuple[int, int]] = {
    "16:9": (480, 270),
    "9:16": (270, 480),
    "1:1": (360, 360),
    "4:3": (400, 300),
    "3:4": (300, 400),
    "3:2": (450, 300),
    "2:3": (300, 450),
}


def _colour(rng: random.Random, lightness: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hls_to_rgb(rng.random(), lightness, 0.5 + 0.3 * rng.random())
    return int(r * 255), int(g * 255), int(b * 255)


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):  # Pillow without FreeType: the bitmap font
        return ImageFont.load_default()


def _lines(text: str, font: Any, width: int, max_lines: int = 3) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and font.getlength(f"{lines[-1]} {word}") <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    if len(lines) > max_lines:
        lines = [*lines[: max_lines - 1], lines[max_lines - 1] + " ..."]
    return lines or [""]


def render_gif(prompt: str, aspect_ratio: str, seconds: int) -> tuple[bytes, int, int, int]:
    """Return ``(gif_bytes, width, height, frames)`` of the clip."""
    from PIL import Image, ImageDraw

    width, height = SIZES.get(aspect_ratio, SIZES["16:9"])
    seed = hashlib.sha256(f"{aspect_ratio}\0{seconds}\0{prompt}".encode()).digest()
    rng = random.Random(int.from_bytes(seed, "big"))
    top, bottom = _colour(rng, 0.28), _colour(rng, 0.62)
    shapes = [
        (rng.random(), rng.random(), 0.06 + 0.12 * rng.random(), rng.random() * 2 * math.pi,
         _colour(rng, 0.45 + 0.35 * rng.random()), rng.random() < 0.6)
        for _ in range(5 + int(rng.random() * 4))
    ]  # fmt: skip
    count = max(1, seconds) * FPS
    font = _font(max(width // 22, 10))
    small = _font(max(width // 45, 8))
    text = _lines(prompt, font, width - width // 8)
    frames = []
    for index in range(count):
        phase = 2 * math.pi * index / count
        frame = Image.new("RGB", (width, height))
        draw = ImageDraw.Draw(frame)
        for y in range(height):  # a gradient whose midpoint drifts with the phase
            t = min(max(y / height + 0.15 * math.sin(phase), 0.0), 1.0)
            draw.line(
                [(0, y), (width, y)],
                fill=tuple(int(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)),
            )
        for x0, y0, size, offset, colour, round_ in shapes:
            radius = size * min(width, height)
            cx = (x0 + 0.12 * math.cos(phase + offset)) * width
            cy = (y0 + 0.12 * math.sin(2 * phase + offset)) * height
            box = (cx - radius, cy - radius, cx + radius, cy + radius)
            if round_:
                draw.ellipse(box, fill=colour)
            else:
                draw.rounded_rectangle(box, radius=radius / 4, fill=colour)
        line_height = int(font.size * 1.3) if hasattr(font, "size") else 14
        panel_top = height - line_height * len(text) - height // 10
        draw.rectangle((0, panel_top, width, height), fill=(0, 0, 0))
        for number, line in enumerate(text):
            draw.text((width // 16, panel_top + 6 + number * line_height), line, font=font,
                      fill="white")  # fmt: skip
        draw.rectangle((0, 0, width, max(height // 14, 12)), fill=(0, 0, 0))
        draw.text((4, 2), LABEL, font=small, fill="white")
        frames.append(frame.convert("P", palette=Image.Palette.ADAPTIVE, colors=64))
    buffer = io.BytesIO()
    frames[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=frames[1:],
        duration=1000 // FPS,
        loop=0,
        comment=LABEL.encode(),
    )
    return buffer.getvalue(), width, height, count

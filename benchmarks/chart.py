"""The one chart: dispatch cost against k, drawn with Pillow (already a dependency)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from PIL import Image, ImageDraw, ImageFont

__all__ = ["draw_line_chart"]

_SIZE: Final = (900, 560)
_MARGIN: Final = {"left": 90, "right": 240, "top": 60, "bottom": 70}
_COLOURS: Final = ("#7f7f7f", "#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd")


def _nice_step(span: float, ticks: int = 6) -> float:
    """Return a round tick step (1, 2 or 5 times a power of ten) for ``span``."""
    raw = span / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def draw_line_chart(
    path: Path,
    *,
    title: str,
    x_label: str,
    y_label: str,
    xs: Sequence[float],
    series: Mapping[str, Sequence[float]],
) -> None:
    """Draw one line per series against ``xs`` and save it as a PNG at ``path``."""
    image = Image.new("RGB", _SIZE, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=15)
    small = ImageFont.load_default(size=13)
    left, top = _MARGIN["left"], _MARGIN["top"]
    right, bottom = _SIZE[0] - _MARGIN["right"], _SIZE[1] - _MARGIN["bottom"]

    y_max = max((v for values in series.values() for v in values), default=1.0) or 1.0
    step = _nice_step(y_max)
    y_top = step * math.ceil(y_max / step)
    x_min, x_max = min(xs), max(xs)
    x_span = (x_max - x_min) or 1.0

    def at(x: float, y: float) -> tuple[float, float]:
        return (
            left + (x - x_min) / x_span * (right - left),
            bottom - y / y_top * (bottom - top),
        )

    # Grid and y ticks.
    tick = 0.0
    while tick <= y_top + step / 2:
        _, y = at(x_min, tick)
        draw.line([(left, y), (right, y)], fill="#e6e6e6")
        draw.text((left - 8, y), f"{tick:,.0f}", fill="black", font=small, anchor="rm")
        tick += step
    for x_value in xs:
        x, _ = at(x_value, 0)
        draw.line([(x, top), (x, bottom)], fill="#f0f0f0")
        draw.text((x, bottom + 8), f"{x_value:g}", fill="black", font=small, anchor="mt")
    draw.rectangle([(left, top), (right, bottom)], outline="black")

    draw.text(((left + right) / 2, 22), title, fill="black", font=font, anchor="mm")
    draw.text(((left + right) / 2, bottom + 40), x_label, fill="black", font=font, anchor="mm")
    label = Image.new("RGBA", (400, 24), (255, 255, 255, 0))
    ImageDraw.Draw(label).text((200, 12), y_label, fill="black", font=font, anchor="mm")
    rotated = label.rotate(90, expand=True)
    image.paste(rotated, (10, int((top + bottom) / 2 - rotated.height / 2)), rotated)

    # Lines, markers and the legend.
    for index, (name, values) in enumerate(series.items()):
        colour = _COLOURS[index % len(_COLOURS)]
        points = [at(x, y) for x, y in zip(xs, values, strict=True)]
        if len(points) > 1:
            draw.line(points, fill=colour, width=3)
        for x, y in points:
            draw.ellipse([(x - 4, y - 4), (x + 4, y + 4)], fill=colour)
        legend_y = top + 10 + index * 26
        draw.line([(right + 20, legend_y), (right + 50, legend_y)], fill=colour, width=3)
        draw.ellipse([(right + 31, legend_y - 4), (right + 39, legend_y + 4)], fill=colour)
        draw.text((right + 58, legend_y), name, fill="black", font=small, anchor="lm")

    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG", optimize=True)

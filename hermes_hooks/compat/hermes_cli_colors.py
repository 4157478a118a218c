"""Hermes' ``hermes_cli.colors``: ANSI colours for the messages plugins print.

Colour only on a terminal, never with ``NO_COLOR`` set or ``TERM=dumb``, as in Hermes.
"""

from __future__ import annotations

import os
import sys

__all__ = ["Colors", "color", "should_use_color"]


def should_use_color() -> bool:
    """Whether coloured output is appropriate now."""
    if os.environ.get("NO_COLOR") is not None or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


class Colors:
    """The ANSI codes Hermes' CLI uses."""

    RESET = "\033[0m"
    BOLD = "\033[1m"
    DIM = "\033[2m"
    RED = "\033[31m"
    GREEN = "\033[32m"
    YELLOW = "\033[33m"
    BLUE = "\033[34m"
    MAGENTA = "\033[35m"
    CYAN = "\033[36m"


def color(text: str, *codes: str) -> str:
    """Return ``text`` wrapped in ``codes`` when colour is appropriate, else unchanged."""
    if not should_use_color():
        return text
    return "".join(codes) + text + Colors.RESET

"""A helper for the tests' one-line callbacks that note their call and answer."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def noted(log: list[T], item: T, reply: R) -> R:
    """Append ``item`` to ``log`` and return ``reply`` (for lambdas: ``lambda a: noted(...)``)."""
    log.append(item)
    return reply

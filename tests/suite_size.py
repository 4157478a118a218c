"""How much the heavy suites try: a quick default on every run, all of it in full mode.

The fault matrix, the kill loop, the fuzzers, the concurrency and reload loops run a quick
default on every run (the whole suite must stay well under five minutes on two cores) and
their full size with ``python -m pytest --full`` or ``HERMES_FULL_SUITES=1``. A suite's own
variable (``HERMES_DURABILITY_KILLS`` and the rest, docs/reliability.md) overrides both. The
figures published in docs/reliability.md are those of a full run.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["FULL_VARIABLE", "count", "full"]

FULL_VARIABLE: Final = "HERMES_FULL_SUITES"


def full() -> bool:
    """Whether the heavy suites run at their full size."""
    return os.environ.get(FULL_VARIABLE, "") == "1"


def count(variable: str, *, quick: int, full_size: int) -> int:
    """The count a heavy suite runs: ``variable`` when set, else its quick or full size."""
    value = os.environ.get(variable, "").strip()
    if value:
        return int(value)
    return full_size if full() else quick

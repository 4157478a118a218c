"""Figures the reliability suites report, for docs/reliability.md.

With ``HERMES_RELIABILITY_FIGURES=figures.json`` set, each suite adds its counts (cases run,
faults injected, kills survived, inputs fuzzed) to that JSON file; without it nothing is
written. See docs/reliability.md for the command that reproduces the published figures.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

__all__ = ["add"]

_lock = threading.Lock()
# Read at import too: the suites' isolated homes remove every HERMES_* variable before a test
# runs, which left the fault matrix's figures unwritten.
_AT_IMPORT = os.environ.get("HERMES_RELIABILITY_FIGURES")


def add(suite: str, figure: str, count: int = 1) -> None:
    """Add ``count`` to ``figure`` of ``suite`` in the figures file, when one is set."""
    target = os.environ.get("HERMES_RELIABILITY_FIGURES") or _AT_IMPORT
    if not target:
        return
    path = Path(target)
    with _lock:
        data: dict[str, dict[str, int]] = (
            json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        )
        figures = data.setdefault(suite, {})
        figures[figure] = figures.get(figure, 0) + count
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")

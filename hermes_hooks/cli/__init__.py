"""The ``hermes`` command: a click tree; formatting only, the logic lives in the library.

Internal: not part of the public API (docs/reference/api.md).
"""

from __future__ import annotations

from hermes_hooks.cli.main import cli, main

__all__ = ["cli", "main"]

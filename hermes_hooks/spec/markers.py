"""The pluggy project name and the markers that hookspecs and hookimpls are declared with."""

from __future__ import annotations

from typing import Final

import pluggy

PROJECT_NAME: Final = "hermes"
"""The pluggy project name: hookimpls are marked with the ``hermes_impl`` attribute."""

hookspec: Final = pluggy.HookspecMarker(PROJECT_NAME)
"""Marker for hook specifications (used by :mod:`hermes_hooks.spec.hookspecs`)."""

hookimpl: Final = pluggy.HookimplMarker(PROJECT_NAME)
"""Marker for hook implementations in plugins: ``@hookimpl`` or ``@hookimpl(tryfirst=True)``."""

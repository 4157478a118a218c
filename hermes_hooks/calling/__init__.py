"""Calling hooks: isolation guards, bounds and workers, the async runner, the facade.

The facade's per-hook methods are written by :mod:`hermes_hooks.calling.facadegen`.

Internal: not part of the public API (docs/reference/api.md).
"""

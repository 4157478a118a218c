"""Hermes' ``agent.context_engine``: the context engine ABC.

The same objects as :mod:`hermes_hooks.backends.context_engine.engine` (``ContextEngine`` is the
family's ABC, so an engine written for Hermes registers with ``ctx.register_context_engine``
unchanged).
"""

from __future__ import annotations

from hermes_hooks.backends.context_engine.engine import (
    MEMORY_CONTEXT_MAX_CHARS,
    ContextEngine,
    sanitize_memory_context,
)

__all__ = ["MEMORY_CONTEXT_MAX_CHARS", "ContextEngine", "sanitize_memory_context"]

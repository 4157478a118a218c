"""Hermes' ``agent.memory_provider``: the memory provider ABC and its helpers.

The same objects as :mod:`hermes_hooks.backends.memory.provider` (``MemoryProvider`` is the
memory family's ABC, so a provider written for Hermes registers with
``ctx.register_memory_provider`` unchanged).
"""

from __future__ import annotations

from hermes_hooks.backends.memory.provider import (
    INDICATOR_GLYPH,
    PRE_COMPRESS_CHECKPOINT_API_VERSION,
    TRIVIAL_PROMPT_RE,
    MemoryProvider,
    RecallStatus,
    ctx_bound,
    is_trivial_prompt,
    spawn_context_thread,
)

__all__ = [
    "INDICATOR_GLYPH",
    "PRE_COMPRESS_CHECKPOINT_API_VERSION",
    "TRIVIAL_PROMPT_RE",
    "MemoryProvider",
    "RecallStatus",
    "ctx_bound",
    "is_trivial_prompt",
    "spawn_context_thread",
]

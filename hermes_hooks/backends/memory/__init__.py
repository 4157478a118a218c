"""Memory providers: the contract, the family chosen by ``memory.provider``, the builtin store.

A provider plugin written for Hermes works unchanged (``agent.memory_provider`` is served by the
compatibility layer); one written for hermes-hooks imports the names from ``hermes_hooks``::

    from hermes_hooks import MemoryProvider, RecallStatus, is_trivial_prompt

and registers with ``ctx.register_memory_provider(MyProvider())``. The host's own provider,
``builtin`` (:mod:`hermes_hooks.backends.memory.builtin`), keeps facts in SQLite under
``$HERMES_HOME/memory/``. See ``docs/how-to/memory-provider.md``.
"""

from __future__ import annotations

from hermes_hooks.backends.memory.provider import (
    INDICATOR_GLYPH,
    PRE_COMPRESS_CHECKPOINT_API_VERSION,
    TRIVIAL_PROMPT_RE,
    MemoryProvider,
    RecallStatus,
    build_memory_context_block,
    ctx_bound,
    is_trivial_prompt,
    normalize_tool_schema,
    sanitize_context,
    spawn_context_thread,
)
from hermes_hooks.backends.memory.registry import (
    BUILTIN_NAME,
    DEFAULT_PREFETCH_TIMEOUT,
    MEMORY,
    ActiveProvider,
    MemoryRegistry,
    MemorySettings,
    get_memory,
)

__all__ = [
    "BUILTIN_NAME",
    "DEFAULT_PREFETCH_TIMEOUT",
    "INDICATOR_GLYPH",
    "MEMORY",
    "PRE_COMPRESS_CHECKPOINT_API_VERSION",
    "TRIVIAL_PROMPT_RE",
    "ActiveProvider",
    "MemoryProvider",
    "MemoryRegistry",
    "MemorySettings",
    "RecallStatus",
    "build_memory_context_block",
    "ctx_bound",
    "get_memory",
    "is_trivial_prompt",
    "normalize_tool_schema",
    "sanitize_context",
    "spawn_context_thread",
]

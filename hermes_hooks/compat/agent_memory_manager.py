"""Hermes' ``agent.memory_manager``, the part plugins use: the recalled-memory fence.

Memory providers strip the host's ``<memory-context>`` fence from what they store or return
with ``sanitize_context``; these are the memory family's own functions
(``hermes_hooks.backends.memory.provider``), which the reference host uses around recall.
Hermes' ``MemoryManager`` orchestrator itself is the memory family's registry here
(``pm.memory``), not served under this name.
"""

from __future__ import annotations

from hermes_hooks.backends.memory.provider import (
    build_memory_context_block,
    normalize_tool_schema,
    sanitize_context,
)

__all__ = ["build_memory_context_block", "normalize_tool_schema", "sanitize_context"]

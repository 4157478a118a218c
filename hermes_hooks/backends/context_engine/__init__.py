"""Context engines: the contract, the family chosen by ``context.engine``, the ``compressor``.

An engine written for Hermes works unchanged (``agent.context_engine`` is served by the
compatibility layer); one written for hermes-hooks imports ``ContextEngine`` from
``hermes_hooks`` and registers with ``ctx.register_context_engine(MyEngine())``. The bundled
default, ``compressor`` (:mod:`hermes_hooks.backends.context_engine.compressor`), summarizes
the middle of a long conversation with the active model. See
``docs/how-to/context-engine.md``.
"""

from __future__ import annotations

from hermes_hooks.backends.context_engine.compressor import (
    SUMMARY_END_MARKER,
    SUMMARY_PREFIX,
    CompressionSettings,
    ContextCompressor,
    is_compaction_summary_message,
)
from hermes_hooks.backends.context_engine.engine import (
    MEMORY_CONTEXT_MAX_CHARS,
    ContextEngine,
    sanitize_memory_context,
)
from hermes_hooks.backends.context_engine.registry import (
    CONTEXT_ENGINE,
    DEFAULT_ENGINE,
    ContextEngineRegistry,
    ContextSettings,
    get_context_engines,
)
from hermes_hooks.backends.context_engine.tokens import (
    estimate_messages_tokens_rough,
    estimate_request_tokens_rough,
    estimate_tokens_rough,
    get_model_context_length,
)

__all__ = [
    "CONTEXT_ENGINE",
    "DEFAULT_ENGINE",
    "MEMORY_CONTEXT_MAX_CHARS",
    "SUMMARY_END_MARKER",
    "SUMMARY_PREFIX",
    "CompressionSettings",
    "ContextCompressor",
    "ContextEngine",
    "ContextEngineRegistry",
    "ContextSettings",
    "estimate_messages_tokens_rough",
    "estimate_request_tokens_rough",
    "estimate_tokens_rough",
    "get_context_engines",
    "get_model_context_length",
    "is_compaction_summary_message",
    "sanitize_memory_context",
]

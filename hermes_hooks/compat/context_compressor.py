"""Hermes' ``agent.context_compressor``: the default engine, for engines that build on it.

``ContextCompressor`` is the bundled ``compressor``
(:mod:`hermes_hooks.backends.context_engine.compressor`); its constructor takes Hermes' keyword
names, so an engine that subclasses or wraps it loads unchanged.
"""

from __future__ import annotations

from hermes_hooks.backends.context_engine.compressor import (
    LEGACY_SUMMARY_PREFIX,
    SUMMARY_PREFIX,
    ContextCompressor,
    is_compaction_summary_message,
)

__all__ = [
    "LEGACY_SUMMARY_PREFIX",
    "SUMMARY_PREFIX",
    "ContextCompressor",
    "is_compaction_summary_message",
]

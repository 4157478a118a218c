"""Hermes' ``agent.model_metadata``: the rough token estimates and the context window.

What context engines and memory providers import from it; backed by
:mod:`hermes_hooks.backends.context_engine.tokens`.
"""

from __future__ import annotations

from hermes_hooks.backends.context_engine.tokens import (
    DEFAULT_CONTEXT_LENGTH,
    estimate_messages_tokens_rough,
    estimate_request_tokens_rough,
    estimate_tokens_rough,
    get_model_context_length,
)

DEFAULT_FALLBACK_CONTEXT = DEFAULT_CONTEXT_LENGTH
"""Hermes' name for the context window of an unknown model."""

__all__ = [
    "DEFAULT_FALLBACK_CONTEXT",
    "estimate_messages_tokens_rough",
    "estimate_request_tokens_rough",
    "estimate_tokens_rough",
    "get_model_context_length",
]

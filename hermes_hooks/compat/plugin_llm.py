"""Hermes' ``agent.plugin_llm``: host-owned model calls for plugins, under the trust policy.

The classes of :mod:`hermes_hooks.backends.models.plugin_llm` under Hermes' names. Hermes
builds the facade as ``PluginLlm(plugin_id=...)``; so does this one, on the current manager.
"""

from __future__ import annotations

from hermes_hooks.backends.models import plugin_llm as _llm
from hermes_hooks.backends.models.plugin_llm import (
    PluginLlmImageInput,
    PluginLlmInput,
    PluginLlmTextInput,
    PluginLlmUsage,
)
from hermes_hooks.compat.current import require_manager
from hermes_hooks.errors import PluginLlmTrustError

__all__ = [
    "PluginLlm",
    "PluginLlmCompleteResult",
    "PluginLlmImageInput",
    "PluginLlmInput",
    "PluginLlmStructuredResult",
    "PluginLlmTextInput",
    "PluginLlmTrustError",
    "PluginLlmUsage",
]

PluginLlmCompleteResult = _llm.LlmResult
"""What :meth:`PluginLlm.complete` returns."""

PluginLlmStructuredResult = _llm.StructuredResult
"""What :meth:`PluginLlm.complete_structured` returns."""


class PluginLlm(_llm.PluginLlm):
    """``ctx.llm`` for plugin ``plugin_id`` on the current manager, as Hermes constructs it.

    :raises NoManagerError: no manager exists in this process.
    """

    def __init__(self, *, plugin_id: str) -> None:
        super().__init__(require_manager("agent.plugin_llm.PluginLlm"), plugin_id)

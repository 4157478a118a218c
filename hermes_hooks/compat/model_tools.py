"""Hermes' ``model_tools``: the tool definitions a model call offers, by toolset.

``get_tool_definitions`` answers from the current manager's tools (the registry
``tools.registry.registry`` stands for): the OpenAI definitions of the available tools whose
toolset is enabled, as Hermes builds the ``tools`` list of a model request.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hermes_hooks.compat.tools_registry import registry

__all__ = ["get_all_tool_names", "get_tool_definitions", "get_toolset_for_tool"]


def get_tool_definitions(
    enabled_toolsets: Iterable[str] | None = None,
    disabled_toolsets: Iterable[str] | None = None,
    quiet_mode: bool = False,
    skip_tool_search_assembly: bool = False,
) -> list[dict[str, Any]]:
    """Return the OpenAI definitions of the available tools, filtered by toolset.

    With ``enabled_toolsets`` only tools of those toolsets are offered; otherwise every
    toolset but ``disabled_toolsets``. A plugin's tools are offered only when their toolset
    is enabled, as in Hermes. ``quiet_mode`` and ``skip_tool_search_assembly`` are accepted
    (there is no status print and no tool-search collapsing here).
    """
    toolsets = set(registry.get_registered_toolset_names())
    if enabled_toolsets is not None:
        toolsets &= set(enabled_toolsets)
    elif disabled_toolsets is not None:
        toolsets -= set(disabled_toolsets)
    names = [name for toolset in toolsets for name in registry.get_tool_names_for_toolset(toolset)]
    return registry.get_definitions(names, quiet=quiet_mode)


def get_all_tool_names() -> list[str]:
    """Return the names of every registered tool, sorted."""
    return registry.get_all_tool_names()


def get_toolset_for_tool(name: str) -> str | None:
    """Return the toolset of tool ``name``, or ``None``."""
    return registry.get_toolset_for_tool(name)

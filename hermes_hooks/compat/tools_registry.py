"""Hermes' ``tools.registry``: the tool registry, and the JSON helpers tool handlers return.

``registry`` is Hermes' singleton; here it stands for the current manager's ``pm.tools``, with
Hermes' method names. A tool registered through it by plugin code is owned by that plugin
(removed when it unloads, refused if the name is another plugin's, a host tool only with
``override=True`` and the operator's grant); host code registers host tools.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from hermes_hooks.compat.current import current_owner, require_manager
from hermes_hooks.errors import RegistrationError
from hermes_hooks.plugins import active
from hermes_hooks.registries.base import HOST
from hermes_hooks.registries.tools import ToolEntry, ToolRegistry as _ToolStore

__all__ = ["ToolEntry", "ToolRegistry", "registry", "tool_error", "tool_result"]

logger = logging.getLogger("tools.registry")

_MAX_ERROR_CHARS: Final = 2048
_TRUNCATED: Final = "… [truncated]"


def tool_error(message: object, **extra: Any) -> str:
    """Return ``'{"error": "<message>", **extra}'``; the message is cut at 2048 characters."""
    text = str(message)
    if len(text) > _MAX_ERROR_CHARS:
        text = text[:_MAX_ERROR_CHARS] + _TRUNCATED
    return json.dumps({"error": text, **extra}, ensure_ascii=False)


def tool_result(data: Any = None, **kwargs: Any) -> str:
    """Return the JSON of ``data``, or of the keyword arguments when ``data`` is ``None``."""
    return json.dumps(data if data is not None else kwargs, ensure_ascii=False)


_process_host_tools: dict[str, tuple[str, Mapping[str, Any], Callable[..., Any], dict[str, Any]]]
_process_host_tools = {}
"""The host tools registered through ``registry`` in this process, by name."""


def seed_host_tools(tools: _ToolStore) -> None:
    """Register in ``tools`` (a new manager's) the host tools registered through ``registry``
    so far, as Hermes' one process-wide registry holds them; a name it has already is kept."""
    for name, (toolset, schema, handler, fields) in list(_process_host_tools.items()):
        if tools.get_entry(name) is None:
            try:
                tools.register_tool(name, toolset, schema, handler, owner=HOST, **fields)
            except RegistrationError as error:
                logger.warning("host tool %r not registered: %s", name, error)


def _held_entry(
    name: str, held: tuple[str, Mapping[str, Any], Callable[..., Any], dict[str, Any]]
) -> ToolEntry:
    toolset, schema, handler, fields = held
    requires = fields.get("requires_env") or ()
    return ToolEntry(
        name,
        toolset,
        schema,
        handler,
        check_fn=fields.get("check_fn"),
        requires_env=(requires,) if isinstance(requires, str) else tuple(requires),
        is_async=bool(fields.get("is_async")),
        description=str(fields.get("description") or ""),
        emoji=str(fields.get("emoji") or ""),
    )


class HermesToolRegistry:
    """Hermes' ``ToolRegistry`` API over the current manager's tools."""

    @staticmethod
    def _store() -> _ToolStore:
        tools: _ToolStore = require_manager("tools.registry.registry").tools
        return tools

    @property
    def _tools(self) -> dict[str, ToolEntry]:
        """Hermes' ``registry._tools``: every tool's entry by name (a snapshot); before any
        manager exists, the host tools registered through ``registry`` so far."""
        if active.current_manager() is None:
            return {name: _held_entry(name, held) for name, held in _process_host_tools.items()}
        return {entry.name: entry.value for entry in self._store().entries()}

    def register(
        self,
        name: str,
        toolset: str,
        schema: Mapping[str, Any],
        handler: Callable[..., Any],
        check_fn: Callable[[], Any] | None = None,
        requires_env: Iterable[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        max_result_size_chars: int | float | None = None,
        dynamic_schema_overrides: Callable[[], Any] | None = None,
        override: bool = False,
        scope: str | None = None,
    ) -> None:
        """Register a tool for the plugin whose code calls (the host, from host code).

        ``max_result_size_chars``, ``dynamic_schema_overrides`` and ``scope`` are accepted as
        Hermes takes them and not used.

        :raises RegistrationError: a bad schema, or a name another plugin owns.
        :raises PluginToolOverrideError: a host tool without ``override`` and the grant.
        """
        fields: dict[str, Any] = {
            "check_fn": check_fn,
            "requires_env": requires_env,
            "is_async": is_async,
            "description": description,
            "emoji": emoji,
        }
        if active.current_manager() is None:
            # No manager yet: host code registering (as Hermes' built-in tools/*.py do at
            # import); the managers made later hold it.
            _process_host_tools[name] = (toolset, schema, handler, fields)
            return
        manager = require_manager("tools.registry.registry.register")
        owner = current_owner(manager)
        manager.tools.register_tool(
            name, toolset, schema, handler, override=override, owner=owner, **fields
        )
        if owner == HOST:
            # Hermes' registry is one per process: a host tool registered through it is seen
            # by every manager made later too (a PluginManager() built after it).
            _process_host_tools[name] = (toolset, schema, handler, fields)

    def deregister(self, name: str, *, scope: str | None = None) -> None:
        """Remove tool ``name``; plugin code may remove only its own plugin's tools.

        :raises RegistrationError: the tool is the host's or another plugin's.
        """
        if active.current_manager() is None:
            _process_host_tools.pop(name, None)
            return
        store = self._store()
        entry = store.get_entry(name)
        store.unregister(name)
        if entry is not None and entry.owner == HOST:
            _process_host_tools.pop(name, None)

    def dispatch(
        self, name: str, args: Mapping[str, Any] | str | None = None, **kwargs: Any
    ) -> str:
        """Call tool ``name`` and return its result; never raises (an error is JSON)."""
        kwargs.pop("scope", None)
        return self._store().dispatch(name, args, **kwargs)

    def get_entry(self, name: str, *, scope: str | None = None) -> ToolEntry | None:
        """Return the entry of tool ``name``, or ``None``."""
        return self._store().get(name)

    def get_all_entries(self) -> list[ToolEntry]:
        """Return every tool's entry, sorted by name."""
        return [entry.value for entry in self._store().entries()]

    def get_all_tool_names(self) -> list[str]:
        """Return every tool's name, sorted."""
        return self._store().names()

    def get_schema(self, name: str) -> dict[str, Any] | None:
        """Return tool ``name``'s raw schema, whether or not it is available now."""
        entry = self._store().get(name)
        return dict(entry.schema) if entry is not None else None

    def get_toolset_for_tool(self, name: str) -> str | None:
        """Return the toolset of tool ``name``, or ``None``."""
        entry = self._store().get(name)
        return entry.toolset if entry is not None else None

    def get_emoji(self, name: str, default: str = "⚡") -> str:
        """Return the emoji of tool ``name``, or ``default``."""
        entry = self._store().get(name)
        return (entry.emoji if entry is not None else "") or default

    def get_tool_names_for_toolset(self, toolset: str) -> list[str]:
        """Return the names of the tools in ``toolset``, sorted."""
        return [e.name for e in self._store().entries() if e.value.toolset == toolset]

    def get_registered_toolset_names(self) -> list[str]:
        """Return the toolsets with at least one tool, sorted."""
        return sorted({e.value.toolset for e in self._store().entries()})

    def get_definitions(
        self, tool_names: Iterable[str], quiet: bool = False
    ) -> list[dict[str, Any]]:
        """Return the OpenAI definitions of the named tools that are available now."""
        tools = self._store()
        found: list[dict[str, Any]] = []
        for name in sorted(set(tool_names)):
            entry = tools.get(name)
            if entry is not None and tools.is_available(name):
                found.append(entry.definition())
        return found

    def is_toolset_available(self, toolset: str) -> bool:
        """Return whether ``toolset`` has a tool that can be offered now."""
        tools = self._store()
        return any(
            e.value.toolset == toolset and tools.is_available(e.name) for e in tools.entries()
        )

    def __repr__(self) -> str:
        return "<tools.registry.registry: the current hermes-hooks manager's tools>"


registry: Final = HermesToolRegistry()
"""Hermes' ``tools.registry.registry``, for the current manager."""


class ToolRegistry:
    """Hermes' ``ToolRegistry`` class: a registry of its own, apart from any manager's.

    ``registry`` is the current manager's; an instance of this class is a separate store, as
    Hermes' tests and tools build one. A name of another toolset is refused (an error is
    logged) unless ``override=True``; the entry it replaced comes back when it is removed.
    """

    def __init__(self) -> None:
        self._tools: dict[str, ToolEntry] = {}
        self._displaced: dict[str, list[ToolEntry]] = {}

    def register(
        self,
        name: str,
        toolset: str,
        schema: Mapping[str, Any],
        handler: Callable[..., Any],
        check_fn: Callable[[], Any] | None = None,
        requires_env: Iterable[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        max_result_size_chars: int | float | None = None,
        dynamic_schema_overrides: Callable[[], Any] | None = None,
        override: bool = False,
        scope: str | None = None,
    ) -> None:
        """Register tool ``name``; another toolset's tool of that name only with ``override``."""
        existing = self._tools.get(name)
        if existing is not None and existing.toolset != toolset and not override:
            logger.error(
                "Tool registration REJECTED: %r (toolset %r) would shadow the tool of toolset "
                "%r; pass override=True to replace it deliberately",
                name,
                toolset,
                existing.toolset,
            )
            return
        if existing is not None and existing.toolset != toolset:
            logger.info("Tool %r: overriding existing tool of toolset %r", name, toolset)
            self._displaced.setdefault(name, []).append(existing)
        self._tools[name] = ToolEntry(
            name=name,
            toolset=toolset,
            schema=schema,
            handler=handler,
            check_fn=check_fn,
            requires_env=tuple(requires_env or ()),
            is_async=is_async,
            description=description or str(schema.get("description", "")),
            emoji=emoji,
        )

    def deregister(self, name: str, *, scope: str | None = None) -> None:
        """Remove tool ``name``; the entry it had replaced, if any, comes back."""
        if self._tools.pop(name, None) is None:
            return
        displaced = self._displaced.get(name)
        if displaced:
            self._tools[name] = displaced.pop()
            if not displaced:
                del self._displaced[name]

    def get_entry(self, name: str, *, scope: str | None = None) -> ToolEntry | None:
        """Return the entry of tool ``name``, or ``None``."""
        return self._tools.get(name)

    def get_all_tool_names(self) -> list[str]:
        """Return every tool's name, sorted."""
        return sorted(self._tools)

    def dispatch(self, name: str, args: Mapping[str, Any] | None = None, **kwargs: Any) -> str:
        """Call tool ``name`` and return its result; never raises (an error is JSON)."""
        entry = self._tools.get(name)
        if entry is None:
            return tool_error(f"Unknown tool: {name}")
        try:
            return str(entry.handler(dict(args or {}), **kwargs))
        except Exception as exc:
            return tool_error(f"Tool execution failed: {type(exc).__name__}: {exc}")

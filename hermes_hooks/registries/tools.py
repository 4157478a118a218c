"""The tool registry: what the model may call, who owns each tool, and dispatch without raising."""

from __future__ import annotations

import inspect
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import attrs

from hermes_hooks.calling import aio
from hermes_hooks.calling.tracebacks import trimmed
from hermes_hooks.errors import PluginToolOverrideError, RegistrationError
from hermes_hooks.registries.base import (
    HOST,
    FailureCounter,
    Handle,
    Registry,
    describe_owner,
    guard_handler,
)

__all__ = ["ToolEntry", "ToolRegistry"]

logger = logging.getLogger(__name__)

ToolHandler = Callable[..., Any]


@attrs.frozen
class ToolEntry:
    """A registered tool, as ``ctx.register_tool`` describes it."""

    name: str
    toolset: str
    schema: Mapping[str, Any]
    handler: ToolHandler
    check_fn: Callable[[], Any] | None = None
    requires_env: tuple[str, ...] = ()
    is_async: bool = False
    description: str = ""
    emoji: str = ""
    owner: str = HOST

    def definition(self) -> dict[str, Any]:
        """Return the OpenAI function-calling definition of this tool."""
        function = dict(self.schema)
        function["name"] = self.name
        function.setdefault("description", self.description)
        function.setdefault("parameters", {"type": "object", "properties": {}})
        return {"type": "function", "function": function}


_MAX_ERROR_CHARS: Final = 2048
"""Bound on the ``error`` text given to the model, as Hermes bounds ``tool_error`` bodies."""


def _error(message: str, **extra: object) -> str:
    if len(message) > _MAX_ERROR_CHARS:
        message = message[:_MAX_ERROR_CHARS] + "… [truncated]"
    return json.dumps({"error": message, **extra}, ensure_ascii=False, default=str)


def _check_description(check_fn: Callable[[], Any]) -> str:
    """Say why a tool is not offered: its ``check_fn``'s docstring says when it is."""
    doc = inspect.getdoc(check_fn)
    if doc:
        first = " ".join(doc.split("\n\n", 1)[0].split())  # the first paragraph, one line
        return f"not offered now: {first.rstrip('.')}"
    return "check_fn returned false"


def _env_names(requires_env: Iterable[str] | str | None) -> tuple[str, ...]:
    # A bare string is one variable name, not a sequence of one-letter names.
    if requires_env is None:
        return ()
    if isinstance(requires_env, str):
        return (requires_env,)
    return tuple(requires_env)


def _call_args(args: object) -> dict[str, Any]:
    """Return the arguments a handler gets: a dict from a mapping, ``None`` or a JSON object.

    :raises ValueError: ``args`` is none of those.
    """
    if args is None:
        return {}
    if isinstance(args, str):
        # Models send arguments as a JSON string; accept it as Hermes' callers decode it.
        parsed = json.loads(args) if args.strip() else {}
        if not isinstance(parsed, dict):
            raise ValueError(f"arguments must be a JSON object, found {type(parsed).__name__}")
        return parsed
    if isinstance(args, Mapping):
        return dict(args)
    raise ValueError(f"arguments must be a mapping, found {type(args).__name__}")


class ToolRegistry(Registry[ToolEntry]):
    """Tools by name; plugins may replace a host tool only with the operator's grant.

    :param allow_override: answers whether the operator granted ``owner`` the right to replace
        host tools (``plugins.entries.<id>.allow_tool_override``).
    """

    def __init__(
        self,
        *,
        allow_override: Callable[[str], bool] | None = None,
        count_failure: FailureCounter | None = None,
    ) -> None:
        super().__init__("tool")
        self._allow_override = allow_override or (lambda owner: False)
        #: Where a plugin's handler failures count (the manager's ``count_failure``).
        self.count_failure = count_failure

    def register_tool(
        self,
        name: str,
        toolset: str,
        schema: Mapping[str, Any],
        handler: ToolHandler,
        *,
        check_fn: Callable[[], Any] | None = None,
        requires_env: Iterable[str] | str | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        override: bool = False,
        owner: str = HOST,
    ) -> Handle:
        """Register a tool for ``owner``.

        :raises PluginToolOverrideError: a plugin named a host tool without ``override=True``
            and the operator's ``allow_tool_override`` grant.
        :raises RegistrationError: a bad argument, or the name belongs to another plugin.
        """
        if not callable(handler):
            raise RegistrationError(
                f"tool {name!r} from {describe_owner(owner)}: handler must be callable, "
                f"found {type(handler).__name__}"
            )
        if not isinstance(schema, Mapping):
            raise RegistrationError(
                f"tool {name!r} from {describe_owner(owner)}: schema must be a mapping "
                f"(an OpenAI function schema), found {type(schema).__name__}"
            )
        parameters = schema.get("parameters")
        if parameters is not None and not isinstance(parameters, Mapping):
            raise RegistrationError(
                f"tool {name!r} from {describe_owner(owner)}: schema['parameters'] must be a "
                f"JSON Schema object, found {type(parameters).__name__}"
            )
        if not isinstance(toolset, str) or not toolset:
            raise RegistrationError(
                f"tool {name!r} from {describe_owner(owner)}: toolset must be a non-empty "
                f"string, found {toolset!r}"
            )
        if check_fn is not None and not callable(check_fn):
            raise RegistrationError(
                f"tool {name!r} from {describe_owner(owner)}: check_fn must be callable, "
                f"found {type(check_fn).__name__}"
            )
        key = self.normalize(name)
        if owner != HOST and self.count_failure is not None:
            # One guard whatever the door: ctx.register_tool, tools.registry, host code.
            count = self.count_failure
            handler = guard_handler(owner, f"tool {key!r}", handler, count, wants_str=True)
            if check_fn is not None:
                check_fn = guard_handler(owner, f"tool {key!r} check_fn", check_fn, count)
        entry = ToolEntry(
            name=key,
            toolset=toolset,
            schema=schema,
            handler=handler,
            check_fn=check_fn,
            requires_env=_env_names(requires_env),
            is_async=is_async,
            description=description or str(schema.get("description", "")),
            emoji=emoji,
            owner=owner,
        )
        # Check and insert under one lock, so a host tool cannot appear in between.
        with self._lock:
            replace_host = False
            existing = self.get_entry(key)
            if owner != HOST and existing is not None and existing.owner == HOST:
                if not override:
                    raise PluginToolOverrideError(
                        f"plugin {owner!r} registered tool {key!r}, which is a host tool; to "
                        f"replace it the plugin must pass override=True and the operator must "
                        f"set plugins.entries.{owner}.allow_tool_override: true"
                    )
                if not self._allow_override(owner):
                    raise PluginToolOverrideError(
                        f"plugin {owner!r} asked to replace host tool {key!r}, but the operator "
                        f"has not allowed it: set plugins.entries.{owner}.allow_tool_override: "
                        f"true in config.yaml"
                    )
                replace_host = True
            return self.register(key, entry, owner=owner, replace_host=replace_host)

    def unavailable_reason(self, name: str) -> str | None:
        """Return why tool ``name`` cannot be offered now, or ``None`` when it can."""
        entry = self.get(name)
        if entry is None:
            return f"no tool named {name!r}"
        missing = [var for var in entry.requires_env if not os.environ.get(var)]
        if missing:
            return f"environment variable {', '.join(missing)} is not set"
        if entry.check_fn is not None:
            try:
                ok = entry.check_fn()
            except Exception as exc:  # a broken check makes the tool unavailable, not the host
                logger.debug("check_fn of tool %r raised", name, exc_info=True)
                return f"check_fn raised {type(exc).__name__}: {exc}"
            if not ok:
                return _check_description(entry.check_fn)
        return None

    def is_available(self, name: str) -> bool:
        """Return whether tool ``name`` exists and its requirements and ``check_fn`` pass."""
        return self.unavailable_reason(name) is None

    def definitions(self, toolsets: Iterable[str] | str | None = None) -> list[dict[str, Any]]:
        """Return OpenAI function definitions of the available tools, sorted by name.

        :param toolsets: only tools of these toolsets (or of this one toolset), when given.
        """
        if isinstance(toolsets, str):
            toolsets = (toolsets,)  # one toolset name, not a sequence of letters
        wanted = set(toolsets) if toolsets is not None else None
        return [
            entry.value.definition()
            for entry in self.entries()
            if (wanted is None or entry.value.toolset in wanted) and self.is_available(entry.name)
        ]

    def dispatch(
        self, name: str, args: Mapping[str, Any] | str | None = None, **kwargs: Any
    ) -> str:
        """Call tool ``name`` with ``args`` and return its string result; never raises.

        An unknown tool, arguments that are not a mapping (or a JSON object string), a handler
        that raises or one that returns something other than a string all give a JSON object
        ``{"error": ...}``. Awaitable results (async handlers) are awaited, also when called
        from inside a running event loop.

        :param kwargs: passed on to the handler as keyword arguments.
        """
        entry = self.get(name)
        if entry is None:
            close = self.closest(name)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            return _error(f"Unknown tool: {name!r}{hint}")
        try:
            call_args = _call_args(args)
        except ValueError as exc:
            return _error(f"Tool {name!r}: bad arguments: {exc}", tool=name, owner=entry.owner)
        try:
            result = aio.resolve(entry.handler(call_args, **kwargs))
        except Exception as exc:
            logger.warning(
                "tool %r of %s raised %s: %s",
                name,
                describe_owner(entry.owner),
                type(exc).__name__,
                exc,
                exc_info=trimmed(exc) if logger.isEnabledFor(logging.DEBUG) else None,
            )
            return _error(
                f"Tool {name!r} failed: {type(exc).__name__}: {exc}", tool=name, owner=entry.owner
            )
        if not isinstance(result, str):
            return _error(
                f"Tool {name!r} returned {type(result).__name__}, expected a string",
                tool=name,
                owner=entry.owner,
            )
        return result

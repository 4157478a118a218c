"""What a loaded manager holds: every hook's implementations in call order, and the tools.

This answers "why did plugin A run before B": pluggy keeps a hook's implementations as
non-wrappers then wrappers, each part ordered ``trylast`` → plain → ``tryfirst``, and calls them
from the end of that list. :func:`list_hook_order` returns them in the order they are entered.
"""

from __future__ import annotations

from typing import Any

import attrs
import pluggy

from hermes_hooks.admin.trial import where_defined
from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.manager import PluginManager, callback_of
from hermes_hooks.registries.base import HOST

__all__ = [
    "HookImplInfo",
    "HookOrder",
    "ToolInfo",
    "list_hook_order",
    "list_tools",
    "registrations_of",
]


@attrs.frozen
class HookImplInfo:
    """One implementation of a hook, at its place in the call order.

    :param position: 1 for the implementation entered first.
    :param plugin: the key it is registered under.
    :param wrapper: a new-style ``wrapper=True`` implementation.
    :param hookwrapper: an old-style ``hookwrapper=True`` implementation.
    :param function: ``module:qualname`` of the plugin's own function.
    :param via_register_hook: it came from ``ctx.register_hook``.
    """

    position: int
    plugin: str
    wrapper: bool
    hookwrapper: bool
    tryfirst: bool
    trylast: bool
    function: str
    file: str | None
    line: int | None
    via_register_hook: bool

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict."""
        return attrs.asdict(self)


@attrs.frozen
class HookOrder:
    """A hook and its implementations in call order.

    :param known: the hook has a spec in this host (``False``: implemented but unknown).
    :param firstresult: the call stops at the first non-``None`` result.
    :param mode: how results combine (``observe``, ``first result``, ``collect``).
    :param policy: what a raising implementation turns into (``open``, ``closed``).
    """

    hook: str
    known: bool
    firstresult: bool
    mode: str
    policy: str
    impls: tuple[HookImplInfo, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict."""
        return {
            "hook": self.hook,
            "known": self.known,
            "firstresult": self.firstresult,
            "mode": self.mode,
            "policy": self.policy,
            "impls": [impl.to_dict() for impl in self.impls],
        }


def _describe_function(function: object) -> str:
    own = callback_of(function) if callable(function) else function
    module = getattr(own, "__module__", None) or "?"
    qualname = getattr(own, "__qualname__", None) or type(own).__qualname__
    return f"{module}:{qualname}"


def _order(pm: PluginManager, name: str, caller: pluggy.HookCaller) -> HookOrder:
    impls = []
    for position, impl in enumerate(reversed(caller.get_hookimpls()), start=1):
        inner = getattr(impl.function, "__wrapped_impl__", impl.function)
        file, line = where_defined(impl.function)
        impls.append(
            HookImplInfo(
                position=position,
                plugin=pm.get_name(impl.plugin) or impl.plugin_name,
                wrapper=bool(impl.wrapper),
                hookwrapper=bool(impl.hookwrapper),
                tryfirst=bool(impl.tryfirst),
                trylast=bool(impl.trylast),
                function=_describe_function(impl.function),
                file=file,
                line=line,
                via_register_hook=hasattr(inner, "__wrapped_callback__"),
            )
        )
    spec = caller.spec
    contract = pm.get_hook_contract(name)
    return HookOrder(
        hook=name,
        known=spec is not None,
        firstresult=bool(spec is not None and spec.opts.get("firstresult")),
        mode=contract.mode.value,
        policy=contract.policy.value,
        impls=tuple(impls),
    )


def _callers(pm: PluginManager) -> dict[str, pluggy.HookCaller]:
    return {
        name: caller
        for name, caller in vars(pm.hook).items()
        if isinstance(caller, pluggy.HookCaller)
    }


def list_hook_order(pm: PluginManager, name: str | None = None) -> list[HookOrder]:
    """Return every hook (or hook *name*) with its implementations in call order, by name.

    :param name: one hook; an unknown name with no implementations gives ``[]``.
    """
    callers = _callers(pm)
    if name is not None:
        caller = callers.get(name)
        return [] if caller is None else [_order(pm, name, caller)]
    return [_order(pm, hook, callers[hook]) for hook in sorted(callers)]


@attrs.frozen
class ToolInfo:
    """A registered tool: who owns it and whether it can be offered now."""

    name: str
    toolset: str
    owner: str
    available: bool
    reason: str | None
    description: str

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict."""
        return attrs.asdict(self)


def list_tools(pm: PluginManager) -> list[ToolInfo]:
    """Return every registered tool, sorted by name; the host's tools are owned by ``host``."""
    infos = []
    for entry in pm.tools.entries():
        tool = entry.value
        reason = pm.tools.unavailable_reason(entry.name)
        infos.append(
            ToolInfo(
                name=entry.name,
                toolset=tool.toolset,
                owner="host" if entry.owner == HOST else entry.owner,
                available=reason is None,
                reason=reason,
                description=tool.description,
            )
        )
    return sorted(infos, key=lambda info: info.name)


def registrations_of(pm: PluginManager, key: str) -> dict[str, list[str]]:
    """Return what plugin *key* registered: tools, commands, CLI commands, skills, providers."""
    found: dict[str, list[str]] = {
        "tools": pm.tools.names(owner=key),
        "commands": pm.commands.names(owner=key),
        "cli_commands": pm.cli_commands.names(owner=key),
        "skills": pm.skills.names(owner=key),
    }
    found["providers"] = [
        f"{family}:{name}"
        for family in extensions.family_names()
        for name in pm.backend(family).names(owner=key)
    ]
    return found

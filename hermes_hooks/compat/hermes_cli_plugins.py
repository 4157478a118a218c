"""Hermes' ``hermes_cli.plugins``: its public plugin-system names, as this project has them.

``PluginContext`` is this project's class (Hermes' method names; see the ``ctx`` reference;
Hermes' ``PluginContext(manifest, manager)`` call is accepted). ``PluginManager`` is this
project's manager with the views Hermes' callers read: ``_plugins`` (a ``LoadedPlugin`` per
discovered plugin), ``_plugin_commands``, ``_plugin_tool_names``, ``_middleware``,
``invoke_middleware``, ``has_middleware`` and ``_cli_ref``; ``list_plugins()`` items answer
``info["name"]`` as Hermes' dicts do. The views are read-only snapshots: writing into them
changes nothing (Hermes' private registries are not imitated).

``get_plugin_manager()`` is the manager a caller put in ``_plugin_manager``, else the one
loading or calling plugin code (a host's), else the newest manager of the current home, else
Hermes' per-home singleton, created on first use as Hermes creates it. ``invoke_hook``,
``invoke_middleware``, ``get_plugin_commands`` and the other module functions discover its
plugins first when that has not happened, as Hermes' do. The ``pre_tool_call``
and ``pre_verify`` directive helpers read the hook results as Hermes' do.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import attrs

from hermes_hooks.compat.current import current_home
from hermes_hooks.compat.tools_registry import seed_host_tools
from hermes_hooks.errors import PluginToolOverrideError
from hermes_hooks.plugins import active
from hermes_hooks.plugins.config import env_flag
from hermes_hooks.plugins.context import PluginContext
from hermes_hooks.plugins.discovery import ENTRY_POINT_GROUP
from hermes_hooks.plugins.manager import PluginManager as _PluginManager
from hermes_hooks.plugins.manifest import PluginManifest as _Manifest
from hermes_hooks.registries.base import HOST
from hermes_hooks.registries.middleware import KINDS, canonical_kind
from hermes_hooks.spec.hookspecs import VALID_HOOKS

__all__ = [
    "ENTRY_POINTS_GROUP",
    "VALID_HOOKS",
    "LoadedPlugin",
    "PluginContext",
    "PluginManager",
    "PluginManifest",
    "PluginToolOverrideError",
    "_reset_plugin_managers_for_tests",
    "clear_thread_tool_whitelist",
    "discover_plugins",
    "get_plugin_command_handler",
    "get_plugin_commands",
    "get_plugin_context_engine",
    "get_plugin_manager",
    "get_pre_tool_call_block_message",
    "get_pre_tool_call_directive",
    "get_pre_verify_continue_message",
    "has_hook",
    "has_middleware",
    "invoke_hook",
    "invoke_middleware",
    "resolve_plugin_command_result",
    "resolve_pre_tool_block",
    "set_thread_tool_whitelist",
]

ENTRY_POINTS_GROUP: Final = ENTRY_POINT_GROUP
"""The entry-point group of pip-installed plugins: ``hermes_agent.plugins``."""

logger = logging.getLogger(__name__)

# ``HERMES_PLUGINS_DEBUG=1`` tees this module's log to stderr at DEBUG, as Hermes' does (the
# manager's own discovery log, ``hermes_hooks``, has the same switch).
_PLUGINS_DEBUG = env_flag("HERMES_PLUGINS_DEBUG")
_DEBUG_HANDLER_INSTALLED = False


def _install_plugin_debug_handler(force: bool = False) -> None:
    """With ``HERMES_PLUGINS_DEBUG`` on, add one DEBUG stderr handler to this module's logger.

    :param force: read the variable again first (it is read once, at import).
    """
    global _DEBUG_HANDLER_INSTALLED, _PLUGINS_DEBUG
    if force:
        _PLUGINS_DEBUG = env_flag("HERMES_PLUGINS_DEBUG")
    if not _PLUGINS_DEBUG or _DEBUG_HANDLER_INSTALLED:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("[plugins] %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    _DEBUG_HANDLER_INSTALLED = True
    logger.debug("HERMES_PLUGINS_DEBUG=1: verbose plugin logging enabled")


_install_plugin_debug_handler()


@attrs.frozen(kw_only=True)
class PluginManifest(_Manifest):
    """Hermes' ``PluginManifest``: this project's manifest, and where the plugin came from.

    ``PluginManifest(name="x", source="user")`` as Hermes' tests build one.
    """

    source: str = "user"
    """``bundled``, ``user``, ``project`` or ``entrypoint``."""


@dataclass
class LoadedPlugin:
    """Hermes' record of one discovered plugin, as ``PluginManager._plugins`` holds it."""

    manifest: PluginManifest
    module: types.ModuleType | None = None
    tools_registered: list[str] = field(default_factory=list)
    hooks_registered: list[str] = field(default_factory=list)
    middleware_registered: list[str] = field(default_factory=list)
    commands_registered: list[str] = field(default_factory=list)
    enabled: bool = False
    error: str | None = None
    deferred: bool = False


# -- views of any of this project's managers, by Hermes' names --------------------------------


def _hermes_manifest(manifest: _Manifest | None, *, name: str, kind: str, source: str) -> Any:
    fields = {} if manifest is None else attrs.asdict(manifest, recurse=False)
    fields.update(name=fields.get("name") or name, kind=kind, source=source)
    return PluginManifest(**fields)


def loaded_plugins(manager: _PluginManager) -> dict[str, LoadedPlugin]:
    """Return Hermes' ``_plugins`` of ``manager``: a :class:`LoadedPlugin` per plugin, by key."""
    middleware: dict[str, list[str]] = {}
    for kind in KINDS:
        for entry in manager.middleware.entries(kind):
            kinds = middleware.setdefault(entry.owner, [])
            if kind not in kinds:
                kinds.append(kind)
    found: dict[str, LoadedPlugin] = {}
    for info in manager.list_plugins():
        enabled = info.status == "enabled"
        found[info.key] = LoadedPlugin(
            manifest=_hermes_manifest(
                manager.get_manifest(info.key), name=info.name, kind=info.kind, source=info.source
            ),
            module=manager.get_plugin_module(info.key) if enabled else None,
            tools_registered=list(info.tools),
            hooks_registered=list(info.hooks),
            middleware_registered=middleware.get(info.key, []),
            commands_registered=list(info.commands),
            enabled=enabled,
            error=_hermes_error(info),
        )
    return found


def _hermes_error(info: Any) -> str | None:
    """Why a plugin is not enabled, worded as Hermes' ``LoadedPlugin.error`` is."""
    if info.status == "enabled":
        return None
    if info.status == "disabled":
        return "disabled via config"
    if info.status == "not enabled":
        reason = info.reason or f"run `hermes plugins enable {info.key}` to activate"
        return reason if "not enabled" in reason else f"not enabled: {reason}"
    return str(info.error or info.reason or info.status)


def plugin_commands(manager: _PluginManager) -> dict[str, dict[str, Any]]:
    """Return Hermes' ``_plugin_commands``: ``{name: {handler, description, plugin,
    args_hint}}`` for the slash commands plugins registered."""
    commands: dict[str, dict[str, Any]] = {}
    for entry in manager.commands.entries():
        if entry.owner == HOST:
            continue
        command = entry.value
        commands[entry.name] = {
            # The plugin's own handler, as Hermes keeps it (the host calls it guarded).
            "handler": getattr(command.handler, "__wrapped__", command.handler),
            "description": command.description or "Plugin command",
            "plugin": entry.owner,
            "args_hint": command.args_hint,
        }
    return commands


def plugin_tool_names(manager: _PluginManager) -> set[str]:
    """Return Hermes' ``_plugin_tool_names``: the tools plugins registered."""
    return {entry.name for entry in manager.tools.entries() if entry.owner != HOST}


def middleware_by_kind(manager: Any) -> dict[str, list[Callable[..., Any]]]:
    """Return Hermes' ``_middleware`` of ``manager``: ``{kind: [callback, ...]}``."""
    registry = getattr(manager, "middleware", None)
    if registry is None or not hasattr(registry, "entries"):
        found: Mapping[str, list[Callable[..., Any]]] = getattr(manager, "_middleware", {}) or {}
        return {kind: list(callbacks) for kind, callbacks in found.items() if callbacks}
    return {
        kind: [entry.callback for entry in registry.entries(kind)]
        for kind in KINDS
        if registry.has(kind)
    }


def _middleware_of(manager: Any, kind: str) -> list[Callable[..., Any]]:
    try:
        name = canonical_kind(kind)
    except ValueError:
        name = kind
    return middleware_by_kind(manager).get(name, [])


def _invoke_middleware(manager: Any, kind: str, **kwargs: Any) -> list[Any]:
    """Call each middleware of ``kind`` with ``kwargs``; return the non-``None`` results.

    A failing one is skipped (and counted on its plugin, for this project's managers).
    """
    registry = getattr(manager, "middleware", None)
    callbacks: list[tuple[str | None, Callable[..., Any]]]
    if registry is None or not hasattr(registry, "entries"):
        callbacks = [(None, cb) for cb in _middleware_of(manager, kind)]
    else:
        try:
            callbacks = [(e.owner, e.callback) for e in registry.entries(kind)]
        except ValueError:
            callbacks = []
    results: list[Any] = []
    for owner, callback in callbacks:
        try:
            result = callback(**kwargs)
        except Exception as exc:
            if owner is not None:
                manager.count_failure(owner, f"middleware {kind!r}", repr(exc))
            logger.warning("middleware %r callback %r raised: %s", kind, callback, exc)
            continue
        if result is not None:
            results.append(result)
    return results


class PluginManager(_PluginManager):
    """This project's manager, with the views of it that Hermes' callers read.

    Takes this project's arguments; Hermes' own (``scope_key=``) are accepted and unused.
    """

    def __init__(
        self,
        hermes_home: Path | str | None = None,
        *,
        strict: bool = False,
        cwd: Path | None = None,
        **hermes_options: Any,
    ) -> None:
        super().__init__(hermes_home, strict=strict, cwd=cwd)
        seed_host_tools(self.tools)  # Hermes' tool registry is one per process
        self._cli_ref: Any = None
        """Hermes' interactive CLI object, when one runs (``ctx.dispatch_tool`` reads its
        ``agent``); ``None`` here, as in Hermes' gateway and workers."""

    @property
    def _plugins(self) -> dict[str, LoadedPlugin]:
        return loaded_plugins(self)

    @property
    def _plugin_commands(self) -> dict[str, dict[str, Any]]:
        return plugin_commands(self)

    @property
    def _plugin_tool_names(self) -> set[str]:
        return plugin_tool_names(self)

    @property
    def _middleware(self) -> dict[str, list[Callable[..., Any]]]:
        return middleware_by_kind(self)

    def dispatch_tool(
        self, tool_name: str, args: Mapping[str, Any] | str | None = None, **kwargs: Any
    ) -> str:
        """``ctx.dispatch_tool``, as Hermes runs it: through ``tools.registry.registry`` (looked
        up at each call), with ``parent_agent`` the CLI's agent when one runs and the caller
        gave none."""
        agent = getattr(self._cli_ref, "agent", None)
        if agent is not None and "parent_agent" not in kwargs:
            kwargs["parent_agent"] = agent
        from hermes_hooks.compat import tools_registry

        with self.activate():
            result: str = tools_registry.registry.dispatch(tool_name, args, **kwargs)
        return result

    def has_middleware(self, kind: str) -> bool:
        """Tell whether middleware of ``kind`` (an alias is accepted) is registered."""
        return bool(_middleware_of(self, kind))

    def invoke_middleware(self, kind: str, **kwargs: Any) -> list[Any]:
        """Call each middleware of ``kind`` with ``kwargs``; return the non-``None`` results."""
        return _invoke_middleware(self, kind, **kwargs)


# -- the manager Hermes' module functions answer for ------------------------------------------

_plugin_manager: _PluginManager | None = None
"""Hermes' singleton slot; a test may set it (``patch("hermes_cli.plugins._plugin_manager")``)."""
_plugin_managers_by_home: dict[str, _PluginManager] = {}
_plugin_managers_lock = threading.RLock()


def get_plugin_manager() -> _PluginManager:
    """Return the manager Hermes' module functions answer for.

    The one set in ``_plugin_manager`` by a caller, else the manager loading, activated for or
    calling plugin code (a host's), else the newest manager of the current home (the one
    ``tools.registry`` and the other Hermes modules answer for), else one created for the
    current home on first use (one per home, as Hermes keeps one per profile).
    """
    global _plugin_manager
    with _plugin_managers_lock:
        slot = _plugin_manager
        if slot is not None and slot not in _plugin_managers_by_home.values():
            return slot
    engaged = active.engaged_manager()
    if engaged is not None:
        return engaged
    home = str(current_home())
    for live in active.live_managers():  # the newest first
        if str(live.hermes_home) == home:
            return live  # the one the other Hermes modules answer for too
    with _plugin_managers_lock:
        manager = _plugin_managers_by_home.get(home)
        if manager is None:
            manager = PluginManager(home)
            _plugin_managers_by_home[home] = manager
        _plugin_manager = manager
        return manager


def _reset_plugin_managers_for_tests() -> None:
    """Hermes' test helper: unload every manager made for a home and empty the slots.

    A manager a caller put in ``_plugin_manager`` is unloaded too; a host's own managers (not
    made here) are left alone. The next module function discovers the plugins again.
    """
    global _plugin_manager
    with _plugin_managers_lock:
        managers = list(dict.fromkeys(_plugin_managers_by_home.values()))
        if _plugin_manager is not None and _plugin_manager not in managers:
            managers.append(_plugin_manager)
        _plugin_managers_by_home.clear()
        _plugin_manager = None
    for manager in managers:
        try:
            manager.unload_all()
        except Exception:  # a test's stand-in, or a plugin failing to unload: logged
            logger.debug("unloading a plugin manager for the tests failed", exc_info=True)


def _delivery_manager() -> Any:
    """The manager, its plugins discovered first when that has not happened yet."""
    manager = get_plugin_manager()
    if not getattr(manager, "_discovered", True):
        manager.discover_and_load()
    return manager


def discover_plugins(force: bool = False) -> None:
    """Discover and load the manager's plugins (again with ``force``)."""
    get_plugin_manager().discover_and_load(force=force)


def invoke_hook(hook_name: str, **kwargs: Any) -> list[Any]:
    """Call hook ``hook_name`` and return the non-``None`` results (plugins discovered first).

    ``telemetry_schema_version`` is stamped as Hermes stamps it; arguments left out are
    ``None``.
    """
    result: list[Any] = _delivery_manager().invoke_hook(hook_name, **kwargs)
    return result


def has_hook(hook_name: str) -> bool:
    """Tell whether a loaded plugin implements ``hook_name`` (plugins discovered first)."""
    return bool(_delivery_manager().has_hook(hook_name))


def has_middleware(kind: str) -> bool:
    """Tell whether middleware of ``kind`` is registered (an alias is accepted)."""
    return bool(_middleware_of(_delivery_manager(), kind))


def invoke_middleware(kind: str, **kwargs: Any) -> list[Any]:
    """Call each middleware of ``kind`` with ``kwargs``; return the non-``None`` results.

    A failing one is counted on its plugin and skipped, as Hermes skips it.
    """
    manager = _delivery_manager()
    method = getattr(manager, "invoke_middleware", None)
    if callable(method):
        return list(method(kind, **kwargs))
    return _invoke_middleware(manager, kind, **kwargs)


def _ensure_plugins_discovered(force: bool = False) -> Any:
    manager = get_plugin_manager()
    manager.discover_and_load(force=force)
    return manager


def get_plugin_commands() -> dict[str, dict[str, Any]]:
    """Return the plugins' slash commands, ``{name: {handler, description, plugin,
    args_hint}}``, after discovery."""
    manager = _ensure_plugins_discovered()
    found = getattr(manager, "_plugin_commands", None)
    return dict(found) if isinstance(found, Mapping) else plugin_commands(manager)


def get_plugin_command_handler(name: str) -> Callable[..., Any] | None:
    """Return the handler of plugin slash command ``name``, or ``None``."""
    entry = get_plugin_commands().get(name)
    return entry["handler"] if entry else None


def get_plugin_context_engine() -> Any:
    """Return the context engine a plugin registered, or ``None``."""
    manager = _ensure_plugins_discovered()
    try:
        registry = manager.backend("context_engine")
    except (KeyError, AttributeError):
        return None
    for name in registry.names():
        owner = registry.owner_of(name)
        if owner is not None and owner != HOST:
            return registry.get_provider(name)
    return None


# -- the pre_tool_call and pre_verify directives, as Hermes reads them --------------------------

_thread_tool_whitelist = threading.local()


@dataclass(frozen=True)
class _PreToolCallDirective:
    action: str | None = None
    message: str | None = None
    rule_key: str | None = None
    modified_args: dict[str, Any] | None = None


def set_thread_tool_whitelist(
    allowed: Iterable[str] | None,
    deny_msg_fmt: str = "Tool '{tool_name}' denied: not in this thread's tool whitelist",
) -> None:
    """Allow only ``allowed`` tools in this thread (``None``: all); others are blocked with
    ``deny_msg_fmt.format(tool_name=...)`` before any hook runs."""
    _thread_tool_whitelist.allowed = None if allowed is None else set(allowed)
    _thread_tool_whitelist.fmt = deny_msg_fmt


def clear_thread_tool_whitelist() -> None:
    """Lift this thread's tool whitelist."""
    _thread_tool_whitelist.allowed = None


def _directive_details(
    tool_name: str,
    args: Mapping[str, Any] | None,
    task_id: str = "",
    session_id: str = "",
    tool_call_id: str = "",
    turn_id: str = "",
    api_request_id: str = "",
    middleware_trace: list[dict[str, Any]] | None = None,
) -> _PreToolCallDirective:
    allowed = getattr(_thread_tool_whitelist, "allowed", None)
    if allowed is not None and tool_name not in allowed:
        fmt = getattr(_thread_tool_whitelist, "fmt", "Tool '{tool_name}' denied")
        return _PreToolCallDirective(action="block", message=fmt.format(tool_name=tool_name))
    payload = dict(args) if isinstance(args, Mapping) else {}
    results = invoke_hook(
        "pre_tool_call",
        tool_name=tool_name,
        args=payload,
        task_id=task_id,
        session_id=session_id,
        tool_call_id=tool_call_id,
        turn_id=turn_id,
        api_request_id=api_request_id,
        middleware_trace=list(middleware_trace or []),
    )
    modified: dict[str, Any] | None = None
    for result in results:
        if not isinstance(result, dict):
            continue
        action = result.get("action")
        if action == "modify":
            partial = result.get("args")
            if isinstance(partial, dict) and partial:
                modified = {**(modified if modified is not None else payload), **partial}
            continue
        if action not in ("block", "approve"):
            continue
        message = result.get("message")
        message = message if isinstance(message, str) and message else None
        if action == "block" and not message:
            continue  # a block needs its message: it becomes the tool's result
        rule_key = result.get("rule_key") if action == "approve" else None
        rule_key = (rule_key.strip() or None) if isinstance(rule_key, str) else None
        return _PreToolCallDirective(action, message, rule_key, modified)
    return _PreToolCallDirective(modified_args=modified)


def get_pre_tool_call_directive(
    tool_name: str, args: Mapping[str, Any] | None, **hook_kwargs: Any
) -> tuple[str | None, str | None]:
    """Return ``(directive, message)`` of the first valid ``pre_tool_call`` directive:
    ``("block", message)``, ``("approve", message or None)``, or ``(None, None)``."""
    details = _directive_details(tool_name, args, **hook_kwargs)
    return details.action, details.message


def get_pre_tool_call_block_message(
    tool_name: str, args: Mapping[str, Any] | None, **hook_kwargs: Any
) -> str | None:
    """Return the message of a ``block`` directive, or ``None`` (``approve`` is not seen)."""
    directive, message = get_pre_tool_call_directive(tool_name, args, **hook_kwargs)
    return message if directive == "block" else None


def resolve_pre_tool_block(
    tool_name: str, args: Mapping[str, Any] | None, **hook_kwargs: Any
) -> str | None:
    """Resolve the ``pre_tool_call`` directive to a block message, or ``None`` to proceed.

    ``approve`` asks the approval gate (``tools.approval.request_tool_approval``, with the
    directive's ``rule_key`` or the tool's name); a gate that fails, denies or times out
    blocks (fail closed).
    """
    details = _directive_details(tool_name, args, **hook_kwargs)
    if details.action == "block":
        return details.message
    if details.action != "approve":
        return None
    try:
        from tools.approval import request_tool_approval

        result = request_tool_approval(
            tool_name, details.message or "", rule_key=details.rule_key or tool_name
        )
    except Exception:
        return f"BLOCKED: plugin approval gate failed for {tool_name}"
    if not result.get("approved"):
        return str(result.get("message") or f"BLOCKED: plugin approval required for {tool_name}")
    return None


def get_pre_verify_continue_message(
    *,
    session_id: str = "",
    platform: str = "",
    model: str = "",
    coding: bool = False,
    attempt: int = 0,
    final_response: str = "",
    changed_paths: list[str] | None = None,
) -> str | None:
    """Return the first ``pre_verify`` message that keeps the turn going, or ``None``.

    ``{"action": "continue", "message": ...}``, or Claude Code's Stop form ``{"decision":
    "block", "reason": ...}``; the message is trimmed and must not be blank.
    """
    results = invoke_hook(
        "pre_verify",
        session_id=session_id,
        platform=platform,
        model=model,
        coding=coding,
        attempt=attempt,
        final_response=final_response,
        changed_paths=list(changed_paths or []),
    )
    for result in results:
        if not isinstance(result, dict):
            continue
        action = str(result.get("action") or result.get("decision") or "").strip().lower()
        message = result.get("message") or result.get("reason")
        if action in ("continue", "block") and isinstance(message, str) and message.strip():
            return message.strip()
    return None


# -- plugin commands' results --------------------------------------------------------------------

_PLUGIN_COMMAND_AWAIT_TIMEOUT_SECS = 30.0


def resolve_plugin_command_result(result: Any) -> Any:
    """Return a slash command handler's result, awaiting it when it is awaitable.

    With no event loop running it is run with ``asyncio.run``; inside a running loop, on a
    helper thread with its own loop, for at most ``_PLUGIN_COMMAND_AWAIT_TIMEOUT_SECS``.

    :raises TimeoutError: the handler did not finish in time.
    """
    if not inspect.isawaitable(result):
        return result
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(result))
    outcome: dict[str, Any] = {}
    failure: dict[str, BaseException] = {}
    done = threading.Event()

    def runner() -> None:
        try:
            outcome["value"] = asyncio.run(_awaited(result))
        except BaseException as exc:  # raised again in the caller's thread
            failure["exc"] = exc
        finally:
            done.set()

    context = contextvars.copy_context()
    threading.Thread(
        target=context.run, args=(runner,), name="hermes-plugin-command-await", daemon=True
    ).start()
    if not done.wait(timeout=_PLUGIN_COMMAND_AWAIT_TIMEOUT_SECS):
        raise TimeoutError(
            f"plugin command async handler did not complete within "
            f"{_PLUGIN_COMMAND_AWAIT_TIMEOUT_SECS:g}s"
        )
    if "exc" in failure:
        raise failure["exc"]
    return outcome.get("value")


async def _awaited(awaitable: Any) -> Any:
    return await awaitable

"""``PluginContext``: the per-plugin facade handed to ``register(ctx)``.

Everything a plugin registers through its context is recorded as owned by that plugin, so it
is listed on the plugin's status and removed again when the plugin fails or is unloaded.

A registration that is refused (a built-in command name, a ``:`` in a skill name, a bad
schema, a name another plugin owns) refuses that entry alone, as Hermes does: the call
returns ``None``, a warning goes on the plugin's status and the rest of the plugin loads. In
strict mode the refusal raises. Replacing a host tool without the operator's grant is a
safety gate, not a refusal: it still fails the plugin.
"""

from __future__ import annotations

import argparse
import functools
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from hermes_hooks.errors import PluginToolOverrideError, RegistrationError
from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.newer_ctx import NewerContextMembers
from hermes_hooks.registries.base import Handle

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager
    from hermes_hooks.plugins.manifest import PluginManifest

__all__ = ["PluginContext"]

logger = logging.getLogger(__name__)

_MISSING: Final = object()
_R = TypeVar("_R")
_SETTING_SEGMENT: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_RESERVED_ROOTS: Final = frozenset({"model", "plugins", "security", "settings"})


class PluginContext(NewerContextMembers):
    """What a plugin's ``register(ctx)`` receives.

    The members Hermes added since the seeds (``set_config``, ``state``, ``emit``...) come
    from :class:`~hermes_hooks.plugins.newer_ctx.NewerContextMembers`.

    :param manager: the manager loading the plugin.
    :param plugin_id: the plugin's key (``name`` or ``category/name``).
    :param manifest: the plugin's manifest.
    :param path: the plugin folder (the entry point package's folder for pip plugins).

    Hermes' own call, ``PluginContext(manifest, manager)`` (or by keyword), is accepted too, as
    Hermes' tests and tools build one: the key is then the manifest's (``key``, else ``name``)
    and the folder the manifest file's.
    """

    def __init__(
        self,
        manager: PluginManager | PluginManifest,
        plugin_id: str | PluginManager | None = None,
        manifest: PluginManifest | None = None,
        path: Path | None = None,
    ) -> None:
        from hermes_hooks.plugins.manager import PluginManager as _Manager
        from hermes_hooks.plugins.manifest import PluginManifest as _Manifest

        if isinstance(manager, _Manifest):  # Hermes' order: PluginContext(manifest, manager)
            manager, plugin_id, manifest = plugin_id, None, manager  # type: ignore[assignment]
        if not isinstance(manager, _Manager) or manifest is None:
            raise TypeError(
                "PluginContext(manager, plugin_id, manifest, path) or Hermes' "
                f"PluginContext(manifest, manager): found manager {manager!r}, "
                f"manifest {manifest!r}"
            )
        if not isinstance(plugin_id, str):
            plugin_id = str(getattr(manifest, "key", "") or manifest.name)
            if path is None and manifest.path is not None:
                path = manifest.path.parent
        self._manager = manager
        self._plugin_id = plugin_id
        self.manifest = manifest
        self.path = path
        self._revoked = False

    def __repr__(self) -> str:
        state = " (revoked)" if self._revoked else ""
        return f"<PluginContext {self._plugin_id!r}{state}>"

    # -- life cycle -----------------------------------------------------------------------------

    def revoke(self) -> None:
        """End this context: every later ``register_*`` call through it is refused.

        The manager calls it when the plugin fails to load or is unloaded, so that a plugin
        keeping its ``ctx`` (in a thread, a closure, a hook) cannot register again through it,
        and ``inject_message`` through it returns ``False``.
        """
        self._revoked = True

    @property
    def is_active(self) -> bool:
        """Whether registrations through this context are still accepted."""
        return not self._revoked

    def _check_active(self, what: str, name: object) -> None:
        if self._revoked:
            raise RegistrationError(
                f"plugin {self._plugin_id!r} is not enabled (it failed to load or was "
                f"unloaded): its {what} {name!r} is refused"
            )

    def _refusable(self, what: str, name: object, register: Callable[[], _R]) -> _R | None:
        """Run one registration; a refusal refuses that entry alone (see the module's docstring).

        :raises PluginToolOverrideError: a host tool without the operator's grant.
        :raises RegistrationError: in strict mode, for any refusal.
        """
        try:
            return register()
        except PluginToolOverrideError:
            raise
        except (RegistrationError, ValueError) as exc:
            if self._manager.strict:
                raise
            message = f"{what} {name!r} refused: {exc}"
            self._manager.add_warning(self._plugin_id, message)
            logger.warning("plugin %r: %s; the rest of the plugin loads", self._plugin_id, message)
            return None

    @property
    def plugin_id(self) -> str:
        """The plugin's key: the registry id its entries are recorded under."""
        return self._plugin_id

    @property
    def hermes_home(self) -> Path:
        """The Hermes home folder of the host (where a plugin keeps its own files)."""
        return self._manager.hermes_home

    # -- hooks ----------------------------------------------------------------------------------

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None:
        """Register ``callback`` for hook ``name`` as a real pluggy hookimpl of this plugin.

        The callback receives only the hook arguments its signature names, or all of them if
        it takes ``**kwargs``. An unknown hook name is kept (and warned about once, with the
        closest known names), so that a plugin written for a newer host still loads.

        A callback that is not callable, or that requires an argument the hook does not pass,
        is refused alone (a warning on the plugin's status; strict mode raises
        :class:`RegistrationError`).
        """
        self._check_active("hook", hook_name)

        def add() -> None:
            if not isinstance(hook_name, str) or not hook_name:
                raise RegistrationError(
                    f"plugin {self._plugin_id!r}: hook name must be a non-empty string, "
                    f"found {hook_name!r}"
                )
            if not callable(callback):
                raise RegistrationError(
                    f"plugin {self._plugin_id!r}: callback for hook {hook_name!r} must be "
                    f"callable, found {type(callback).__name__}"
                )
            self._manager._add_hook_callback(self._plugin_id, hook_name, callback)

        self._refusable("hook", hook_name, add)

    def register_middleware(self, kind: str, callback: Callable[..., Any]) -> None:
        """Register middleware of ``kind``: ``tool_request``, ``tool_execution``,
        ``llm_request`` or ``llm_execution`` (``api_request``/``api_execution`` are aliases),
        as Hermes' ``ctx.register_middleware``.

        Request middleware returns ``{"args": ...}`` / ``{"request": ...}`` to replace the
        payload; execution middleware receives ``next_call`` (see
        :mod:`hermes_hooks.registries.middleware`). An unknown kind is refused alone (a warning on
        the plugin's status; strict mode raises :class:`RegistrationError`).
        """
        self._check_active("middleware", kind)

        def add() -> None:
            self._manager.middleware.add(self._plugin_id, kind, callback)

        self._refusable("middleware", kind, add)

    # -- tools, commands, skills ---------------------------------------------------------------

    def register_tool(
        self,
        name: str,
        toolset: str,
        schema: Mapping[str, Any],
        handler: Callable[..., Any],
        check_fn: Callable[[], Any] | None = None,
        requires_env: Iterable[str] | str | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        override: bool = False,
    ) -> Handle | None:
        """Register a tool the model may call: ``handler(args: dict, **kwargs) -> str``.

        A handler or ``check_fn`` that raises, or a handler result that is not a string, counts
        on this plugin's status (``hook_errors``, ``last_hook_error``); ``SystemExit`` from them
        is raised as :class:`~hermes_hooks.errors.PluginExitError`, so the call fails, not the
        host.

        :param override: ask to replace a host tool of the same name; the operator must also
            grant it with ``plugins.entries.<id>.allow_tool_override: true``.
        :returns: the handle, or ``None`` when the tool was refused (the name belongs to
            another plugin, or a bad argument such as a schema that is not an object).
        :raises PluginToolOverrideError: a host tool name without both permissions; this fails
            the plugin.
        :raises RegistrationError: the plugin failed to load or was unloaded (every
            ``register_*`` call refuses then), or a refusal in strict mode.
        """
        self._check_active("tool", name)
        if self._manager.strict and isinstance(schema, Mapping):
            from hermes_hooks.registries.schemas import schema_problem

            problem = schema_problem(schema)
            if problem is not None:
                raise RegistrationError(
                    f"plugin {self._plugin_id!r}: tool {name!r} has a schema that is not a valid "
                    f"JSON Schema (strict mode refuses it): {problem}"
                )
        return self._refusable(
            "tool",
            name,
            lambda: self._manager.tools.register_tool(
                name,
                toolset,
                schema,
                handler,
                check_fn=check_fn,
                requires_env=requires_env,
                is_async=is_async,
                description=description,
                emoji=emoji,
                override=override,
                owner=self._plugin_id,
            ),
        )

    def register_command(
        self,
        name: str,
        handler: Callable[..., Any],
        description: str = "",
        args_hint: str = "",
        argument_mode: str | None = None,
    ) -> Handle | None:
        """Register a slash command ``/name``; ``handler(raw_args: str)`` returns the reply.

        The name is lower-cased, a leading ``/`` dropped and spaces turned into ``-``. A handler
        that raises counts on this plugin's status, as for tools.

        :returns: the handle, or ``None`` when the name was refused (invalid, a host built-in,
            or another plugin's): "register_command() will reject the name", as Hermes says.
        """
        self._check_active("slash command", name)
        return self._refusable(
            "slash command",
            name,
            lambda: self._manager.commands.register_command(
                name,
                handler,
                description=description,
                args_hint=args_hint,
                argument_mode=argument_mode,
                owner=self._plugin_id,
            ),
        )

    def register_cli_command(
        self,
        name: str,
        help: str,
        setup_fn: Callable[[argparse.ArgumentParser], Any],
        handler_fn: Callable[[argparse.Namespace], Any] | None = None,
        description: str = "",
    ) -> Handle | None:
        """Register ``hermes name``: ``setup_fn(parser)`` declares, ``handler_fn(args)`` runs.

        :returns: the handle, or ``None`` when the name was refused (invalid, a built-in
            command, or another plugin's).
        """
        self._check_active("CLI command", name)
        return self._refusable(
            "CLI command",
            name,
            lambda: self._manager.cli_commands.register_cli_command(
                name, help, setup_fn, handler_fn, description=description, owner=self._plugin_id
            ),
        )

    def register_skill(
        self,
        name: str,
        path: str | Path,
        description: str = "",
        frontmatter: Mapping[str, Any] | None = None,
    ) -> Handle | None:
        """Register a skill file shipped in the plugin folder, found as ``<plugin>:<name>``.

        :param path: relative to the plugin folder, or absolute; it must stay inside the folder.
        :returns: the handle, or ``None`` when the skill was refused: a ``name`` with ``:`` or
            characters other than ``[A-Za-z0-9_-]``, a path that leaves the plugin folder or
            does not exist. Strict mode raises ``ValueError``, or ``RegistrationError``
            (:class:`~hermes_hooks.registries.skills.SkillNotFoundError`, also a
            ``FileNotFoundError``, for a missing file).
        """
        self._check_active("skill", name)
        return self._refusable(
            "skill",
            name,
            lambda: self._manager.skills.register_skill(
                self.manifest.name,
                name,
                path,
                root=self.path,
                description=description,
                frontmatter=frontmatter,
                owner=self._plugin_id,
            ),
        )

    def dispatch_tool(
        self, tool_name: str, args: Mapping[str, Any] | str | None = None, **kwargs: Any
    ) -> str:
        """Call any registered tool by name, as the model would; never raises.

        :returns: the tool's string result, or a JSON ``{"error": ...}`` object.
        """
        return self._manager.dispatch_tool(tool_name, args, **kwargs)

    def call_mcp(
        self,
        server: str,
        tool: str,
        arguments: Mapping[str, Any] | None = None,
        timeout: float = 30,
    ) -> dict[str, Any]:
        """Call ``tool`` (its own, unprefixed name) of MCP server ``server``; synchronous.

        As in Hermes: no plugin may reach a server the operator has not listed under
        ``plugins.entries.<plugin_id>.mcp_allowlist`` (default deny); ``timeout`` is clamped
        to 1..600 s; the answer is ``{"ok": True, "result": ...}`` (with
        ``structuredContent`` when given) or ``{"ok": False, "error": ...}``, and a result
        over 64 KiB is cut, with ``"truncated": True``. The call does not pass through
        ``pre_tool_call`` (it is the plugin's, not the model's).

        :raises PermissionError: ``server`` is not in this plugin's ``mcp_allowlist``.
        """
        self._check_active("MCP call to", server)
        caller = extensions.mcp_caller()
        if caller is None:
            return {"ok": False, "error": "this host has no MCP client"}
        result: dict[str, Any] = caller(
            self._manager, self._plugin_id, server, tool, arguments, timeout
        )
        return result

    @property
    def llm(self) -> Any:
        """Model calls for this plugin on the host's active model: ``ctx.llm.complete(...)``.

        Served by the models family (:mod:`hermes_hooks.backends.models.plugin_llm`). Choosing
        another provider or model needs the operator's grant in ``plugins.entries.<id>.llm``
        (else ``PluginLlmTrustError``).
        """
        return self._family_attribute("llm")

    # -- provider families ------------------------------------------------------------------

    def _family_attribute(self, name: str) -> object:
        builder = extensions.find_context_attribute(name)
        if builder is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return builder(self._manager, self._plugin_id)

    def register_provider_of(self, family: str, provider: object) -> Handle | None:
        """Register ``provider`` in provider family ``family`` (``image_gen``) for this plugin.

        What each ``ctx.register_<family>_provider(provider)`` method does: a provider
        registered again under the same ``name`` replaces the earlier one (last writer wins,
        so a user plugin can override a bundled one); config (``image_gen.provider``)
        chooses which provider serves the family's tools.

        :returns: the handle, or ``None`` when the provider was refused (not an instance of
            the family's ABC, an invalid name), as Hermes warns and ignores it.
        """
        name = _provider_name(provider)
        self._check_active(f"{family} provider", name)

        def register() -> Handle:
            try:
                registry = self._manager.backend(family)
            except KeyError as exc:
                raise RegistrationError(f"plugin {self._plugin_id!r}: {exc.args[0]}") from None
            handle: Handle = registry.register_provider(provider, owner=self._plugin_id)
            return handle

        return self._refusable(f"{family} provider", name, register)

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: register_<family>_provider and the
        # attributes families add (ctx.llm) come from the families at the extension point.
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        family = extensions.find_context_method(name)
        if family is not None:
            return functools.partial(self.register_provider_of, family.name)
        return self._family_attribute(name)

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        for family in extensions.families():
            if family.ctx_method:
                names.add(family.ctx_method)
            names.update(family.context_attributes)
        return sorted(names)

    # -- gateway platforms, other plugins, life cycle -------------------------------------------

    def register_platform(
        self,
        name: str,
        label: str,
        adapter_factory: Callable[..., Any],
        check_fn: Callable[[], Any],
        validate_config: Callable[..., Any] | None = None,
        required_env: list[str] | None = None,
        install_hint: str = "",
        **entry_kwargs: Any,
    ) -> Handle | None:
        """Register a gateway platform adapter (``kind: platform`` plugins), as Hermes takes it.

        ``hermes gateway run`` builds the adapter through ``adapter_factory`` when the
        platform is enabled; the platform is removed when this plugin unloads.

        :param entry_kwargs: Hermes' further ``PlatformEntry`` fields (``setup_fn``,
            ``ensure_deps_fn``, ``allowed_users_env``, ``allow_all_env``, ``emoji``,
            ``max_message_length``, ``platform_hint``...).
        :returns: the handle, or ``None`` when refused (a factory that is not callable, a
            name another plugin registered).
        """
        self._check_active("platform", name)
        registry = self._manager.platforms

        def register() -> Handle:
            handle = registry.register_platform(
                name,
                label,
                adapter_factory,
                check_fn,
                validate_config=validate_config,
                required_env=required_env,
                install_hint=install_hint,
                owner=self._plugin_id,
                **entry_kwargs,
            )
            self._manager.add_platform(self._plugin_id, handle.name)
            return handle

        return self._refusable("platform", name, register)

    def has_plugin(self, plugin_id: str) -> bool:
        """Return whether another plugin is loaded, by key or manifest name (Hermes' probe for
        advisory ``requires_plugins``)."""
        return any(
            info.status == "enabled" and plugin_id in (info.key, info.name)
            for info in self._manager.list_plugins()
        )

    def on_unload(self, callback: Callable[[], Any]) -> Handle:
        """Run ``callback()`` when this plugin is unloaded or fails to load (latest first).

        A callback that raises is logged, never propagated.

        :raises TypeError: ``callback`` is not callable.
        """
        self._check_active("on_unload callback", getattr(callback, "__name__", callback))
        if not callable(callback):
            raise TypeError(f"plugin {self._plugin_id!r}: on_unload callback must be callable")
        return self._manager.add_unload_callback(self._plugin_id, callback)

    @property
    def profile_name(self) -> str:
        """The Hermes profile of the home: ``default`` (``~/.hermes``), the ``<name>`` of
        ``.../profiles/<name>``, else ``custom``."""
        home = self._manager.hermes_home
        if home == (Path.home() / ".hermes").absolute():
            return "default"
        if home.parent.name == "profiles" and not home.name.startswith("."):
            return home.name
        return "custom"

    # -- messages and settings -----------------------------------------------------------------

    def inject_message(
        self, content: str, role: str = "user", *, session_key: str | None = None
    ) -> bool:
        """Queue a message into the running session; never raises.

        Without ``session_key`` the host's ``pm.message_sink(content, role)`` receives it.
        With one (Hermes' gateway injection), the running gateway's ``pm.gateway_injector``
        gets ``session_key``, ``content`` (a role other than ``user`` as a ``[role] `` prefix)
        and ``plugin_id``: the message becomes a turn of that session, answered in its chat.
        That needs the operator's grant, ``plugins.entries.<id>.allow_gateway_injection: true``
        (a real boolean, as in Hermes).

        :returns: ``False`` when no session is running, the sink or injector fails or refuses,
            the grant is missing or the plugin was unloaded, else what the host answers.
        """
        if self._revoked:
            logger.debug("plugin %r: inject_message through a revoked context", self._plugin_id)
            return False
        if session_key is not None:
            return self._inject_into_gateway(content, role, session_key)
        sink = self._manager.message_sink
        if sink is None:
            logger.debug("plugin %r: inject_message with no running session", self._plugin_id)
            return False
        try:
            return bool(sink(content, role))
        except Exception:
            logger.warning(
                "plugin %r: inject_message failed in the host's message sink",
                self._plugin_id,
                exc_info=True,
            )
            return False

    def _gateway_injection_granted(self) -> bool:
        entry = self._manager.plugins_config.entry(self._plugin_id)
        return entry.get("allow_gateway_injection") is True

    def gateway_message_injection_available(self) -> bool:
        """Whether ``inject_message(session_key=...)`` can work here now: a gateway runs in
        this process and the operator granted ``allow_gateway_injection``."""
        if self._revoked or self._manager.gateway_injector is None:
            return False
        return self._gateway_injection_granted()

    def _inject_into_gateway(self, content: str, role: str, session_key: str) -> bool:
        injector = self._manager.gateway_injector
        if injector is None:
            logger.debug("plugin %r: inject_message(session_key) with no gateway", self._plugin_id)
            return False
        if not self._gateway_injection_granted():
            logger.warning(
                "plugin %r: inject_message(session_key=...) refused: set "
                "plugins.entries.%s.allow_gateway_injection: true to allow it",
                self._plugin_id,
                self._plugin_id,
            )
            return False
        message = content if role == "user" else f"[{role}] {content}"
        try:
            return bool(
                injector(session_key=session_key, content=message, plugin_id=self._plugin_id)
            )
        except Exception:
            logger.warning(
                "plugin %r: inject_message failed in the gateway", self._plugin_id, exc_info=True
            )
            return False

    def get_config(self, key: str, default: Any = None) -> Any:
        """Return ``plugins.entries.<plugin_id>.settings.<key>`` or ``default``.

        ``key`` is dotted (``retry.policy``). As in Hermes, the legacy ``config`` subtree of the
        entry is read when ``settings`` lacks the key. Values are those read by the manager's
        last ``discover_and_load()`` or ``reload_config()``.

        :raises ValueError: ``key`` is not a plugin-relative key: empty, with ``/`` or ``\\``, a
            segment outside ``[A-Za-z0-9][A-Za-z0-9_-]*``, or starting with a reserved root
            (``model``, ``plugins``, ``security``, ``settings``).
        """
        segments = _config_segments(key, self._plugin_id)
        entry = self._manager.plugins_config.entry(self._plugin_id)
        value = _lookup(entry.get("settings"), segments)
        if value is _MISSING:
            value = _lookup(entry.get("config"), segments)
        return default if value is _MISSING else value


def _provider_name(provider: object) -> object:
    """Name a provider for messages without trusting its ``name`` property."""
    if isinstance(provider, type):
        return provider.__name__
    try:
        return getattr(provider, "name", type(provider).__name__)
    except Exception:
        return type(provider).__name__


def _config_segments(key: object, plugin_id: str) -> tuple[str, ...]:
    """Split a plugin-relative settings key, refusing paths that reach outside the plugin."""
    segments = tuple(key.split(".")) if isinstance(key, str) else ()
    if (
        not segments
        or not all(_SETTING_SEGMENT.match(part) for part in segments)
        or segments[0].lower() in _RESERVED_ROOTS
    ):
        raise ValueError(
            f"plugin {plugin_id!r}: config key {key!r} is invalid: expected a plugin-relative "
            f"key such as 'endpoint' or 'retry.policy' (segments of letters, digits, '_' or "
            f"'-', not starting with {', '.join(sorted(_RESERVED_ROOTS))})"
        )
    return segments


def _lookup(node: object, segments: tuple[str, ...]) -> object:
    for part in segments:
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node

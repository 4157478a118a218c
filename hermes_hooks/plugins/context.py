"""``PluginContext``: the per-plugin facade handed to ``register(ctx)``.

Everything a plugin registers through its context is recorded as owned by that plugin, so it
is listed on the plugin's status and removed again when the plugin fails or is unloaded.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.calling import aio
from hermes_hooks.errors import PluginExitError, RegistrationError
from hermes_hooks.plugins import extensions
from hermes_hooks.registries.base import Handle

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager
    from hermes_hooks.plugins.manifest import PluginManifest

__all__ = ["PluginContext"]

logger = logging.getLogger(__name__)

_MISSING: Final = object()
_SETTING_SEGMENT: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_RESERVED_ROOTS: Final = frozenset({"model", "plugins", "security", "settings"})
# Never turned into a failed call: the person pressed Ctrl-C, the task is being cancelled, or
# a coroutine is being closed. Looked up only once something was raised, so that asyncio is
# not imported for its CancelledError (see aio.pass_through).


def _pass_through() -> tuple[type[BaseException], ...]:
    return (GeneratorExit, *aio.pass_through())


class PluginContext:
    """What a plugin's ``register(ctx)`` receives.

    :param manager: the manager loading the plugin.
    :param plugin_id: the plugin's key (``name`` or ``category/name``).
    :param manifest: the plugin's manifest.
    :param path: the plugin folder (the entry point package's folder for pip plugins).
    """

    def __init__(
        self,
        manager: PluginManager,
        plugin_id: str,
        manifest: PluginManifest,
        path: Path | None,
    ) -> None:
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

    def _guard_handler(
        self, where: str, handler: Callable[..., Any], *, wants_str: bool = False
    ) -> Callable[..., Any]:
        """Wrap a handler so that its failures count on this plugin and never stop the host.

        An ``Exception`` is counted and raised again for the caller to report (the tool
        registry and slash commands turn it into an error reply); ``SystemExit`` and other
        ``BaseException``s are counted and raised as :class:`PluginExitError`. With
        ``wants_str``, a result that is not a string is counted too (the caller refuses it).
        Coroutines are guarded when they are awaited.
        """
        manager, key = self._manager, self._plugin_id

        def failed(exc: BaseException) -> BaseException:
            text = str(exc)
            manager.count_failure(
                key, where, f"{type(exc).__name__}: {text}" if text else type(exc).__name__
            )
            if isinstance(exc, Exception):
                return exc
            return PluginExitError(
                f"plugin {key!r}: {where} raised {type(exc).__name__}({text}); "
                f"the host keeps running"
            )

        def check(result: object) -> object:
            if wants_str and not isinstance(result, str):
                manager.count_failure(
                    key, where, f"returned {type(result).__name__}, expected a string"
                )
            return result

        async def awaited(pending: Any) -> object:
            try:
                result = await pending
            except _pass_through():
                raise
            except BaseException as exc:
                error = failed(exc)
                if error is exc:
                    raise
                raise error from exc
            return check(result)

        @functools.wraps(handler)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                result = handler(*args, **kwargs)
            except _pass_through():
                raise
            except BaseException as exc:
                error = failed(exc)
                if error is exc:
                    raise
                raise error from exc
            if inspect.isawaitable(result):
                return awaited(result)
            return check(result)

        return guarded

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

        :raises RegistrationError: ``callback`` is not callable, or it requires an argument
            the hook does not pass.
        """
        self._check_active("hook", hook_name)
        if not isinstance(hook_name, str) or not hook_name:
            raise RegistrationError(
                f"plugin {self._plugin_id!r}: hook name must be a non-empty string, "
                f"found {hook_name!r}"
            )
        if not callable(callback):
            raise RegistrationError(
                f"plugin {self._plugin_id!r}: callback for hook {hook_name!r} must be callable, "
                f"found {type(callback).__name__}"
            )
        self._manager._add_hook_callback(self._plugin_id, hook_name, callback)

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
    ) -> Handle:
        """Register a tool the model may call: ``handler(args: dict, **kwargs) -> str``.

        A handler or ``check_fn`` that raises, or a handler result that is not a string, counts
        on this plugin's status (``hook_errors``, ``last_hook_error``); ``SystemExit`` from them
        is raised as :class:`~hermes_hooks.errors.PluginExitError`, so the call fails, not the
        host.

        :param override: ask to replace a host tool of the same name; the operator must also
            grant it with ``plugins.entries.<id>.allow_tool_override: true``.
        :raises PluginToolOverrideError: a host tool name without both permissions.
        :raises RegistrationError: the name belongs to another plugin, an argument is bad, or
            the plugin failed to load or was unloaded (every ``register_*`` call refuses then).
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
        if callable(handler):
            handler = self._guard_handler(f"tool {name!r}", handler, wants_str=True)
        if callable(check_fn):
            check_fn = self._guard_handler(f"tool {name!r} check_fn", check_fn)
        return self._manager.tools.register_tool(
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
        )

    def register_command(
        self,
        name: str,
        handler: Callable[..., Any],
        description: str = "",
        args_hint: str = "",
        argument_mode: str | None = None,
    ) -> Handle:
        """Register a slash command ``/name``; ``handler(raw_args: str)`` returns the reply.

        The name is lower-cased, a leading ``/`` dropped and spaces turned into ``-``. A handler
        that raises counts on this plugin's status, as for tools.

        :raises RegistrationError: the name is invalid, a host built-in or another plugin's.
        """
        self._check_active("slash command", name)
        if callable(handler):
            handler = self._guard_handler(f"command '/{name}'", handler)
        return self._manager.commands.register_command(
            name,
            handler,
            description=description,
            args_hint=args_hint,
            argument_mode=argument_mode,
            owner=self._plugin_id,
        )

    def register_cli_command(
        self,
        name: str,
        help: str,
        setup_fn: Callable[[argparse.ArgumentParser], Any],
        handler_fn: Callable[[argparse.Namespace], Any] | None = None,
        description: str = "",
    ) -> Handle:
        """Register ``hermes name``: ``setup_fn(parser)`` declares, ``handler_fn(args)`` runs.

        :raises RegistrationError: the name is invalid, a built-in command or another plugin's.
        """
        self._check_active("CLI command", name)
        return self._manager.cli_commands.register_cli_command(
            name, help, setup_fn, handler_fn, description=description, owner=self._plugin_id
        )

    def register_skill(
        self,
        name: str,
        path: str | Path,
        description: str = "",
        frontmatter: Mapping[str, Any] | None = None,
    ) -> Handle:
        """Register a skill file shipped in the plugin folder, found as ``<plugin>:<name>``.

        :param path: relative to the plugin folder, or absolute; it must stay inside the folder.
        :raises ValueError: ``name`` contains ``:`` or characters other than ``[A-Za-z0-9_-]``.
        :raises RegistrationError: the path leaves the plugin folder, or does not exist
            (:class:`~hermes_hooks.registries.skills.SkillNotFoundError`, also a
            ``FileNotFoundError``).
        """
        self._check_active("skill", name)
        return self._manager.skills.register_skill(
            self.manifest.name,
            name,
            path,
            root=self.path,
            description=description,
            frontmatter=frontmatter,
            owner=self._plugin_id,
        )

    def dispatch_tool(
        self, tool_name: str, args: Mapping[str, Any] | str | None = None, **kwargs: Any
    ) -> str:
        """Call any registered tool by name, as the model would; never raises.

        :returns: the tool's string result, or a JSON ``{"error": ...}`` object.
        """
        return self._manager.tools.dispatch(tool_name, args, **kwargs)

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

    def register_provider_of(self, family: str, provider: object) -> Handle:
        """Register ``provider`` in provider family ``family`` (``image_gen``) for this plugin.

        What each ``ctx.register_<family>_provider(provider)`` method does: a provider
        registered again under the same ``name`` replaces the earlier one (last writer wins,
        so a user plugin can override a bundled one); config (``image_gen.provider``)
        chooses which provider serves the family's tools.

        :raises RegistrationError: ``provider`` is not an instance of the family's ABC, its
            name is invalid, or there is no such family.
        """
        self._check_active(f"{family} provider", getattr(provider, "name", provider))
        try:
            registry = self._manager.backend(family)
        except KeyError as exc:
            raise RegistrationError(f"plugin {self._plugin_id!r}: {exc.args[0]}") from None
        handle: Handle = registry.register_provider(provider, owner=self._plugin_id)
        return handle

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

    # -- messages and settings -----------------------------------------------------------------

    def inject_message(
        self, content: str, role: str = "user", *, session_key: str | None = None
    ) -> bool:
        """Queue a message into the running session; never raises.

        The host's ``pm.message_sink(content, role)`` receives it.

        :param session_key: accepted for Hermes compatibility (gateway sessions); unused.
        :returns: ``False`` when no session is running, the sink fails or the plugin was
            unloaded, else what the sink answers.
        """
        if self._revoked:
            logger.debug("plugin %r: inject_message through a revoked context", self._plugin_id)
            return False
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

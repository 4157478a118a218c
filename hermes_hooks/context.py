"""``PluginContext``: the per-plugin facade handed to ``register(ctx)``.

Everything a plugin registers through its context is recorded as owned by that plugin, so it
is listed on the plugin's status and removed again when the plugin fails or is unloaded.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hooks.errors import RegistrationError
from hermes_hooks.registries import Handle

if TYPE_CHECKING:
    from hermes_hooks.manager import PluginManager
    from hermes_hooks.manifest import PluginManifest

__all__ = ["PluginContext"]

logger = logging.getLogger(__name__)

_MISSING = object()


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

    def __repr__(self) -> str:
        return f"<PluginContext {self._plugin_id!r}>"

    @property
    def plugin_id(self) -> str:
        """The plugin's key: the registry id its entries are recorded under."""
        return self._plugin_id

    @property
    def hermes_home(self) -> Path:
        """The Hermes home folder of the host (where a plugin keeps its own files)."""
        return self._manager.hermes_home

    # -- hooks ----------------------------------------------------------------------------------

    def register_hook(self, name: str, callback: Callable[..., Any]) -> None:
        """Register ``callback`` for hook ``name`` as a real pluggy hookimpl of this plugin.

        The callback receives only the hook arguments its signature names, or all of them if
        it takes ``**kwargs``. An unknown hook name is kept (and warned about once, with the
        closest known names), so that a plugin written for a newer host still loads.

        :raises RegistrationError: ``callback`` is not callable, or it requires an argument
            the hook does not pass.
        """
        if not isinstance(name, str) or not name:
            raise RegistrationError(
                f"plugin {self._plugin_id!r}: hook name must be a non-empty string, found {name!r}"
            )
        if not callable(callback):
            raise RegistrationError(
                f"plugin {self._plugin_id!r}: callback for hook {name!r} must be callable, "
                f"found {type(callback).__name__}"
            )
        self._manager._add_hook_callback(self._plugin_id, name, callback)

    # -- tools, commands, skills ---------------------------------------------------------------

    def register_tool(
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
        override: bool = False,
    ) -> Handle:
        """Register a tool the model may call: ``handler(args: dict, **kwargs) -> str``.

        :param override: ask to replace a host tool of the same name; the operator must also
            grant it with ``plugins.entries.<id>.allow_tool_override: true``.
        :raises PluginToolOverrideError: a host tool name without both permissions.
        :raises RegistrationError: the name belongs to another plugin, or an argument is bad.
        """
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
    ) -> Handle:
        """Register a slash command ``/name``; ``handler(args: str)`` returns the reply."""
        return self._manager.commands.register_command(
            name, handler, description=description, args_hint=args_hint, owner=self._plugin_id
        )

    def register_cli_command(
        self,
        name: str,
        help: str,
        setup_fn: Callable[[argparse.ArgumentParser], Any],
        handler_fn: Callable[[argparse.Namespace], Any] | None = None,
        description: str = "",
    ) -> Handle:
        """Register ``hermes name``: ``setup_fn(parser)`` declares, ``handler_fn(args)`` runs."""
        return self._manager.cli_commands.register_cli_command(
            name, help, setup_fn, handler_fn, description=description, owner=self._plugin_id
        )

    def register_skill(self, name: str, path: str | Path, description: str = "") -> Handle:
        """Register a skill file shipped in the plugin folder, found as ``<plugin>:<name>``.

        :raises ValueError: ``name`` contains ``:``.
        :raises RegistrationError: the path does not exist or leaves the plugin folder.
        """
        return self._manager.skills.register_skill(
            self.manifest.name,
            name,
            path,
            root=self.path,
            description=description,
            owner=self._plugin_id,
        )

    def dispatch_tool(self, name: str, args: Mapping[str, Any] | None = None, **kwargs: Any) -> str:
        """Call any registered tool by name, as the model would; never raises."""
        return self._manager.tools.dispatch(name, args, **kwargs)

    # -- messages and settings -----------------------------------------------------------------

    def inject_message(self, content: str, role: str = "user") -> bool:
        """Queue a message into the running session; return ``False`` when none is running."""
        sink = self._manager.message_sink
        if sink is None:
            logger.debug("plugin %r: inject_message with no running session", self._plugin_id)
            return False
        return bool(sink(content, role))

    def get_config(self, key: str, default: Any = None) -> Any:
        """Return ``plugins.entries.<plugin_id>.settings.<key>`` (dotted ``key``) or ``default``."""
        node: Any = self._manager.plugins_config.entry(self._plugin_id).get("settings", {})
        for part in key.split("."):
            if not isinstance(node, Mapping):
                return default
            node = node.get(part, _MISSING)
            if node is _MISSING:
                return default
        return node

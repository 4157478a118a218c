"""The context engine family: ``context.engine`` chooses the engine of every session.

The bundled ``compressor`` is the host's and the default. A plugin registers an engine with
``ctx.register_context_engine(engine)``; context engine plugins (those in a
``context_engine/`` folder, or whose ``__init__.py`` registers one: kind ``context-engine``)
load when ``context.engine`` names them, without being listed in ``plugins.enabled``, as in
Hermes. ``context.engine`` names the engine (its ``name``) or its plugin. Each session runs
its own copy of the engine, so that one session's token counts are not another's.

``config.yaml``::

    context:
      engine: compressor     # the default
"""

from __future__ import annotations

import difflib
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.backends.context_engine.engine import ContextEngine
from hermes_hooks.backends.family import (
    Family,
    FamilySettings,
    ProviderNotRegisteredError,
    ProviderRegistry,
    Selection,
)
from hermes_hooks.plugins.config import load_config
from hermes_hooks.registries.base import HOST

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "CONTEXT_ENGINE",
    "DEFAULT_ENGINE",
    "ContextEngineRegistry",
    "ContextSettings",
    "get_context_engines",
]

DEFAULT_ENGINE: Final = "compressor"
"""The engine used when ``context.engine`` is unset."""


@attrs.frozen
class ContextSettings:
    """The ``context:`` section: ``context.engine``, stripped (``None`` when unset)."""

    engine: str | None = None
    section: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def model(self) -> str | None:
        """The family has no model key."""
        return None

    @property
    def chosen(self) -> str:
        """The engine to run: ``context.engine``, else ``compressor``."""
        return self.engine or DEFAULT_ENGINE

    def choice(self, selection: Selection) -> str | None:
        """Return ``context.engine`` (the family's one selection key)."""
        return self.engine

    @classmethod
    def from_config(cls, config: Mapping[str, Any], source: Path | None = None) -> ContextSettings:
        """Read the ``context`` section of a whole config mapping.

        :raises ConfigError: ``context`` is not a mapping, or ``context.engine`` not a string.
        """
        read = FamilySettings.from_config(CONTEXT_ENGINE, config, source)
        return cls(engine=read.choice(CONTEXT_ENGINE.selections[0]), section=read.section)


class ContextEngineRegistry(ProviderRegistry[ContextEngine]):
    """One manager's context engines: the host's ``compressor`` and what plugins registered.

    :param home: the Hermes home whose ``config.yaml`` chooses the engine.
    """

    def __init__(self, home: Path | None = None) -> None:
        super().__init__(CONTEXT_ENGINE, home)
        self._manager: weakref.ref[PluginManager] | None = None

    def bind(self, manager: PluginManager) -> None:
        """Know the manager, to match ``context.engine`` to its plugins (done by the family)."""
        self._manager = weakref.ref(manager)

    def settings(self) -> ContextSettings:
        """Read the ``context`` section of this registry's home now.

        :raises ConfigError: ``config.yaml`` is unreadable or the section is malformed.
        """
        home = self.config_home()
        return ContextSettings.from_config(load_config(home), home / "config.yaml")

    def _plugin_names(self, owner: str) -> set[str]:
        names = {owner, owner.rsplit("/", 1)[-1]}
        manager = self._manager() if self._manager is not None else None
        info = manager.get_plugin_info(owner) if manager is not None else None
        if info is not None:
            names.add(info.name)
            names.update(info.aliases)
        return names

    def find(self, chosen: str) -> tuple[ContextEngine, str] | None:
        """Return the engine ``context.engine: chosen`` names, and its owner, or ``None``.

        The engine of that name, else the engine a plugin of that name registered.
        """
        engine = self.get_provider(chosen)
        if engine is not None:
            return engine, self.owner_of(chosen) or HOST
        for name in self.names():
            owner = self.owner_of(name)
            found = self.get_provider(name)
            if (
                owner
                and owner != HOST
                and found is not None
                and chosen in self._plugin_names(owner)
            ):
                return found, owner
        return None

    def select_provider(
        self, settings: Any = None, *, selection: Selection | None = None
    ) -> ContextEngine:
        """Return the engine ``context.engine`` names (``compressor`` when unset).

        :raises ProviderNotRegisteredError: it names no registered engine; the host then runs
            ``compressor``, with a warning, as Hermes does.
        """
        chosen: ContextSettings = settings if settings is not None else self.settings()
        found = self.find(chosen.chosen)
        if found is not None:
            return found[0]
        names = self.names()
        close = difflib.get_close_matches(chosen.chosen, names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ProviderNotRegisteredError(
            f"context.engine is {chosen.chosen!r}, but no loaded plugin registered a context "
            f"engine of that name{hint} (registered: {', '.join(names) or 'none'}); "
            f"'hermes plugins list --all' shows whether its plugin was found and why it did "
            f"not load"
        )


def _install(manager: PluginManager, registry: ProviderRegistry[ContextEngine]) -> None:
    from hermes_hooks.backends.context_engine.compressor import ContextCompressor

    assert isinstance(registry, ContextEngineRegistry)
    registry.bind(manager)
    registry.register_provider(ContextCompressor(), owner=HOST)


CONTEXT_ENGINE: Final[Family[ContextEngine]] = Family(
    name="context_engine",
    title="context engine",
    provider_type=ContextEngine,
    selections=(Selection("context.engine", default=DEFAULT_ENGINE),),
    cli_name="context-engine",
    cli_examples=("--provider compressor", "--json"),
    ctx_method="register_context_engine",
    provider_kind="context engine",
    registry_class=ContextEngineRegistry,
    read_settings=ContextSettings.from_config,
    install_tools=_install,
    none_registered_hint="; context engine plugins load when context.engine names them",
    plugin_kind="context-engine",
)
"""The context engine family: ``context.engine`` chooses who keeps the conversation in budget."""


def get_context_engines(pm: PluginManager) -> ContextEngineRegistry:
    """Return ``pm``'s registry of context engines (``pm.context_engine``), typed."""
    registry = CONTEXT_ENGINE.registry(pm)
    assert isinstance(registry, ContextEngineRegistry)
    return registry

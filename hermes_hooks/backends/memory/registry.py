"""The memory family: its settings, its registry and the choice of the providers that run.

As in Hermes, the builtin provider (name ``builtin``, the host's) is always active first, and
at most one external provider runs beside it: the one registered by the plugin that
``memory.provider`` names (its key, folder name or manifest name), or else the provider of that
name. Memory plugins (kind ``exclusive``) load when ``memory.provider`` names them, without
being listed in ``plugins.enabled``. ``memory.builtin: false`` turns the builtin off.

``config.yaml``::

    memory:
      provider: holographic     # the external provider's plugin; unset: the builtin only
      builtin: true             # the SQLite fact store under $HERMES_HOME/memory/
      prefetch_timeout: 2       # seconds a provider's prefetch may take; 0: no bound
"""

from __future__ import annotations

import difflib
import logging
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.backends.family import (
    Family,
    FamilySettings,
    NoProviderError,
    ProviderNotRegisteredError,
    ProviderRegistry,
    Selection,
)
from hermes_hooks.backends.memory.provider import MemoryProvider
from hermes_hooks.errors import ConfigError, RegistrationError
from hermes_hooks.plugins.config import load_config
from hermes_hooks.plugins.settings import (
    DEFAULT_PREFETCH_TIMEOUT,
    MAX_PREFETCH_TIMEOUT,
    keys_of,
    read_mapping,
)
from hermes_hooks.registries.base import HOST, Handle, describe_owner

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "BUILTIN_NAME",
    "DEFAULT_PREFETCH_TIMEOUT",
    "MAX_PREFETCH_TIMEOUT",
    "MEMORY",
    "ActiveProvider",
    "MemoryRegistry",
    "MemorySettings",
    "get_memory",
]

logger = logging.getLogger(__name__)

BUILTIN_NAME: Final = "builtin"
"""The name of the host's own provider; no plugin may register a provider under it."""


@attrs.frozen
class MemorySettings:
    """The ``memory:`` section of ``config.yaml``.

    :param provider: ``memory.provider``, stripped: the plugin of the external provider, or
        ``None`` (or ``builtin``) for the builtin only.
    :param builtin: ``memory.builtin``: whether the builtin provider runs (default ``True``).
    :param prefetch_timeout: ``memory.prefetch_timeout`` in seconds (default 2; ``0``: no
        bound).
    :param section: the whole section, for provider-specific keys.
    :param warnings: values replaced by their default, for the host to report.
    """

    provider: str | None = None
    builtin: bool = True
    prefetch_timeout: float = DEFAULT_PREFETCH_TIMEOUT
    section: Mapping[str, Any] = attrs.field(factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def model(self) -> str | None:
        """The family has no model key."""
        return None

    def choice(self, selection: Selection) -> str | None:
        """Return ``memory.provider`` (the family's one selection key)."""
        return self.provider

    @classmethod
    def from_config(cls, config: Mapping[str, Any], source: Path | None = None) -> MemorySettings:
        """Read the ``memory`` section of a whole config mapping.

        Only ``memory.provider`` must be right (it decides which plugin loads); a wrong
        ``builtin`` or ``prefetch_timeout`` is replaced by its default, with a warning.

        :raises ConfigError: ``memory`` is not a mapping, or ``memory.provider`` not a string.
        """
        read = FamilySettings.from_config(MEMORY, config, source)
        values, warnings = read_mapping(
            keys_of("memory", ("builtin", "prefetch_timeout")), read.section, source=source
        )
        return cls(
            provider=read.choice(MEMORY.selections[0]),
            builtin=values["builtin"],
            prefetch_timeout=float(values["prefetch_timeout"]),
            section=dict(read.section),
            warnings=warnings,
        )


@attrs.frozen
class ActiveProvider:
    """A provider that runs in a session, and who registered it (``host`` for the builtin)."""

    provider: MemoryProvider
    owner: str

    @property
    def name(self) -> str:
        """The provider's ``name`` (``?`` when it raises)."""
        try:
            return str(self.provider.name)
        except Exception:
            return "?"

    @property
    def is_builtin(self) -> bool:
        """Whether this is the host's builtin provider."""
        return self.owner == HOST


class MemoryRegistry(ProviderRegistry[MemoryProvider]):
    """One manager's memory providers: the host's builtin and what plugins registered.

    :param home: the Hermes home whose ``config.yaml`` chooses the external provider.
    """

    def __init__(self, home: Path | None = None) -> None:
        super().__init__(MEMORY, home)
        self._manager: weakref.ref[PluginManager] | None = None
        self._sessions: dict[int, int] = {}
        self._sessions_lock = threading.Lock()

    def bind(self, manager: PluginManager) -> None:
        """Know the manager, to match ``memory.provider`` to its plugins (done by the family)."""
        self._manager = weakref.ref(manager)

    @property
    def manager(self) -> PluginManager | None:
        """The manager this registry belongs to, when bound and alive."""
        return self._manager() if self._manager is not None else None

    def acquire(self, provider: MemoryProvider) -> int:
        """Note one more session using ``provider``; return how many use it now."""
        with self._sessions_lock:
            count = self._sessions.get(id(provider), 0) + 1
            self._sessions[id(provider)] = count
            return count

    def release(self, provider: MemoryProvider) -> bool:
        """Note one session less using ``provider``; return whether it was the last.

        One provider object serves every session of its manager (a gateway runs several):
        the host shuts it down only when the last of them ends.
        """
        with self._sessions_lock:
            count = self._sessions.get(id(provider), 0) - 1
            if count > 0:
                self._sessions[id(provider)] = count
                return False
            self._sessions.pop(id(provider), None)
            return True

    # -- writing ----------------------------------------------------------------------------------

    def register_provider(self, provider: object, *, owner: str = HOST) -> Handle:
        """Register a memory provider for ``owner``; the name ``builtin`` is the host's.

        :raises RegistrationError: not a ``MemoryProvider``, a bad name, or a plugin's provider
            named ``builtin``.
        """
        if owner != HOST and isinstance(provider, MemoryProvider):
            try:
                name = provider.name
            except Exception:
                name = None
            if isinstance(name, str) and name.strip() == BUILTIN_NAME:
                raise RegistrationError(
                    f"memory provider {type(provider).__name__} from {describe_owner(owner)} is "
                    f"refused: the name {BUILTIN_NAME!r} is the host's own provider; give it "
                    f"another name"
                )
        handle = super().register_provider(provider, owner=owner)
        if owner != HOST:
            self._check_name(provider, owner)
        return handle

    def _check_name(self, provider: object, owner: str) -> None:
        """Warn when ``memory.provider`` names this plugin but its provider another name."""
        manager = self.manager
        if manager is None:
            return
        try:
            chosen = MemorySettings.from_config(manager.config).provider
        except ConfigError:
            return
        name = str(getattr(provider, "name", "")).strip()
        if chosen is None or chosen == name or chosen not in self.plugin_names(owner):
            return
        message = (
            f"memory.provider is {chosen!r}, which names this plugin, but the memory provider "
            f"it registered is named {name!r}; it is used all the same"
        )
        logger.warning("plugin %r: %s", owner, message)
        manager.add_warning(owner, message)

    # -- reading ----------------------------------------------------------------------------------

    def settings(self) -> MemorySettings:
        """Read the ``memory`` section of this registry's home now.

        :raises ConfigError: ``config.yaml`` is unreadable or the section is malformed.
        """
        home = self.config_home()
        return MemorySettings.from_config(load_config(home), home / "config.yaml")

    def plugin_names(self, owner: str) -> set[str]:
        """Return the names ``memory.provider`` may give plugin ``owner``: its key, its folder
        name and its manifest name."""
        names = {owner, owner.rsplit("/", 1)[-1]}
        manager = self.manager
        info = manager.get_plugin_info(owner) if manager is not None else None
        if info is not None:
            names.add(info.name)
            names.update(info.aliases)
        return names

    def builtin(self) -> MemoryProvider | None:
        """Return the host's builtin provider, or ``None`` when the host registered none."""
        found = self.get_provider(BUILTIN_NAME)
        return found if found is not None and self.owner_of(BUILTIN_NAME) == HOST else None

    def external_providers(self) -> list[ActiveProvider]:
        """Return every provider a plugin registered, sorted by name."""
        found = []
        for name in self.names():
            owner = self.owner_of(name)
            provider = self.get_provider(name)
            if owner is not None and owner != HOST and provider is not None:
                found.append(ActiveProvider(provider, owner))
        return found

    def external(self, settings: MemorySettings | None = None) -> ActiveProvider | None:
        """Return the external provider ``memory.provider`` selects, or ``None`` when unset.

        The provider of the plugin it names, else the provider of that name.

        :raises ProviderNotRegisteredError: ``memory.provider`` is set, and no loaded plugin
            registered a provider for it; the message says what became of that plugin.
        """
        settings = settings if settings is not None else self.settings()
        chosen = settings.provider
        if chosen is None or chosen == BUILTIN_NAME:
            return None  # "builtin": the builtin alone, as when unset
        candidates = self.external_providers()
        for found in candidates:
            if chosen in self.plugin_names(found.owner):
                return found
        for found in candidates:
            if found.name == chosen:
                return found
        raise ProviderNotRegisteredError(self._not_registered(chosen, candidates))

    def _not_registered(self, chosen: str, candidates: list[ActiveProvider]) -> str:
        known = ", ".join(f"{c.name} (plugin {c.owner})" for c in candidates) or "none"
        head = f"memory.provider is {chosen!r}, but no loaded plugin registered a memory provider "
        manager = self.manager
        if manager is not None:
            infos = manager.list_plugins()
            for info in infos:
                if chosen in {info.key, info.key.rsplit("/", 1)[-1], info.name, *info.aliases}:
                    why = info.error or info.reason or info.status
                    return (
                        f"{head}for it: its plugin {info.key!r} is {info.status} ({why}); "
                        f"'hermes plugins list --all' shows every plugin"
                    )
            names = [i.key.rsplit("/", 1)[-1] for i in infos if i.served_by == "memory.provider"]
            close = difflib.get_close_matches(chosen, names, n=3, cutoff=0.6)
            if close:
                return f"{head}for it, and no plugin has that name; did you mean {close[0]!r}?"
        return (
            f"{head}for it (registered: {known}); 'hermes tools memory' lists the memory "
            f"plugins, 'hermes plugins list --all' every plugin"
        )

    def active(self, settings: MemorySettings | None = None) -> list[ActiveProvider]:
        """Return the providers that run in a session, the builtin first.

        :raises ProviderNotRegisteredError: as :meth:`external`.
        """
        settings = settings if settings is not None else self.settings()
        found: list[ActiveProvider] = []
        builtin = self.builtin()
        if settings.builtin and builtin is not None:
            found.append(ActiveProvider(builtin, HOST))
        external = self.external(settings)
        if external is not None:
            found.append(external)
        return found

    def select_provider(
        self, settings: Any = None, *, selection: Selection | None = None
    ) -> MemoryProvider:
        """Return the external provider ``memory.provider`` selects, else the builtin.

        :raises ProviderNotRegisteredError: ``memory.provider`` names nothing registered.
        :raises NoProviderError: unset, and the builtin is off.
        """
        chosen: MemorySettings = settings if settings is not None else self.settings()
        external = self.external(chosen)
        if external is not None:
            return external.provider
        builtin = self.builtin()
        if chosen.builtin and builtin is not None:
            return builtin
        raise NoProviderError(
            "no memory provider runs: memory.builtin is false and memory.provider is not set"
        )


def _install(manager: PluginManager, registry: ProviderRegistry[MemoryProvider]) -> None:
    from hermes_hooks.backends.memory.builtin import BuiltinMemoryProvider

    assert isinstance(registry, MemoryRegistry)
    registry.bind(manager)
    registry.register_provider(BuiltinMemoryProvider(), owner=HOST)


def _describe(provider: MemoryProvider) -> dict[str, Any]:
    return {"builtin": isinstance(provider, _builtin_type())}


def _builtin_type() -> type:
    from hermes_hooks.backends.memory.builtin import BuiltinMemoryProvider

    return BuiltinMemoryProvider


def _detail_lines(described: Mapping[str, Any]) -> list[str]:
    if described.get("builtin"):
        return ["always runs first (memory.builtin: false turns it off); facts in SQLite"]
    return []


MEMORY: Final[Family[MemoryProvider]] = Family(
    name="memory",
    title="memory",
    provider_type=MemoryProvider,
    selections=(Selection("memory.provider"),),
    cli_name="memory",
    cli_examples=("--provider holographic", "--json"),
    ctx_method="register_memory_provider",
    provider_kind="memory provider",
    registry_class=MemoryRegistry,
    read_settings=MemorySettings.from_config,
    install_tools=_install,
    none_registered_hint="; memory plugins load when memory.provider names them",
    describe_extra=_describe,
    detail_lines=_detail_lines,
    plugin_kind="exclusive",
)
"""The memory family: the builtin provider, and the external one ``memory.provider`` selects."""


def get_memory(pm: PluginManager) -> MemoryRegistry:
    """Return ``pm``'s registry of memory providers (``pm.memory``), typed."""
    registry = MEMORY.registry(pm)
    assert isinstance(registry, MemoryRegistry)
    return registry

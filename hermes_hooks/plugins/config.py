"""``HERMES_HOME``, the ``plugins:`` section of ``config.yaml`` and the environment switches.

Reading, writing and updating the file itself is :mod:`hermes_hooks.plugins.configfile`
(bounded reads, atomic round-trip writes under a lock); its names are re-exported here.
Importing this module reads nothing: no environment, no files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import attrs

from hermes_hooks.calling.results import DEFAULT_MAX_HOOK_RESULT_BYTES
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.configfile import (
    CONFIG_FILENAME,
    MAX_CONFIG_BYTES,
    MAX_CONFIG_DEPTH,
    MAX_CONFIG_NODES,
    config_path,
    describe as _describe,
    load_config,
    update_config,
    write_config,
)
from hermes_hooks.plugins.settings import (
    DEFAULT_HOOK_CALLBACK_TIMEOUT,
    DEFAULT_LOAD_TIMEOUT,
    MAX_HOOK_CALLBACK_TIMEOUT,
    MAX_LOAD_TIMEOUT,
    read_section,
)

__all__ = [
    "BUNDLED_PLUGINS_ENV",
    "CONFIG_FILENAME",
    "DEBUG_ENV",
    "DEFAULT_HOOK_CALLBACK_TIMEOUT",
    "DEFAULT_LOAD_TIMEOUT",
    "HERMES_HOME_ENV",
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "MAX_CONFIG_NODES",
    "MAX_HOOK_CALLBACK_TIMEOUT",
    "MAX_LOAD_TIMEOUT",
    "PROJECT_PLUGINS_ENV",
    "PluginsConfig",
    "SAFE_MODE_ENV",
    "STRICT_ENV",
    "TRUTHY_STRINGS",
    "config_path",
    "env_flag",
    "get_hermes_home",
    "is_truthy",
    "load_config",
    "set_plugin_enabled",
    "update_config",
    "write_config",
]

HERMES_HOME_ENV: Final = "HERMES_HOME"
"""Folder holding ``config.yaml`` and the user plugins; default ``~/.hermes``."""
SAFE_MODE_ENV: Final = "HERMES_SAFE_MODE"
"""When truthy, no plugin is loaded."""
PROJECT_PLUGINS_ENV: Final = "HERMES_ENABLE_PROJECT_PLUGINS"
"""When truthy, plugins under ``./.hermes/plugins/`` are discovered."""
STRICT_ENV: Final = "HERMES_PLUGINS_STRICT"
"""When truthy, a failing hook implementation re-raises instead of being logged and skipped."""
DEBUG_ENV: Final = "HERMES_PLUGINS_DEBUG"
"""When truthy, the CLI shows tracebacks."""
BUNDLED_PLUGINS_ENV: Final = "HERMES_BUNDLED_PLUGINS"
"""Overrides the folder of bundled plugins (packaged installs)."""
DISABLE_PLUGINS_ENV: Final = "HERMES_DISABLE_PLUGINS"
"""Plugin keys (comma-separated) not loaded in this run, as ``plugins.disabled`` but without
editing ``config.yaml`` (``hermes --disable NAME``; pytest's ``-p no:NAME``)."""
NO_ENTRY_POINTS_ENV: Final = "HERMES_PLUGINS_NO_ENTRY_POINTS"
"""When truthy, pip-installed (entry point) plugins are not discovered in this run."""


def disabled_for_this_run(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Return the plugin keys ``HERMES_DISABLE_PLUGINS`` names (comma- or space-separated)."""
    raw = (os.environ if env is None else env).get(DISABLE_PLUGINS_ENV, "")
    return frozenset(part for part in raw.replace(",", " ").split() if part)


TRUTHY_STRINGS: Final = frozenset({"1", "true", "yes", "on"})
"""Values that switch a flag on (Hermes ``utils.TRUTHY_STRINGS``), compared stripped, lowercased."""


def is_truthy(value: str | None) -> bool:
    """Tell whether a switch value means "on": ``1``, ``true``, ``yes`` or ``on``, any case.

    :param value: the raw value, e.g. of an environment variable; ``None`` is off.
    """
    return value is not None and value.strip().lower() in TRUTHY_STRINGS


def env_flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Tell whether the environment variable *name* is set to a truthy value.

    :param env: the environment to read; ``os.environ`` when omitted.
    """
    return is_truthy((os.environ if env is None else env).get(name))


def get_hermes_home(env: Mapping[str, str] | None = None) -> Path:
    """Return the Hermes home folder: ``$HERMES_HOME`` (``~`` expanded) or ``~/.hermes``.

    An empty or blank ``HERMES_HOME`` counts as unset. The folder is not created.

    :param env: the environment to read; ``os.environ`` when omitted.
    """
    raw = (os.environ if env is None else env).get(HERMES_HOME_ENV, "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".hermes"


def _where(source: Path | None) -> str:
    return str(source) if source is not None else "config"


def _entries(section: Mapping[str, Any], where: str) -> Mapping[str, Mapping[str, Any]]:
    """Read ``plugins.entries``: plugin id → settings mapping; a null entry is empty."""
    value = section.get("entries")
    if value is None:
        return MappingProxyType({})
    if not isinstance(value, Mapping):
        msg = (
            f"{where}: plugins.entries: expected a mapping of plugin id to settings,"
            f" found {_describe(value)}"
        )
        raise ConfigError(msg)
    entries: dict[str, Mapping[str, Any]] = {}
    for plugin_id, entry in value.items():
        if not isinstance(plugin_id, str):
            found = _describe(plugin_id)
            msg = f"{where}: plugins.entries: expected plugin ids (strings), found {found}"
            raise ConfigError(msg)
        if entry is None:
            entry = {}
        elif not isinstance(entry, Mapping):
            msg = (
                f"{where}: plugins.entries.{plugin_id}: expected a mapping of settings,"
                f" found {_describe(entry)}"
            )
            raise ConfigError(msg)
        entries[plugin_id] = MappingProxyType(dict(entry))
    return MappingProxyType(entries)


@attrs.frozen
class PluginsConfig:
    """The ``plugins:`` section of ``config.yaml``, checked and frozen.

    Build it with :meth:`from_config`; ``PluginsConfig()`` is an empty section.
    ``plugins.disabled`` beats ``plugins.enabled``; plugins are opt-in.
    """

    enabled: frozenset[str] = frozenset()
    """Plugin keys listed under ``plugins.enabled`` (the opt-in allow-list)."""
    disabled: frozenset[str] = frozenset()
    """Plugin keys listed under ``plugins.disabled`` (the deny-list, which wins)."""
    entries: Mapping[str, Mapping[str, Any]] = attrs.field(
        factory=lambda: MappingProxyType({}), hash=False
    )
    """Per-plugin settings, ``plugins.entries.<plugin_id>``."""
    hook_callback_timeout: float = DEFAULT_HOOK_CALLBACK_TIMEOUT
    """Seconds a hook callback may run; ``0`` disables the limit; at most 600."""
    hook_worker_threads: int | None = None
    """Worker threads bounded hook calls may hold at once, for the whole process (the last
    configuration read that sets it wins; 256 when none does); when all are busy, a bounded call
    runs inline on its caller's thread, never refused."""
    load_timeout: float = DEFAULT_LOAD_TIMEOUT
    """Seconds one plugin's import and ``register(ctx)`` may take; ``0`` loads on the calling
    thread, without a limit; at most 600."""
    max_hook_result_bytes: int = DEFAULT_MAX_HOOK_RESULT_BYTES
    """Bytes one hook implementation's result may hold (16 MiB); past it, the result is a
    failure under the hook's error policy; ``0``: no bound."""
    warnings: tuple[str, ...] = ()
    """Problems that were tolerated (a value replaced by its default), for the host to report."""
    source: Path | None = attrs.field(default=None, eq=False)
    """The file the section was read from, named in messages."""
    aliases: Mapping[str, tuple[str, ...]] = attrs.field(
        factory=lambda: MappingProxyType({}), hash=False
    )
    """Other names of a plugin key that config may still use (old folder keys), by key."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, source: Path | None = None) -> PluginsConfig:
        """Build from a whole loaded configuration (the result of :func:`load_config`).

        :param source: the file *config* came from, named in error messages.
        :raises ConfigError: ``plugins``, ``plugins.enabled``, ``plugins.disabled`` or
            ``plugins.entries`` has the wrong type; the message names file, field, what was
            expected and what was found.
        """
        where = _where(source)
        values, warnings = read_section(config, "plugins", source=source)
        section = config.get("plugins") or {}
        return cls(
            enabled=frozenset(values["enabled"]),
            disabled=frozenset(values["disabled"]),
            entries=_entries(section, where),
            hook_callback_timeout=values["hook_callback_timeout"],
            hook_worker_threads=values["hook_worker_threads"],
            load_timeout=values["load_timeout"],
            max_hook_result_bytes=values["max_hook_result_bytes"],
            warnings=warnings,
            source=source,
        )

    @classmethod
    def from_home(cls, home: Path) -> PluginsConfig:
        """Build from ``config.yaml`` in *home* (see :func:`load_config`)."""
        return cls.from_config(load_config(home), source=config_path(home))

    def is_enabled(self, key: str) -> bool:
        """Tell whether *key* is listed under ``plugins.enabled``."""
        return key in self.enabled

    def is_disabled(self, key: str) -> bool:
        """Tell whether *key* is listed under ``plugins.disabled``."""
        return key in self.disabled

    def entry(self, plugin_id: str) -> Mapping[str, Any]:
        """Return ``plugins.entries.<plugin_id>``, or an empty mapping when absent.

        An entry kept under an alias of the key (see :meth:`with_aliases`) is found too.
        """
        found = self.entries.get(plugin_id)
        if found is None:
            alias = next((a for a in self.aliases.get(plugin_id, ()) if a in self.entries), None)
            found = self.entries.get(alias) if alias is not None else None
        return found if found is not None else MappingProxyType({})

    def with_aliases(self, aliases: Mapping[str, Iterable[str]]) -> PluginsConfig:
        """Return this section with ``aliases`` (plugin key → older names) known to it."""
        return attrs.evolve(
            self, aliases=MappingProxyType({k: tuple(v) for k, v in aliases.items() if v})
        )

    def listed_as(self, key: str, field: str) -> str | None:
        """Return the name under which ``plugins.<field>`` lists plugin ``key``, or ``None``.

        ``field`` is ``enabled`` or ``disabled``; the key itself is preferred over an alias.
        """
        names: frozenset[str] = getattr(self, field)
        if key in names:
            return key
        return next((a for a in self.aliases.get(key, ()) if a in names), None)

    def allow_tool_override(self, plugin_id: str) -> bool:
        """Tell whether the operator lets *plugin_id* replace host tools.

        Only ``plugins.entries.<plugin_id>.allow_tool_override: true`` grants it; any other
        value, e.g. the string ``"true"``, does not.
        """
        return self.entry(plugin_id).get("allow_tool_override") is True


def set_plugin_enabled(
    home: Path,
    key: str,
    enabled: bool,
    *,
    aliases: Iterable[str] = (),
    entry: Mapping[str, Any] | None = None,
) -> None:
    """Enable or disable the plugin *key* in ``config.yaml``, through :func:`update_config`.

    Enabling appends *key* to ``plugins.enabled`` (once, order kept) and removes it from
    ``plugins.disabled``; disabling does the reverse. As in Hermes, the bare leaf of a
    category key (``langfuse`` for ``observability/langfuse``) is removed from the other list
    too, so a stale legacy entry cannot veto the change.

    :param aliases: other names of the same plugin (its manifest name), also removed from the
        other list: gating matches key and manifest name, so either would veto the change.
    :param entry: values to set in ``plugins.entries.<key>`` in the same atomic write (a
        ``None`` value removes that field), e.g. the content hash of a project plugin.

    :raises ValueError: *key* is empty.
    :raises ConfigError: the file cannot be read, or its ``plugins`` section has a wrong
        type; the file is then left as it was.
    """
    if not key.strip():
        raise ValueError("a plugin key must not be empty")
    add_to, remove_from = ("enabled", "disabled") if enabled else ("disabled", "enabled")
    stale = {key, key.rsplit("/", 1)[-1], *aliases}

    def mutate(config: dict[str, Any]) -> None:
        PluginsConfig.from_config(config, source=config_path(home))  # refuse wrong types first
        section = config.get("plugins")
        if section is None:
            section = config["plugins"] = {}
        # In place: the list read round-trip keeps its style and comments when written back.
        names: list[str] | None = section.get(add_to)
        if names is None:
            names = section[add_to] = []
        names.append(key)
        _drop_from(names, lambda index, name: name in names[:index])  # once, order kept
        if section.get(remove_from) is not None:
            _drop_from(section[remove_from], lambda _, name: name in stale)
        if entry:
            _update_entry(section, key, entry)

    update_config(home, mutate)


def _drop_from(names: list[str], drop: Callable[[int, str], bool]) -> None:
    """Delete, in place, the items of *names* for which ``drop(index, name)`` is true."""
    for index in reversed([index for index, name in enumerate(names) if drop(index, name)]):
        del names[index]


def _update_entry(section: dict[str, Any], key: str, values: Mapping[str, Any]) -> None:
    """Set (or, for ``None``, remove) fields of ``plugins.entries.<key>``; add nothing empty."""
    entries: dict[str, Any] | None = section.get("entries")
    entry: dict[str, Any] | None = entries.get(key) if entries is not None else None
    changes = {field: value for field, value in values.items() if value is not None}
    removals = [field for field, value in values.items() if value is None]
    if entry is None and not changes:
        return
    if entries is None:
        entries = section["entries"] = {}
    if entry is None:
        entry = entries[key] = {}
    entry.update(changes)
    for field in removals:
        entry.pop(field, None)

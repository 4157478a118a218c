"""``HERMES_HOME``, ``config.yaml`` and the environment switches.

Reading is read-only and bounded: only a regular file is read, its size checked first (a FIFO
or a symlink to ``/dev/zero`` is refused, not read), then parsed by the bounded safe reader
with bounds of its own (a large real config loads, an alias bomb does not) and a key written
twice in one mapping refused, naming the lines. Every write is atomic (temp file in the same
folder, fsync, ``os.replace``), and read-modify-write goes through :func:`update_config`, which
holds an exclusive lock (``filelock``) so that concurrent ``hermes plugins enable`` processes
never lose a change, and writes the file back round-trip (``ruamel.yaml``): the person's
comments, key order, quoting, anchors and flow style are kept.
Importing this module reads nothing: no environment, no files.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any, Final

import attrs
import yaml

from hermes_hooks.calling.results import DEFAULT_MAX_HOOK_RESULT_BYTES
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.safe_yaml import YAMLLoadError, safe_load_yaml

__all__ = [
    "BUNDLED_PLUGINS_ENV",
    "CONFIG_FILENAME",
    "DEBUG_ENV",
    "DEFAULT_HOOK_CALLBACK_TIMEOUT",
    "HERMES_HOME_ENV",
    "MAX_HOOK_CALLBACK_TIMEOUT",
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
CONFIG_FILENAME: Final = "config.yaml"
"""The configuration file inside ``HERMES_HOME``."""

MAX_CONFIG_BYTES: Final = 4 * 1024 * 1024
"""A ``config.yaml`` larger than this is refused rather than parsed."""
MAX_CONFIG_NODES: Final = 500_000
"""Most YAML nodes ``config.yaml`` may have with aliases expanded (a 120 KB config has ~14,000;
an alias bomb is refused at this count, in well under a second)."""
MAX_CONFIG_DEPTH: Final = 256
"""Deepest nesting ``config.yaml`` may have."""

TRUTHY_STRINGS: Final = frozenset({"1", "true", "yes", "on"})
"""Values that switch a flag on (Hermes ``utils.TRUTHY_STRINGS``), compared stripped, lowercased."""

DEFAULT_HOOK_CALLBACK_TIMEOUT: Final = 30.0
"""Seconds a hook callback may run when ``plugins.hook_callback_timeout`` is not set."""
MAX_HOOK_CALLBACK_TIMEOUT: Final = 600.0
"""Upper bound for ``plugins.hook_callback_timeout``; larger values are capped."""
DEFAULT_LOAD_TIMEOUT: Final = 10.0
"""Seconds one plugin's import and ``register(ctx)`` may take when ``plugins.load_timeout`` is
not set: heavy SDK imports take seconds on two cores."""
MAX_LOAD_TIMEOUT: Final = 600.0
"""Upper bound for ``plugins.load_timeout``; larger values are capped."""

_LOCK_SUFFIX: Final = ".lock"


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


def config_path(home: Path) -> Path:
    """Return the path of ``config.yaml`` inside *home*."""
    return home / CONFIG_FILENAME


def _describe(value: object) -> str:
    """Name the type of a found value for an error message, with a short repr."""
    if value is None:
        return "null"
    kinds = (
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a number"),
        (str, "a string"),
        (Mapping, "a mapping"),
        (list, "a list"),
    )
    kind = next((name for cls, name in kinds if isinstance(value, cls)), type(value).__name__)
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{kind} ({text})"


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _read_config_bytes(path: Path) -> bytes | None:
    """Return the bytes of ``config.yaml``, or ``None`` when there is none.

    Opened without blocking (a FIFO would hang the command), then refused unless it is a
    regular file no larger than :data:`MAX_CONFIG_BYTES` (a symlink to ``/dev/zero`` would
    grow without end); a symlink to a regular file is followed, as the writer follows it.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(
                f"{path}: expected a regular file, found {_file_kind(info.st_mode)}; not read"
            )
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{path}: expected at most {MAX_CONFIG_BYTES} bytes, found {info.st_size}; "
                f"not read"
            )
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1024 * 1024):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_CONFIG_BYTES:  # it grew while being read
                raise ConfigError(
                    f"{path}: expected at most {MAX_CONFIG_BYTES} bytes, found more; not read"
                )
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc}") from exc
    finally:
        os.close(fd)
    return b"".join(chunks)


def _parse(path: Path, data: bytes) -> dict[str, Any]:
    try:
        # The bounded reader with config's own bounds: an alias bomb or absurd nesting would
        # otherwise stall (or crash) every hermes command that reads it.
        parsed = safe_load_yaml(
            data,
            source=str(path),
            max_bytes=MAX_CONFIG_BYTES,
            max_nodes=MAX_CONFIG_NODES,
            max_depth=MAX_CONFIG_DEPTH,
            unique_keys=True,
        )
    except YAMLLoadError as exc:
        reason = exc.reason.removeprefix("invalid YAML: ")
        where = f" at line {exc.line}, column {exc.column}" if exc.line is not None else ""
        raise ConfigError(f"{path}: invalid YAML{where}: {reason}") from exc
    if parsed is None:
        return {}
    if not isinstance(parsed, dict):
        msg = f"{path}: expected a mapping of settings at the top level, found {_describe(parsed)}"
        raise ConfigError(msg)
    return parsed


def load_config(home: Path) -> dict[str, Any]:
    """Read ``config.yaml`` from *home*; a missing or empty file gives ``{}``.

    :raises ConfigError: the file is not a regular file, is too large, cannot be read, is not
        valid YAML (with line and column), has a key twice in one mapping, or its top level is
        not a mapping.
    """
    path = config_path(home)
    data = _read_config_bytes(path)
    if data is None:
        return {}
    return _parse(path, data)


def _fsync_directory(folder: Path) -> None:
    """Make a rename in *folder* durable."""
    # The new file is already in place; a folder that cannot be opened or fsynced (some network
    # filesystems) only weakens durability, so it must not turn a done write into an error.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _ensure_home(home: Path) -> None:
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{home}: cannot create the Hermes home folder: {exc}") from exc


def _field_of(data: object, target: object, prefix: str = "") -> str | None:
    """Return the dotted path (``plugins.entries.x``) at which *target* sits inside *data*."""
    if isinstance(data, Mapping):
        children: list[tuple[str, object]] = [
            (f"{prefix}.{key}" if prefix else str(key), value) for key, value in data.items()
        ]
    elif isinstance(data, list | tuple):
        children = [(f"{prefix}[{index}]", value) for index, value in enumerate(data)]
    else:
        return None
    for field, value in children:
        if value is target:
            return field
        found = _field_of(value, target, field)
        if found is not None:
            return found
    return None


def _round_trip() -> Any:
    """A ``ruamel.yaml`` round-trip reader and writer (imported only when config is written)."""
    from ruamel.yaml import YAML

    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 4096  # never fold a long value the person wrote on one line
    return rt


def _is_round_trip(data: object) -> bool:
    return type(data).__module__.startswith("ruamel.")


def write_config(home: Path, data: Mapping[str, Any]) -> None:
    """Replace ``config.yaml`` in *home* with *data*, atomically; *home* is created if missing.

    Keys keep their order; *data* read by :func:`update_config` is written back round-trip,
    with its comments and style. The file keeps its permission bits; a new file is private
    (0600), as Hermes keeps it. A ``config.yaml`` that is a symlink is followed, not replaced.
    On any failure the old file is untouched and no temporary file is left behind.

    :raises ConfigError: a value cannot be written as YAML, or the file cannot be written.
    """
    if _is_round_trip(data):
        _write_document(home, data, None)
        return

    def dump(stream: IO[str]) -> None:
        yaml.safe_dump(
            dict(data), stream, sort_keys=False, allow_unicode=True, default_flow_style=False
        )

    _write_atomically(home, data, dump)


def _write_document(home: Path, document: Any, indent: tuple[int, int, int] | None) -> None:
    """Write a round-trip document, indented as the file it was read from."""
    rt = _round_trip()
    if indent is not None:
        mapping, sequence, offset = indent
        rt.indent(mapping=mapping, sequence=max(sequence, offset + 2), offset=offset)

    def dump(stream: IO[str]) -> None:
        rt.dump(document, stream)

    _write_atomically(home, document, dump)


def _write_atomically(home: Path, data: Mapping[str, Any], dump: Callable[[IO[str]], None]) -> None:
    _ensure_home(home)
    path = config_path(home)
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mode = None
    try:
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the config file: {exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            dump(stream)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if type(exc).__name__ == "RepresenterError":  # PyYAML's or ruamel's
            found = exc.args[1] if len(exc.args) > 1 else None
            field = _field_of(data, found) or "a value"
            msg = (
                f"{path}: cannot write {field}: expected a mapping, list, string, number, boolean"
                f" or null, found {_describe(found)}"
            )
            raise ConfigError(msg) from exc
        if isinstance(exc, yaml.YAMLError | OSError) or type(exc).__module__.startswith("ruamel"):
            raise ConfigError(f"{path}: cannot write the config file: {exc}") from exc
        raise
    _fsync_directory(target.parent)


@contextlib.contextmanager
def _exclusive_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive lock on *lock_path* (created if missing, never deleted) for the block."""
    import filelock  # fcntl on POSIX, msvcrt on Windows: the package imports on both

    lock = filelock.FileLock(lock_path, mode=0o600)
    try:
        lock.acquire()
    except OSError as exc:
        raise ConfigError(f"{lock_path}: cannot open the config lock file: {exc}") from exc
    try:
        yield
    finally:
        lock.release()


def _load_round_trip(home: Path) -> tuple[Any, tuple[int, int, int] | None]:
    """Read ``config.yaml`` for a write: the round-trip document and how the file indents.

    The bounded reader checks it first (kind, size, bombs, duplicate keys), so the round-trip
    parser only ever sees a document it has accepted.
    """
    path = config_path(home)
    data = _read_config_bytes(path)
    if data is None:
        return _empty_round_trip(), None
    _parse(path, data)
    from ruamel.yaml.util import load_yaml_guess_indent

    text = data.decode("utf-8-sig")
    try:
        document, sequence, offset = load_yaml_guess_indent(text, yaml=_round_trip())
    except Exception as exc:  # the bounded reader accepted it; say so if ruamel does not
        raise ConfigError(f"{path}: cannot read the config file to write it back: {exc}") from exc
    if document is None:
        return _empty_round_trip(), None
    if not isinstance(document, dict):  # pragma: no cover - _parse refused that
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    return document, (_mapping_indent(text), sequence or 2, offset or 0)


def _mapping_indent(text: str) -> int:
    """Guess how far the file indents a nested mapping: its smallest indent of a key line."""
    indents = [
        len(line) - len(stripped)
        for line in text.splitlines()
        if (stripped := line.lstrip(" "))
        and len(stripped) < len(line)
        and not stripped.startswith(("-", "#"))
    ]
    return min(indents) if indents else 2


def _empty_round_trip() -> Any:
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap()


def update_config(home: Path, mutate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Load ``config.yaml``, let *mutate* change it in place, and write it back atomically.

    The whole read-modify-write holds an exclusive lock on ``config.yaml.lock`` next to the
    file, so concurrent updates from several processes are applied one after the other.
    Keys *mutate* does not touch are kept, and so are the file's comments, order and style
    (it is written back round-trip); nothing is written when *mutate* changes nothing. A file
    that is not valid YAML, or that has a key twice, is never overwritten.

    A write also rewrites old plugin keys (folder names of plugins now keyed by their manifest
    name, see :mod:`hermes_hooks.plugins.keys`) to the current keys.

    :returns: the configuration as written.
    :raises ConfigError: the current file cannot be read or parsed, or the result cannot be
        written; whatever *mutate* raises propagates and nothing is written.
    """
    _ensure_home(home)
    with _exclusive_lock(home / (CONFIG_FILENAME + _LOCK_SUFFIX)):
        config, indent = _load_round_trip(home)
        before = copy.deepcopy(config)
        mutate(config)
        if config != before:
            if isinstance(config.get("plugins"), dict):
                # Imported here: discovery imports this module, and reading happens far more.
                from hermes_hooks.plugins.keys import apply_renames, find_renames

                apply_renames(config, find_renames(home))
            _write_document(home, config, indent)
    written: dict[str, Any] = config
    return written


def _where(source: Path | None) -> str:
    return str(source) if source is not None else "config"


def _name_set(section: Mapping[str, Any], field: str, where: str) -> frozenset[str]:
    """Read ``plugins.<field>``: a list of plugin keys; absent or null is empty."""
    value = section.get(field)
    if value is None:
        return frozenset()
    if not isinstance(value, list | tuple | set | frozenset):
        msg = f"{where}: plugins.{field}: expected a list of plugin keys, found {_describe(value)}"
        raise ConfigError(msg)
    for index, item in enumerate(value):
        if not isinstance(item, str):
            msg = (
                f"{where}: plugins.{field}[{index}]: expected a plugin key (a string),"
                f" found {_describe(item)}"
            )
            raise ConfigError(msg)
    return frozenset(value)


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


def _seconds(
    section: Mapping[str, Any], where: str, name: str, default: float, maximum: float
) -> tuple[float, list[str]]:
    """Read a number of seconds under ``plugins`` the way Hermes does, collecting warnings."""
    raw = section.get(name)
    if raw is None:
        return default, []
    field = f"{where}: plugins.{name}"
    seconds: float | None = None
    # bool is an int subclass, but `true` as a number of seconds is a mistake, not 1s.
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        seconds = float(raw)
    elif isinstance(raw, str):
        with contextlib.suppress(ValueError):
            seconds = float(raw)  # Hermes accepts numeric strings ("45")
    if seconds is None or math.isnan(seconds):
        return default, [
            f"{field}: expected a number of seconds, found {_describe(raw)};"
            f" using the default {default:g}s"
        ]
    if seconds < 0:
        return default, [
            f"{field}: expected 0 or more seconds, found {raw!r}; using the default {default:g}s"
        ]
    if seconds > maximum:
        return maximum, [
            f"{field}: {raw!r} is more than the maximum {maximum:g}s; using {maximum:g}s"
        ]
    return seconds, []


def _result_bytes(section: Mapping[str, Any], where: str) -> tuple[int, list[str]]:
    """Read ``plugins.max_hook_result_bytes`` (``0``: no bound), collecting warnings."""
    raw = section.get("max_hook_result_bytes")
    if raw is None:
        return DEFAULT_MAX_HOOK_RESULT_BYTES, []
    default = DEFAULT_MAX_HOOK_RESULT_BYTES
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw, []
    return default, [
        f"{where}: plugins.max_hook_result_bytes: expected a whole number of bytes, 0 or more"
        f" (0: no bound), found {_describe(raw)}; using the default {default}"
    ]


def _hook_callback_timeout(section: Mapping[str, Any], where: str) -> tuple[float, list[str]]:
    """Read ``plugins.hook_callback_timeout`` the way Hermes does, collecting warnings."""
    return _seconds(
        section,
        where,
        "hook_callback_timeout",
        DEFAULT_HOOK_CALLBACK_TIMEOUT,
        MAX_HOOK_CALLBACK_TIMEOUT,
    )


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
        section = config.get("plugins")
        if section is None:
            section = {}
        elif not isinstance(section, Mapping):
            found = _describe(section)
            msg = f"{where}: plugins: expected a mapping of plugin settings, found {found}"
            raise ConfigError(msg)
        timeout, warnings = _hook_callback_timeout(section, where)
        load_timeout, load_warnings = _seconds(
            section, where, "load_timeout", DEFAULT_LOAD_TIMEOUT, MAX_LOAD_TIMEOUT
        )
        result_bytes, result_warnings = _result_bytes(section, where)
        return cls(
            enabled=_name_set(section, "enabled", where),
            disabled=_name_set(section, "disabled", where),
            entries=_entries(section, where),
            hook_callback_timeout=timeout,
            load_timeout=load_timeout,
            max_hook_result_bytes=result_bytes,
            warnings=tuple(warnings + load_warnings + result_warnings),
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

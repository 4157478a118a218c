"""``config.yaml`` as a file: bounded reads, atomic round-trip writes, updates under a lock.

Reading is read-only and bounded: only a regular file is read, its size checked first (a FIFO
or a symlink to ``/dev/zero`` is refused, not read), then parsed by the bounded safe reader
with bounds of its own (a large real config loads, an alias bomb does not) and a key written
twice in one mapping refused, naming the lines. Every write is atomic (temp file in the same
folder, fsync, ``os.replace``), and read-modify-write goes through :func:`update_config`, which
holds an exclusive lock (``filelock``) so that concurrent ``hermes plugins enable`` processes
never lose a change, and writes the file back round-trip (``ruamel.yaml``): the person's
comments, key order, quoting, anchors and flow style are kept. ``ruamel.yaml`` and
``filelock`` are imported only when the file is written.
Importing this module reads nothing: no environment, no files.
"""

from __future__ import annotations

import contextlib
import copy
import os
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Final

import yaml

from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.safe_yaml import YAMLLoadError, safe_load_yaml

__all__ = [
    "CONFIG_FILENAME",
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "MAX_CONFIG_NODES",
    "config_path",
    "describe",
    "load_config",
    "update_config",
    "write_config",
]

CONFIG_FILENAME: Final = "config.yaml"
"""The configuration file inside ``HERMES_HOME``."""

MAX_CONFIG_BYTES: Final = 4 * 1024 * 1024
"""A ``config.yaml`` larger than this is refused rather than parsed."""
MAX_CONFIG_NODES: Final = 500_000
"""Most YAML nodes ``config.yaml`` may have with aliases expanded (a 120 KB config has ~14,000;
an alias bomb is refused at this count, in well under a second)."""
MAX_CONFIG_DEPTH: Final = 256
"""Deepest nesting ``config.yaml`` may have."""

_LOCK_SUFFIX: Final = ".lock"


def lock_path(home: Path) -> Path:
    """Return the lock file that serialises writes of *home*'s ``config.yaml``.

    It is hidden (``.config.yaml.lock``) and stays once created: deleting a lock file another
    process may be waiting on would let two writers in at once.
    """
    return home / ("." + CONFIG_FILENAME + _LOCK_SUFFIX)


def config_path(home: Path) -> Path:
    """Return the path of ``config.yaml`` inside *home*."""
    return home / CONFIG_FILENAME


def describe(value: object) -> str:
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
        msg = f"{path}: expected a mapping of settings at the top level, found {describe(parsed)}"
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
                f" or null, found {describe(found)}"
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

    The whole read-modify-write holds an exclusive lock on ``.config.yaml.lock`` (hidden,
    :func:`lock_path`) next to the file, so concurrent updates from several processes are
    applied one after the other.
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
    with _exclusive_lock(lock_path(home)):
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



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

try:
    from yaml import CSafeLoader as _FastLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _FastLoader  # type: ignore[assignment]

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
                f"{path}: expected at most {MAX_CONFIG_BYTES} bytes, found {info.st_size}; not read"
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


def _parse(
    path: Path, data: bytes | str, layout: list[tuple[str, int]] | None = None
) -> dict[str, Any]:
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
            layout=layout,
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
        error = _write_error(path, data, exc)
        if error is exc:
            raise
        raise error from exc
    _fsync_directory(target.parent)


def _write_error(path: Path, data: Mapping[str, Any], exc: BaseException) -> BaseException:
    """The :class:`ConfigError` that says why *data* could not be written (else *exc* itself)."""
    if type(exc).__name__ == "RepresenterError":  # PyYAML's or ruamel's
        found = exc.args[1] if len(exc.args) > 1 else None
        field = _field_of(data, found) or "a value"
        msg = (
            f"{path}: cannot write {field}: expected a mapping, list, string, number, boolean"
            f" or null, found {describe(found)}"
        )
        return ConfigError(msg)
    if isinstance(exc, yaml.YAMLError | OSError) or type(exc).__module__.startswith("ruamel"):
        return ConfigError(f"{path}: cannot write the config file: {exc}")
    return exc


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

    The whole read-modify-write holds an exclusive lock on ``.config.yaml.lock`` (hidden) next
    to the file the config really is (a ``config.yaml`` that is a symlink locks its target's
    lock, so two homes sharing one file never lose each other's updates). Keys *mutate* does not
    touch are kept, and so are the file's comments, order and style; nothing is written when
    *mutate* changes nothing. A file that is not valid YAML, or that has a key twice, is never
    overwritten.

    *mutate* sees the plain data (as :func:`load_config` reads it). Only the top-level sections
    it changed are written back round-trip (``ruamel.yaml``, which is slow on large documents);
    every other line is kept byte for byte, so a write costs what the changed sections cost.
    When a changed section holds an anchor or alias, or the file is not a block mapping of
    plain keys, the whole document is written back round-trip instead.

    A write also rewrites old plugin keys (folder names of plugins now keyed by their manifest
    name, see :mod:`hermes_hooks.plugins.keys`) to the current keys.

    :returns: the configuration as written.
    :raises ConfigError: the current file cannot be read or parsed, or the result cannot be
        written; whatever *mutate* raises propagates and nothing is written.
    """
    _ensure_home(home)
    path = config_path(home)
    real = Path(os.path.realpath(path))
    # The lock of the file the config really is: two homes sharing one file share one lock.
    with _exclusive_lock(real.with_name("." + real.name + _LOCK_SUFFIX)):
        data = _read_config_bytes(path)
        layout: list[tuple[str, int]] = []
        config = _parse(path, data, layout) if data else {}
        before = copy.deepcopy(config)
        mutate(config)
        if config != before:
            if isinstance(config.get("plugins"), dict):
                # Imported here: discovery imports this module, and reading happens far more.
                from hermes_hooks.plugins.keys import apply_renames, find_renames

                apply_renames(config, find_renames(home))
            _write_changes(home, data or b"", layout, before, config)
    return config


_MISSING: Final = object()


def _write_changes(
    home: Path,
    data: bytes,
    layout: list[tuple[str, int]],
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """Write *after* over the file that read as *before*: only the changed sections, if it can."""
    path = config_path(home)
    spliced = _splice(path, data.decode("utf-8-sig"), layout, before, after)
    if spliced is not None:

        def dump(stream: IO[str]) -> None:
            stream.write(spliced)

        _write_atomically(home, after, dump)
        return
    document, indent = _load_round_trip(home)
    _apply(document, before, after)
    _write_document(home, document, indent)


def _spans(text: str, layout: list[tuple[str, int]]) -> dict[str, tuple[int, int]]:
    """Each top-level key's lines: from its own to the next key's, less the comment, blank and
    document-end lines just before that key (they stay as written)."""
    lines = text.splitlines(keepends=True)
    spans: dict[str, tuple[int, int]] = {}
    for index, (key, first) in enumerate(layout):
        end = layout[index + 1][1] if index + 1 < len(layout) else len(lines)
        while end > first + 1 and (
            not lines[end - 1].strip() or lines[end - 1].lstrip().startswith(("#", "..."))
        ):
            end -= 1
        spans[key] = (first, end)
    return spans


def _has_anchors(text: str) -> bool:
    """Whether *text* (one section) holds an anchor or an alias."""
    if "&" not in text and "*" not in text:
        return False
    try:
        return any(
            isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None
            for event in yaml.parse(text, Loader=_FastLoader)
        )
    except yaml.YAMLError:
        return True


def _splice(
    path: Path,
    text: str,
    layout: list[tuple[str, int]],
    before: dict[str, Any],
    after: dict[str, Any],
) -> str | None:
    """Return *text* with each changed top-level section rewritten round-trip and every other
    line as it was; ``None`` when that cannot be done safely (the caller writes the whole
    document back instead).

    Each rewritten section is read back alone and must give exactly its new value.
    """
    if not layout and any(
        line.strip() and not line.lstrip().startswith("#") for line in text.splitlines()
    ):
        return None  # a flow mapping (``{}``), a document marker, or not a block mapping
    if len(layout) != len(before) or any(key not in before for key, _ in layout):
        return None
    changed = [
        key
        for key in [*before, *(k for k in after if k not in before)]
        if not _same(before.get(key, _MISSING), after.get(key, _MISSING))
    ]
    if any(not isinstance(key, str) for key in changed):
        return None
    from ruamel.yaml.util import load_yaml_guess_indent

    spans = _spans(text, layout)
    lines = text.splitlines(keepends=True)
    replaced: dict[int, tuple[int, str]] = {}
    appended: list[str] = []
    mapping_indent = _mapping_indent(text)
    for key in changed:
        if key not in spans:
            new = _dump(path, after, {key: after[key]}, (mapping_indent, *_sequence_indent(text)))
            if not _same(_parse(path, new), {key: after[key]}):
                return None
            appended.append(new)
            continue
        first, end = spans[key]
        section = "".join(lines[first:end])
        if _has_anchors(section):
            return None
        if key not in after:
            replaced[first] = (end, "")
            continue
        try:
            document, sequence, offset = load_yaml_guess_indent(section, yaml=_round_trip())
        except Exception:  # the whole document is written back instead
            return None
        if not isinstance(document, dict) or list(document) != [key]:
            return None
        document[key] = _apply(document[key], before[key], after[key])
        indent = (mapping_indent, sequence or 2, offset or 0)
        new = _dump(path, after, document, indent)
        if not _same(_parse(path, new), {key: after[key]}):
            return None
        replaced[first] = (end, new)
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in replaced:
            end, new = replaced[index]
            out.append(new)
            index = end
            continue
        out.append(lines[index])
        index += 1
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    return "".join(out + appended)


def _sequence_indent(text: str) -> tuple[int, int]:
    """Guess how the file indents a block sequence under its key: ``(sequence, offset)``."""
    previous = ""
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if stripped.startswith("- ") and previous.rstrip().endswith(":"):
            offset = (len(line) - len(stripped)) - (len(previous) - len(previous.lstrip(" ")))
            offset = max(offset, 0)
            return offset + 2, offset
        if stripped and not stripped.startswith("#"):
            previous = line
    return 2, 0


def _dump(path: Path, data: Mapping[str, Any], document: Any, indent: tuple[int, int, int]) -> str:
    import io

    rt = _round_trip()
    mapping, sequence, offset = indent
    rt.indent(mapping=mapping, sequence=max(sequence, offset + 2), offset=offset)
    stream = io.StringIO()
    try:
        rt.dump(document, stream)
    except Exception as exc:
        raise _write_error(path, data, exc) from exc
    return stream.getvalue()


def _same(a: object, b: object) -> bool:
    """Equal and of the same types all the way down (``1 == True`` is not the same value)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert isinstance(b, list)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _apply(target: Any, before: object, after: object) -> Any:
    """Change the round-trip *target* (which read as *before*) into *after*, in place where it
    can, so that what did not change keeps its comments and style; return the new value."""
    if isinstance(target, dict) and isinstance(before, dict) and isinstance(after, dict):
        for key in [k for k in before if k not in after]:
            target.pop(key, None)
        for key, value in after.items():
            if key in before and key in target:
                if not _same(before[key], value):
                    target[key] = _apply(target[key], before[key], value)
            else:
                target[key] = value
        return target
    if isinstance(target, list) and isinstance(before, list) and isinstance(after, list):
        if _same(before, after):
            return target
        if len(before) == len(target):
            common = min(len(before), len(after))
            for index in range(common):
                if not _same(before[index], after[index]):
                    target[index] = _apply(target[index], before[index], after[index])
            del target[common:]
            target.extend(after[common:])
            return target
        target[:] = after
        return target
    return after

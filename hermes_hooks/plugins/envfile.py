"""``$HERMES_HOME/.env``: values for plugins' ``requires_env``, kept out of ``config.yaml``.

The grammar is python-dotenv's, the library Hermes itself loads ``.env`` with, for reading and
for writing alike: ``NAME=value`` lines, an optional ``export`` prefix, ``#`` comments, values in
single or double quotes. A value is written bare when it is plain, else double-quoted with the
escapes python-dotenv reads back (``\\n``, ``\\r``, ``\\t``, ``\\v``, ``\\f``, ``\\"``, ``\\\\``);
every entry is parsed back before it is written and must give exactly the name and value, and a
value holding a character that python-dotenv cannot escape and another reader could take for a
line break (``\\x1c``, ``\\x85``, ``\\u2028``...) or another control character is refused. So a
value can never smuggle a line, and with it another name, into the file.

Writes are atomic and the file is private (0600), as Hermes keeps it. Importing this module
reads nothing and imports no dotenv: python-dotenv is imported when a ``.env`` is read or written.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import tempfile
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from dotenv.parser import Binding

from hermes_hooks.errors import ConfigError

__all__ = [
    "ENV_FILENAME",
    "apply_env_file",
    "env_file_path",
    "read_env_file",
    "remove_env_value",
    "set_env_value",
]

ENV_FILENAME: Final = ".env"

_NAME: Final = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_PLAIN: Final = re.compile(r"\A[A-Za-z0-9_./:@+,-]*\Z")
_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t",
                   "\v": "\\v", "\f": "\\f"}  # fmt: skip
_ESCAPED: Final = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")
# Controls python-dotenv cannot escape, and what str.splitlines() and other readers break at.
_REFUSED: Final = re.compile("[\x00-\x08\x0e-\x1f\x7f\x85\u2028\u2029]")


def env_file_path(home: Path) -> Path:
    """Return the path of the ``.env`` file inside *home*."""
    return home / ENV_FILENAME


def _bindings(text: str) -> Iterator[Binding]:
    """The entries of a ``.env`` text, as python-dotenv parses them (with their original text)."""
    from dotenv.parser import parse_stream

    return parse_stream(io.StringIO(text))


def _entry(name: str, value: str) -> str:
    """Return the line ``name=value`` in the grammar python-dotenv reads back exactly.

    :raises ValueError: *value* holds a character that could end a line for some reader and
        cannot be escaped, or the entry would not read back as written.
    """
    refused = _REFUSED.search(value)
    if refused is not None:
        raise ValueError(
            f"cannot write {name} to .env: its value holds the control character "
            f"U+{ord(refused.group()):04X}, which a reader could take for a line break; "
            f"expected printable text"
        )
    if _PLAIN.match(value):
        line = f"{name}={value}"
    else:
        line = f'{name}="{_ESCAPED.sub(lambda m: _ESCAPES[m.group()], value)}"'
    parsed = [(b.key, b.value) for b in _bindings(line + "\n") if b.key is not None]
    if parsed != [(name, value)]:  # pragma: no cover - the escapes above read back
        raise ValueError(f"cannot write {name} to .env: its value would not read back as written")
    return line


def read_env_file(home: Path) -> dict[str, str]:
    """Return the variables in ``$HERMES_HOME/.env``; a missing file gives ``{}``.

    Lines that are not ``NAME=value`` are skipped, as python-dotenv skips them; a name given
    twice keeps its last value, as python-dotenv keeps it.

    :raises ConfigError: the file exists but cannot be read.
    """
    path = env_file_path(home)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the environment file: {exc}") from exc
    return {b.key: b.value for b in _bindings(text) if b.key is not None and b.value is not None}


def apply_env_file(home: Path, environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Set the variables of ``$HERMES_HOME/.env`` that the environment does not set already.

    :param environ: the environment to fill; ``os.environ`` when omitted.
    :returns: the names that were set.
    """
    target = os.environ if environ is None else environ
    added = []
    for name, value in read_env_file(home).items():
        if name not in target:
            target[name] = value
            added.append(name)
    return added


def set_env_value(home: Path, name: str, value: str) -> Path:
    """Set ``name=value`` in ``$HERMES_HOME/.env`` atomically, keeping every other line.

    The first definition of *name* is replaced and any later one removed (python-dotenv would
    read the last); a new name is added at the end.

    :returns: the file written.
    :raises ValueError: *name* is not a valid variable name, or *value* cannot be written so
        that it reads back whole (see the module's docstring).
    :raises ConfigError: the file cannot be read or written.
    """
    _check_name(name)
    entry = _entry(name, value) + "\n"
    parts: list[str] = []
    replaced = False
    for binding in _bindings(_read_text(home)):
        if binding.key != name:
            parts.append(binding.original.string)
        elif not replaced:
            parts.append(entry)
            replaced = True
    if not replaced:
        if parts and not parts[-1].endswith(("\n", "\r")):
            parts.append("\n")
        parts.append(entry)
    return _write_text(home, "".join(parts))


def remove_env_value(home: Path, name: str) -> bool:
    """Remove every ``name=...`` line from ``$HERMES_HOME/.env``; return whether there was one.

    :raises ValueError: *name* is not a valid variable name.
    :raises ConfigError: the file cannot be read or written.
    """
    _check_name(name)
    bindings = list(_bindings(_read_text(home)))
    kept = [b.original.string for b in bindings if b.key != name]
    if len(kept) == len(bindings):
        return False
    _write_text(home, "".join(kept))
    return True


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(
            f"invalid environment variable name {name!r}: expected [A-Za-z_][A-Za-z0-9_]*"
        )


def _read_text(home: Path) -> str:
    path = env_file_path(home)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the environment file: {exc}") from exc


def _write_text(home: Path, text: str) -> Path:
    """Replace ``$HERMES_HOME/.env`` with ``text``, atomically and private (0600)."""
    path = env_file_path(home)
    try:
        home.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=home, prefix=f"{ENV_FILENAME}.", suffix=".tmp")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the environment file: {exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(tmp_name, 0o600)
        os.replace(tmp_name, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise ConfigError(f"{path}: cannot write the environment file: {exc}") from exc
        raise
    return path

"""``$HERMES_HOME/.env``: values for plugins' ``requires_env``, kept out of ``config.yaml``.

The format is the common subset of dotenv files: ``NAME=value`` lines, an optional ``export``
prefix, ``#`` comments, and values in single or double quotes. Writes are atomic and the file
is private (0600), as Hermes keeps it. Importing this module reads nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import MutableMapping
from pathlib import Path
from typing import Final

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

_LINE: Final = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")
_NAME: Final = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_PLAIN: Final = re.compile(r"\A[A-Za-z0-9_./:@+,-]*\Z")


def env_file_path(home: Path) -> Path:
    """Return the path of the ``.env`` file inside *home*."""
    return home / ENV_FILENAME


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1]
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return re.sub(r'\\(["\\$`])', r"\1", raw[1:-1]).replace("\\n", "\n")
    return raw.split(" #", 1)[0].rstrip()


def _quote(value: str) -> str:
    if _PLAIN.match(value):
        return value
    escaped = re.sub(r'(["\\$`])', r"\\\1", value).replace("\n", "\\n")
    return f'"{escaped}"'


def read_env_file(home: Path) -> dict[str, str]:
    """Return the variables in ``$HERMES_HOME/.env``; a missing file gives ``{}``.

    Lines that are not ``NAME=value`` are skipped, as shells and dotenv readers skip them.

    :raises ConfigError: the file exists but cannot be read.
    """
    path = env_file_path(home)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the environment file: {exc}") from exc
    values: dict[str, str] = {}
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        match = _LINE.match(line)
        if match is not None:
            values[match.group(1)] = _unquote(match.group(2))
    return values


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

    :returns: the file written.
    :raises ValueError: *name* is not a valid variable name.
    :raises ConfigError: the file cannot be read or written.
    """
    _check_name(name)
    lines = _read_lines(home)
    entry = f"{name}={_quote(value)}"
    for index, line in enumerate(lines):
        if _defines(line, name):
            lines[index] = entry
            break
    else:
        lines.append(entry)
    return _write_lines(home, lines)


def remove_env_value(home: Path, name: str) -> bool:
    """Remove every ``name=...`` line from ``$HERMES_HOME/.env``; return whether there was one.

    :raises ValueError: *name* is not a valid variable name.
    :raises ConfigError: the file cannot be read or written.
    """
    _check_name(name)
    lines = _read_lines(home)
    kept = [line for line in lines if not _defines(line, name)]
    if len(kept) == len(lines):
        return False
    _write_lines(home, kept)
    return True


def _check_name(name: str) -> None:
    if not _NAME.match(name):
        raise ValueError(
            f"invalid environment variable name {name!r}: expected [A-Za-z_][A-Za-z0-9_]*"
        )


def _defines(line: str, name: str) -> bool:
    match = _LINE.match(line)
    return match is not None and match.group(1) == name and not line.lstrip().startswith("#")


def _read_lines(home: Path) -> list[str]:
    path = env_file_path(home)
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the environment file: {exc}") from exc


def _write_lines(home: Path, lines: list[str]) -> Path:
    """Replace ``$HERMES_HOME/.env`` with ``lines``, atomically and private (0600)."""
    path = env_file_path(home)
    try:
        home.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=home, prefix=f"{ENV_FILENAME}.", suffix=".tmp")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the environment file: {exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write("\n".join(lines) + "\n" if lines else "")
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

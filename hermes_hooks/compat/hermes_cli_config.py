"""Hermes' ``hermes_cli.config``: the current home's ``config.yaml`` and ``.env``.

``load_config()`` is the user's file with ``${VAR}`` references expanded (Hermes also merges
its own defaults; this host has none to merge), never raising for a broken file: it logs and
gives ``{}``, as Hermes falls back. ``save_config()`` writes atomically under the config lock,
keeps the ``${VAR}`` references a loaded config expanded, and refuses to replace a file that
is not valid YAML. ``.env`` values are read and written with the same rules as
``hermes plugins install``.
"""

from __future__ import annotations

import copy
import logging
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from hermes_hooks.compat.current import current_home
from hermes_hooks.compat.hermes_constants import get_hermes_home
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins import config as _config, envfile as _envfile

__all__ = [
    "cfg_get",
    "get_config_path",
    "get_env_path",
    "get_env_value",
    "get_hermes_home",
    "load_config",
    "load_config_readonly",
    "read_raw_config",
    "remove_env_value",
    "save_config",
    "save_env_value",
]

logger = logging.getLogger(__name__)

_REFERENCE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

ENV_WRITE_DENYLIST: Final = frozenset(
    {
        "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
        "DYLD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "NODE_OPTIONS",
        "PATH", "SHELL", "BROWSER", "EDITOR", "VISUAL", "PAGER", "GIT_SSH_COMMAND",
        "HERMES_HOME", "HERMES_SAFE_MODE", "HERMES_ENABLE_PROJECT_PLUGINS",
        "HERMES_BUNDLED_PLUGINS", "HERMES_PLUGINS_STRICT",
    }
)  # fmt: skip
"""Names ``save_env_value`` refuses, as Hermes does: they change how the next process runs."""


def get_config_path() -> Path:
    """Return the current home's ``config.yaml``."""
    return _config.config_path(current_home())


def get_env_path() -> Path:
    """Return the current home's ``.env``."""
    return _envfile.env_file_path(current_home())


def _expand(value: Any) -> Any:
    if isinstance(value, str):
        return _REFERENCE.sub(lambda m: os.environ.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {key: _expand(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_expand(item) for item in value]
    return value


def read_raw_config() -> dict[str, Any]:
    """Return ``config.yaml`` as written (``${VAR}`` kept); ``{}`` when missing or broken."""
    try:
        return _config.load_config(current_home())
    except ConfigError as exc:
        logger.warning("hermes_cli.config: %s; using an empty config", exc)
        return {}


def load_config() -> dict[str, Any]:
    """Return ``config.yaml`` with ``${VAR}`` expanded (a fresh copy the caller may change).

    An unset variable keeps its ``${VAR}`` text. A missing or broken file gives ``{}``.
    """
    expanded: dict[str, Any] = _expand(read_raw_config())
    return expanded


def load_config_readonly() -> dict[str, Any]:
    """Return what :func:`load_config` returns (here too a fresh copy)."""
    return load_config()


def cfg_get(cfg: Mapping[str, Any] | None, *keys: str, default: Any = None) -> Any:
    """Return ``cfg[k1][k2]...``, or ``default`` on any missing key or non-mapping on the way.

    An explicit ``None`` value is returned as is.
    """
    if not isinstance(cfg, Mapping):
        return default
    node: Any = cfg
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return node


def _keep_references(new: Any, raw: Any) -> Any:
    """Put back the ``${VAR}`` text of ``raw`` wherever ``new`` holds its expansion."""
    if isinstance(raw, str) and isinstance(new, str) and _REFERENCE.search(raw):
        return raw if _expand(raw) == new else new
    if isinstance(raw, dict) and isinstance(new, dict):
        return {key: _keep_references(value, raw.get(key)) for key, value in new.items()}
    if isinstance(raw, list) and isinstance(new, list) and len(raw) == len(new):
        return [_keep_references(n, r) for n, r in zip(new, raw, strict=True)]
    return new


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            merged[key] = _merge(current, value)
        else:
            merged[key] = value
    return merged


def save_config(
    config: Mapping[str, Any],
    *,
    strip_defaults: bool = True,
    preserve_keys: Iterable[tuple[str, ...]] | None = None,
    merge_existing: bool = False,
) -> None:
    """Write ``config`` as the current home's ``config.yaml``, atomically.

    :param merge_existing: deep-merge the file's current content under ``config``, so a
        partial ``config`` drops nothing.
    :param strip_defaults: accepted as Hermes takes it (there are no defaults to strip).
    :param preserve_keys: accepted as Hermes takes it.
    :raises ConfigError: the current file is not valid YAML (it is never replaced), or a
        value cannot be written.
    """
    new = copy.deepcopy(dict(config))

    def replace(current: dict[str, Any]) -> None:
        wanted = _merge(current, new) if merge_existing else new
        wanted = _keep_references(wanted, current)
        current.clear()
        current.update(wanted)

    _config.update_config(current_home(), replace)


def get_env_value(key: str) -> str | None:
    """Return ``key`` from the environment, else from the current home's ``.env``, or ``None``."""
    value = os.environ.get(key)
    if value is not None:
        return value
    try:
        return _envfile.read_env_file(current_home()).get(key)
    except ConfigError as exc:
        logger.warning("hermes_cli.config: %s", exc)
        return None


def save_env_value(key: str, value: str) -> None:
    """Set ``key=value`` in the current home's ``.env`` (atomically, 0600) and in ``os.environ``.

    :raises ValueError: ``key`` is not a variable name, or one Hermes refuses to persist
        (``PATH``, ``LD_PRELOAD``, ``HERMES_HOME``...).
    :raises ConfigError: the file cannot be written.
    """
    if key in ENV_WRITE_DENYLIST:
        raise ValueError(
            f"environment variable {key!r} changes how the next process runs and is not "
            f"written to .env by plugins; edit {get_env_path()} by hand if you mean it"
        )
    clean = value.replace("\n", "").replace("\r", "")
    _envfile.set_env_value(current_home(), key, clean)
    os.environ[key] = clean


def remove_env_value(key: str) -> bool:
    """Remove ``key`` from the current home's ``.env`` and ``os.environ``; return if it was there.

    :raises ValueError: ``key`` is not a variable name.
    """
    found = _envfile.remove_env_value(current_home(), key)
    os.environ.pop(key, None)
    return found

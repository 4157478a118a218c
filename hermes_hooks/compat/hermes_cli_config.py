"""Hermes' ``hermes_cli.config``: the current home's ``config.yaml`` and ``.env``.

``load_config()`` is the user's file with ``${VAR}`` references expanded (Hermes also merges
its own defaults; this host has none to merge), never raising for a broken file: it logs and
gives ``{}``, as Hermes falls back. ``save_config()`` writes atomically under the config lock,
keeps the ``${VAR}`` references a loaded config expanded, and refuses to replace a file that
is not valid YAML. ``.env`` values are read and written with the same rules as
``hermes plugins install``.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from hermes_hooks.compat.current import current_home
from hermes_hooks.compat.hermes_constants import get_hermes_home
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins import config as _config, envfile as _envfile
from hermes_hooks.plugins.safe_yaml import YAMLLoadError, safe_load_yaml

__all__ = [
    "atomic_config_write",
    "cfg_get",
    "ensure_hermes_home",
    "get_config_path",
    "get_env_path",
    "get_env_value",
    "get_env_value_prefer_dotenv",
    "get_hermes_home",
    "get_managed_system",
    "is_managed",
    "is_provider_enabled",
    "load_env",
    "save_env_value_secure",
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


def atomic_config_write(config_path: Path, data: Any, **kwargs: Any) -> None:
    """Write ``data`` as YAML to ``config_path`` in one step (temp file, fsync, rename).

    Fails closed, as Hermes' does: an existing file that cannot be read or is not valid YAML
    is never replaced. ``kwargs`` go to ``yaml.safe_dump`` (``sort_keys``...).

    :raises ConfigError: the existing file is unreadable or broken, or the write failed.
    """
    path = Path(config_path)
    if path.exists():
        try:
            safe_load_yaml(path.read_bytes(), source=str(path))
        except (OSError, YAMLLoadError) as exc:
            raise ConfigError(f"{path}: not replaced, it cannot be read as YAML: {exc}") from exc
    options: dict[str, Any] = {"default_flow_style": False, "sort_keys": False, **kwargs}
    text = yaml.safe_dump(data, **options)
    temp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
        ) as handle:
            temp = handle.name
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o7777)
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise ConfigError(f"{path}: cannot be written: {exc}") from exc


_HOME_DIRS: Final = (
    "cron", "sessions", "logs", "logs/curator", "memories", "pairing", "hooks", "image_cache",
    "audio_cache", "skills",
)  # fmt: skip


def ensure_hermes_home() -> None:
    """Create the current home and Hermes' folders in it (``cron``, ``sessions``...), 0700.

    :raises FileNotFoundError: the home is a named profile's (``.../profiles/NAME``) that does
        not exist: profiles are created explicitly, as in Hermes.
    """
    home = current_home()
    if home.parent.name == "profiles" and not home.exists():
        raise FileNotFoundError(
            f"Named profile home does not exist: {home}. "
            "Create the profile explicitly before using it."
        )
    for folder in (home, *(home / sub for sub in _HOME_DIRS)):
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            folder.chmod(0o700)


_MANAGED_NAMES: Final = {
    "brew": "Homebrew",
    "homebrew": "Homebrew",
    "nix": "NixOS",
    "nixos": "NixOS",
}


def get_managed_system() -> str | None:
    """Return the package manager that owns the install (``$HERMES_MANAGED``, a ``.managed``
    file in the home), else ``None``."""
    raw = os.environ.get("HERMES_MANAGED", "").strip()
    if raw:
        if raw.lower() in {"true", "1", "yes"}:
            return "NixOS"
        return _MANAGED_NAMES.get(raw.lower(), raw)
    return "NixOS" if (current_home() / ".managed").exists() else None


def is_managed() -> bool:
    """Return whether a package manager owns the install (see :func:`get_managed_system`)."""
    return get_managed_system() is not None


def is_provider_enabled(provider_cfg: Any) -> bool:
    """Return whether a ``providers.<name>`` block is enabled: only ``enabled: false`` (or
    ``"false"``, ``"no"``, ``"off"``, ``"0"``) turns it off; a non-mapping counts as on."""
    if not isinstance(provider_cfg, Mapping):
        return True
    flag = provider_cfg.get("enabled", True)
    if isinstance(flag, str):
        return flag.strip().lower() not in {"false", "0", "no", "off"}
    return bool(flag)


def load_env() -> dict[str, str]:
    """Return the current home's ``.env`` as a mapping (``{}`` when missing or unreadable)."""
    try:
        return dict(_envfile.read_env_file(current_home()))
    except ConfigError as exc:
        logger.warning("hermes_cli.config: %s", exc)
        return {}


def get_env_value_prefer_dotenv(key: str) -> str | None:
    """Return ``key`` from the home's ``.env`` first, else the environment, else ``None``.

    For credentials: a key rotated in ``.env`` wins over a stale one inherited from the shell.
    """
    value = load_env().get(key)
    return value if value else os.environ.get(key)


def save_env_value_secure(key: str, value: str) -> dict[str, Any]:
    """Save a credential as :func:`save_env_value` does; return Hermes' result shape.

    :returns: ``{"success": True, "stored_as": key, "validated": False}``.
    """
    save_env_value(key, value)
    return {"success": True, "stored_as": key, "validated": False}


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

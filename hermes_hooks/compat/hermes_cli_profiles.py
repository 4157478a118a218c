"""Hermes' ``hermes_cli.profiles``, the read side plugins use: which profile is running, and the
others.

Hermes keeps each named profile as a home of its own, ``<root>/profiles/<name>/``, beside the
default one, the root (``~/.hermes``, or ``$HERMES_HOME`` outside it). These functions read
that layout; creating, deleting, exporting and switching profiles is Hermes' own CLI and is not
served (``write_profile_meta`` aside, which edits a profile's ``profile.yaml``).
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any, Final

import attrs
import yaml

from hermes_hooks.compat.current import current_home
from hermes_hooks.compat.hermes_constants import get_default_hermes_root
from hermes_hooks.plugins.safe_yaml import YAMLLoadError, safe_load_yaml

__all__ = [
    "ProfileInfo",
    "get_active_profile",
    "get_active_profile_name",
    "get_profile_dir",
    "list_profiles",
    "normalize_profile_name",
    "profile_exists",
    "read_profile_meta",
    "validate_profile_name",
    "write_profile_meta",
]

_PROFILE_ID: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_RESERVED: Final = frozenset({"hermes", "default", "test", "tmp", "root", "sudo"})


def _get_default_hermes_home() -> Path:
    """Hermes' private name: the root, the default profile's home."""
    return get_default_hermes_root()


def _profiles_root() -> Path:
    return _get_default_hermes_home() / "profiles"


def normalize_profile_name(name: str) -> str:
    """Return the profile id as stored: stripped, lower case (``Default`` is ``default``).

    :raises ValueError: the name is empty.
    """
    stripped = str(name).strip()
    if not stripped:
        raise ValueError("profile name cannot be empty")
    return "default" if stripped.casefold() == "default" else stripped.lower()


def validate_profile_name(name: str) -> None:
    """Refuse a name that is not a profile id (``[a-z0-9][a-z0-9_-]{0,63}``) or is reserved.

    :raises ValueError: it is not; ``default`` passes (the root's own profile).
    """
    if name == "default":
        return
    if not _PROFILE_ID.match(name):
        raise ValueError(f"Invalid profile name {name!r}. Must match [a-z0-9][a-z0-9_-]{{0,63}}")
    if name in _RESERVED:
        raise ValueError(f"Profile name {name!r} is reserved. Pick a different name.")


def get_profile_dir(name: str) -> Path:
    """Return a profile's home: the root for ``default``, else ``<root>/profiles/<name>``."""
    canon = normalize_profile_name(name)
    return _get_default_hermes_home() if canon == "default" else _profiles_root() / canon


def profile_exists(name: str) -> bool:
    """Return whether the profile's home exists (``default`` always does)."""
    canon = normalize_profile_name(name)
    return canon == "default" or get_profile_dir(canon).is_dir()


def get_active_profile() -> str:
    """Return the sticky profile ``<root>/active_profile`` names, ``default`` without one."""
    try:
        name = (_get_default_hermes_home() / "active_profile").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return "default"
    return name or "default"


def get_active_profile_name() -> str:
    """Return the profile the current home is: ``default`` (the root), its name (a home
    ``<root>/profiles/<name>``), or ``custom`` (any other folder)."""
    home = current_home().resolve()
    if home == _get_default_hermes_home().resolve():
        return "default"
    try:
        parts = home.relative_to(_profiles_root().resolve()).parts
    except ValueError:
        return "custom"
    return parts[0] if len(parts) == 1 and _PROFILE_ID.match(parts[0]) else "custom"


def _yaml(path: Path) -> Any:
    try:
        return safe_load_yaml(path.read_bytes(), source=str(path))
    except (OSError, YAMLLoadError):
        return None


def read_profile_meta(profile_dir: Path) -> dict[str, Any]:
    """Return ``{"description", "description_auto"}`` of ``<profile_dir>/profile.yaml``
    (empty and ``False`` when it is missing or unreadable; never raises)."""
    data = _yaml(Path(profile_dir) / "profile.yaml")
    if not isinstance(data, dict):
        return {"description": "", "description_auto": False}
    return {
        "description": str(data.get("description") or "").strip(),
        "description_auto": bool(data.get("description_auto", False)),
    }


def write_profile_meta(
    profile_dir: Path, *, description: str | None = None, description_auto: bool | None = None
) -> None:
    """Set the fields given in ``<profile_dir>/profile.yaml``, keeping the others.

    :raises FileNotFoundError: the profile's home does not exist.
    """
    folder = Path(profile_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"profile directory does not exist: {folder}")
    path = folder / "profile.yaml"
    loaded = _yaml(path) if path.is_file() else None
    existing: dict[str, Any] = dict(loaded) if isinstance(loaded, dict) else {}
    if description is not None:
        existing["description"] = description.strip()
    if description_auto is not None:
        existing["description_auto"] = bool(description_auto)
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(yaml.safe_dump(existing, sort_keys=False), encoding="utf-8")
    temp.replace(path)


@attrs.define
class ProfileInfo:
    """What :func:`list_profiles` knows of one profile."""

    name: str
    path: Path
    is_default: bool
    gateway_running: bool
    model: str | None = None
    provider: str | None = None
    has_env: bool = False
    skill_count: int = 0
    alias_path: Path | None = None
    alias_name: str | None = None
    distribution_name: str | None = None
    distribution_version: str | None = None
    distribution_source: str | None = None
    description: str = ""
    description_auto: bool = False


def _model_of(home: Path) -> tuple[str | None, str | None]:
    config = _yaml(home / "config.yaml")
    model = config.get("model") if isinstance(config, dict) else None
    if isinstance(model, str):
        return model, None
    if isinstance(model, dict):
        name = model.get("default") or model.get("model") or model.get("name")
        provider = model.get("provider")
        return (str(name) if name else None), (str(provider) if provider else None)
    return None, None


def _gateway_running(home: Path) -> bool:
    state = None
    with contextlib.suppress(OSError, ValueError):
        state = json.loads((home / "gateway_state.json").read_text(encoding="utf-8"))
    return isinstance(state, dict) and state.get("gateway_state") == "running"


def _info(name: str, home: Path, is_default: bool) -> ProfileInfo:
    model, provider = _model_of(home)
    meta = read_profile_meta(home)
    skills = home / "skills"
    count = sum(1 for _ in skills.rglob("SKILL.md")) if skills.is_dir() else 0
    return ProfileInfo(
        name=name,
        path=home,
        is_default=is_default,
        gateway_running=_gateway_running(home),
        model=model,
        provider=provider,
        has_env=(home / ".env").exists(),
        skill_count=count,
        description=meta["description"],
        description_auto=meta["description_auto"],
    )


def list_profiles() -> list[ProfileInfo]:
    """Return the default profile (when its home exists), then each named one, by name."""
    found: list[ProfileInfo] = []
    root = _get_default_hermes_home()
    if root.is_dir():
        found.append(_info("default", root, True))
    profiles = _profiles_root()
    if profiles.is_dir():
        for entry in sorted(profiles.iterdir()):
            if entry.is_dir() and entry.name != "default" and _PROFILE_ID.match(entry.name):
                found.append(_info(entry.name, entry, False))
    return found

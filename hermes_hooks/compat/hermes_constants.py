"""Hermes' ``hermes_constants``: the Hermes home folder, and paths under it.

``get_hermes_home()`` is the current manager's home (the one loading or calling the plugin),
else ``$HERMES_HOME``, else ``~/.hermes``: what Hermes' context override, environment and
default give it.
"""

from __future__ import annotations

import os
from pathlib import Path

from hermes_hooks.compat.current import current_home

__all__ = ["display_hermes_home", "get_hermes_dir", "get_hermes_home"]


def get_hermes_home() -> Path:
    """Return the Hermes home folder (not created)."""
    return current_home()


def _has_content(path: Path) -> bool:
    try:
        if path.is_file():
            return True
        if not path.is_dir():
            return False
        with os.scandir(path) as entries:
            return any(True for _ in entries)
    except OSError:
        return True  # cannot tell: assume it is in use, never orphan data


def get_hermes_dir(new_subpath: str, old_name: str, *, home: Path | None = None) -> Path:
    """Return ``<home>/<old_name>`` when that legacy path holds something, else the new one.

    An empty legacy folder does not count (an install scaffold must not shadow real data).
    """
    base = home if home is not None else get_hermes_home()
    old = base / old_name
    return old if _has_content(old) else base / new_subpath


def display_hermes_home() -> str:
    """Return the home for people: ``~/.hermes``, ``~/.hermes/profiles/coder`` or a full path."""
    home = get_hermes_home()
    try:
        return "~/" + str(home.relative_to(Path.home()))
    except ValueError:
        return str(home)

"""Hermes' plugins import themselves by package path: ``plugins.<key>`` and its submodules.

In Hermes the repository's ``plugins/`` folder is a package, so the bundled Spotify plugin
writes ``from plugins.spotify.tools import ...`` and a web search backend
``plugins.web.tavily.provider``. Here a plugin is imported as ``hermes_plugins.<slug>``
(:mod:`hermes_hooks.plugins.loading`), wherever it came from. This module resolves
``plugins.<a>[.<b>...]`` to the very module objects already loaded (or being loaded):

- ``plugins.<key>`` (``/`` in a key becomes ``.``: ``plugins.web.tavily``) is the plugin's own
  module, including while its ``__init__.py`` still runs, so no second copy exists and its
  ``register`` never runs twice;
- ``plugins.<key>.<sub>`` is the plugin's submodule ``hermes_plugins.<slug>.<sub>``, imported
  through the plugin's package the usual way;
- ``plugins.<category>`` is a package standing for a category folder of loaded plugins;
- a shared helper module that is no plugin (``plugins/image_gen/_common.py``,
  ``plugins/plugin_utils.py``) is imported from the bundled or the user plugins folder; a
  folder with a manifest is never imported this way, so a plugin nobody enabled never runs.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import types
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hermes_hooks.plugins import active
from hermes_hooks.plugins.discovery import bundled_plugins_dir
from hermes_hooks.plugins.manifest import find_manifest

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "CATEGORY_MARK",
    "PLATFORMS",
    "find_plugin_module",
    "helper_location",
    "is_category",
    "key_of",
]

CATEGORY_MARK = "__hermes_plugins_category__"
"""The attribute a ``plugins.<category>`` package carries: the category's key prefix."""


def key_of(fullname: str) -> str:
    """Return the plugin key a ``plugins.<...>`` name stands for: ``plugins.web.x`` → ``web/x``."""
    return "/".join(fullname.split(".")[1:])


def _managers() -> Iterator[PluginManager]:
    current = active.current_manager()
    if current is not None:
        yield current
    for manager in active.live_managers():
        if manager is not current:
            yield manager


PLATFORMS = "platforms"
"""Hermes ships its platform plugins as ``plugins/platforms/<name>/``: ``plugins.platforms.<name>``
is the loaded ``kind: platform`` plugin whose folder is ``<name>``, wherever it was installed."""


def _platform_plugins(manager: PluginManager) -> Iterator[tuple[str, types.ModuleType]]:
    """The loaded (or loading) ``kind: platform`` plugins of ``manager``: folder name, module."""
    for key in manager.loaded_keys():
        manifest = manager.get_manifest(key)
        module = manager.get_plugin_module(key)
        where = getattr(module, "__file__", None)
        if manifest is not None and manifest.kind == "platform" and module and where:
            yield Path(where).parent.name, module


def find_plugin_module(key: str) -> types.ModuleType | None:
    """Return the module of loaded (or loading) plugin ``key``, the current manager's first."""
    for manager in _managers():
        module = manager.get_plugin_module(key)
        if module is not None:
            return module
    category, _, folder = key.partition("/")
    if category == PLATFORMS and folder and "/" not in folder:
        for manager in _managers():
            for name, module in _platform_plugins(manager):
                if name == folder:
                    return module
    return None


def is_category(prefix: str) -> bool:
    """Tell whether ``prefix`` is the category of a loaded plugin (``web`` for ``web/tavily``;
    ``platforms`` while a platform plugin is loaded)."""
    start = prefix + "/"
    if any(k.startswith(start) for m in _managers() for k in m.loaded_keys()):
        return True
    return prefix == PLATFORMS and any(
        True for manager in _managers() for _ in _platform_plugins(manager)
    )


def _roots() -> Iterator[Path]:
    yield bundled_plugins_dir()
    seen: set[Path] = set()
    for manager in _managers():
        root = manager.hermes_home / "plugins"
        if root not in seen:
            seen.add(root)
            yield root


def helper_location(key: str) -> tuple[Path, bool] | None:
    """Return ``(file, is_package)`` of a helper module ``key`` (``image_gen/_common``).

    Looked for in the bundled and user plugin folders (never the project's, whose files are
    trusted only as hashed plugins). A folder with a manifest is a plugin, not a helper.
    """
    for root in _roots():
        base = root.joinpath(*key.split("/"))
        if base.with_suffix(".py").is_file() and base.name.isidentifier():
            return base.with_suffix(".py"), False
        if (base / "__init__.py").is_file() and find_manifest(base) is None:
            return base / "__init__.py", True
    return None


def helper_spec(fullname: str) -> importlib.machinery.ModuleSpec | None:
    """Return the spec of the helper module ``fullname`` stands for, or ``None``."""
    found = helper_location(key_of(fullname))
    if found is None:
        return None
    path, package = found
    locations = [str(path.parent)] if package else None
    return importlib.util.spec_from_file_location(
        fullname, path, submodule_search_locations=locations
    )

"""Dashboard plugins as Hermes has them: a plugin folder's ``dashboard/manifest.json``.

The manifest names the tab (``name``, ``label``, ``icon``, ``description``, ``version``,
``tab.path``, ``tab.position``), its script ``entry`` and ``css`` (files of the ``dashboard/``
folder, served under ``/dashboard-plugins/<name>/``) and an ``api`` module (a file of that
folder, imported by path) whose FastAPI ``router`` is mounted at ``/api/plugins/<name>/``
behind the dashboard's auth. A manifest that cannot be read, or an API module that fails to
import or has no router, leaves its tab listed with the error; the rest of the dashboard works.

The API module is Python the dashboard runs, so Hermes' trust gates apply: a project plugin's
(``./.hermes/plugins``) is never imported (its tab may still draw from its static files), and a
user or pip-installed plugin's only once config enables the plugin; a bundled one's always.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import re
import sys
import traceback
import types
from pathlib import Path
from typing import Any

import attrs

from hermes_hooks.plugins import extensions
from hermes_hooks.plugins.manager import PluginManager

__all__ = ["DashboardTab", "discover_tabs", "import_api", "safe_asset"]

logger = logging.getLogger(__name__)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MANIFEST = Path("dashboard") / "manifest.json"


@attrs.define
class DashboardTab:
    """One plugin's tab: what its manifest says, and what went wrong, if anything."""

    name: str
    plugin: str
    folder: Path
    label: str = ""
    icon: str = ""
    description: str = ""
    version: str = ""
    path: str = ""
    position: str = "end"
    entry: str | None = None
    css: str | None = None
    api: str | None = None
    error: str | None = None
    api_error: str | None = None
    mounted: bool = False
    source: str = "user"
    enabled: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Return what the page needs (no file system path)."""
        return {
            "name": self.name,
            "plugin": self.plugin,
            "label": self.label or self.name,
            "icon": self.icon,
            "description": self.description,
            "version": self.version,
            "path": self.path,
            "position": self.position,
            "entry": f"/dashboard-plugins/{self.name}/{self.entry}" if self.entry else None,
            "css": f"/dashboard-plugins/{self.name}/{self.css}" if self.css else None,
            "api": f"/api/plugins/{self.name}/" if self.api else None,
            "mounted": self.mounted,
            "error": self.error or self.api_error,
        }


def _text(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where}: field {key!r} must be a string, found {type(value).__name__}")
    return value


def _read(plugin: str, folder: Path, source: str, enabled: bool) -> DashboardTab:
    manifest = folder / MANIFEST
    where = str(manifest)
    tab = DashboardTab(
        name=folder.name, plugin=plugin, folder=folder / "dashboard", source=source, enabled=enabled
    )
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object, found {type(data).__name__}")
        name = _text(data, "name", where) or folder.name
        if not _NAME.match(name):
            raise ValueError(f"{where}: field 'name' must be a plain name, found {name!r}")
        tab.name = name
        tab.label = _text(data, "label", where) or name
        tab.icon = _text(data, "icon", where) or ""
        tab.description = _text(data, "description", where) or ""
        tab.version = str(data.get("version", "") or "")
        found_tab = data.get("tab")
        raw_tab: dict[str, Any] = found_tab if isinstance(found_tab, dict) else {}
        tab.path = str(raw_tab.get("path") or f"/{name}")
        tab.position = str(raw_tab.get("position") or "end")
        for field in ("entry", "css", "api"):
            value = _text(data, field, where)
            if value is not None and safe_asset(tab.folder, value) is None:
                raise ValueError(
                    f"{where}: field {field!r} must name a file of its folder, found {value!r}"
                )
            setattr(tab, field, value)
    except (OSError, ValueError) as exc:
        tab.error = str(exc) if str(exc).startswith(where) else f"{where}: {exc}"
    return tab


def discover_tabs(pm: PluginManager) -> list[DashboardTab]:
    """Return the tab of every discovered plugin with a ``dashboard/manifest.json``, by the
    order of discovery; a name taken by an earlier plugin is skipped, as Hermes does."""
    from hermes_hooks.admin.actions import is_effectively_enabled

    seen: set[str] = set()
    tabs: list[DashboardTab] = []
    config = pm.plugins_config
    folders: set[Path] = set()

    def add(tab: DashboardTab) -> None:
        if tab.name in seen:
            logger.warning("dashboard: plugin %r's tab %r is taken; skipped", tab.plugin, tab.name)
            return
        seen.add(tab.name)
        tabs.append(tab)

    for candidate in pm.discover():
        if candidate.path is None:
            continue
        folder = Path(candidate.path)
        folder = folder if folder.is_dir() else folder.parent
        folders.add(folder.resolve())
        if not (folder / MANIFEST).is_file():
            continue
        add(
            _read(
                candidate.key,
                folder,
                str(candidate.source),
                is_effectively_enabled(config, candidate),
            )
        )
    for folder, source in _dashboard_only_folders(pm):
        if folder.resolve() in folders:
            continue
        tab = _read(folder.name, folder, source, False)
        names = {folder.name, tab.name}
        tab.enabled = not (names & config.disabled) and (
            source == "bundled" or bool(names & config.enabled)
        )
        add(tab)
    return tabs


def _dashboard_only_folders(pm: PluginManager) -> list[tuple[Path, str]]:
    """The folders with a ``dashboard/manifest.json`` and no plugin manifest or code (Hermes'
    ``hermes-achievements``): the direct children of the user plugins folder, of the bundled
    one and of its ``memory/``, as Hermes' dashboard scans them (a symlinked folder is followed,
    as a user plugin's is; its assets stay confined to the folder it resolves to)."""
    from hermes_hooks.plugins.discovery import bundled_plugins_dir

    bundled = bundled_plugins_dir()
    roots = [
        (pm.hermes_home / "plugins", "user"),
        (bundled / "memory", "bundled"),
        (bundled, "bundled"),
    ]
    found = []
    for root, source in roots:
        try:
            children = sorted(root.iterdir()) if root.is_dir() else []
        except OSError:
            continue
        for child in children:
            if child.is_dir() and (child / MANIFEST).is_file():
                found.append((child, source))
    return found


def import_api(tab: DashboardTab) -> types.ModuleType | None:
    """Import a tab's API module by path; on failure set ``tab.api_error`` and return ``None``."""
    if tab.api is None or tab.error is not None:
        return None
    if tab.source == "project":
        tab.api_error = (
            f"plugin {tab.plugin!r} is a project plugin: its dashboard API is never "
            "imported (its files come with the folder you are in)"
        )
        return None
    if tab.source != "bundled" and not tab.enabled:
        tab.api_error = (
            f"plugin {tab.plugin!r} is not enabled: its dashboard API is imported "
            f"once it is ('hermes plugins enable {tab.plugin}')"
        )
        return None
    path = safe_asset(tab.folder, tab.api)
    if path is None or not path.is_file():
        tab.api_error = f"{tab.folder / str(tab.api)}: the API module named by 'api' is missing"
        return None
    extensions.install_import_finder()  # its `from hermes_constants import ...` is served
    module_name = "hermes_dashboard_plugin_" + re.sub(r"\W", "_", tab.name)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        tab.api_error = f"{path}: cannot be imported"
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(module_name, None)
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        line = f" (line {last[0].lineno})" if last else ""
        tab.api_error = f"{path}{line}: its API failed to import: {type(exc).__name__}: {exc}"
        logger.warning("dashboard: plugin %r: %s", tab.plugin, tab.api_error)
        return None
    if getattr(module, "router", None) is None:
        tab.api_error = f"{path}: defines no 'router' (a fastapi.APIRouter)"
        return None
    return module


def safe_asset(folder: Path, relative: str) -> Path | None:
    """Return ``folder/relative`` when it stays inside ``folder`` (no ``..``, no absolute
    path, no symlink out), else ``None``."""
    if not relative or "\x00" in relative or relative.startswith(("/", "\\")):
        return None
    try:
        root = folder.resolve()
        target = (root / relative).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    return target if target.is_relative_to(root) and target != root else None

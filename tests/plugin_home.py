"""A throw-away Hermes home with real plugin folders, for the registry and ``ctx`` tests.

Imported by the test modules (pytest puts ``tests/`` on ``sys.path``); no fixtures live here so
that each test module pairs set-up and tear-down in its own small fixture.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_hooks.manager import PluginInfo, PluginManager

_CLEARED_ENV = (
    "HERMES_HOME",
    "HERMES_SAFE_MODE",
    "HERMES_PLUGINS_STRICT",
    "HERMES_PLUGINS_DEBUG",
    "HERMES_ENABLE_PROJECT_PLUGINS",
)


class PluginHome:
    """A ``HERMES_HOME`` under ``tmp_path`` whose plugins are written by the test.

    :param root: the folder to use as the Hermes home.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.plugins = root / "plugins"
        self.plugins.mkdir(parents=True)
        self.enabled: list[str] = []
        self.entries: dict[str, dict[str, Any]] = {}
        self.managers: list[PluginManager] = []

    def add_plugin(
        self,
        key: str,
        code: str,
        *,
        manifest: Mapping[str, Any] | None = None,
        enable: bool = True,
        files: Mapping[str, str] | None = None,
    ) -> Path:
        """Write ``plugins/<key>/{plugin.yaml,__init__.py}`` and return the plugin folder.

        :param key: ``name`` or ``category/name``.
        :param code: the body of ``__init__.py`` (dedented).
        :param manifest: extra manifest fields (``name`` defaults to the last part of the key).
        :param files: more files to write inside the plugin folder, by relative path.
        """
        folder = self.plugins / key
        folder.mkdir(parents=True)
        data: dict[str, Any] = {"name": key.rsplit("/", 1)[-1], "version": "1.0.0"}
        data.update(manifest or {})
        (folder / "plugin.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
        (folder / "__init__.py").write_text(textwrap.dedent(code), encoding="utf-8")
        for relative, text in (files or {}).items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        if enable:
            self.enabled.append(key)
        return folder

    def entry(self, key: str, **values: Any) -> None:
        """Set ``plugins.entries.<key>.<name>: value`` in ``config.yaml``."""
        self.entries.setdefault(key, {}).update(values)

    def write_config(self) -> None:
        """Write ``config.yaml`` with the enabled plugins and the entries set so far."""
        config = {"plugins": {"enabled": list(self.enabled), "entries": self.entries}}
        (self.root / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    def manager(self) -> PluginManager:
        """Return a manager for this home, not loaded yet (unloaded again at tear-down)."""
        pm = PluginManager(self.root)
        self.managers.append(pm)
        return pm

    def load(self) -> PluginManager:
        """Write ``config.yaml``, then return a manager that has discovered and loaded."""
        self.write_config()
        pm = self.manager()
        pm.discover_and_load()
        return pm

    def close(self) -> None:
        """Unload every plugin of every manager made here."""
        for pm in self.managers:
            pm.unload_all()


def make_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginHome:
    """Isolate the environment and return a fresh :class:`PluginHome` under ``tmp_path``."""
    for name in _CLEARED_ENV:
        monkeypatch.delenv(name, raising=False)
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(bundled))
    home = tmp_path / "home"
    monkeypatch.setenv("HERMES_HOME", str(home))
    return PluginHome(home)


def info(pm: PluginManager, key: str) -> PluginInfo:
    """Return the status of plugin ``key``, failing the test when it was not discovered."""
    found = pm.get_plugin_info(key)
    assert found is not None, f"plugin {key!r} was not discovered"
    return found

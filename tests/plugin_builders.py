"""Builders for real plugin folders, config files and installed distributions in a temp dir.

Shared by the discovery, loading and manager tests; every path is under the test's
``tmp_path``, never the real ``~/.hermes``.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml

from hermes_hooks.discovery import ENTRY_POINT_GROUP
from hermes_hooks.manager import PluginManager
from hermes_hooks.registries import HOST, Registry

#: Every environment switch the manager reads; tests start with all of them unset.
HERMES_ENV = (
    "HERMES_HOME",
    "HERMES_SAFE_MODE",
    "HERMES_ENABLE_PROJECT_PLUGINS",
    "HERMES_BUNDLED_PLUGINS",
    "HERMES_PLUGINS_STRICT",
    "HERMES_PLUGINS_DEBUG",
)


def isolate_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Unset the Hermes switches and point bundled plugins at an empty folder; return it."""
    for name in HERMES_ENV:
        monkeypatch.delenv(name, raising=False)
    bundled = tmp_path / "bundled-empty"
    bundled.mkdir(exist_ok=True)
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(bundled))
    return bundled


def manifest_text(name: str, /, **fields: Any) -> str:
    """Return a ``plugin.yaml`` with ``name``, version ``1.0`` and ``fields``."""
    return yaml.safe_dump({"name": name, "version": "1.0"} | fields, sort_keys=False)


def write_plugin(
    root: Path,
    key: str,
    code: str | None = "",
    *,
    manifest: str | Mapping[str, Any] | None = MappingProxyType({}),
    files: Mapping[str, str] | None = None,
) -> Path:
    """Write the plugin folder ``root/key`` and return it.

    :param code: the ``__init__.py`` (dedented); ``None`` writes none.
    :param manifest: the ``plugin.yaml`` text, a mapping of extra fields, or ``None`` for no
        manifest; by default ``name`` (the key's last part) and ``version: 1.0``.
    :param files: more files, by path relative to the folder (dedented).
    """
    folder = root / key
    folder.mkdir(parents=True, exist_ok=True)
    name = key.rsplit("/", 1)[-1]
    if isinstance(manifest, str):
        (folder / "plugin.yaml").write_text(manifest, encoding="utf-8")
    elif manifest is not None:
        (folder / "plugin.yaml").write_text(manifest_text(name, **dict(manifest)), "utf-8")
    if code is not None:
        (folder / "__init__.py").write_text(textwrap.dedent(code), encoding="utf-8")
    for relative, text in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def write_config(
    home: Path, enabled: Iterable[str] = (), disabled: Iterable[str] = (), **plugins: Any
) -> None:
    """Write ``home/config.yaml`` with a ``plugins:`` section."""
    home.mkdir(parents=True, exist_ok=True)
    section: dict[str, Any] = {"enabled": list(enabled), "disabled": list(disabled), **plugins}
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": section}), encoding="utf-8")


def load(home: Path, *, strict: bool = False, cwd: Path | None = None) -> PluginManager:
    """Return a manager for ``home`` that has discovered and loaded its plugins."""
    pm = PluginManager(home, strict=strict, cwd=cwd)
    pm.discover_and_load()
    return pm


def call_hook(pm: PluginManager, name: str, **kwargs: Any) -> Any:
    """Call ``pm.hook.<name>`` with every spec argument (missing ones are ``None``)."""
    argnames = pm.hook_argnames(name)
    assert argnames is not None, f"unknown hook {name!r}"
    return getattr(pm.hook, name)(**{arg: kwargs.get(arg) for arg in argnames})


def plugin_names(registry: Registry[Any]) -> list[str]:
    """Return the names in ``registry`` that plugins own (host entries left out), sorted."""
    return sorted(n for n in registry.names() if registry.owner_of(n) != HOST)


def status_of(pm: PluginManager, key: str) -> tuple[str, str | None]:
    """Return ``(status, error)`` of plugin ``key``."""
    info = pm.get_plugin_info(key)
    assert info is not None, f"plugin {key!r} was not discovered"
    return info.status, info.error


def write_distribution(
    site: Path,
    dist_name: str,
    entry_points: Mapping[str, str],
    files: Mapping[str, str],
    *,
    version: str = "1.0",
    summary: str = "",
) -> Path:
    """Install a distribution the way pip leaves it: its files plus a ``.dist-info`` folder.

    ``importlib.metadata`` finds it once ``site`` is on ``sys.path``.
    """
    for relative, text in files.items():
        path = site / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    info = site / f"{dist_name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    metadata = f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: {version}\n"
    if summary:
        metadata += f"Summary: {summary}\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    lines = [f"[{ENTRY_POINT_GROUP}]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    record = [f"{p},," for p in files] + [f"{info.name}/{n},," for n in ("METADATA", "RECORD")]
    (info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")
    return info


def forget_new_modules(before: set[str], root: Path) -> None:
    """Drop the plugin modules imported since ``before``: ``hermes_plugins.*`` and under ``root``.

    Framework modules imported meanwhile stay, so that their classes keep one identity.
    """
    for name in set(sys.modules) - before:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None) or ""
        if name.startswith("hermes_plugins.") or file.startswith(str(root)):
            del sys.modules[name]


def site_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A ``site-packages``-like folder on ``sys.path``; its modules are forgotten afterwards."""
    site = tmp_path / "site-packages"
    site.mkdir()
    before = set(sys.modules)
    monkeypatch.syspath_prepend(str(site))
    yield site
    forget_new_modules(before, tmp_path)

"""The test suite's one set of builders: an isolated environment, real plugin folders, config
files, managers and installed distributions, all in a temp dir.

Imported by the test modules (pytest puts ``tests/`` on ``sys.path``); every path is under the
test's ``tmp_path``, never the real ``~/.hermes``. The one fixture here, ``home`` (a
:class:`PluginHome`), is imported by the registry and ``ctx`` test modules that use it.
"""

from __future__ import annotations

import os
import sys
import textwrap
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from homes import plugin_home

from hermes_hooks.plugins.discovery import ENTRY_POINT_GROUP
from hermes_hooks.plugins.manager import PluginInfo, PluginManager
from hermes_hooks.registries.base import HOST, Registry
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

home = plugin_home
"""The fixture :func:`homes.plugin_home` under the name these tests give it."""


PRE_TOOL_CALL_KWARGS: Mapping[str, Any] = MappingProxyType(
    {
        "tool_name": "terminal",
        "args": {"x": 0},
        "task_id": "t",
        "session_id": "s",
        "tool_call_id": "c",
        "turn_id": "u",
        "api_request_id": "",
        "middleware_trace": [],
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    }
)
"""Every argument of one ``pre_tool_call``, as a host passes them (``dict(...)`` to change one)."""


def plugin_author_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    """A plugin author's project: its own strict ini, and no pytest plugin but ours.

    ``-p hermes_hooks.testing`` loads it through its entry point (pytest looks one up by that
    name first), as autoloading would, without the other plugins installed here.
    """
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makefile(
        ".ini",
        pytest=(
            "[pytest]\n"
            "addopts = -p hermes_hooks.testing -p no:cacheprovider --strict-markers\n"
            "filterwarnings = error\n"
        ),
    )
    return pytester


def isolate_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Unset every ``HERMES_*`` variable and point bundled plugins at an empty folder; return it."""
    for name in [n for n in os.environ if n.startswith("HERMES_")]:
        monkeypatch.delenv(name)
    bundled = tmp_path / "bundled-empty"
    bundled.mkdir(exist_ok=True)
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(bundled))
    return bundled


def isolated_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, bundled: bool = False
) -> Path:
    """Isolate the environment, point ``HERMES_HOME`` at ``tmp_path/home`` and return it.

    :param bundled: keep the shipped plugins (command-guard, tool-log) discoverable; by
        default the bundled folder is an empty one.
    """
    isolate_environment(monkeypatch, tmp_path)
    if bundled:
        monkeypatch.delenv("HERMES_BUNDLED_PLUGINS")
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HERMES_HOME", str(home))
    return home


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


def user_plugin(home: Path, key: str, code: str | None = "", **kwargs: Any) -> Path:
    """Write plugin ``key`` into ``home/plugins`` (see :func:`write_plugin`) and return it."""
    return write_plugin(home / "plugins", key, code, **kwargs)


def write_config(
    home: Path,
    enabled: Iterable[str] = (),
    disabled: Iterable[str] = (),
    *,
    entries: Mapping[str, Any] | None = None,
    text: str | None = None,
    **sections: Any,
) -> Path:
    """Write ``home/config.yaml`` and return it.

    :param enabled: ``plugins.enabled``.
    :param disabled: ``plugins.disabled``.
    :param entries: ``plugins.entries`` (per-plugin settings).
    :param text: the whole file, verbatim (dedented), instead of the above.
    :param sections: other top-level sections (``model={...}``).
    """
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.yaml"
    if text is None:
        plugins = {"enabled": list(enabled), "disabled": list(disabled)}
        config = {"plugins": plugins | {"entries": dict(entries or {})}, **sections}
        text = yaml.safe_dump(config)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(home: Path, *, strict: bool = False, cwd: Path | None = None) -> PluginManager:
    """Return a manager for ``home`` that has discovered and loaded its plugins."""
    pm = PluginManager(home, strict=strict, cwd=cwd)
    pm.discover_and_load()
    return pm


@contextmanager
def managers() -> Iterator[Callable[..., PluginManager]]:
    """Yield :func:`load`; every manager it made is unloaded on the way out."""
    made: list[PluginManager] = []

    def load_tracked(home: Path, **options: Any) -> PluginManager:
        made.append(PluginManager(home, **options))
        made[-1].discover_and_load()
        return made[-1]

    try:
        yield load_tracked
    finally:
        for pm in made:
            pm.unload_all()


@contextmanager
def shared_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, code: str
) -> Iterator[None]:
    """Make module ``name`` (``code``) importable, for plugins and the test to share state;
    forgotten on the way out."""
    lib = tmp_path / "lib"
    lib.mkdir(exist_ok=True)
    (lib / f"{name}.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(lib))
    try:
        yield
    finally:
        sys.modules.pop(name, None)


def drain_workers() -> None:
    """Wait until every worker thread of bounded hook calls has finished its job, then stop
    them all."""
    import time

    from hermes_hooks.calling import workers

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        workers.shutdown_idle()
        if workers.live_workers() == 0:
            return
        time.sleep(0.01)
    raise AssertionError(f"{workers.live_workers()} worker threads outlived the test")


@contextmanager
def enabled_loader(home: Path) -> Iterator[Callable[..., PluginManager]]:
    """Yield ``load(*keys, strict=False)``: enable exactly ``keys``, load, check each loaded.

    Every manager made is unloaded on the way out.
    """
    with managers() as load_tracked:

        def load_enabled(*keys: str, strict: bool = False) -> PluginManager:
            write_config(home, keys)
            pm = load_tracked(home, strict=strict)
            statuses = {info.key: (info.status, info.error) for info in pm.list_plugins()}
            assert statuses == dict.fromkeys(keys, ("enabled", None))
            return pm

        yield load_enabled


def recording_plugin(home: Path, name: str, source: str, recorder: str) -> Path:
    """Write user plugin ``name``: ``source`` after ``import <recorder> as rec`` and
    ``from hermes_hooks import hookimpl``."""
    header = f"import {recorder} as rec\nfrom hermes_hooks import hookimpl\n"
    return user_plugin(home, name, header + textwrap.dedent(source))


@pytest.fixture
def recorded_loader(home: Path, rec: Any) -> Iterator[Callable[..., PluginManager]]:
    """Enable the named plugins in config.yaml, discover and load them; unload at teardown.

    For a module with a ``home`` and a ``rec`` fixture (the recorder its plugins import);
    import it as ``load``.
    """
    with enabled_loader(home) as load_enabled:
        yield load_enabled


@pytest.fixture
def forget_plugin_modules() -> Iterator[None]:
    """Drop the plugin modules a test's managers imported (import it, ``autouse`` in a module
    with ``pytestmark = pytest.mark.usefixtures("forget_plugin_modules")``)."""
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("hermes_plugins."):
            del sys.modules[name]


def call_hook(pm: PluginManager, name: str, **kwargs: Any) -> Any:
    """Call ``pm.hook.<name>`` with every spec argument (missing ones are ``None``)."""
    argnames = pm.hook_argnames(name)
    assert argnames is not None, f"unknown hook {name!r}"
    unknown = set(kwargs) - set(argnames)
    assert not unknown, f"{name} has no argument {sorted(unknown)}"
    return getattr(pm.hook, name)(**{arg: kwargs.get(arg) for arg in argnames})


def recorder_module(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: Any) -> Any:
    """Put a module ``name`` with ``attrs`` in ``sys.modules`` for plugins to import."""
    module = types.ModuleType(name)
    vars(module).update(attrs)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def plugin_names(registry: Registry[Any]) -> list[str]:
    """Return the names in ``registry`` that plugins own (host entries left out), sorted."""
    return sorted(n for n in registry.names() if registry.owner_of(n) != HOST)


def status_of(pm: PluginManager, key: str) -> tuple[str, str | None]:
    """Return ``(status, error)`` of plugin ``key``."""
    info = pm.get_plugin_info(key)
    assert info is not None, f"plugin {key!r} was not discovered"
    return info.status, info.error


def info(pm: PluginManager, key: str) -> PluginInfo:
    """Return the status of plugin ``key``, failing the test when it was not discovered."""
    found = pm.get_plugin_info(key)
    assert found is not None, f"plugin {key!r} was not discovered"
    return found


class PluginHome:
    """A ``HERMES_HOME`` whose plugins and ``config.yaml`` the test writes step by step.

    :param root: the folder to use as the Hermes home.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.plugins = root / "plugins"
        self.plugins.mkdir(parents=True, exist_ok=True)
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
        """Write plugin ``key`` (see :func:`write_plugin`), enabled unless told not to."""
        folder = write_plugin(self.plugins, key, code, manifest=manifest or {}, files=files)
        if enable:
            self.enabled.append(key)
        return folder

    def entry(self, key: str, **values: Any) -> None:
        """Set ``plugins.entries.<key>.<name>: value`` in ``config.yaml``."""
        self.entries.setdefault(key, {}).update(values)

    def write_config(self) -> None:
        """Write ``config.yaml`` with the enabled plugins and the entries set so far."""
        write_config(self.root, self.enabled, entries=self.entries)

    def manager(self, *, strict: bool = False) -> PluginManager:
        """Return a manager for this home, not loaded yet (unloaded again at tear-down)."""
        pm = PluginManager(self.root, strict=strict)
        self.managers.append(pm)
        return pm

    def load_bounded(self, timeout: float | None, *, strict: bool = False) -> PluginManager:
        """Write ``config.yaml`` (the enabled plugins, ``plugins.hook_callback_timeout`` when
        ``timeout`` is given), then return a manager that has discovered and loaded."""
        section: dict[str, Any] = {"enabled": self.enabled}
        if timeout is not None:
            section["hook_callback_timeout"] = timeout
        (self.root / "config.yaml").write_text(yaml.safe_dump({"plugins": section}), "utf-8")
        pm = self.manager(strict=strict)
        pm.discover_and_load()
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
    return PluginHome(isolated_home(tmp_path, monkeypatch))


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


def wait_for(condition: Callable[[], object], seconds: float = 10) -> None:
    """Poll ``condition`` until it holds; fail after ``seconds`` (a hang, not a slow machine)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        time.sleep(0.01)


@contextmanager
def pluggy_loop(pm: PluginManager) -> Iterator[None]:
    """Put a no-op call monitor on ``pm``'s pluggy loop (what tracing and the test recorder
    do): the calls then take the monitored path."""
    undo = pm.add_hookcall_monitoring(lambda *a: None, lambda *a: None)
    try:
        yield
    finally:
        undo()

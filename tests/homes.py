"""The suite's Hermes homes: one fixture for each kind of home a test starts from.

Every fixture is function-scoped and lives under ``tmp_path``: a test never sees the real
``~/.hermes`` nor another test's home. ``tests/conftest.py`` makes them all available; a module
whose tests name their home ``home`` picks one under that name (none is named ``hermes_*``:
those are the public fixtures of :mod:`hermes_hooks.testing`, which the suite tests too)::

    from homes import clean_home as home  # noqa: F401  (the fixture)

==================  ======================  ================================================
fixture             gives                   the environment
==================  ======================  ================================================
``empty_home``      ``Path``                an empty folder; ``HERMES_HOME`` is not set to it
``absent_home``     ``Path``                a folder that does not exist yet; not set either
``clean_home``      ``Path``                isolated: ``HERMES_HOME`` points at it, an empty
                                            ``plugins/`` folder, no bundled plugins
``bundled_home``    ``Path``                as ``clean_home``, with the bundled plugins
``recording_home``  ``Path``                as ``clean_home``, with the recorder plugin
                                            (``host_helpers.RECORDER``) enabled
``plugin_home``     ``plugin_builders.      as ``clean_home``; every manager made from it is
                    PluginHome``            unloaded at tear-down
``cli_home``        ``Path``                as ``clean_home``, for in-process ``hermes``
                                            runs: the environment and the plugin modules are
                                            restored at tear-down
``workdir_home``    ``Path``                as ``clean_home``, the current directory at
                                            ``tmp_path`` (a command's relative paths land
                                            there)
``compat_home``     ``Path``                as ``clean_home``, the compatibility layer's
                                            finder installed (Hermes modules importable)
``detached_home``   ``Path``                as ``clean_home``, but ``HERMES_HOME`` points at
                                            another folder: only code given the home finds it
``detached_``       ``Path``                as ``detached_home``, with the bundled plugins
``bundled_home``
``shared_``         ``plugin_builders.      as ``plugin_home``, with the test module's
``module_home``     PluginHome``            ``SHARED`` module (source ``SHARED_CODE``)
                                            importable, for its plugins and its tests to share
                                            state; the hook workers drained around the test
==================  ======================  ================================================

A module whose home needs its own plugins writes them in a fixture named for that home
(``journal_home``, ``witness_home``) built on one of these.

The builders these use (``isolated_home``, ``make_home``, ``recorder_home``) stay in
:mod:`plugin_builders` and :mod:`host_helpers`, imported when a fixture runs (those modules
re-export the fixtures under their historical name ``home``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from plugin_builders import PluginHome

__all__ = [
    "absent_home",
    "bundled_home",
    "clean_home",
    "cli_home",
    "compat_home",
    "detached_bundled_home",
    "detached_home",
    "empty_home",
    "plugin_home",
    "recording_home",
    "shared_module_home",
    "workdir_home",
]


@pytest.fixture
def empty_home(tmp_path: Path) -> Path:
    """An empty Hermes home folder (``HERMES_HOME`` is not set to it)."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def absent_home(tmp_path: Path) -> Path:
    """A Hermes home folder that does not exist yet (``HERMES_HOME`` is not set to it)."""
    return tmp_path / "hermes-home"


@pytest.fixture
def clean_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hermes home with an empty plugins folder and no bundled plugins; never ~/.hermes."""
    from plugin_builders import isolated_home

    return isolated_home(tmp_path, monkeypatch)


@pytest.fixture
def bundled_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """As :func:`clean_home`, with the bundled plugins discoverable."""
    from plugin_builders import isolated_home

    return isolated_home(tmp_path, monkeypatch, bundled=True)


@pytest.fixture
def recording_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """As :func:`clean_home`, with the recorder plugin enabled (it records every hook)."""
    from host_helpers import recorder_home

    return recorder_home(tmp_path, monkeypatch)


@pytest.fixture
def plugin_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHome]:
    """A :class:`plugin_builders.PluginHome`; every manager made from it is unloaded after."""
    from plugin_builders import make_home

    home = make_home(tmp_path, monkeypatch)
    yield home
    home.close()


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ``HERMES_HOME`` for in-process runs; the environment is restored afterwards.

    Bundled plugins point at an empty folder, so only the test's plugins are found.
    """
    from plugin_builders import isolated_home

    saved = dict(os.environ)
    path = isolated_home(tmp_path, monkeypatch)
    monkeypatch.setenv("COLUMNS", "200")
    before = set(sys.modules)
    yield path
    # The command sets variables from $HERMES_HOME/.env and imports plugin modules: undo both.
    os.environ.clear()
    os.environ.update(saved)
    for name in set(sys.modules) - before:
        if name.startswith("hermes_plugins."):
            del sys.modules[name]


@pytest.fixture
def workdir_home(clean_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """As :func:`clean_home`, with the current directory at ``tmp_path`` for the test."""
    monkeypatch.chdir(tmp_path)
    return clean_home


@pytest.fixture
def compat_home(clean_home: Path) -> Path:
    """As :func:`clean_home`, with the compatibility layer's finder installed (a manager made
    once), so that the Hermes modules it serves import."""
    from hermes_hooks.host import create_manager

    create_manager(clean_home)
    return clean_home


@pytest.fixture
def detached_home(clean_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """As :func:`clean_home`, but ``HERMES_HOME`` points at another (absent) folder: only code
    given this home (``--home``, ``load_home(home)``) finds it."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "not-this-one"))
    return clean_home


@pytest.fixture
def detached_bundled_home(
    bundled_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """As :func:`detached_home`, with the bundled plugins discoverable."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "not-this-one"))
    return bundled_home


@pytest.fixture
def shared_module_home(
    plugin_home: PluginHome,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Iterator[PluginHome]:
    """As :func:`plugin_home`, with the requesting test module's shared module importable.

    The test module names it in ``SHARED`` and gives its source in ``SHARED_CODE`` (the way a
    fixture reads its requester's module in pytest's own documentation); its plugins import it
    to share state with the test. The worker threads of bounded hook calls are drained before
    and after; on the way out the module's ``release`` event, where it has one, is set (so that
    plugins waiting on it return), the managers are unloaded and the module is forgotten.
    """
    from plugin_builders import drain_workers, shared_module

    name = getattr(request.module, "SHARED", None)
    code = getattr(request.module, "SHARED_CODE", None)
    if not isinstance(name, str) or not isinstance(code, str):
        raise pytest.UsageError(
            f"{request.module.__name__}: shared_module_home needs the module names SHARED "
            f"(a module name) and SHARED_CODE (its source), both strings; found {name!r}, "
            f"{type(code).__name__}"
        )
    drain_workers()
    with shared_module(tmp_path, monkeypatch, name, code):
        try:
            yield plugin_home
        finally:
            release = getattr(importlib.import_module(name), "release", None)
            if release is not None:
                release.set()
            plugin_home.close()
            drain_workers()

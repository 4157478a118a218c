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
==================  ======================  ================================================

The builders these use (``isolated_home``, ``make_home``, ``recorder_home``) stay in
:mod:`plugin_builders` and :mod:`host_helpers`, imported when a fixture runs (those modules
re-export the fixtures under their historical name ``home``).
"""

from __future__ import annotations

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
    "cli_home",
    "empty_home",
    "clean_home",
    "plugin_home",
    "recording_home",
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

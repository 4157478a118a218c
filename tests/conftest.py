"""Fixtures shared by the discovery, loading and manager tests; the builders they use live in
:mod:`plugin_builders`.

A module opts in to the isolation with ``pytestmark = pytest.mark.usefixtures("bundled")``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import suite_size
from entry_point_isolation import (
    configure as configure_entry_points,
    hide_venv_entry_points,  # noqa: F401  (autouse)
)
from homes import (  # noqa: F401  (fixtures: the suite's homes, for every test)
    absent_home,
    bundled_home,
    clean_home,
    cli_home,
    empty_home,
    empty_home as home,  # a module picks another under this name
    plugin_home,
    recording_home,
)
from plugin_builders import forget_new_modules, isolate_environment, site_dir


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="run the heavy suites (fault matrix, kill loop, fuzzing, reload loops) at their "
        f"full size, as {suite_size.FULL_VARIABLE}=1 does; tests/suite_size.py",
    )


def pytest_configure(config: pytest.Config) -> None:
    configure_entry_points(config)
    # Before collection: the suites size themselves when their modules are imported.
    if config.getoption("full"):
        os.environ[suite_size.FULL_VARIABLE] = "1"


@pytest.fixture
def bundled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No Hermes switch set, no bundled plugins; plugin modules are forgotten afterwards."""
    before = set(sys.modules)
    yield isolate_environment(monkeypatch, tmp_path)
    forget_new_modules(before, tmp_path)


@pytest.fixture
def user(home: Path) -> Path:
    """The user plugins folder, ``$HERMES_HOME/plugins``."""
    return home / "plugins"


@pytest.fixture
def site(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A ``site-packages``-like folder on ``sys.path``; its modules are forgotten afterwards."""
    yield from site_dir(monkeypatch, tmp_path)

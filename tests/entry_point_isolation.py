"""Keep the suite blind to the plugins pip installed in the test's own virtual environment.

A developer who ran ``pip install -e`` on the tutorial's or a scaffolded plugin has a
``hermes_agent.plugins`` entry point in the venv; without this, every test that lists or loads
plugins would find it too. In-process, :func:`hide_venv_entry_points` (autouse, from conftest)
leaves out the entry points of distributions that were on ``sys.path`` when the session
started; the distributions a test writes under its ``tmp_path`` (``site`` fixture) stay
visible. A test that wants the venv's own marks itself ``@pytest.mark.venv_entry_points``.
Subprocesses get ``HERMES_PLUGINS_NO_ENTRY_POINTS=1`` from ``cli_support.clean_env``.
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path
from typing import Any, cast

import pytest

from hermes_hooks.plugins.discovery import ENTRY_POINT_GROUP

MARKER = "venv_entry_points"
"""The marker under which a test sees the venv's installed plugins."""

_SESSION_PATHS: frozenset[Path] = frozenset(
    Path(entry).resolve() for entry in sys.path if entry and Path(entry).is_dir()
)
_real_entry_points = importlib.metadata.entry_points


def _from_the_venv(entry: importlib.metadata.EntryPoint) -> bool:
    dist = entry.dist
    if dist is None:
        return False
    return Path(str(dist.locate_file(""))).resolve() in _SESSION_PATHS


def _test_entry_points(**params: Any) -> Any:
    found = _real_entry_points(**params)
    if params.get("group") != ENTRY_POINT_GROUP:
        return found
    selected = cast(importlib.metadata.EntryPoints, found)  # a group was asked for
    return importlib.metadata.EntryPoints(e for e in selected if not _from_the_venv(e))


def configure(config: pytest.Config) -> None:
    """Register the marker (``--strict-markers`` refuses unknown ones)."""
    config.addinivalue_line("markers", f"{MARKER}: the test sees the venv's installed plugins")


@pytest.fixture(autouse=True)
def hide_venv_entry_points(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the venv's ``hermes_agent.plugins`` entry points unless the test asks for them."""
    if request.node.get_closest_marker(MARKER) is None:
        monkeypatch.setattr(importlib.metadata, "entry_points", _test_entry_points)

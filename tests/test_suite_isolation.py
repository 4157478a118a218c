"""The suite does not see the plugins pip installed in its own virtual environment unless a
test asks (``entry_point_isolation.py``), while a test's own distributions stay visible."""

from __future__ import annotations

from pathlib import Path

import entry_point_isolation
import pytest
from plugin_builders import write_distribution

from hermes_hooks.plugins.discovery import discover_entry_points

FILES = {"venv_plugin/__init__.py": "def register(ctx):\n    pass\n"}


def install(site: Path, monkeypatch: pytest.MonkeyPatch, *, in_the_venv: bool) -> None:
    write_distribution(site, "venv-plugin", {"venv-plugin": "venv_plugin"}, FILES)
    if in_the_venv:  # as if it sat in site-packages when the session started
        paths = entry_point_isolation._SESSION_PATHS | {site.resolve()}
        monkeypatch.setattr(entry_point_isolation, "_SESSION_PATHS", paths)


def test_a_plugin_pip_installed_in_the_venv_is_not_seen(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(site, monkeypatch, in_the_venv=True)
    assert "venv-plugin" not in [c.key for c in discover_entry_points()]


def test_a_distribution_the_test_writes_is_seen(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(site, monkeypatch, in_the_venv=False)
    assert "venv-plugin" in [c.key for c in discover_entry_points()]


@pytest.mark.venv_entry_points
def test_a_test_that_asks_sees_the_venv(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(site, monkeypatch, in_the_venv=True)
    assert "venv-plugin" in [c.key for c in discover_entry_points()]

"""The wheel ships what installs need: py.typed, the bundled plugins' manifests, the CLI."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """Build a wheel from a copy of the sources (the checkout stays free of build output)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("setup.cfg", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("hermes_hooks", "hermes_plugins"):
        shutil.copytree(ROOT / package, src / package, ignore=ignore)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("hermes_hooks-*.whl")
    return zipfile.ZipFile(built)


def test_wheel_ships_py_typed(wheel: zipfile.ZipFile) -> None:
    assert "hermes_hooks/py.typed" in wheel.namelist()


def test_wheel_ships_the_new_plugin_templates(wheel: zipfile.ZipFile) -> None:
    root = Path(__file__).resolve().parent.parent / "hermes_hooks" / "admin" / "plugin-template"
    templates = {
        f"hermes_hooks/admin/plugin-template/{p.relative_to(root).as_posix()}"
        for p in root.rglob("*.tmpl")
    }
    assert len(templates) == 6
    assert templates <= set(wheel.namelist())


def test_wheel_ships_every_bundled_manifest(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    manifests = sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "hermes_plugins").rglob("plugin.y*ml")
        if "__pycache__" not in p.parts
    )
    assert manifests, "no bundled plugin manifests found"
    assert [m for m in manifests if m not in names] == []
    code = [m.replace("plugin.yaml", "__init__.py") for m in manifests]
    assert [c for c in code if c not in names] == []


def test_wheel_declares_the_console_script_and_dependencies(wheel: zipfile.ZipFile) -> None:
    dist_info = next(n.split("/")[0] for n in wheel.namelist() if ".dist-info/" in n)
    entry_points = wheel.read(f"{dist_info}/entry_points.txt").decode()
    assert "hermes = hermes_hooks.cli:main" in entry_points
    metadata = wheel.read(f"{dist_info}/METADATA").decode()
    for requirement in ("pluggy", "PyYAML", "attrs", "click"):
        assert f"Requires-Dist: {requirement}" in metadata


def test_wheel_ships_the_license_setup_cfg_names(wheel: zipfile.ZipFile) -> None:
    licenses = [n for n in wheel.namelist() if ".dist-info/" in n and "LICENSE" in n]
    assert licenses, wheel.namelist()
    text = wheel.read(licenses[0]).decode()
    assert text.startswith("MIT License")
    assert "license = MIT" in (ROOT / "setup.cfg").read_text(encoding="utf-8")


def test_changelog_has_the_current_version_and_ci_checks_format_and_bytecode() -> None:
    from hermes_hooks import __version__

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{__version__}]" in changelog
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "ruff format --check ." in ci
    assert "unset PYTHONDONTWRITEBYTECODE" in ci

"""``hermes plugins new``: the project it writes loads, passes its own tests and packages."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from cli_support import clean_env

from hermes_hooks.admin.scaffold import create_plugin_project, plugin_module_name
from hermes_hooks.errors import InstallError


def hermes(home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args],
        env=clean_env(home),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_new_project_passes_its_own_tests_and_installs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = hermes(home, "plugins", "new", "pr-review", "--description", 'Says "hi"', cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "pr-review"
    assert f"Created plugin project 'pr-review' in {Path('pr-review')}" in made.stdout
    assert "hermes plugins install ./pr_review" in made.stdout

    manifest = yaml.safe_load((root / "pr_review" / "plugin.yaml").read_text(encoding="utf-8"))
    assert manifest["name"] == "pr-review"
    assert manifest["description"] == 'Says "hi"'
    assert manifest["provides_tools"] == ["pr_review_hello"]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["entry-points"]["hermes_agent.plugins"] == {"pr-review": "pr_review"}
    assert project["tool"]["setuptools"]["package-data"]["pr_review"] == [
        "plugin.yaml",
        "skills/**/*",
    ]

    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env=clean_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "3 passed" in tests.stdout

    doctor = hermes(home, "plugins", "doctor", "./pr_review", cwd=root)
    assert (doctor.returncode, doctor.stdout.splitlines()[0]) == (0, "pr_review: ok"), doctor.stdout
    assert hermes(home, "plugins", "install", "./pr_review", cwd=root).returncode == 0
    assert hermes(home, "plugins", "enable", "pr-review", cwd=root).returncode == 0
    turn = hermes(home, "tools", cwd=root)
    assert "pr_review_hello" in turn.stdout


def test_nothing_is_written_over(tmp_path: Path) -> None:
    create_plugin_project("mine", tmp_path)
    before = (tmp_path / "mine" / "mine" / "__init__.py").read_text(encoding="utf-8")
    with pytest.raises(InstallError, match="exists already"):
        create_plugin_project("mine", tmp_path)
    assert (tmp_path / "mine" / "mine" / "__init__.py").read_text(encoding="utf-8") == before


@pytest.mark.parametrize("name", ["My Plugin", "", "-x", "x-", "../up", "9lives"])
def test_a_name_that_cannot_be_a_plugin_or_a_package_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(InstallError, match=r"invalid|cannot be imported"):
        create_plugin_project(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_module_name_follows_the_plugin_name() -> None:
    assert plugin_module_name("pr-review") == "pr_review"
    assert plugin_module_name("a.b_c") == "a_b_c"


def test_the_new_project_installs_against_hermes_hooks_from_source(tmp_path: Path) -> None:
    # hermes-hooks is not on PyPI: installed from its source, it meets the scaffold's
    # `dependencies = ["hermes-hooks"]` without any package index.
    home = tmp_path / "home"
    assert hermes(home, "plugins", "new", "offline-dep", cwd=tmp_path).returncode == 0
    resolved = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-index", "--no-build-isolation",
         "--dry-run", "--disable-pip-version-check", str(tmp_path / "offline-dep")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert resolved.returncode == 0, resolved.stdout + resolved.stderr
    assert "Would install hermes-offline-dep-0.1.0" in resolved.stdout
    readme = (tmp_path / "offline-dep" / "README.md").read_text(encoding="utf-8")
    assert "not on PyPI: install it from its source" in readme

"""``plugins install --link``, a project root holding its plugin in a subfolder, ``plugins
update`` from the recorded source, ``plugins search``, and git failures quoted whole."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import (
    GOOD,
    home as home,  # the fixture
    invoke,
)
from plugin_builders import write_plugin


def test_link_installs_a_folder_under_development(home: Path, tmp_path: Path) -> None:
    source = write_plugin(tmp_path / "dev", "live", GOOD)
    result = invoke("plugins", "install", "--link", str(source))
    assert result.exit_code == 0, result.output
    target = home / "plugins" / "live"
    assert target.is_symlink()
    assert target.resolve() == source.resolve()
    assert "live" in invoke("plugins", "list").stdout
    removed = invoke("plugins", "rm", "live")
    assert removed.exit_code == 0
    assert source.is_dir()  # the folder it pointed to stays


def test_a_project_root_installs_its_plugin_from_the_subfolder(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_plugin(project / "src", "inner", GOOD)
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    result = invoke("plugins", "install", str(project))
    assert result.exit_code == 0, result.output
    assert (home / "plugins" / "inner" / "plugin.yaml").is_file()

    write_plugin(project / "src", "second", GOOD)
    both = invoke("plugins", "install", str(project), "--force")
    assert both.exit_code == 1
    assert f"hermes plugins install {project / 'src' / 'inner'}" in both.stderr
    assert f"hermes plugins install {project / 'src' / 'second'}" in both.stderr


def test_update_reinstalls_from_where_it_came(home: Path, tmp_path: Path) -> None:
    source = write_plugin(tmp_path / "src", "grows", GOOD, manifest={"version": "1.0.0"})
    assert invoke("plugins", "install", str(source)).exit_code == 0
    write_plugin(tmp_path / "src", "grows", GOOD, manifest={"version": "1.1.0"})
    result = invoke("plugins", "update", "grows")
    assert result.exit_code == 0, result.output
    assert "to 1.1.0" in result.stdout
    assert "1.1.0" in (home / "plugins" / "grows" / "plugin.yaml").read_text(encoding="utf-8")


def test_search_finds_by_description(home: Path, tmp_path: Path) -> None:
    write_plugin(home / "plugins", "finder", GOOD, manifest={"description": "Finds needles"})
    assert "finder" in invoke("plugins", "search", "needle").stdout
    assert "No plugin matches" in invoke("plugins", "search", "haystack-zz").stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_failure_is_quoted_whole(home: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-repo"
    subprocess.run(["git", "--version"], check=True, capture_output=True)
    result = invoke("plugins", "install", f"file://{missing}")
    assert result.exit_code == 1
    assert "git clone failed" in result.stderr
    assert "does not appear to be a git repository" in result.stderr
    assert "Could not read from remote repository" in result.stderr  # not only the last line

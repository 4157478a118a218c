"""Tests for hermes_hooks.plugins.discovery: the four sources, keys, overrides, no code run."""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from plugin_builders import (
    write_config,
    write_distribution,
    write_plugin,
)

from hermes_hooks.plugins.discovery import (
    ENTRY_POINT_GROUP,
    Candidate,
    bundled_plugins_dir,
    discover_candidates,
    discover_entry_points,
    scan_directory,
)
from hermes_hooks.plugins.manager import PluginManager

# Code that must never run during discovery: it leaves a marker file, then raises.
TRAP = """
from pathlib import Path
Path({marker!r}).write_text("imported")
raise RuntimeError("plugin code ran during discovery")
"""


pytestmark = pytest.mark.usefixtures("bundled")


def with_env(**extra: str) -> dict[str, str]:
    """The test's environment plus ``extra``."""
    return {**os.environ, **extra}


def discover(home: Path, *, env: dict[str, str] | None = None, **kwargs: Any) -> list[Candidate]:
    """Discover without entry points from the surrounding environment."""
    return discover_candidates(
        hermes_home=home, include_entry_points=False, env=with_env(**(env or {})), **kwargs
    )


def keyed(candidates: list[Candidate]) -> dict[str, Candidate]:
    return {c.key: c for c in candidates}


# --- the sources and their order -----------------------------------------------------------------


def test_user_plugin_is_found_with_its_manifest(home: Path, user: Path) -> None:
    folder = write_plugin(user, "hello", manifest={"description": "says hi", "kind": "backend"})

    [candidate] = discover(home)

    assert candidate.key == "hello"
    assert candidate.source == "user"
    assert candidate.path == folder
    assert candidate.error is None
    assert candidate.manifest is not None
    assert candidate.manifest.description == "says hi"
    assert candidate.name == "hello"
    assert candidate.kind == "backend"


def test_plugin_yml_is_a_manifest_too(home: Path, user: Path) -> None:
    folder = write_plugin(user, "short", manifest=None)
    (folder / "plugin.yml").write_text("name: short\n", encoding="utf-8")

    [candidate] = discover(home)

    assert (candidate.key, candidate.error) == ("short", None)


def test_sources_load_in_order_bundled_user_project_entrypoint(
    home: Path, user: Path, bundled: Path, tmp_path: Path, site: Path
) -> None:
    project = tmp_path / "project"
    write_plugin(bundled, "zz-bundled")
    write_plugin(user, "mm-user")
    write_plugin(user, "aa-user")
    write_plugin(project / ".hermes" / "plugins", "aa-project")
    write_distribution(site, "hh-order", {"aa-entry": "hh_order"}, {"hh_order.py": ""})

    candidates = discover_candidates(
        hermes_home=home, cwd=project, env=with_env(HERMES_ENABLE_PROJECT_PLUGINS="1")
    )
    ours = [(c.source, c.key) for c in candidates if c.key in {"aa-entry"} or c.path]

    assert ours == [
        ("bundled", "zz-bundled"),
        ("user", "aa-user"),
        ("user", "mm-user"),
        ("project", "aa-project"),
        ("entrypoint", "aa-entry"),
    ]


def test_missing_folders_discover_nothing(tmp_path: Path) -> None:
    assert discover(tmp_path / "no-such-home") == []
    assert scan_directory(tmp_path / "nowhere", "user") == []


def test_files_hidden_folders_and_pycache_are_not_plugins(home: Path, user: Path) -> None:
    user.mkdir(parents=True)
    (user / "notes.txt").write_text("not a plugin", encoding="utf-8")
    write_plugin(user, ".hidden")
    write_plugin(user, "__pycache__")
    write_plugin(user, "real")

    assert [c.key for c in discover(home)] == ["real"]


def test_folder_without_manifest_or_code_is_ignored(home: Path, user: Path) -> None:
    (user / "empty").mkdir(parents=True)
    (user / "docs-only").mkdir()
    (user / "docs-only" / "README.md").write_text("hi", encoding="utf-8")

    assert discover(home) == []


# --- category folders ----------------------------------------------------------------------------


def test_category_folder_gives_category_keys(home: Path, user: Path) -> None:
    write_plugin(user, "image_gen/openai")
    write_plugin(user, "image_gen/stability")
    write_plugin(user, "plain")

    found = keyed(discover(home))

    assert sorted(found) == ["image_gen/openai", "image_gen/stability", "plain"]
    assert found["image_gen/openai"].name == "openai"
    assert found["image_gen/openai"].path == user / "image_gen" / "openai"


def test_folders_deeper_than_one_category_are_ignored(home: Path, user: Path) -> None:
    write_plugin(user, "a/b/too-deep")
    write_plugin(user, "a/b/c/deeper")
    write_plugin(user, "a/ok")

    assert [c.key for c in discover(home)] == ["a/ok"]


def test_plugin_folder_is_not_searched_for_nested_plugins(home: Path, user: Path) -> None:
    write_plugin(user, "outer")
    write_plugin(user, "outer/inner")

    assert [c.key for c in discover(home)] == ["outer"]


# --- the later source wins -----------------------------------------------------------------------


def test_user_plugin_overrides_bundled_of_the_same_key(
    home: Path, user: Path, bundled: Path
) -> None:
    write_plugin(bundled, "same", manifest={"description": "bundled"})
    write_plugin(user, "same", manifest={"description": "user"})
    write_plugin(bundled, "only-bundled")

    found = keyed(discover(home))

    assert found["same"].source == "user"
    assert found["same"].manifest is not None
    assert found["same"].manifest.description == "user"
    assert found["only-bundled"].source == "bundled"
    assert [c.key for c in discover(home)] == ["only-bundled", "same"]


def test_project_plugin_overrides_user_plugin(home: Path, user: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_plugin(user, "same")
    write_plugin(project / ".hermes" / "plugins", "same")

    [candidate] = discover(home, cwd=project, env={"HERMES_ENABLE_PROJECT_PLUGINS": "yes"})

    assert candidate.source == "project"
    assert candidate.path == project / ".hermes" / "plugins" / "same"


def test_category_key_overrides_only_the_same_category_key(
    home: Path, user: Path, bundled: Path
) -> None:
    write_plugin(bundled, "image_gen/openai", manifest={"description": "bundled"})
    write_plugin(user, "openai", manifest={"description": "user"})

    found = keyed(discover(home))

    assert {k: c.source for k, c in found.items()} == {
        "image_gen/openai": "bundled",
        "openai": "user",
    }


# --- project plugins, safe mode, bundled override ------------------------------------------------


@pytest.mark.parametrize("value", [None, "", "0", "false", "no"])
def test_project_plugins_are_off_unless_opted_in(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    project = tmp_path / "project"
    write_plugin(project / ".hermes" / "plugins", "proj")
    if value is not None:
        monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", value)

    found = PluginManager(home, cwd=project).discover()

    assert [c.key for c in found if c.source != "entrypoint"] == []


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_project_plugins_with_opt_in(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    project = tmp_path / "project"
    write_plugin(project / ".hermes" / "plugins", "proj")
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", value)

    found = keyed(PluginManager(home, cwd=project).discover())

    assert found["proj"].source == "project"


def test_project_plugins_default_to_the_current_directory(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    write_plugin(project / ".hermes" / "plugins", "here")
    monkeypatch.chdir(project)

    found = keyed(discover(home, env={"HERMES_ENABLE_PROJECT_PLUGINS": "1"}))

    assert found["here"].source == "project"


@pytest.mark.parametrize("value", ["1", "true"])
def test_safe_mode_discovers_nothing(
    home: Path,
    user: Path,
    bundled: Path,
    tmp_path: Path,
    site: Path,
    monkeypatch: pytest.MonkeyPatch,
    value: str,
) -> None:
    project = tmp_path / "project"
    write_plugin(bundled, "b", manifest={"kind": "backend"})
    write_plugin(user, "u")
    write_plugin(project / ".hermes" / "plugins", "p")
    write_distribution(site, "hh-safe", {"hh-safe": "hh_safe"}, {"hh_safe.py": ""})
    write_config(home, enabled=["u", "p", "hh-safe"])
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    monkeypatch.setenv("HERMES_SAFE_MODE", value)

    pm = PluginManager(home, cwd=project)
    pm.discover_and_load()

    assert pm.discover() == []
    assert pm.list_plugins() == []
    assert pm.get_plugins() == set()


def test_bundled_folder_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    write_plugin(elsewhere, "shipped")
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(elsewhere))

    assert bundled_plugins_dir() == elsewhere
    [candidate] = discover(tmp_path / "home")
    assert (candidate.key, candidate.source) == ("shipped", "bundled")


def test_bundled_folder_defaults_to_hermes_plugins() -> None:
    default = bundled_plugins_dir({})

    assert default.name == "hermes_plugins"
    assert (default / "__init__.py").is_file()


def test_bundled_helper_package_without_manifest_is_not_an_error(
    tmp_path: Path, bundled: Path
) -> None:
    (bundled / "_shared").mkdir()
    (bundled / "_shared" / "__init__.py").write_text("", encoding="utf-8")

    assert discover(tmp_path / "home") == []


# --- broken plugins become error candidates ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- just\n- a list\n", "expected a mapping"),
        ("name: Bad Name!\n", "name"),
        ("name: ok\nkind: exclusiv\n", "exclusive"),
        ("name: [unclosed\n", "plugin.yaml"),
    ],
)
def test_broken_manifest_is_an_error_candidate(
    home: Path, user: Path, text: str, expected: str
) -> None:
    folder = write_plugin(user, "broken", manifest=text)
    write_plugin(user, "fine")

    found = keyed(discover(home))

    broken = found["broken"]
    assert broken.manifest is None
    assert broken.error is not None
    assert expected in broken.error
    assert str(folder / "plugin.yaml") in broken.error
    assert broken.name == "broken"
    assert found["fine"].error is None


def test_code_without_manifest_is_an_error_candidate(home: Path, user: Path) -> None:
    folder = write_plugin(user, "no-manifest", "def register(ctx): pass\n", manifest=None)

    [candidate] = discover(home)

    assert candidate.key == "no-manifest"
    assert candidate.manifest is None
    assert candidate.error is not None
    assert "no plugin.yaml" in candidate.error
    assert str(folder) in candidate.error


def test_manifest_without_code_is_an_error_candidate(home: Path, user: Path) -> None:
    write_plugin(user, "no-code", None)

    [candidate] = discover(home)

    assert candidate.manifest is not None
    assert candidate.error is not None
    assert "no __init__.py" in candidate.error


def test_error_candidates_are_listed_with_status_error(home: Path, user: Path) -> None:
    write_plugin(user, "broken", manifest="name: [\n")
    write_config(home, enabled=["broken"])

    pm = PluginManager(home)
    pm.discover_and_load()

    [info] = pm.list_plugins()
    assert (info.key, info.status) == ("broken", "error")
    assert info.error is not None
    assert "plugin.yaml" in info.error


# --- discovery runs no plugin code ---------------------------------------------------------------


def test_discovery_imports_no_plugin_code(
    home: Path, user: Path, bundled: Path, tmp_path: Path, site: Path
) -> None:
    marker = tmp_path / "ran.txt"
    trap = TRAP.format(marker=str(marker))
    write_plugin(bundled, "b", trap, manifest={"kind": "backend"})
    write_plugin(user, "u", trap)
    write_plugin(user, "cat/nested", trap)
    write_plugin(user, "no-manifest", trap, manifest=None)
    project = tmp_path / "project"
    write_plugin(project / ".hermes" / "plugins", "p", trap)
    write_distribution(site, "hh-trap", {"hh-trap": "hh_trap_pkg"}, {"hh_trap_pkg.py": trap})
    write_config(home, enabled=["u", "cat/nested", "p", "hh-trap"])
    before = set(sys.modules)

    pm = PluginManager(home, cwd=project)
    found = keyed(
        discover_candidates(
            hermes_home=home, cwd=project, env=with_env(HERMES_ENABLE_PROJECT_PLUGINS="1")
        )
    )
    listed = pm.discover()

    assert {"b", "u", "cat/nested", "no-manifest", "p", "hh-trap"} <= set(found)
    assert {"b", "u", "cat/nested", "no-manifest", "hh-trap"} <= {c.key for c in listed}
    assert not marker.exists()
    new = set(sys.modules) - before
    assert not [m for m in new if m.startswith("hermes_plugins.") or m.startswith("hh_trap")]


# --- entry points --------------------------------------------------------------------------------


def test_entry_point_candidate_from_an_installed_distribution(site: Path) -> None:
    write_distribution(
        site,
        "hermes-weather",
        {"weather": "hermes_weather:register"},
        {"hermes_weather/__init__.py": "def register(ctx): pass\n"},
        version="2.3.1",
        summary="Weather tools",
    )

    found = keyed(discover_entry_points())

    weather = found["weather"]
    assert weather.source == "entrypoint"
    assert weather.path is None
    assert weather.error is None
    assert weather.distribution == "hermes-weather"
    assert weather.entry_point is not None
    assert weather.entry_point.value == "hermes_weather:register"
    assert weather.manifest is not None
    assert (weather.manifest.name, weather.manifest.version) == ("weather", "2.3.1")
    assert weather.manifest.description == "Weather tools"
    assert "hermes_weather" not in sys.modules


def test_entry_point_with_an_invalid_name_is_an_error_candidate(site: Path) -> None:
    write_distribution(site, "hh-badname", {"Bad Name": "hh_badname"}, {"hh_badname.py": ""})

    found = keyed(discover_entry_points())

    assert found["Bad Name"].error is not None
    assert "hh_badname" in found["Bad Name"].error


def test_entry_points_of_another_group_are_ignored(site: Path) -> None:
    info = write_distribution(site, "hh-other", {}, {"hh_other.py": ""})
    (info / "entry_points.txt").write_text(
        "[console_scripts]\nhh-other = hh_other:main\n", encoding="utf-8"
    )

    assert "hh-other" not in keyed(discover_entry_points())


def test_entry_point_overrides_user_plugin_of_the_same_key(
    home: Path, user: Path, site: Path
) -> None:
    write_plugin(user, "dup")
    write_distribution(site, "hh-dup", {"dup": "hh_dup"}, {"hh_dup.py": ""})

    found = keyed(discover_candidates(hermes_home=home))

    assert found["dup"].source == "entrypoint"
    assert found["dup"].distribution == "hh-dup"


def test_entry_points_are_scanned_once_per_discovery(
    home: Path, user: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plugin(user, "u")
    write_distribution(site, "hh-once", {"hh-once": "hh_once"}, {"hh_once.py": ""})
    calls: list[Any] = []
    real = importlib.metadata.entry_points

    def counting(**params: Any) -> Any:
        calls.append(params)
        return real(**params)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    pm = PluginManager(home)

    pm.discover_and_load()
    assert calls == [{"group": ENTRY_POINT_GROUP}]
    pm.discover_and_load()
    assert len(calls) == 1
    pm.discover_and_load(force=True)
    assert len(calls) == 2
    assert {"u", "hh-once"} <= {c.key for c in pm.discover()}
    assert len(calls) == 3


def test_discovery_can_leave_entry_points_out(home: Path, site: Path) -> None:
    write_distribution(site, "hh-left", {"hh-left": "hh_left"}, {"hh_left.py": ""})

    assert discover(home) == []
    assert "hh-left" in keyed(discover_candidates(hermes_home=home))

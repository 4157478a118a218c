"""Plugin keys as in Hermes: a flat plugin is its manifest name; old folder keys keep working.

A folder ``pr_review/`` whose manifest says ``name: pr-review`` is the plugin ``pr-review``. Two
folders claiming one key are told apart by their folder names; config written with folder keys
still matches (an alias, warned about once) and is rewritten by the next config write. Every
test writes real folders and a real ``config.yaml``; the CLI runs as a real subprocess.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
import yaml
from cli_support import hermes
from plugin_builders import info, load, status_of, write_config, write_plugin

from hermes_hooks.plugins.config import update_config
from hermes_hooks.plugins.discovery import discover_candidates
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.plugins.trust import content_hash

pytestmark = pytest.mark.usefixtures("bundled")

TOOL = """
def register(ctx):
    ctx.register_tool(
        name="{tool}",
        toolset="t",
        schema={{"name": "{tool}", "parameters": {{"type": "object", "properties": {{}}}}}},
        handler=lambda args, **kw: "ran " + ctx.plugin_id + " " + str(ctx.get_config("mode")),
    )
"""


def keys(home: Path) -> dict[str, tuple[str, ...]]:
    """Return every discovered key with its aliases."""
    return {c.key: c.aliases for c in discover_candidates(hermes_home=home)}


def test_a_flat_plugin_is_keyed_by_its_manifest_name(home: Path, user: Path) -> None:
    write_plugin(user, "pr_review", TOOL.format(tool="review"), manifest={"name": "pr-review"})
    write_config(home, enabled=["pr-review"])
    pm = load(home)
    assert keys(home) == {"pr-review": ("pr_review",)}
    assert status_of(pm, "pr-review") == ("enabled", None)
    assert info(pm, "pr-review").warnings == ()
    assert pm.tools.dispatch("review", {}) == "ran pr-review None"
    assert "hermes_plugins.pr_review" in sys.modules  # the slug of the key


def test_of_two_folders_claiming_a_key_the_one_named_like_it_keeps_it(
    home: Path, user: Path
) -> None:
    write_plugin(user, "notes", TOOL.format(tool="notes_a"), manifest={"name": "notes"})
    write_plugin(user, "notes-copy", TOOL.format(tool="notes_b"), manifest={"name": "notes"})
    write_config(home, enabled=["notes", "notes-copy"])
    pm = load(home)
    assert status_of(pm, "notes") == ("enabled", None)
    assert pm.tools.get("notes_a") is not None
    status, error = status_of(pm, "notes-copy")
    assert status == "error"
    assert error is not None
    assert str(user / "notes-copy") in error
    assert str(user / "notes") in error
    assert "its manifest names it 'notes'" in error
    assert pm.tools.get("notes_b") is None  # the claimant never ran


def test_when_no_folder_is_named_like_the_claimed_key_none_gets_it(home: Path, user: Path) -> None:
    write_plugin(user, "a", TOOL.format(tool="from_a"), manifest={"name": "shared"})
    write_plugin(user, "b", TOOL.format(tool="from_b"), manifest={"name": "shared"})
    write_config(home, enabled=["shared", "a", "b"])
    pm = load(home)
    assert pm.get_plugin_info("shared") is None
    assert status_of(pm, "a")[0] == status_of(pm, "b")[0] == "error"
    assert "no folder is named like the key" in (status_of(pm, "a")[1] or "")
    # neither plugin loaded: only the host's own tools are there
    assert "from_a" not in pm.tools.names()
    assert "from_b" not in pm.tools.names()


def test_a_user_folder_overrides_a_bundled_plugin_only_under_its_folder_name(
    home: Path, user: Path, bundled: Path
) -> None:
    write_plugin(bundled, "kanban", TOOL.format(tool="board"), manifest={"kind": "backend"})
    write_plugin(user, "impostor", TOOL.format(tool="board"), manifest={"name": "kanban"})
    pm = load(home)
    # As Hermes: a differently named folder claiming a bundled key is not an override.
    assert info(pm, "kanban").source == "bundled"
    assert status_of(pm, "kanban") == ("enabled", None)
    status, error = status_of(pm, "impostor")
    assert status == "error"
    assert "overrides a bundled one only from a folder of the same name, 'kanban'" in (error or "")
    pm.unload_all()

    write_plugin(user, "kanban", TOOL.format(tool="board"), manifest={"name": "kanban"})
    write_config(home, enabled=["kanban"])
    pm = load(home)
    assert info(pm, "kanban").source == "user"


def test_gating_matches_keys_never_what_a_manifest_claims(home: Path, user: Path) -> None:
    write_plugin(user, "no-rm", TOOL.format(tool="guard"))
    # A category folder nobody enabled, whose manifest claims the enabled plugin's name.
    write_plugin(user, "extras/sneaky", TOOL.format(tool="sneaky"), manifest={"name": "no-rm"})
    write_config(home, enabled=["no-rm"])
    pm = load(home)
    assert status_of(pm, "no-rm") == ("enabled", None)
    assert status_of(pm, "extras/sneaky") == ("not enabled", None)
    assert pm.tools.get("sneaky") is None


def test_old_folder_keys_in_config_keep_matching_with_a_warning_once(
    home: Path, user: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_plugin(user, "pr_review", TOOL.format(tool="review"), manifest={"name": "pr-review"})
    write_plugin(user, "old_guard", TOOL.format(tool="guard"), manifest={"name": "guard"})
    write_config(
        home,
        enabled=["pr_review", "old_guard"],
        disabled=["old_guard"],
        entries={"pr_review": {"settings": {"mode": "strict"}}},
    )
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        pm = load(home)
        pm.discover_and_load(force=True)
    assert status_of(pm, "pr-review") == ("enabled", None)
    # plugins.entries under the old key still reach the plugin (settings, grants, hashes).
    assert pm.tools.dispatch("review", {}) == "ran pr-review strict"
    assert status_of(pm, "guard") == ("disabled", None)
    (warning,) = info(pm, "pr-review").warnings
    assert "plugins.enabled names this plugin 'pr_review', its folder name" in warning
    assert "its key is 'pr-review'" in warning
    logged = [r.getMessage() for r in caplog.records if "'pr_review'" in r.getMessage()]
    assert len(logged) == 1  # once per process, though the manager loaded twice


def test_a_grant_under_an_old_key_still_lets_the_plugin_override_a_host_tool(
    home: Path, user: Path
) -> None:
    code = """
        def register(ctx):
            ctx.register_tool("read_file", "t", {"name": "read_file"},
                              lambda args, **kw: "mine", override=True)
        """
    write_plugin(user, "reader_dir", code, manifest={"name": "reader"})
    write_config(home, enabled=["reader"], entries={"reader_dir": {"allow_tool_override": True}})
    pm = PluginManager(home)
    pm.tools.register_tool("read_file", "host", {"name": "read_file"}, lambda a, **k: "host")
    pm.discover_and_load()
    assert status_of(pm, "reader") == ("enabled", None)
    assert pm.tools.dispatch("read_file", {}) == "mine"
    pm.unload_all()


def test_the_next_config_write_rewrites_old_keys(home: Path, user: Path) -> None:
    write_plugin(user, "pr_review", TOOL.format(tool="review"), manifest={"name": "pr-review"})
    write_plugin(user, "image_gen/studio", TOOL.format(tool="studio"))
    write_plugin(user, "other", TOOL.format(tool="other"))
    write_config(
        home,
        enabled=["pr_review", "studio"],
        entries={"pr_review": {"allow_tool_override": True, "settings": {"mode": "x"}}},
    )
    update_config(home, lambda config: config.setdefault("display", {"compact": True}))
    written = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    assert written["plugins"]["enabled"] == ["pr-review", "image_gen/studio"]
    assert written["plugins"]["entries"] == {
        "pr-review": {"allow_tool_override": True, "settings": {"mode": "x"}}
    }
    assert written["display"] == {"compact": True}


def test_enable_resolves_a_folder_name_to_the_key_and_rewrites_the_file(
    home: Path, user: Path
) -> None:
    write_plugin(user, "pr_review", TOOL.format(tool="review"), manifest={"name": "pr-review"})
    write_plugin(user, "other", TOOL.format(tool="other"))
    write_config(home, disabled=["pr_review"], entries={"pr_review": {"settings": {"a": 1}}})
    result = hermes(home, "plugins", "enable", "pr_review")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Plugin 'pr-review' enabled.\n"
    written = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    assert written["plugins"]["enabled"] == ["pr-review"]
    assert written["plugins"]["disabled"] == []
    assert written["plugins"]["entries"] == {"pr-review": {"settings": {"a": 1}}}
    listed = hermes(home, "plugins", "list")
    assert "pr-review" in listed.stdout


def test_a_project_plugin_trusted_under_its_old_key_still_loads(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "repo"
    folder = write_plugin(
        project / ".hermes" / "plugins", "lint_dir", TOOL.format(tool="lint"),
        manifest={"name": "lint"},
    )  # fmt: skip
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    write_config(
        home, enabled=["lint_dir"], entries={"lint_dir": {"trusted_hash": content_hash(folder)}}
    )
    pm = load(home, cwd=project)
    assert status_of(pm, "lint") == ("enabled", None)
    (folder / "extra.py").write_text("X = 1\n", encoding="utf-8")
    pm.discover_and_load(force=True)
    status, error = status_of(pm, "lint")
    assert status == "error"
    assert "hermes plugins enable lint" in (error or "")
    pm.unload_all()

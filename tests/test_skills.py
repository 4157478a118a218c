"""Tests for hermes_hooks.registries.skills: ``ctx.register_skill`` and ``pm.skills.find``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from plugin_builders import PluginHome, home, info

from hermes_hooks.errors import RegistrationError
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.registries.skills import SkillNotFoundError, SkillRegistry

__all__ = ["home"]  # the fixture, imported for pytest

SKILL_TEXT = "---\nname: summarise\n---\nSummarise the thing.\n"


def skill_plugin(home: PluginHome, key: str, register_body: str, **files: str) -> PluginManager:
    """Load a plugin whose ``register(ctx)`` is ``register_body``; ``files`` are written first."""
    home.add_plugin(
        key,
        "from pathlib import Path\n\ndef register(ctx):\n    " + register_body + "\n",
        files={"skills/summarise/SKILL.md": SKILL_TEXT, **files},
    )
    return home.load()


def test_relative_path_found_by_qualified_name(home: PluginHome) -> None:
    pm = skill_plugin(
        home,
        "skill_rel",
        'ctx.register_skill("summarise", "skills/summarise/SKILL.md", "Summarise text")',
    )

    found = pm.skills.find("skill_rel:summarise")

    expected = (home.plugins / "skill_rel" / "skills" / "summarise" / "SKILL.md").resolve()
    assert found == expected
    assert found.read_text(encoding="utf-8") == SKILL_TEXT
    skill = pm.skills.get("skill_rel:summarise")
    assert skill is not None
    assert (skill.description, skill.owner) == ("Summarise text", "skill_rel")
    assert info(pm, "skill_rel").skills == ("skill_rel:summarise",)


def test_absolute_path_inside_the_folder(home: PluginHome) -> None:
    pm = skill_plugin(
        home,
        "skill_abs",
        'ctx.register_skill("summarise", Path(__file__).parent / "skills" / "summarise", '
        'frontmatter={"tags": ["text"]})',
    )

    found = pm.skills.find("skill_abs:summarise")
    assert found == (home.plugins / "skill_abs" / "skills" / "summarise").resolve()
    skill = pm.skills.get("skill_abs:summarise")
    assert skill is not None
    assert dict(skill.frontmatter) == {"tags": ["text"]}


def test_namespace_is_the_manifest_name_for_a_category_plugin(home: PluginHome) -> None:
    pm = skill_plugin(
        home, "writing/skill_cat", 'ctx.register_skill("summarise", "skills/summarise/SKILL.md")'
    )

    assert info(pm, "writing/skill_cat").status == "enabled"
    assert pm.skills.find("skill_cat:summarise") is not None
    assert pm.skills.owner_of("skill_cat:summarise") == "writing/skill_cat"


def test_find_unknown_gives_none(home: PluginHome) -> None:
    pm = skill_plugin(home, "skill_none", 'ctx.register_skill("summarise", "skills/summarise")')

    assert pm.skills.find("skill_none:other") is None
    assert pm.skills.find("other:summarise") is None
    assert pm.skills.find("summarise") is None
    assert pm.skills.find("") is None


def test_unloading_removes_the_skill(home: PluginHome) -> None:
    pm = skill_plugin(home, "skill_unload", 'ctx.register_skill("summarise", "skills/summarise")')

    pm.unload_plugin("skill_unload")

    assert pm.skills.find("skill_unload:summarise") is None


def test_colon_in_name_is_refused_alone(home: PluginHome) -> None:
    pm = skill_plugin(
        home, "skill_colon", 'ctx.register_skill("skill_colon:summarise", "skills/summarise")'
    )

    # ":" is reserved for the namespace; the skill is refused, the plugin loads.
    status = info(pm, "skill_colon")
    assert (status.status, status.error) == ("enabled", None)
    (warning,) = status.warnings
    assert warning.startswith("skill 'skill_colon:summarise' refused: ")
    assert "must not contain ':'" in warning


@pytest.mark.parametrize("name", ["", "has space", "dot.name", "slash/name", "ünï"])
def test_invalid_names_are_value_errors(tmp_path: Path, name: str) -> None:
    (tmp_path / "SKILL.md").write_text(SKILL_TEXT, encoding="utf-8")

    with pytest.raises(ValueError, match="skill name"):
        SkillRegistry().register_skill("plug", name, "SKILL.md", root=tmp_path, owner="plug")


def test_missing_path_refused(home: PluginHome) -> None:
    pm = skill_plugin(home, "skill_missing", 'ctx.register_skill("gone", "skills/gone/SKILL.md")')

    status = info(pm, "skill_missing")
    assert (status.status, status.error) == ("enabled", None)
    assert "does not exist" in status.warnings[0]
    assert pm.skills.names() == []


def test_missing_path_is_a_file_not_found_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist") as caught:
        SkillRegistry().register_skill("plug", "gone", "gone.md", root=tmp_path, owner="plug")
    assert isinstance(caught.value, SkillNotFoundError)
    assert isinstance(caught.value, RegistrationError)


def test_dotdot_escape_refused(home: PluginHome) -> None:
    (home.root / "secret.md").write_text("outside", encoding="utf-8")
    pm = skill_plugin(home, "skill_dotdot", 'ctx.register_skill("leak", "../../secret.md")')

    status = info(pm, "skill_dotdot")
    assert (status.status, status.error) == ("enabled", None)
    assert "outside the plugin folder" in status.warnings[0]
    assert pm.skills.find("skill_dotdot:leak") is None


def test_escape_refused_before_probing_existence(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    root.mkdir()

    with pytest.raises(RegistrationError, match="outside the plugin folder"):
        SkillRegistry().register_skill(
            "plug", "leak", "../does-not-exist.md", root=root, owner="plug"
        )


def test_absolute_path_outside_refused(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    root.mkdir()
    outside = tmp_path / "outside.md"
    outside.write_text("x", encoding="utf-8")

    with pytest.raises(RegistrationError, match="outside the plugin folder"):
        SkillRegistry().register_skill("plug", "leak", outside, root=root, owner="plug")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_escape_refused(home: PluginHome, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("outside", encoding="utf-8")
    folder = home.add_plugin(
        "skill_symlink",
        """
        def register(ctx):
            ctx.register_skill("leak", "skills/leak/SKILL.md")
        """,
    )
    (folder / "skills").mkdir()
    (folder / "skills" / "leak").symlink_to(outside, target_is_directory=True)

    pm = home.load()

    status = info(pm, "skill_symlink")
    assert (status.status, status.error) == ("enabled", None)
    assert "outside the plugin folder" in status.warnings[0]
    assert pm.skills.find("skill_symlink:leak") is None


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_inside_the_folder_allowed(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    (root / "real").mkdir(parents=True)
    (root / "real" / "SKILL.md").write_text(SKILL_TEXT, encoding="utf-8")
    (root / "alias").symlink_to(root / "real", target_is_directory=True)
    skills = SkillRegistry()

    skills.register_skill("plug", "aliased", "alias/SKILL.md", root=root, owner="plug")

    assert skills.find("plug:aliased") == (root / "real" / "SKILL.md").resolve()


def test_relative_path_without_a_folder_refused(tmp_path: Path) -> None:
    with pytest.raises(RegistrationError, match="needs a plugin folder"):
        SkillRegistry().register_skill("plug", "s", "SKILL.md", root=None, owner="plug")


def test_two_plugins_same_name_collide_naming_both(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text(SKILL_TEXT, encoding="utf-8")
    skills = SkillRegistry()
    skills.register_skill("shared", "s", "SKILL.md", root=tmp_path, owner="a/shared")

    with pytest.raises(RegistrationError, match=r"plugin 'b/shared'.*plugin 'a/shared'"):
        skills.register_skill("shared", "s", "SKILL.md", root=tmp_path, owner="b/shared")

"""The ``skill_view`` tool, ``/skills`` and ``hermes skills``: loading a skill as Hermes does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from plugin_builders import PluginHome, home

from hermes_hooks.cli import cli
from hermes_hooks.host.runtime import create_manager
from hermes_hooks.host.session import Session
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.testing import ScriptedModel, tool_call

__all__ = ["home"]

WORKFLOW = "---\nname: my-workflow\ndescription: How we ship a release\n---\n# Ship\nTag it.\n"
PLUGIN = """\
def register(ctx):
    ctx.register_skill("my-workflow", "skills/my-workflow/SKILL.md")
    ctx.register_skill("triage", "skills/triage/SKILL.md", description="Sort the inbox")
"""


def skills_home(home: PluginHome) -> PluginManager:
    home.add_plugin(
        "my-plugin",
        PLUGIN,
        files={
            "skills/my-workflow/SKILL.md": WORKFLOW,
            "skills/my-workflow/references/checklist.md": "- [ ] tests\n",
            "skills/my-workflow/scripts/tag.sh": "git tag v1\n",
            "skills/triage/SKILL.md": "Sort by urgency.\n",
            "secret.txt": "not for the model\n",
        },
    )
    home.write_config()
    pm = create_manager(home.root)
    home.managers.append(pm)
    return pm


def view(pm: PluginManager, **args: str) -> dict[str, object]:
    answer = json.loads(pm.tools.dispatch("skill_view", args))
    assert isinstance(answer, dict)
    return answer


def test_a_plugin_skill_loads_by_its_qualified_name(home: PluginHome) -> None:
    pm = skills_home(home)
    answer = view(pm, name="my-plugin:my-workflow")
    assert answer["success"] is True
    assert answer["name"] == "my-plugin:my-workflow"
    assert answer["description"] == "How we ship a release"
    content = str(answer["content"])
    assert content.startswith("[Bundle context: This skill is part of the 'my-plugin' plugin.")
    assert "Sibling skills: triage." in content
    assert content.endswith(WORKFLOW)
    assert answer["linked_files"] == {
        "references": ["references/checklist.md"],
        "scripts": ["scripts/tag.sh"],
    }
    linked = view(pm, name="my-plugin:my-workflow", file_path="references/checklist.md")
    assert (linked["success"], linked["content"]) == (True, "- [ ] tests\n")


def test_what_is_not_a_skill_of_the_plugin_is_refused(home: PluginHome) -> None:
    pm = skills_home(home)
    missing = view(pm, name="my-plugin:nope")
    assert missing["success"] is False
    assert missing["available_skills"] == ["my-plugin:my-workflow", "my-plugin:triage"]
    for escape in ("../../secret.txt", "/etc/passwd"):
        refused = view(pm, name="my-plugin:my-workflow", file_path=escape)
        assert refused["success"] is False, escape
        assert "not for the model" not in json.dumps(refused)
    assert view(pm, name="../x")["success"] is False
    unknown = view(pm, name="my-workflow")
    assert "did you mean 'my-plugin:my-workflow'?" in str(unknown["error"])
    assert view(pm, name="my-plugin:my-workflow", file_path="references/none.md")[
        "available_files"
    ] == {"references": ["references/checklist.md"], "scripts": ["scripts/tag.sh"]}


def test_a_one_letter_plugins_skill_loads_and_paths_are_still_refused(home: PluginHome) -> None:
    # "k:wf" reads as a drive-relative path to Windows; as a skill name it is plugin k's skill.
    home.add_plugin(
        "k",
        'def register(ctx):\n    ctx.register_skill("wf", "skills/wf/SKILL.md")\n',
        files={"skills/wf/SKILL.md": "Do it.\n"},
    )
    home.write_config()
    pm = create_manager(home.root)
    home.managers.append(pm)
    answer = view(pm, name="k:wf")
    assert answer["success"] is True, answer
    assert str(answer["content"]).endswith("Do it.\n")
    for path in ("C:\\Windows\\x", "c:/etc/passwd", "\\\\server\\share\\x", "/etc/passwd"):
        assert view(pm, name=path)["success"] is False, path
    assert view(pm, name="k:wf", file_path="c:secret.txt")["success"] is False


def test_a_local_skill_loads_by_its_name(home: PluginHome) -> None:
    folder = home.root / "skills" / "ops" / "deploy"
    (folder / "templates").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: deploy\ntags: [ops]\n---\nRoll out.\n")
    (folder / "templates" / "notes.md").write_text("notes\n")
    pm = create_manager(home.root)
    home.managers.append(pm)
    answer = view(pm, name="deploy")
    assert (answer["success"], answer["tags"]) == (True, ["ops"])
    assert answer["linked_files"] == {"templates": ["templates/notes.md"]}
    assert view(pm, name="deploy", file_path="templates/notes.md")["content"] == "notes\n"


def test_the_tool_is_offered_only_when_there_are_skills(home: PluginHome) -> None:
    bare = create_manager(home.root)
    home.managers.append(bare)
    assert "skill_view" not in [d["function"]["name"] for d in bare.tools.definitions()]
    pm = skills_home(home)
    assert "skill_view" in [d["function"]["name"] for d in pm.tools.definitions()]


def test_the_model_loads_a_skill_in_a_turn_and_slash_skills_lists_them(home: PluginHome) -> None:
    pm = skills_home(home)
    model = ScriptedModel(
        [tool_call("skill_view", name="my-plugin:my-workflow"), "I read the workflow."]
    )
    session = Session(pm, model)
    result = session.run_turn("how do we ship?")
    (record,) = result.tool_calls
    assert (record.tool_name, record.status) == ("skill_view", "ok")
    assert "Tag it." in json.loads(record.result)["content"]
    (listing,) = session.send("/skills")
    assert listing.text.splitlines() == [
        "Skills:",
        "my-plugin:my-workflow  How we ship a release",
        "my-plugin:triage       Sort the inbox",
    ]
    session.close()


def test_hermes_skills_lists_and_views(home: PluginHome, monkeypatch: pytest.MonkeyPatch) -> None:
    skills_home(home)
    runner = CliRunner()
    listed = runner.invoke(cli, ["--home", str(home.root), "skills"])
    assert listed.exit_code == 0, listed.output
    assert listed.output.splitlines()[0].split() == ["NAME", "SOURCE", "DESCRIPTION"]
    assert "my-plugin:triage       my-plugin  Sort the inbox" in listed.output
    data = json.loads(runner.invoke(cli, ["--home", str(home.root), "skills", "--json"]).output)
    assert [s["name"] for s in data] == ["my-plugin:my-workflow", "my-plugin:triage"]
    shown = runner.invoke(cli, ["--home", str(home.root), "skills", "view", "my-plugin:triage"])
    assert shown.exit_code == 0
    assert shown.stdout.endswith("Sort by urgency.\n")
    missing = runner.invoke(cli, ["--home", str(home.root), "skills", "view", "my-plugin:x"])
    assert missing.exit_code == 1
    assert "skill 'x' not found in plugin 'my-plugin'" in missing.stderr


def test_skills_of_a_plugin_without_a_manifest_folder_path_work(tmp_path: Path) -> None:
    """A skill registered with an absolute path (a pip plugin) loads the same way."""
    skill = tmp_path / "pkg" / "skills" / "one" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("One.\n")
    pm = create_manager(tmp_path / "home")
    pm.skills.register_skill("pkg", "one", skill, root=None, owner="pkg")
    answer = json.loads(pm.tools.dispatch("skill_view", {"name": "pkg:one"}))
    assert answer["content"].endswith("One.\n")

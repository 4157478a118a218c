"""The host's file tools: write_file, patch and search_files, with Hermes' argument names, and
pre_verify after a turn that edited files through them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from host_helpers import ScriptedModel, text, tool_call
from plugin_builders import PluginHome, home, recorder_module

from hermes_hooks.host import Session, create_manager
from hermes_hooks.host.filetools import patch, search_files, write_file

__all__ = ["home"]

REC = "hermes_test_file_tools"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def test_write_file_writes_whole_files_and_refuses_bad_arguments(folder: Path) -> None:
    first = json.loads(write_file({"path": "src/a.py", "content": "x = 1\n"}))
    assert first == {"path": "src/a.py", "bytes_written": 6, "created": True}
    assert (folder / "src" / "a.py").read_text() == "x = 1\n"
    again = json.loads(write_file({"path": "src/a.py", "content": "x = 2\n"}))
    assert again["created"] is False
    assert (folder / "src" / "a.py").read_text() == "x = 2\n"
    assert "needs a 'path'" in json.loads(write_file({"content": "x"}))["error"]
    assert "'content' as a string" in json.loads(write_file({"path": "b", "content": 3}))["error"]
    assert "is a folder" in json.loads(write_file({"path": "src", "content": ""}))["error"]
    assert sorted(p.name for p in (folder / "src").iterdir()) == ["a.py"]  # no temporary left


def test_patch_replaces_unique_text_or_says_why_not(folder: Path) -> None:
    target = folder / "m.py"
    target.write_text("a = 1\nb = 1\n")
    assert json.loads(patch({"path": "m.py", "old_string": "a = 1", "new_string": "a = 2"})) == {
        "path": "m.py",
        "replacements": 1,
    }
    assert target.read_text() == "a = 2\nb = 1\n"
    twice = json.loads(patch({"path": "m.py", "old_string": "= ", "new_string": ": "}))
    assert "occurs 2 times" in twice["error"]
    every = patch({"path": "m.py", "old_string": " = ", "new_string": "=", "replace_all": True})
    assert json.loads(every)["replacements"] == 2
    assert target.read_text() == "a=2\nb=1\n"
    assert (
        "not found in"
        in json.loads(patch({"path": "m.py", "old_string": "zzz", "new_string": ""}))["error"]
    )
    assert (
        "'nope.py' not found"
        in json.loads(patch({"path": "nope.py", "old_string": "a", "new_string": "b"}))["error"]
    )
    assert "needs 'patch'" in json.loads(patch({"mode": "patch", "path": "m.py"}))["error"]
    assert "mode must be" in json.loads(patch({"mode": "diff", "path": "m.py"}))["error"]


def test_search_files_finds_content_and_names(folder: Path) -> None:
    (folder / "pkg").mkdir()
    (folder / "pkg" / "one.py").write_text("def alpha():\n    return 1\n")
    (folder / "pkg" / "two.txt").write_text("alpha beta\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "x.py").write_text("alpha\n")
    found = json.loads(search_files({"pattern": r"alpha", "file_glob": "*.py"}))
    assert found["matches"] == [{"path": "pkg/one.py", "line": 1, "content": "def alpha():"}]
    names = json.loads(search_files({"pattern": "*.txt", "target": "files"}))
    assert names["files"] == ["pkg/two.txt"]
    limited = json.loads(search_files({"pattern": "alpha", "limit": 1}))
    assert (limited["total"], limited["truncated"], len(limited["matches"])) == (2, True, 1)
    assert "not a valid regex" in json.loads(search_files({"pattern": "("}))["error"]
    assert "target must be" in json.loads(search_files({"pattern": "a", "target": "x"}))["error"]


GUARD = f"""
import {REC} as rec

def pre_tool_call(tool_name, args, **kwargs):
    if tool_name == "patch" and "secret" in args.get("old_string", ""):
        return {{"action": "block", "message": "leave the secret alone"}}
    return None

def pre_verify(changed_paths, **kwargs):
    rec.changed.append(list(changed_paths))
    return None

def register(ctx):
    ctx.register_hook("pre_tool_call", pre_tool_call)
    ctx.register_hook("pre_verify", pre_verify)
"""


def test_pre_verify_fires_after_a_turn_that_edited_files(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rec: Any = recorder_module(monkeypatch, REC, changed=[])
    home.add_plugin("guard", GUARD)
    home.write_config()
    work = tmp_path / "work"
    work.mkdir()
    (work / "cfg.py").write_text("token = 'secret'\n")
    model = ScriptedModel(
        tool_call("write_file", {"path": "new.py", "content": "print(1)\n"}, "c1"),
        tool_call("patch", {"path": "cfg.py", "old_string": "secret", "new_string": "x"}, "c2"),
        tool_call("search_files", {"pattern": "print"}, "c3"),
        text("done"),
    )
    result = Session(create_manager(home.root), model, cwd=work).run_turn("edit")
    assert result.text == "done"
    assert [c.status for c in result.tool_calls] == ["ok", "blocked", "ok"]
    assert "leave the secret alone" in result.tool_calls[1].result
    assert (work / "cfg.py").read_text() == "token = 'secret'\n"
    assert rec.changed == [[str(work / "new.py")]]

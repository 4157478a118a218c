"""The ``patch`` tool's ``mode: "patch"``: V4A patches (Hermes' format: Update, Add, Delete,
Move; ``@@ hint @@`` hunks), applied all or nothing, recording what they changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from host_helpers import ScriptedModel, text, tool_call
from plugin_builders import PluginHome, home, recorder_module

from hermes_hooks.host import Session, create_manager
from hermes_hooks.host.filetools import patch

__all__ = ["home"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def _patch(body: str) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(patch({"mode": "patch", "patch": body}))
    return answer


def test_update_add_delete_and_move_in_one_patch(folder: Path) -> None:
    (folder / "app.py").write_text(
        "def first():\n    return 1\n\n\ndef second():\n    return 1\n", encoding="utf-8"
    )
    (folder / "old.txt").write_text("bye\n")
    (folder / "from.txt").write_text("moving\n")
    answer = _patch(
        """\
*** Begin Patch
*** Update File: app.py
@@ def second(): @@
 def second():
-    return 1
+    return 2
*** Add File: docs/new.md
+# New
+text
*** Delete File: old.txt
*** Move File: from.txt -> to.txt
*** End Patch
"""
    )
    assert answer["success"] is True, answer
    # The hint chose the second 'return 1' though the hunk's lines alone are not unique.
    assert (folder / "app.py").read_text() == (
        "def first():\n    return 1\n\n\ndef second():\n    return 2\n"
    )
    assert (folder / "docs" / "new.md").read_text() == "# New\ntext"
    assert not (folder / "old.txt").exists()
    assert (folder / "to.txt").read_text() == "moving\n"
    assert not (folder / "from.txt").exists()
    assert answer["files_created"] == ["docs/new.md"]
    assert answer["files_deleted"] == ["old.txt"]
    assert answer["files_modified"] == ["app.py", "from.txt -> to.txt"]
    assert "+    return 2" in answer["diff"]


def test_a_failing_hunk_modifies_no_file(folder: Path) -> None:
    (folder / "a.txt").write_text("one\ntwo\n")
    (folder / "b.txt").write_text("three\n")
    answer = _patch(
        """\
*** Begin Patch
*** Update File: a.txt
-one
+ONE
*** Update File: b.txt
-missing line
+x
*** Add File: a.txt
+clobber
*** End Patch
"""
    )
    assert answer["success"] is False
    assert "no files were modified" in answer["error"]
    assert "b.txt hunk 1" in answer["error"]
    assert "already exists" in answer["error"]  # Add never clobbers
    assert (folder / "a.txt").read_text() == "one\ntwo\n"
    assert (folder / "b.txt").read_text() == "three\n"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("*** Begin Patch\n*** Update File: a.txt\n*** End Patch\n", "no hunks"),
        ("just some text\n", "no operations"),
        ("*** Begin Patch\n*** Update File: a.txt\n one\n*** End Patch\n", "no change"),
        ("*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n", "not found"),
    ],
)
def test_bad_patches_say_why(folder: Path, body: str, error: str) -> None:
    (folder / "a.txt").write_text("one\n")
    answer = _patch(body)
    assert answer["success"] is False
    assert error in answer["error"]


VERIFY = """
import hermes_test_patch_v4a as rec

def register(ctx):
    ctx.register_hook("pre_verify", lambda changed_paths, **kw: rec.changed.append(
        sorted(changed_paths)))
"""


def test_a_v4a_patch_in_a_turn_records_the_paths_so_pre_verify_fires(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec: Any = recorder_module(monkeypatch, "hermes_test_patch_v4a", changed=[])
    home.add_plugin("verify", VERIFY)
    home.write_config()
    work = tmp_path / "w"
    work.mkdir()
    (work / "x.py").write_text("x = 1\n")
    (work / "y.py").write_text("y\n")
    body = (
        "*** Begin Patch\n*** Update File: x.py\n-x = 1\n+x = 2\n"
        "*** Delete File: y.py\n*** End Patch\n"
    )
    model = ScriptedModel(tool_call("patch", {"mode": "patch", "patch": body}), text("ok"))
    pm = create_manager(home.root)
    home.managers.append(pm)
    result = Session(pm, model, cwd=work).run_turn("go")
    assert json.loads(result.tool_calls[0].result)["success"] is True
    assert (work / "x.py").read_text() == "x = 2\n"
    assert rec.changed == [[str(work / "x.py"), str(work / "y.py")]]

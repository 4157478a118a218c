"""The README's promises hold: its Quick start is what CI runs, and its code runs as shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks import Hooks
from hermes_hooks.host.runtime import create_manager

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def block_after(marker: str, language: str) -> str:
    """Return the first fenced ``language`` block after the line holding ``marker``."""
    start = README.index(marker)
    match = re.compile(rf"```{language}\n(.*?)```", re.S).search(README, start)
    assert match is not None, f"no {language} block after {marker!r}"
    return match.group(1)


def test_quick_start_has_exactly_the_two_commands_ci_runs() -> None:
    # .ci/run extracts these two lines with the same pattern and runs them verbatim.
    main = re.findall(r"^    \$ (.*)  # main job$", README, re.M)
    tests = re.findall(r"^    \$ (.*)  # tests$", README, re.M)
    assert len(main) == 1
    assert len(tests) == 1
    assert main[0].startswith("pip install . && hermes ")
    assert tests[0] == "pip install '.[test]' && python -m pytest"
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert r"# main job$/\1/p' README.md" in ci
    assert r"# tests$/\1/p' README.md" in ci


@pytest.fixture
def no_rm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home holding the README's example plugin, enabled as the README says."""
    home = isolated_home(tmp_path, monkeypatch)
    manifest = block_after("no-rm/plugin.yaml`:", "yaml")
    user_plugin(home, "no-rm", block_after("no-rm/__init__.py`:", "python"), manifest=manifest)
    write_config(home, ["no-rm"])
    return home


def test_the_example_plugin_blocks_rm_rf_and_logs_durations(
    no_rm_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pm = create_manager(no_rm_home, strict=True)
    (info,) = pm.list_plugins()
    assert (info.key, info.status) == ("no-rm", "enabled")
    assert info.hooks == ("post_tool_call", "pre_tool_call")
    hooks = Hooks(pm)
    blocked = hooks.pre_tool_call(tool_name="terminal", args={"command": "rm -rf /tmp/x"})
    assert (blocked.action, blocked.plugin) == ("block", "no-rm")
    assert blocked.message == "rm -rf is not allowed here"
    allowed = hooks.pre_tool_call(tool_name="terminal", args={"command": "ls"})
    assert allowed.action == "allow"
    hooks.post_tool_call(tool_name="terminal", args={}, result="ok", duration_ms=12, status="ok")
    assert capsys.readouterr().out == "terminal took 12 ms\n"


def test_the_hosting_example_runs_as_shown(
    no_rm_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exec(compile(block_after("## Hosting plugins", "python"), "README.md", "exec"), {})
    assert capsys.readouterr().out == "blocked by no-rm: rm -rf is not allowed here\n"

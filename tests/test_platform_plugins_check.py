"""``python -m benchmarks.platform_plugins FOLDER``: the check that a folder of Hermes-shaped
platform plugins loads here (run by hand against a copy of Hermes' ``plugins/platforms/``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin_builders import write_plugin

from benchmarks.platform_plugins import main

GOOD = """
from gateway.config import Platform
from gateway.platforms.base import BasePlatformAdapter


def register(ctx):
    ctx.register_platform(
        name="goodchat", label="Good chat", adapter_factory=lambda cfg: None,
        check_fn=lambda: True,
    )
"""


def test_it_reports_each_plugin_and_the_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "platforms"
    write_plugin(
        folder, "goodchat", GOOD, manifest={"name": "goodchat-platform", "kind": "platform"}
    )
    write_plugin(
        folder, "brokenchat", "from gateway.no_such import X\n", manifest={"kind": "platform"}
    )
    write_plugin(folder, "quiet", "def register(ctx):\n    pass\n", manifest={"kind": "platform"})
    write_plugin(folder, "tool", "def register(ctx):\n    pass\n")  # a standalone plugin
    (folder / "notes").mkdir()  # no manifest: not a plugin
    assert main([str(folder)]) == 1  # not all of them pass
    out = capsys.readouterr().out
    assert "ok    goodchat: goodchat" in out
    assert "FAIL  brokenchat: ModuleNotFoundError: No module named 'gateway.no_such'" in out
    assert "FAIL  quiet: status enabled, no platform registered" in out  # registers none
    assert "ok    tool: loaded (standalone)" in out  # another kind only has to load
    assert "notes" not in out  # no manifest: not a plugin
    assert out.rstrip().endswith("2 of 4 load (and register their platforms)")

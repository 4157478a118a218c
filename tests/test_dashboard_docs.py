"""The dashboard how-tos run: the plugin built by docs/how-to/dashboard-plugin.md mounts and
answers, and the Python of docs/how-to/dashboard.md starts and stops a dashboard."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dashboard_support import dashboard_client, manager, post
from plugin_builders import isolated_home, user_plugin, write_config

DOCS = Path(__file__).resolve().parent.parent / "docs" / "how-to"
FILE_BLOCK = re.compile(r"^File `([^`]+)`:\n\n```\w+\n(.*?)^```$", re.M | re.S)
PYTHON = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


def test_the_dashboard_plugin_of_the_how_to_mounts_and_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    files = dict(FILE_BLOCK.findall((DOCS / "dashboard-plugin.md").read_text("utf-8")))
    assert set(files) == {
        "dashboard/manifest.json",
        "dashboard/plugin_api.py",
        "dashboard/dist/index.js",
        "dashboard/dist/style.css",
    }
    user_plugin(home, "visits", "def register(ctx):\n    pass\n", files=files)
    write_config(home, enabled=["visits"])
    client = dashboard_client(manager(home))
    tab = next(t for t in client.get("/api/dashboard/tabs").json() if t["name"] == "visits")
    assert tab["mounted"] is True
    assert tab["error"] is None
    assert tab["path"] == "/visits"
    assert 'register("visits"' in client.get(tab["entry"]).text
    assert post(client, "/api/plugins/visits/visit").json() == {"visits": 1}
    assert client.get("/api/plugins/visits/count").json() == {"visits": 1}


def test_the_dashboard_how_to_python_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_home(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    page = DOCS / "dashboard.md"
    blocks = PYTHON.findall(page.read_text("utf-8"))
    assert blocks
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"{page.name}, python block {number}", "exec"), {})

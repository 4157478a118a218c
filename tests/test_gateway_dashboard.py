"""``hermes gateway run --dashboard``: the dashboard beside the gateway, observing its manager."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from cli_support import clean_env
from plugin_builders import isolated_home, user_plugin, write_config

pytest.importorskip("fastapi", reason="the dashboard extra (fastapi) is not installed")

WATCHED = """
from hermes_hooks import hookimpl


@hookimpl
def on_session_start(**kwargs):
    return None
"""


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in iter(stream.readline, ""):  # type: ignore[attr-defined]
        into.put(line)


def test_the_gateway_serves_the_dashboard_of_its_own_manager_and_stops_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "watched", WATCHED)
    write_config(home, plugins={"enabled": ["watched"]})
    argv = [sys.executable, "-m", "hermes_hooks", "gateway", "run", "--dashboard",
            "--dashboard-port", "0"]  # fmt: skip
    proc = subprocess.Popen(argv, env=clean_env(home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    said: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stderr, said), daemon=True).start()
    try:
        url = ""
        while not url:
            line = said.get(timeout=30)
            if line.startswith("dashboard: "):
                url = line.removeprefix("dashboard: ").strip()
        assert url.startswith("http://127.0.0.1:")
        assert "token=" in url
        with httpx.Client(follow_redirects=True, timeout=10) as client:
            assert client.get(url).status_code == 200
            base = url.split("/?", 1)[0]
            plugins = client.get(base + "/api/dashboard/plugins")
            assert plugins.status_code == 200
            assert "watched" in plugins.text  # the gateway's own plugins, loaded
        with httpx.Client(timeout=10) as stranger:  # no token: refused
            assert stranger.get(base + "/api/dashboard/plugins").status_code == 401
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

"""Durability: ``hermes plugins enable/disable`` killed with SIGKILL at random points.

Several homes are worked in parallel, each by one thread that runs the real command in a
subprocess (``python -m hermes_hooks``), flipping a bundled plugin and a project plugin on and
off, and kills it after a random delay. After every kill ``config.yaml`` must be valid YAML
that holds either the state before the command or the state after it, with everything else
in the file untouched, and a project plugin enabled only together with its content hash.

The number of kills is ``HERMES_DURABILITY_KILLS`` (30 by default, 200 with ``--full``:
tests/suite_size.py); the delays come from ``HERMES_DURABILITY_SEED`` (default 9). For a
longer soak: ``HERMES_DURABILITY_KILLS=5000``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import pytest
import reliability_figures
import suite_size
import yaml

from hermes_hooks.plugins.config import load_config
from hermes_hooks.plugins.trust import content_hash

KILLS: Final = suite_size.count("HERMES_DURABILITY_KILLS", quick=30, full_size=200)
SEED: Final = int(os.environ.get("HERMES_DURABILITY_SEED", "9"))
WORKERS: Final = 4

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL"),
]

#: What must survive every kill untouched.
OTHER: Final[Mapping[str, Any]] = {
    "model": {"provider": "offline"},
    "image_gen": {"provider": "local"},
    "plugins": {
        "enabled": ["keep-me"],
        "entries": {"keep-me": {"settings": {"level": 3, "name": "ünïcode ✓"}}},
    },
}


class Home:
    """One worker's home, project and the state it expects."""

    def __init__(self, root: Path, bundled: Path) -> None:
        self.home = root / "home"
        self.project = root / "project"
        folder = self.project / ".hermes" / "plugins" / "proj"
        folder.mkdir(parents=True)
        (folder / "plugin.yaml").write_text("name: proj\nversion: '1'\n", encoding="utf-8")
        (folder / "__init__.py").write_text("def register(ctx):\n    pass\n", encoding="utf-8")
        self.proj_hash = content_hash(folder)
        self.home.mkdir(parents=True)
        (self.home / "config.yaml").write_text(
            yaml.safe_dump(dict(OTHER), allow_unicode=True), encoding="utf-8"
        )
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
        self.env.update(
            HERMES_HOME=str(self.home),
            HERMES_BUNDLED_PLUGINS=str(bundled),
            HERMES_ENABLE_PROJECT_PLUGINS="1",
        )

    def command(self, key: str, enable: bool) -> list[str]:
        args = [sys.executable, "-m", "hermes_hooks", "plugins"]
        if enable:
            return [*args, "enable", key, "--no-allow-tool-override", "--yes"]
        return [*args, "disable", key]

    def state(self, key: str) -> tuple[bool, bool, object]:
        """Return (enabled, disabled, trusted hash) of ``key``; fail on an invalid file."""
        config = load_config(self.home)  # raises ConfigError on a torn or invalid file
        plugins = config.get("plugins") or {}
        enabled = key in (plugins.get("enabled") or [])
        disabled = key in (plugins.get("disabled") or [])
        entry = (plugins.get("entries") or {}).get(key) or {}
        self.check_the_rest(config)
        return enabled, disabled, entry.get("trusted_hash")

    def check_the_rest(self, config: dict[str, Any]) -> None:
        assert config["model"] == OTHER["model"]
        assert config["image_gen"] == OTHER["image_gen"]
        plugins = config["plugins"]
        assert "keep-me" in plugins["enabled"]
        assert plugins["entries"]["keep-me"] == OTHER["plugins"]["entries"]["keep-me"]

    def expected(self, key: str, enable: bool) -> tuple[bool, bool, object]:
        trusted = self.proj_hash if key == "proj" and enable else None
        return (enable, not enable, trusted)

    def leftovers(self) -> list[Path]:
        """Temporary files a kill left between writing and renaming (then removed)."""
        found = sorted(self.home.glob(".config.yaml.*.tmp"))
        for path in found:
            path.unlink()
        return found


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.killed = self.completed = self.mid_write = 0
        self.failures: list[str] = []

    def need_more(self) -> bool:
        with self.lock:
            return self.killed < KILLS and not self.failures


def _run(home: Home, key: str, enable: bool, delay: float | None) -> tuple[int, float]:
    started = time.perf_counter()
    process = subprocess.Popen(
        home.command(key, enable),
        cwd=home.project,
        env=home.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    if delay is not None:
        try:
            process.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
    _, err = process.communicate(timeout=60)
    if process.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"hermes failed ({process.returncode}): {err.decode()}")
    return process.returncode, time.perf_counter() - started


def _work(home: Home, rng: random.Random, tally: Tally) -> None:
    try:
        # Calibrate: how long a whole command takes here, under the same load as the kills.
        durations = [_run(home, key, enable, None)[1] for key in ("alpha", "proj")
                     for enable in (True, False)]  # fmt: skip
        typical = sorted(durations)[len(durations) // 2]
        while tally.need_more():
            key = rng.choice(("alpha", "proj"))
            before = home.state(key)
            enable = not before[0]
            # A third of the kills anywhere in the run; the rest around the write, which comes
            # at about 85% of it (after start-up and discovery, before the exit).
            if rng.random() < 1 / 3:
                delay = rng.uniform(0.0, typical)
            else:
                delay = rng.uniform(typical * 0.75, typical * 0.95)
            code, _ = _run(home, key, enable, delay)
            after = home.state(key)
            leftovers = home.leftovers()
            if after not in (before, home.expected(key, enable)):
                raise AssertionError(f"{key}: before {before}, after {after}, enable={enable}")
            with tally.lock:
                if code == 0:
                    tally.completed += 1
                    assert after == home.expected(key, enable)
                else:
                    tally.killed += 1
                    tally.mid_write += bool(leftovers)
    except BaseException as exc:
        with tally.lock:
            tally.failures.append(f"{type(exc).__name__}: {exc}")


def test_config_survives_hermes_killed_at_random_points(tmp_path: Path) -> None:
    bundled = tmp_path / "bundled"
    (bundled / "alpha").mkdir(parents=True)
    (bundled / "alpha" / "plugin.yaml").write_text("name: alpha\nversion: '1'\n", "utf-8")
    (bundled / "alpha" / "__init__.py").write_text("def register(ctx):\n    pass\n", "utf-8")
    homes = [Home(tmp_path / f"worker-{n}", bundled) for n in range(WORKERS)]
    tally = Tally()
    threads = [
        threading.Thread(target=_work, args=(home, random.Random(SEED + n), tally))
        for n, home in enumerate(homes)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert tally.failures == []
    assert tally.killed >= KILLS
    reliability_figures.add("durability", "kills survived", tally.killed)
    reliability_figures.add("durability", "runs completed", tally.completed)
    reliability_figures.add("durability", "kills between temp file and rename", tally.mid_write)

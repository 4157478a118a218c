"""Smoke test of the benchmark harness: it runs in quick mode on tiny inputs and writes its report.

Timings are never asserted here (docs/performance.md): only that every part runs, checks what it
measures, and produces the tables and the chart.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quick_run_writes_every_table_and_the_chart(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nHand-written text stays.\n", encoding="utf-8")
    argv = [sys.executable, "-m", "benchmarks", "--quick", "--ks", "0,1", "--ns", "2"]
    argv += ["--scaling-ns", "2,4", "--callbacks", "50"]
    argv += ["--rounds", "1", "--repeats", "1", "--doc", str(doc)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    text = doc.read_text(encoding="utf-8")
    assert "Hand-written text stays." in text
    for heading in (
        "### Budgets",
        "### Dispatch",
        "### Bounded calls",
        "### `register_hook` callbacks",
        "### Loading and unloading at scale",
        "### Start-up with N plugins",
        "### Command start",
    ):
        assert heading in text
    for budget in (
        "the default bound adds at most 1.5 bare thread round trips per call",
        "on `@hookimpl` implementations within 1.1x raw pluggy",
        "on `register_hook` callbacks within 1.5x raw pluggy",
        "`pm.invoke_hook` within 1.2x `pm.hook`",
        "load 4 plugins within 1.5x per plugin of 2",
        "unload 4 plugins within 1.5x per plugin of 2",
        "one plugin of 50 `register_hook` calls loads in seconds",
    ):
        assert budget in text
    for row in ("| 0 |", "| 1 |", "| 2 |", "| `hermes --version` |"):
        assert row in text
    assert "(quick run)" in text
    assert "### `hermes claude-hook`" in text
    assert "answers Claude Code's PreToolUse within 300 ms of its start" in text
    assert (tmp_path / "performance.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # A second run replaces the generated block instead of adding another one.
    done = subprocess.run(
        [*argv[:4], "--only", "dispatch", "--ks", "0", "--rounds", "1", "--doc", str(doc)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = doc.read_text(encoding="utf-8")
    assert text.count("### Budgets") == 1
    assert "### Command start" not in text


def test_the_memory_benchmark_runs_both_ways_and_prints_its_table() -> None:
    for extra in ([], ["--like"]):
        argv = [sys.executable, "-m", "benchmarks.memory", "--sizes", "300", "--rounds", "1"]
        done = subprocess.run(
            [*argv, *extra], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
        )
        if extra == [] and done.returncode == 2:
            assert "no FTS5" in done.stderr  # a SQLite without FTS5 says so
            continue
        assert done.returncode == 0, done.stderr
        assert "| facts | prefetch median | prefetch p95 | bare sqlite3 | ratio |" in done.stdout
        assert "| 300 |" in done.stdout


def test_the_concurrency_benchmark_blocks_nothing_and_writes_its_table(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nHand-written.\n", encoding="utf-8")
    argv = [sys.executable, "-m", "benchmarks.concurrency", "--turns", "50", "--rounds", "1"]
    for _ in range(2):  # the second run replaces the block
        done = subprocess.run(
            [*argv, "--doc", str(doc)], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert done.returncode in (0, 1), done.stderr  # 1: the time budget missed, not asserted
    assert "| concurrent observers | bound off | default bound |" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith(("| off |", "| on |"))]
    assert len(rows) == 2
    for row in rows:  # no call blocked or result lost, no plugin charged
        assert row.rstrip(" |").endswith("| 0 | 0")
    text = doc.read_text(encoding="utf-8")
    assert text.count("### 50 concurrent asyncio turns") == 1
    assert "Hand-written." in text


def test_the_streaming_benchmark_writes_its_block(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n", encoding="utf-8")
    argv = [sys.executable, "-m", "benchmarks.streaming", "--quick", "--doc", str(doc)]
    for _ in range(2):  # the second run replaces the block
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    text = doc.read_text(encoding="utf-8")
    assert text.count("### Stream observers and shell hooks (quick run)") == 1
    assert "| 1 observer that blocks |" in text
    assert "| shell hook call | bare command | overhead |" in text

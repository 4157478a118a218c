"""Fresh processes: timing a command from spawn to exit, in shuffled rounds.

Each measured command is a Python child (or the ``hermes`` console script); its wall time is
taken by the parent around ``subprocess.run``. A child that reports its own figures prints one
line, ``<ms in the script> <count> <leaked>``, read back as :class:`ChildReport`.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

__all__ = [
    "BYTECODE_NOTE",
    "CHECKOUT",
    "ChildReport",
    "Command",
    "ProcessResults",
    "child_env",
    "python_argv",
    "run_processes",
]

BYTECODE_NOTE: Final = (
    "bytecode cache on (`PYTHONDONTWRITEBYTECODE` unset, one unmeasured warm-up run per "
    "command, so every `.pyc` exists)"
)

_HERMES_ENV: Final = (
    "HERMES_HOME",
    "HERMES_SAFE_MODE",
    "HERMES_ENABLE_PROJECT_PLUGINS",
    "HERMES_BUNDLED_PLUGINS",
    "HERMES_PLUGINS_STRICT",
    "HERMES_PLUGINS_DEBUG",
)


CHECKOUT: Final = Path(__file__).resolve().parent.parent
"""The checkout these benchmarks belong to; children import ``hermes_hooks`` from it."""


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return this process's environment without Hermes switches or bytecode overrides.

    The checkout comes first on ``PYTHONPATH``, so that every child measures the code this
    process measures, whichever ``hermes_hooks`` is installed.
    """
    env = {k: v for k, v in os.environ.items() if k not in _HERMES_ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Command:
    """One command to time: its argv, environment and how to check what it printed."""

    label: str
    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: Path
    reports: bool = False
    """Whether the child prints a :class:`ChildReport` line."""
    stdin: str | None = None
    """What the child reads on stdin (``None``: nothing)."""
    expect: str | None = None
    """Text the child's stdout must hold, or the run fails (it did not do its work)."""


@dataclass(frozen=True)
class ChildReport:
    """What a reporting child measured itself: ms in its script, items handled, leaks."""

    script_ms: float
    count: int
    leaked: int

    @classmethod
    def from_output(cls, text: str) -> ChildReport:
        """Parse the last line a child printed."""
        lines = text.strip().splitlines()
        if not lines:
            raise ValueError("the child printed nothing")
        script_ms, count, leaked = lines[-1].split()
        return cls(float(script_ms), int(count), int(leaked))


@dataclass
class ProcessResults:
    """Per command: every round's wall ms, and the reports of reporting children."""

    wall_ms: dict[str, list[float]] = field(default_factory=dict)
    reports: dict[str, list[ChildReport]] = field(default_factory=dict)

    def wall(self, label: str) -> float:
        """Median wall ms of one command."""
        return statistics.median(self.wall_ms[label])

    def script(self, label: str) -> float | None:
        """Median ms the child measured inside its script, when it reports."""
        reports = self.reports.get(label)
        return statistics.median(r.script_ms for r in reports) if reports else None

    def ratio(self, label: str, anchor: str) -> float:
        """Median over rounds of the wall-time ratio of ``label`` to ``anchor``."""
        pairs = zip(self.wall_ms[label], self.wall_ms[anchor], strict=True)
        return statistics.median(a / b for a, b in pairs)

    def script_ratio(self, label: str, anchor: str) -> float | None:
        """Median over rounds of the in-script ratio of ``label`` to ``anchor``."""
        mine, theirs = self.reports.get(label), self.reports.get(anchor)
        if not mine or not theirs:
            return None
        pairs = zip(mine, theirs, strict=True)
        return statistics.median(a.script_ms / b.script_ms for a, b in pairs)


def _run(command: Command) -> tuple[float, ChildReport | None]:
    started = time.perf_counter()
    done = subprocess.run(
        list(command.argv),
        env=dict(command.env),
        cwd=command.cwd,
        input=command.stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    wall_ms = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(
            f"{command.label}: exit code {done.returncode}\n{done.stdout}\n{done.stderr}"
        )
    if command.expect is not None and command.expect not in done.stdout:
        raise RuntimeError(f"{command.label}: expected {command.expect!r}, got {done.stdout!r}")
    return wall_ms, ChildReport.from_output(done.stdout) if command.reports else None


def run_processes(
    commands: Sequence[Command],
    *,
    repeats: int,
    seed: int | None = None,
    check: Callable[[Command, ChildReport], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ProcessResults:
    """Run each command once unmeasured, then ``repeats`` rounds in a fresh random order.

    :param check: called with each report (warm-up included); raises when the child did not
        do what it is timed for.
    """
    rng = random.Random(seed)
    results = ProcessResults()
    for command in commands:
        _, report = _run(command)  # warm-up: bytecode caches, the OS's file cache
        if report is not None and check is not None:
            check(command, report)
    for round_index in range(repeats):
        if progress is not None:
            progress(f"processes: round {round_index + 1}/{repeats}")
        for command in rng.sample(list(commands), len(commands)):
            wall_ms, report = _run(command)
            results.wall_ms.setdefault(command.label, []).append(wall_ms)
            if report is not None:
                if check is not None:
                    check(command, report)
                results.reports.setdefault(command.label, []).append(report)
    return results


def python_argv(code: str, *args: str) -> list[str]:
    """Return the argv that runs ``code`` in a fresh interpreter like this one."""
    return [sys.executable, "-c", code, *args]

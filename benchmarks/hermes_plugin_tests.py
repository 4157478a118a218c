"""Run Hermes Agent's own plugin tests under hermes-hooks and count what passes.

``python -m benchmarks.hermes_plugin_tests FOLDER [PATH ...]`` runs a plain ``pytest`` in
``FOLDER`` (a copy of Hermes' test files with their relative paths, and of the ``plugins/``
folders they import, kept outside this repository), with hermes-hooks installed and no
conftest of Hermes': the project's pytest plugin makes ``hermes_cli.plugins``,
``tools.registry``, ``agent.*`` and ``plugins.<name>`` importable, and ``--hermes-home-per-test``
gives every test its own ``HERMES_HOME`` as Hermes' ``tests/conftest.py`` does. ``PATH`` are
the test files or folders to run, relative to ``FOLDER`` (``tests`` by default).

It prints the passes per file and every test that did not pass, with the first line of its
error; ``--json`` prints them as JSON. Credential-looking variables are removed first, and the
bundled plugins are ``FOLDER/plugins`` (``HERMES_BUNDLED_PLUGINS``), as a Hermes checkout's
own ``plugins/`` folder is its bundled one (an empty folder when there is none), so the run
depends on nothing of the machine's. The exit status is 0 when every test passed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs

_SECRET_SUFFIXES: Final = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_PASSWORD")


@attrs.frozen
class Outcome:
    """One test's outcome: ``passed``, ``failed``, ``error`` or ``skipped``, and why."""

    file: str
    test: str
    result: str
    message: str = ""


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def read_junit(report: Path) -> list[Outcome]:
    """Return the outcome of every test case in pytest's JUnit XML ``report``."""
    outcomes: list[Outcome] = []
    for case in ET.parse(report).getroot().iter("testcase"):
        classname = case.get("classname") or ""
        file = case.get("file") or classname.replace(".", "/") + ".py"
        owner = classname.rpartition(".")[2]  # a class, or the module for a function
        name = case.get("name") or ""
        test = name if owner == Path(file).stem else f"{owner}::{name}"
        result, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                result = {"failure": "failed"}.get(child.tag, child.tag)
                message = _first_line(child.get("message")) or _first_line(child.text)
                break
        outcomes.append(Outcome(file, test, result, message))
    return outcomes


def run(folder: Path, paths: Sequence[str], *, timeout: float = 900) -> list[Outcome]:
    """Run ``pytest`` on ``paths`` in ``folder`` (see the module's docstring)."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.upper().endswith(_SECRET_SUFFIXES) and not name.startswith("PYTEST_")
    }
    with tempfile.TemporaryDirectory(prefix="hermes-plugin-tests-") as scratch:
        bundled = folder / "plugins"
        if not bundled.is_dir():
            bundled = Path(scratch) / "no-bundled-plugins"
            bundled.mkdir()
        env["HERMES_BUNDLED_PLUGINS"] = str(bundled)
        env["HERMES_HOME"] = str(Path(scratch) / "home")  # until each test sets its own
        report = Path(scratch) / "report.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "--hermes-home-per-test",
            f"--junitxml={report}",
            "-o",
            "junit_family=xunit1",
            *paths,
        ]
        subprocess.run(
            command, cwd=folder, env=env, timeout=timeout, check=False, capture_output=True
        )
        if not report.exists():
            raise SystemExit(f"pytest wrote no report in {folder} (is pytest installed?)")
        return read_junit(report)


def summary(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """Return, per test file, how many tests passed and how many ran."""
    files: dict[str, dict[str, int]] = {}
    for outcome in outcomes:
        counts = files.setdefault(outcome.file, {"passed": 0, "total": 0})
        counts["total"] += 1
        counts["passed"] += outcome.result == "passed"
    return dict(sorted(files.items()))


def render(outcomes: Sequence[Outcome]) -> str:
    """Return the per-file table and the list of tests that did not pass, as Markdown."""
    files = summary(outcomes)
    passed = sum(c["passed"] for c in files.values())
    total = sum(c["total"] for c in files.values())
    lines = ["| file | passed |", "| --- | --- |"]
    lines += [f"| `{name}` | {c['passed']} of {c['total']} |" for name, c in files.items()]
    lines += [f"| all | {passed} of {total} |", ""]
    for outcome in outcomes:
        if outcome.result != "passed":
            lines.append(f"- `{outcome.test}` ({outcome.result}): {outcome.message}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.hermes_plugin_tests",
        description="Run Hermes' own plugin tests under hermes-hooks and count the passes.",
    )
    parser.add_argument("folder", type=Path, help="a copy of Hermes' tests and plugins/")
    parser.add_argument("paths", nargs="*", default=["tests"], help="what to run (tests/)")
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    args = parser.parse_args(argv)
    folder: Path = args.folder.resolve()
    if not folder.is_dir():
        parser.error(f"{folder} is not a folder")
    outcomes = run(folder, args.paths)
    if args.json:
        print(json.dumps([attrs.asdict(o) for o in outcomes], indent=2))
    else:
        print(render(outcomes))
    return 0 if all(o.result == "passed" for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())

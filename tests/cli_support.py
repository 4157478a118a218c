"""Helpers for the ``hermes`` command tests: a temporary home and two ways to run the command.

``hermes(...)`` runs the real command in a subprocess (``python -m hermes_hooks``) with
``HERMES_HOME`` set to the test's home and every other ``HERMES_*`` variable removed;
``invoke(...)`` runs it in-process with click's ``CliRunner`` where a process adds nothing.
Neither ever touches the real ``~/.hermes``. Plugin folders and ``config.yaml`` are written with
:mod:`plugin_builders`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result
from homes import cli_home

from hermes_hooks.cli import cli

home = cli_home
"""The fixture :func:`homes.cli_home` under the name these tests give it."""


def read_config(home: Path) -> dict[str, Any]:
    """Return the parsed ``config.yaml`` (a mapping)."""
    config = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))
    assert isinstance(config, dict), config
    return config


GOOD = """\
    from hermes_hooks import hookimpl

    @hookimpl
    def pre_tool_call(tool_name):
        return None
    """


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """Return the process environment without ``HERMES_*``, with ``HERMES_HOME=home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HERMES_HOME=str(home), COLUMNS="200")
    if "PYTHONPATH" not in extra:
        # The venv's pip-installed plugins stay out (entry_point_isolation.py); a test giving
        # its own site on PYTHONPATH wants the entry points there.
        env["HERMES_PLUGINS_NO_ENTRY_POINTS"] = "1"
    env.update(extra)
    return env


def hermes(
    home: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the real ``hermes`` command in a subprocess on *home*."""
    return subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args],
        env=clean_env(home, **env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def invoke(*args: str, input: str | None = None) -> Result:
    """Run ``hermes`` in-process (the ``home`` fixture has set the environment).

    ``result.stdout`` and ``result.stderr`` are kept apart; ``result.output`` has both.
    """
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        runner = CliRunner()
    return runner.invoke(cli, list(args), input=input, catch_exceptions=False)

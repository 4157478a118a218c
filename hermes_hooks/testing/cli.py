"""Running the ``hermes`` command in process, on a test's home, and what it printed."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
from click.testing import CliRunner

from hermes_hooks.cli import cli

__all__ = ["CliOutcome", "run_hermes"]

_PLUGIN_MODULES = "hermes_plugins."


@attrs.frozen
class CliOutcome:
    """How one ``hermes`` command ended.

    :param args: the arguments after ``hermes``.
    :param exit_code: 0 on success.
    :param stdout: what it printed on standard output.
    :param stderr: what it printed on standard error.
    :param output: both, interleaved as a terminal shows them.
    """

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    output: str

    @property
    def json(self) -> Any:
        """Standard output parsed as JSON (for ``--json`` commands)."""
        return json.loads(self.stdout)

    def __str__(self) -> str:
        lines = [f"$ {shlex.join(('hermes', *self.args))}", f"exit code {self.exit_code}"]
        if self.stdout:
            lines += ["standard output:", self.stdout.rstrip("\n")]
        if self.stderr:
            lines += ["standard error:", self.stderr.rstrip("\n")]
        return "\n".join(lines)


@contextlib.contextmanager
def _restored_process_state(cwd: Path) -> Iterator[None]:
    """Run in ``cwd``; afterwards restore the environment, the folder and plugin modules.

    The command reads ``$HERMES_HOME/.env`` into the environment and imports plugins as
    ``hermes_plugins.*`` modules: neither may leak into the rest of the test.
    """
    environ = dict(os.environ)
    modules = {k: v for k, v in sys.modules.items() if k.startswith(_PLUGIN_MODULES)}
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(previous)
        os.environ.clear()
        os.environ.update(environ)
        for name in [k for k in sys.modules if k.startswith(_PLUGIN_MODULES)]:
            if name not in modules:
                del sys.modules[name]
        sys.modules.update(modules)


def run_hermes(
    args: Sequence[str],
    *,
    home: Path,
    cwd: Path,
    input: str | None = None,
    entry_points: bool = False,
) -> CliOutcome:
    """Run ``hermes ARGS`` in this process on ``home`` and return how it ended.

    An exception the command does not handle itself propagates, with its traceback.

    :param entry_points: let pip-installed plugins load, as ``hermes_pm`` does when the test
        is marked ``entry_points=True``; by default the command sees the home's plugins only.
    """
    from hermes_hooks.plugins.config import NO_ENTRY_POINTS_ENV

    runner = CliRunner()
    env = {"HERMES_HOME": str(home), "COLUMNS": "200"}
    env[NO_ENTRY_POINTS_ENV] = "" if entry_points else "1"
    with _restored_process_state(cwd):
        result = runner.invoke(
            cli, list(args), input=input, env=env, catch_exceptions=False, prog_name="hermes"
        )
    return CliOutcome(
        args=tuple(args),
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
        output=result.output,
    )

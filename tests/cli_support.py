"""Helpers for the ``hermes`` command tests: a temporary home, plugin folders, two ways to run.

``hermes(...)`` runs the real command in a subprocess (``python -m hermes_hooks``) with
``HERMES_HOME`` set to the test's home and every other ``HERMES_*`` variable removed;
``invoke(...)`` runs it in-process with click's ``CliRunner`` where a process adds nothing.
Neither ever touches the real ``~/.hermes``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from hermes_hooks.cli import cli


def write_plugin(
    root: Path,
    key: str,
    code: str = "",
    manifest: Mapping[str, object] | str | None = None,
    files: Mapping[str, str] | None = None,
) -> Path:
    """Write plugin folder ``root/key`` (``plugin.yaml`` + dedented ``__init__.py``)."""
    folder = root / key
    folder.mkdir(parents=True, exist_ok=True)
    name = key.rsplit("/", 1)[-1]
    if isinstance(manifest, str):
        text = manifest
    else:
        text = yaml.safe_dump({"name": name, "version": "1.2.3", **(manifest or {})})
    (folder / "plugin.yaml").write_text(text, encoding="utf-8")
    (folder / "__init__.py").write_text(textwrap.dedent(code), encoding="utf-8")
    for relative, content in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content), encoding="utf-8")
    return folder


def user_plugin(home: Path, key: str, code: str = "", **kwargs: object) -> Path:
    """Write a plugin into ``home/plugins``."""
    return write_plugin(home / "plugins", key, code, **kwargs)  # type: ignore[arg-type]


def write_config(home: Path, text: str) -> None:
    """Write ``home/config.yaml`` verbatim (dedented)."""
    (home / "config.yaml").write_text(textwrap.dedent(text), encoding="utf-8")


def enable(home: Path, *keys: str) -> None:
    """Write a config enabling *keys*."""
    write_config(home, "plugins:\n  enabled:\n" + "".join(f"    - {k}\n" for k in keys))


def read_config(home: Path) -> object:
    """Return the parsed ``config.yaml``."""
    return yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))


GOOD = """\
    from hermes_hooks import hookimpl

    @hookimpl
    def pre_tool_call(tool_name):
        return None
    """


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """Return the process environment without ``HERMES_*``, with ``HERMES_HOME=home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HERMES_HOME=str(home), COLUMNS="200", **extra)
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


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh ``HERMES_HOME`` for in-process runs; the environment is restored afterwards.

    Bundled plugins point at an empty folder, so only the test's plugins are found.
    """
    saved = dict(os.environ)
    for name in [k for k in os.environ if k.startswith("HERMES_")]:
        monkeypatch.delenv(name)
    path = tmp_path / "home"
    path.mkdir()
    bundled = tmp_path / "no-bundled"
    bundled.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(path))
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(bundled))
    monkeypatch.setenv("COLUMNS", "200")
    before = set(sys.modules)
    yield path
    # The command sets variables from $HERMES_HOME/.env and imports plugin modules: undo both.
    os.environ.clear()
    os.environ.update(saved)
    for name in set(sys.modules) - before:
        if name.startswith("hermes_plugins."):
            del sys.modules[name]

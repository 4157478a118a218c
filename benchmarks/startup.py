"""Start-up with N plugins, and the start of the ``hermes`` command, in fresh processes.

For each N, a folder of N generated plugins (a ``plugin.yaml`` and an ``__init__.py`` with one
``@hookimpl`` and one ``ctx.register_hook`` callback each, every one enabled in
``config.yaml``) is timed four ways, each in a fresh interpreter:

- ``list``: ``PluginManager(home).discover()``, which reads manifests and imports no plugin;
- ``load``: ``PluginManager(home).discover_and_load()``;
- ``parse`` (floor of ``list``): read and parse the same N manifests with PyYAML's C loader;
- ``import`` (floor of ``load``): import the same N modules as top-level packages.

The command start times ``hermes --version`` and ``hermes plugins list`` against
``python -c "import pluggy, yaml, click, attrs"`` and ``python -c pass``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from benchmarks.processes import (
    ChildReport,
    Command,
    ProcessResults,
    child_env,
    python_argv,
    run_processes,
)

__all__ = [
    "COMMANDS",
    "STARTUP_WAYS",
    "StartupResults",
    "build_plugin_tree",
    "hermes_argv",
    "run_commands",
    "run_startup",
]

STARTUP_WAYS: Final = ("list", "parse", "load", "import")

COMMANDS: Final = (
    "hermes --version",
    "hermes plugins list",
    "hermes models",
    "import 4 libraries",
    "python pass",
)

_MANIFEST: Final = """\
name: plugin-{i:04d}
version: 1.0.{i}
description: Generated plugin {i} for the start-up benchmark
author: hermes-hooks benchmarks
kind: standalone
hooks:
  - pre_tool_call
  - post_tool_call
"""

_MODULE: Final = '''\
"""Generated plugin {i} for the start-up benchmark."""

from hermes_hooks import hookimpl


@hookimpl
def pre_tool_call(tool_name, args):
    if tool_name == "never-called-tool-{i}":
        return {{"action": "block", "message": "plugin {i} blocks it"}}
    return None


def _log_result(tool_name, result, **kwargs):
    return None


def register(ctx):
    ctx.register_hook("post_tool_call", _log_result)
'''

# Each child times its own script from its first line, imports included, and prints
# "<ms> <items handled> <plugin modules imported when none should be>".
_LIST: Final = """\
import time; _t0 = time.perf_counter()
import sys
from hermes_hooks.plugins.manager import PluginManager
found = PluginManager(sys.argv[1]).discover()
_ms = (time.perf_counter() - _t0) * 1000
leaked = sum(1 for m in sys.modules if m.startswith(("hermes_plugins.plugin_", "plugin_")))
print(_ms, sum(1 for c in found if c.error is None), leaked)
"""

_LOAD: Final = """\
import time; _t0 = time.perf_counter()
import sys
from hermes_hooks.plugins.manager import PluginManager
pm = PluginManager(sys.argv[1])
pm.discover_and_load()
_ms = (time.perf_counter() - _t0) * 1000
print(_ms, sum(1 for info in pm.list_plugins() if info.status == "enabled"), 0)
"""

_PARSE: Final = """\
import time; _t0 = time.perf_counter()
import os, sys
import yaml
root = sys.argv[1]
parsed = 0
for name in sorted(os.listdir(root)):
    with open(os.path.join(root, name, "plugin.yaml"), "rb") as f:
        parsed += isinstance(yaml.load(f.read(), Loader=yaml.CSafeLoader), dict)
_ms = (time.perf_counter() - _t0) * 1000
print(_ms, parsed, 0)
"""

_IMPORT: Final = """\
import time; _t0 = time.perf_counter()
import importlib, os, sys
root = sys.argv[1]
sys.path.insert(0, root)
names = sorted(os.listdir(root))
for name in names:
    importlib.import_module(name)
_ms = (time.perf_counter() - _t0) * 1000
print(_ms, len(names), 0)
"""


@dataclass(frozen=True)
class PluginTree:
    """A generated Hermes home: ``home/plugins`` holds ``n`` plugins, all enabled."""

    home: Path
    bundled: Path
    n: int

    @property
    def plugins(self) -> Path:
        """The folder holding the plugin folders."""
        return self.home / "plugins"


def build_plugin_tree(root: Path, n: int) -> PluginTree:
    """Write ``n`` plugins and a ``config.yaml`` enabling them under ``root``."""
    home, bundled = root / "home", root / "bundled-empty"
    plugins = home / "plugins"
    plugins.mkdir(parents=True)
    bundled.mkdir()
    keys = []
    for i in range(n):
        key = f"plugin_{i:04d}"
        keys.append(key)
        folder = plugins / key
        folder.mkdir()
        (folder / "plugin.yaml").write_text(_MANIFEST.format(i=i), encoding="utf-8")
        (folder / "__init__.py").write_text(_MODULE.format(i=i), encoding="utf-8")
    enabled = "".join(f"    - {key}\n" for key in keys)
    (home / "config.yaml").write_text(f"plugins:\n  enabled:\n{enabled}", encoding="utf-8")
    return PluginTree(home, bundled, n)


@dataclass
class StartupResults:
    """The start-up figures for every N."""

    ns: tuple[int, ...]
    repeats: int
    processes: ProcessResults

    @staticmethod
    def label(way: str, n: int) -> str:
        """The label of one timed command."""
        return f"{way} N={n}"


def _check_report(command: Command, report: ChildReport) -> None:
    way, _, n_text = command.label.partition(" N=")
    if report.count != int(n_text):
        raise RuntimeError(f"{command.label}: handled {report.count} plugins, not {n_text}")
    if way == "list" and report.leaked:
        raise RuntimeError(f"{command.label}: listing imported {report.leaked} plugin modules")


@contextmanager
def _trees(ns: Sequence[int]) -> Iterator[dict[int, PluginTree]]:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-startup-") as tmp:
        yield {n: build_plugin_tree(Path(tmp) / f"n{n}", n) for n in ns}


def run_startup(
    ns: Sequence[int] = (10, 100, 500),
    *,
    repeats: int = 15,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> StartupResults:
    """Time listing and loading N plugins against their floors, for each N."""
    with _trees(ns) as trees:
        commands = []
        for n, tree in trees.items():
            env = child_env(
                {
                    "HERMES_HOME": str(tree.home),
                    "HERMES_BUNDLED_PLUGINS": str(tree.bundled),
                    # N plugins means N: not those pip installed in this venv too.
                    "HERMES_PLUGINS_NO_ENTRY_POINTS": "1",
                }
            )
            code_of = {"list": _LIST, "load": _LOAD, "parse": _PARSE, "import": _IMPORT}
            for way in STARTUP_WAYS:
                target = tree.home if way in ("list", "load") else tree.plugins
                commands.append(
                    Command(
                        StartupResults.label(way, n),
                        python_argv(code_of[way], str(target)),
                        env,
                        tree.home,
                        reports=True,
                    )
                )
        processes = run_processes(
            commands, repeats=repeats, seed=seed, check=_check_report, progress=progress
        )
    return StartupResults(tuple(ns), repeats, processes)


def hermes_argv() -> list[str]:
    """Return the argv of the ``hermes`` console script next to this interpreter."""
    script = Path(sys.executable).parent / "hermes"
    if script.is_file():
        return [str(script)]
    found = shutil.which("hermes")
    if found:
        return [found]
    return [sys.executable, "-m", "hermes_hooks"]


def run_commands(
    *,
    repeats: int = 20,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> ProcessResults:
    """Time the start of ``hermes`` commands against a bare interpreter and library imports.

    ``hermes plugins list`` runs on an empty Hermes home, so it shows the bundled plugins and
    whatever the environment's entry points bring; ``hermes models`` imports the bundled
    model-provider plugins, as the first profile lookup of ``hermes -z`` does.
    """
    with tempfile.TemporaryDirectory(prefix="hermes-bench-home-") as home:
        env = child_env({"HERMES_HOME": home})
        hermes = hermes_argv()
        commands = [
            Command("hermes --version", [*hermes, "--version"], env, Path(home)),
            Command("hermes plugins list", [*hermes, "plugins", "list"], env, Path(home)),
            # Imports every model-provider plugin (eleven bundled profiles): the first lookup.
            Command("hermes models", [*hermes, "models"], env, Path(home)),
            Command(
                "import 4 libraries",
                python_argv("import pluggy, yaml, click, attrs"),
                env,
                Path(home),
            ),
            Command("python pass", python_argv("pass"), env, Path(home)),
        ]
        return run_processes(commands, repeats=repeats, seed=seed, progress=progress)

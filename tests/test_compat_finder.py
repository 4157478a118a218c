"""The import finder of the compatibility layer: when it serves a Hermes name, and when not.

Each case runs in a fresh Python process (``sys.modules`` and ``sys.meta_path`` are process-wide,
and what a real ``utils.py`` on ``sys.path`` does must not depend on what another test imported
before), with its own ``HERMES_HOME`` and working folder under ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from plugin_builders import write_config, write_plugin

LOAD = """
from hermes_hooks import PluginManager
pm = PluginManager()
pm.discover_and_load()
info = {i.key: (i.status, i.error) for i in pm.list_plugins()}
"""


def run(
    tmp_path: Path,
    code: str,
    *,
    cwd: Path | None = None,
    path: tuple[Path, ...] = (),
    load: bool = False,
) -> Any:
    """Run ``code`` in a new process with a home at ``tmp_path/home``; return what it printed.

    The code prints one JSON value as its last line; with ``load``, a manager has discovered
    and loaded first (which installs the finder).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    bundled = tmp_path / "bundled-empty"
    bundled.mkdir(exist_ok=True)
    env.update(HERMES_HOME=str(tmp_path / "home"), HERMES_BUNDLED_PLUGINS=str(bundled))
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in path)
    script = "import json, sys\n" + (LOAD if load else "") + textwrap.dedent(code)
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd or tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_nothing_is_installed_or_imported_until_a_manager_discovers_and_a_plugin_asks(
    tmp_path: Path,
) -> None:
    write_plugin(tmp_path / "home" / "plugins", "plain", "def register(ctx):\n    pass\n")
    write_config(tmp_path / "home", ["plain"])
    out = run(
        tmp_path,
        """
        import hermes_hooks
        from hermes_hooks import PluginManager
        pm = PluginManager()
        compat = lambda: sorted(m for m in sys.modules if m.startswith("hermes_hooks.compat"))
        before = [compat(), any(type(f).__name__ == "HermesCompatFinder" for f in sys.meta_path)]
        pm.discover_and_load()
        after = [compat(), any(type(f).__name__ == "HermesCompatFinder" for f in sys.meta_path)]
        import agent.image_gen_provider
        served = [m for m in compat() if m.endswith("image_gen_provider")]
        print(json.dumps({"before": before, "after": after, "served": served,
                          "agent": "agent" in sys.modules}))
        """,
    )
    assert out["before"] == [[], False]
    # Installed, but not one Hermes module imported: only the finder and the table.
    assert out["after"] == [
        ["hermes_hooks.compat", "hermes_hooks.compat.finder", "hermes_hooks.compat.selfimports",
         "hermes_hooks.compat.surface"],
        True,
    ]  # fmt: skip
    assert out["served"] == ["hermes_hooks.compat.image_gen_provider"]
    assert out["agent"] is True


def test_a_real_module_of_a_served_name_always_wins(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "utils.py").write_text("OWN = 'the host utils'\n", encoding="utf-8")
    tools = site / "tools"
    tools.mkdir()
    (tools / "__init__.py").write_text("OWN = 'the host tools package'\n", encoding="utf-8")
    out = run(
        tmp_path,
        """
        import utils, tools
        try:
            import tools.registry
            registry = "served"
        except ModuleNotFoundError as exc:
            registry = str(exc)
        import hermes_constants
        print(json.dumps({"utils": utils.OWN, "tools": tools.OWN, "registry": registry,
                          "constants": hermes_constants.__name__}))
        """,
        path=(site,),
        load=True,
    )
    assert out["utils"] == "the host utils"
    assert out["tools"] == "the host tools package"
    # Below a real package, its own children only: nothing is served into it.
    assert out["registry"] == "No module named 'tools.registry'"
    assert out["constants"] == "hermes_hooks.compat.hermes_constants"


def test_a_bare_folder_does_not_beat_a_served_module(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "tools").mkdir(parents=True)  # no __init__.py: only a namespace package would come
    (work / "tools" / "notes.txt").write_text("not code\n", encoding="utf-8")
    (work / "agent").mkdir()
    out = run(
        tmp_path,
        """
        sys.path.insert(0, ".")
        from tools.registry import tool_result
        import tools, agent.image_gen_provider as igp
        print(json.dumps({"result": tool_result(ok=True), "tools": tools.__hermes_compat__,
                          "abc": igp.ImageGenProvider.__module__}))
        """,
        cwd=work,
        load=True,
    )
    assert out == {
        "result": '{"ok": true}',
        "tools": True,
        "abc": "hermes_hooks.backends.image_gen.provider",
    }


def test_an_unserved_hermes_name_is_a_plain_module_not_found_error(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        """
        errors = []
        names = (
            "agent.usage_pricing", "tools.web_ui", "hermes_cli.nothing_here", "plugins.nobody"
        )
        for name in names:
            try:
                __import__(name)
            except ModuleNotFoundError as exc:
                errors.append(str(exc))
        print(json.dumps(errors))
        """,
        load=True,
    )
    assert out == [
        "No module named 'agent.usage_pricing'",
        "No module named 'tools.web_ui'",
        "No module named 'hermes_cli.nothing_here'",
        "No module named 'plugins.nobody'",
    ]


def test_the_finder_is_installed_once_before_the_path_finder(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        """
        import importlib.machinery
        from hermes_hooks import PluginManager
        for _ in range(3):
            PluginManager().discover_and_load(force=True)
        names = [type(f).__name__ for f in sys.meta_path]
        finders = [f for f in sys.meta_path if type(f).__name__ == "HermesCompatFinder"]
        path = sys.meta_path.index(importlib.machinery.PathFinder)
        before = names.index("HermesCompatFinder") < path
        print(json.dumps({"count": len(finders), "before_path": before}))
        """,
    )
    assert out == {"count": 1, "before_path": True}


def test_a_served_module_is_the_same_object_under_both_names(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        """
        import agent.image_gen_provider as served
        import hermes_hooks.compat.image_gen_provider as own
        from hermes_hooks import ImageGenProvider
        print(json.dumps({"same": served is own, "abc": served.ImageGenProvider is ImageGenProvider,
                          "spec": served.__spec__.name}))
        """,
        load=True,
    )
    # The module keeps telling its real name, though it is entered under the Hermes one too.
    assert out == {"same": True, "abc": True, "spec": "hermes_hooks.compat.image_gen_provider"}


@pytest.mark.parametrize("name", ["agent", "hermes_cli", "plugins"])
def test_a_real_package_wins_over_each_served_package(tmp_path: Path, name: str) -> None:
    site = tmp_path / "site"
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text("OWN = True\n", encoding="utf-8")
    out = run(
        tmp_path,
        f"import {name}\nprint(json.dumps(getattr({name}, 'OWN', False)))\n",
        path=(site,),
        load=True,
    )
    assert out is True


def test_without_a_live_manager_the_home_is_the_environments(tmp_path: Path) -> None:
    out = run(
        tmp_path,
        """
        import gc, os
        del pm, info
        gc.collect()
        from hermes_constants import get_hermes_home
        from tools.registry import registry
        try:
            registry.get_all_tool_names()
            error = None
        except RuntimeError as exc:
            error = str(exc)
        print(json.dumps({"home": str(get_hermes_home()), "env": os.environ["HERMES_HOME"],
                          "error": error}))
        """,
        load=True,
    )
    assert out["home"] == out["env"]
    assert "none exists in this process: create one first" in out["error"]

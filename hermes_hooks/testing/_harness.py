"""How the fixtures build a plugin manager: host tools, then the chosen plugins, checked."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hermes_hooks.host.tools import install_builtin_tools
from hermes_hooks.plugins.discovery import Candidate, discover_candidates
from hermes_hooks.plugins.manager import PluginManager, callback_of
from hermes_hooks.testing.recorder import is_probe

__all__ = ["LocalPluginManager", "build_manager", "check_unknown_hooks", "reload_manager"]


class LocalPluginManager(PluginManager):
    """A manager that leaves pip-installed (entry point) plugins out of discovery.

    A test's plugins are the ones it writes into its home; a plugin installed in the
    environment (the author's own, ``pip install -e .``) would otherwise take their key.
    """

    def discover(self) -> list[Candidate]:
        return discover_candidates(
            hermes_home=self.hermes_home, cwd=self.cwd, include_entry_points=False
        )


def build_manager(home: Path, options: Mapping[str, Any]) -> PluginManager:
    """Return a manager on ``home`` with the host tools, its plugins loaded and checked."""
    __tracebackhide__ = True
    cls = PluginManager if options["entry_points"] else LocalPluginManager
    pm = cls(home, strict=options["strict"])
    # Host tools first, as create_manager does: plugins cannot silently take their names.
    install_builtin_tools(pm)
    pm.discover_and_load()
    if not options["allow_unknown_hooks"]:
        check_unknown_hooks(pm)
    return pm


def reload_manager(pm: PluginManager, options: Mapping[str, Any]) -> None:
    """Unload every plugin, discover and load again (after the home changed), and check."""
    __tracebackhide__ = True
    pm.discover_and_load(force=True)
    if not options["allow_unknown_hooks"]:
        check_unknown_hooks(pm)


def _where(function: Any) -> str:
    inner = callback_of(function)
    try:
        file = inspect.getsourcefile(inner)
        line = inspect.getsourcelines(inner)[1]
    except (OSError, TypeError):
        return getattr(inner, "__qualname__", repr(inner))
    return f"{getattr(inner, '__qualname__', '?')} ({file}:{line})"


def check_unknown_hooks(pm: PluginManager) -> None:
    """Fail the test when a loaded plugin implements a hook this host does not know.

    Hermes keeps such implementations for newer hosts; in a test it is nearly always a typo.
    """
    __tracebackhide__ = True
    known = pm.known_hooks()
    problems = []
    for name, plugin in pm.list_name_plugin():
        if is_probe(name) or plugin is None:
            continue
        for caller in pm.get_hookcallers(plugin) or []:
            if caller.spec is not None:
                continue
            close = difflib.get_close_matches(caller.name, known, n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            impls = [i for i in caller.get_hookimpls() if i.plugin is plugin]
            where = f" in {_where(impls[0].function)}" if impls else ""
            problems.append(
                f"plugin {name!r} implements {caller.name!r}{where}, which is not a hook{hint}"
            )
    if problems:
        pytest.fail(
            "\n".join(problems)
            + "\n(hermes_pm fails on unknown hook names, which Hermes would keep silently for "
            "newer hosts; mark the test @pytest.mark.hermes(allow_unknown_hooks=True) to keep "
            "them)",
            pytrace=False,
        )

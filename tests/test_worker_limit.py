"""``plugins.hook_worker_threads``: the limit on worker threads is a setting, and a full pool
never turns into a refused or blocked call: the call runs inline on its caller's thread."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import pytest
import yaml
from homes import (
    plugin_home as home,  # noqa: F401  (the fixture)
    shared_module_home as shared_home,  # noqa: F401  (the fixture)
)
from plugin_builders import PluginHome, info

from hermes_hooks.calling import workers
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.plugins.config import PluginsConfig
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.plugins.settings import check_config

WHERE = """
import threading
from hermes_hooks import hookimpl

THREADS = []

@hookimpl
def pre_tool_call(tool_name, args):
    THREADS.append(threading.current_thread().name)
    if "rm -rf" in str(args.get("command", "")):
        return {"action": "block", "message": "no rm -rf"}
    return None
"""


def configure(home: PluginHome, **plugins: Any) -> None:
    section = {"enabled": home.enabled, "hook_callback_timeout": 5, **plugins}
    (home.root / "config.yaml").write_text(yaml.safe_dump({"plugins": section}), "utf-8")


@pytest.fixture
def limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a test's configuration sets, the process's limit is put back after it."""
    monkeypatch.setattr(workers, "MAX_WORKERS", workers.MAX_WORKERS)


@pytest.mark.usefixtures("limit")
def test_the_setting_sets_the_process_limit_and_an_unset_key_leaves_it(home: PluginHome) -> None:
    home.add_plugin("where", WHERE)
    configure(home, hook_worker_threads=3)
    home.manager().discover_and_load()
    assert workers.MAX_WORKERS == 3
    configure(home)
    home.manager().discover_and_load()
    assert workers.MAX_WORKERS == 3, "a configuration without the key leaves the limit alone"


@pytest.mark.usefixtures("limit")
def test_with_the_pool_full_a_bounded_call_runs_inline_and_is_answered(home: PluginHome) -> None:
    home.add_plugin("where", WHERE)
    configure(home, hook_worker_threads=1)
    pm = home.manager()
    pm.discover_and_load()
    threads = _threads_of_plugin()
    release = threading.Event()
    workers.shutdown_idle()
    held = [workers.submit(release.wait, (30,)) for _ in range(1 - workers.live_workers())]
    try:
        hooks = Hooks(pm)
        allowed = hooks.pre_tool_call(tool_name="terminal", args={"command": "ls"})
        blocked = hooks.pre_tool_call(tool_name="terminal", args={"command": "rm -rf /"})
    finally:
        release.set()
    assert not allowed.is_blocked
    assert (blocked.is_blocked, blocked.plugin) == (True, "where")
    here = threading.current_thread().name
    assert threads[-2:] == [here, here], "with every worker busy the call ran on its caller"
    assert info(pm, "where").hook_errors == 0
    assert info(pm, "where").hook_timeouts == 0
    assert all(job.wait(10) for job in held)


def _threads_of_plugin() -> list[str]:
    """The list the loaded ``where`` plugin appends its threads' names to."""
    for name, module in list(sys.modules.items()):
        if name.rpartition(".")[2] == "where" and hasattr(module, "THREADS"):
            found: list[str] = module.THREADS
            return found
    raise AssertionError("the plugin's module is not loaded")


def test_a_wrong_value_is_named_and_the_default_kept(tmp_path: Any) -> None:
    config = {"plugins": {"hook_worker_threads": 0}}
    problems = check_config(config, source=tmp_path / "config.yaml")
    assert any("plugins.hook_worker_threads" in str(p) for p in problems), problems
    assert PluginsConfig.from_config(config).hook_worker_threads is None


# -- hung plugins never fill the pool; an async plugin needs a loop, never refused ---------------

SHARED = "hermes_worker_limit_shared"
SHARED_CODE = "import threading\nrelease = threading.Event()\nwoke = []\n"
HUNG = f"""
from {SHARED} import release, woke
from hermes_hooks import hookimpl


@hookimpl
def HOOK(tool_name):
    release.wait(20)  # hangs, until the test ends
    woke.append(tool_name)
"""


def _hung_pair(home: PluginHome, hook: str) -> tuple[PluginManager, Hooks]:
    home.add_plugin("hung-a", HUNG.replace("HOOK", hook))
    home.add_plugin("hung-b", HUNG.replace("HOOK", hook))
    section = {"enabled": home.enabled, "hook_callback_timeout": 0.2, "hook_worker_threads": 1}
    (home.root / "config.yaml").write_text(yaml.safe_dump({"plugins": section}), "utf-8")
    pm = home.manager()
    pm.discover_and_load()
    return pm, Hooks(pm)


def _shared() -> Any:
    return sys.modules[SHARED]


@pytest.mark.usefixtures("limit")
def test_hung_plugins_never_fill_the_pool_each_is_abandoned_at_its_bound(
    shared_home: PluginHome,
) -> None:
    pm, hooks = _hung_pair(shared_home, "pre_tool_call")
    decision = hooks.pre_tool_call(tool_name="terminal", args={})
    # Returned while both still hang: the second ran on a worker of its own, not inline here.
    assert _shared().woke == []
    assert decision.is_blocked  # pre_tool_call fails closed on a timeout
    for key in ("hung-a", "hung-b"):
        assert info(pm, key).hook_timeouts == 1, key
    assert workers.live_workers() >= 2  # the abandoned threads exist, outside the limit's count


@pytest.mark.usefixtures("limit")
def test_hung_observers_never_hold_the_event_loop(shared_home: PluginHome) -> None:
    pm, hooks = _hung_pair(shared_home, "post_tool_call")
    for concurrent in (False, True):
        hooks.concurrent_observers = concurrent
        asyncio.run(hooks.apost_tool_call(tool_name="t", args={}, result="r"))
        assert _shared().woke == [], f"concurrent_observers={concurrent}: the loop waited"
    # Each was abandoned once; the second time it was still hung, so it was skipped.
    for key in ("hung-a", "hung-b"):
        assert info(pm, key).hook_timeouts >= 1, key


ASYNC_GUARD = """
from hermes_hooks import hookimpl


@hookimpl
async def pre_tool_call(tool_name, args):
    return None
"""


@pytest.mark.usefixtures("limit")
@pytest.mark.parametrize("bound", [0, 30])
def test_a_full_pool_does_not_refuse_an_async_plugin_called_from_async_code(
    home: PluginHome, bound: float
) -> None:
    home.add_plugin("aguard", ASYNC_GUARD)
    configure(home, hook_callback_timeout=bound, hook_worker_threads=1)
    pm = home.manager()
    pm.discover_and_load()
    workers.shutdown_idle()
    release = threading.Event()
    held = [workers.submit(release.wait, (30,)) for _ in range(1 - workers.live_workers())]

    async def host() -> Any:  # an async host calling the sync facade: its loop cannot run this
        return Hooks(pm).pre_tool_call(tool_name="terminal", args={"command": "ls"})

    try:
        decision = asyncio.run(host())
    finally:
        release.set()
    assert all(job.wait(10) for job in held)
    assert not decision.is_blocked, decision.message
    assert info(pm, "aguard").hook_errors == 0

"""Concurrency: hooks called from many threads while plugins load and unload, and discovery
started from many threads at once.

What must hold: no exception reaches a caller (not even from a plugin caught half-registered),
no plugin is registered or imported twice, and every call sees a consistent set of
implementations: only those of plugins that are (being) loaded, each at most once, each guarded.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import reliability_figures
import suite_size
from plugin_builders import isolate_environment, write_config, write_plugin

from hermes_hooks.calling.facade import Hooks
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

pytestmark = pytest.mark.slow

THREADS: Final = 6
ROUNDS: Final = suite_size.count("HERMES_CONCURRENCY_ROUNDS", quick=20, full_size=40)
"""Loader rounds; each loads and unloads every plugin once."""

PARALLEL_ROUNDS: Final = 30
"""Rounds of parallel managers; before the fix about one in twenty rounds shared a name."""

COUNTER: Final = "hermes_concurrency_counter"

GOOD: Final = """
import {counter} as COUNTER
from hermes_hooks import hookimpl

COUNTER.IMPORTS.append(__name__)
KEY = {key!r}


@hookimpl
def pre_llm_call(session_id):
    return "from " + KEY


@hookimpl
def transform_tool_result(result):
    return None


def register(ctx):
    ctx.register_hook("on_session_start", lambda session_id: COUNTER.CALLS.append(KEY))
    ctx.register_tool(KEY + "_tool", "t", {{"description": "x"}}, lambda args, **kw: KEY)
    ctx.register_hook("future_hook", lambda: None)
"""

#: Raises in every hook: a call that reached it unguarded would raise in the caller's thread.
BROKEN: Final = """
import {counter} as COUNTER
from hermes_hooks import hookimpl

COUNTER.IMPORTS.append(__name__)


@hookimpl
def pre_llm_call(session_id):
    raise RuntimeError("broken pre_llm_call")


@hookimpl
def transform_tool_result(result):
    raise SystemExit(1)


def register(ctx):
    def boom(session_id):
        raise RuntimeError("broken on_session_start")

    ctx.register_hook("on_session_start", boom)
"""

GOOD_KEYS: Final = tuple(f"good-{n}" for n in range(5))
KEYS: Final = (*GOOD_KEYS, "broken")


@pytest.fixture(autouse=True)
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads every microsecond, not every 5 ms, so that races show within a test."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


@pytest.fixture
def counter() -> Iterator[types.ModuleType]:
    module = types.ModuleType(COUNTER)
    module.IMPORTS = []  # type: ignore[attr-defined]
    module.CALLS = []  # type: ignore[attr-defined]
    sys.modules[COUNTER] = module
    yield module
    del sys.modules[COUNTER]


@pytest.fixture
def counting_home(clean_home: Path, counter: types.ModuleType) -> Path:
    for key in GOOD_KEYS:
        write_plugin(clean_home / "plugins", key, GOOD.format(counter=COUNTER, key=key))
    write_plugin(clean_home / "plugins", "broken", BROKEN.format(counter=COUNTER))
    write_config(clean_home, enabled=KEYS)
    return clean_home


class Workers:
    """Runs functions in threads until told to stop; collects what they raise."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.tracebacks: list[str] = []
        self.calls = 0
        self._threads: list[threading.Thread] = []

    def spawn(self, function: Callable[[], None], *, loop: bool = True) -> None:
        def run() -> None:
            try:
                while True:
                    function()
                    self.calls += 1
                    if not loop or self.stop.is_set():
                        return
            except BaseException as exc:  # a SystemExit here must fail the test, not the thread
                self.errors.append(exc)
                self.tracebacks.append(traceback.format_exc())

        thread = threading.Thread(target=run, daemon=True)
        self._threads.append(thread)
        thread.start()

    def join(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=60)
            assert not thread.is_alive(), "a worker thread hangs"


def _results_are_consistent(results: list[Any]) -> None:
    assert len(results) == len(set(results)), f"a plugin ran twice in one call: {results}"
    assert set(results) <= {f"from {key}" for key in GOOD_KEYS}, results


def test_hooks_called_while_plugins_load_and_unload(counting_home: Path, counter: Any) -> None:
    pm = PluginManager(counting_home)
    hooks = Hooks(pm)
    workers = Workers()

    def call_raw() -> None:
        _results_are_consistent(pm.hook.pre_llm_call(**_args("pre_llm_call", session_id="s")))
        assert pm.hook.transform_tool_result(**_args("transform_tool_result", result="r")) is None
        pm.hook.on_session_start(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id="s",
            model="m",
            platform="p",
        )

    def call_facade() -> None:
        context = hooks.pre_llm_call(**_args("pre_llm_call", session_id="s"))
        parts = context.split("\n\n") if context else []
        _results_are_consistent(parts)

    def read_status() -> None:
        for info in pm.list_plugins():
            assert info.status in {"enabled", "not enabled", "error", "disabled"}
        assert pm.tools.names()  # the host's image_generate at least

    for _ in range(THREADS - 2):
        workers.spawn(call_raw)
    workers.spawn(call_facade)
    workers.spawn(read_status)
    try:
        for round_ in range(ROUNDS):
            pm.discover_and_load(force=True)
            for key in KEYS[round_ % 2 :: 2]:
                pm.unload_plugin(key)
    finally:
        workers.join()
    assert workers.errors == [], workers.tracebacks[0]
    assert workers.calls > ROUNDS  # the callers did run alongside
    reliability_figures.add("concurrency", "calls alongside loads and unloads", workers.calls)
    reliability_figures.add("concurrency", "forced reloads under calls", ROUNDS)
    pm.discover_and_load(force=True)
    assert sorted(pm.hook.pre_llm_call(**_args("pre_llm_call", session_id="s"))) == sorted(
        f"from {k}" for k in GOOD_KEYS
    )
    assert {i.key: i.status for i in pm.list_plugins()} == dict.fromkeys(KEYS, "enabled")
    assert pm.get_plugin_info("broken").hook_errors > 0  # type: ignore[union-attr]
    pm.unload_all()


def test_discovery_from_many_threads_at_once_loads_each_plugin_once(
    counting_home: Path, counter: Any
) -> None:
    pm = PluginManager(counting_home)
    barrier = threading.Barrier(THREADS)
    workers = Workers()

    def discover() -> None:
        barrier.wait()
        pm.discover_and_load()

    for _ in range(THREADS):
        workers.spawn(discover, loop=False)
    workers.join()
    assert workers.errors == []
    assert sorted(counter.IMPORTS) == sorted(f"hermes_plugins.{k.replace('-', '_')}" for k in KEYS)
    assert _state(pm) == _single_load_state(counting_home)
    pm.unload_all()


def test_forced_discovery_from_many_threads_ends_as_one_load(
    counting_home: Path, counter: Any
) -> None:
    pm = PluginManager(counting_home)
    barrier = threading.Barrier(THREADS)
    workers = Workers()

    def rediscover() -> None:
        barrier.wait()
        for _ in range(5):
            pm.discover_and_load(force=True)

    for _ in range(THREADS):
        workers.spawn(rediscover, loop=False)
    workers.join()
    assert workers.errors == []
    assert _state(pm) == _single_load_state(counting_home)
    pm.unload_all()


def test_managers_in_parallel_threads_keep_their_own_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counter: Any
) -> None:
    """Hosts in one process loading different plugins of the same key at once."""
    isolate_environment(monkeypatch, tmp_path)
    homes = []
    for n in range(THREADS):
        home = tmp_path / f"home-{n}"
        write_plugin(home / "plugins", "shared", GOOD.format(counter=COUNTER, key=f"shared-{n}"))
        write_config(home, enabled=["shared"])
        homes.append(home)
    for _ in range(PARALLEL_ROUNDS):
        managers = [PluginManager(home) for home in homes]
        barrier = threading.Barrier(THREADS)
        workers = Workers()
        for pm in managers:

            def load(pm: PluginManager = pm, barrier: threading.Barrier = barrier) -> None:
                barrier.wait()
                pm.discover_and_load()

            workers.spawn(load, loop=False)
        workers.join()
        assert workers.errors == [], workers.tracebacks[0]
        modules = [pm._records["shared"].module for pm in managers]
        names = [module.__name__ for module in modules if module is not None]
        assert len(set(names)) == THREADS, names  # each its own module name...
        assert all(sys.modules[m.__name__] is m for m in modules if m is not None)  # ...kept
        for n, pm in enumerate(managers):
            got = pm.hook.pre_llm_call(**_args("pre_llm_call", session_id="s"))
            assert got == [f"from shared-{n}"]
            assert pm.tools.dispatch(f"shared-{n}_tool", {}) == f"shared-{n}"
        for pm in managers:
            pm.unload_all()
        assert not [m for m in sys.modules if m.startswith("hermes_plugins.shared")]
        reliability_figures.add("concurrency", "parallel manager loads", THREADS)


def test_registries_stay_consistent_under_concurrent_registration(counting_home: Path) -> None:
    pm = PluginManager(counting_home)
    workers = Workers()
    names = [f"t{n}" for n in range(50)]

    def churn(owner: str) -> Callable[[], None]:
        def run() -> None:
            handles = []
            for name in names:
                # Another owner holding the name gets it refused, as it must be.
                with contextlib.suppress(ValueError):
                    handles.append(pm.tools.register_tool(name, "t", {}, print, owner=owner))
            for handle in handles:
                handle.unregister()

        return run

    for n in range(THREADS):
        workers.spawn(churn(f"plugin-{n}"))
    time.sleep(0.5)
    workers.join()
    assert workers.errors == []
    assert [n for n in pm.tools.names() if n.startswith("t") and n[1:].isdigit()] == []
    assert pm.tools._displaced == {}


# -- helpers ---------------------------------------------------------------------------------


@functools.cache
def _argnames(name: str) -> tuple[str, ...]:
    caller = getattr(PluginManager(Path("/nonexistent-hermes-home")).hook, name)
    return tuple(caller.spec.argnames)


def _args(name: str, **given: Any) -> dict[str, Any]:
    """Every argument of hook ``name`` (``None`` unless given)."""
    return dict.fromkeys(_argnames(name)) | given


def _state(pm: PluginManager) -> dict[str, Any]:
    hookimpls = {
        name: sorted(i.plugin_name for i in caller.get_hookimpls())
        for name, caller in vars(pm.hook).items()
        if hasattr(caller, "get_hookimpls") and caller.get_hookimpls()
    }
    return {
        "plugins": sorted(pm.list_name_plugin()[i][0] for i in range(len(pm.list_name_plugin()))),
        "status": {i.key: (i.status, i.error) for i in pm.list_plugins()},
        "hookimpls": hookimpls,
        "tools": [(e.name, e.owner) for e in pm.tools.entries()],
    }


def _single_load_state(home: Path) -> dict[str, Any]:
    before = set(sys.modules)
    pm = PluginManager(home)
    pm.discover_and_load()
    state = _state(pm)
    pm.unload_all()
    assert {m for m in sys.modules if m.startswith("hermes_plugins.")} <= before
    return state

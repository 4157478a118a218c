"""Unload and reload: unloading restores every entry a plugin displaced and leaves no hookimpl
behind; ``discover_and_load(force=True)`` a hundred times leaves the state of one load.

The state compared is everything a load touches: hook implementations (plugin, function and
order, per hook), every registry with owners and values, the plugins pluggy knows, statuses,
``hermes_plugins.*`` modules, live framework objects (by type, after ``gc.collect()``) and the
number of threads.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pluggy
import pytest
import reliability_figures
import suite_size
from plugin_builders import (
    forget_new_modules,
    isolate_environment,
    write_config,
    write_distribution,
    write_plugin,
)

from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.context import PluginContext
from hermes_hooks.plugins.loading import PluginHooks
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.registries.base import HOST

pytestmark = pytest.mark.slow

RELOADS: Final = suite_size.count("HERMES_RELOADS", quick=50, full_size=100)

#: Uses every kind of registration, replaces two host tools (it has the grant) and a provider.
EVERYTHING: Final = """
from hermes_hooks import hookimpl
from hermes_hooks.backends.image_gen import ImageGenProvider


class Provider(ImageGenProvider):
    @property
    def name(self):
        return "local"

    def generate(self, prompt, aspect_ratio="landscape", **kwargs):
        return {"success": True, "image": "data:,", "provider": "everything"}


@hookimpl(tryfirst=True)
def pre_tool_call(tool_name):
    return None


@hookimpl(wrapper=True)
def transform_tool_result(result):
    return (yield)


@hookimpl(hookwrapper=True)
def post_llm_call():
    yield


@hookimpl(specname="on_session_end")
def ended(session_id):
    return None


def register(ctx):
    ctx.register_hook("pre_llm_call", lambda session_id: None)
    ctx.register_hook("future_hook_of_a_newer_host", lambda **kwargs: None)
    ctx.register_tool("terminal", "x", {}, lambda args, **kw: "mine", override=True)
    ctx.register_tool("read_file", "x", {}, lambda args, **kw: "mine too", override=True)
    ctx.register_tool("everything_tool", "x", {}, lambda args, **kw: "ok")
    ctx.register_command("everything", lambda raw_args: "ok")
    ctx.register_cli_command("everything", "help", lambda parser: None)
    ctx.register_skill("guide", "SKILL.md")
    ctx.register_image_gen_provider(Provider())
"""

QUIET: Final = """
def register(ctx):
    ctx.register_hook("post_tool_call", lambda tool_name: None)
    ctx.register_command("quiet", lambda raw_args: "ok")
"""

BROKEN: Final = """
def register(ctx):
    ctx.register_tool("half_registered", "x", {}, lambda args, **kw: "never")
    raise RuntimeError("broken on purpose")
"""

ENTRY_POINT: Final = """
from hermes_hooks import hookimpl


@hookimpl
def on_session_start(session_id):
    return None
"""


@pytest.fixture
def reload_home(
    clean_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A home with a plugin of each kind a reload touches: a bundled backend, user plugins
    (one with a skill, a quiet one, a broken one) and an entry-point plugin."""
    bundled = Path(os.environ["HERMES_BUNDLED_PLUGINS"])  # clean_home's empty bundled folder
    write_plugin(bundled, "image_gen/local-shipped", manifest={"kind": "backend"}, code="""
        from hermes_hooks.backends.image_gen import ImageGenProvider

        class Shipped(ImageGenProvider):
            name = property(lambda self: "local")

            def generate(self, prompt, aspect_ratio="landscape", **kwargs):
                return {"success": True, "image": "data:,", "provider": "shipped"}

        def register(ctx):
            ctx.register_image_gen_provider(Shipped())
    """)  # fmt: skip
    home = clean_home
    plugins = home / "plugins"
    write_plugin(plugins, "everything", EVERYTHING, files={"SKILL.md": "# A skill\n"})
    write_plugin(plugins, "quiet", QUIET)
    write_plugin(plugins, "broken", BROKEN)
    site = tmp_path / "site-packages"
    write_distribution(site, "hh-reload", {"hh-reload": "hh_reload"}, {"hh_reload.py": ENTRY_POINT})
    before = set(sys.modules)
    monkeypatch.syspath_prepend(str(site))
    write_config(
        home,
        enabled=["everything", "quiet", "broken", "hh-reload"],
        entries={"everything": {"allow_tool_override": True}},
    )
    yield home
    forget_new_modules(before, tmp_path)


def snapshot(pm: PluginManager) -> dict[str, Any]:
    """Everything a load touches, as comparable data."""
    gc.collect()
    hookimpls = {
        name: [
            (impl.plugin_name, getattr(impl.function, "__qualname__", "?"), impl.wrapper)
            for impl in caller.get_hookimpls()
        ]
        for name, caller in sorted(vars(pm.hook).items())
        if isinstance(caller, pluggy.HookCaller) and caller.get_hookimpls()
    }
    registries = {
        name: [(entry.name, entry.owner) for entry in registry.entries()]
        for name, registry in (
            ("tools", pm.tools),
            ("commands", pm.commands),
            ("cli_commands", pm.cli_commands),
            ("skills", pm.skills),
        )
    }
    live = {
        kind.__name__: sum(1 for obj in gc.get_objects() if type(obj) is kind)
        for kind in (PluginHooks, PluginContext)
    }
    return {
        "hookimpls": hookimpls,
        "registries": registries,
        # The host's own entries, kept aside while a plugin replaces them: the same objects.
        "displaced": {
            name: [(entry.owner, id(entry.value)) for entry in stack]
            for name, stack in sorted(pm.tools._displaced.items())
        },
        "image providers": sorted(
            (p.name, type(p).__name__) for p in pm.image_gen.list_providers()
        ),
        "active image provider": type(pm.image_gen.get_provider("local")).__name__,
        "plugins": sorted(name for name, _ in pm.list_name_plugin()),
        "status": [(i.key, i.status, i.error, i.warnings) for i in pm.list_plugins()],
        "modules": sorted(m for m in sys.modules if m.startswith(("hermes_plugins.", "hh_"))),
        "live objects": live,
        "threads": threading.active_count(),
    }


def exercise(pm: PluginManager, tmp_path: Path) -> None:
    """One turn and a few direct calls, so that lazily made helpers exist before comparing."""
    with Session(pm, cwd=tmp_path) as session:
        session.run_turn("hello")
    pm.tools.dispatch("everything_tool", {})


def test_unloading_restores_every_displaced_entry_and_leaves_no_hookimpl(
    reload_home: Path, tmp_path: Path
) -> None:
    pm = create_manager(reload_home, load=False)
    host_terminal, host_read = pm.tools.get("terminal"), pm.tools.get("read_file")
    pm.discover_and_load()
    assert pm.tools.owner_of("terminal") == pm.tools.owner_of("read_file") == "everything"
    assert type(pm.image_gen.get_provider("local")).__name__ == "Provider"
    context = pm.get_context("everything")
    assert context is not None
    loaded = {caller.name for caller in pm.get_hookcallers(pm.get_plugin("everything")) or []}
    assert loaded >= {"pre_tool_call", "transform_tool_result", "post_llm_call", "pre_llm_call"}

    assert pm.unload_plugin("everything")

    assert pm.tools.get("terminal") is host_terminal
    assert pm.tools.get("read_file") is host_read
    assert pm.tools.owner_of("terminal") == pm.tools.owner_of("read_file") == HOST
    assert type(pm.image_gen.get_provider("local")).__name__ == "Shipped"
    for registry in (pm.tools, pm.commands, pm.cli_commands, pm.skills):
        assert registry.names(owner="everything") == []
    assert pm.tools._displaced == {}
    leftovers = [
        (name, impl.plugin_name)
        for name, caller in vars(pm.hook).items()
        if isinstance(caller, pluggy.HookCaller)
        for impl in caller.get_hookimpls()
        if impl.plugin_name == "everything"
    ]
    assert leftovers == []
    assert pm.get_plugin("everything") is None
    assert not [m for m in sys.modules if m.startswith("hermes_plugins.everything")]
    assert not context.is_active
    assert pm.get_plugin_info("everything").status == "not enabled"  # type: ignore[union-attr]
    pm.unload_all()
    assert pm.tools.get("terminal") is host_terminal


def test_a_failed_load_leaves_nothing_behind(reload_home: Path) -> None:
    pm = create_manager(reload_home)
    info = pm.get_plugin_info("broken")
    assert info is not None
    assert info.status == "error"
    assert info.error is not None
    assert info.error.startswith("RuntimeError: broken on purpose")
    assert pm.tools.get("half_registered") is None
    assert pm.get_plugin("broken") is None
    pm.unload_all()


def test_forced_reloads_leave_the_state_of_one_load(reload_home: Path, tmp_path: Path) -> None:
    pm = create_manager(reload_home)
    exercise(pm, tmp_path)
    once = snapshot(pm)
    assert [s for k, s, *_ in once["status"] if k != "image_gen/local-shipped"] == [
        "error",
        "enabled",
        "enabled",
        "enabled",
    ]
    for _ in range(RELOADS):
        pm.discover_and_load(force=True)
        exercise(pm, tmp_path)
    again = snapshot(pm)
    assert again == once
    reliability_figures.add("reload", "forced reloads compared", RELOADS)
    pm.unload_all()
    assert pm.tools.owner_of("terminal") == HOST
    assert pm.get_plugins() == {p for p in pm.get_plugins() if not isinstance(p, PluginHooks)}


def test_unload_and_load_many_times_over_leaves_no_objects_behind(reload_home: Path) -> None:
    """Fresh managers, each loaded and unloaded: nothing of theirs stays alive."""
    pm = create_manager(reload_home)
    pm.unload_all()
    del pm
    baseline = snapshot(create_manager(reload_home, load=False))["live objects"]
    for _ in range(20):
        pm = create_manager(reload_home)
        pm.unload_all()
        del pm
    assert snapshot(create_manager(reload_home, load=False))["live objects"] == baseline


# -- a reload seen from other threads ----------------------------------------------------------

MANY: Final = 20
ROUND_MODULE: Final = "hermes_reload_rounds"


def test_a_reload_is_atomic_for_callers_in_other_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each call sees every implementation of one load, never some of the old and the new."""
    isolate_environment(monkeypatch, tmp_path)
    home = tmp_path / "home"
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / f"{ROUND_MODULE}.py").write_text("current = 0\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(lib))
    keys = [f"p{i:02d}" for i in range(MANY)]
    for key in keys:
        write_plugin(home / "plugins", key, f"""
            import {ROUND_MODULE} as rounds

            LOADED_IN = rounds.current


            def register(ctx):
                ctx.register_hook("pre_llm_call", lambda **kw: f"{key}@{{LOADED_IN}}")
        """)  # fmt: skip
    write_config(home, enabled=keys)
    rounds: Any = __import__(ROUND_MODULE)
    pm = PluginManager(home)
    seen: list[tuple[int, frozenset[int]]] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    arguments: dict[str, Any] = dict.fromkeys(pm.hook_argnames("pre_llm_call") or (), "")
    arguments.update(user_message="hi", conversation_history=[], is_first_turn=False)

    def call() -> None:
        try:
            while not stop.is_set():
                results = pm.hook.pre_llm_call(**arguments)
                generations = frozenset(int(r.split("@")[1]) for r in results)
                seen.append((len(results), generations))
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    try:
        pm.discover_and_load()
        for generation in range(1, 4):
            rounds.current = generation
            pm.discover_and_load(force=True)
    finally:
        stop.set()
        caller.join(30)
        pm.unload_all()
        forget_new_modules(set(sys.modules) - {ROUND_MODULE}, tmp_path)
        sys.modules.pop(ROUND_MODULE, None)
    assert errors == []
    sizes = {size for size, _ in seen}
    assert sizes <= {0, MANY}, f"a call saw {sorted(sizes - {0, MANY})} of {MANY} plugins"
    assert all(len(generations) <= 1 for _, generations in seen), "a call mixed two loads"
    assert len(seen) > 0

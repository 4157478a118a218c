"""The compatibility layer tells the truth: the home read at each call, two managers' plugins of
one key each running their own code, a broken user copy never taking a bundled profile away."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from plugin_builders import PluginHome, home, info

__all__ = ["home"]

WHO = """
from plugins.same.who import NAME

def register(ctx):
    schema = {"name": "who", "description": "", "parameters": {"type": "object", "properties": {}}}
    ctx.register_tool("who", "t", schema, lambda args, **kw: NAME)
"""


def test_get_hermes_home_reads_hermes_home_at_each_call(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = home.load()  # a live manager does not pin the home, as in Hermes
    from hermes_constants import (
        get_config_path,
        get_hermes_home,
        reset_hermes_home_override,
        set_hermes_home_override,
    )

    for name in ("first", "second"):
        monkeypatch.setenv("HERMES_HOME", str(tmp_path / name))
        assert get_hermes_home() == tmp_path / name
        assert get_config_path() == tmp_path / name / "config.yaml"
    with pm.activate():  # the manager calling plugin code answers for its own home
        assert get_hermes_home() == home.root
        token = set_hermes_home_override(tmp_path / "override")
        try:
            assert get_hermes_home() == tmp_path / "override"  # Hermes' override wins
        finally:
            reset_hermes_home_override(token)
        assert get_hermes_home() == home.root


def test_two_managers_each_run_their_own_plugin_of_one_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plugin_builders import make_home

    (tmp_path / "a").mkdir()
    homes = [make_home(tmp_path / "a", monkeypatch), PluginHome(tmp_path / "b" / "home")]
    try:
        for letter, plugin_home in zip("ab", homes, strict=True):
            plugin_home.add_plugin("same", WHO, files={"who.py": f"NAME = {letter!r}\n"})
        managers = [plugin_home.load() for plugin_home in homes]
        answers = [pm.tools.get("who").handler({}) for pm in managers]  # type: ignore[union-attr]
        assert answers == ["a", "b"]
    finally:
        for plugin_home in homes:
            plugin_home.close()


def test_a_broken_user_copy_never_takes_the_bundled_profile_away(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HERMES_BUNDLED_PLUGINS")  # the shipped model-provider profiles
    home.add_plugin(
        "model-providers/openai", "raise RuntimeError('broken user copy')\n",
        manifest={"kind": "model-provider"}, enable=False,
    )  # fmt: skip
    pm = home.load()
    profile = pm.models.get_profile("openai")
    assert profile is not None
    assert profile.base_url == "https://api.openai.com/v1"
    plugin = info(pm, "model-providers/openai")
    assert (plugin.source, plugin.status) == ("bundled", "enabled")
    (warning,) = plugin.warnings
    assert "failed to load (RuntimeError: broken user copy" in warning
    assert warning.endswith("is loaded instead")


def test_a_broken_user_copy_alone_is_an_error(home: PluginHome) -> None:
    home.add_plugin("mine", "raise RuntimeError('broken')\n")
    plugin = info(home.load(), "mine")
    assert plugin.status == "error"
    assert "broken" in (plugin.error or "")
    assert "hermes_plugins.mine" not in sys.modules


NAMED_MEMORY = """
from agent.memory_provider import MemoryProvider

class Named(MemoryProvider):
    @property
    def name(self):
        return "named"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []


def register(ctx):
    # Hermes imports a user's memory plugin as _hermes_user_memory.<name>; some check it
    if __name__ == "_hermes_user_memory.named":
        ctx.register_memory_provider(Named())
"""


def test_a_user_memory_plugin_is_imported_under_hermes_module_name(home: PluginHome) -> None:
    home.add_plugin("memory/named", NAMED_MEMORY, enable=False)
    home.entries.clear()
    from plugin_builders import write_config

    write_config(home.root, memory={"provider": "named"})
    pm = home.manager()
    pm.discover_and_load()
    plugin = info(pm, "memory/named")
    assert (plugin.status, plugin.error) == ("enabled", None)
    assert plugin.providers == ("memory:named",)
    assert "_hermes_user_memory.named" in sys.modules
    pm.unload_all()
    assert "_hermes_user_memory.named" not in sys.modules


def test_a_context_engine_named_by_context_engine_loads_whatever_its_kind_was_read_as(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plugin_builders import isolated_home, user_plugin, write_config
    from test_context_engine import LEAN

    path = isolated_home(tmp_path, monkeypatch)
    # a flat folder, and a comment naming MemoryProvider: its kind is read as "exclusive"
    code = LEAN.replace("def register(ctx):", "# not a MemoryProvider\n    def register(ctx):")
    user_plugin(path, "lean", code)
    write_config(path, context={"engine": "lean"}, memory={"builtin": False})
    from hermes_hooks.host import create_manager

    pm = create_manager(path)
    plugin = info(pm, "lean")
    assert (plugin.kind, plugin.status) == ("exclusive", "enabled")
    assert plugin.reason == "selected by context.engine (its kind was read as 'exclusive')"
    assert pm.context_engine.get_provider("lean") is not None
    pm.unload_all()


def test_an_inferred_context_engine_listed_in_plugins_enabled_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plugin_builders import isolated_home, user_plugin, write_config
    from test_context_engine import LEAN

    path = isolated_home(tmp_path, monkeypatch)
    user_plugin(path, "lean", LEAN)  # a flat folder: Hermes loads it by plugins.enabled
    write_config(path, ["lean"], memory={"builtin": False})
    from hermes_hooks.host import create_manager

    pm = create_manager(path)
    plugin = info(pm, "lean")
    assert (plugin.kind, plugin.kind_inferred, plugin.status) == ("context-engine", True, "enabled")
    pm.unload_all()


def test_the_doctor_says_when_a_real_package_shadows_a_hermes_name(tmp_path: Path) -> None:
    from cli_support import hermes
    from plugin_builders import write_plugin

    checkout = tmp_path / "hermes-agent"  # a Hermes Agent checkout on sys.path
    (checkout / "tools").mkdir(parents=True)
    (checkout / "tools" / "__init__.py").write_text("", encoding="utf-8")
    (checkout / "tools" / "registry.py").write_text("def tool_result(x):\n    return x\n")
    (checkout / "run_agent.py").write_text("", encoding="utf-8")
    code = "from tools.registry import tool_result\n\ndef register(ctx):\n    pass\n"
    folder = write_plugin(tmp_path, "shadowed", code)
    result = hermes(tmp_path / "home", "plugins", "doctor", str(folder),
                    PYTHONPATH=str(checkout))  # fmt: skip
    assert (
        f"imports tools.registry, but a Hermes Agent install at "
        f"{checkout / 'tools' / '__init__.py'} shadows Hermes' name 'tools'"
    ) in " ".join(result.stdout.split()), result.stdout


def test_lazy_deps_refuses_and_names_the_package_and_interrupts_are_per_thread(
    home: PluginHome,
) -> None:
    home.load()
    import threading

    from tools.interrupt import is_interrupted, is_thread_interrupted, set_interrupt
    from tools.lazy_deps import FeatureUnavailable, ensure

    with pytest.raises(FeatureUnavailable, match="pip install 'honcho-ai'") as raised:
        ensure("memory.honcho")
    assert raised.value.missing == ("honcho-ai",)
    seen: list[bool] = []
    worker = threading.Thread(target=lambda: seen.append(is_interrupted()))
    set_interrupt(True, reason="stop")
    try:
        worker.start()
        worker.join()
        assert is_interrupted()
        assert seen == [False]  # another session's thread goes on
        assert not is_thread_interrupted(None)
    finally:
        set_interrupt(False)
    assert not is_interrupted()

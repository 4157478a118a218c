"""Hermes' ``hermes_cli.plugins`` contract names, as a Hermes plugin's own test suite uses them.

Each test has the shape of one in Hermes' ``tests/hermes_cli/test_plugins.py`` (a plugin folder
in a home, ``PluginManager()``, then the name under test), written here; the last ones run a
plain ``pytest`` in a folder with no conftest, as a plugin author's suite runs.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from plugin_builders import PluginHome, home, write_config  # noqa: F401  (a fixture)

from hermes_hooks.compat import (
    hermes_cli_middleware as middleware,
    hermes_cli_plugins as plugins,
    image_gen_registry,
    tools_registry,
)
from hermes_hooks.plugins import active
from hermes_hooks.plugins.manifest import PluginManifest as ProjectManifest
from hermes_hooks.registries.base import HOST

pytest_plugins = ["pytester"]


@pytest.fixture
def hermes(home: PluginHome, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHome]:
    """A home whose Hermes singleton slots start empty; its Hermes managers unload after."""
    monkeypatch.setattr(plugins, "_plugin_manager", None)
    monkeypatch.setattr(plugins, "_plugin_managers_by_home", {})
    yield home
    for manager in plugins._plugin_managers_by_home.values():
        manager.unload_all()


def hermes_manager(home: PluginHome, *, disabled: Sequence[str] = ()) -> plugins.PluginManager:
    """Write ``config.yaml``, then load a Hermes ``PluginManager()`` on the home."""
    write_config(home.root, home.enabled, disabled, entries=home.entries)
    manager = plugins.PluginManager()
    home.managers.append(manager)
    manager.discover_and_load()
    return manager


# -- the manager's Hermes views -----------------------------------------------------------------


def test_loaded_plugins_say_what_each_plugin_registered(hermes: PluginHome) -> None:
    hermes.add_plugin(
        "greeter",
        "def register(ctx):\n"
        "    ctx.register_hook('post_tool_call', lambda **kw: None)\n"
        "    ctx.register_command('hello', lambda raw: 'hi ' + raw, description='Says hi')\n"
        "    ctx.register_middleware('tool_request', lambda **kw: None)\n",
    )
    hermes.add_plugin("broken", "# no register()\n")
    hermes.add_plugin("idle", "def register(ctx):\n    pass\n", enable=False)
    hermes.add_plugin("off", "def register(ctx):\n    pass\n")
    manager = hermes_manager(hermes, disabled=["off"])

    loaded = manager._plugins
    greeter = loaded["greeter"]
    assert greeter.enabled
    assert greeter.error is None
    assert greeter.module is not None
    assert greeter.module.__name__.startswith("hermes_plugins.")
    assert greeter.manifest.source == "user"
    assert greeter.hooks_registered == ["post_tool_call"]
    assert greeter.commands_registered == ["hello"]
    assert greeter.middleware_registered == ["tool_request"]
    assert not loaded["broken"].enabled
    assert "register" in (loaded["broken"].error or "")
    assert not loaded["idle"].enabled
    assert loaded["idle"].module is None
    assert "not enabled" in (loaded["idle"].error or "")  # not listed in plugins.enabled
    assert loaded["off"].error == "disabled via config"

    entry = manager._plugin_commands["hello"]
    assert entry["plugin"] == "greeter"
    assert entry["description"] == "Says hi"
    assert entry["handler"]("you") == "hi you"
    assert manager.has_middleware("tool_request")
    assert not manager.has_middleware("llm_request")


def test_list_plugins_items_answer_hermes_dict_keys(hermes: PluginHome) -> None:
    hermes.add_plugin(
        "counter",
        "def register(ctx):\n"
        "    ctx.register_hook('pre_llm_call', lambda **kw: None)\n"
        "    ctx.register_hook('post_llm_call', lambda **kw: None)\n",
    )
    info = {i["name"]: i for i in hermes_manager(hermes).list_plugins()}["counter"]
    assert info["enabled"] is True
    assert info["hooks"] == 2
    assert info["tools"] == 0
    assert info["key"] == "counter"
    assert info["source"] == "user"
    assert info.get("error") is None
    assert "commands" in info
    assert "no-such-key" not in info
    assert dict(info)["hooks"] == 2
    assert info.hooks == ("post_llm_call", "pre_llm_call")  # the project's fields stay


def test_plugin_context_takes_hermes_argument_order(hermes: PluginHome) -> None:
    manager = plugins.PluginManager(hermes.root)
    hermes.managers.append(manager)
    manifest = plugins.PluginManifest(name="by-hand", source="user")
    for ctx in (
        plugins.PluginContext(manifest, manager),
        plugins.PluginContext(manager=manager, manifest=manifest),
    ):
        assert ctx.plugin_id == "by-hand"
        assert ctx.manifest is manifest
    ctx = plugins.PluginContext(manifest, manager)
    ctx.register_command("/Tidy ", lambda raw: raw, args_hint="  <path>  ")
    assert manager._plugin_commands["tidy"]["args_hint"] == "<path>"
    assert manager._plugin_commands["tidy"]["description"] == "Plugin command"
    assert isinstance(manifest, ProjectManifest)


def test_refused_command_names_are_logged_as_hermes_words_them(
    hermes: PluginHome, caplog: pytest.LogCaptureFixture
) -> None:
    manager = plugins.PluginManager(hermes.root)
    hermes.managers.append(manager)
    ctx = plugins.PluginContext(plugins.PluginManifest(name="p", source="user"), manager)
    with caplog.at_level(logging.WARNING):
        assert ctx.register_command("", lambda raw: raw) is None
        assert ctx.register_command("help", lambda raw: raw) is None
    assert "empty name" in caplog.text
    assert "conflicts" in caplog.text
    assert manager._plugin_commands == {}


# -- get_plugin_manager() and the module functions ----------------------------------------------


def test_get_plugin_manager_is_one_per_home_and_discovers_lazily(
    hermes: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hermes.add_plugin(
        "lazy",
        "def register(ctx):\n"
        "    ctx.register_hook('pre_llm_call', lambda **kw: {'context': 'from lazy'})\n"
        "    ctx.register_command('lazycmd', lambda raw: 'ok:' + raw, description='Lazy')\n",
    )
    hermes.write_config()
    seen: list[int] = []

    def get() -> None:
        seen.append(id(plugins.get_plugin_manager()))

    workers = [threading.Thread(target=get) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(set(seen)) == 1  # one manager for the home, however many threads ask

    assert plugins.invoke_hook("pre_llm_call", session_id="s") == [{"context": "from lazy"}]
    assert plugins.has_hook("pre_llm_call")
    handler = plugins.get_plugin_command_handler("lazycmd")
    assert handler is not None
    assert handler("x") == "ok:x"
    assert plugins.get_plugin_commands()["lazycmd"]["description"] == "Lazy"

    other = tmp_path / "other-home"
    other.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(other))
    assert id(plugins.get_plugin_manager()) not in seen  # another home, another manager
    assert plugins.get_plugin_command_handler("lazycmd") is None


def test_a_manager_set_in_the_slot_is_the_one_used(
    hermes: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = plugins.PluginManager(hermes.root)
    hermes.managers.append(manager)
    ctx = plugins.PluginContext(plugins.PluginManifest(name="p", source="user"), manager)
    ctx.register_command("mine", lambda raw: raw)
    monkeypatch.setattr(plugins, "_plugin_manager", manager)
    assert plugins.get_plugin_manager() is manager
    assert "mine" in plugins.get_plugin_commands()


# -- directives ---------------------------------------------------------------------------------


def _hook_results(monkeypatch: pytest.MonkeyPatch, results: list[Any]) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def invoke(hook_name: str, **kwargs: Any) -> list[Any]:
        calls.append({"hook": hook_name, **kwargs})
        return results

    monkeypatch.setattr(plugins, "invoke_hook", invoke)
    return calls


def test_pre_tool_call_directives_first_valid_one_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _hook_results(
        monkeypatch,
        [
            "block",
            {"action": "block"},  # a block without its message is no directive
            {"action": "modify", "args": {"path": "b"}},
            {"action": "approve", "message": "a human should look", "rule_key": " w:ssh "},
            {"action": "block", "message": "too late"},
        ],
    )
    assert plugins.get_pre_tool_call_directive("write_file", {"path": "a"}, task_id="t1") == (
        "approve",
        "a human should look",
    )
    assert calls[0]["hook"] == "pre_tool_call"
    assert calls[0]["task_id"] == "t1"
    assert plugins.get_pre_tool_call_block_message("write_file", {}) is None  # approve unseen
    details = plugins._directive_details("write_file", {"path": "a", "mode": "w"})
    assert details.rule_key == "w:ssh"
    assert details.modified_args == {"path": "b", "mode": "w"}

    _hook_results(monkeypatch, [{"action": "allow"}, {"action": "block", "message": "no"}])
    assert plugins.get_pre_tool_call_block_message("terminal", {}) == "no"
    assert plugins.resolve_pre_tool_block("terminal", {}) == "no"
    _hook_results(monkeypatch, [])
    assert plugins.resolve_pre_tool_block("terminal", {}) is None


def test_an_approve_directive_fails_closed_without_a_working_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _hook_results(monkeypatch, [{"action": "approve", "message": "why"}])
    gate = types.ModuleType("tools.approval")

    def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError("gate crashed")

    gate.request_tool_approval = broken  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "tools.approval", gate)
    message = plugins.resolve_pre_tool_block("terminal", {})
    assert message is not None
    assert "gate failed" in message

    seen: dict[str, Any] = {}

    def deny(tool_name: str, reason: str, **kwargs: Any) -> dict[str, Any]:
        seen.update(tool_name=tool_name, reason=reason, rule_key=kwargs.get("rule_key"))
        return {"approved": False, "message": "denied by the operator"}

    gate.request_tool_approval = deny  # type: ignore[attr-defined]
    assert plugins.resolve_pre_tool_block("terminal", {}) == "denied by the operator"
    assert seen == {"tool_name": "terminal", "reason": "why", "rule_key": "terminal"}


def test_a_thread_tool_whitelist_blocks_before_any_hook_and_stays_in_its_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _hook_results(monkeypatch, [])
    plugins.set_thread_tool_whitelist({"memory"}, deny_msg_fmt="denied: {tool_name}")
    try:
        assert plugins.get_pre_tool_call_block_message("terminal", {}) == "denied: terminal"
        assert calls == []  # no hook ran for a tool outside the whitelist
        assert plugins.get_pre_tool_call_block_message("memory", {}) is None
        elsewhere: list[str | None] = []
        worker = threading.Thread(
            target=lambda: elsewhere.append(plugins.get_pre_tool_call_block_message("terminal", {}))
        )
        worker.start()
        worker.join()
        assert elsewhere == [None]
    finally:
        plugins.clear_thread_tool_whitelist()
    assert plugins.get_pre_tool_call_block_message("terminal", {}) is None


def test_pre_verify_keeps_the_turn_going_on_the_first_real_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _hook_results(
        monkeypatch,
        [
            {"action": "continue", "message": "   "},
            {"action": "allow", "message": "no"},
            {"decision": "block", "reason": "  run the formatter  "},
            {"action": "continue", "message": "second"},
        ],
    )
    assert plugins.get_pre_verify_continue_message(coding=True, attempt=2) == "run the formatter"
    assert calls[0]["hook"] == "pre_verify"
    assert calls[0]["coding"] is True
    _hook_results(monkeypatch, [{"action": "continue", "message": 42}])
    assert plugins.get_pre_verify_continue_message() is None


def test_command_results_are_awaited_with_or_without_a_running_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def answer() -> str:
        return "async-ok"

    assert plugins.resolve_plugin_command_result("plain") == "plain"
    assert plugins.resolve_plugin_command_result(answer()) == "async-ok"

    async def inside_a_loop() -> Any:
        return plugins.resolve_plugin_command_result(answer())

    assert asyncio.run(inside_a_loop()) == "async-ok"

    async def hangs() -> str:
        await asyncio.sleep(5)
        return "never"

    monkeypatch.setattr(plugins, "_PLUGIN_COMMAND_AWAIT_TIMEOUT_SECS", 0.05)

    async def bounded() -> Any:
        return plugins.resolve_plugin_command_result(hangs())

    with pytest.raises(TimeoutError):
        asyncio.run(bounded())


def test_the_debug_switch_adds_one_stderr_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins, "_DEBUG_HANDLER_INSTALLED", False)
    monkeypatch.setattr(plugins.logger, "handlers", list(plugins.logger.handlers))
    monkeypatch.setattr(plugins.logger, "level", plugins.logger.level)
    before = list(plugins.logger.handlers)
    monkeypatch.delenv("HERMES_PLUGINS_DEBUG", raising=False)
    plugins._install_plugin_debug_handler(force=True)
    assert plugins.logger.handlers == before
    assert plugins._PLUGINS_DEBUG is False
    monkeypatch.setenv("HERMES_PLUGINS_DEBUG", "1")
    plugins._install_plugin_debug_handler(force=True)
    plugins._install_plugin_debug_handler()
    added = [h for h in plugins.logger.handlers if h not in before]
    assert len(added) == 1
    assert added[0].level == logging.DEBUG
    assert plugins.logger.level == logging.DEBUG


# -- middleware, tools and images through the same manager ---------------------------------------


def test_middleware_functions_run_a_stand_in_managers_callbacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[Any] = []

    def failing(**kwargs: Any) -> Any:
        calls.append("failing")
        raise RuntimeError("before next_call")

    def rewriting(**kwargs: Any) -> Any:
        calls.append("rewriting")
        return kwargs["next_call"]({**kwargs["args"], "rewritten": True})

    def tagging(**kwargs: Any) -> Any:
        return {"args": kwargs["args"], "source": "tagger"}

    stand_in = types.SimpleNamespace(
        _middleware={"tool_execution": [failing, rewriting], "tool_request": [tagging]}
    )
    monkeypatch.setattr(plugins, "get_plugin_manager", lambda: stand_in)
    result = middleware.run_tool_execution_middleware("terminal", {"c": 1}, lambda a: a)
    assert result == {"c": 1, "rewritten": True}
    assert calls == ["failing", "rewriting"]
    request = middleware.apply_tool_request_middleware("read_file", {"path": "x"})
    assert request.changed is True
    assert request.trace == [{"source": "tagger"}]
    untouched: dict[str, Any] = {"messages": []}
    assert middleware.apply_llm_request_middleware(untouched).payload is untouched
    assert plugins.has_middleware("tool_request")
    assert not plugins.has_middleware("llm_request")


def test_dispatch_tool_goes_through_the_served_registry_with_the_cli_agent(
    hermes: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    manager = plugins.PluginManager(hermes.root)
    hermes.managers.append(manager)
    ctx = plugins.PluginContext(plugins.PluginManifest(name="p", source="user"), manager)
    seen: list[dict[str, Any]] = []

    def probe(args: dict[str, Any], **kw: Any) -> str:
        seen.append({"args": args, **kw})
        return '{"ok": true}'

    manager.tools.register_tool(
        "probe", "debugging", {"name": "probe", "parameters": {"type": "object"}}, probe
    )
    assert ctx.dispatch_tool("probe", {"x": 1}, task_id="t") == '{"ok": true}'
    assert seen[-1] == {"args": {"x": 1}, "task_id": "t"}  # no agent to pass: none forced
    manager._cli_ref = types.SimpleNamespace(agent="the-cli-agent")
    ctx.dispatch_tool("probe", {})
    assert seen[-1]["parent_agent"] == "the-cli-agent"
    ctx.dispatch_tool("probe", {}, parent_agent="explicit")
    assert seen[-1]["parent_agent"] == "explicit"
    assert "probe" in tools_registry.registry._tools
    assert "probe" not in manager._plugin_tool_names


def test_hermes_tool_registry_class_restores_what_an_override_replaced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = tools_registry.ToolRegistry()

    def builtin(args: dict[str, Any], **kw: Any) -> str:
        return "builtin"

    store.register("shared", "builtins", {"name": "shared"}, builtin)
    with caplog.at_level(logging.INFO, logger="tools.registry"):
        store.register("shared", "other", {"name": "shared"}, lambda a, **k: "shadow")
        assert any("override=True" in r.message for r in caplog.records)
        assert store.get_entry("shared").toolset == "builtins"  # type: ignore[union-attr]
        store.register("shared", "other", {"name": "shared"}, lambda a, **k: "o", override=True)
    assert store.dispatch("shared", {}) == "o"
    store.deregister("shared")
    restored = store.get_entry("shared")
    assert restored is not None
    assert restored.handler is builtin
    store.deregister("shared")
    assert store.get_entry("shared") is None
    assert store.get_all_tool_names() == []


def test_image_registry_reset_and_the_selection_read_at_each_call(
    hermes: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_hooks.compat.image_gen_provider import ImageGenProvider

    class Fake(ImageGenProvider):
        def __init__(self, name: str) -> None:
            self._name = name

        @property
        def name(self) -> str:
            return self._name

        def generate(self, prompt: str, aspect_ratio: str = "landscape", **kw: Any) -> Any:
            return {"success": True, "image": prompt}

    manager = plugins.PluginManager(hermes.root)
    hermes.managers.append(manager)
    with manager.activate():
        image_gen_registry.register_provider(Fake("leftover"))
        image_gen_registry._reset_for_tests()
        assert image_gen_registry.list_providers() == []
        image_gen_registry.register_provider(Fake("one"))
        image_gen_registry.register_provider(Fake("two"))
    chooser = tmp_path / "chooser"
    chooser.mkdir()
    (chooser / "config.yaml").write_text("image_gen:\n  provider: two\n", encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(chooser))
    active = image_gen_registry.get_active_provider()  # the manager is not engaged: $HERMES_HOME
    assert active is not None
    assert active.name == "two"


# -- a plain pytest run of a Hermes plugin's tests ---------------------------------------------


HERMES_STYLE_TESTS = """
import os
from pathlib import Path

import yaml

from agent import image_gen_registry
from agent.image_gen_provider import ImageGenProvider
from hermes_cli.plugins import PluginManager, VALID_HOOKS, get_plugin_manager
from tools.registry import registry, tool_error


def test_names_are_there():
    assert "pre_tool_call" in VALID_HOOKS
    assert callable(image_gen_registry._reset_for_tests) and callable(tool_error)
    assert issubclass(ImageGenProvider, object)


def test_home_per_test_and_a_plugin(tmp_path):
    home = Path(os.environ["HERMES_HOME"])
    assert home == tmp_path / "hermes_test" and (home / "skills").is_dir()
    folder = home / "plugins" / "hello"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(yaml.dump({"name": "hello"}))
    (folder / "__init__.py").write_text(
        "def register(ctx):\\n    ctx.register_hook('pre_llm_call', lambda **kw: 'hi')\\n"
    )
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["hello"]}}))
    mgr = PluginManager()
    mgr.discover_and_load()
    assert mgr._plugins["hello"].enabled
    assert mgr.invoke_hook("pre_llm_call", session_id="s") == ["hi"]
    assert get_plugin_manager() is mgr
"""


def test_a_plain_pytest_run_finds_the_hermes_names_without_a_conftest(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_hermes_style=HERMES_STYLE_TESTS)
    empty = pytester.path / "bundled-empty"
    empty.mkdir()
    monkeypatch.setenv("HERMES_BUNDLED_PLUGINS", str(empty))
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "--hermes-home-per-test")
    result.assert_outcomes(passed=2)


def test_hermes_yaml_reads_yaml_1_1_and_writes_indented_blocks() -> None:
    from hermes_hooks.compat import hermes_yaml

    text = hermes_yaml.safe_dump({"plugins": {"enabled": ["b", "a"], "label": "café"}})
    assert text == "plugins:\n  enabled:\n    - b\n    - a\n  label: café\n"
    loaded = hermes_yaml.safe_load("flag: yes\nsession: 20260820_093237_089e44\n")
    assert loaded == {"flag": True, "session": "20260820_093237_089e44"}
    with pytest.raises(hermes_yaml.YAMLError):
        hermes_yaml.safe_load("a: [unclosed")


def test_entry_points_patched_as_hermes_tests_patch_them_are_read(
    hermes: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.metadata
    from unittest.mock import MagicMock

    module = types.ModuleType("fake_ep_plugin")
    module.register = lambda ctx: ctx.register_hook("pre_llm_call", lambda **kw: "ep")  # type: ignore[attr-defined]
    entry = MagicMock()
    entry.name = "ep_plugin"
    entry.value = "fake_ep_plugin:register"
    entry.group = plugins.ENTRY_POINTS_GROUP
    entry.load.return_value = module
    asked: list[str] = []

    def select(group: str) -> list[Any]:
        asked.append(group)
        return [entry]

    def entry_points() -> Any:  # no arguments, as Hermes' tests write it
        found = MagicMock()
        found.select = select
        return found

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    manager = hermes_manager(hermes)
    assert asked == ["hermes_agent.plugins"]
    assert "ep_plugin" in manager._plugins
    assert manager._plugins["ep_plugin"].manifest.source == "entrypoint"


def test_the_test_reset_helper_unloads_the_managers_made_for_homes(
    hermes: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    hermes.add_plugin(
        "kept", "def register(ctx):\n    ctx.register_hook('pre_llm_call', lambda **kw: 'x')\n"
    )
    hermes.write_config()
    made = plugins.get_plugin_manager()
    assert plugins.invoke_hook("pre_llm_call", session_id="s") == ["x"]
    plugins._reset_plugin_managers_for_tests()
    assert plugins._plugin_manager is None
    assert plugins._plugin_managers_by_home == {}
    assert made.invoke_hook("pre_llm_call", session_id="s") == []  # its plugins unloaded
    assert plugins.invoke_hook("pre_llm_call", session_id="s") == ["x"]  # discovered again


def test_the_pass_count_script_reads_pytests_report(tmp_path: Path) -> None:
    from benchmarks import hermes_plugin_tests as script

    report = tmp_path / "report.xml"
    report.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.hermes_cli.test_plugins.TestHooks" name="test_ok"'
        ' file="tests/hermes_cli/test_plugins.py"/>'
        '<testcase classname="tests.hermes_cli.test_plugins.TestHooks" name="test_bad"'
        ' file="tests/hermes_cli/test_plugins.py">'
        '<failure message="AssertionError: assert 1 == 2">long text</failure></testcase>'
        '<testcase classname="tests.agent.test_x" name="test_err">'
        "<error>\n\nImportError: no module\nmore</error></testcase>"
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    outcomes = script.read_junit(report)
    assert [(o.file, o.test, o.result) for o in outcomes] == [
        ("tests/hermes_cli/test_plugins.py", "TestHooks::test_ok", "passed"),
        ("tests/hermes_cli/test_plugins.py", "TestHooks::test_bad", "failed"),
        ("tests/agent/test_x.py", "test_err", "error"),
    ]
    assert outcomes[2].message == "ImportError: no module"
    assert script.summary(outcomes)["tests/hermes_cli/test_plugins.py"] == {"passed": 1, "total": 2}
    text = script.render(outcomes)
    assert "| all | 1 of 3 |" in text
    assert "- `TestHooks::test_bad` (failed): AssertionError: assert 1 == 2" in text


def test_the_hermes_names_can_be_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from hermes_hooks import testing

    monkeypatch.setenv("HERMES_HOOKS_NO_COMPAT_NAMES", "1")
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if f is not testing._trigger])
    assert testing.install_hermes_names() is False
    assert testing._trigger not in sys.meta_path
    monkeypatch.delenv("HERMES_HOOKS_NO_COMPAT_NAMES")
    assert testing.install_hermes_names() is True
    assert sys.meta_path[0] is testing._trigger


def test_a_platform_registry_made_by_hand_restores_the_entry_an_override_replaced() -> None:
    from hermes_hooks.compat.gateway_platform_registry import PlatformEntry, PlatformRegistry

    registry = PlatformRegistry()  # Hermes' class: its own entries, no manager needed
    builtin = PlatformEntry("chat", "Chat", lambda cfg: None, lambda: True, source="builtin")
    override = PlatformEntry("chat", "Chat", lambda cfg: None, lambda: True, source="plugin")
    registry.register(builtin)
    registry.register(override)
    assert [entry.source for entry in registry.all_entries()] == ["plugin"]
    assert registry.unregister("chat") is True
    restored = registry.get("chat")
    assert restored is not None
    assert restored.source == "builtin"
    assert registry.unregister("chat") is True
    assert registry.get("chat") is None
    assert not registry.is_registered("chat")


def test_the_dashboard_auth_submodules_are_attributes_of_the_package() -> None:
    import importlib

    package = importlib.import_module("hermes_cli.dashboard_auth")
    from hermes_cli.dashboard_auth import token_auth  # the shape Hermes' drain test imports

    assert token_auth is importlib.import_module("hermes_cli.dashboard_auth.token_auth")
    assert package.base.DashboardAuthProvider is package.DashboardAuthProvider
    assert package.registry.get_provider is package.get_provider


def test_model_tools_offers_a_toolsets_tools_only_when_it_is_enabled(hermes: PluginHome) -> None:
    from hermes_hooks.compat import model_tools

    manager = plugins.PluginManager(hermes.root)
    hermes.managers.append(manager)
    schema = {"name": "vis", "description": "Visible", "parameters": {"type": "object"}}
    manager.tools.register_tool("vis", "plugin_vis", schema, lambda args, **kw: "ok")
    manager.tools.register_tool(
        "hidden",
        "plugin_vis",
        {**schema, "name": "hidden"},
        lambda args, **kw: "ok",
        check_fn=lambda: False,
    )
    manager.tools.register_tool("other", "other", {**schema, "name": "other"}, lambda a: "ok")

    def names(**kwargs: Any) -> list[str]:
        found = model_tools.get_tool_definitions(quiet_mode=True, **kwargs)
        return sorted(tool["function"]["name"] for tool in found)

    assert names(enabled_toolsets=["terminal", "plugin_vis"]) == ["vis"]  # unavailable: left out
    assert names(enabled_toolsets=["terminal"]) == []
    assert names(disabled_toolsets=["plugin_vis"]) == ["other"]
    assert names() == ["other", "vis"]
    assert model_tools.get_toolset_for_tool("vis") == "plugin_vis"
    assert "other" in model_tools.get_all_tool_names()


def test_a_host_tool_registered_through_the_registry_is_seen_by_managers_made_later(
    hermes: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tools_registry, "_process_host_tools", {})
    schema = {"name": "early", "parameters": {"type": "object"}}
    with monkeypatch.context() as before_any_manager:
        before_any_manager.setattr(active, "current_manager", lambda: None)
        tools_registry.registry.register("early", "terminal", schema, lambda a, **k: "early")
        early = tools_registry.registry._tools["early"]  # no manager yet: the process's record
    assert (early.toolset, early.handler({})) == ("terminal", "early")
    first = plugins.PluginManager(hermes.root)
    assert first.tools.get_entry("early") is not None
    hermes.managers.append(first)
    schema = {"name": "builtin_probe", "parameters": {"type": "object"}}
    tools_registry.registry.register("builtin_probe", "terminal", schema, lambda a, **k: "host")
    later = plugins.PluginManager(hermes.root)  # Hermes' registry is one per process
    hermes.managers.append(later)
    entry = later.tools.get_entry("builtin_probe")
    assert entry is not None
    assert entry.owner == HOST
    assert entry.value.handler({}) == "host"
    tools_registry.registry.deregister("builtin_probe")  # the current manager's, and the record
    newest = plugins.PluginManager(hermes.root)
    hermes.managers.append(newest)
    assert newest.tools.get_entry("builtin_probe") is None

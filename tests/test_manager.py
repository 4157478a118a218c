"""Tests for PluginManager: gating, load/unload, status, strict mode, debug log, Hermes calls."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pluggy
import pytest
from plugin_builders import (
    call_hook,
    info,
    load,
    plugin_names,
    status_of,
    write_config,
    write_plugin,
)

from hermes_hooks.errors import ConfigError, PluginLoadError, RegistrationError
from hermes_hooks.plugins.manager import PluginInfo, PluginManager

REPO_ROOT = Path(__file__).resolve().parents[1]

# A plugin that records each register() call in a file next to it, so that calls survive
# re-imports of the module.
COUNTING = """
from pathlib import Path

def register(ctx):
    with open(Path(__file__).with_name("calls.txt"), "a") as f:
        f.write("register\\n")
"""


def register_calls(folder: Path) -> int:
    path = folder / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


pytestmark = pytest.mark.usefixtures("bundled")


def simple(tool: str | None = None, hook: str | None = None) -> str:
    """``register(ctx)`` code registering a tool and/or a ``pre_llm_call`` answer."""
    lines = ["def register(ctx):", "    pass"]
    if tool:
        lines.append(
            f"    ctx.register_tool({tool!r}, 't', {{'name': {tool!r}, 'parameters': {{}}}}, "
            "lambda args, **kw: 'ok')"
        )
    if hook:
        lines.append(f"    ctx.register_hook('pre_llm_call', lambda **kw: {hook!r})")
    return "\n".join(lines) + "\n"


# --- construction ---------------------------------------------------------------------------------


def test_manager_is_a_pluggy_manager_with_the_hermes_hooks(home: Path) -> None:
    pm = PluginManager(home)

    assert isinstance(pm, pluggy.PluginManager)
    assert pm.project_name == "hermes"
    assert pm.hook_argnames("pre_tool_call") is not None
    assert "on_session_start" in pm.known_hooks()
    assert pm.hermes_home == home
    assert pm.strict is False


def test_hermes_home_defaults_to_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "from-env"))

    assert PluginManager().hermes_home == tmp_path / "from-env"
    assert PluginManager(str(tmp_path / "given")).hermes_home == tmp_path / "given"


# --- gating ---------------------------------------------------------------------------------------


def test_plugins_are_opt_in(home: Path, user: Path) -> None:
    write_plugin(user, "on", simple(tool="on_tool"))
    write_plugin(user, "off", "raise AssertionError('imported though not enabled')\n")
    write_config(home, enabled=["on"])

    pm = load(home)

    assert status_of(pm, "on") == ("enabled", None)
    assert status_of(pm, "off") == ("not enabled", None)
    off = pm.get_plugin_info("off")
    assert off is not None
    assert off.reason == "not listed in plugins.enabled"
    assert "hermes_plugins.off" not in sys.modules


def test_no_config_file_loads_nothing(home: Path, user: Path) -> None:
    write_plugin(user, "lonely", simple())

    pm = load(home)

    assert status_of(pm, "lonely") == ("not enabled", None)
    assert pm.get_plugins() == set()


def test_disabled_beats_enabled(home: Path, user: Path) -> None:
    write_plugin(user, "both-lists", "raise AssertionError('imported though disabled')\n")
    write_config(home, enabled=["both-lists"], disabled=["both-lists"])

    pm = load(home)

    info = pm.get_plugin_info("both-lists")
    assert info is not None
    assert (info.status, info.reason) == ("disabled", "listed in plugins.disabled")


def test_gating_matches_keys_and_old_folder_keys(home: Path, user: Path) -> None:
    write_plugin(user, "folder-a", simple(), manifest={"name": "nice-a"})
    write_plugin(user, "folder-b", simple(), manifest={"name": "nice-b"})
    write_plugin(user, "cat/leaf", simple())
    write_plugin(user, "folder-c", simple(), manifest={"name": "nice-c"})
    write_config(home, enabled=["nice-a", "folder-b", "cat/leaf", "folder-c"], disabled=["nice-c"])

    pm = load(home)

    # Flat plugins are keyed by their manifest name (Hermes' rule); the folder name is an
    # alias that still matches, with a warning on the plugin's status.
    assert status_of(pm, "nice-a") == ("enabled", None)
    assert info(pm, "nice-a").warnings == ()
    assert status_of(pm, "nice-b") == ("enabled", None)
    assert info(pm, "nice-b").aliases == ("folder-b",)
    assert "names this plugin 'folder-b', its folder name" in info(pm, "nice-b").warnings[0]
    assert status_of(pm, "cat/leaf") == ("enabled", None)
    assert status_of(pm, "nice-c") == ("disabled", None)


def test_bundled_backend_loads_by_default(home: Path, user: Path, bundled: Path) -> None:
    write_plugin(bundled, "memory", simple(tool="memory_tool"), manifest={"kind": "backend"})
    write_plugin(bundled, "extra", simple(), manifest={"kind": "standalone"})
    write_plugin(user, "user-backend", simple(), manifest={"kind": "backend"})

    pm = load(home)

    memory = pm.get_plugin_info("memory")
    assert memory is not None
    assert (memory.status, memory.source, memory.kind) == ("enabled", "bundled", "backend")
    assert memory.reason == "bundled backend, loaded by default"
    assert memory.tools == ("memory_tool",)
    assert status_of(pm, "extra") == ("not enabled", None)
    assert status_of(pm, "user-backend") == ("not enabled", None)


def test_bundled_backend_can_be_disabled(home: Path, bundled: Path) -> None:
    write_plugin(bundled, "memory", simple(), manifest={"kind": "backend"})
    write_config(home, disabled=["memory"])

    assert status_of(load(home), "memory") == ("disabled", None)


def test_exclusive_plugins_are_never_loaded(home: Path, user: Path, bundled: Path) -> None:
    trap = "raise AssertionError('an exclusive plugin was imported')\n"
    write_plugin(user, "provider", trap, manifest={"kind": "exclusive"})
    write_plugin(bundled, "bundled-provider", trap, manifest={"kind": "exclusive"})
    write_config(home, enabled=["provider", "bundled-provider"])

    pm = load(home)

    for key in ("provider", "bundled-provider"):
        info = pm.get_plugin_info(key)
        assert info is not None
        assert (info.status, info.kind) == ("not enabled", "exclusive")
        assert info.reason is not None
        assert "exclusive" in info.reason
    assert pm.get_plugins() == set()


def test_missing_required_env_is_a_warning_and_the_plugin_loads(
    home: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As in Hermes: requires_env is asked for at install, never a refusal to load (the plugin
    # may read its setting from config instead).
    monkeypatch.delenv("HH_TEST_API_KEY", raising=False)
    write_plugin(
        user, "needs-key", simple(), manifest={"requires_env": ["HH_TEST_API_KEY"]}
    )  # fmt: skip
    write_config(home, enabled=["needs-key"])

    plugin = info(load(home), "needs-key")

    assert (plugin.status, plugin.error) == ("enabled", None)
    assert plugin.warnings == (
        "requires environment variable HH_TEST_API_KEY, which is not set; "
        "loaded all the same (strict mode refuses it)",
    )


def test_strict_mode_refuses_a_plugin_missing_its_env(
    home: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HH_TEST_API_KEY", raising=False)
    write_plugin(
        user,
        "needs-key",
        "raise AssertionError('imported without its key')\n",
        manifest={"requires_env": ["HH_TEST_API_KEY"]},
    )
    write_config(home, enabled=["needs-key"])

    with pytest.raises(PluginLoadError, match="HH_TEST_API_KEY, which is not set"):
        load(home, strict=True)


def test_every_missing_required_env_is_named(
    home: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HH_TEST_A", raising=False)
    monkeypatch.setenv("HH_TEST_B", "")
    monkeypatch.setenv("HH_TEST_C", "set")
    write_plugin(
        user,
        "needs-keys",
        simple(),
        manifest={
            "requires_env": ["HH_TEST_A", {"name": "HH_TEST_B", "secret": True}, "HH_TEST_C"]
        },
    )
    write_config(home, enabled=["needs-keys"])

    (warning,) = info(load(home), "needs-keys").warnings

    assert warning.startswith(
        "requires environment variables HH_TEST_A, HH_TEST_B, which are not set"
    )


def test_required_env_set_loads(home: Path, user: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HH_TEST_API_KEY", "secret")
    write_plugin(user, "needs-key", simple(), manifest={"requires_env": ["HH_TEST_API_KEY"]})
    write_config(home, enabled=["needs-key"])

    assert status_of(load(home), "needs-key") == ("enabled", None)


def test_required_env_of_a_plugin_not_enabled_is_no_error(
    home: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HH_TEST_API_KEY", raising=False)
    write_plugin(user, "idle", simple(), manifest={"requires_env": ["HH_TEST_API_KEY"]})

    assert status_of(load(home), "idle") == ("not enabled", None)


def test_broken_config_is_reported_and_loads_nothing(home: Path, user: Path) -> None:
    write_plugin(user, "p", simple())
    (home / "config.yaml").write_text("plugins: [p]\n", encoding="utf-8")

    pm = load(home)

    assert pm.config_error is not None
    assert "plugins" in pm.config_error
    assert status_of(pm, "p") == ("not enabled", None)
    with pytest.raises(ConfigError, match="plugins"):
        PluginManager(home, strict=True).discover_and_load()


# --- discover_and_load, force, unload -------------------------------------------------------------


def test_discover_and_load_is_idempotent(home: Path, user: Path) -> None:
    folder = write_plugin(user, "counted", COUNTING)
    write_config(home, enabled=["counted"])
    pm = PluginManager(home)

    pm.discover_and_load()
    pm.discover_and_load()

    assert register_calls(folder) == 1
    assert status_of(pm, "counted") == ("enabled", None)
    assert len(pm.get_plugins()) == 1


def test_force_unloads_rescans_and_reimports_changed_code(home: Path, user: Path) -> None:
    folder = write_plugin(user, "changing", simple(tool="old_tool", hook="old"))
    write_plugin(user, "going", simple(tool="going_tool"))
    write_config(home, enabled=["changing", "going", "new"])
    pm = load(home)
    assert call_hook(pm, "pre_llm_call") == ["old"]

    write_plugin(
        user,
        "changing",
        "from .helper import ANSWER\n\n" + simple(tool="new_tool").replace("'ok'", "ANSWER"),
        files={"helper.py": "ANSWER = 'fresh from a new module'\n"},
    )
    shutil.rmtree(user / "going")  # with whatever Python wrote there (__pycache__)
    write_plugin(user, "new", simple(hook="new"))
    pm.discover_and_load(force=True)

    assert [i.key for i in pm.list_plugins()] == ["changing", "new"]
    assert plugin_names(pm.tools) == ["new_tool"]
    assert pm.tools.dispatch("new_tool", {}) == "fresh from a new module"
    assert call_hook(pm, "pre_llm_call") == ["new"]
    assert (folder / "helper.py").exists()
    assert {pm.get_name(p) for p in pm.get_plugins()} == {"changing", "new"}


def test_force_applies_a_changed_config(home: Path, user: Path) -> None:
    folder = write_plugin(user, "toggled", COUNTING)
    write_config(home, enabled=["toggled"])
    pm = load(home)

    write_config(home, disabled=["toggled"])
    pm.discover_and_load()
    assert status_of(pm, "toggled") == ("enabled", None)
    pm.discover_and_load(force=True)

    assert status_of(pm, "toggled") == ("disabled", None)
    assert pm.get_plugins() == set()
    assert register_calls(folder) == 1


def test_unload_plugin_removes_everything_it_registered(home: Path, user: Path) -> None:
    folder = write_plugin(
        user,
        "full",
        """
        from hermes_hooks import hookimpl

        @hookimpl
        def post_tool_call(tool_name):
            pass

        def register(ctx):
            ctx.register_tool("full_tool", "t", {"name": "full_tool", "parameters": {}},
                              lambda args, **kw: "ok")
            ctx.register_command("full-cmd", lambda args: "ok")
            ctx.register_cli_command("full-cli", "help", lambda parser: None)
            ctx.register_skill("guide", ctx.path / "guide.md")
            ctx.register_hook("pre_llm_call", lambda **kw: "full")
        """,
        files={"guide.md": "# guide\n"},
    )
    write_plugin(user, "other", simple(tool="other_tool", hook="other"))
    write_config(home, enabled=["full", "other"])
    pm = load(home)
    info = pm.get_plugin_info("full")
    assert info is not None
    assert info.skills == ("full:guide",)
    assert info.cli_commands == ("full-cli",)

    assert pm.unload_plugin("full") is True

    info = pm.get_plugin_info("full")
    assert info is not None
    assert (info.status, info.reason) == ("not enabled", "unloaded")
    assert (info.tools, info.commands, info.cli_commands, info.skills, info.hooks) == (
        (),
        (),
        (),
        (),
        (),
    )
    assert plugin_names(pm.tools) == ["other_tool"]
    assert plugin_names(pm.commands) == []
    assert pm.skills.find("full:guide") is None
    assert not pm.has_hook("post_tool_call")
    assert call_hook(pm, "pre_llm_call") == ["other"]
    assert not pm.has_plugin("full")
    assert "hermes_plugins.full" not in sys.modules
    assert pm.get_context("full") is None
    assert folder.exists()
    assert pm.unload_plugin("full") is False
    assert pm.unload_plugin("never-heard-of") is False


def test_unload_all_forgets_discovery(home: Path, user: Path) -> None:
    folder = write_plugin(user, "counted", COUNTING)
    write_config(home, enabled=["counted"])
    pm = load(home)

    pm.unload_all()

    assert pm.list_plugins() == []
    assert pm.get_plugins() == set()
    pm.discover_and_load()
    assert register_calls(folder) == 2


# --- status ---------------------------------------------------------------------------------------


def test_list_plugins_is_sorted_by_key_and_reflects_what_happened(
    home: Path, user: Path, bundled: Path
) -> None:
    write_plugin(user, "zeta", simple(tool="zeta_tool", hook="z"), manifest={"description": "Z"})
    write_plugin(bundled, "alpha", simple(), manifest={"kind": "backend", "version": "2.0"})
    write_plugin(user, "cat/beta", "raise RuntimeError('nope')\n")
    write_plugin(user, "gamma", simple())
    write_plugin(user, "delta", simple())
    write_config(home, enabled=["zeta", "cat/beta", "delta"], disabled=["delta"])

    infos = load(home).list_plugins()

    assert [i.key for i in infos] == ["alpha", "cat/beta", "delta", "gamma", "zeta"]
    by_key = {i.key: i for i in infos}
    assert [by_key[k].status for k in ("alpha", "cat/beta", "delta", "gamma", "zeta")] == [
        "enabled",
        "error",
        "disabled",
        "not enabled",
        "enabled",
    ]
    zeta = by_key["zeta"]
    assert zeta == PluginInfo(
        key="zeta",
        name="zeta",
        version="1.0",
        kind="standalone",
        source="user",
        status="enabled",
        error=None,
        path=str(user / "zeta"),
        description="Z",
        reason="listed in plugins.enabled",
        tools=("zeta_tool",),
        hooks=("pre_llm_call",),
        load_ms=zeta.load_ms,
    )
    assert zeta.load_ms is not None
    assert zeta.load_ms >= 0
    assert (by_key["alpha"].source, by_key["alpha"].version) == ("bundled", "2.0")
    beta = by_key["cat/beta"]
    assert (beta.name, beta.error) == (
        "beta",
        f"RuntimeError: nope ({user / 'cat' / 'beta' / '__init__.py'}:1)",
    )
    assert beta.tools == beta.hooks == ()
    assert zeta.to_dict()["tools"] == ["zeta_tool"]


def test_list_plugins_is_empty_before_discovery(home: Path, user: Path) -> None:
    write_plugin(user, "p", simple())

    pm = PluginManager(home)

    assert pm.list_plugins() == []
    assert pm.get_plugin_info("p") is None


# --- strict mode ----------------------------------------------------------------------------------


def test_strict_raises_a_load_error_naming_the_plugin(home: Path, user: Path) -> None:
    write_plugin(user, "fragile", "def register(ctx):\n    raise RuntimeError('boom')\n")
    write_config(home, enabled=["fragile"])
    pm = PluginManager(home, strict=True)

    with pytest.raises(PluginLoadError, match=r"plugin 'fragile': RuntimeError: boom") as info:
        pm.discover_and_load()

    assert info.value.key == "fragile"
    assert isinstance(info.value.__cause__, RuntimeError)
    assert status_of(pm, "fragile")[0] == "error"
    assert pm.get_plugins() == set()


def test_strict_from_the_environment(
    home: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_plugin(user, "hollow", "X = 1\n")
    write_config(home, enabled=["hollow"])
    monkeypatch.setenv("HERMES_PLUGINS_STRICT", "1")
    pm = PluginManager(home)

    assert pm.strict is True
    with pytest.raises(PluginLoadError, match=r"plugin 'hollow': no register\(\) function"):
        pm.discover_and_load()


def test_strict_raises_for_a_plugin_that_cannot_be_read(home: Path, user: Path) -> None:
    write_plugin(user, "unreadable", manifest="name: [\n")
    write_config(home, enabled=["unreadable"])

    with pytest.raises(PluginLoadError, match=r"plugin 'unreadable': .*plugin\.yaml"):
        PluginManager(home, strict=True).discover_and_load()


def test_strict_raises_for_a_missing_required_env(
    home: Path, user: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HH_TEST_API_KEY", raising=False)
    write_plugin(user, "needs-key", simple(), manifest={"requires_env": ["HH_TEST_API_KEY"]})
    write_config(home, enabled=["needs-key"])

    with pytest.raises(PluginLoadError, match=r"'needs-key': .*HH_TEST_API_KEY"):
        PluginManager(home, strict=True).discover_and_load()


# --- HERMES_PLUGINS_DEBUG -------------------------------------------------------------------------


DEBUG_SCRIPT = """
import sys
from hermes_hooks.plugins.manager import PluginManager
pm = PluginManager(sys.argv[1])
pm.discover_and_load()
print("done")
"""


def run_debug_script(home: Path, bundled: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    clean.update(env, HERMES_BUNDLED_PLUGINS=str(bundled), PYTHONPATH=str(REPO_ROOT))
    return subprocess.run(
        [sys.executable, "-c", DEBUG_SCRIPT, str(home)],
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
        check=True,
    )


def test_debug_switch_logs_decisions_on_stderr(home: Path, user: Path, bundled: Path) -> None:
    write_plugin(user, "on", simple())
    write_plugin(user, "off", simple())
    write_plugin(user, "no", simple())
    write_plugin(user, "bad", "raise ValueError('bad')\n")
    write_config(home, enabled=["on", "bad"], disabled=["no"])

    result = run_debug_script(home, bundled, HERMES_PLUGINS_DEBUG="1")

    assert result.stdout == "done\n"
    err = result.stderr
    assert "DEBUG" in err
    assert f"scanned user plugins in {user}: 4 found" in err
    assert "project plugins are off" in err
    assert "plugin 'on' is to be loaded: listed in plugins.enabled" in err
    assert "plugin 'on' loaded in" in err
    assert "plugin 'off' not enabled: not listed in plugins.enabled" in err
    assert "plugin 'no' disabled: listed in plugins.disabled" in err
    assert "plugin 'bad' failed to load: ValueError: bad" in err


def test_no_debug_output_without_the_switch(home: Path, user: Path, bundled: Path) -> None:
    write_plugin(user, "on", simple())
    write_config(home, enabled=["on"])

    result = run_debug_script(home, bundled)

    assert result.stdout == "done\n"
    assert "DEBUG" not in result.stderr


# --- Hermes-compatible invoke_hook and has_hook ---------------------------------------------------


def test_invoke_hook_returns_the_non_none_results(home: Path, user: Path) -> None:
    write_plugin(user, "a", simple(hook="from a"))
    write_plugin(user, "b", "def register(ctx):\n    ctx.register_hook('pre_llm_call', print)\n")
    write_plugin(user, "c", simple(hook="from c"))
    write_config(home, enabled=["a", "b", "c"])
    pm = load(home)

    assert sorted(pm.invoke_hook("pre_llm_call", user_message="hi")) == ["from a", "from c"]


def test_invoke_hook_fills_missing_arguments_with_none(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "spy",
        """
        seen = []

        def register(ctx):
            ctx.register_hook("post_tool_call", lambda **kw: seen.append(kw))
        """,
    )
    write_config(home, enabled=["spy"])
    pm = load(home)

    assert pm.invoke_hook("post_tool_call", tool_name="terminal", not_a_hook_arg=1) == []

    [kwargs] = sys.modules["hermes_plugins.spy"].seen
    assert set(kwargs) == set(pm.hook_argnames("post_tool_call") or ())
    assert kwargs["tool_name"] == "terminal"
    assert kwargs["result"] is None  # no default in the contract: None, as Hermes passes it
    # The others take the contract's defaults, a fresh list for each call.
    assert (kwargs["task_id"], kwargs["status"], kwargs["middleware_trace"]) == ("", "ok", [])


def test_invoke_hook_of_a_first_result_hook_gives_a_list(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "upper",
        "def register(ctx):\n"
        "    ctx.register_hook('transform_tool_result', lambda result, **kw: result.upper())\n",
    )
    write_config(home, enabled=["upper"])
    pm = load(home)

    assert pm.invoke_hook("transform_tool_result", tool_name="t", result="abc") == ["ABC"]
    assert pm.invoke_hook("transform_llm_output", response_text="x") == []


def test_invoke_hook_skips_a_raising_callback(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "a-raises",
        "def register(ctx):\n    ctx.register_hook('pre_llm_call', lambda: 1 / 0)\n",
    )
    write_plugin(user, "b-fine", simple(hook="fine"))
    write_config(home, enabled=["a-raises", "b-fine"])
    pm = load(home)

    assert pm.invoke_hook("pre_llm_call") == ["fine"]
    info = pm.get_plugin_info("a-raises")
    assert info is not None
    assert info.hook_errors == 1


def test_invoke_hook_of_an_unknown_or_unused_hook_is_empty(home: Path) -> None:
    pm = load(home)

    assert pm.invoke_hook("no_such_hook", x=1) == []
    assert pm.invoke_hook("pre_llm_call") == []


def test_invoke_hook_of_a_hook_unknown_to_this_host(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "future",
        "def register(ctx):\n"
        "    ctx.register_hook('from_the_future', lambda when, extra=2: f'{when}/{extra}')\n",
    )
    write_config(home, enabled=["future"])
    pm = load(home)

    assert pm.has_hook("from_the_future")
    assert pm.invoke_hook("from_the_future", when="soon") == ["soon/2"]
    assert pm.invoke_hook("from_the_future") == ["None/2"]


def test_has_hook(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "native",
        "from hermes_hooks import hookimpl\n\n@hookimpl\ndef post_llm_call():\n    pass\n",
    )
    write_config(home, enabled=["native"])
    pm = load(home)

    assert pm.has_hook("post_llm_call")
    assert not pm.has_hook("pre_llm_call")
    assert not pm.has_hook("no_such_hook")
    pm.unload_plugin("native")
    assert not pm.has_hook("post_llm_call")


# --- register_hook --------------------------------------------------------------------------------


def test_register_hook_callbacks_show_in_get_plugins_and_leave_with_the_plugin(
    home: Path, user: Path
) -> None:
    write_plugin(
        user,
        "shim",
        """
        def on_start(session_id):
            return None

        def register(ctx):
            ctx.register_hook("on_session_start", on_start)
            ctx.register_hook("on_session_end", lambda **kw: None)
        """,
    )
    write_config(home, enabled=["shim"])
    pm = load(home)

    [holder] = pm.get_plugins()
    assert pm.get_name(holder) == "shim"
    assert pm.get_plugin("shim") is holder
    callers = {c.name for c in pm.get_hookcallers(holder) or []}
    assert callers == {"on_session_start", "on_session_end"}
    assert [i.plugin_name for i in pm.hook.on_session_start.get_hookimpls()] == ["shim"]

    pm.unload_plugin("shim")

    assert pm.get_plugins() == set()
    assert pm.hook.on_session_start.get_hookimpls() == []
    assert pm.hook.on_session_end.get_hookimpls() == []


def test_unknown_hook_name_is_kept_and_warned_once_with_the_closest_names(
    home: Path, user: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_plugin(
        user,
        "typo",
        """
        def register(ctx):
            ctx.register_hook("pre_tool_cal", lambda **kw: None)
            ctx.register_hook("pre_tool_cal", lambda **kw: None)
        """,
    )
    write_config(home, enabled=["typo"])

    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        pm = load(home)

    warnings = [r.getMessage() for r in caplog.records if "pre_tool_cal'" in r.getMessage()]
    assert len(warnings) == 1
    assert "plugin 'typo'" in warnings[0]
    assert "did you mean 'pre_tool_call'" in warnings[0]
    assert status_of(pm, "typo") == ("enabled", None)
    assert len(pm.hook.pre_tool_cal.get_hookimpls()) == 2
    info = pm.get_plugin_info("typo")
    assert info is not None
    assert "pre_tool_cal" in info.hooks
    assert len(info.warnings) == 1


def test_register_hook_after_load(home: Path, user: Path) -> None:
    write_plugin(user, "late", simple(tool="late_tool", hook="first"))
    write_plugin(user, "other", simple(hook="other"))
    write_config(home, enabled=["late", "other"])
    pm = load(home)
    context = pm.get_context("late")
    assert context is not None

    context.register_hook("post_llm_call", lambda **kw: None)
    context.register_hook("pre_llm_call", lambda **kw: "second")

    assert sorted(call_hook(pm, "pre_llm_call")) == ["first", "other", "second"]
    assert pm.has_hook("post_llm_call")
    info = pm.get_plugin_info("late")
    assert info is not None
    assert info.hooks == ("post_llm_call", "pre_llm_call")
    assert len(pm.get_plugins()) == 2

    pm.unload_plugin("late")

    assert call_hook(pm, "pre_llm_call") == ["other"]
    assert not pm.has_hook("post_llm_call")


def test_register_hook_through_the_ctx_of_an_unloaded_plugin_is_refused(
    home: Path, user: Path
) -> None:
    write_plugin(user, "gone", simple(hook="gone"))
    write_config(home, enabled=["gone"])
    pm = load(home)
    context = pm.get_context("gone")
    assert context is not None
    pm.unload_plugin("gone")

    with pytest.raises(RegistrationError, match="'gone' is not enabled"):
        context.register_hook("pre_llm_call", lambda **kw: "back")

    assert call_hook(pm, "pre_llm_call") == []
    assert pm.get_plugins() == set()


def test_register_hook_callback_gets_only_the_arguments_it_names(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "picky",
        """
        seen = []

        def only_two(tool_name, result):
            seen.append((tool_name, result))

        def register(ctx):
            ctx.register_hook("post_tool_call", only_two)
        """,
    )
    write_config(home, enabled=["picky"])
    pm = load(home)

    call_hook(pm, "post_tool_call", tool_name="t", result="r", args={"a": 1})

    assert sys.modules["hermes_plugins.picky"].seen == [("t", "r")]


def test_hook_exception_is_counted_on_the_plugin_status(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "flaky",
        """
        def register(ctx):
            ctx.register_hook("post_llm_call", lambda **kw: {}["missing"])
        """,
    )
    write_config(home, enabled=["flaky"])
    pm = load(home)

    call_hook(pm, "post_llm_call")
    call_hook(pm, "post_llm_call")

    info = pm.get_plugin_info("flaky")
    assert info is not None
    assert info.status == "enabled"
    assert info.hook_errors == 2
    assert info.last_hook_error is not None
    assert info.last_hook_error.startswith("post_llm_call: KeyError")


def test_unknown_hook_warning_stays_on_the_status_after_a_forced_reload(
    home: Path, user: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_plugin(
        user, "typo", "def register(ctx):\n    ctx.register_hook('on_sesion_end', print)\n"
    )
    write_config(home, enabled=["typo"])
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        pm = load(home)
        assert [r for r in caplog.records if "on_sesion_end" in r.getMessage()]
        caplog.clear()
        pm.discover_and_load(force=True)

    info = pm.get_plugin_info("typo")
    assert info is not None
    assert len(info.warnings) == 1
    assert "did you mean 'on_session_end'" in info.warnings[0]
    assert not [r for r in caplog.records if "on_sesion_end" in r.getMessage()]

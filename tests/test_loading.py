"""Tests for loading: folder and entry-point plugins, both styles, and every way to fail."""

from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pluggy
import pytest
from plugin_builders import (
    call_hook,
    info,
    isolated_home,
    load,
    plugin_names,
    status_of,
    user_plugin,
    wait_for,
    write_config,
    write_distribution,
    write_plugin,
)

from hermes_hooks.calling import workers as _workers
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.errors import PluginLoadError
from hermes_hooks.plugins.loading import PluginHooks, describe_failure, module_name_for
from hermes_hooks.plugins.manager import PluginManager


def tool_code(name: str) -> str:
    """A line of ``register(ctx)`` that registers tool ``name``."""
    return (
        f"    ctx.register_tool({name!r}, 'test', {{'name': {name!r}, 'parameters': {{}}}}, "
        "lambda args, **kw: 'ok')\n"
    )


pytestmark = pytest.mark.usefixtures("bundled")


# --- module names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "module"),
    [
        ("hello", "hermes_plugins.hello"),
        ("my-plugin", "hermes_plugins.my_plugin"),
        ("image_gen/openai", "hermes_plugins.image_gen__openai"),
        ("v1.2", "hermes_plugins.v1_2"),
        ("3d", "hermes_plugins._3d"),
    ],
)
def test_module_name_for(key: str, module: str) -> None:
    assert module_name_for(key) == module


# --- a folder plugin is imported as hermes_plugins.<slug> ----------------------------------------


def test_folder_plugin_is_imported_under_hermes_plugins_with_relative_imports(
    home: Path, user: Path
) -> None:
    write_plugin(
        user,
        "image_gen/my-gen",
        """
        from .helpers import util
        from . import settings

        def register(ctx):
            ctx.register_hook("on_session_start", util.remember)
        """,
        files={
            "helpers/__init__.py": "",
            "helpers/util.py": """
                from ..settings import PREFIX
                seen = []

                def remember(session_id):
                    seen.append(PREFIX + session_id)
            """,
            "settings.py": "PREFIX = 'session:'\n",
        },
    )
    write_config(home, enabled=["image_gen/my-gen"])

    pm = load(home)

    assert status_of(pm, "image_gen/my-gen") == ("enabled", None)
    module = sys.modules["hermes_plugins.image_gen__my_gen"]
    assert module.__file__ == str(user / "image_gen" / "my-gen" / "__init__.py")
    util = sys.modules["hermes_plugins.image_gen__my_gen.helpers.util"]
    call_hook(pm, "on_session_start", session_id="abc")
    assert util.seen == ["session:abc"]


def test_hookimpl_functions_are_registered_under_the_plugin_key(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "native",
        """
        from hermes_hooks import hookimpl

        @hookimpl
        def transform_tool_result(tool_name, result):
            return result.upper()

        @hookimpl(tryfirst=True)
        def pre_llm_call(user_message):
            return "context from native"

        def not_a_hook():
            pass
        """,
    )
    write_config(home, enabled=["native"])

    pm = load(home)

    holder = pm.get_plugin("native")
    assert isinstance(holder, PluginHooks)
    assert pm.get_name(holder) == "native"
    assert call_hook(pm, "transform_tool_result", tool_name="t", result="abc") == "ABC"
    assert call_hook(pm, "pre_llm_call", user_message="hi") == ["context from native"]
    [impl] = pm.hook.pre_llm_call.get_hookimpls()
    assert (impl.plugin_name, impl.tryfirst) == ("native", True)
    info = pm.get_plugin_info("native")
    assert info is not None
    assert info.hooks == ("pre_llm_call", "transform_tool_result")


def test_register_is_called_with_a_context_for_the_plugin(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "shim",
        """
        calls = []

        def register(ctx):
            calls.append((ctx.plugin_id, ctx.manifest.name, ctx.path))
        """,
        manifest={"name": "shim-name"},
    )
    write_config(home, enabled=["shim-name"])

    pm = load(home)

    # Keyed by its manifest name, as in Hermes; imported under that key's slug.
    module = sys.modules["hermes_plugins.shim_name"]
    assert module.calls == [("shim-name", "shim-name", user / "shim")]
    context = pm.get_context("shim-name")
    assert context is not None
    assert context.plugin_id == "shim-name"


def test_register_hook_callbacks_are_hookimpls_of_the_plugin(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "shim",
        """
        seen = []

        def register(ctx):
            ctx.register_hook("post_tool_call", lambda tool_name, **kw: seen.append(tool_name))
        """,
    )
    write_config(home, enabled=["shim"])

    pm = load(home)

    [impl] = pm.hook.post_tool_call.get_hookimpls()
    assert impl.plugin_name == "shim"
    call_hook(pm, "post_tool_call", tool_name="terminal")
    assert sys.modules["hermes_plugins.shim"].seen == ["terminal"]


def test_both_styles_in_one_plugin(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "both",
        """
        from hermes_hooks import hookimpl

        @hookimpl
        def pre_llm_call(user_message):
            return "native"

        def register(ctx):
            ctx.register_hook("pre_llm_call", lambda **kw: "shim")
        """
        + tool_code("both_tool"),
    )
    write_config(home, enabled=["both"])

    pm = load(home)

    assert sorted(call_hook(pm, "pre_llm_call", user_message="x")) == ["native", "shim"]
    assert {impl.plugin_name for impl in pm.hook.pre_llm_call.get_hookimpls()} == {"both"}
    assert len(pm.get_plugins()) == 1
    info = pm.get_plugin_info("both")
    assert info is not None
    assert (info.status, info.tools, info.hooks) == ("enabled", ("both_tool",), ("pre_llm_call",))


def test_plugin_with_neither_register_nor_hookimpl_is_an_error(home: Path, user: Path) -> None:
    write_plugin(user, "empty", "VALUE = 1\nregister = 'not callable'\n")
    write_config(home, enabled=["empty"])

    pm = load(home)

    status, error = status_of(pm, "empty")
    assert status == "error"
    assert error is not None
    assert "no register() function, no @hookimpl and nothing registered" in error
    assert "hermes_plugins.empty" not in sys.modules
    assert pm.get_plugins() == set()


# --- failures: each leaves the plugin in error, rolls back, and the next plugin loads ------------


FAILURES = {
    "import-error": ("import no_such_module_hh\n", "ModuleNotFoundError", 1),
    "import-raises": ("X = 1\nraise ValueError('bad config at import')\n", "ValueError", 2),
    "register-raises": (
        "def register(ctx):\n"
        + tool_code("doomed_tool")
        + "    ctx.register_command('doomed', lambda a: 'x')\n"
        "    ctx.register_hook('post_tool_call', lambda **kw: None)\n"
        "    raise RuntimeError('register blew up')\n",
        "RuntimeError: register blew up",
        5,
    ),
    "sys-exit": ("import sys\n\ndef register(ctx):\n    sys.exit(3)\n", "SystemExit: 3", 4),
    "syntax-error": ("def register(ctx)\n    pass\n", "SyntaxError: expected ':'", 1),
}


@pytest.mark.parametrize("kind", sorted(FAILURES))
def test_failing_plugin_is_an_error_and_the_next_one_loads(
    home: Path, user: Path, kind: str
) -> None:
    code, expected, line = FAILURES[kind]
    folder = write_plugin(user, "a-broken", code)
    write_plugin(
        user,
        "b-good",
        "from hermes_hooks import hookimpl\n\n"
        "@hookimpl\ndef pre_llm_call():\n    return 'good'\n\n"
        "def register(ctx):\n" + tool_code("good_tool"),
    )
    write_config(home, enabled=["a-broken", "b-good"])

    pm = load(home)

    status, error = status_of(pm, "a-broken")
    assert status == "error"
    assert error is not None
    assert error.startswith(expected)
    assert f"{folder / '__init__.py'}:{line}" in error
    assert "\n" not in error
    assert status_of(pm, "b-good") == ("enabled", None)
    assert plugin_names(pm.tools) == ["good_tool"]
    assert plugin_names(pm.commands) == []
    assert call_hook(pm, "pre_llm_call") == ["good"]
    assert [impl.plugin_name for impl in pm.hook.post_tool_call.get_hookimpls()] == []
    assert not pm.has_plugin("a-broken")
    assert "hermes_plugins.a_broken" not in sys.modules


def test_syntax_error_message_names_file_and_line_once(home: Path, user: Path) -> None:
    folder = write_plugin(user, "syn", "x = 1\ny = (\n")
    write_config(home, enabled=["syn"])

    _, error = status_of(load(home), "syn")

    assert error == f"SyntaxError: '(' was never closed ({folder / '__init__.py'}:2)"


def test_syntax_error_in_a_submodule_names_that_file(home: Path, user: Path) -> None:
    folder = write_plugin(
        user, "subsyn", "from . import inner\n", files={"inner.py": "ok = 1\ndef (\n"}
    )
    write_config(home, enabled=["subsyn"])

    _, error = status_of(load(home), "subsyn")

    assert error is not None
    assert error.startswith("SyntaxError")
    assert f"{folder / 'inner.py'}:2" in error
    assert not [m for m in sys.modules if m.startswith("hermes_plugins.subsyn")]


def test_sys_exit_at_import_does_not_exit_the_host(home: Path, user: Path) -> None:
    write_plugin(user, "quitter", "raise SystemExit('bye')\n")
    write_plugin(user, "survivor", "def register(ctx):\n    pass\n")
    write_config(home, enabled=["quitter", "survivor"])

    pm = load(home)

    assert status_of(pm, "quitter") == (
        "error",
        f"SystemExit: bye ({user / 'quitter' / '__init__.py'}:1)",
    )
    assert status_of(pm, "survivor") == ("enabled", None)


def test_keyboard_interrupt_is_not_swallowed(home: Path, user: Path) -> None:
    write_plugin(user, "ctrl-c", "def register(ctx):\n    raise KeyboardInterrupt\n")
    write_config(home, enabled=["ctrl-c"])
    pm = PluginManager(home)

    with pytest.raises(KeyboardInterrupt):
        pm.discover_and_load()

    assert pm.get_plugins() == set()


def test_tool_name_clash_is_an_error_naming_both_plugins(home: Path, user: Path) -> None:
    write_plugin(user, "a-owner", "def register(ctx):\n" + tool_code("shared"))
    folder = write_plugin(
        user,
        "b-clash",
        "def register(ctx):\n"
        + tool_code("clash_own")
        + "    ctx.register_command('clash-cmd', lambda a: 'x')\n"
        "    ctx.register_hook('post_tool_call', lambda **kw: None)\n" + tool_code("shared"),
    )
    write_plugin(user, "c-next", "def register(ctx):\n" + tool_code("next_tool"))
    write_config(home, enabled=["a-owner", "b-clash", "c-next"])

    pm = load(home)

    # The clashing tool is refused alone; what else the plugin registers stays.
    assert status_of(pm, "b-clash") == ("enabled", None)
    (warning,) = info(pm, "b-clash").warnings
    assert warning.startswith("tool 'shared' refused: ")
    assert "'a-owner'" in warning
    assert "'b-clash'" in warning
    assert pm.tools.owner_of("shared") == "a-owner"
    assert plugin_names(pm.tools) == ["clash_own", "next_tool", "shared"]
    assert plugin_names(pm.commands) == ["clash-cmd"]
    assert len(pm.hook.post_tool_call.get_hookimpls()) == 1
    assert status_of(pm, "c-next") == ("enabled", None)

    # Strict mode fails the plugin, pointing at the line, and removes what it had registered.
    pm.unload_all()
    with pytest.raises(PluginLoadError) as raised:
        load(home, strict=True)
    assert raised.value.key == "b-clash"
    assert f"{folder / '__init__.py'}:5" in str(raised.value)


def test_what_a_failed_plugin_registered_is_free_for_the_next(home: Path, user: Path) -> None:
    write_plugin(
        user,
        "a-fails",
        "def register(ctx):\n" + tool_code("contested") + "    raise RuntimeError('late')\n",
    )
    write_plugin(user, "b-takes", "def register(ctx):\n" + tool_code("contested"))
    write_config(home, enabled=["a-fails", "b-takes"])

    pm = load(home)

    assert status_of(pm, "a-fails")[0] == "error"
    assert status_of(pm, "b-takes") == ("enabled", None)
    assert pm.tools.owner_of("contested") == "b-takes"


def test_hookimpl_with_an_argument_the_spec_lacks_is_an_error(home: Path, user: Path) -> None:
    folder = write_plugin(
        user,
        "badarg",
        """
        from hermes_hooks import hookimpl

        def register(ctx):
            ctx.register_command("badarg-cmd", lambda a: "x")

        @hookimpl
        def pre_llm_call(user_message):
            return "fine"

        @hookimpl
        def post_tool_call(tool_name, no_such_argument):
            pass
        """,
    )
    write_plugin(user, "next", "def register(ctx):\n" + tool_code("next_tool"))
    write_config(home, enabled=["badarg", "next"])

    pm = load(home)

    status, error = status_of(pm, "badarg")
    assert status == "error"
    assert error is not None
    assert "no_such_argument" in error
    assert "post_tool_call" in error
    assert f"{folder / '__init__.py'}:11" in error
    assert "\n" not in error
    assert plugin_names(pm.commands) == []
    assert pm.hook.pre_llm_call.get_hookimpls() == []
    assert not pm.has_plugin("badarg")
    assert status_of(pm, "next") == ("enabled", None)


def test_register_hook_callback_requiring_an_unknown_argument_is_refused(
    home: Path, user: Path
) -> None:
    write_plugin(
        user,
        "needy",
        "def register(ctx):\n"
        + tool_code("needy_tool")
        + "    ctx.register_hook('post_tool_call', lambda tool_name, invented: None)\n",
    )
    write_config(home, enabled=["needy"])

    pm = load(home)

    assert status_of(pm, "needy") == ("enabled", None)
    (warning,) = info(pm, "needy").warnings
    assert "'invented'" in warning
    assert "post_tool_call" in warning
    assert plugin_names(pm.tools) == ["needy_tool"]
    assert pm.hook.post_tool_call.get_hookimpls() == []
    with pytest.raises(PluginLoadError, match="'invented'"):
        load(home, strict=True)


def test_plugin_key_taken_by_a_host_object_is_an_error_and_the_host_keeps_it(
    home: Path, user: Path
) -> None:
    write_plugin(user, "taken", "def register(ctx):\n" + tool_code("taken_tool"))
    write_config(home, enabled=["taken"])

    class HostHooks:
        @pluggy.HookimplMarker("hermes")
        def pre_llm_call(self) -> str:
            return "host"

    host = HostHooks()
    pm = PluginManager(home)
    pm.register(host, name="taken")
    pm.discover_and_load()

    status, error = status_of(pm, "taken")
    assert status == "error"
    assert error is not None
    assert "taken" in error
    assert pm.get_plugin("taken") is host
    assert call_hook(pm, "pre_llm_call") == ["host"]
    assert plugin_names(pm.tools) == []


def test_describe_failure_prefers_frames_in_the_plugin_folder(tmp_path: Path) -> None:
    def inner() -> None:
        raise ValueError("deep")

    try:
        inner()
    except ValueError as exc:
        text = describe_failure(exc, roots=[str(tmp_path)])
        here = describe_failure(exc, roots=[str(Path(__file__).parent)])

    assert text.startswith("ValueError: deep (")
    assert here.startswith("ValueError: deep (")
    assert f"{__file__}:" in here


# --- entry points from a real installed distribution ---------------------------------------------


def test_entry_point_module_with_register(home: Path, site: Path) -> None:
    write_distribution(
        site,
        "hh-ep-register",
        {"ep-register": "hh_ep_register"},
        {
            "hh_ep_register/__init__.py": """
                from . import tools

                def register(ctx):
                    ctx.register_tool("ep_tool", "ep", tools.SCHEMA, tools.handler)
                    ctx.register_hook("pre_llm_call", lambda **kw: "from ep")
            """,
            "hh_ep_register/tools.py": """
                SCHEMA = {"name": "ep_tool", "parameters": {}}

                def handler(args, **kw):
                    return "ep says hi"
            """,
        },
        summary="an entry point plugin",
    )
    write_config(home, enabled=["ep-register"])

    pm = load(home)

    info = pm.get_plugin_info("ep-register")
    assert info is not None
    assert (info.status, info.source, info.version) == ("enabled", "entrypoint", "1.0")
    assert info.description == "an entry point plugin"
    assert pm.tools.dispatch("ep_tool", {}) == "ep says hi"
    assert call_hook(pm, "pre_llm_call") == ["from ep"]
    context = pm.get_context("ep-register")
    assert context is not None
    assert context.path == site / "hh_ep_register"


def test_entry_point_module_with_only_hookimpls(home: Path, site: Path) -> None:
    write_distribution(
        site,
        "hh-ep-native",
        {"ep-native": "hh_ep_native"},
        {
            "hh_ep_native.py": """
                from hermes_hooks import hookimpl

                @hookimpl
                def transform_llm_output(response_text):
                    return response_text + "!"
            """
        },
    )
    write_config(home, enabled=["ep-native"])

    pm = load(home)

    assert status_of(pm, "ep-native") == ("enabled", None)
    assert call_hook(pm, "transform_llm_output", response_text="hi") == "hi!"
    [impl] = pm.hook.transform_llm_output.get_hookimpls()
    assert impl.plugin_name == "ep-native"


def test_entry_point_callable_register(home: Path, site: Path) -> None:
    write_distribution(
        site,
        "hh-ep-callable",
        {"ep-callable": "hh_ep_callable.setup:register"},
        {
            "hh_ep_callable/__init__.py": "",
            "hh_ep_callable/setup.py": """
                def register(ctx):
                    ctx.register_command("ep-cmd", lambda args: "done")

                def other(ctx):
                    raise AssertionError("only the named callable is called")
            """,
        },
    )
    write_config(home, enabled=["ep-callable"])

    pm = load(home)

    assert status_of(pm, "ep-callable") == ("enabled", None)
    assert pm.commands.names(owner="ep-callable") == ["ep-cmd"]


def test_entry_point_plugin_object_with_hookimpl_methods(home: Path, site: Path) -> None:
    write_distribution(
        site,
        "hh-ep-object",
        {"ep-object": "hh_ep_object:plugin"},
        {
            "hh_ep_object.py": """
                from hermes_hooks import hookimpl

                class Plugin:
                    @hookimpl
                    def pre_llm_call(self, user_message):
                        return "object says " + user_message

                plugin = Plugin()
            """
        },
    )
    write_config(home, enabled=["ep-object"])

    pm = load(home)

    assert status_of(pm, "ep-object") == ("enabled", None)
    assert call_hook(pm, "pre_llm_call", user_message="hi") == ["object says hi"]


def test_broken_entry_point_is_an_error_and_the_next_one_loads(home: Path, site: Path) -> None:
    write_distribution(
        site,
        "hh-ep-broken",
        {"ep-a-broken": "hh_ep_broken"},
        {"hh_ep_broken.py": "import os\nimport no_such_dependency_hh\n"},
    )
    write_distribution(site, "hh-ep-missing", {"ep-b-missing": "hh_ep_not_installed:register"}, {})
    write_distribution(
        site,
        "hh-ep-fine",
        {"ep-c-fine": "hh_ep_fine"},
        {"hh_ep_fine.py": "def register(ctx):\n    ctx.register_command('fine', print)\n"},
    )
    write_config(home, enabled=["ep-a-broken", "ep-b-missing", "ep-c-fine"])

    pm = load(home)

    status, error = status_of(pm, "ep-a-broken")
    assert status == "error"
    assert error is not None
    assert "No module named 'no_such_dependency_hh'" in error
    assert f"{site / 'hh_ep_broken.py'}:2" in error
    status, error = status_of(pm, "ep-b-missing")
    assert status == "error"
    assert error is not None
    assert "hh_ep_not_installed" in error
    assert status_of(pm, "ep-c-fine") == ("enabled", None)


def test_entry_point_register_failure_names_the_plugin_file(home: Path, site: Path) -> None:
    write_distribution(
        site,
        "hh-ep-raises",
        {"ep-raises": "hh_ep_raises"},
        {
            "hh_ep_raises.py": "def register(ctx):\n"
            + tool_code("ep_raises_tool")
            + "    raise RuntimeError('cannot start')\n"
        },
    )
    write_config(home, enabled=["ep-raises"])

    pm = load(home)

    status, error = status_of(pm, "ep-raises")
    assert status == "error"
    assert error is not None
    assert f"{site / 'hh_ep_raises.py'}:3" in error
    assert plugin_names(pm.tools) == []


def test_entry_point_that_is_neither_module_nor_callable_is_an_error(
    home: Path, site: Path
) -> None:
    write_distribution(
        site, "hh-ep-value", {"ep-value": "hh_ep_value:VALUE"}, {"hh_ep_value.py": "VALUE = 42\n"}
    )
    write_config(home, enabled=["ep-value"])

    status, error = status_of(load(home), "ep-value")

    assert status == "error"
    assert error is not None
    assert "int" in error


def test_entry_point_overrides_user_plugin_of_the_same_key(
    home: Path, user: Path, site: Path
) -> None:
    write_plugin(user, "dup", "def register(ctx):\n    raise AssertionError('user copy ran')\n")
    write_distribution(
        site,
        "hh-ep-dup",
        {"dup": "hh_ep_dup"},
        {"hh_ep_dup.py": "def register(ctx):\n    ctx.register_command('dup-cmd', print)\n"},
    )
    write_config(home, enabled=["dup"])

    pm = load(home)

    info = pm.get_plugin_info("dup")
    assert info is not None
    assert (info.status, info.source, info.commands) == ("enabled", "entrypoint", ("dup-cmd",))
    assert info.path is None
    assert "hermes_plugins.dup" not in sys.modules


def test_entry_points_are_opt_in_too(home: Path, site: Path) -> None:
    write_distribution(
        site,
        "hh-ep-optin",
        {"ep-optin": "hh_ep_optin"},
        {"hh_ep_optin.py": "raise AssertionError('must not be imported')\n"},
    )
    write_config(home)

    pm = load(home)

    assert status_of(pm, "ep-optin") == ("not enabled", None)
    assert "hh_ep_optin" not in sys.modules


def test_keys_sharing_a_slug_do_not_evict_each_other(home: Path, user: Path) -> None:
    for key in ("my-plugin", "my_plugin"):
        write_plugin(
            user,
            key,
            """
            from hermes_hooks import hookimpl

            @hookimpl
            def pre_llm_call():
                from . import late  # imported at call time, through sys.modules
                return late.WHO
            """,
            files={"late.py": f"WHO = {key!r}\n"},
        )
    write_config(home, enabled=["my-plugin", "my_plugin"])
    pm = load(home)

    assert sorted(call_hook(pm, "pre_llm_call")) == ["my-plugin", "my_plugin"]
    pm.unload_plugin("my-plugin")

    assert call_hook(pm, "pre_llm_call") == ["my_plugin"]
    assert status_of(pm, "my_plugin") == ("enabled", None)


def test_unloading_forgets_every_module_of_the_plugin_and_only_those(
    home: Path, user: Path
) -> None:
    for key in ("deep", "other"):
        write_plugin(
            user,
            key,
            """
            from .pkg.sub import leaf

            def register(ctx):
                def later(**kwargs):
                    from .pkg import lazy  # first imported in a hook, after loading
                    return lazy.WHO + leaf.WHO

                ctx.register_hook("pre_llm_call", later)
            """,
            files={
                "pkg/__init__.py": "",
                "pkg/sub/__init__.py": "",
                "pkg/sub/leaf.py": "WHO = '/leaf'\n",
                "pkg/lazy.py": f"WHO = {key!r}\n",
            },
        )
    write_config(home, enabled=["deep", "other"])
    pm = load(home)
    assert sorted(call_hook(pm, "pre_llm_call")) == ["deep/leaf", "other/leaf"]
    mine = {m for m in sys.modules if m.startswith("hermes_plugins.deep")}
    assert mine == {
        "hermes_plugins.deep",
        "hermes_plugins.deep.pkg",
        "hermes_plugins.deep.pkg.sub",
        "hermes_plugins.deep.pkg.sub.leaf",
        "hermes_plugins.deep.pkg.lazy",
    }

    pm.unload_plugin("deep")

    assert not [m for m in sys.modules if m.startswith("hermes_plugins.deep")]
    assert "hermes_plugins.other.pkg.lazy" in sys.modules
    assert call_hook(pm, "pre_llm_call") == ["other/leaf"]


def test_user_plugin_runs_before_a_bundled_one(home: Path, user: Path, bundled: Path) -> None:
    write_plugin(
        bundled,
        "base",
        "def register(ctx):\n    ctx.register_hook('pre_llm_call', lambda: 'bundled')\n",
        manifest={"kind": "backend"},
    )
    for key in ("a-user", "b-user"):
        write_plugin(
            user,
            key,
            f"def register(ctx):\n    ctx.register_hook('pre_llm_call', lambda: {key!r})\n",
        )
    write_config(home, enabled=["a-user", "b-user"])

    pm = load(home)

    assert call_hook(pm, "pre_llm_call") == ["b-user", "a-user", "bundled"]


def test_relative_home_still_works_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_plugin(
        Path("rel-home/plugins"),
        "lazy",
        """
        from hermes_hooks import hookimpl

        @hookimpl
        def pre_llm_call():
            from . import later
            return later.VALUE
        """,
        files={"later.py": "VALUE = 'found after chdir'\n"},
    )
    write_config(Path("rel-home"), enabled=["lazy"])
    pm = load(Path("rel-home"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    assert pm.hermes_home == tmp_path / "rel-home"
    assert call_hook(pm, "pre_llm_call") == ["found after chdir"]
    info = pm.get_plugin_info("lazy")
    assert info is not None
    assert info.path == str(tmp_path / "rel-home" / "plugins" / "lazy")


def test_register_hook_names_are_never_compiled_as_code(home: Path, user: Path) -> None:
    marker = home / "pwned"
    evil = f"x():\n    pass\nopen({str(marker)!r}, 'w').close()\ndef y"
    write_plugin(
        user,
        "odd-names",
        "def register(ctx):\n"
        "    ctx.register_hook('my-hook', lambda **kw: None)\n"
        "    ctx.register_hook('class', lambda **kw: None)\n"
        f"    ctx.register_hook({evil!r}, lambda **kw: None)\n",
    )
    write_config(home, enabled=["odd-names"])

    pm = load(home)

    assert status_of(pm, "odd-names") == ("enabled", None)
    assert not marker.exists()
    assert pm.has_hook("my-hook")
    assert pm.has_hook("class")


def test_an_alias_of_a_plugin_module_goes_when_the_plugin_unloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hermes' plugins import themselves as plugins.<key>: that second name must not keep the
    # old module alive (and importable) after the plugin unloads or reloads.
    from hermes_hooks.plugins.loading import register_alias

    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "aliased", "def register(ctx):\n    pass\n", files={"sub.py": "X = 1\n"})
    write_config(home, ["aliased"])
    pm = PluginManager(hermes_home=home)
    pm.discover_and_load()
    real = module_name_for("aliased")
    __import__(f"{real}.sub")
    sys.modules["test_alias_pkg"] = sys.modules[real]
    sys.modules["test_alias_pkg.sub"] = sys.modules[f"{real}.sub"]
    register_alias("test_alias_pkg", real)
    register_alias("test_alias_pkg.sub", f"{real}.sub")
    sys.modules["test_alias_other"] = sys.modules[real]  # not registered: left alone
    try:
        assert pm.unload_plugin("aliased")
        assert real not in sys.modules
        assert "test_alias_pkg" not in sys.modules
        assert "test_alias_pkg.sub" not in sys.modules
        assert "test_alias_other" in sys.modules
    finally:
        sys.modules.pop("test_alias_other", None)


# --- loading is bounded by plugins.load_timeout -------------------------------------------------

GATE = "hermes_load_gate"


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A module plugins wait on (``gate.release``); released, and forgotten, at tear-down."""
    lib = tmp_path / "gate-lib"
    lib.mkdir()
    (lib / f"{GATE}.py").write_text(
        "import threading\nrelease = threading.Event()\nreached = threading.Event()\nlog = []\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(lib))
    module = importlib.import_module(GATE)
    try:
        yield module
    finally:
        module.release.set()
        sys.modules.pop(GATE, None)


def _no_busy_workers() -> bool:
    _workers.shutdown_idle()
    return _workers.live_workers() == 0


def bounded_config(home: Path, enabled: list[str], seconds: float) -> None:
    write_config(home, text=f"plugins:\n  enabled: {enabled}\n  load_timeout: {seconds}\n")


def test_a_plugin_that_hangs_at_import_is_put_in_error_and_the_others_load(
    home: Path, user: Path, gate: Any
) -> None:
    folder = write_plugin(
        user,
        "a-hangs",
        f"""
        import {GATE}

        {GATE}.release.wait(30)

        def register(ctx):
            ctx.register_tool("late_tool", "t", {{}}, lambda args, **kw: "never")
        """,
    )
    write_plugin(
        user, "b-fine", "def register(ctx):\n    ctx.register_hook('pre_llm_call', lambda: 'b')\n"
    )
    bounded_config(home, ["a-hangs", "b-fine"], 0.3)

    pm = load(home)

    status, error = status_of(pm, "a-hangs")
    assert status == "error"
    assert error == (
        "did not finish loading within 0.3 s (plugins.load_timeout); "
        f"still running ({folder / '__init__.py'}:4)"
    )
    assert status_of(pm, "b-fine") == ("enabled", None)
    assert call_hook(pm, "pre_llm_call") == ["b"]
    assert "hermes_plugins.a_hangs" not in sys.modules
    gate.release.set()  # the abandoned import finishes; nothing it does comes back in
    wait_for(lambda: "late_tool" not in pm.tools.names() and _no_busy_workers())
    assert "late_tool" not in pm.tools.names()
    assert "hermes_plugins.a_hangs" not in sys.modules
    pm.unload_all()


def test_later_calls_do_not_run_as_the_load_of_a_plugin_given_up_at_import(
    home: Path, user: Path, gate: Any
) -> None:
    # The abandoned import was still "loading a-hangs" when it was given up; the calls after
    # it run in a fresh plugin-side context, which must not carry that over.
    write_plugin(user, "a-hangs", f"import {GATE}\n\n{GATE}.release.wait(30)\n")
    write_plugin(
        user,
        "b-asks",
        """
        from hermes_hooks.plugins import active


        def _who(tool_name, **kwargs):
            return {"action": "block", "message": repr(active.current_plugin())}


        def register(ctx):
            ctx.register_hook("pre_tool_call", _who)
        """,
    )
    bounded_config(home, ["a-hangs", "b-asks"], 0.3)
    pm = load(home)
    assert status_of(pm, "a-hangs")[0] == "error"
    assert Hooks(pm).pre_tool_call(tool_name="t", args={}).message == "'b-asks'"
    pm.unload_all()


def test_a_plugin_that_hangs_in_register_loses_what_it_registered_and_cannot_come_back(
    home: Path, user: Path, gate: Any
) -> None:
    write_plugin(
        user,
        "hangs",
        f"""
        import {GATE}

        def register(ctx):
            ctx.register_tool("early_tool", "t", {{}}, lambda args, **kw: "ok")
            ctx.register_hook("pre_llm_call", lambda: "early hook")
            {GATE}.reached.set()
            {GATE}.release.wait(30)
            try:
                ctx.register_tool("late_tool", "t", {{}}, lambda args, **kw: "ok")
            except Exception as exc:
                {GATE}.log.append(type(exc).__name__)
        """,
    )
    bounded_config(home, ["hangs"], 0.3)

    pm = load(home)

    status, error = status_of(pm, "hangs")
    assert status == "error"
    assert error is not None
    assert error.startswith("did not finish loading within 0.3 s (plugins.load_timeout)")
    assert plugin_names(pm.tools) == []
    assert call_hook(pm, "pre_llm_call") == []
    gate.release.set()
    wait_for(lambda: gate.log == ["RegistrationError"])
    assert plugin_names(pm.tools) == []
    assert call_hook(pm, "pre_llm_call") == []
    pm.unload_all()


SIGNALS = """
import signal

signal.signal(signal.SIGUSR1, lambda signum, frame: None)

def register(ctx):
    ctx.register_hook("pre_llm_call", lambda: "signals")
"""


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGUSR1"), reason="needs SIGUSR1")
def test_a_plugin_installing_a_signal_handler_at_import_is_told_so_in_plain_words(
    home: Path, user: Path
) -> None:
    import signal

    folder = write_plugin(user, "signals", SIGNALS)
    bounded_config(home, ["signals"], 5)
    previous = signal.getsignal(signal.SIGUSR1)
    try:
        status, error = status_of(load(home), "signals")
        assert status == "error"
        assert error == (
            "installs a signal handler while loading (ValueError: signal only works in main "
            "thread of the main interpreter), which Python allows only on the main thread, and "
            "plugins load on a worker thread so that plugins.load_timeout can bound them; leave "
            "signal handling to the host, or set plugins.load_timeout: 0 to load plugins on the "
            f"main thread, without a bound ({folder / '__init__.py'}:4)"
        )
        # What the error suggests works: with no bound it loads on this (the main) thread.
        sys.modules.pop("hermes_plugins.signals", None)
        bounded_config(home, ["signals"], 0)
        pm = load(home)
        assert status_of(pm, "signals") == ("enabled", None)
        assert call_hook(pm, "pre_llm_call") == ["signals"]
        pm.unload_all()
    finally:
        signal.signal(signal.SIGUSR1, previous)


THREAD_AND_CONTEXT = f"""
import contextvars
import threading

import {GATE}

loaded_in = contextvars.ContextVar("loaded_in", default="unset")
loaded_in.set("set at import")
{GATE}.log.append(threading.current_thread().name)


def register(ctx):
    ctx.register_hook("pre_llm_call", lambda: loaded_in.get())
"""


@pytest.mark.parametrize(("seconds", "thread"), [(10, "hermes-hooks-worker"), (0, "MainThread")])
def test_a_plugin_loads_on_a_worker_within_the_bound_and_keeps_what_it_set_in_its_context(
    home: Path, user: Path, gate: Any, seconds: float, thread: str
) -> None:
    write_plugin(user, "ctx", THREAD_AND_CONTEXT)
    bounded_config(home, ["ctx"], seconds)
    pm = load(home)
    assert gate.log == [thread]
    # A context variable set at import is there in the plugin's hooks from this host thread.
    assert call_hook(pm, "pre_llm_call") == ["set at import"]
    pm.unload_all()


def test_strict_mode_raises_a_load_timeout(home: Path, user: Path, gate: Any) -> None:
    write_plugin(user, "hangs", f"import {GATE}\n{GATE}.release.wait(30)\n")
    bounded_config(home, ["hangs"], 0.2)
    pm = PluginManager(home, strict=True)
    with pytest.raises(PluginLoadError, match=r"did not finish loading within 0\.2 s"):
        pm.discover_and_load()
    pm.unload_all()


def test_a_second_thread_asking_for_plugins_waits_for_the_load_under_way(
    home: Path, user: Path, gate: Any
) -> None:
    write_plugin(
        user,
        "slow",
        f"""
        import {GATE}

        {GATE}.reached.set()
        {GATE}.release.wait(10)

        def register(ctx):
            ctx.register_hook("pre_llm_call", lambda: "slow")
        """,
    )
    bounded_config(home, ["slow"], 30)
    pm = PluginManager(home)
    seen: list[tuple[bool, list[object]]] = []

    def second() -> None:
        pm.discover_and_load()  # the first thread's load is under way: wait for it
        seen.append((gate.release.is_set(), call_hook(pm, "pre_llm_call")))

    first = threading.Thread(target=pm.discover_and_load)
    first.start()
    assert gate.reached.wait(10)
    other = threading.Thread(target=second)
    other.start()
    time.sleep(0.2)  # let it reach discover_and_load; it must still be waiting then
    gate.release.set()
    first.join(10)
    other.join(10)
    assert seen == [(True, ["slow"])]
    pm.unload_all()


def test_an_entry_point_plugins_modules_are_evicted_on_unload_so_a_reload_reruns_them(
    home: Path, site: Path
) -> None:
    counter = site / "imports.txt"
    write_distribution(
        site,
        "hh-ep-rerun",
        {"ep-rerun": "hh_ep_rerun"},
        {
            "hh_ep_rerun/__init__.py": f"""
                from pathlib import Path

                from . import helper

                with open({str(counter)!r}, "a", encoding="utf-8") as log:
                    log.write("imported\\n")

                def register(ctx):
                    ctx.register_command("ep-rerun", lambda args: helper.VERSION)
            """,
            "hh_ep_rerun/helper.py": "VERSION = 'one'\n",
        },
    )
    write_config(home, enabled=["ep-rerun"])
    pm = load(home)
    assert pm.commands.get("ep-rerun") is not None
    (site / "hh_ep_rerun" / "helper.py").write_text("VERSION = 'second'\n", encoding="utf-8")
    pm.unload_plugin("ep-rerun")
    assert "hh_ep_rerun" not in sys.modules
    assert "hh_ep_rerun.helper" not in sys.modules
    pm.discover_and_load(force=True)
    assert counter.read_text(encoding="utf-8").splitlines() == ["imported", "imported"]
    command = pm.commands.get("ep-rerun")
    assert command is not None
    assert command.handler("") == "second"


def test_an_entry_point_naming_a_module_of_its_package_has_its_package_rerun_on_reload(
    home: Path, site: Path
) -> None:
    write_distribution(
        site,
        "hh-ep-sub",
        {"ep-sub": "hh_ep_sub.plugin:register"},
        {
            "hh_ep_sub/__init__.py": "",
            "hh_ep_sub/helper.py": "VERSION = 'one'\n",
            "hh_ep_sub/plugin.py": """
                from . import helper


                def register(ctx):
                    ctx.register_command("ep-sub", lambda raw: helper.VERSION)
            """,
        },
    )
    write_config(home, enabled=["ep-sub"])
    pm = load(home)
    # Another size: a same-size rewrite within the second would keep a written .pyc valid.
    (site / "hh_ep_sub" / "helper.py").write_text("VERSION = 'second'\n", encoding="utf-8")
    pm.unload_plugin("ep-sub")
    assert sorted(m for m in sys.modules if m.startswith("hh_ep_sub")) == []
    pm.discover_and_load(force=True)
    command = pm.commands.get("ep-sub")
    assert command is not None
    assert command.handler("") == "second"
    pm.unload_all()


def test_unloading_an_entry_point_plugin_leaves_the_hosts_modules_and_other_plugins_alone(
    home: Path, site: Path
) -> None:
    write_distribution(
        site,
        "hh-ep-app",
        {"ep-a": "hh_ep_app.plugins.a:register", "ep-b": "hh_ep_app.plugins.b:register"},
        {
            "hh_ep_app/__init__.py": "",
            "hh_ep_app/core.py": "NAME = 'app'\n",
            "hh_ep_app/plugins/__init__.py": "",
            "hh_ep_app/plugins/a.py": """
                from hh_ep_app import core


                def register(ctx):
                    ctx.register_command("ep-a", lambda raw: core.NAME)
            """,
            "hh_ep_app/plugins/b.py": """
                def register(ctx):
                    ctx.register_command("ep-b", lambda raw: "b")
            """,
        },
    )
    host = importlib.import_module("hh_ep_app.core")  # the host's own module, imported first
    write_config(home, enabled=["ep-a", "ep-b"])
    pm = load(home)
    pm.unload_plugin("ep-a")
    assert "hh_ep_app.plugins.a" not in sys.modules
    assert sys.modules["hh_ep_app.core"] is host  # the host's: loaded before the plugin
    assert "hh_ep_app.plugins.b" in sys.modules  # another loaded plugin's, and its package
    assert "hh_ep_app.plugins" in sys.modules
    pm.unload_all()
    assert sys.modules["hh_ep_app.core"] is host
    assert sorted(m for m in sys.modules if m.startswith("hh_ep_app.plugins")) == []

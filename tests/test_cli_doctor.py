"""``hermes plugins doctor``, ``hermes doctor``, ``hermes hooks`` and ``hermes tools``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import GOOD, hermes, home, invoke
from plugin_builders import user_plugin, write_config, write_plugin

from hermes_hooks.admin.introspect import list_hook_order
from hermes_hooks.plugins.manager import PluginManager

__all__ = ["home"]

BAD = """\
    from hermes_hooks import hookimpl

    @hookimpl
    def pre_tool_cal(tool_name):
        return None

    @hookimpl
    def post_tool_call(tool_name, durration_ms):
        return None

    def register(ctx):
        def on_llm(model):
            pass

        ctx.register_hook("post_llm_call", on_llm)
    """


def test_doctor_on_a_good_plugin_passes(tmp_path: Path) -> None:
    folder = write_plugin(tmp_path, "good", GOOD, manifest={"provides_hooks": ["pre_tool_call"]})
    result = hermes(tmp_path / "home", "plugins", "doctor", str(folder))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "good: ok\nChecked 1 plugin: 0 errors, 0 warnings.\n"


def test_doctor_on_a_bad_plugin_reports_each_problem_where_it_is(tmp_path: Path) -> None:
    manifest = "name: bad\nversion: '1'\nprovides_tools: [ghost]\nprovides_hook: [x]\n"
    folder = write_plugin(tmp_path, "bad", BAD, manifest=manifest)
    result = hermes(tmp_path / "home", "plugins", "doctor", str(folder), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert (report["ok"], report["errors"]) == (False, 2)
    found = {(f["check"], f["level"]): f for f in report["plugins"][0]["findings"]}
    init, yaml_file = str(folder / "__init__.py"), str(folder / "plugin.yaml")

    args = found["hookimpl-args", "error"]
    assert "'durration_ms' (did you mean 'duration_ms'?)" in args["message"]
    assert (args["file"], args["line"]) == (init, 7)
    unknown = found["unknown-hook", "error"]
    assert (
        "'pre_tool_cal', which does not exist; did you mean 'pre_tool_call'" in unknown["message"]
    )
    assert (unknown["file"], unknown["line"]) == (init, 3)
    kwargs = found["register-hook-kwargs", "warning"]
    assert "has no **kwargs" in kwargs["message"]
    assert (kwargs["file"], kwargs["line"]) == (init, 12)
    field = found["manifest", "warning"]
    assert "'provides_hook'" in field["message"]
    assert (field["file"], field["line"]) == (yaml_file, 4)


def test_doctor_reports_load_failures_env_and_undeclared_registrations(
    home: Path, tmp_path: Path
) -> None:
    broken = write_plugin(tmp_path, "broken", "x = 1\nraise ValueError('nope')\n")
    result = invoke("plugins", "doctor", str(broken))
    assert result.exit_code == 1
    assert "error: failed to load: ValueError: nope" in result.stdout
    assert f"at {broken / '__init__.py'}:2" in result.stdout

    needs = write_plugin(tmp_path, "needs", GOOD, manifest={"requires_env": ["HERMES_TEST_NOPE"]})
    data = json.loads(invoke("plugins", "doctor", str(needs), "--json").output)
    (finding,) = [f for f in data["plugins"][0]["findings"] if f["check"] == "requires-env"]
    assert finding["level"] == "warning"  # as in Hermes: it loads, and may read config instead
    assert "HERMES_TEST_NOPE" in finding["message"]
    assert data["plugins"][0]["status"] == "enabled"
    (home / ".env").write_text("HERMES_TEST_NOPE=set-in-dot-env\n")
    assert json.loads(invoke("plugins", "doctor", str(needs), "--json").output)["ok"] is True

    code = 'def register(ctx):\n    ctx.register_tool("t1", "s", {}, lambda a, **k: "")\n'
    undeclared = write_plugin(tmp_path, "undeclared", code, manifest={"provides_tools": ["t2"]})
    data = json.loads(invoke("plugins", "doctor", str(undeclared), "--json").output)
    messages = sorted(f["message"] for f in data["plugins"][0]["findings"])
    assert messages == [
        "provides_tools declares tool 't2', but the plugin does not register it",
        "registers tool 't1', which provides_tools does not declare",
    ]
    assert data["ok"] is True


def test_doctor_loads_in_a_throwaway_home_and_finds_installed_plugins(home: Path) -> None:
    code = 'def register(ctx):\n    (ctx.hermes_home / "written").write_text("x")\n'
    user_plugin(home, "writer", code)
    user_plugin(home, "fine", GOOD)
    result = invoke("plugins", "doctor")
    assert result.exit_code == 0
    assert "writer: " in result.stdout
    assert "fine: " in result.stdout
    assert "Checked 2 plugins" in result.stdout
    assert not (home / "written").exists()
    assert not (home / "config.yaml").exists()
    by_name = invoke("plugins", "doctor", "writer")
    assert by_name.stdout.startswith("writer: ")


def test_hermes_doctor_summarises_and_fails_on_load_errors(home: Path, tmp_path: Path) -> None:
    user_plugin(home, "broken", "raise RuntimeError('kaput')\n")
    user_plugin(home, "good", GOOD)
    write_config(home, ["broken", "good", "missing-one"])
    project = tmp_path / "project"
    write_plugin(project / ".hermes" / "plugins", "local", GOOD)
    empty = tmp_path / "no-bundled"
    result = hermes(home, "doctor", "--json", cwd=project, HERMES_BUNDLED_PLUGINS=str(empty))
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["facts"]["HERMES_HOME"] == str(home)
    assert report["facts"]["plugins"] == "1 enabled, 1 error"
    checks = {(f["check"], f["level"]) for f in report["findings"]}
    assert checks == {("plugin", "error"), ("config", "warning"), ("project", "warning")}
    text = hermes(home, "doctor", cwd=project, HERMES_BUNDLED_PLUGINS=str(empty)).stdout
    assert "plugin 'broken': RuntimeError: kaput" in text
    assert "plugins.enabled lists 'missing-one', which is not installed or bundled" in text
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in text
    assert text.endswith("1 error, 2 warnings.\n")


def test_hermes_doctor_on_a_clean_home(home: Path) -> None:
    result = invoke("doctor")
    assert result.exit_code == 0
    assert "hermes-hooks:" in result.stdout
    assert result.stdout.endswith("0 errors, 0 warnings.\n")


HANGS_AT_IMPORT = """\
    import time

    time.sleep(3600)  # a plugin that never finishes loading
    """


def test_neither_doctor_waits_for_a_plugin_that_hangs_while_loading(tmp_path: Path) -> None:
    # A real process that would never exit if either waited: hermes() gives it 60 s.
    home = tmp_path / "home"
    hung = user_plugin(home, "hung", HANGS_AT_IMPORT)
    user_plugin(home, "fine", GOOD)
    (home / "config.yaml").write_text(
        "plugins:\n  enabled: [hung, fine]\n  load_timeout: 0.5\n", encoding="utf-8"
    )
    expected = "did not finish loading within 0.5 s (plugins.load_timeout); still running"

    environment = hermes(home, "doctor", "--json")
    assert environment.returncode == 1
    report = json.loads(environment.stdout)
    [error] = [f for f in report["findings"] if f["level"] == "error"]
    assert error["message"].startswith(f"plugin 'hung': {expected}")
    assert str(hung / "__init__.py") in error["message"]
    assert "1 error" in report["facts"]["plugins"]  # the one that hangs; "fine" loaded

    checked = hermes(home, "plugins", "doctor", "hung")
    assert checked.returncode == 1
    assert f"error: failed to load: {expected}" in checked.stdout
    assert f"at {hung / '__init__.py'}:3" in checked.stdout


ORDER = {
    "a-plain": """\
        from hermes_hooks import hookimpl

        @hookimpl
        def pre_llm_call(session_id):
            CALLS.append("a-plain")

        CALLS = __import__("builtins").__dict__.setdefault("HERMES_TEST_CALLS", [])
        """,
    "b-first": """\
        from hermes_hooks import hookimpl

        @hookimpl(tryfirst=True)
        def pre_llm_call(session_id):
            CALLS.append("b-first")

        CALLS = __import__("builtins").__dict__.setdefault("HERMES_TEST_CALLS", [])
        """,
    "c-last": """\
        from hermes_hooks import hookimpl

        @hookimpl(trylast=True)
        def pre_llm_call(session_id):
            CALLS.append("c-last")

        CALLS = __import__("builtins").__dict__.setdefault("HERMES_TEST_CALLS", [])
        """,
    "d-wrap": """\
        from hermes_hooks import hookimpl

        @hookimpl(wrapper=True)
        def pre_llm_call(session_id):
            CALLS.append("d-wrap")
            return (yield)

        CALLS = __import__("builtins").__dict__.setdefault("HERMES_TEST_CALLS", [])
        """,
    "e-shim": """\
        CALLS = __import__("builtins").__dict__.setdefault("HERMES_TEST_CALLS", [])

        def register(ctx):
            def on_pre_llm(**kwargs):
                CALLS.append("e-shim")

            ctx.register_hook("pre_llm_call", on_pre_llm)
        """,
}


def test_hooks_lists_implementations_in_the_order_they_run(home: Path) -> None:
    for key, code in ORDER.items():
        user_plugin(home, key, code)
    write_config(home, ORDER)
    data = json.loads(invoke("hooks", "pre_llm_call", "--json").output)
    (hook,) = data
    listed = [impl["plugin"] for impl in hook["impls"]]
    assert listed == ["d-wrap", "b-first", "e-shim", "a-plain", "c-last"]
    first = hook["impls"][0]
    assert (first["wrapper"], first["position"], first["function"]) == (
        True,
        1,
        "hermes_plugins.d_wrap:pre_llm_call",
    )
    shim = hook["impls"][2]
    assert shim["via_register_hook"] is True
    assert shim["function"] == "hermes_plugins.e_shim:register.<locals>.on_pre_llm"
    assert shim["line"] == 4
    assert (hook["mode"], hook["policy"]) == ("collect", "open")

    # The listed order is the order a real call enters them.
    import builtins

    calls: list[str] = builtins.__dict__.setdefault("HERMES_TEST_CALLS", [])
    calls.clear()
    pm = PluginManager(home)
    pm.discover_and_load()
    pm.invoke_hook("pre_llm_call", session_id="s")
    assert calls == listed
    assert [i.plugin for i in list_hook_order(pm, "pre_llm_call")[0].impls] == listed
    del builtins.__dict__["HERMES_TEST_CALLS"]

    text = invoke("hooks").output.splitlines()
    assert text[0] == "pre_llm_call (collect, fails open)"
    assert text[1].split() == ["#", "PLUGIN", "OPTIONS", "FUNCTION"]
    assert text[2].split()[:3] == ["1", "d-wrap", "wrapper"]
    assert text[4].split()[:3] == ["3", "e-shim", "register_hook"]


def test_hooks_with_an_unknown_name_suggests_the_closest(home: Path) -> None:
    result = invoke("hooks", "pre_tool_cal")
    assert result.exit_code == 1
    assert "Unknown hook 'pre_tool_cal'; did you mean 'pre_tool_call'" in result.stderr
    empty = invoke("hooks", "pre_tool_call")
    assert empty.output == "pre_tool_call (collect, fails closed)\n  (no implementations)\n"


def test_tools_lists_owner_and_availability(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_TEST_KEY", raising=False)
    code = """\
        def register(ctx):
            ctx.register_tool("echo", "demo", {}, lambda a, **k: "e")
            ctx.register_tool("keyed", "demo", {}, lambda a, **k: "k",
                              requires_env=["HERMES_TEST_KEY"])
        """
    user_plugin(home, "toolbox", code)
    write_config(home, ["toolbox"])
    tools = {t["name"]: t for t in json.loads(invoke("tools", "--json").output)}
    assert tools["echo"] == {
        "name": "echo",
        "toolset": "demo",
        "owner": "toolbox",
        "available": True,
        "reason": None,
        "description": "",
    }
    assert tools["keyed"]["available"] is False
    assert "HERMES_TEST_KEY" in tools["keyed"]["reason"]
    text = invoke("tools").output.splitlines()
    assert text[0].split() == ["NAME", "TOOLSET", "OWNER", "AVAILABLE"]
    assert any(line.split()[:4] == ["echo", "demo", "toolbox", "yes"] for line in text)


def test_doctor_reports_host_tool_clashes_and_override_requests(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_PLUGINS_STRICT", "1")  # the trial reports, it does not raise
    # A handler that takes **kwargs: one like print() would be reported as well (tool-handler).
    clash = (
        'def register(ctx):\n    ctx.register_tool("image_generate", "x", {}, '
        "lambda args, **kw: 'x')\n"
    )
    folder = write_plugin(tmp_path, "clash", clash)
    data = json.loads(invoke("plugins", "doctor", str(folder), "--json").output)
    (finding,) = data["plugins"][0]["findings"]
    assert finding["check"] == "load"
    assert "'image_generate', which is a host tool" in finding["message"]

    asks = clash.replace("'x')", "'x', override=True)")
    folder = write_plugin(tmp_path, "asks", asks)
    data = json.loads(invoke("plugins", "doctor", str(folder), "--json").output)
    checks = [f["check"] for f in data["plugins"][0]["findings"]]
    assert "tool-override" in checks
    assert data["ok"] is True


# --- Hermes plugins: hooks:, compat names, pip packages -----------------------------------------

HERMES_SHAPED = """\
    from agent.image_gen_provider import ImageGenProvider, save_url_image, save_thumbnail
    from tools.registry import tool_result
    from plugins.shaped.helpers import CLIENT

    try:
        from agent.usage_pricing import estimate_cost  # guarded: the plugin still loads
    except ImportError:
        estimate_cost = None


    def on_end(session_id="", **_):
        return None


    def register(ctx):
        ctx.register_hook("on_session_end", on_end)
    """


def test_doctor_reads_hooks_as_the_short_form_of_provides_hooks(tmp_path: Path) -> None:
    code = 'def register(ctx):\n    ctx.register_hook("on_session_end", lambda **kw: None)\n'
    folder = write_plugin(tmp_path, "observer", code, manifest={"hooks": ["on_session_end"]})
    result = hermes(tmp_path / "home", "plugins", "doctor", str(folder))
    assert result.stdout == "observer: ok\nChecked 1 plugin: 0 errors, 0 warnings.\n"
    folder = write_plugin(tmp_path, "liar", code, manifest={"hooks": ["pre_llm_call"]})
    result = hermes(tmp_path / "home", "plugins", "doctor", str(folder), "--json")
    messages = [f["message"] for f in json.loads(result.stdout)["plugins"][0]["findings"]]
    assert "hooks declares hook 'pre_llm_call', but the plugin does not register it" in messages
    assert "registers hook 'on_session_end', which hooks does not declare" in messages


def test_doctor_says_which_hermes_modules_a_plugin_imports(tmp_path: Path) -> None:
    folder = write_plugin(
        tmp_path,
        "shaped",
        HERMES_SHAPED,
        manifest={"hooks": ["on_session_end"]},
        files={"helpers.py": "from utils import env_bool\nCLIENT = env_bool('X')\n"},
    )
    result = hermes(tmp_path / "home", "plugins", "doctor", str(folder), "--json")
    report = json.loads(result.stdout)["plugins"][0]
    by_level: dict[str, list[dict[str, Any]]] = {}
    for finding in report["findings"]:
        by_level.setdefault(finding["level"], []).append(finding)
    init = str(folder / "__init__.py")
    served, selves = by_level["info"]
    assert served["message"] == (
        "imports Hermes modules served by hermes-hooks: agent.image_gen_provider "
        "(ImageGenProvider, save_url_image, save_thumbnail), tools.registry (tool_result), "
        "utils (env_bool)"
    )
    assert (served["file"], served["line"]) == (init, 1)
    assert selves["message"].startswith(
        "imports plugins by Hermes' package path: plugins.shaped.helpers"
    )
    warnings = {f["message"]: (f["file"], f["line"]) for f in by_level["warning"]}
    assert warnings == {
        "imports save_thumbnail from agent.image_gen_provider, which hermes-hooks does not "
        "provide (see docs/reference/compat.md for what it does)": (init, 1),
        "imports agent.usage_pricing, a Hermes module hermes-hooks does not serve: the plugin "
        "stops there with ModuleNotFoundError unless the import is guarded (see "
        "docs/reference/compat.md)": (init, 6),
    }
    # save_thumbnail does not exist: the load fails, at the line that imports it.
    assert [f["check"] for f in by_level["error"]] == ["load"]
    assert "cannot import name 'save_thumbnail'" in by_level["error"][0]["message"]
    # Served imports alone are information: the plugin is ok.
    code = "from tools.registry import tool_result\n\ndef register(ctx):\n    pass\n"
    folder = write_plugin(tmp_path, "served-only", code)
    result = hermes(tmp_path / "home", "plugins", "doctor", str(folder))
    assert (result.returncode, result.stdout) == (
        0,
        "served-only: ok\n"
        "  info: imports Hermes modules served by hermes-hooks: tools.registry (tool_result)\n"
        f"    at {folder / '__init__.py'}:1\n"
        "Checked 1 plugin: 0 errors, 0 warnings.\n",
    ), result.stderr


def test_a_plugin_yaml_inside_a_pip_package_is_read_for_its_provides_fields(
    tmp_path: Path,
) -> None:
    from plugin_builders import write_distribution

    site = tmp_path / "site"
    write_distribution(
        site,
        "hermes-observer",
        {"observer": "hermes_observer"},
        {
            "hermes_observer/__init__.py": (
                "def register(ctx):\n    ctx.register_hook('on_session_end', lambda **kw: None)\n"
            ),
            "hermes_observer/plugin.yaml": "name: observer\nhooks: [on_session_end]\n",
        },
    )
    result = hermes(tmp_path / "home", "plugins", "doctor", "observer", PYTHONPATH=str(site))
    assert result.stdout == "observer: ok\nChecked 1 plugin: 0 errors, 0 warnings.\n", result.stderr

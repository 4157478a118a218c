"""The fixtures of ``hermes_hooks.testing``, used here as a plugin author uses them.

How they fail inside someone else's test run (the messages, the outcomes) is in
``test_testing_pytester.py``; the scripted model on its own in ``test_testing_scripted.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from plugin_builders import write_distribution

from hermes_hooks import Hooks, hookimpl
from hermes_hooks.backends.models import ModelError
from hermes_hooks.calling.guards import is_guarded
from hermes_hooks.errors import PluginLoadError
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.testing import (
    CliOutcome,
    HermesHome,
    HookRecorder,
    ScriptedSession,
    ScriptedToolCall,
    ScriptMismatchError,
    tool_call,
)
from hermes_hooks.testing.recorder import PROBE_NAME

pytest_plugins = ["hermes_hooks.testing"]

PluginDir = Callable[..., Path]

BLOCKER = """
from hermes_hooks import hookimpl

@hookimpl
def pre_tool_call(tool_name, args):
    if "rm " in args.get("command", ""):
        return {"action": "block", "message": "no rm"}
    return None
"""

SHOUT = """
def register(ctx):
    ctx.register_hook("transform_llm_output", lambda response_text: response_text.upper())
"""

# -- hermes_home ---------------------------------------------------------------------------------


@pytest.fixture
def outer_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What a developer's shell might have set before the test starts."""
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "real-home"))
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    monkeypatch.setenv("HERMES_SOMETHING_NEW", "x")


def test_hermes_home_is_fresh_and_nothing_hermes_leaks_in(
    outer_environment: None, hermes_home: HermesHome, tmp_path: Path
) -> None:
    hermes = {k: v for k, v in os.environ.items() if k.startswith("HERMES_")}
    assert hermes == {
        "HERMES_HOME": str(hermes_home.path),
        "HERMES_BUNDLED_PLUGINS": str(tmp_path / "hermes-no-bundled-plugins"),
    }
    assert list((tmp_path / "hermes-no-bundled-plugins").iterdir()) == []
    assert hermes_home.path.is_relative_to(tmp_path)
    assert hermes_home.config == {}
    assert (hermes_home / "config.yaml").is_file()
    assert os.fspath(hermes_home) == str(hermes_home) == str(hermes_home.path)
    assert hermes_home.plugins_dir.is_dir()
    assert hermes_home.workdir.is_dir()


def test_hermes_home_config_helpers(hermes_home: HermesHome) -> None:
    hermes_home.enable("a", "b")
    hermes_home.disable("b")
    hermes_home.configure_plugin("a", settings={"level": 2}, allow_tool_override=True)
    assert hermes_home.config == {
        "plugins": {
            "enabled": ["a"],
            "disabled": ["b"],
            "entries": {"a": {"settings": {"level": 2}, "allow_tool_override": True}},
        }
    }
    hermes_home.write_config({"model": {"provider": "offline"}})
    assert hermes_home.config == {"model": {"provider": "offline"}}


# -- hermes_plugin_dir ---------------------------------------------------------------------------


def test_a_plugin_from_a_string_is_enabled_and_loads(
    hermes_plugin_dir: PluginDir, hermes_pm: PluginManager
) -> None:
    folder = hermes_plugin_dir("blocker", BLOCKER)
    assert folder == Path(os.environ["HERMES_HOME"]) / "plugins" / "blocker"
    info = hermes_pm.get_plugin_info("blocker")
    assert info is not None
    assert (info.status, info.version, info.hooks) == ("enabled", "0.1.0", ("pre_tool_call",))


def test_a_plugin_from_a_dict_of_files(
    hermes_plugin_dir: PluginDir, hermes_pm: PluginManager
) -> None:
    hermes_plugin_dir(
        "image_gen/fancy",
        {
            "plugin.yaml": "name: fancy\nversion: 2.0.0\ndescription: from a dict\n",
            "__init__.py": "from .rules import register\n",
            "rules.py": """
                def register(ctx):
                    ctx.register_hook("on_session_start", lambda session_id: None)
            """,
        },
    )
    info = hermes_pm.get_plugin_info("image_gen/fancy")
    assert info is not None
    assert (info.status, info.name, info.version) == ("enabled", "fancy", "2.0.0")


def test_a_plugin_folder_is_copied_under_its_manifest_name(
    hermes_plugin_dir: PluginDir, hermes_home: HermesHome, tmp_path: Path
) -> None:
    source = tmp_path / "src" / "my_plugin"
    (source / "__pycache__").mkdir(parents=True)
    (source / "__pycache__" / "stale.pyc").write_bytes(b"")
    (source / "plugin.yaml").write_text("name: my-plugin\nversion: 1.0.0\n")
    (source / "__init__.py").write_text(SHOUT)
    folder = hermes_plugin_dir(source, manifest={"description": "added"})
    assert folder == hermes_home.plugins_dir / "my-plugin"
    assert sorted(p.name for p in folder.iterdir()) == ["__init__.py", "plugin.yaml"]
    assert "description: added" in (folder / "plugin.yaml").read_text()
    assert "name: my-plugin" in (folder / "plugin.yaml").read_text()
    assert hermes_home.config == {"plugins": {"enabled": ["my-plugin"]}}
    with pytest.raises(FileExistsError, match="'my-plugin' exists already"):
        hermes_plugin_dir(source)
    with pytest.raises(FileNotFoundError, match="no plugin folder to copy"):
        hermes_plugin_dir(tmp_path / "nowhere")


def test_a_plugin_written_disabled_is_discovered_not_loaded(
    hermes_pm: PluginManager, hermes_plugin_dir: PluginDir, hermes_home: HermesHome
) -> None:
    hermes_plugin_dir("blocker", BLOCKER, enabled=False)
    info = hermes_pm.get_plugin_info("blocker")
    assert info is not None
    assert info.status == "not enabled"
    hermes_home.enable("blocker")  # the manager built before is reloaded
    info = hermes_pm.get_plugin_info("blocker")
    assert info is not None
    assert info.status == "enabled"


# -- hermes_pm -----------------------------------------------------------------------------------


def test_hermes_pm_has_the_host_tools_and_is_strict(
    hermes_pm: PluginManager, hermes_plugin_dir: PluginDir
) -> None:
    assert {"terminal", "read_file", "delegate_task"} <= set(hermes_pm.tools.names())
    assert hermes_pm.strict
    with pytest.raises(PluginLoadError, match=r"'broken'.*ZeroDivisionError"):
        hermes_plugin_dir("broken", "1 / 0\n")


@pytest.mark.hermes(strict=False)
def test_strict_false_isolates_failures_as_a_host_does(
    hermes_plugin_dir: PluginDir, hermes_pm: PluginManager
) -> None:
    hermes_plugin_dir("broken", "1 / 0\n")
    info = hermes_pm.get_plugin_info("broken")
    assert info is not None
    assert info.status == "error"
    assert "ZeroDivisionError" in (info.error or "")


@pytest.mark.hermes(allow_unknown_hooks=True)
def test_unknown_hooks_may_be_allowed(
    hermes_plugin_dir: PluginDir, hermes_pm: PluginManager
) -> None:
    hermes_plugin_dir("newer", "def register(ctx):\n    ctx.register_hook('pre_tool_cal', print)\n")
    info = hermes_pm.get_plugin_info("newer")
    assert info is not None
    assert info.status == "enabled"
    assert "did you mean 'pre_tool_call'" in info.warnings[0]


@pytest.mark.hermes(bundled=True)
def test_bundled_plugins_when_asked(hermes_home: HermesHome, hermes_pm: PluginManager) -> None:
    assert "HERMES_BUNDLED_PLUGINS" not in os.environ
    keys = {info.key: info.status for info in hermes_pm.list_plugins()}
    assert keys["command-guard"] == "not enabled"
    hermes_home.enable("command-guard")
    info = hermes_pm.get_plugin_info("command-guard")
    assert info is not None
    assert info.status == "enabled"


def test_bundled_plugins_are_hidden_by_default(hermes_pm: PluginManager) -> None:
    assert hermes_pm.list_plugins() == []


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A pip-installed plugin ``installed`` (an entry point), on ``sys.path`` for this test."""
    site = tmp_path / "site-packages"
    write_distribution(
        site,
        "hermes-installed",
        {"installed": "installed_plugin"},
        {"installed_plugin/__init__.py": SHOUT},
    )
    monkeypatch.syspath_prepend(str(site))
    yield
    sys.modules.pop("installed_plugin", None)


def test_pip_installed_plugins_are_left_out(
    installed_plugin: None, hermes_home: HermesHome, hermes_pm: PluginManager
) -> None:
    hermes_home.enable("installed")
    assert hermes_pm.get_plugin_info("installed") is None


@pytest.mark.hermes(entry_points=True)
def test_pip_installed_plugins_when_asked(
    installed_plugin: None, hermes_home: HermesHome, hermes_pm: PluginManager
) -> None:
    hermes_home.enable("installed")
    info = hermes_pm.get_plugin_info("installed")
    assert info is not None
    assert (info.source, info.status) == ("entrypoint", "enabled")


def test_a_misspelled_marker_option_is_a_usage_error(request: pytest.FixtureRequest) -> None:
    from hermes_hooks.testing import _options

    request.node.add_marker(pytest.mark.hermes(bundle=True))
    with pytest.raises(pytest.UsageError, match="no option 'bundle'; did you mean 'bundled'"):
        _options(request)


# -- hermes_hook_recorder ------------------------------------------------------------------------


class TwoPlugins:
    """Register two plain plugins on the manager, the later one running first."""

    def __init__(self, pm: PluginManager) -> None:
        self.pm = pm

    def add(self, name: str, **hooks: Callable[..., Any]) -> None:
        holder = type(name, (), {})()
        for hook, function in hooks.items():
            setattr(holder, hook, hookimpl(specname=hook)(function))
        self.pm.register(holder, name=name)


def test_the_recorder_keeps_arguments_each_result_and_the_combined_result(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    plugins = TwoPlugins(hermes_pm)
    plugins.add("first", pre_tool_call=lambda tool_name: {"action": "approve"})
    plugins.add("second", pre_tool_call=lambda args: {"action": "modify", "args": {"x": 1}})
    plugins.add("quiet", pre_tool_call=lambda: None)
    args = {"command": "ls"}
    hermes_pm.invoke_hook("pre_tool_call", tool_name="terminal", args=args)
    args["command"] = "changed afterwards"
    call = hermes_hook_recorder.last("pre_tool_call")
    assert call["args"] == {"command": "ls"}
    assert call["tool_name"] == "terminal"
    assert call.plugins == ["quiet", "second", "first"]
    assert call.result_of("first") == {"action": "approve"}
    assert call.result_of("quiet") is None
    assert call.result == [{"action": "modify", "args": {"x": 1}}, {"action": "approve"}]
    with pytest.raises(KeyError, match="'nobody' did not run"):
        call.result_of("nobody")


def test_first_result_hooks_record_the_implementations_that_ran(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    plugins = TwoPlugins(hermes_pm)
    plugins.add("late", transform_tool_result=lambda result: "late")
    plugins.add("early", transform_tool_result=lambda result: "early")
    answer = Hooks(hermes_pm).transform_tool_result(tool_name="t", args={}, result="raw")
    call = hermes_hook_recorder.last("transform_tool_result")
    assert answer == call.result == "early"
    assert call.plugins == ["early"]


def test_facade_calls_are_recorded_once_per_implementation(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    TwoPlugins(hermes_pm).add("blocker", pre_tool_call=lambda: {"action": "block", "message": "m"})
    hooks = Hooks(hermes_pm)
    for _ in range(2):  # the second call reuses the facade's cached recording copies
        assert hooks.pre_tool_call(tool_name="t", args={}).plugin == "blocker"
    calls = hermes_hook_recorder.calls("pre_tool_call")
    assert [c.plugins for c in calls] == [["blocker"], ["blocker"]]


def test_any_set_of_recorded_calls_answers_since_as_the_recorder_does(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    TwoPlugins(hermes_pm).add("blocker", pre_tool_call=lambda: {"action": "block", "message": "m"})
    hooks = Hooks(hermes_pm)
    hooks.pre_tool_call(tool_name="first", args={})
    mark = len(hermes_hook_recorder)
    hooks.pre_tool_call(tool_name="second", args={})
    later = hermes_hook_recorder.since(mark)
    assert [c["tool_name"] for c in later.calls("pre_tool_call")] == ["second"]
    # A turn's view (a HookCalls) answers it too, counted from its own start.
    assert later.since(0).names() == later.names()
    assert [c["tool_name"] for c in hermes_hook_recorder.since(0).since(mark)] == ["second"]


def test_wrappers_change_the_combined_result_but_are_not_implementation_results(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    def shout() -> Iterator[None]:
        text = yield
        return str(text).upper() if text else text

    holder = type("wrapping", (), {})()
    holder.transform_llm_output = hookimpl(wrapper=True)(shout)
    hermes_pm.register(holder, name="wrapping")
    TwoPlugins(hermes_pm).add("plain", transform_llm_output=lambda response_text: "hi")
    Hooks(hermes_pm).transform_llm_output(response_text="x")
    call = hermes_hook_recorder.last("transform_llm_output")
    assert (call.plugins, call.result) == (["plain"], "HI")


def test_hooks_nobody_implements_are_recorded_in_order(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    hooks = Hooks(hermes_pm)
    hooks.on_session_start(session_id="s")
    hooks.on_session_end(session_id="s")
    assert hermes_hook_recorder.names() == ["on_session_start", "on_session_end"]
    assert hermes_hook_recorder.last("on_session_start").plugins == []
    hermes_hook_recorder.clear()
    assert len(hermes_hook_recorder) == 0


def test_assert_called_says_which_argument_differed(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    hermes_pm.invoke_hook("post_tool_call", tool_name="terminal", status="ok")
    hermes_pm.invoke_hook("post_tool_call", tool_name="read_file", status="error")
    found = hermes_hook_recorder.assert_called("post_tool_call", status="error")
    assert found["tool_name"] == "read_file"
    message = (
        "post_tool_call was called 2 times, never with tool_name='terminal', status='error':\n"
        "  #1: tool_name='terminal', status='ok' (expected 'error')\n"
        "  #2: tool_name='read_file' (expected 'terminal'), status='error'"
    )
    with pytest.raises(AssertionError) as failed:
        hermes_hook_recorder.assert_called("post_tool_call", tool_name="terminal", status="error")
    assert str(failed.value) == message
    with pytest.raises(
        AssertionError, match=r"pre_tool_call was not called; the hooks called were: post_tool_call"
    ):
        hermes_hook_recorder.assert_called("pre_tool_call")
    with pytest.raises(
        AssertionError,
        match=r"post_tool_call has no argument 'tool'; its arguments are tool_name, args,",
    ):
        hermes_hook_recorder.assert_called("post_tool_call", tool="terminal")
    with pytest.raises(
        AssertionError,
        match=r"'post_tool_cal' is not a hook of this manager; did you mean 'post_tool_call'",
    ):
        hermes_hook_recorder.calls("post_tool_cal")
    with pytest.raises(
        AssertionError,
        match=r"^post_tool_call was called 2 times:\n  #1: post_tool_call\(tool_name='terminal', ",
    ):
        hermes_hook_recorder.assert_not_called("post_tool_call")
    with pytest.raises(AssertionError, match="on_session_start was not called"):
        hermes_hook_recorder.last("on_session_start")
    hermes_hook_recorder.assert_not_called("on_session_start")


def test_a_raising_implementation_is_recorded_with_its_error(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    TwoPlugins(hermes_pm).add("boom", post_llm_call=lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        hermes_pm.invoke_hook("post_llm_call")
    call = hermes_hook_recorder.last("post_llm_call")
    assert isinstance(call.error, ZeroDivisionError)
    assert call.impl_results[0].plugin == "boom"
    assert call.impl_results[0].error is call.error


def test_closing_the_recorder_leaves_the_manager_as_it_was(hermes_pm: PluginManager) -> None:
    TwoPlugins(hermes_pm).add("quiet", pre_llm_call=lambda: None)
    (impl,) = hermes_pm.hook.pre_llm_call.get_hookimpls()
    guard = impl.function
    recorder = HookRecorder(hermes_pm)
    hermes_pm.invoke_hook("pre_llm_call")
    assert hermes_pm.get_plugin(PROBE_NAME) is not None
    assert impl.function is not guard
    assert is_guarded(impl.function)  # what isolation reads survives the recording wrapper
    recorder.close()
    assert impl.function is guard
    assert hermes_pm.get_plugin(PROBE_NAME) is None
    hermes_pm.invoke_hook("pre_llm_call")
    assert recorder.names() == ["pre_llm_call"]


def test_two_recorders_on_one_manager_both_record(
    hermes_pm: PluginManager, hermes_hook_recorder: HookRecorder
) -> None:
    TwoPlugins(hermes_pm).add("shout", transform_llm_output=lambda response_text: "HI")
    second = HookRecorder(hermes_pm)
    try:
        Hooks(hermes_pm).transform_llm_output(response_text="hi")
    finally:
        second.close()
    for recorder in (hermes_hook_recorder, second):
        assert [(c.name, c.plugins, c.result) for c in recorder] == [
            ("transform_llm_output", ["shout"], "HI")
        ]
    assert hermes_pm.get_plugin(PROBE_NAME) is not None  # the first one's, still recording


# -- hermes_session ------------------------------------------------------------------------------


def test_a_scripted_turn_fires_every_hook_in_the_host_order(
    hermes_session: ScriptedSession,
) -> None:
    from host_helpers import ONE_TOOL_TURN

    result = hermes_session.run(
        "say hi", script=[tool_call("terminal", command="echo hi"), "It said hi."]
    )
    assert result.hook_names == ONE_TOOL_TURN
    assert result.text == "It said hi."
    assert result.tool_results == ['{"output": "hi\\n", "exit_code": 0}']
    # The host's tools, then the builtin memory provider's (see test_memory.py).
    tools = (
        "delegate_task",
        "patch",
        "read_file",
        "search_files",
        "terminal",
        "write_file",
        "memory",
    )
    assert [r.tools for r in result.requests] == [tools] * 2
    assert result.requests[1].last_message["role"] == "tool"
    assert result.recorder.names() == ONE_TOOL_TURN


def test_each_run_has_its_own_hooks_and_requests(
    hermes_plugin_dir: PluginDir, hermes_session: ScriptedSession
) -> None:
    hermes_plugin_dir("shout", SHOUT)
    hermes_session.run("one", script="first")
    second = hermes_session.run("two", script=["second"])
    assert second.text == "SECOND"
    assert second.hook_names[0] == "pre_llm_call"  # on_session_start was the first turn's
    assert [r.last_text for r in second.requests] == ["two"]
    assert len(second.recorder.calls("pre_llm_call")) == 2


def test_parallel_calls_callables_and_retried_errors(
    hermes_plugin_dir: PluginDir, hermes_home: HermesHome, hermes_session: ScriptedSession
) -> None:
    hermes_plugin_dir("blocker", BLOCKER)
    (hermes_home.workdir / "notes.txt").write_text("hello")
    result = hermes_session.run(
        "tidy up",
        script=[
            ModelError("overloaded", retryable=True, reason="server_error"),
            [tool_call("read_file", path="notes.txt"), tool_call("terminal", command="rm x")],
            lambda request: (
                f"{len(request.messages)} messages, last from {request.last_message['role']}"
            ),
        ],
    )
    assert [c.status for c in result.tool_calls] == ["ok", "blocked"]
    assert "hello" in result.tool_results[0]
    assert result.text == "5 messages, last from tool"
    result.hooks.assert_called("api_request_error", retry_count=0, reason="server_error")
    assert [c["retry_count"] for c in result.hooks.calls("pre_api_request")] == [0, 1, 0]


def test_unreached_steps_fail_the_run(hermes_session: ScriptedSession) -> None:
    with pytest.raises(ScriptMismatchError) as failed:
        hermes_session.run("hi", script=["hello", tool_call("terminal", command="ls")])
    assert str(failed.value) == (
        "1 of the 2 scripted steps was never reached: the model was asked 1 time "
        "(the turn ended: text_response(stop))\n"
        "  step 1: answer 'hello'  → request 1, after the user message 'hi'\n"
        "- step 2: tool_call('terminal', command='ls')  → never reached"
    )


def test_a_request_past_the_script_fails_the_run(hermes_session: ScriptedSession) -> None:
    with pytest.raises(ScriptMismatchError) as failed:
        hermes_session.run("hi", script=[tool_call("terminal", command="echo x")])
    assert str(failed.value) == (
        "the model was asked 2 times, but the script has 1 step "
        "(the turn ended: api_error(script_exhausted))\n"
        "  step 1: tool_call('terminal', command='echo x')  → request 1, after the user "
        "message 'hi'\n"
        '+ request 2, after the tool message \'{"output": "x\\\\n", "exit_code": 0}\'  → '
        "not scripted"
    )


def test_a_hook_error_is_raised_from_run_even_when_the_host_carried_on(
    hermes_plugin_dir: PluginDir, hermes_session: ScriptedSession
) -> None:
    hermes_plugin_dir(
        "boom", "def register(ctx):\n    ctx.register_hook('post_tool_call', lambda: 1 / 0)\n"
    )
    with pytest.raises(ZeroDivisionError) as raised:
        hermes_session.run("hi", script=[tool_call("terminal", command="echo"), "done"])
    assert raised.value.__notes__ == [
        "raised by plugin 'boom' in hook 'post_tool_call'",
        "during hermes_session.run('hi'); the host ended the turn with 'error'",
    ]


def test_approvals_go_to_the_approver_that_is_set(
    hermes_plugin_dir: PluginDir, hermes_session: ScriptedSession
) -> None:
    hermes_plugin_dir(
        "asker",
        "def register(ctx):\n"
        "    ctx.register_hook('pre_tool_call', lambda: {'action': 'approve', 'message': 'ok?'})\n",
    )
    script: list[ScriptedToolCall | str] = [tool_call("terminal", command="echo yes"), "done"]
    assert hermes_session.run("a", script=script).tool_calls[0].status == "blocked"
    hermes_session.approver = lambda request: "once"
    result = hermes_session.run("b", script=script)
    assert result.tool_calls[0].status == "ok"
    result.hooks.assert_called("post_approval_response", choice="once")


# -- hermes_cli, hermes_run ----------------------------------------------------------------------


def test_hermes_cli_runs_on_the_home_and_restores_the_process(
    hermes_plugin_dir: PluginDir,
    hermes_home: HermesHome,
    hermes_cli: Callable[..., CliOutcome],
) -> None:
    hermes_plugin_dir("blocker", BLOCKER)
    (hermes_home / ".env").write_text("HERMES_TEST_SECRET=from-dotenv\n")
    modules = {m for m in sys.modules if m.startswith("hermes_plugins.")}
    cwd = Path.cwd()
    listed = hermes_cli("plugins", "list", "--json")
    assert listed.exit_code == 0, listed
    assert [(p["key"], p["status"]) for p in listed.json] == [("blocker", "enabled")]
    assert "HERMES_TEST_SECRET" not in os.environ
    assert {m for m in sys.modules if m.startswith("hermes_plugins.")} == modules
    assert Path.cwd() == cwd
    missing = hermes_cli("plugins", "enable", "nope")
    assert missing.exit_code == 1
    assert missing.stdout == ""
    assert "nope" in missing.stderr
    assert str(missing).startswith("$ hermes plugins enable nope\nexit code 1\nstandard error:\n")


def test_hermes_run_is_hermes_z(
    hermes_plugin_dir: PluginDir, hermes_run: Callable[..., CliOutcome]
) -> None:
    hermes_plugin_dir("blocker", BLOCKER)
    outcome = hermes_run("run `rm -r build`", "--json")
    assert outcome.args == ("-z", "run `rm -r build`", "--json")
    assert outcome.json["turns"][0]["tool_calls"][0]["status"] == "blocked"
    assert str(hermes_run("run `echo hi`")).endswith(
        "standard output:\nRan `echo hi` (exit code 0):\nhi"
    )


# -- the plugin itself ---------------------------------------------------------------------------


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    """pytest loads it in every run of every project that has hermes-hooks installed."""
    code = (
        "import json, sys, pytest\n"
        "before = set(sys.modules)\n"
        "import hermes_hooks.testing\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert json.loads(done.stdout) == [
        "hermes_hooks",
        "hermes_hooks.errors",
        "hermes_hooks.plugins",
        "hermes_hooks.plugins.extensions",
        "hermes_hooks.spec",
        "hermes_hooks.spec.exports",  # the lazy names: the standard library only
        "hermes_hooks.spec.markers",
        "hermes_hooks.testing",
    ]


def test_the_plugin_is_registered_once_under_its_module_name(
    request: pytest.FixtureRequest,
) -> None:
    import hermes_hooks.testing

    manager = request.config.pluginmanager
    assert manager.get_plugin("hermes_hooks.testing") is hermes_hooks.testing
    assert [p for p in manager.get_plugins() if p is hermes_hooks.testing] == [hermes_hooks.testing]


def test_the_entry_point_is_named_after_the_module() -> None:
    from importlib.metadata import entry_points

    found = [(e.name, e.value) for e in entry_points(group="pytest11") if "hermes" in e.value]
    assert found == [("hermes_hooks.testing", "hermes_hooks.testing")]


COMMANDS = """\
async def later(raw):
    return "later " + raw

def boom(raw):
    raise ValueError("no " + raw)

def register(ctx):
    ctx.register_command("later", later)
    ctx.register_command("boom", boom)
"""


def test_session_command_runs_plugin_and_host_commands(
    hermes_plugin_dir: Any, hermes_session: Any
) -> None:
    hermes_plugin_dir("cmds", COMMANDS)
    assert hermes_session.command("/later  a b ").text == "later a b"  # awaited, args stripped
    with pytest.raises(ValueError, match="no way"):
        hermes_session.command("/boom way")
    host = hermes_session.command("/help")
    assert (host.command, host.owner) == ("help", None)
    assert "/later" in host.text
    assert [(c.command, c.owner) for c in hermes_session.commands] == [
        ("later", "cmds"),
        ("help", None),
    ]
    with pytest.raises(ValueError, match="starts with '/'"):
        hermes_session.command("help")


def test_session_skill_fails_the_test_with_the_tools_error(hermes_session: Any) -> None:
    with pytest.raises(AssertionError, match=r"skill_view\('nope:x'\) failed: no plugin 'nope'"):
        hermes_session.skill("nope:x")


# --- pip-installed copies of the plugin under test ---------------------------------------------

INSTALLED = "def register(ctx):\n    ctx.register_command('where', lambda raw: 'installed')\n"


@pytest.fixture
def installed_no_rm(site: Path) -> Path:
    """``pip install`` of a plugin ``no-rm`` (module ``no_rm``, no plugin.yaml)."""
    from plugin_builders import write_distribution

    write_distribution(site, "hermes-no-rm", {"no-rm": "no_rm"}, {"no_rm/__init__.py": INSTALLED})
    return site


def test_hermes_cli_sees_no_pip_installed_plugin_by_default(
    installed_no_rm: Path, hermes_cli: Any
) -> None:
    listed = hermes_cli("plugins", "list", "--all", "--json").json
    assert "no-rm" not in [p["key"] for p in listed]


@pytest.mark.hermes(entry_points=True)
def test_hermes_cli_sees_them_when_marked(installed_no_rm: Path, hermes_cli: Any) -> None:
    listed = hermes_cli("plugins", "list", "--all", "--json").json
    assert ("no-rm", "entrypoint") in [(p["key"], p["source"]) for p in listed]


def test_a_folder_without_a_manifest_is_keyed_as_its_entry_point(
    installed_no_rm: Path, tmp_path: Path, hermes_plugin_dir: Any, hermes_pm: Any
) -> None:
    folder = tmp_path / "src" / "no_rm"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(INSTALLED.replace("installed", "folder"))
    assert hermes_plugin_dir(folder).name == "no-rm"  # the key it has once installed
    assert hermes_pm.get_plugin_info("no-rm").status == "enabled"


@pytest.mark.hermes(entry_points=True)
def test_a_folder_an_installed_copy_shadows_is_warned_about(
    installed_no_rm: Path, hermes_plugin_dir: Any
) -> None:
    from hermes_hooks.testing.home import HermesFixtureWarning

    with pytest.warns(HermesFixtureWarning, match="the installed copy, not this folder, loads"):
        hermes_plugin_dir("no-rm", INSTALLED)

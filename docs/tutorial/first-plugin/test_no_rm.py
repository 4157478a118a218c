"""Tests of the no-rm plugin, written with the fixtures of hermes_hooks.testing."""

from pathlib import Path

import pytest

from hermes_hooks import Hooks
from hermes_hooks.testing import tool_call

PLUGIN = Path(__file__).parent / "no_rm"


@pytest.fixture(autouse=True)
def no_rm(hermes_plugin_dir):
    """Every test gets a fresh HERMES_HOME with the plugin copied in and enabled."""
    return hermes_plugin_dir(PLUGIN)


def test_a_recursive_delete_is_blocked(hermes_session):
    result = hermes_session.run(
        "clean up the build",
        script=[tool_call("terminal", command="rm -rf build"), "I was not allowed to."],
    )
    (call,) = result.tool_calls
    assert call.status == "blocked"
    assert call.decided_by == "no-rm"
    assert "deleting build recursively is not allowed" in call.result
    assert result.text == "I was not allowed to."
    result.hooks.assert_called("post_tool_call", tool_name="terminal", status="blocked")


def test_other_commands_run(hermes_session):
    result = hermes_session.run(
        "say hello", script=[tool_call("terminal", command="echo hello"), "It said hello."]
    )
    assert result.tool_calls[0].status == "ok"
    assert "hello" in result.tool_results[0]


def test_an_allowed_path_may_be_deleted(hermes_home, hermes_session):
    hermes_home.configure_plugin("no-rm", settings={"allow": ["build"]})
    result = hermes_session.run(
        "clean up the build", script=[tool_call("terminal", command="rm -rf build"), "Done."]
    )
    assert result.tool_calls[0].status == "ok"


def test_the_hook_on_its_own(hermes_pm, hermes_hook_recorder):
    decision = Hooks(hermes_pm).pre_tool_call(tool_name="terminal", args={"command": "rm -r /"})
    assert decision.is_blocked
    assert decision.plugin == "no-rm"
    call = hermes_hook_recorder.last("pre_tool_call")
    assert call.result_of("no-rm") == {
        "action": "block",
        "message": "no-rm: deleting / recursively is not allowed",
    }


def test_hermes_z_is_blocked_too(hermes_run):
    outcome = hermes_run("run `rm -rf build`")
    assert outcome.exit_code == 0, outcome
    assert outcome.stdout == (
        "The terminal call failed: no-rm: deleting build recursively is not allowed\n"
    )

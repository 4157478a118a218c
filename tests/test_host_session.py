"""Around the turn: ctx.inject_message, slash commands, /new, subagents and closing."""

from __future__ import annotations

from pathlib import Path

import pytest
from host_helpers import (
    ONE_TOOL_TURN,
    ScriptedModel,
    names,
    plugin_module,
    recorded,
    recorder_home,
    text,
)
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.backends.models import ModelResponse
from hermes_hooks.host import Session, TurnResult, create_manager
from hermes_hooks.host.records import CommandReply
from hermes_hooks.plugins.manager import PluginManager

INJECTOR = """
from hermes_hooks import hookimpl

STATE = {}


def register(ctx):
    STATE["ctx"] = ctx
    STATE["before_any_session"] = ctx.inject_message("too early")

    def nudge(raw_args):
        STATE["from_command"] = ctx.inject_message(raw_args or "run `echo from-command`")
        return "queued"

    ctx.register_command("nudge", nudge, description="queue a message", args_hint="[text]")


@hookimpl
def post_tool_call(args):
    if args.get("command") == "echo first":
        STATE["during_turn"] = STATE["ctx"].inject_message("run `echo injected`")
"""


@pytest.fixture
def pm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginManager:
    return create_manager(recorder_home(tmp_path, monkeypatch, injector=INJECTOR))


def test_inject_message_interrupts_the_running_turn_and_becomes_the_next(
    pm: PluginManager, tmp_path: Path
) -> None:
    state = plugin_module(pm, "injector").STATE
    assert state["before_any_session"] is False
    session = Session(pm, cwd=tmp_path)
    first, second = session.send("run `echo first`")
    assert state["during_turn"] is True
    assert isinstance(first, TurnResult)
    assert isinstance(second, TurnResult)
    assert (first.interrupted, first.completed, first.exit_reason) == (True, False, "interrupted")
    assert [c.args["command"] for c in first.tool_calls] == ["echo first"]
    assert (second.user_message, second.completed) == ("run `echo injected`", True)
    assert second.text == "Ran `echo injected` (exit code 0):\ninjected"
    ends = [kw for name, kw in recorded(pm) if name == "on_session_end"]
    assert [(kw["interrupted"], kw["completed"]) for kw in ends] == [(True, False), (False, True)]
    # The interrupted turn stops before asking the model again and delivers no answer.
    assert names(recorded(pm)).count("transform_llm_output") == 1


def test_a_message_injected_between_turns_waits_for_the_next_one(
    pm: PluginManager, tmp_path: Path
) -> None:
    session = Session(pm, cwd=tmp_path)
    replies = session.send("/nudge run `echo later`")
    assert [type(r) for r in replies] == [CommandReply, TurnResult]
    assert replies[0].text == "queued"
    assert replies[1].text == "Ran `echo later` (exit code 0):\nlater"
    assert plugin_module(pm, "injector").STATE["from_command"] is True


def test_a_role_other_than_user_is_prefixed(pm: PluginManager) -> None:
    session = Session(pm, ScriptedModel())
    ctx = plugin_module(pm, "injector").STATE["ctx"]
    assert ctx.inject_message("heads up", role="system") is True
    assert session.pending == ["[system] heads up"]


def test_no_running_session_means_inject_returns_false(pm: PluginManager) -> None:
    ctx = plugin_module(pm, "injector").STATE["ctx"]
    session = Session(pm, ScriptedModel())
    session.close()
    assert ctx.inject_message("anyone?") is False
    assert pm.message_sink is None


def test_followups_are_bounded(pm: PluginManager) -> None:
    session = Session(pm, ScriptedModel(), max_followups=2)
    for n in range(4):
        session.inject(f"message {n}")
    replies = session.send("hi")
    assert len(replies) == 3
    assert session.pending == ["message 2", "message 3"]


def test_slash_commands(pm: PluginManager) -> None:
    session = Session(pm, ScriptedModel())
    (help_reply,) = session.send("/help")
    assert "/nudge [text]" in help_reply.text
    assert "queue a message" in help_reply.text
    assert "/new" in help_reply.text
    assert session.send("/tools")[0].text == (
        "Tools: delegate_task, patch, read_file, search_files, terminal, write_file"
    )
    assert session.send("/plugins")[0].text == "Plugins: injector, recorder"
    assert session.send("/model")[0].text == "Model: scripted/scripted-1"
    assert (
        session.send("/nudg")[0].text
        == "Unknown command /nudg; did you mean /nudge? (/help lists them)"
    )
    (bye,) = session.send("/exit")
    assert isinstance(bye, CommandReply)
    assert bye.exit


def test_a_failing_plugin_command_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(
        home,
        "cmds",
        """
        async def later(raw_args):
            return f"async says {raw_args}"

        def broken(raw_args):
            raise RuntimeError("nope")

        def register(ctx):
            ctx.register_command("later", later)
            ctx.register_command("broken", broken)
        """,
    )
    write_config(home, ["cmds"])
    session = Session(create_manager(home), ScriptedModel())
    assert session.send("/later hi there")[0].text == "async says hi there"
    assert session.send("/broken")[0].text == "/broken failed: RuntimeError: nope"


def test_new_finalizes_the_old_session_and_resets_to_a_new_one(pm: PluginManager) -> None:
    session = Session(pm, ScriptedModel(text("a"), text("b")))
    session.send("hello")
    old = session.session_id
    (reply,) = session.send("/new")
    new = session.session_id
    assert new != old
    assert reply.text == f"New conversation: {new}"
    assert session.messages == []
    calls = recorded(pm)
    finalize, reset = calls[-2], calls[-1]
    assert finalize == (
        "on_session_finalize",
        {
            "session_id": old,
            "platform": "cli",
            "reason": "/new",
            "old_session_id": None,
            "new_session_id": None,
            "telemetry_schema_version": "hermes.observer.v1",
        },
    )
    assert reset[0] == "on_session_reset"
    assert reset[1]["session_id"] == new
    session.send("again")
    starts = [kw["session_id"] for name, kw in recorded(pm) if name == "on_session_start"]
    assert starts == [old, new]


def test_close_finalizes_once(pm: PluginManager) -> None:
    with Session(pm, ScriptedModel()) as session:
        pass
    session.close()
    assert names(recorded(pm)) == ["on_session_finalize"]
    with pytest.raises(RuntimeError, match="is closed"):
        session.run_turn("hi")


def test_delegate_runs_a_child_between_subagent_start_and_stop(
    pm: PluginManager, tmp_path: Path
) -> None:
    session = Session(pm, cwd=tmp_path)
    result = session.run_turn("delegate: run `echo from-child`")
    assert result.completed
    assert [c.tool_name for c in result.tool_calls] == ["delegate_task"]
    assert result.text == (
        "The subagent (completed) reported:\nRan `echo from-child` (exit code 0):\nfrom-child"
    )
    calls = recorded(pm)
    order = names(calls)
    start, stop = order.index("subagent_start"), order.index("subagent_stop")
    assert order[start + 1 : stop] == ONE_TOOL_TURN
    started, stopped = calls[start][1], calls[stop][1]
    child = started["child_session_id"]
    assert started["parent_session_id"] == session.session_id
    assert started["parent_turn_id"] == result.turn_id
    assert started["parent_subagent_id"] is None
    assert started["child_subagent_id"].startswith("subagent-")
    assert (started["child_role"], started["child_goal"]) == ("leaf", "run `echo from-child`")
    assert stopped["child_session_id"] == child
    assert (stopped["child_status"], stopped["child_role"]) == ("completed", "leaf")
    assert stopped["child_summary"] == "Ran `echo from-child` (exit code 0):\nfrom-child"
    assert stopped["tool_call_history"] == [
        {
            "tool_name": "terminal",
            "tool_input": '{"command": "echo from-child"}',
            "input_bytes": 30,
            "output_bytes": 42,
            "status": "ok",
        }
    ]
    assert isinstance(stopped["duration_ms"], int)
    child_llm = calls[start + 2][1]
    assert (child_llm["session_id"], child_llm["parent_session_id"]) == (child, session.session_id)


def test_a_leaf_child_is_not_offered_delegate_task(pm: PluginManager) -> None:
    child_model = ScriptedModel(text("child done"))
    parent = Session(pm, child_model)
    outcome = parent.delegate("look around", context="you are a helper")
    assert (outcome.status, outcome.summary) == ("completed", "child done")
    request = child_model.requests[0]
    assert request["messages"][-1]["content"] == "look around\n\nyou are a helper"
    assert "delegate_task" not in {t["function"]["name"] for t in request["tools"]}


def test_events_are_recorded_for_json_output(pm: PluginManager, tmp_path: Path) -> None:
    session = Session(pm, cwd=tmp_path, record_events=True)
    session.run_turn("run `echo hi`")
    kinds = [e["type"] for e in session.events]
    assert kinds[0] == "turn_start"
    assert kinds[-1] == "turn_end"
    assert {"hook", "api_request", "tool_call"} <= set(kinds)
    hooks = [e["hook"] for e in session.events if e["type"] == "hook"]
    assert hooks == names(recorded(pm))


def test_the_session_manager_is_current_while_it_runs_even_with_a_newer_one(
    pm: PluginManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hermes' modules a plugin imports (hermes_constants, tools.registry) answer for the
    # current manager; a host's own code (here the model) runs for the session's manager,
    # not for whichever manager was created last.
    from hermes_hooks.plugins import active

    seen: list[PluginManager | None] = []

    def look(_messages: object) -> ModelResponse:
        seen.append(active.current_manager())
        return text("done")

    newer = PluginManager()
    assert active.current_manager() is newer  # outside a turn: the most recently created
    session = Session(pm, ScriptedModel(look, look), cwd=tmp_path)
    session.send("one")
    session.run_turn("two")
    assert seen == [pm, pm]
    assert active.current_manager() is newer  # and back once the turn is over

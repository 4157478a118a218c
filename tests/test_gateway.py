"""The gateway: pre_gateway_dispatch skip/rewrite/allow, a session per sender, replays."""

from __future__ import annotations

from pathlib import Path

import pytest
from host_helpers import ScriptedModel, names, recorded, recorder_home
from plugin_builders import isolated_home, write_config

from hermes_hooks.backends.models import get_active_model
from hermes_hooks.host import Gateway, MessageEvent, create_manager
from hermes_hooks.plugins.manager import PluginManager

POLICY = """
from hermes_hooks import hookimpl

SEEN = []


@hookimpl
def pre_gateway_dispatch(event, gateway, session_store):
    SEEN.append((event.source.platform, event.source.chat_id, type(gateway).__name__))
    if event.source.chat_id == "muted":
        return {"action": "skip", "reason": "muted chat"}
    if event.text.startswith("plz "):
        return {"action": "rewrite", "text": event.text[len("plz "):]}
    if event.text == "explode":
        raise RuntimeError("policy bug")
    return {"action": "allow"}
"""


@pytest.fixture
def pm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginManager:
    return create_manager(recorder_home(tmp_path, monkeypatch, policy=POLICY))


def test_skip_drops_the_message_before_any_session(pm: PluginManager) -> None:
    hub = Gateway(pm, ScriptedModel())
    outcome = hub.dispatch(
        MessageEvent("hello", platform="telegram", sender="ann", chat_id="muted")
    )
    assert (outcome.action, outcome.reason, outcome.replies) == ("skipped", "muted chat", ())
    assert hub.sessions.keys() == []
    assert names(recorded(pm)) == ["pre_gateway_dispatch"]


def test_rewrite_replaces_the_text_that_is_dispatched(pm: PluginManager, tmp_path: Path) -> None:
    hub = Gateway(pm, cwd=tmp_path)
    event = MessageEvent("plz run `echo hi`", platform="telegram", sender="ann")
    outcome = hub.dispatch(event)
    assert (outcome.action, outcome.rewritten, outcome.text) == ("replied", True, "run `echo hi`")
    assert event.text == "run `echo hi`"
    assert outcome.replies == ("Ran `echo hi` (exit code 0):\nhi",)
    llm = dict(recorded(pm))["pre_llm_call"]
    assert (llm["user_message"], llm["platform"], llm["sender_id"]) == (
        "run `echo hi`",
        "telegram",
        "ann",
    )


def test_allow_a_failing_policy_and_internal_events_dispatch_normally(pm: PluginManager) -> None:
    model = ScriptedModel()
    hub = Gateway(pm, model)
    assert hub.dispatch(MessageEvent("hi", sender="ann")).action == "replied"
    assert hub.dispatch(MessageEvent("explode", sender="ann")).action == "replied"
    before = names(recorded(pm)).count("pre_gateway_dispatch")
    internal = hub.dispatch(MessageEvent("plz background done", sender="ann", internal=True))
    assert (internal.action, internal.rewritten) == ("replied", False)
    assert names(recorded(pm)).count("pre_gateway_dispatch") == before
    info = pm.get_plugin_info("policy")
    assert info is not None
    assert info.hook_errors == 1


def test_one_session_per_sender(pm: PluginManager) -> None:
    hub = Gateway(pm, ScriptedModel())
    a1 = hub.dispatch(MessageEvent("one", platform="discord", sender="ann"))
    b1 = hub.dispatch(MessageEvent("two", platform="discord", sender="bob"))
    a2 = hub.dispatch(MessageEvent("three", platform="discord", sender="ann"))
    assert a1.session_id == a2.session_id != b1.session_id
    assert hub.sessions.keys() == ["agent:main:discord:dm:ann", "agent:main:discord:dm:bob"]
    session = hub.sessions.get("agent:main:discord:dm:ann")
    assert session is not None
    assert [m["content"] for m in session.messages if m["role"] == "user"] == ["one", "three"]
    starts = [kw["session_id"] for n, kw in recorded(pm) if n == "on_session_start"]
    assert starts == [a1.session_id, b1.session_id]


def test_new_on_the_gateway_reports_old_and_new_ids(pm: PluginManager) -> None:
    hub = Gateway(pm, ScriptedModel())
    first = hub.dispatch(MessageEvent("hi", platform="telegram", sender="ann"))
    reset = hub.dispatch(MessageEvent("/new", platform="telegram", sender="ann"))
    assert reset.session_id != first.session_id
    calls = dict(recorded(pm))
    finalize, after = calls["on_session_finalize"], calls["on_session_reset"]
    assert finalize["old_session_id"] == first.session_id
    assert finalize["new_session_id"] == reset.session_id
    assert (after["session_id"], after["platform"]) == (reset.session_id, "telegram")


def test_shutdown_finalizes_every_session(pm: PluginManager) -> None:
    model = ScriptedModel()
    hub = Gateway(pm, model)
    assert get_active_model(pm) is model  # ctx.llm runs on the gateway's model
    hub.dispatch(MessageEvent("hi", sender="ann"))
    hub.dispatch(MessageEvent("hi", sender="bob"))
    hub.shutdown()
    finals = [kw for n, kw in recorded(pm) if n == "on_session_finalize"]
    assert [kw["reason"] for kw in finals] == ["shutdown", "shutdown"]
    assert hub.sessions.keys() == []
    assert get_active_model(pm) is None


def test_gateway_approvals_are_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = isolated_home(tmp_path, monkeypatch, bundled=True)
    write_config(home, ["command-guard"])
    hub = Gateway(create_manager(home), cwd=tmp_path)
    outcome = hub.dispatch(MessageEvent("run `sudo true`", sender="ann"))
    assert "not approved (deny)" in outcome.replies[0]


def test_replay_reads_json_lines(pm: PluginManager) -> None:
    lines = [
        '{"platform": "telegram", "sender": "ann", "chat_id": "muted", "text": "x"}',
        "",
        "# a comment",
        '{"sender": "bob", "text": "plz hi"}',
        "not json",
        '{"sender": "bob"}',
        '{"text": "hi", "internal": "yes"}',
    ]
    outcomes = list(Gateway(pm, ScriptedModel()).replay(lines))
    assert [o.action for o in outcomes] == ["skipped", "replied", "invalid", "invalid", "invalid"]
    assert outcomes[1].event == MessageEvent("hi", platform="local", sender="bob")
    assert outcomes[2].reason is not None
    assert outcomes[2].reason.startswith("line 5: not a message event")
    assert (
        outcomes[3].reason == "line 6: not a message event: 'text' must be a string, found NoneType"
    )
    assert "'internal' must be true or false" in (outcomes[4].reason or "")
    assert outcomes[1].to_dict()["event"]["sender"] == "bob"

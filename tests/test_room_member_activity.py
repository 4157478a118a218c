"""``on_room_member_activity`` in the gateway path: a member of a group chat (a session of the
room) reports its turn's events to an observer loaded from a folder, stamped with the room's
coordinates, off the turn's path; a direct chat reports none."""

from __future__ import annotations

from typing import Any

import pytest
from host_helpers import ScriptedModel, text, tool_call
from plugin_builders import PluginHome, home, recorder_module

from hermes_hooks.host import create_manager
from hermes_hooks.host.gateway import Gateway, MessageEvent

__all__ = ["home"]

REC = "hermes_test_room_activity"

OBSERVER = f"""
import time
import {REC} as rec

def observe(**kwargs):
    time.sleep(0.05)  # a slow observer: the turn does not wait for it
    rec.events.append(kwargs)

def broken(**kwargs):
    raise RuntimeError("observer down")

def register(ctx):
    ctx.register_hook("on_room_member_activity", observe)
    ctx.register_hook("on_room_member_activity", broken)
"""


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Any:
    return recorder_module(monkeypatch, REC, events=[])


def test_a_group_member_reports_its_turn_and_a_direct_chat_does_not(
    home: PluginHome, rec: Any
) -> None:
    home.add_plugin("observer", OBSERVER)
    home.write_config()
    pm = create_manager(home.root)
    home.managers.append(pm)
    model = ScriptedModel(tool_call("read_file", {"path": "nope.txt"}), text("ok"), text("dm"))
    hub = Gateway(pm, model)
    outcome = hub.dispatch(MessageEvent("look", platform="discord", sender="ann", chat_id="room1"))
    assert outcome.replies[-1] == "ok"
    hub.dispatch(MessageEvent("hi", platform="discord", sender="bob"))  # a direct chat
    [member] = [key for key in hub.sessions.keys() if ":group:" in key]  # noqa: SIM118
    session = hub.sessions.get(member)
    assert session is not None
    observers = session.stream_observers()
    assert observers is not None
    assert observers.flush(10)
    kinds = [e["kind"] for e in rec.events]
    assert kinds == [
        "turn.started",
        "request.opened",
        "tool.started",
        "tool.completed",
        "request.opened",
        "turn.completed",
    ]
    first = rec.events[0]
    assert first["room_id"] == "discord:room1"
    assert first["member_id"] == member
    assert first["thread_id"] == ""
    assert first["execution_generation"] == 1
    assert [e["seq"] for e in rec.events] == [1, 2, 3, 4, 5, 6]
    assert {e["turn_id"] for e in rec.events} == {first["turn_id"]}
    assert first["task_id"]
    completed = rec.events[3]["payload"]
    assert completed["tool_name"] == "read_file"
    assert completed["status"] == "error"
    assert "args" not in rec.events[2]["payload"]  # client-safe: no tool arguments
    info = pm.get_plugin_info("observer")
    assert info is not None
    assert "observer down" in str(info.last_hook_error)  # counted, the others still delivered

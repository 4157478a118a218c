"""``on_room_member_activity``: the live events of a group chat member's turns, for observers.

Hermes fires it for the members of a hosted group chat (a room): each member's session
reports its runtime events (``request.opened``, ``tool.started``, ``tool.completed``,
``turn.error``...) stamped with the room's coordinates, on queues off the token path
(``agent.plugin_stream_hooks``), never written to the room's log. Here a room is a group chat
the gateway serves (its chat type is ``group``) and a member is a session in it (one per
sender when ``group_sessions_per_user``): :func:`attach_room` makes a member's session
report, through the stream hooks' bounded queues (:mod:`hermes_hooks.host.streaming`), so a
slow observer never slows the turn.

The coordinates: ``room_id`` is ``<platform>:<chat id>``, ``thread_id`` the chat's thread
(``""`` for none), ``member_id`` the member's session key, ``turn_id`` and ``task_id`` the
turn's, ``execution_generation`` how many times this member's session was started (1), and
``seq`` the event's number in the member's stream. Payloads are client-safe: tool arguments
are not sent, and text goes through the plugins' redaction patterns.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.plugins.newer_ctx import redact_everywhere
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.compat.gateway_session import SessionSource
    from hermes_hooks.host.session import Session

__all__ = ["HOOK", "attach_room"]

HOOK: Final = "on_room_member_activity"

_KINDS: Final = {
    "turn_start": "turn.started",
    "model_request": "request.opened",
    "tool_start": "tool.started",
    "tool_call": "tool.completed",
    "turn_end": "turn.completed",
}


def _payload(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """The client-safe part of a session event."""
    if kind == "model_request":
        return {"call": data.get("call")}
    if kind == "tool_start":
        return {"tool_name": data.get("tool_name")}
    if kind == "tool_call":
        return {
            "tool_name": data.get("tool_name"),
            "status": data.get("status"),
            "duration_ms": data.get("duration_ms"),
        }
    if kind == "turn_end":
        return {
            "completed": data.get("completed"),
            "failed": data.get("failed"),
            "interrupted": data.get("interrupted"),
            "exit_reason": redact_everywhere(str(data.get("exit_reason") or "")),
        }
    return {}


def attach_room(session: Session, source: SessionSource, member_id: str) -> bool:
    """Make ``session`` report its events as a member of ``source``'s room, when the chat is a
    group; return whether it does. What listened to the session before still does."""
    chat_type = getattr(source, "chat_type", "")
    if chat_type != "group":
        return False
    platform = getattr(getattr(source, "platform", None), "value", "") or ""
    coordinates = {
        "room_id": f"{platform}:{source.chat_id}",
        "thread_id": getattr(source, "thread_id", None) or "",
        "member_id": member_id,
        "execution_generation": 1,
    }
    previous: Callable[[str, dict[str, Any]], None] | None = session.on_event
    counter = itertools.count(1)
    lock = threading.Lock()
    state: dict[str, str] = {"turn_id": "", "task_id": ""}

    def listen(kind: str, data: dict[str, Any]) -> None:
        if previous is not None:
            previous(kind, data)
        mapped = _KINDS.get(kind)
        if mapped is None:
            return
        observers = session.stream_observers()
        if observers is None:
            return
        workers = observers.workers(HOOK)
        if not workers:
            return
        if kind == "turn_start":
            turn = session.turn
            state.update(
                turn_id=str(data.get("turn_id") or ""),
                task_id=turn.task_id if turn is not None else "",
            )
        if kind == "turn_end" and data.get("failed"):
            mapped = "turn.error"
        with lock:
            seq = next(counter)
        event = {
            "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
            **coordinates,
            "turn_id": str(data.get("turn_id") or state["turn_id"]),
            "task_id": state["task_id"],
            "kind": mapped,
            "seq": seq,
            "payload": _payload(kind, data),
        }
        for worker in workers:
            worker.put(event)

    session.on_event = listen
    return True

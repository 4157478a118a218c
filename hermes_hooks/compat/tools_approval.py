"""Hermes' ``tools.approval``, the gateway approval path platform plugins drive.

On a gateway nobody answers at a terminal: the agent's thread puts the request in its session's
queue, a notify callback (``register_gateway_notify``) shows it to the user (buttons, a
message), and the thread waits until the user answers. A platform plugin's ``/approve``
handler or button calls ``resolve_gateway_approval(session_key, choice)``, which wakes the
oldest waiting request of that session (or all of them), as in Hermes.

:class:`GatewayApprover` is the waiting side, an approver for a host's approval gate (the
reference gateway's ``approver=``): it takes the request's ``session_key``, ``command``,
``description`` and ``pattern_key``, waits at most ``approvals.timeout`` seconds (60 by
default) and answers ``"timeout"`` when nobody did, ``"deny"`` when the session has no notify
callback, the callback fails, the session is cleared or the thread is interrupted (``/stop``).
The queue is the process's, keyed by session, as Hermes' is.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, Final

from hermes_hooks.compat import hermes_cli_config, tools_interrupt

__all__ = [
    "GatewayApprover",
    "approve_permanent",
    "approve_session",
    "clear_session",
    "get_current_session_key",
    "is_approved",
    "has_blocking_approval",
    "register_gateway_notify",
    "request_tool_approval",
    "resolve_gateway_approval",
    "unregister_gateway_notify",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT: Final = 60.0
_POLL: Final = 0.25

NotifyCallback = Callable[[dict[str, Any]], object]


class _ApprovalEntry:
    """One request waiting in a session's queue."""

    __slots__ = ("data", "event", "reason", "result")

    def __init__(self, data: dict[str, Any]) -> None:
        self.event = threading.Event()
        self.data = data
        self.result: str | None = None
        self.reason: str | None = None


_lock = threading.Lock()
_queues: dict[str, list[_ApprovalEntry]] = {}
_notify: dict[str, NotifyCallback] = {}


def register_gateway_notify(session_key: str, cb: NotifyCallback) -> None:
    """Set how ``session_key``'s approval requests reach the user.

    ``cb(approval_data)`` gets ``command``, ``description``, ``pattern_key`` and
    ``pattern_keys``; it runs on the agent's thread and must hand the send to the gateway's
    loop itself.
    """
    with _lock:
        _notify[session_key] = cb


def unregister_gateway_notify(session_key: str) -> None:
    """Drop the session's callback and wake every request of it still waiting (unanswered)."""
    with _lock:
        _notify.pop(session_key, None)
        entries = _queues.pop(session_key, [])
    for entry in entries:
        entry.event.set()


def resolve_gateway_approval(
    session_key: str, choice: str, resolve_all: bool = False, reason: str | None = None
) -> int:
    """Answer the oldest waiting request of ``session_key`` (every one with ``resolve_all``).

    :param choice: ``"once"``, ``"session"``, ``"always"`` or ``"deny"``.
    :param reason: why, with a deny; handed back to the agent with the refusal.
    :returns: how many requests were answered (0: none was waiting).
    """
    with _lock:
        queue = _queues.get(session_key)
        if not queue:
            return 0
        targets = list(queue) if resolve_all else [queue[0]]
        del queue[: len(targets)]
        if not queue:
            _queues.pop(session_key, None)
    for entry in targets:
        entry.result = choice
        if reason:
            entry.reason = reason
        entry.event.set()
    return len(targets)


def has_blocking_approval(session_key: str) -> bool:
    """Return whether a request of ``session_key`` is waiting for an answer."""
    with _lock:
        return bool(_queues.get(session_key))


def clear_session(session_key: str) -> None:
    """Deny every request of ``session_key`` still waiting (the session ended or was reset)."""
    if not session_key:
        return
    with _lock:
        entries = _queues.pop(session_key, [])
    for entry in entries:
        entry.result = "deny"
        entry.event.set()


def _timeout() -> float:
    section = hermes_cli_config.load_config().get("approvals")
    raw = section.get("timeout", DEFAULT_TIMEOUT) if isinstance(section, dict) else None
    try:
        return max(float(raw if raw is not None else DEFAULT_TIMEOUT), 0.0)
    except (TypeError, ValueError):
        return DEFAULT_TIMEOUT


class GatewayApprover:
    """Waits for a gateway user's answer to an approval request (see the module docstring).

    :param timeout: seconds to wait; ``None`` reads ``approvals.timeout`` at each request.
    :param session_key: the queue to wait in, for a host whose sessions have ids of their own
        (a gateway session's Hermes key, ``agent:main:telegram:dm:42``, which the platform's
        buttons resolve); by default the request's ``session_key``.
    """

    def __init__(self, timeout: float | None = None, *, session_key: str | None = None) -> None:
        self.timeout = timeout
        self.session_key = session_key
        self.last_reason: str | None = None
        """The reason the user gave with the last deny, if any."""

    def __call__(self, request: Any) -> str:
        session_key = self.session_key or str(getattr(request, "session_key", "") or "")
        key = str(getattr(request, "pattern_key", "") or "")
        data: dict[str, Any] = {
            "command": str(getattr(request, "command", "") or ""),
            "description": str(getattr(request, "description", "") or ""),
            "pattern_key": key,
            "pattern_keys": [key],
            "tool_name": str(getattr(request, "tool_name", "") or ""),
        }
        with _lock:
            notify = _notify.get(session_key)
            if notify is None:
                logger.info("approval denied: session %r has no way to ask", session_key)
                return "deny"
            entry = _ApprovalEntry(data)
            _queues.setdefault(session_key, []).append(entry)
        try:
            notify(data)
        except Exception as exc:
            logger.warning("gateway approval notify failed for %r: %s", session_key, exc)
            self._drop(session_key, entry)
            return "deny"
        self._wait(entry)
        self._drop(session_key, entry)
        self.last_reason = entry.reason
        return entry.result or "timeout"  # woken unanswered (the session went) or timed out

    def _wait(self, entry: _ApprovalEntry) -> None:
        limit = self.timeout if self.timeout is not None else _timeout()
        deadline = time.monotonic() + max(limit, 0.0)
        while not entry.event.is_set():
            if tools_interrupt.is_interrupted():
                entry.result = "deny"
                return
            left = deadline - time.monotonic()
            if left <= 0 or entry.event.wait(min(_POLL, left)):
                return

    @staticmethod
    def _drop(session_key: str, entry: _ApprovalEntry) -> None:
        with _lock:
            queue = _queues.get(session_key, [])
            if entry in queue:
                queue.remove(entry)
            if not queue:
                _queues.pop(session_key, None)


_session_approved: dict[str, set[str]] = {}
_permanent_approved: set[str] = set()
_TRUE: Final = frozenset({"1", "true", "yes", "on"})


def _env_on(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def get_current_session_key(default: str = "default") -> str:
    """The active session's key: ``$HERMES_SESSION_KEY``, else ``default`` (as Hermes' env
    fallback; the reference host passes keys to approvers itself)."""
    return os.environ.get("HERMES_SESSION_KEY", "") or default


def approve_session(session_key: str, pattern_key: str) -> None:
    """Approve ``pattern_key`` for ``session_key`` only (this process)."""
    with _lock:
        _session_approved.setdefault(session_key, set()).add(pattern_key)


def approve_permanent(pattern_key: str) -> None:
    """Approve ``pattern_key`` for every session of this process."""
    with _lock:
        _permanent_approved.add(pattern_key)


def is_approved(session_key: str, pattern_key: str) -> bool:
    """Whether ``pattern_key`` was approved for the session or permanently."""
    with _lock:
        return pattern_key in _permanent_approved or pattern_key in _session_approved.get(
            session_key, set()
        )


def _cron_mode() -> str:
    section = hermes_cli_config.load_config().get("approvals")
    raw = section.get("cron_mode", "deny") if isinstance(section, dict) else "deny"
    return "approve" if str(raw).strip().lower() in {"approve", "off", "allow", "yes"} else "deny"


def _ask_terminal(tool_name: str, description: str) -> str:
    if not sys.stdin.isatty():
        return "deny"
    print(f"\n  Approval required for {tool_name}: {description}", file=sys.stderr)
    try:
        answer = input("  [o]nce / [s]ession / [a]lways / [d]eny: ").strip().lower()
    except (EOFError, KeyboardInterrupt):
        return "deny"
    return {"o": "once", "s": "session", "a": "always"}.get(answer[:1], "deny")


def request_tool_approval(
    tool_name: str,
    reason: str,
    *,
    rule_key: str = "",
    approval_callback: Callable[..., object] | None = None,
) -> dict[str, Any]:
    """Ask a human to approve one tool call a plugin flagged (Hermes' ``approve`` directive).

    The allowlist key is ``plugin_rule:<rule_key>`` (``<tool>:<hash of reason>`` without
    one), so ``session``/``always`` answers cover later calls of that rule only. On a gateway
    session (``$HERMES_GATEWAY_SESSION``, or a notify callback registered for the session)
    the request waits in the session's queue; in an interactive CLI (``$HERMES_INTERACTIVE``)
    ``approval_callback(command, description)`` or the terminal asks; a cron job
    (``$HERMES_CRON_SESSION``) follows ``approvals.cron_mode`` (deny by default); anywhere
    else no human can answer and the call is refused (fail-closed, as Hermes).

    :returns: ``{"approved": True, "message": None}``, or ``{"approved": False, "message":
        ..., "pattern_key": ..., "description": ...}``.
    """
    description = reason or f"Plugin requires approval for {tool_name}"
    suffix = rule_key or f"{tool_name}:{hashlib.sha256(description.encode()).hexdigest()[:12]}"
    pattern_key = f"plugin_rule:{suffix}"
    session_key = get_current_session_key()
    if is_approved(session_key, pattern_key):
        return {"approved": True, "message": None}

    def refused(message: str) -> dict[str, Any]:
        return {
            "approved": False,
            "message": message,
            "pattern_key": pattern_key,
            "description": description,
        }

    with _lock:
        has_notify = session_key in _notify
    if _env_on("HERMES_CRON_SESSION"):
        if _cron_mode() == "approve":
            return {"approved": True, "message": None}
        return refused(
            f"BLOCKED: Tool '{tool_name}' requires approval ({description}) but cron jobs run "
            "without a user present to approve it. Find an alternative approach. To allow "
            "flagged actions in cron jobs, set approvals.cron_mode: approve in config.yaml."
        )
    if has_notify or _env_on("HERMES_GATEWAY_SESSION"):
        request = {
            "session_key": session_key,
            "command": f"<{tool_name}> (plugin approval rule)",
            "description": description,
            "pattern_key": pattern_key,
            "tool_name": tool_name,
        }
        choice = GatewayApprover(session_key=session_key)(SimpleNamespace(**request))
    elif _env_on("HERMES_INTERACTIVE"):
        if approval_callback is not None:
            choice = str(approval_callback(f"<{tool_name}>", description) or "deny")
        else:
            choice = _ask_terminal(tool_name, description)
    else:
        return refused(
            f"BLOCKED: Tool '{tool_name}' requires approval ({description}) but no "
            "interactive user or gateway is present to approve it. A plugin flagged this "
            "action for human confirmation."
        )
    if choice == "session":
        approve_session(session_key, pattern_key)
    elif choice == "always":
        approve_permanent(pattern_key)
    if choice in {"once", "session", "always"}:
        return {"approved": True, "message": None}
    if choice == "timeout":
        return refused(f"BLOCKED: approval for {tool_name} timed out ({description}).")
    return refused(f"BLOCKED: the user denied {tool_name} ({description}).")


_APPROVE_WORDS: Final = frozenset({"approve", "yes", "ok", "okay", "confirm", "y", "\U0001f44d"})
_DENY_WORDS: Final = frozenset({"deny", "no", "reject", "cancel", "n", "\U0001f44e"})
_ALWAYS_WORDS: Final = frozenset({"always", "approve always", "always approve"})
_SESSION_WORDS: Final = frozenset({"session", "approve session", "session approve"})


def gateway_answer(event: Any, session_key: str) -> tuple[str, str] | None:
    """``(verb, args)`` when a chat message answers an approval (this project's helper for the
    gateway): ``/approve ...`` and ``/deny ...`` always; while a request of ``session_key``
    waits, also the bare words Hermes takes (``yes``, ``ok``, ``no``, ``always``, ``session``...).
    ``None`` for any other message."""
    is_command = getattr(event, "is_command", None)
    if callable(is_command) and is_command():
        command = event.get_command()
        if command in ("approve", "deny"):
            return str(command), str(event.get_command_args()).strip()
    if not has_blocking_approval(session_key):
        return None
    word = str(getattr(event, "text", "") or "").strip().lower()
    if word in _APPROVE_WORDS:
        return "approve", ""
    if word in _DENY_WORDS:
        return "deny", ""
    if word in _ALWAYS_WORDS:
        return "approve", "always"
    if word in _SESSION_WORDS:
        return "approve", "session"
    return None

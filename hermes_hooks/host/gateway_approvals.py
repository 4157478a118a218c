"""Approvals over the gateway, as Hermes asks them: in the chat, answered by ``/approve``.

A turn whose tool call needs approval (a plugin's ``approve`` directive) waits in its chat's
queue of :mod:`tools.approval <hermes_hooks.compat.tools_approval>`: the chat is shown the
request (the adapter's ``send_exec_approval`` buttons when its class has one, else Hermes'
text with the ``/approve`` and ``/deny`` forms), and the user's answer resolves it:

- ``/approve`` (the oldest request, once), ``/approve session``, ``/approve always``,
  ``/approve all ...`` (every waiting request);
- ``/deny``, ``/deny all``, ``/deny <reason>`` (the reason is relayed to the agent);
- while a request waits, the bare words Hermes takes (``yes``, ``ok``, ``no``, ``always``...).

The answer reaches the waiting turn although that chat's turn is still running: the base
adapter lets these messages past the chat's queue
(:func:`tools.approval.gateway_answer <hermes_hooks.compat.tools_approval.gateway_answer>`).
Nobody waiting
gets Hermes' "No pending command" answer; an approval nobody answers times out
(``approvals.timeout``) and is denied.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

from hermes_hooks.compat import tools_approval
from hermes_hooks.compat.agent_async_utils import safe_schedule_threadsafe
from hermes_hooks.compat.gateway_platforms_event import MessageEvent

__all__ = ["approval_reply", "notifier", "prompt_text"]

logger = logging.getLogger(__name__)

_SEND_TIMEOUT: Final = 15.0

_TEXT: Final = {
    "approve.no_pending": "No pending command to approve.",
    "approve.once": "✅ Command approved. The agent is resuming...",
    "approve.session": (
        "✅ Command approved (pattern approved for this session). The agent is resuming..."
    ),
    "approve.always": (
        "✅ Command approved (pattern approved permanently). The agent is resuming..."
    ),
    "deny.no_pending": "No pending command to deny.",
    "deny.denied": "❌ Command denied.",
    "deny.reason": '❌ Command denied. Reason relayed to the agent: "{reason}"',
}


def approval_reply(event: MessageEvent, key: str) -> str | None:
    """Resolve the approval ``event`` answers; return the chat's confirmation, or ``None`` when
    ``event`` is no approval answer (it goes to the session as usual)."""
    found = tools_approval.gateway_answer(event, key)
    if found is None:
        return None
    verb, args = found
    if verb == "approve":
        words = args.lower().split()
        resolve_all = "all" in words
        if any(w in {"always", "permanent", "permanently"} for w in words):
            choice = "always"
        elif any(w in {"session", "ses"} for w in words):
            choice = "session"
        else:
            choice = "once"
        count = tools_approval.resolve_gateway_approval(key, choice, resolve_all=resolve_all)
        return _TEXT[f"approve.{choice}"] if count else _TEXT["approve.no_pending"]
    tokens = args.split()
    resolve_all = bool(tokens) and tokens[0].lower() == "all"
    reason = (args[len(tokens[0]) :] if resolve_all else args).strip()[:280].strip()
    count = tools_approval.resolve_gateway_approval(
        key, "deny", resolve_all=resolve_all, reason=reason or None
    )
    if not count:
        return _TEXT["deny.no_pending"]
    return _TEXT["deny.reason"].format(reason=reason) if reason else _TEXT["deny.denied"]


def prompt_text(command: str, description: str, prefix: str = "/") -> str:
    """Hermes' text form of an approval request, for adapters without buttons."""
    preview = command[:200] + "..." if len(command) > 200 else command
    return (
        f"⚠️ **Dangerous command requires approval:**\n```\n{preview}\n```\n"
        f"Reason: {description}\n\n"
        f"Reply `{prefix}approve` to execute this one operation, "
        f"`{prefix}approve session` to approve this pattern for the session, "
        f"`{prefix}approve always` to approve permanently, or `{prefix}deny` to cancel."
    )


def notifier(
    loop: asyncio.AbstractEventLoop,
    adapter: Any,
    chat_id: str,
    key: str,
    metadata: dict[str, Any] | None = None,
) -> Callable[[dict[str, Any]], None]:
    """The notify callback of chat ``key`` (``tools.approval.register_gateway_notify``): from
    the waiting turn's thread, it shows the request in the chat through the adapter on the
    gateway's loop, its buttons first, Hermes' text when it has none or they fail."""

    def send(coro: Any, what: str) -> bool:
        future = safe_schedule_threadsafe(coro, loop, logger=logger, log_message=what)
        if future is None:
            return False
        result = future.result(timeout=_SEND_TIMEOUT)
        return bool(getattr(result, "success", True))

    def notify(data: dict[str, Any]) -> None:
        command = str(data.get("command", ""))
        description = str(data.get("description", "") or "dangerous command")
        if getattr(type(adapter), "send_exec_approval", None) is not None:
            try:
                if send(
                    adapter.send_exec_approval(
                        chat_id=chat_id,
                        command=command,
                        session_key=key,
                        description=description,
                        metadata=metadata,
                    ),
                    "gateway: send_exec_approval not scheduled",
                ):
                    return
            except Exception as exc:
                logger.warning("gateway: approval buttons failed, sending text: %s", exc)
        prefix = str(getattr(adapter, "typed_command_prefix", "/") or "/")
        if not send(
            adapter.send(chat_id, prompt_text(command, description, prefix), metadata=metadata),
            "gateway: approval request not scheduled",
        ):
            raise RuntimeError("the approval request could not be sent to the chat")

    return notify

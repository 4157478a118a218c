"""The approval gate: a person answers when a ``pre_tool_call`` decision says ``approve``.

``pre_approval_request`` and ``post_approval_response`` fire around the question. The gate
fails closed: no terminal, end of input, an unknown answer or an approver that raises all mean
"deny", and a denied call is blocked.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.calling.facade import Hooks

__all__ = [
    "APPROVING_CHOICES",
    "ApprovalRequest",
    "Approver",
    "TerminalApprover",
    "ask_approval",
    "deny_all",
]

logger = logging.getLogger(__name__)

APPROVING_CHOICES: Final = frozenset({"once", "session", "always"})
"""Answers that let the call run; every other answer blocks it."""

_KNOWN_CHOICES: Final = APPROVING_CHOICES | {"deny", "timeout", "cancelled"}


@attrs.frozen
class ApprovalRequest:
    """One question put to a person.

    :param tool_name: the tool that wants to run.
    :param args: the arguments it would run with (after every ``modify``).
    :param command: what is shown: the command line for ``terminal``, else the call.
    :param description: why approval is needed (the deciding plugin's message).
    :param pattern_key: the rule that asked (``rule_key``, or ``plugin:<key>``).
    :param session_key: the session asking.
    :param surface: ``"cli"`` or ``"gateway"``.
    """

    tool_name: str
    args: dict[str, Any]
    command: str
    description: str
    pattern_key: str
    session_key: str = ""
    surface: str = "cli"
    turn_id: str = ""
    tool_call_id: str = ""


Approver = Callable[[ApprovalRequest], str]
"""Answers a request with a choice: ``"once"``, ``"session"``, ``"always"`` or ``"deny"``."""


def deny_all(request: ApprovalRequest) -> str:
    """The approver of hosts with nobody to ask: every request is denied."""
    return "deny"


class TerminalApprover:
    """Asks on the terminal: ``y`` approves once, ``s`` for the session, anything else denies.

    :param stdin: where the answer is read (``sys.stdin`` by default); when it is not a
        terminal nobody can answer, so the request is denied without asking.
    :param stdout: where the question is written (``sys.stderr`` by default).
    """

    def __init__(self, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:
        self._stdin = stdin
        self._stdout = stdout

    def __call__(self, request: ApprovalRequest) -> str:
        stdin = self._stdin or sys.stdin
        stdout = self._stdout or sys.stderr
        try:
            interactive = stdin.isatty()
        except (AttributeError, ValueError):
            interactive = False
        if not interactive:
            logger.info("approval for %s denied: no terminal to ask on", request.tool_name)
            return "deny"
        stdout.write(
            f"\n[approval] {request.description}\n  {request.tool_name}: {request.command}\n"
            "Allow it? [y]es once / [s]ession / [N]o: "
        )
        stdout.flush()
        answer = stdin.readline().strip().lower()
        if answer in ("y", "yes"):
            return "once"
        if answer in ("s", "session"):
            return "session"
        return "deny"


def ask_approval(hooks: Hooks, approver: Approver, request: ApprovalRequest) -> str:
    """Fire the approval hooks around ``approver`` and return its choice (``deny`` on failure)."""
    common: dict[str, Any] = {
        "command": request.command,
        "description": request.description,
        "pattern_key": request.pattern_key,
        "pattern_keys": [request.pattern_key],
        "session_key": request.session_key,
        "surface": request.surface,
        "turn_id": request.turn_id,
        "tool_call_id": request.tool_call_id,
    }
    hooks.pre_approval_request(telemetry_schema_version=TELEMETRY_SCHEMA_VERSION, **common)
    try:
        choice = approver(request)
    except Exception:
        logger.warning("the approver failed; denying %s", request.tool_name, exc_info=True)
        choice = "deny"
    if choice not in _KNOWN_CHOICES:
        logger.warning("the approver answered %r; treating it as 'deny'", choice)
        choice = "deny"
    hooks.post_approval_response(
        telemetry_schema_version=TELEMETRY_SCHEMA_VERSION, **common, choice=choice, decided_by=None
    )
    return choice

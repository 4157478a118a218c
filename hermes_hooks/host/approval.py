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
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "APPROVAL_TIMEOUT",
    "APPROVING_CHOICES",
    "ApprovalRequest",
    "Approver",
    "TerminalApprover",
    "ask_approval",
    "deny_all",
    "through_transport",
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


APPROVAL_TIMEOUT: Final = 300.0
"""Seconds a transport has to answer when ``approvals.timeout`` is unset (Hermes: 300)."""


def _transport_settings(pm: PluginManager) -> tuple[str, str | None, float]:
    """``security.approval.transport`` (``builtin`` by default), its ``transport_fallback``,
    and ``approvals.timeout``, read now; a malformed value counts as unset."""
    from hermes_hooks.plugins.configfile import load_config

    try:
        config = load_config(pm.hermes_home)
    except Exception as exc:  # the gate fails closed further on; the prompt stays the host's
        logger.warning("approval settings not read (%s); the built-in approver answers", exc)
        return "builtin", None, APPROVAL_TIMEOUT
    security = config.get("security")
    approval = security.get("approval") if isinstance(security, dict) else None
    approval = approval if isinstance(approval, dict) else {}
    name = approval.get("transport")
    fallback = approval.get("transport_fallback")
    approvals = config.get("approvals")
    raw = approvals.get("timeout") if isinstance(approvals, dict) else None
    timeout = (
        float(raw)
        if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0
        else APPROVAL_TIMEOUT
    )
    clean = name.strip().lower() if isinstance(name, str) and name.strip() else "builtin"
    return clean, fallback if isinstance(fallback, str) else None, timeout


def through_transport(pm: PluginManager, builtin: Approver) -> Approver:
    """Return the approver the gate uses on ``pm``: the plugin transport
    ``security.approval.transport`` selects (Hermes' rule: a selected transport replaces
    the built-in prompt), else ``builtin``.

    The transport is shown a redacted request (the plugins' redaction patterns on the command
    and the description) and answers within ``approvals.timeout``; an unregistered transport,
    a timeout, a raise or a malformed answer denies, unless ``transport_fallback: builtin``
    lets the built-in approver answer instead.
    """

    name, fallback, timeout = _transport_settings(pm)
    if name == "builtin":
        return builtin

    def approve(request: ApprovalRequest) -> str:
        from hermes_hooks.plugins.approval_transport import (
            ApprovalRequest as TransportRequest,
            invoke_approval_transport,
        )
        from hermes_hooks.plugins.newer_ctx import extras, redact_everywhere

        registered = extras(pm).approval_transports.get(name)
        if registered is None:
            import difflib

            failure = "unavailable"
            known = sorted(extras(pm).approval_transports)
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            logger.warning(
                "approval transport %r is selected (security.approval.transport) but not "
                "registered%s; registered: %s",
                name,
                f" (did you mean {close[0]!r}?)" if close else "",
                ", ".join(known) or "none",
            )
        else:
            try:
                shown = TransportRequest.create(
                    command=redact_everywhere(request.command),
                    description=redact_everywhere(request.description),
                    pattern_key=request.pattern_key,
                    pattern_keys=(request.pattern_key,),
                    session_key=request.session_key,
                    surface=request.surface,
                    allow_session=True,
                    allow_permanent=True,
                    timeout_seconds=timeout,
                )
            except Exception:  # never the raw text: deny without calling the plugin
                logger.warning("approval request for transport %r not built; denied", name)
                return "deny"
            result = invoke_approval_transport(registered[1], shown, timeout_seconds=timeout)
            if result.failure is None:
                return result.choice
            failure = result.failure
            logger.warning(
                "approval transport %r (plugin %r) failed (%s): %s denied",
                name,
                registered[0],
                failure,
                request.tool_name,
            )
        if fallback == "builtin":
            return builtin(request)
        return "deny"

    approve.surface = f"transport:{name}"  # type: ignore[attr-defined]  # what the hooks see
    return approve


def ask_approval(hooks: Hooks, approver: Approver, request: ApprovalRequest) -> str:
    """Fire the approval hooks around ``approver`` and return its choice (``deny`` on failure)."""
    common: dict[str, Any] = {
        "command": request.command,
        "description": request.description,
        "pattern_key": request.pattern_key,
        "pattern_keys": [request.pattern_key],
        "session_key": request.session_key,
        # Hermes: a selected transport's requests are reported as surface "transport:<name>".
        "surface": getattr(approver, "surface", None) or request.surface,
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

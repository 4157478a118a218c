"""Hermes' ``hermes_cli.approval_transport``: the approval transport contract.

The same objects as :mod:`hermes_hooks.plugins.approval_transport`: a transport registered
with ``ctx.register_approval_transport(name, present_fn)`` is shown an :class:`ApprovalRequest`
and answers ``request.respond(choice)`` (an :class:`ApprovalDecision`).
"""

from __future__ import annotations

from hermes_hooks.plugins.approval_transport import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalTransportResult,
    invoke_approval_transport,
)

__all__ = [
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalTransportResult",
    "invoke_approval_transport",
]

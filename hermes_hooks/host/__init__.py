"""The reference host: an agent loop that fires every hook at its place, with its combine rule.

Importing this package does nothing; each name is imported on first use.

- :class:`Session` runs turns: the model, the tool loop, approvals, slash commands, subagents
  and the ``inject_message`` queue;
- :class:`Gateway` takes inbound :class:`MessageEvent` objects and routes them to a session per
  sender;
- :func:`create_manager` builds a plugin manager with the host's tools, then loads plugins.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_hooks.host.approval import ApprovalRequest, Approver, TerminalApprover
    from hermes_hooks.host.gateway import DispatchOutcome, Gateway, MessageEvent, SessionStore
    from hermes_hooks.host.records import ToolCallRecord, TurnResult
    from hermes_hooks.host.runtime import create_manager, load_model
    from hermes_hooks.host.session import Session
    from hermes_hooks.host.tools import install_builtin_tools, record_changed_path

__all__ = [
    "ApprovalRequest",
    "Approver",
    "DispatchOutcome",
    "Gateway",
    "MessageEvent",
    "Session",
    "SessionStore",
    "TerminalApprover",
    "ToolCallRecord",
    "TurnResult",
    "create_manager",
    "install_builtin_tools",
    "load_model",
    "record_changed_path",
]

_LAZY: dict[str, str] = {
    "ApprovalRequest": "hermes_hooks.host.approval",
    "Approver": "hermes_hooks.host.approval",
    "DispatchOutcome": "hermes_hooks.host.gateway",
    "Gateway": "hermes_hooks.host.gateway",
    "MessageEvent": "hermes_hooks.host.gateway",
    "Session": "hermes_hooks.host.session",
    "SessionStore": "hermes_hooks.host.gateway",
    "TerminalApprover": "hermes_hooks.host.approval",
    "ToolCallRecord": "hermes_hooks.host.records",
    "TurnResult": "hermes_hooks.host.records",
    "create_manager": "hermes_hooks.host.runtime",
    "install_builtin_tools": "hermes_hooks.host.tools",
    "load_model": "hermes_hooks.host.runtime",
    "record_changed_path": "hermes_hooks.host.tools",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'hermes_hooks.host' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""The reference host: an agent loop that fires every hook at its place, with its combine rule.

Importing this package does nothing; each name is imported on first use.

- :class:`Session` runs turns: the model, the tool loop, approvals, slash commands, subagents
  and the ``inject_message`` queue;
- :class:`Gateway` takes inbound :class:`MessageEvent` objects and routes them to a session per
  sender;
- :func:`create_manager` builds a plugin manager with the host's tools, then loads plugins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_hooks.spec.exports import lazy_module

if TYPE_CHECKING:
    # The public names, each once: `__all__` and the lazy imports are read from these lines.
    from hermes_hooks.host.approval import (
        ApprovalRequest as ApprovalRequest,
        Approver as Approver,
        TerminalApprover as TerminalApprover,
    )
    from hermes_hooks.host.gateway import (
        DispatchOutcome as DispatchOutcome,
        Gateway as Gateway,
        MessageEvent as MessageEvent,
        SessionStore as SessionStore,
    )
    from hermes_hooks.host.records import (
        ToolCallRecord as ToolCallRecord,
        TurnResult as TurnResult,
    )
    from hermes_hooks.host.runtime import (
        create_manager as create_manager,
        load_model as load_model,
    )
    from hermes_hooks.host.session import Session as Session
    from hermes_hooks.host.tools import (
        install_builtin_tools as install_builtin_tools,
        record_changed_path as record_changed_path,
    )

__getattr__, __dir__ = lazy_module(globals())

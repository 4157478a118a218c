"""The reference host: an agent loop that fires every hook at its place, with its combine rule.

Importing this package does nothing; each name is imported on first use.

- :class:`Session` runs turns: the model, the tool loop, approvals, slash commands, subagents
  and the ``inject_message`` queue;
- :class:`Gateway` takes inbound :class:`MessageEvent` objects and routes them to a session per
  sender;
- :func:`create_manager` builds a plugin manager with the host's tools, then loads plugins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_hooks.spec.exports import lazy_names, load

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

_lazy: dict[str, str] | None = None


def _public_names() -> dict[str, str]:
    global _lazy
    if _lazy is None:
        _lazy = lazy_names(__file__)
    return _lazy


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value: Any = sorted(_public_names())
    else:
        target = _public_names().get(name)
        if target is None:
            raise AttributeError(f"module 'hermes_hooks.host' has no attribute {name!r}")
        value = load(target, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_public_names()))

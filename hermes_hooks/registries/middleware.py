"""The middleware each plugin registered (``ctx.register_middleware``), by kind, in order.

A plugin's middleware goes when it unloads, like its tools. The chain itself runs in
:mod:`hermes_hooks.calling.middleware`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from hermes_hooks.calling.middleware import KINDS, MiddlewareEntry, canonical_kind

__all__ = ["MiddlewareRegistry"]


class MiddlewareRegistry:
    """Middleware callbacks by kind, in registration order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, list[MiddlewareEntry]] = {kind: [] for kind in KINDS}

    def set_acting_plugins(self, lookup: Callable[[], frozenset[str]] | None) -> None:
        """Accepted for the manager's registries; a plugin registers only through its ctx."""

    def add(self, owner: str, kind: str, callback: Callable[..., Any]) -> MiddlewareEntry:
        """Register ``callback`` as ``owner``'s middleware of ``kind`` (an alias is accepted).

        :raises ValueError: an unknown kind, or a callback that is not callable.
        """
        name = canonical_kind(kind)
        if not callable(callback):
            raise ValueError(f"middleware for {name!r} must be callable, found {callback!r}")
        entry = MiddlewareEntry(owner, name, callback)
        with self._lock:
            self._entries[name] = [*self._entries[name], entry]
        return entry

    def entries(self, kind: str) -> list[MiddlewareEntry]:
        """Return the middleware of ``kind`` (or its alias), in order."""
        return list(self._entries[canonical_kind(kind)])

    def has(self, kind: str) -> bool:
        """Tell whether any middleware of ``kind`` is registered."""
        return bool(self._entries[canonical_kind(kind)])

    def names(self, *, owner: str | None = None) -> list[str]:
        """Return ``kind:callback`` for each middleware (of ``owner`` when given)."""
        return [
            f"{entry.kind}:{entry.name}"
            for kind in KINDS
            for entry in self._entries[kind]
            if owner is None or entry.owner == owner
        ]

    def remove_owner(self, owner: str) -> list[str]:
        """Remove ``owner``'s middleware; return what was removed."""
        gone = self.names(owner=owner)
        with self._lock:
            for kind in KINDS:
                self._entries[kind] = [e for e in self._entries[kind] if e.owner != owner]
        return gone

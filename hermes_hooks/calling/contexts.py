"""The plugin side of context variables: one ``Context`` per host thread (per task when async).

A bounded call runs on a worker thread, which cannot enter its caller's own ``Context``. So each
host thread (each task) has one plugin-side context, into which the host's variables are copied
before each bounded call; what the plugins set stays there. What holds and what does not:
docs/explanation/async-and-timeouts.md#context-variables.
"""

from __future__ import annotations

import contextvars
import sys
import threading
import weakref
from typing import Any, Final

from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = ["PluginSide", "for_call", "forget_all"]

_MISSING: Final = object()


class PluginSide:
    """The plugin-side context of one host thread or task: :attr:`context`."""

    __slots__ = ("context", "host", "tokens")

    def __init__(self, host: contextvars.Context) -> None:
        self.context = contextvars.Context()
        self.host = host  # the host's variables as last copied in
        # The token of the first set of each host variable: resetting it removes the variable
        # again when the host removes it.
        self.tokens: dict[contextvars.ContextVar[Any], contextvars.Token[Any]] = {}
        self.context.run(self._copy_all, host)

    def _copy_all(self, source: contextvars.Context) -> None:
        for var, value in source.items():
            self.tokens[var] = var.set(value)

    def sync(self, host: contextvars.Context) -> None:
        """Copy the host's variables that changed since the last call into the context."""
        if host != self.host:  # the same storage when nothing changed: one comparison
            self.context.run(self._apply, host)
            self.host = host

    def _apply(self, host: contextvars.Context) -> None:
        last, tokens = self.host, self.tokens
        for var, value in host.items():
            if last.get(var, _MISSING) is not value:
                tokens.setdefault(var, var.set(value))
        for var in last:
            if var not in host and var in tokens:
                var.reset(tokens.pop(var))  # back to the plugins' value before the host's

    def replace(self, values: contextvars.Context | None = None) -> None:
        """Give up the context (a timed-out call still runs in it) for a fresh one, same values.

        :param values: the values to keep, when not the abandoned context's own (a copy taken
            before the call: what it set before it was abandoned is then not kept).
        """
        old, fresh, from_host = values or self.context, contextvars.Context(), self.tokens
        tokens: dict[contextvars.ContextVar[Any], contextvars.Token[Any]] = {}

        def copy() -> None:
            for var, value in old.items():
                token = var.set(value)
                if var in from_host:
                    tokens[var] = token

        fresh.run(copy)
        self.context, self.tokens = fresh, tokens


class _PerThread(threading.local):
    slot: PluginSide | None = None


_threads = _PerThread()
_tasks: weakref.WeakKeyDictionary[object, PluginSide] = weakref.WeakKeyDictionary()


def for_call() -> PluginSide:
    """Return the plugin-side context of the calling thread (or task), synced with its host."""
    host = contextvars.copy_context()
    asyncio: Any = sys.modules.get("asyncio")  # never imported for this
    loop = asyncio._get_running_loop() if asyncio is not None else None
    task = asyncio.current_task(loop) if loop is not None else None
    slot = _threads.slot if task is None else _tasks.get(task)
    if slot is None:
        slot = PluginSide(host)
        if task is None:
            _threads.slot = slot
        else:
            _tasks[task] = slot
        return slot
    slot.sync(host)
    return slot


def forget_all() -> None:
    """Drop every plugin-side context (the next call of each thread starts a fresh one)."""
    global _threads
    _threads = _PerThread()
    _tasks.clear()

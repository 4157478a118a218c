"""The plugin side of context variables: one ``Context`` per host thread (per task when async).

Inline, a hook implementation runs in its caller's context: a ``ContextVar`` it sets is there in
its next hook, and the token of that ``set`` resets. A bounded call runs on a worker thread,
and CPython has no way to enter the caller's own ``Context`` from another thread. So each host
thread (each task, on the async path) gets one plugin-side :class:`contextvars.Context`, kept
for as long as the thread (the task) lives. Before each bounded call, the host's variables are
copied into it; the call runs there; what the plugins set stays there. Hence:

- a variable a plugin set in one hook is there in its next hook from the same host thread, and
  its token resets without error (an OpenTelemetry span attached in ``pre_api_request`` is
  detached in ``post_api_request``);
- the host's variables are seen by the plugins as they are at each call: a variable the host
  changed since the last call overrides what a plugin set it to, and one the host reset is
  reset for the plugins too;
- the plugins' variables are not seen by the host's own code;
- after a timeout the abandoned call still runs in the context it had, so that context is
  replaced by a fresh one holding the same values: tokens made before the timeout no longer
  reset.

Copying is cheap when nothing changed (one comparison of the two contexts, which share their
storage), and costs one step per variable of the host otherwise.
"""

from __future__ import annotations

import contextvars
import os
import sys
import threading
import weakref
from typing import Any, Final

from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

__all__ = ["PluginSide", "for_call", "forget_all"]

_MISSING: Final = object()


class PluginSide:
    """The plugin-side context of one host thread or task.

    :ivar context: the ``Context`` the plugins' calls run in.
    """

    __slots__ = ("__weakref__", "context", "host", "tokens")

    def __init__(self, host: contextvars.Context) -> None:
        self.context = contextvars.Context()
        #: The host's variables as last copied in.
        self.host = host
        #: The token of the first ``set`` of each host variable copied in: resetting it
        #: removes the variable again when the host removes it.
        self.tokens: dict[contextvars.ContextVar[Any], contextvars.Token[Any]] = {}
        self.context.run(self._copy_all, host)

    def _copy_all(self, source: contextvars.Context) -> None:
        tokens = self.tokens
        for var, value in source.items():
            tokens[var] = var.set(value)

    def sync(self, host: contextvars.Context) -> None:
        """Copy the host's variables that changed since the last call into the context."""
        if host == self.host:  # same storage: nothing changed (the common case, O(1))
            return
        self.context.run(self._apply, host)
        self.host = host

    def _apply(self, host: contextvars.Context) -> None:
        last, tokens = self.host, self.tokens
        for var, value in host.items():
            if last.get(var, _MISSING) is not value:
                token = var.set(value)
                tokens.setdefault(var, token)
        for var in last:
            if var not in host and var in tokens:
                # Back to what the plugins' side had before the host's first value came in.
                var.reset(tokens.pop(var))

    def replace(self) -> None:
        """Give up the context (a timed-out call still runs in it) for a fresh one, same values."""
        old = self.context
        fresh = contextvars.Context()
        tokens: dict[contextvars.ContextVar[Any], contextvars.Token[Any]] = {}
        from_host = self.tokens

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
_tasks_lock = threading.Lock()


def _current_task() -> object | None:
    """Return the running asyncio task of this thread, without importing asyncio."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    loop = asyncio._get_running_loop()
    return None if loop is None else asyncio.current_task(loop)


def for_call() -> PluginSide:
    """Return the plugin-side context of the calling thread (or task), synced with its host."""
    host = contextvars.copy_context()
    task = _current_task()
    if task is None:
        slot = _threads.slot
        if slot is None:
            slot = _threads.slot = PluginSide(host)
            return slot
    else:
        with _tasks_lock:
            slot = _tasks.get(task)
            if slot is None:
                slot = _tasks[task] = PluginSide(host)
                return slot
    slot.sync(host)
    return slot


def forget_all() -> None:
    """Drop every plugin-side context (the next call of each thread starts a fresh one)."""
    global _threads
    _threads = _PerThread()
    with _tasks_lock:
        _tasks.clear()


def _forget_after_fork() -> None:
    global _tasks_lock
    _tasks_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)

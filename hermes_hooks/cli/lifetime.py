"""The end of a ``hermes`` command: a plugin's thread does not keep the process alive for ever.

Python waits for every non-daemon thread before it exits, so one that a plugin started and
never ended kept ``hermes -z`` running after it printed its answer, and nothing said why. When
the command is done, :func:`finish` gives such threads a short grace period
(:data:`GRACE_SECONDS`) to end, then names what is left, with the plugin whose code started
each thread (and the signal handlers plugins changed, which may be why it waits), and exits
anyway with the command's exit code.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["GRACE_SECONDS", "finish", "leftover_threads", "watch"]

GRACE_SECONDS: Final = 2.0
"""How long the command waits for non-daemon threads once it is done."""

_SIGNALS: Final = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1")
    if hasattr(signal, name)
)
_managers: weakref.WeakSet[PluginManager] = weakref.WeakSet()
_handlers: dict[int, object] = {}


def watch(pm: PluginManager) -> None:
    """Remember ``pm`` (to name the plugins behind leftover threads) and the signal handlers
    before its plugins load (to name those they changed)."""
    _managers.add(pm)
    if not _handlers and threading.current_thread() is threading.main_thread():
        for number in _SIGNALS:
            _handlers[number] = signal.getsignal(number)


def _code_of(thread: threading.Thread) -> Callable[..., Any] | None:
    # Thread keeps its target in an attribute of its own; a subclass overrides run instead.
    target = getattr(thread, "_target", None)
    if callable(target):
        return target  # type: ignore[no-any-return]
    run = type(thread).run
    return run if run is not threading.Thread.run else None


def _owner_of(function: Callable[..., Any] | None) -> str | None:
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    if code is None:
        return None
    source = Path(code.co_filename).resolve()
    for pm in list(_managers):
        for info in pm.list_plugins():
            if info.path and source.is_relative_to(Path(info.path).resolve()):
                return info.key
    return None


def _describe(function: Callable[..., Any] | None) -> str:
    if function is None:
        return "unknown code"
    name = getattr(function, "__qualname__", repr(function))
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return f"{name} ({code.co_filename}:{code.co_firstlineno})" if code else name


def leftover_threads() -> list[threading.Thread]:
    """Return the live non-daemon threads other than the main one."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]


def _changed_handlers() -> list[str]:
    found = []
    for number, before in _handlers.items():
        now = signal.getsignal(number)
        if now is not before and callable(now):
            owner = _owner_of(now)
            who = f"plugin {owner!r}" if owner else "code outside any plugin"
            found.append(f"{signal.Signals(number).name} handler set by {who}: {_describe(now)}")
    return found


def finish(code: int, *, grace: float = GRACE_SECONDS) -> None:
    """End the command with ``code``: wait ``grace`` seconds for leftover threads, then exit.

    Returns (and Python exits as usual) when no thread is left; otherwise reports each thread
    on stderr and ends the process at once with ``code``.
    """
    deadline = time.monotonic() + grace
    for thread in leftover_threads():
        thread.join(max(deadline - time.monotonic(), 0.0))
    left = leftover_threads()
    if not left:
        return
    lines = [f"Warning: exiting although {len(left)} thread(s) still run:"]
    for thread in left:
        function = _code_of(thread)
        owner = _owner_of(function)
        who = f"started by plugin {owner!r}" if owner else "not started by a plugin"
        lines.append(f"  thread {thread.name!r}, {who}: {_describe(function)}")
    lines.extend(f"  {line}" for line in _changed_handlers())
    lines.append("  (a plugin's thread should be a daemon, or end when the session ends)")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    print("\n".join(lines), file=sys.stderr, flush=True)
    os._exit(code)

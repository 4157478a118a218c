"""The running host's hook figures, counted from pluggy's public call monitoring.

:class:`HookCounters` attaches to a manager with ``pm.add_hookcall_monitoring`` (pluggy's own
API: nothing of the calling layer is touched) and counts, since it was attached, each hook's
calls and the time they took, and for each implementation how many calls reached it. Failures
and timeouts are the manager's own counts (``PluginInfo.hook_errors`` / ``hook_timeouts``).

When the calling layer offers a per-implementation observer (``pm.add_call_observer(fn)``,
``fn(hook_name, plugin_key, seconds, outcome)``), the counters use it too and then know each
implementation's own time; without one, time is per hook call.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

__all__ = ["HookCounters", "ImplFigures"]


@attrs.define
class ImplFigures:
    """What was counted for one implementation of one hook."""

    calls: int = 0
    seconds: float = 0.0
    errors: int = 0
    timeouts: int = 0
    timed: bool = False
    """Its own time is known (the calling layer reported it), not only its hook's."""


@attrs.define
class _HookFigures:
    calls: int = 0
    seconds: float = 0.0
    impls: dict[str, ImplFigures] = attrs.Factory(dict)


class HookCounters:
    """Calls, time and reach of every hook of one manager since :meth:`attach`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hooks: dict[str, _HookFigures] = {}
        # Per thread, and per task in async code: concurrent async calls interleave on one thread.
        self._started: contextvars.ContextVar[tuple[float, ...]] = contextvars.ContextVar(
            "hermes_hook_counters_started", default=()
        )
        self._undo: list[Callable[[], object]] = []
        self.started = time.time()

    def attach(self, pm: Any) -> HookCounters:
        """Start counting ``pm``'s hook calls; returns ``self``."""
        self._undo.append(pm.add_hookcall_monitoring(self._before, self._after))
        observe = getattr(pm, "add_call_observer", None)
        if callable(observe):
            undo = observe(self._observed)
            if callable(undo):
                self._undo.append(undo)
        return self

    def detach(self) -> None:
        """Stop counting."""
        while self._undo:
            self._undo.pop()()

    def _before(self, hook_name: str, hook_impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        self._started.set((*self._started.get(), time.perf_counter()))

    def _after(
        self, outcome: object, hook_name: str, hook_impls: Sequence[Any], kwargs: object
    ) -> None:
        started = self._started.get()
        elapsed = time.perf_counter() - started[-1] if started else 0.0
        self._started.set(started[:-1])
        with self._lock:
            figures = self._hooks.setdefault(hook_name, _HookFigures())
            figures.calls += 1
            figures.seconds += elapsed
            for impl in hook_impls:
                name = str(getattr(impl, "plugin_name", "?"))
                impl_figures = figures.impls.setdefault(name, ImplFigures())
                impl_figures.calls += 1

    def _observed(self, hook_name: str, plugin_key: str, seconds: float, outcome: str) -> None:
        with self._lock:
            figures = self._hooks.setdefault(hook_name, _HookFigures())
            impl = figures.impls.setdefault(plugin_key, ImplFigures())
            impl.timed = True
            impl.seconds += seconds
            if outcome == "error":
                impl.errors += 1
            elif outcome == "timeout":
                impl.timeouts += 1

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Return ``{hook: {"calls", "seconds", "impls": {plugin: ImplFigures as dict}}}``."""
        with self._lock:
            return {
                name: {
                    "calls": figures.calls,
                    "seconds": figures.seconds,
                    "impls": {key: attrs.asdict(impl) for key, impl in figures.impls.items()},
                }
                for name, figures in self._hooks.items()
            }

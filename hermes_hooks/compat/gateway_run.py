"""Hermes' ``gateway.run``, as far as plugins reach into it: the running gateway.

Plugins that act outside a turn (a tool sending to a chat, a background watcher) find the
gateway Hermes runs in their process with ``from gateway.run import _gateway_runner_ref;
runner = _gateway_runner_ref()``, then use ``runner.adapters`` (keyed by ``Platform``) and
``runner._gateway_loop``. Here the reference answers the ``hermes gateway run`` of this process
(:class:`hermes_hooks.host.gateway_runner.GatewayRunner`) seen through :class:`RunnerView`, or
``None`` when no gateway runs.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

from hermes_hooks.compat.gateway_config import Platform

__all__ = ["RunnerView", "_gateway_runner_ref", "set_running_gateway"]

_lock = threading.Lock()
_running: weakref.ref[Any] | None = None


class RunnerView:
    """What Hermes' plugins read of the running gateway, over this host's runner."""

    def __init__(self, runner: Any) -> None:
        self._runner = runner

    @property
    def adapters(self) -> dict[Platform, Any]:
        """The running adapters by ``Platform`` member (a snapshot)."""
        return {Platform(name): adapter for name, adapter in dict(self._runner.adapters).items()}

    @property
    def _gateway_loop(self) -> asyncio.AbstractEventLoop | None:
        loop: asyncio.AbstractEventLoop | None = self._runner.loop
        return loop

    @property
    def _running(self) -> bool:
        return self._runner.loop is not None and not self._runner.stopping

    @property
    def _draining(self) -> bool:
        return bool(self._runner.stopping)

    @property
    def config(self) -> Any:
        """The gateway's ``GatewayConfig``."""
        return self._runner.config


def set_running_gateway(runner: Any | None, *, only_if: Any | None = None) -> None:
    """Make ``runner`` the gateway :func:`_gateway_runner_ref` answers (``None``: none).

    :param only_if: change it only while this runner is the one recorded (a stopping gateway
        clears its own record, never a newer gateway's).
    """
    global _running
    with _lock:
        current = _running() if _running is not None else None
        if only_if is not None and current is not only_if:
            return
        _running = weakref.ref(runner) if runner is not None else None


def _gateway_runner_ref() -> RunnerView | None:
    """The gateway running in this process, or ``None`` (Hermes' weak reference, called)."""
    with _lock:
        ref = _running
    runner = ref() if ref is not None else None
    return RunnerView(runner) if runner is not None else None

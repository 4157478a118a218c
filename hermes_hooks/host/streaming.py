"""The stream hooks, off the token path: one bounded queue and one worker per implementation.

``on_stream_start``, ``on_stream_delta``, ``on_stream_end`` and ``on_interim_message`` are
observers of text the person is watching arrive, so calling them inline would make every token
wait for the slowest plugin. As in Hermes (``agent.plugin_stream_hooks``), the host puts each
event on a queue per implementation instead, and a worker thread per implementation calls it:
putting an event costs the token path a deque append and a wake-up, whatever the plugins do. A
queue holds :data:`QUEUE_SIZE` events; when an implementation falls that far behind, its own
oldest event is dropped (counted in :attr:`StreamObservers.dropped`), never another's.

The implementations are pluggy's, already guarded by the calling layer: one that raises is
logged and counted on its plugin like any hook failure, and its worker goes on with the next
event. The workers are daemon threads, started on first use and stopped by
:meth:`StreamObservers.close` (a session's close) after the events already queued were
delivered, within :data:`DRAIN_TIMEOUT`.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import pluggy

from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["DRAIN_TIMEOUT", "QUEUE_SIZE", "STREAM_HOOKS", "StreamObservers", "StreamRun"]

logger = logging.getLogger(__name__)

QUEUE_SIZE: Final = 1024
"""The events one implementation may fall behind by before its oldest is dropped."""

DRAIN_TIMEOUT: Final = 5.0
"""How long closing waits for the workers to deliver what is queued, in seconds."""

STREAM_HOOKS: Final = ("on_stream_start", "on_stream_delta", "on_stream_end", "on_interim_message")


class _Worker:
    """One implementation's queue and the thread that delivers it."""

    def __init__(self, hook: str, impl: pluggy.HookImpl, owner: StreamObservers) -> None:
        self.hook = hook
        self.impl = impl
        self.owner = owner
        self.queue: collections.deque[Mapping[str, Any]] = collections.deque(maxlen=QUEUE_SIZE)
        self.wake = threading.Event()
        self.idle = threading.Event()
        self.idle.set()
        self.stopping = False
        self.thread = threading.Thread(
            target=self._run, name=f"stream-hook:{impl.plugin_name}:{hook}", daemon=True
        )
        self.thread.start()

    def put(self, payload: Mapping[str, Any]) -> None:
        """Queue ``payload`` (the token path: an append and a wake-up)."""
        if len(self.queue) == QUEUE_SIZE:
            self.owner.dropped += 1
        self.idle.clear()
        self.queue.append(payload)
        self.wake.set()

    def _run(self) -> None:
        names = self.impl.argnames
        function = self.impl.function
        while True:
            self.wake.wait()
            self.wake.clear()
            while self.queue:
                payload = self.queue.popleft()
                try:
                    function(*[payload[name] for name in names])
                except Exception:  # the guard logs and counts; a strict manager re-raises
                    logger.debug("stream hook %s of %s failed", self.hook, self.impl.plugin_name)
            self.idle.set()
            if self.stopping and not self.queue:
                return


class StreamObservers:
    """The stream hooks' workers for one plugin manager.

    :param pm: the manager whose implementations are called.
    :param reasoning: whether reasoning deltas reach plugins (``plugins.stream_reasoning_deltas``).
    """

    def __init__(self, pm: PluginManager, *, reasoning: bool = False) -> None:
        self.pm = pm
        self.reasoning = reasoning
        self.dropped = 0
        self._workers: dict[tuple[str, int], _Worker] = {}
        self._lock = threading.Lock()

    def workers(self, hook: str) -> tuple[_Worker, ...]:
        """Return the workers of ``hook``'s current implementations, starting new ones."""
        caller: pluggy.HookCaller = getattr(self.pm.hook, hook)
        impls = [i for i in caller.get_hookimpls() if not (i.hookwrapper or i.wrapper)]
        with self._lock:
            found = []
            for impl in impls:
                key = (hook, id(impl))
                worker = self._workers.get(key)
                if worker is None or worker.impl is not impl:
                    worker = self._workers[key] = _Worker(hook, impl, self)
                found.append(worker)
            return tuple(found)

    def implemented(self, hooks: tuple[str, ...] = STREAM_HOOKS) -> bool:
        """Whether any plugin implements one of ``hooks``."""
        return any(getattr(self.pm.hook, hook).get_hookimpls() for hook in hooks)

    def wants_stream(self) -> bool:
        """Whether a plugin watches the stream itself (``on_interim_message`` alone does not
        make the host stream)."""
        return self.implemented(STREAM_HOOKS[:3])

    def start(self, **common: Any) -> StreamRun:
        """Fire ``on_stream_start`` and return the run its deltas and end go through.

        :param common: ``turn_id``, ``iteration``, ``session_id``, ``model``, ``provider`` and
            ``surface``.
        """
        run = StreamRun(self, {"telemetry_schema_version": TELEMETRY_SCHEMA_VERSION, **common})
        run.emit(self.workers("on_stream_start"), {})
        return run

    def interim(self, text: str, *, already_streamed: bool, **common: Any) -> None:
        """Fire ``on_interim_message`` for text the model said beside its tool calls."""
        payload = {
            "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
            **common,
            "text": text,
            "already_streamed": already_streamed,
        }
        for worker in self.workers("on_interim_message"):
            worker.put(payload)

    def flush(self, timeout: float = DRAIN_TIMEOUT) -> bool:
        """Wait until every queued event was delivered; return whether that happened in time."""
        with self._lock:
            workers = list(self._workers.values())
        per = timeout / max(len(workers), 1)
        return all(worker.idle.wait(per) for worker in workers)

    def close(self) -> None:
        """Deliver what is queued (within :data:`DRAIN_TIMEOUT`) and stop the workers."""
        with self._lock:
            workers = list(self._workers.values())
            self._workers.clear()
        for worker in workers:
            worker.stopping = True
            worker.wake.set()
        deadline = time.monotonic() + DRAIN_TIMEOUT
        for worker in workers:
            worker.thread.join(max(deadline - time.monotonic(), 0.0))


class StreamRun:
    """One streaming response: its common fields, and the delta workers snapshot at its start."""

    def __init__(self, owner: StreamObservers, common: dict[str, Any]) -> None:
        self.owner = owner
        self.common = common
        self._deltas = owner.workers("on_stream_delta")

    def emit(self, workers: tuple[_Worker, ...], extra: Mapping[str, Any]) -> None:
        if workers:
            payload = {**self.common, **extra}
            for worker in workers:
                worker.put(payload)

    def delta(self, text: str, kind: str = "text") -> None:
        """Queue ``on_stream_delta`` for ``text`` (on the token path: keep it cheap)."""
        if self._deltas and (kind == "text" or self.owner.reasoning):
            payload = dict(self.common)
            payload["delta"] = text
            payload["kind"] = kind
            for worker in self._deltas:
                worker.put(payload)

    def end(self, final_text: str, *, finished: bool, error: str | None = None) -> None:
        """Queue ``on_stream_end`` once the stream closed."""
        extra = {"final_text": final_text, "finished": finished, "error": error}
        self.emit(self.owner.workers("on_stream_end"), extra)

"""Reusable worker threads for bounded calls: the caller waits at most its bound, never joins.

A worker is a daemon thread that runs one :class:`Job` at a time, then waits for the next; after
:data:`IDLE_SECONDS` without work it exits. Idle workers are reused newest first, so a steady
stream of calls keeps one warm thread. A worker whose job was abandoned leaves the count of
:data:`MAX_WORKERS` at once, and exits when the job returns: the callers' caps on hung work bound
those threads, so hung plugins never fill the pool. See docs/explanation/async-and-timeouts.md.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.calling.tracebacks import hide_in_pytest

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

if TYPE_CHECKING:  # asyncio is imported where a call needs it: it costs ~25 ms at start-up
    import asyncio

__all__ = [
    "IDLE_SECONDS",
    "MAX_WORKERS",
    "Job",
    "WorkerUnavailableError",
    "live_workers",
    "shutdown_idle",
    "submit",
    "wait_until_done",
]

IDLE_SECONDS: float = 30.0
"""An idle worker exits after this many seconds without a job."""

MAX_WORKERS: int = 256
"""No more worker threads than this run or idle at once, abandoned ones aside; :func:`submit`
refuses beyond (a bounded call then runs inline). ``plugins.hook_worker_threads`` sets it."""

_STOP: Final = object()
_lock = threading.Lock()  # the pool, and each job's finished/abandoned hand-over
_idle: list[_Worker] = []
_live: set[_Worker] = set()
_abandoned = 0  # workers in _live whose job was abandoned: not counted against MAX_WORKERS


class WorkerUnavailableError(RuntimeError):
    """No worker thread could be had: :data:`MAX_WORKERS` are running, or the OS refused one."""


class Job:
    """One call of ``function(*args, **kwargs)`` on a worker, in ``context``: waited for with
    :meth:`wait`; a caller that stops waiting calls :meth:`abandon`."""

    __slots__ = ("_call", "_context", "_done", "_exit", "abandoned", "error", "finished", "value")

    def __init__(self, call: tuple[Any, ...], context: contextvars.Context) -> None:
        self._call: Any = call
        self._context = context
        self._done = threading.Lock()
        self._done.acquire()  # released when it is done
        self._exit: Callable[[], None] | None = None
        self.value: Any = None
        self.error: BaseException | None = None
        self.finished = self.abandoned = False

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds; return whether the job finished."""
        return self._done.acquire(timeout=timeout)

    def abandon(self, on_exit: Callable[[], None] | None = None) -> bool:
        """Give up on the job; return ``True`` when it is still running (else use its result).
        Its worker no longer counts against :data:`MAX_WORKERS`, and exits when it returns.

        :param on_exit: called on the worker when the abandoned job's function returns.
        """
        global _abandoned
        with _lock:
            if self.finished:
                return False
            if not self.abandoned:  # a job exists only once submit gave it a worker
                _abandoned += 1
            self.abandoned, self._exit = True, on_exit
            return True

    def result(self) -> Any:
        """Return what the function returned, or raise what it raised."""
        if self.error is not None:
            error, self.error = self.error, None  # no reference cycle through the traceback
            raise error
        return self.value

    def _run(self) -> None:
        function, args, kwargs = self._call
        self._call = None
        try:
            self.value = self._context.run(function, *args, **(kwargs or {}))
        except BaseException as exc:
            self.error = exc

    def _signal(self) -> None:
        if not self.abandoned:
            self._done.release()
        elif self._exit is not None:
            self._exit()


def _set_done(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_result(None)


async def wait_until_done(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], timeout: float
) -> None:
    """Return when ``future`` is done or ``timeout`` seconds have passed (``future`` untouched)."""
    waiter: asyncio.Future[None] = loop.create_future()
    timer = loop.call_later(timeout, _set_done, waiter)

    def wake(_: object) -> None:
        _set_done(waiter)

    future.add_done_callback(wake)
    try:
        await waiter
    finally:
        timer.cancel()
        future.remove_done_callback(wake)


class _Worker:
    __slots__ = ("jobs", "thread")

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="hermes-hooks-worker", daemon=True)

    def _serve(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with _lock:
                    if self in _idle:
                        _idle.remove(self)
                        _live.discard(self)
                        return
                continue  # a caller took this worker just now; its job is on the way
            if job is _STOP:
                return
            job._run()
            if not self._finish(job):
                return
            del job

    def _finish(self, job: Job) -> bool:
        """Mark ``job`` done and tell its caller; return whether this worker serves on."""
        global _abandoned
        with _lock:
            job.finished = True
            abandoned = job.abandoned
            if abandoned:  # it left the count when it was abandoned: it leaves the pool now
                _abandoned -= 1
                _live.discard(self)
            else:
                _idle.append(self)  # idle before the caller wakes: its next call reuses it
        job._signal()
        return not abandoned


def submit(
    function: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    context: contextvars.Context | None = None,
    beyond_limit: bool = False,
) -> Job:
    """Start ``function(*args, **kwargs)`` on an idle worker, or on a new one.

    :param context: the context to run it in; a copy of the caller's by default.
    :param beyond_limit: start a worker even past :data:`MAX_WORKERS` (for work that cannot run
        inline, and whose callers are few by nature).
    :raises WorkerUnavailableError: :data:`MAX_WORKERS` threads exist, or none could start.
    """
    job = Job((function, args, kwargs), contextvars.copy_context() if context is None else context)
    with _lock:
        worker = _idle.pop() if _idle else None
        new = worker is None
        if worker is None:
            if len(_live) - _abandoned >= MAX_WORKERS and not beyond_limit:
                raise WorkerUnavailableError(f"all {MAX_WORKERS} worker threads are busy")
            worker = _Worker()
            _live.add(worker)
    if new:
        try:
            worker.thread.start()
        except RuntimeError as exc:
            with _lock:
                _live.discard(worker)
            raise WorkerUnavailableError(f"cannot start a worker thread: {exc}") from exc
    worker.jobs.put(job)
    return job


def _forget_after_fork() -> None:
    """In a forked child only the forking thread exists: the pool starts empty again."""
    global _lock, _abandoned
    _lock = threading.Lock()
    _idle.clear()
    _live.clear()
    _abandoned = 0


os.register_at_fork(after_in_child=_forget_after_fork)


def live_workers() -> int:
    """Return how many worker threads exist (busy, idle, or abandoned and still running)."""
    with _lock:
        return len(_live)


def shutdown_idle() -> None:
    """Stop the idle workers now (busy ones stay until their job returns and they idle out)."""
    with _lock:
        stopping = list(_idle)
        _idle.clear()
        _live.difference_update(stopping)
    for worker in stopping:
        worker.jobs.put(_STOP)

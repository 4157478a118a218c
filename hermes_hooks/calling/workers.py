"""Reusable worker threads for bounded calls: the caller waits at most its bound, never joins.

A worker is a daemon thread that runs one :class:`Job` at a time and then waits on its own queue
for the next; after :data:`IDLE_SECONDS` without work it exits. Idle workers are reused newest
first, so a steady stream of calls keeps one warm thread. A job whose caller gave up keeps its
worker until the job's function returns: nothing can stop a running Python function from the
outside, so the callers (:mod:`hermes_hooks.calling.bounds`) decide how many such jobs they allow.
"""

from __future__ import annotations

import contextlib
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
"""No more worker threads than this exist at once; a call beyond it is refused."""

_THREAD_NAME: Final = "hermes-hooks-worker"
_STOP: Final = object()

# One lock for the pool and for the finished/abandoned hand-over of every job: both are a few
# attribute writes, and one lock keeps "finished" and "abandoned" from crossing.
_lock = threading.Lock()
_idle: list[_Worker] = []
_live: set[_Worker] = set()


class WorkerUnavailableError(RuntimeError):
    """No worker thread could be had: :data:`MAX_WORKERS` are running, or the OS refused one."""


class Job:
    """One call of ``function(*args, **kwargs)`` on a worker, in a given context.

    The context is a copy of the caller's unless one is given: bounded hook calls run in the
    plugin-side context of their host thread (:mod:`hermes_hooks.calling.contexts`).

    The caller waits with :meth:`wait` (threads) or :meth:`wait_async` (an event loop); when it
    stops waiting it calls :meth:`abandon`, which tells whether the job was still running.
    """

    __slots__ = (
        "_args",
        "_context",
        "_done",
        "_function",
        "_future",
        "_kwargs",
        "_loop",
        "_on_abandoned_exit",
        "abandoned",
        "error",
        "finished",
        "value",
    )

    def __init__(
        self,
        function: Callable[..., Any],
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None,
        loop: asyncio.AbstractEventLoop | None,
        context: contextvars.Context | None = None,
    ) -> None:
        self._function = function
        self._args = args
        self._kwargs = kwargs
        # The caller's context variables travel in with the call (the job runs in a copy of
        # them), unless the caller names the context to run in.
        self._context = contextvars.copy_context() if context is None else context
        self._loop = loop
        self._future: asyncio.Future[None] | None = None
        self._done: threading.Lock | None = None
        if loop is None:
            self._done = threading.Lock()
            self._done.acquire()
        else:
            self._future = loop.create_future()
        self._on_abandoned_exit: Callable[[], None] | None = None
        self.value: Any = None
        self.error: BaseException | None = None
        self.finished = False
        self.abandoned = False

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds in this thread; return whether the job finished."""
        assert self._done is not None, "a job submitted with a loop is awaited"
        return self._done.acquire(timeout=timeout)

    async def wait_async(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds without blocking the loop; return whether it finished."""
        future, loop = self._future, self._loop
        assert future is not None, "a job submitted without a loop is waited for in a thread"
        assert loop is not None
        if not future.done():
            # A waiter of its own (not asyncio.wait, which costs more): the job's future is
            # never cancelled, so it can be awaited again.
            await wait_until_done(loop, future, timeout)
        return future.done()

    def abandon(self, on_exit: Callable[[], None] | None = None) -> bool:
        """Give up on the job; return ``True`` when it is still running (else use its result).

        :param on_exit: called on the worker when an abandoned job's function finally returns.
        """
        with _lock:
            if self.finished:
                return False
            self.abandoned = True
            self._on_abandoned_exit = on_exit
            return True

    def result(self) -> Any:
        """Return what the function returned, or raise what it raised."""
        if self.error is not None:
            error, self.error = self.error, None  # no reference cycle through the traceback
            raise error
        return self.value

    def _run(self) -> None:
        try:
            self.value = self._context.run(self._function, *self._args, **(self._kwargs or {}))
        except BaseException as exc:
            self.error = exc
        self._function = self._args = self._kwargs = None  # type: ignore[assignment]

    def _signal(self) -> None:
        """Wake the caller, or tell the owner of an abandoned job that it is over."""
        if self.abandoned:
            if self._on_abandoned_exit is not None:
                self._on_abandoned_exit()
            return
        if self._done is not None:
            self._done.release()
        elif self._loop is not None and self._future is not None:
            # The loop may be gone (the caller's asyncio.run ended); then nobody is waiting.
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(_set_done, self._future)


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def wait_until_done(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], timeout: float
) -> None:
    """Return when ``future`` is done or ``timeout`` seconds have passed; ``future`` is untouched.

    :raises asyncio.CancelledError: the waiting task was cancelled (``future`` goes on).
    """
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
    """A daemon thread with its own queue of jobs."""

    __slots__ = ("jobs", "thread")

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Job | object] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name=_THREAD_NAME, daemon=True)

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
            if job is _STOP or not isinstance(job, Job):
                return
            job._run()
            with _lock:
                job.finished = True
                # Idle again before the caller wakes, so that its next call reuses this thread.
                _idle.append(self)
            job._signal()
            del job


def submit(
    function: Callable[..., Any],
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    loop: asyncio.AbstractEventLoop | None = None,
    context: contextvars.Context | None = None,
) -> Job:
    """Start ``function(*args, **kwargs)`` on an idle worker, or on a new one.

    :param loop: the running loop of a caller that will ``await job.wait_async(...)``.
    :param context: the context to run it in; a copy of the caller's by default.
    :raises WorkerUnavailableError: :data:`MAX_WORKERS` threads exist, or none could start.
    """
    job = Job(function, args, kwargs, loop, context)
    start = False
    with _lock:
        if _idle:
            worker = _idle.pop()
        else:
            if len(_live) >= MAX_WORKERS:
                raise WorkerUnavailableError(f"all {MAX_WORKERS} worker threads are busy")
            worker = _Worker()
            _live.add(worker)
            start = True
    if start:
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
    global _lock
    _lock = threading.Lock()
    _idle.clear()
    _live.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def live_workers() -> int:
    """Return how many worker threads exist (busy, hung or idle)."""
    with _lock:
        return len(_live)


def shutdown_idle() -> None:
    """Stop the idle workers now (busy ones stay until their job returns and they idle out)."""
    with _lock:
        stopping = list(_idle)
        _idle.clear()
        for worker in stopping:
            _live.discard(worker)
    for worker in stopping:
        worker.jobs.put(_STOP)

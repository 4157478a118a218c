"""The worker threads behind bounded calls, and the per-callback bound, on their own."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_hooks.calling import bounds as timeouts, handoff, workers as _workers
from hermes_hooks.calling.bounds import CallbackBound, bound_for, is_async_callable
from hermes_hooks.errors import HookTimeoutError
from hermes_hooks.plugins.loading import make_hook_adapter


def drain() -> None:
    """Let busy workers finish, then stop every worker."""
    deadline = time.monotonic() + 10
    while _workers.live_workers() and time.monotonic() < deadline:
        _workers.shutdown_idle()
        time.sleep(0.01)
    assert _workers.live_workers() == 0


@pytest.fixture(autouse=True)
def no_workers_left() -> Iterator[None]:
    drain()
    yield
    drain()


def test_sequential_jobs_reuse_one_thread() -> None:
    names = []
    for _ in range(20):
        job = _workers.submit(lambda: threading.current_thread().ident)
        assert job.wait(10)
        names.append(job.result())
    assert len(set(names)) == 1
    assert _workers.live_workers() == 1


def test_an_idle_worker_exits_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_workers, "IDLE_SECONDS", 0.05)
    job = _workers.submit(int)
    assert job.wait(10)
    deadline = time.monotonic() + 10
    while _workers.live_workers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _workers.live_workers() == 0


def test_no_more_than_max_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_workers, "MAX_WORKERS", 1)
    release = threading.Event()
    busy = _workers.submit(release.wait, (30,))
    try:
        with pytest.raises(_workers.WorkerUnavailableError, match="all 1 worker threads"):
            _workers.submit(int)
    finally:
        release.set()
    assert busy.wait(10)


def test_a_job_carries_the_callers_context_and_its_errors() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("caller")
    job = _workers.submit(var.get)
    assert job.wait(10)
    assert job.result() == "caller"

    def fails() -> None:
        raise ValueError("from the worker")

    failing = _workers.submit(fails)
    assert failing.wait(10)
    with pytest.raises(ValueError, match="from the worker"):
        failing.result()


def test_abandoning_a_finished_job_gives_its_result_and_a_running_one_reports_its_end() -> None:
    done = _workers.submit(int, ("7",))
    assert done.wait(10)
    assert done.abandon() is False
    assert done.result() == 7

    release, ended = threading.Event(), threading.Event()
    running = _workers.submit(release.wait, (30,))
    assert not running.wait(0.01)
    assert running.abandon(ended.set) is True
    release.set()
    assert ended.wait(10)


def test_waiting_from_a_loop_does_not_block_it() -> None:
    # A bounded call awaited on a loop is shipped to a worker; the loop goes on meanwhile.
    release = threading.Event()
    step = handoff.raising_step(release.wait, (30,), None, CallbackBound(is_async=False))

    async def main() -> tuple[bool, list[Any]]:
        call = asyncio.ensure_future(handoff.arun((step,), {}, seconds=30))
        await asyncio.sleep(0.05)  # the loop runs while the worker waits
        first = call.done()
        release.set()
        return first, await call

    assert asyncio.run(main()) == (False, [True])


def test_a_call_that_outlives_its_callers_loop_ends_quietly() -> None:
    release = threading.Event()
    bound = CallbackBound(is_async=False)
    step = handoff.raising_step(release.wait, (30,), None, bound)

    async def main() -> None:
        call = asyncio.ensure_future(handoff.arun((step,), {}, seconds=30))
        await asyncio.sleep(0.05)  # the worker is on it; leaving cancels the call
        assert not call.done()

    asyncio.run(main())
    assert bound.hung == 1  # given up while its worker still runs it
    release.set()  # the worker tells a closed loop: nothing is raised anywhere
    deadline = time.monotonic() + 10
    while bound.hung and time.monotonic() < deadline:
        time.sleep(0.01)
    assert bound.hung == 0


# -- CallbackBound ---------------------------------------------------------------------------------


def test_a_bound_times_out_cools_down_and_recovers(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    bound = CallbackBound(is_async=False)
    with pytest.raises(HookTimeoutError, match=r"did not finish within 0\.05 s"):
        bound.call(release.wait, (30,), None, 0.05)
    assert bound.hung == 1
    with pytest.raises(HookTimeoutError, match="less than 60 s ago"):
        bound.call(int, (), None, 0.05)
    release.set()
    monkeypatch.setattr(timeouts, "COOLDOWN_SECONDS", 0.0)
    deadline = time.monotonic() + 10
    while bound.hung and time.monotonic() < deadline:
        time.sleep(0.01)
    assert bound.hung == 0
    bound.suppressed_until = 0.0
    assert bound.call(int, ("3",), None, 5) == 3


def test_a_plugins_own_timeout_error_is_not_a_timeout() -> None:
    async def raises() -> None:
        raise TimeoutError("the plugin's own")

    bound = CallbackBound(is_async=True)
    with pytest.raises(TimeoutError, match="the plugin's own"):
        bound.call(raises, (), None, 5)
    with pytest.raises(TimeoutError, match="the plugin's own"):
        asyncio.run(bound.acall(raises, (), None, 5))
    assert bound.suppressed_until == 0.0


def test_async_callables_are_recognised_through_shims_and_partials() -> None:
    async def callback(tool_name: str, **kwargs: Any) -> None:
        return None

    class Callable:
        async def __call__(self) -> None:
            return None

    adapter = make_hook_adapter("pre_tool_call", callback, ("tool_name", "args"), owner="p")
    assert is_async_callable(adapter)
    assert is_async_callable(functools.partial(callback, "t"))
    assert is_async_callable(Callable())
    assert not is_async_callable(lambda: None)
    assert not is_async_callable(make_hook_adapter("post_tool_call", print, None, owner="p"))


def test_the_bound_of_a_callback_survives_its_registration() -> None:
    def callback() -> None:
        return None

    assert bound_for(callback) is bound_for(callback)
    assert bound_for(callback) is not bound_for(lambda: None)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_starts_with_a_pool_and_hung_counts_of_its_own() -> None:
    release = threading.Event()
    bound = bound_for(test_a_forked_child_starts_with_a_pool_and_hung_counts_of_its_own)
    with pytest.raises(HookTimeoutError):
        bound.call(release.wait, (30,), None, 0.01)
    assert bound.hung == 1
    assert _workers.submit(int).wait(10)  # an idle worker in the parent, absent in a child
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, never return into pytest
        try:
            bound.suppressed_until = 0.0
            answer = bound.call(int, ("5",), None, 5) if bound.hung == 0 else -1
            os.write(write, str(answer).encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        answer = os.read(read, 16)
    finally:
        os.close(read)
        os.waitpid(pid, 0)
        release.set()
    assert answer == b"5"

"""One handoff per bounded hook call: real plugin folders, a real worker pool, real deadlines.

``workers.submit`` is wrapped to count handoffs (each still runs as usual). A hung plugin waits
on an event the fixture sets at tear-down, so no thread outlives its test; no assertion is
about time: "the call returned while the hung implementation still ran" shows it was not waited
for, and "every implementation ran within its own bound while together they took longer" is
shown by each one sleeping for most of the bound.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable
from typing import Any

import pytest
from homes import shared_module_home as home  # noqa: F401  (the fixture)
from plugin_builders import PluginHome, info

from hermes_hooks.calling import handoff, workers as _workers
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.plugins.manager import PluginManager

SHARED = "hermes_handoff_test_shared"
SHARED_CODE = """
import threading

release = threading.Event()
log = []
state = {}


def wait():
    release.wait(30)


def me():
    return threading.current_thread().name, threading.get_ident()
"""


def shared() -> Any:
    return importlib.import_module(SHARED)


@pytest.fixture
def handoffs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the function each ``workers.submit`` ran, in order."""
    seen: list[str] = []
    submit = _workers.submit

    def counting(function: Callable[..., Any], *args: Any, **kwargs: Any) -> _workers.Job:
        seen.append(getattr(function, "__name__", repr(function)))
        return submit(function, *args, **kwargs)

    monkeypatch.setattr(_workers, "submit", counting)
    return seen


def load(home: PluginHome, timeout: float | None = 0.2) -> PluginManager:
    return home.load_bounded(timeout)


def plugin(body: str) -> str:
    return f"import time\nfrom {SHARED} import log, me, state, wait\n" + (
        "from hermes_hooks import hookimpl\n\n" + body
    )


def native(key: str, extra: str = "") -> str:
    return plugin(
        f"""
@hookimpl
def pre_tool_call(tool_name):
    log.append(({key!r}, me()))
    {extra}
"""
    )


def shim(key: str) -> str:
    return plugin(
        f"""
def register(ctx):
    ctx.register_hook("pre_tool_call", lambda **kw: log.append(({key!r}, me())))
"""
    )


def test_a_bounded_call_is_one_handoff_whatever_the_number_of_plugins(
    home: PluginHome, handoffs: list[str]
) -> None:
    for index in range(3):
        home.add_plugin(f"native{index}", native(f"native{index}"))
        home.add_plugin(f"shim{index}", shim(f"shim{index}"))
    pm = load(home)
    hooks = Hooks(pm)
    log = shared().log

    for call in (
        lambda: hooks.pre_tool_call(tool_name="t", args={}),
        lambda: pm.hook.pre_tool_call(tool_name="t", args={}),
        lambda: pm.invoke_hook("pre_tool_call", tool_name="t", args={}),
        lambda: asyncio.run(hooks.apre_tool_call(tool_name="t", args={})),
    ):
        handoffs.clear()
        log.clear()
        call()
        assert handoffs == ["_serve"]
        assert len(log) == 6
        threads = {thread for _, thread in log}
        assert len(threads) == 1
        ((name, ident),) = threads
        assert name == "hermes-hooks-worker"
        assert ident != threading.get_ident()


def test_each_implementation_has_a_deadline_of_its_own(home: PluginHome) -> None:
    # Together they take longer than the bound; each one alone stays well within it.
    for key in ("a", "b", "c"):
        home.add_plugin(key, native(key, extra="time.sleep(0.4)"))
    pm = load(home, timeout=1.0)

    decision = Hooks(pm).pre_tool_call(tool_name="t", args={})

    assert not decision.is_blocked
    assert sorted(key for key, _ in shared().log) == ["a", "b", "c"]
    assert all(info(pm, key).hook_timeouts == 0 for key in ("a", "b", "c"))


MODIFY = """
@hookimpl
def pre_tool_call(tool_name):
    log.append(({key!r}, me()))
    return {{"action": "modify", "args": {{{key!r}: True}}}}
"""


def test_an_overrun_abandons_its_worker_and_the_rest_goes_on_on_a_fresh_one(
    home: PluginHome, handoffs: list[str]
) -> None:
    # Loaded a, b, c: pluggy calls the newest first, so the hung one is in the middle.
    home.add_plugin("a-after", plugin(MODIFY.format(key="a-after")))
    home.add_plugin("b-hung", native("b-hung", extra="wait()"))
    home.add_plugin("c-before", plugin(MODIFY.format(key="c-before")))
    pm = load(home)
    handoffs.clear()  # each plugin's load was one

    decision = Hooks(pm).pre_tool_call(tool_name="t", args={})

    assert decision.is_blocked
    assert decision.plugin == "b-hung"
    assert "did not finish within 0.2 s" in (decision.message or "")
    ran = dict(shared().log)
    assert list(ran) == ["c-before", "b-hung", "a-after"]
    assert ran["c-before"] == ran["b-hung"]  # one worker until the overrun ...
    assert ran["a-after"] != ran["b-hung"]  # ... then a fresh one: the hung one is still busy
    assert handoffs == ["_serve", "_serve"]
    assert info(pm, "b-hung").hook_timeouts == 1
    assert (info(pm, "a-after").hook_errors, info(pm, "c-before").hook_errors) == (0, 0)


NESTED_OUTER = """
@hookimpl
def pre_llm_call(user_message):
    log.append(("outer", me()))
    state["pm"].hook.pre_api_request(request_messages=[])
    return "outer"
"""

NESTED_INNER = """
@hookimpl
def pre_api_request(request_messages):
    log.append(("inner", me()))
    {extra}
"""


def test_a_hook_called_from_a_bounded_call_runs_inline_on_its_worker(
    home: PluginHome, handoffs: list[str]
) -> None:
    home.add_plugin("outer", plugin(NESTED_OUTER))
    home.add_plugin("inner", plugin(NESTED_INNER.format(extra="")))
    pm = load(home)
    shared().state["pm"] = pm
    handoffs.clear()

    context = Hooks(pm).pre_llm_call(user_message="hi", conversation_history=[])

    assert context == "outer"
    assert handoffs == ["_serve"]
    (outer, inner) = shared().log
    assert outer[0] == "outer"
    assert inner == ("inner", outer[1])


def test_a_nested_call_that_hangs_counts_against_the_outer_implementation(
    home: PluginHome,
) -> None:
    home.add_plugin("outer", plugin(NESTED_OUTER))
    home.add_plugin("inner", plugin(NESTED_INNER.format(extra="wait()")))
    pm = load(home)
    shared().state["pm"] = pm

    context = Hooks(pm).pre_llm_call(user_message="hi", conversation_history=[])

    assert context is None  # the outer one's answer is lost with its worker
    assert info(pm, "outer").hook_timeouts == 1
    assert "did not finish within 0.2 s" in (info(pm, "outer").last_hook_error or "")


def test_while_tracing_each_implementation_is_still_bounded(home: PluginHome) -> None:
    # Calls then go through pluggy's loop: each bounded implementation hands off on its own.
    home.add_plugin("hung", native("hung", extra="wait()"))
    home.add_plugin("fine", native("fine"))
    pm = load(home)
    undo = pm.enable_tracing()
    try:
        results = pm.hook.pre_tool_call(tool_name="t", args={})
    finally:
        undo()
    assert [r["action"] for r in results] == ["block"]
    assert info(pm, "hung").hook_timeouts == 1
    assert [key for key, _ in shared().log] == ["hung", "fine"]  # fine ran after it


def test_sync_implementations_between_async_ones_share_a_handoff_on_the_async_path(
    home: PluginHome, handoffs: list[str]
) -> None:
    home.add_plugin("a-sync", native("a-sync"))
    home.add_plugin("b-sync", native("b-sync"))
    home.add_plugin(
        "c-async",
        plugin(
            """
@hookimpl
async def pre_tool_call(tool_name):
    log.append(("c-async", me()))
"""
        ),
    )
    home.add_plugin("d-sync", native("d-sync"))
    pm = load(home)
    handoffs.clear()

    asyncio.run(Hooks(pm).apre_tool_call(tool_name="t", args={}))

    order = [key for key, _ in shared().log]
    assert order == ["d-sync", "c-async", "b-sync", "a-sync"]
    assert handoffs == ["_serve", "_serve"]  # d-sync; then b-sync and a-sync together
    threads = dict(shared().log)
    assert threads["c-async"][1] != threads["b-sync"][1]  # awaited on the caller's loop
    assert not handoff.on_worker()


SLOW_FOR_ONE = """
@hookimpl
def pre_tool_call(tool_name):
    if tool_name == "slow":
        wait()
    log.append((tool_name, me()))
"""


def test_concurrent_async_calls_share_a_handoff_and_a_slow_one_holds_none_of_the_others(
    home: PluginHome, handoffs: list[str]
) -> None:
    # The slow call is shipped first, the others behind it on the same worker: they go on
    # elsewhere while it still runs, long before its deadline.
    home.add_plugin("gate", plugin(SLOW_FOR_ONE))
    pm = load(home, timeout=20)
    hooks = Hooks(pm)
    handoffs.clear()

    async def main() -> tuple[list[Any], bool]:
        slow = asyncio.ensure_future(hooks.apre_tool_call(tool_name="slow", args={}))
        others = await asyncio.gather(
            *(hooks.apre_tool_call(tool_name=f"t{n}", args={}) for n in range(20))
        )
        held = slow.done()
        shared().release.set()
        await slow
        return others, held

    others, held = asyncio.run(main())

    assert not held
    assert all(not decision.is_blocked for decision in others)
    assert set(handoffs) == {"_serve"}
    assert len(handoffs) < 5  # one shipment, then what waited behind the slow one, in two
    ran = [name for name, _ in shared().log]
    assert sorted(ran) == sorted(["slow", *(f"t{n}" for n in range(20))])
    assert ran[-1] == "slow"
    assert info(pm, "gate").hook_errors == 0

"""``plugins.hook_callback_timeout``: hung plugins are cut off at the bound, by the hook's policy.

Real plugin folders in a temporary home, with a bound of 0.2 s. A hung implementation waits on
an event the fixture sets at tear-down (or 30 s at most), so no thread outlives its test; the
tear-down checks that every worker thread is gone. No assertion is about time: "the call
returned while the hung implementation was still running" is what shows it was not waited for.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from homes import shared_module_home as home  # noqa: F401  (the fixture)
from plugin_builders import PluginHome, drain_workers, info, wait_for

from hermes_hooks.calling import bounds as timeouts, workers as _workers
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.errors import HookTimeoutError
from hermes_hooks.plugins.manager import PluginManager

BOUND = 0.2
SHARED = "hermes_timeout_test_shared"
SHARED_CODE = """
import contextvars
import threading

release = threading.Event()
log = []
where = contextvars.ContextVar("where", default="unset")


def wait():
    release.wait(30)
"""


def shared() -> Any:
    return importlib.import_module(SHARED)


def load(home: PluginHome, timeout: float | None = BOUND, *, strict: bool = False) -> PluginManager:
    """Write ``config.yaml`` with the bound and return a loaded manager."""
    return home.load_bounded(timeout, strict=strict)


def plugin(body: str) -> str:
    return f"import asyncio\nimport threading\nfrom {SHARED} import log, wait, where\n" + (
        "from hermes_hooks import hookimpl\n\n" + body
    )


HUNG_GUARD = plugin(
    """
@hookimpl
def pre_tool_call(tool_name):
    log.append("hung:start")
    wait()
    log.append("hung:end")
    return None
"""
)

OTHER_GUARD = plugin(
    """
@hookimpl
def pre_tool_call(tool_name, args):
    log.append(("other", tool_name))
    return {"action": "modify", "args": {"checked": True}}
"""
)


def test_a_hung_sync_pre_tool_call_blocks_at_the_bound_and_the_others_still_run(
    home: PluginHome,
) -> None:
    home.add_plugin("hung", HUNG_GUARD)
    home.add_plugin("other", OTHER_GUARD)
    pm = load(home)
    hooks = Hooks(pm)
    log = shared().log

    decision = hooks.pre_tool_call(tool_name="terminal", args={"command": "ls"})

    assert decision.is_blocked
    assert decision.plugin == "hung"
    assert "pre_tool_call plugin 'hung' failed" in (decision.message or "")
    assert "did not finish within 0.2 s (plugins.hook_callback_timeout)" in (decision.message or "")
    assert ("other", "terminal") in log
    assert decision.args["checked"] is True
    assert "hung:end" not in log  # the call returned while the implementation still hangs
    status = info(pm, "hung")
    assert (status.hook_timeouts, status.hook_errors) == (1, 1)
    assert info(pm, "other").hook_timeouts == 0

    # Cooling down: skipped at once (still a block), its worker is not started again.
    again = hooks.pre_tool_call(tool_name="read_file", args={})
    assert again.is_blocked
    assert "skipped: it exceeded the 0.2 s bound" in (again.message or "")
    assert ("other", "read_file") in log
    assert log.count("hung:start") == 1
    assert "hung:end" not in log
    assert info(pm, "hung").hook_timeouts == 2


def test_a_hung_async_pre_tool_call_is_cancelled_at_the_bound_on_both_paths(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeouts, "COOLDOWN_SECONDS", 0.0)
    home.add_plugin(
        "hung_async",
        plugin(
            """
@hookimpl
async def pre_tool_call(tool_name):
    log.append(("start", threading.current_thread().name))
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        log.append("cancelled")
        raise
"""
        ),
    )
    home.add_plugin("other", OTHER_GUARD)
    pm = load(home)
    hooks = Hooks(pm)
    log = shared().log

    decision = hooks.pre_tool_call(tool_name="terminal", args={})
    assert decision.is_blocked
    assert decision.plugin == "hung_async"
    assert "0.2 s" in (decision.message or "")
    assert ("other", "terminal") in log
    wait_for(lambda: "cancelled" in log)  # on the worker's own loop

    async def turn() -> Any:
        decision = await hooks.apre_tool_call(tool_name="patch", args={})
        await asyncio.sleep(0)  # the cancellation is delivered on the next round of the loop
        return decision, threading.current_thread().name

    log.clear()
    adecision, loop_thread = asyncio.run(turn())
    assert adecision.is_blocked
    assert adecision.plugin == "hung_async"
    assert ("start", loop_thread) in log  # awaited on the caller's loop
    assert ("other", "patch") in log
    assert "cancelled" in log
    assert info(pm, "hung_async").hook_timeouts == 2


def test_an_async_implementation_that_ignores_cancellation_still_releases_the_caller(
    home: PluginHome,
) -> None:
    home.add_plugin(
        "stubborn",
        plugin(
            """
@hookimpl
async def pre_tool_call(tool_name):
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        log.append("ignored the cancellation")
        await asyncio.sleep(0.05)
    log.append("stubborn:end")
"""
        ),
    )
    pm = load(home)

    async def turn() -> Any:
        decision = await Hooks(pm).apre_tool_call(tool_name="t", args={})
        ended_before = "stubborn:end" in shared().log
        await asyncio.sleep(0.1)  # let it finish before the loop closes
        return decision, ended_before

    decision, ended_before = asyncio.run(turn())
    assert decision.is_blocked
    assert not ended_before


def test_a_permanently_hung_plugin_holds_a_few_threads_however_many_calls(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeouts, "COOLDOWN_SECONDS", 0.0)  # retry it at every call
    home.add_plugin("hung", HUNG_GUARD)
    home.add_plugin("other", OTHER_GUARD)
    pm = load(home)
    hooks = Hooks(pm)
    log = shared().log
    before = threading.active_count()

    decisions = [hooks.pre_tool_call(tool_name="t", args={}) for _ in range(25)]

    assert all(d.is_blocked and d.plugin == "hung" for d in decisions)
    assert log.count("hung:start") == timeouts.MAX_HUNG_WORKERS
    assert threading.active_count() <= before + timeouts.MAX_HUNG_WORKERS + 1
    assert "earlier calls are still running" in (decisions[-1].message or "")
    assert log.count(("other", "t")) == 25

    shared().release.set()  # the plugin recovers: its workers end and free their places
    wait_for(lambda: log.count("hung:end") == timeouts.MAX_HUNG_WORKERS)
    wait_for(lambda: not hooks.pre_tool_call(tool_name="t", args={}).is_blocked)
    assert threading.active_count() <= before + timeouts.MAX_HUNG_WORKERS + 1


HUNG_OBSERVERS = plugin(
    """
@hookimpl
def post_tool_call(tool_name):
    log.append("post:hung")
    wait()


@hookimpl
def transform_tool_result(result):
    wait()
    return "never"


@hookimpl
def pre_llm_call(user_message):
    wait()
    return "never"
"""
)


def test_hung_observers_and_transforms_are_skipped(home: PluginHome) -> None:
    home.add_plugin("hung", HUNG_OBSERVERS)
    home.add_plugin(
        "fine",
        plugin(
            """
@hookimpl
def post_tool_call(tool_name):
    log.append("post:fine")


@hookimpl
def pre_llm_call(user_message):
    return "context from fine"
"""
        ),
    )
    pm = load(home)
    hooks = Hooks(pm)

    hooks.post_tool_call(tool_name="t", args={}, result="r")
    text = hooks.transform_tool_result(tool_name="t", args={}, result="unchanged")
    context = hooks.pre_llm_call(user_message="q", conversation_history=[])

    assert shared().log == ["post:hung", "post:fine"]  # "fine" still ran after the hung one
    assert text == "unchanged"
    assert context == "context from fine"
    status = info(pm, "hung")
    assert status.hook_timeouts == 3
    assert "did not finish within 0.2 s" in (status.last_hook_error or "")
    assert info(pm, "fine").hook_errors == 0


def test_a_hung_sync_implementation_does_not_block_the_callers_loop(home: PluginHome) -> None:
    home.add_plugin("hung", HUNG_GUARD)
    pm = load(home)

    async def turn() -> tuple[Any, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        decision = await Hooks(pm).apre_tool_call(tool_name="t", args={})
        task.cancel()
        return decision, ticks

    decision, ticks = asyncio.run(turn())
    assert decision.is_blocked
    assert ticks > 0  # the loop kept running while the worker hung


THREAD_PROBE = plugin(
    """
@hookimpl
def pre_tool_call(tool_name):
    log.append(("pre_tool_call", threading.current_thread().name, where.get()))


@hookimpl
def subagent_stop(child_status):
    log.append(("subagent_stop", threading.current_thread().name, where.get()))


@hookimpl
def on_session_finalize(session_id):
    log.append(("on_session_finalize", threading.current_thread().name, where.get()))


@hookimpl
def pre_gateway_dispatch(event):
    log.append(("pre_gateway_dispatch", threading.current_thread().name, where.get()))
"""
)


def fire_probes(pm: PluginManager) -> list[Any]:
    shared().where.set("the caller's context")
    hooks = Hooks(pm)
    hooks.pre_tool_call(tool_name="t", args={})
    hooks.subagent_stop(parent_session_id="p", child_session_id="c", child_status="completed")
    hooks.on_session_finalize(session_id="s")
    hooks.pre_gateway_dispatch(event=object())
    log: list[Any] = shared().log
    return log


def test_a_bounded_implementation_runs_on_a_worker_in_the_callers_context(
    home: PluginHome,
) -> None:
    home.add_plugin("probe", THREAD_PROBE)
    caller = threading.current_thread().name
    log = fire_probes(load(home))
    assert log[0] == ("pre_tool_call", "hermes-hooks-worker", "the caller's context")
    # Hooks with no timeout run on the caller's thread, whatever the setting.
    assert log[1:] == [
        ("subagent_stop", caller, "the caller's context"),
        ("on_session_finalize", caller, "the caller's context"),
        ("pre_gateway_dispatch", caller, "the caller's context"),
    ]


def test_with_timeouts_disabled_everything_runs_inline(home: PluginHome) -> None:
    home.add_plugin("probe", THREAD_PROBE)
    caller = threading.current_thread().name
    pm = load(home, timeout=0)
    drain_workers()  # the load had one (plugins.load_timeout), the calls have none
    log = fire_probes(pm)
    assert {thread for _, thread, _ in log} == {caller}
    assert _workers.live_workers() == 0


def test_the_bound_follows_a_config_reload(home: PluginHome) -> None:
    home.add_plugin("probe", THREAD_PROBE)
    pm = load(home)
    config = home.root / "config.yaml"
    config.write_text(
        yaml.safe_dump({"plugins": {"enabled": ["probe"], "hook_callback_timeout": 0}}), "utf-8"
    )
    pm.reload_config()
    Hooks(pm).pre_tool_call(tool_name="t", args={})
    assert shared().log[0][1] == threading.current_thread().name


def test_strict_mode_raises_the_timeout(home: PluginHome) -> None:
    home.add_plugin("hung", HUNG_GUARD)
    pm = load(home, strict=True)
    with pytest.raises(HookTimeoutError, match=r"did not finish within 0\.2 s") as raised:
        Hooks(pm).pre_tool_call(tool_name="t", args={})
    assert "raised by plugin 'hung' in hook 'pre_tool_call'" in raised.value.__notes__


def test_the_default_bound_is_30_seconds_and_a_wrong_value_falls_back_to_it(
    home: PluginHome,
) -> None:
    assert load(home, timeout=None).plugins_config.hook_callback_timeout == 30
    pm = load(home, timeout="soon")  # type: ignore[arg-type]
    assert pm.plugins_config.hook_callback_timeout == 30
    assert any("hook_callback_timeout" in w for w in pm.plugins_config.warnings)


# -- the documentation -------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_hook_reference_marks_exactly_the_hooks_with_no_timeout() -> None:
    text = (DOCS / "reference" / "hooks.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r"^## `([a-z_]+)`\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    pm = PluginManager(Path("/nonexistent/hermes-home"))
    for name in pm.known_hooks():
        marked = "not bounded by the callback timeout" in " ".join(sections[name].lower().split())
        assert marked is not pm.get_hook_contract(name).timeout, name


def test_the_explanation_examples_run(home: PluginHome, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_hooks.host import create_manager

    monkeypatch.chdir(home.root)
    (home.root / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    home.add_plugin("hung", HUNG_GUARD)
    load(home)  # writes config.yaml with the 0.2 s bound
    page = DOCS / "explanation" / "async-and-timeouts.md"
    blocks = re.findall(r"^```python\n(.*?)^```$", page.read_text("utf-8"), re.M | re.S)
    assert len(blocks) == 2
    namespace: dict[str, Any] = {"pm": create_manager(home.root)}
    home.managers.append(namespace["pm"])
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"{page.name}, python block {number}", "exec"), namespace)
    assert info(namespace["pm"], "hung").hook_timeouts == 1


# -- issue 26 item 7: one plugin cannot exhaust the workers and get others skipped or blamed ------

HOG = plugin(
    """
def _hang(**kwargs):
    log.append("hog:start")
    wait()


def register(ctx):
    for _ in range(40):  # forty distinct callbacks, each under its own per-callback cap
        ctx.register_hook("pre_llm_call", lambda **kwargs: _hang(**kwargs))
"""
)

REDACTOR = plugin(
    """
@hookimpl
def transform_tool_result(result):
    return result.replace("secret", "[redacted]")
"""
)

NO_RM = plugin(
    """
@hookimpl
def pre_tool_call(tool_name, args):
    if "rm -rf" in str(args.get("command", "")):
        return {"action": "block", "message": "no rm -rf"}
    return None
"""
)


def test_one_plugin_with_many_hung_callbacks_holds_a_few_workers_and_is_charged_alone(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small pool, so that forty hung callbacks would exhaust it without a per-plugin cap.
    monkeypatch.setattr(_workers, "MAX_WORKERS", timeouts.MAX_HUNG_PER_PLUGIN + 4)
    home.add_plugin("hog", HOG)
    home.add_plugin("redactor", REDACTOR)
    home.add_plugin("no-rm", NO_RM)
    pm = load(home, timeout=0.05)
    hooks = Hooks(pm)
    log = shared().log

    for _ in range(3):
        hooks.pre_llm_call(session_id="s", user_message="hi", conversation_history=[])

    assert log.count("hog:start") == timeouts.MAX_HUNG_PER_PLUGIN
    assert _workers.live_workers() <= timeouts.MAX_HUNG_PER_PLUGIN + 1
    hog = info(pm, "hog")
    assert hog.hook_timeouts == 3 * 40  # each callback of each call: a timeout, then skips
    assert "this plugin's callbacks are still running" in (hog.last_hook_error or "")
    # The others' bounded hooks run, and nobody else is blamed.
    for _ in range(5):
        result = hooks.transform_tool_result(tool_name="t", args={}, result="a secret")
        assert result == "a [redacted]"
        assert not hooks.pre_tool_call(tool_name="terminal", args={"command": "ls"}).is_blocked
    blocked = hooks.pre_tool_call(tool_name="terminal", args={"command": "rm -rf /"})
    assert (blocked.is_blocked, blocked.plugin) == (True, "no-rm")
    assert info(pm, "redactor").hook_errors == 0
    assert info(pm, "no-rm").hook_errors == 0


def test_with_every_worker_busy_a_call_runs_inline_instead_of_being_refused(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.add_plugin("redactor", REDACTOR)
    home.add_plugin("no-rm", NO_RM)
    pm = load(home)
    hooks = Hooks(pm)
    monkeypatch.setattr(_workers, "MAX_WORKERS", 1)
    release = threading.Event()
    busy = _workers.submit(release.wait, (30,))  # the only worker, busy with other work
    try:
        assert hooks.transform_tool_result(tool_name="t", args={}, result="a secret") == (
            "a [redacted]"
        )
        assert not hooks.pre_tool_call(tool_name="terminal", args={"command": "ls"}).is_blocked
        assert info(pm, "no-rm").hook_errors == 0
    finally:
        release.set()
    assert busy.wait(10)


def test_cancelling_a_bounded_async_call_stops_its_batch_after_the_step_under_way(
    home: PluginHome,
) -> None:
    home.add_plugin(
        "first",
        plugin(
            """
@hookimpl(tryfirst=True)
def post_tool_call(tool_name):
    log.append("first:start")
    wait()
    log.append("first:end")
"""
        ),
    )
    home.add_plugin(
        "second", plugin('@hookimpl\ndef post_tool_call(tool_name):\n    log.append("second")\n')
    )
    pm = load(home, 30)
    log = shared().log

    async def turn() -> None:
        call = asyncio.ensure_future(Hooks(pm).apost_tool_call(tool_name="t", args={}, result=""))
        while "first:start" not in log:
            await asyncio.sleep(0.01)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(turn())
    shared().release.set()
    wait_for(lambda: "first:end" in log)
    drain_workers()
    assert "second" not in log  # given up: the worker stopped after the step under way

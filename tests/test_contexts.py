"""Context variables across bounded calls: one plugin-side ``Context`` per host thread and task.

Real plugins under the default bound (30 s), so every implementation runs on a worker thread:
a variable a plugin sets in one hook is there in its next hook from the same host thread, and
the token of that ``set`` resets; the host's variables reach the plugins at each call; the
plugins' stay on their side. ``opentelemetry-api`` (a test dependency) attaches a context in
``pre_api_request`` and detaches it in ``post_api_request``, as Hermes's Langfuse plugin does.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from homes import shared_module_home as home  # noqa: F401  (the fixture)
from plugin_builders import PluginHome, info

from hermes_hooks.calling import contexts
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.plugins.manager import PluginManager

SHARED = "hermes_contexts_test_shared"
SHARED_CODE = """
import contextvars
import threading

span = contextvars.ContextVar("span", default="none")
host = contextvars.ContextVar("host", default="unset")
release = threading.Event()
log = []
tokens = []
"""


@pytest.fixture(autouse=True)
def fresh_contexts(home: PluginHome) -> Iterator[None]:
    """Every test starts with fresh plugin-side contexts (after its home is made, and they are
    forgotten before the home is torn down)."""
    contexts.forget_all()
    yield
    contexts.forget_all()


def shared() -> Any:
    return importlib.import_module(SHARED)


def load(home: PluginHome, timeout: float | None = None) -> PluginManager:
    return home.load_bounded(timeout)


TRACER = f"""
import threading

from {SHARED} import host, log, span, tokens


def register(ctx):
    def opened(**kwargs):
        tokens.append(span.set(kwargs["api_request_id"]))
        log.append(("pre", span.get(), host.get(), threading.current_thread().name))

    def closed(**kwargs):
        log.append(("post", span.get(), host.get()))
        span.reset(tokens.pop())
        log.append(("after reset", span.get()))

    ctx.register_hook("pre_api_request", opened)
    ctx.register_hook("post_api_request", closed)
"""


def turn(hooks: Hooks, request: str) -> None:
    hooks.pre_api_request(request_messages=[], api_request_id=request)
    hooks.post_api_request(api_request_id=request)


@pytest.mark.parametrize("timeout", [None, 0], ids=["default bound", "inline"])
def test_a_variable_set_in_one_hook_is_there_in_the_next_and_its_token_resets(
    home: PluginHome, timeout: float | None
) -> None:
    home.add_plugin("tracer", TRACER)
    pm = load(home, timeout)
    hooks = Hooks(pm)
    shared().host.set("host value")

    turn(hooks, "req-1")
    turn(hooks, "req-2")

    log = shared().log
    assert [entry[:3] for entry in log] == [
        ("pre", "req-1", "host value"),
        ("post", "req-1", "host value"),
        ("after reset", "none"),
        ("pre", "req-2", "host value"),
        ("post", "req-2", "host value"),
        ("after reset", "none"),
    ]
    expected_thread = "hermes-hooks-worker" if timeout is None else "MainThread"
    assert log[0][3] == expected_thread
    assert info(pm, "tracer").hook_errors == 0


OTEL_PLUGIN = """
from opentelemetry import context

opened = []
seen = []


def register(ctx):
    def pre_api_request(api_request_id, **kwargs):
        opened.append(context.attach(context.set_value("request", api_request_id)))

    def post_api_request(api_request_id, **kwargs):
        seen.append(context.get_value("request"))
        context.detach(opened.pop())

    ctx.register_hook("pre_api_request", pre_api_request)
    ctx.register_hook("post_api_request", post_api_request)
"""


def test_an_opentelemetry_context_attached_before_a_request_detaches_after_it(
    home: PluginHome, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("opentelemetry.context")
    home.add_plugin("otel", OTEL_PLUGIN)
    pm = load(home)  # the default bound: each hook on a worker thread
    hooks = Hooks(pm)

    with caplog.at_level(logging.DEBUG):
        for request in ("req-1", "req-2", "req-3"):
            turn(hooks, request)

    module = sys.modules["hermes_plugins.otel"]
    assert module.seen == ["req-1", "req-2", "req-3"]
    assert module.opened == []
    assert not [r for r in caplog.records if "Failed to detach context" in r.getMessage()]
    assert info(pm, "otel").hook_errors == 0


PROBE = f"""
from {SHARED} import host, log, span


def register(ctx):
    def probe(**kwargs):
        log.append((kwargs["api_request_id"], host.get(), span.get()))
        span.set("set by the plugin")

    ctx.register_hook("pre_api_request", probe)
"""


def test_the_hosts_variables_reach_the_plugins_at_every_call_and_theirs_stay_with_them(
    home: PluginHome,
) -> None:
    home.add_plugin("probe", PROBE)
    pm = load(home)
    hooks = Hooks(pm)
    host, span = shared().host, shared().span

    hooks.pre_api_request(request_messages=[], api_request_id="1")
    token = host.set("first")
    hooks.pre_api_request(request_messages=[], api_request_id="2")
    host.set("second")
    hooks.pre_api_request(request_messages=[], api_request_id="3")
    host.reset(token)
    hooks.pre_api_request(request_messages=[], api_request_id="4")
    span.set("set by the host")  # the host's own value wins over the plugin's
    hooks.pre_api_request(request_messages=[], api_request_id="5")

    assert shared().log == [
        ("1", "unset", "none"),
        ("2", "first", "set by the plugin"),
        ("3", "second", "set by the plugin"),
        ("4", "unset", "set by the plugin"),
        ("5", "unset", "set by the host"),
    ]
    assert span.get() == "set by the host"  # what the plugin set never reached the host


COUNTER = f"""
from {SHARED} import log, span


def register(ctx):
    def count(**kwargs):
        now = 0 if span.get() == "none" else int(span.get()) + 1
        span.set(str(now))
        log.append((kwargs["api_request_id"], now))

    ctx.register_hook("pre_api_request", count)
"""


def test_each_host_thread_has_a_plugin_context_of_its_own(home: PluginHome) -> None:
    home.add_plugin("counter", COUNTER)
    pm = load(home)
    hooks = Hooks(pm)
    barrier = threading.Barrier(2)

    def host_thread(name: str) -> None:
        barrier.wait()
        for _ in range(3):
            hooks.pre_api_request(request_messages=[], api_request_id=name)

    threads = [threading.Thread(target=host_thread, args=(n,)) for n in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    log = shared().log
    assert [n for k, n in log if k == "a"] == [0, 1, 2]
    assert [n for k, n in log if k == "b"] == [0, 1, 2]


def test_each_task_has_a_plugin_context_of_its_own_on_the_async_path(home: PluginHome) -> None:
    home.add_plugin("counter", COUNTER)
    pm = load(home)
    hooks = Hooks(pm)

    async def task(name: str) -> None:
        for _ in range(3):
            await hooks.apre_api_request(request_messages=[], api_request_id=name)
            await asyncio.sleep(0)

    async def main() -> None:
        await asyncio.gather(task("a"), task("b"))

    asyncio.run(main())
    log = shared().log
    assert [n for k, n in log if k == "a"] == [0, 1, 2]
    assert [n for k, n in log if k == "b"] == [0, 1, 2]


ASYNC_TRACER = f"""
from {SHARED} import log, span, tokens


def register(ctx):
    async def opened(**kwargs):
        tokens.append(span.set(kwargs["api_request_id"]))

    async def closed(**kwargs):
        log.append(span.get())
        span.reset(tokens.pop())

    ctx.register_hook("pre_api_request", opened)
    ctx.register_hook("post_api_request", closed)
"""


def test_async_implementations_keep_their_variables_within_a_task(home: PluginHome) -> None:
    home.add_plugin("tracer", ASYNC_TRACER)
    pm = load(home)
    hooks = Hooks(pm)

    async def main() -> None:
        for request in ("req-1", "req-2"):
            await hooks.apre_api_request(request_messages=[], api_request_id=request)
            await hooks.apost_api_request(api_request_id=request)

    asyncio.run(main())
    assert shared().log == ["req-1", "req-2"]
    assert info(pm, "tracer").hook_errors == 0


HANGS_ONCE = f"""
from {SHARED} import log, release, span, tokens


def register(ctx):
    def opened(**kwargs):
        tokens.append(span.set("open"))

    def hangs(**kwargs):
        release.wait(30)

    def closed(**kwargs):
        log.append(span.get())
        span.reset(tokens.pop())

    ctx.register_hook("pre_api_request", opened)
    ctx.register_hook("pre_llm_call", hangs)
    ctx.register_hook("post_api_request", closed)
"""


def test_after_a_timeout_values_carry_over_but_tokens_from_before_do_not_reset(
    home: PluginHome,
) -> None:
    home.add_plugin("fragile", HANGS_ONCE)
    pm = load(home, timeout=0.2)
    hooks = Hooks(pm)

    hooks.pre_api_request(request_messages=[], api_request_id="r")
    hooks.pre_llm_call(user_message="hi", conversation_history=[])  # times out
    hooks.post_api_request(api_request_id="r")

    assert shared().log == ["open"]  # the value is still there in the fresh context ...
    status = info(pm, "fragile")
    assert status.hook_timeouts == 1
    # ... but the token belongs to the abandoned one (documented in async-and-timeouts.md).
    assert "was created in a different Context" in (status.last_hook_error or "")


def test_a_plugin_side_context_follows_its_host_exactly() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var")
    other: contextvars.ContextVar[str] = contextvars.ContextVar("other", default="d")
    var.set("one")
    side = contexts.PluginSide(contextvars.copy_context())
    assert side.context.run(var.get) == "one"
    side.context.run(other.set, "plugin")
    token = var.set("two")
    side.sync(contextvars.copy_context())
    assert side.context.run(var.get) == "two"
    assert side.context.run(other.get) == "plugin"
    var.reset(token)
    side.sync(contextvars.copy_context())
    assert side.context.run(var.get) == "one"
    old = side.context
    side.replace()
    assert side.context is not old
    assert dict(side.context.items()) == dict(old.items())

"""The calling layer checked from the outside (issue 22, items 1-5), as an acceptance tester would.

Each check is written from the issue's text and from how Hermes plugins are written (folders
with ``plugin.yaml`` and a ``register(ctx)``, modules that register through Hermes's
``tools.registry``, pip packages with a ``hermes_agent.plugins`` entry point, pluggy
``@hookimpl``), and covers what the rest of the suite did not: raw pluggy side by side with the
manager on the same plugins (bounded and inline), a hung implementation among ``register(ctx)``
callbacks and wrappers, load from many threads and tasks with a small worker limit, the doors of
``tools.registry`` at run time, every built-in command's ``--help`` in a real process, and the
entry-point reload. No assertion is about time; every home is under ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import subprocess
import sys
import threading
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import attrs
import click
import pluggy
import pytest
import yaml
from homes import shared_module_home as home  # noqa: F401  (the fixture)
from plugin_builders import PluginHome, info, write_distribution

from hermes_hooks import hookimpl
from hermes_hooks.calling import workers
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec import decisions, hookspecs
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION as V1

SHARED = "hermes_issue22_acceptance_shared"
SHARED_CODE = """
import threading

release = threading.Event()
log = []


def hang():
    release.wait(30)
"""
BOUND = 0.2
NOWHERE = Path("/nonexistent/hermes-home")


def shared() -> Any:
    """The module the test's plugins share state with (``log``, ``release``, ``hang``)."""
    return importlib.import_module(SHARED)


def write_home_config(home: PluginHome, **plugins: Any) -> None:
    """Write ``config.yaml``: the enabled plugins and the ``plugins.*`` settings given."""
    section = {"enabled": home.enabled, **plugins}
    (home.root / "config.yaml").write_text(yaml.safe_dump({"plugins": section}), "utf-8")


def loaded(home: PluginHome, **plugins: Any) -> PluginManager:
    """Write the configuration and return a loaded manager; every plugin must have loaded."""
    write_home_config(home, **plugins)
    pm = home.manager()
    pm.discover_and_load()
    broken = {i.key: i.error for i in pm.list_plugins() if i.status == "error"}
    assert broken == {}
    return pm


# -- 1. every call on pluggy's own hook caller and loop ---------------------------------------


class Extra:
    """Hooks a host adds with ``add_hookspecs``: a historic one and a first-result one."""

    @pluggy.HookspecMarker("hermes")(historic=True)
    def announce(self, version: str) -> str:  # type: ignore[empty-body]
        """A historic hook."""

    @pluggy.HookspecMarker("hermes")(firstresult=True)
    def choose(self, value: int) -> int:  # type: ignore[empty-body]
        """A first-result hook."""


def plugin_set(log: list[str]) -> list[tuple[str, object]]:
    """Fresh plugin objects of every kind pluggy orders: plain, tryfirst, trylast, both wrapper
    styles; each appends what it does to ``log``."""

    class Plain:
        @hookimpl
        def transform_terminal_output(self, output: str) -> str | None:
            log.append("plain")
            return None

        @hookimpl
        def on_session_start(self, session_id: str) -> str:
            log.append("plain")
            return f"plain:{session_id}"

        @hookimpl
        def choose(self, value: int) -> int | None:
            log.append("plain")
            return None

        @hookimpl
        def announce(self, version: str) -> str:
            log.append(f"plain:{version}")
            return "plain"

    class First:
        @hookimpl(tryfirst=True)
        def transform_terminal_output(self, command: str, output: str) -> str:
            log.append("first")
            return f"first({command}):{output}"

        @hookimpl(tryfirst=True)
        def on_session_start(self, session_id: str, model: str) -> str:
            log.append("first")
            return f"first:{model}"

        @hookimpl(tryfirst=True)
        def choose(self, value: int) -> int:
            log.append("first")
            return value * 10

    class Last:
        @hookimpl(trylast=True)
        def transform_terminal_output(self, output: str) -> str:
            log.append("last")
            return "last"

        @hookimpl(trylast=True)
        def on_session_start(self) -> str:
            log.append("last")
            return "last"

        @hookimpl(trylast=True)
        def choose(self, value: int) -> int:
            log.append("last")
            return -1

    class NewWrapper:
        @hookimpl(wrapper=True)
        def transform_terminal_output(self, output: str) -> Generator[None, Any, Any]:
            log.append("new:before")
            result = yield
            log.append("new:after")
            return f"<{result}>"

        @hookimpl(wrapper=True)
        def on_session_start(self) -> Generator[None, list[str], list[str]]:
            log.append("new:before")
            result = yield
            log.append("new:after")
            return [*result, "added by the wrapper"]

    class OldWrapper:
        @hookimpl(hookwrapper=True, tryfirst=True)
        def transform_terminal_output(self) -> Generator[None, pluggy.Result[Any], None]:
            log.append("old:before")
            outcome = yield
            log.append("old:after")
            outcome.force_result(f"old[{outcome.get_result()}]")

        @hookimpl(hookwrapper=True)
        def choose(self, value: int) -> Generator[None, pluggy.Result[Any], None]:
            log.append("old:before")
            outcome = yield
            log.append("old:after")
            outcome.force_result(outcome.get_result() + 1)

    return [
        ("old", OldWrapper()),
        ("plain", Plain()),
        ("first", First()),
        ("new", NewWrapper()),
        ("last", Last()),
    ]


def raw_pluggy(log: list[str]) -> pluggy.PluginManager:
    """pluggy's own manager, with Hermes's hookspecs and :class:`Extra`, and the plugin set."""
    pm = pluggy.PluginManager("hermes")
    pm.add_hookspecs(hookspecs)
    pm.add_hookspecs(Extra)
    for name, plugin in plugin_set(log):
        pm.register(plugin, name=name)
    return pm


def ours(log: list[str], seconds: float) -> PluginManager:
    """The project's manager (no home), bounded at ``seconds`` (0: inline), with the same set."""
    pm = PluginManager(NOWHERE)
    pm.add_hookspecs(Extra)
    pm.callback_bound.seconds = seconds
    for name, plugin in plugin_set(log):
        pm.register(plugin, name=name)
    return pm


TERMINAL = {
    "command": "ls",
    "output": "out",
    "returncode": 0,
    "task_id": "",
    "env_type": "",
    "telemetry_schema_version": V1,
}
SESSION = {"session_id": "s1", "model": "m", "platform": "cli", "telemetry_schema_version": V1}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("transform_terminal_output", TERMINAL),
    ("on_session_start", SESSION),
    ("choose", {"value": 4}),
]
BOUNDS = [pytest.param(30.0, id="bounded"), pytest.param(0.0, id="inline")]


def run(call: Callable[[], object], log: list[str]) -> tuple[object, list[str]]:
    log.clear()
    return call(), list(log)


@pytest.mark.parametrize("seconds", BOUNDS)
@pytest.mark.parametrize(("hook", "kwargs"), CALLS, ids=[name for name, _ in CALLS])
def test_a_hook_call_gives_what_raw_pluggy_gives_in_its_order(
    hook: str, kwargs: dict[str, Any], seconds: float
) -> None:
    theirs_log: list[str] = []
    ours_log: list[str] = []
    theirs, mine = raw_pluggy(theirs_log), ours(ours_log, seconds)
    expected = run(lambda: getattr(theirs.hook, hook)(**kwargs), theirs_log)
    assert run(lambda: getattr(mine.hook, hook)(**kwargs), ours_log) == expected
    assert [i.plugin_name for i in getattr(mine.hook, hook).get_hookimpls()] == [
        i.plugin_name for i in getattr(theirs.hook, hook).get_hookimpls()
    ]


@pytest.mark.parametrize("seconds", BOUNDS)
@pytest.mark.parametrize(("hook", "kwargs"), CALLS, ids=[name for name, _ in CALLS])
def test_call_extra_and_subset_callers_give_what_raw_pluggy_gives(
    hook: str, kwargs: dict[str, Any], seconds: float
) -> None:
    theirs_log: list[str] = []
    ours_log: list[str] = []
    theirs, mine = raw_pluggy(theirs_log), ours(ours_log, seconds)

    def extra(**_: object) -> str:
        return "extra"

    def extra_call(pm: pluggy.PluginManager) -> object:
        caller = getattr(pm.hook, hook)
        return caller.call_extra([lambda value: 99] if hook == "choose" else [extra], kwargs)

    def subset_call(pm: pluggy.PluginManager) -> object:
        left_out = [pm.get_plugin("first"), pm.get_plugin("old")]
        return pm.subset_hook_caller(hook, left_out)(**kwargs)

    for call in (extra_call, subset_call):
        expected = run(functools.partial(call, theirs), theirs_log)
        assert run(functools.partial(call, mine), ours_log) == expected, call.__name__


@pytest.mark.parametrize("seconds", BOUNDS)
def test_a_historic_call_replays_on_later_registration_as_raw_pluggy_does(seconds: float) -> None:
    results: dict[str, list[object]] = {"theirs": [], "ours": []}
    logs: dict[str, list[str]] = {"theirs": [], "ours": []}
    managers: dict[str, pluggy.PluginManager] = {}
    for side in ("theirs", "ours"):
        pm = pluggy.PluginManager("hermes") if side == "theirs" else PluginManager(NOWHERE)
        if isinstance(pm, PluginManager):
            pm.callback_bound.seconds = seconds
        pm.add_hookspecs(Extra)
        pm.hook.announce.call_historic(
            results[side].append, kwargs={"version": "1.0"}
        )  # before any plugin
        for name, plugin in plugin_set(logs[side]):
            pm.register(plugin, name=name)  # replayed now, to the plugin that implements it
        pm.hook.announce.call_historic(results[side].append, kwargs={"version": "2.0"})
        managers[side] = pm
    assert results["ours"] == results["theirs"] == ["plain", "plain"]
    assert logs["ours"] == logs["theirs"] == ["plain:1.0", "plain:2.0"]
    refusals = []
    for side in ("theirs", "ours"):  # a plain call of a historic hook: refused as pluggy does
        with pytest.raises(AssertionError, match="historic") as refused:
            managers[side].hook.announce(version="3.0")
        refusals.append(str(refused.value).splitlines()[0])
    assert refusals[0] == refusals[1]


@pytest.mark.parametrize("seconds", BOUNDS)
def test_positional_and_unknown_arguments_are_met_as_raw_pluggy_meets_them(seconds: float) -> None:
    answers: list[object] = []
    for pm in (raw_pluggy([]), ours([], seconds)):
        with pytest.raises(TypeError) as refused:
            pm.hook.transform_terminal_output("ls", "out")  # type: ignore[call-arg]
        answers.append(str(refused.value).partition("__call__()")[2])  # pluggy's words
        answers.append(pm.hook.transform_terminal_output(**TERMINAL, not_in_the_spec=1))
    assert answers[:2] == answers[2:]
    assert answers[0] == " takes 1 positional argument but 3 were given"


def monitors(
    records: list[object],
) -> tuple[Callable[..., None], Callable[..., None]]:
    """A ``before`` and an ``after`` call monitor that note what they are told in ``records``."""

    def before(name: str, impls: list[pluggy.HookImpl], kwargs: dict[str, Any]) -> None:
        records.append(("before", name, [i.plugin_name for i in impls], dict(kwargs)))

    def after(
        outcome: pluggy.Result[Any],
        name: str,
        impls: list[pluggy.HookImpl],
        kwargs: dict[str, Any],
    ) -> None:
        records.append(("after", name, outcome.get_result()))

    return before, after


@pytest.mark.parametrize("seconds", BOUNDS)
def test_tracing_and_call_monitoring_see_what_they_see_on_raw_pluggy(seconds: float) -> None:
    seen: dict[str, list[object]] = {"theirs": [], "ours": []}
    for side in ("theirs", "ours"):
        log: list[str] = []
        pm = raw_pluggy(log) if side == "theirs" else ours(log, seconds)
        lines: list[str] = []
        undo_tracing = pm.enable_tracing()
        pm.trace.root.setwriter(lines.append)

        undo_monitoring = pm.add_hookcall_monitoring(*monitors(seen[side]))
        try:
            for hook, kwargs in CALLS:
                getattr(pm.hook, hook)(**kwargs)
        finally:
            undo_monitoring()
            undo_tracing()
        seen[side].append(lines)
        pm.hook.choose(value=1)  # after the undo: neither traced nor monitored
        seen[side].append(len(lines))
    assert seen["ours"] == seen["theirs"]


def test_strict_errors_reach_wrappers_as_they_do_on_raw_pluggy() -> None:
    """In strict mode nothing is isolated: a new-style wrapper catches an inner error, an
    old-style one sees it in its outcome, as in pluggy."""

    def make(log: list[str]) -> list[tuple[str, object]]:
        class Failing:
            @hookimpl
            def transform_terminal_output(self, output: str) -> str:
                log.append("failing")
                raise ValueError("bad output")

        class Catching:
            @hookimpl(wrapper=True)
            def transform_terminal_output(self) -> Generator[None, Any, Any]:
                try:
                    return (yield)
                except ValueError as exc:
                    log.append(f"caught {exc}")
                    return "recovered"

        class Watching:
            @hookimpl(hookwrapper=True, trylast=True)
            def transform_terminal_output(self) -> Generator[None, pluggy.Result[Any], None]:
                outcome = yield
                log.append(f"saw {type(outcome.exception).__name__}")

        return [("failing", Failing()), ("catching", Catching()), ("watching", Watching())]

    outcomes = []
    for seconds in (None, 30.0, 0.0):
        log: list[str] = []
        pm: pluggy.PluginManager
        if seconds is None:
            pm = pluggy.PluginManager("hermes")
            pm.add_hookspecs(hookspecs)
        else:
            pm = PluginManager(NOWHERE, strict=True)
            pm.callback_bound.seconds = seconds
        for name, plugin in make(log):
            pm.register(plugin, name=name)
        outcomes.append((pm.hook.transform_terminal_output(**TERMINAL), log))
    assert outcomes[0] == ("recovered", ["failing", "saw ValueError", "caught bad output"])
    assert outcomes[1] == outcomes[0]
    assert outcomes[2] == outcomes[0]


REGISTER_CTX = """
from hermes_hooks import hookimpl


def _seen(output, **kwargs):
    return output + "+ctx"


@hookimpl(tryfirst=True)
def transform_terminal_output(output):
    return None


def register(ctx):
    ctx.register_hook("transform_terminal_output", _seen)
"""


def test_register_ctx_callbacks_are_implementations_of_pluggys_hook_caller(
    home: PluginHome,
) -> None:
    home.add_plugin("ctx-door", REGISTER_CTX)
    pm = loaded(home)
    caller = pm.hook.transform_terminal_output
    assert isinstance(caller, pluggy.HookCaller)
    assert {impl.plugin_name for impl in caller.get_hookimpls()} == {"ctx-door"}
    names: list[str] = []
    undo = pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: names.append(name), lambda *args: None
    )
    try:
        assert caller(**TERMINAL) == "out+ctx"
        assert Hooks(pm).transform_terminal_output(command="ls", output="o", returncode=0) == (
            "o+ctx"
        )
    finally:
        undo()
    assert names == ["transform_terminal_output", "transform_terminal_output"]
    pm.unload_plugin("ctx-door")
    assert caller.get_hookimpls() == []
    assert caller(**TERMINAL) is None


CALLBACK_SHAPES = """
import functools

SEEN = []


class Observer:
    def method(self, tool_name, **kwargs):
        SEEN.append(("method", tool_name, kwargs["status"]))

    def __call__(self, **kwargs):
        SEEN.append(("callable object", kwargs["tool_name"]))


def with_extra(extra, tool_name, result, **kwargs):
    SEEN.append(("partial", extra, tool_name, result))


def register(ctx):
    observer = Observer()
    ctx.register_hook("post_tool_call", observer.method)
    ctx.register_hook("post_tool_call", observer)
    ctx.register_hook("post_tool_call", functools.partial(with_extra, "x"))
    ctx.register_hook("post_tool_call", lambda **kw: SEEN.append(("lambda", kw["result"])))
"""


@pytest.mark.parametrize("bound", [0, 30])
def test_every_callback_shape_hermes_plugins_register_is_called_with_its_keywords(
    home: PluginHome, bound: float
) -> None:
    home.add_plugin("shapes", CALLBACK_SHAPES)
    pm = loaded(home, hook_callback_timeout=bound)
    Hooks(pm).post_tool_call(tool_name="t", args={}, result="r", status="ok")
    module = pm.get_plugin_module("shapes")
    assert module is not None
    assert sorted(module.SEEN) == [
        ("callable object", "t"),
        ("lambda", "r"),
        ("method", "t", "ok"),
        ("partial", "x", "t", "r"),
    ]
    assert info(pm, "shapes").hook_errors == 0
    assert len(pm.hook.post_tool_call.get_hookimpls()) == 4


# -- 2. pluggy's public API, pinned to the tested range, and CI on the newest release ----------


def test_the_installed_pluggy_is_in_the_pinned_range_and_ci_runs_the_newest() -> None:
    import configparser

    from packaging.requirements import Requirement

    root = Path(__file__).parent.parent
    setup = configparser.ConfigParser()
    setup.read(root / "setup.cfg", encoding="utf-8")
    requirements = [
        Requirement(line.strip())
        for line in setup["options"]["install_requires"].splitlines()
        if line.strip()
    ]
    (pin,) = [r for r in requirements if r.name == "pluggy"]
    assert pin.specifier.contains(pluggy.__version__), (pin, pluggy.__version__)
    assert str(pin.specifier) != "", "pluggy is not pinned"
    ci = (root / ".ci" / "run").read_text("utf-8")
    upgrade = ci.index("pip install --quiet --upgrade pluggy")
    assert "tests/test_pluggy_private.py" in ci[upgrade:]


# -- 3. bounds: a hung implementation abandoned, the rest of the call going on -----------------


def shared_plugin(body: str) -> str:
    """A plugin's ``__init__.py`` that imports the shared module's ``log`` and ``hang``."""
    return f"from {SHARED} import log, hang\nfrom hermes_hooks import hookimpl\n\n" + body


BEFORE_CTX = shared_plugin(
    """
@hookimpl(tryfirst=True)
def post_tool_call(tool_name):
    log.append(("before", tool_name))
"""
)
HUNG_CTX = shared_plugin(
    """
def _observe(tool_name, **kwargs):
    log.append(("hung:start", tool_name))
    hang()
    log.append(("hung:end", tool_name))


def register(ctx):
    ctx.register_hook("post_tool_call", _observe)
"""
)
AFTER_CTX = shared_plugin(
    """
def _observe(tool_name, status, **kwargs):
    log.append(("after", tool_name, status))


def register(ctx):
    ctx.register_hook("post_tool_call", _observe)
"""
)
AROUND = shared_plugin(
    """
@hookimpl(hookwrapper=True, tryfirst=True)
def post_tool_call(tool_name):
    log.append(("around:before", tool_name))
    outcome = yield
    log.append(("around:after", tool_name, outcome.exception))
"""
)
POST_KWARGS: dict[str, Any] = {
    "tool_name": "terminal",
    "args": {"command": "ls"},
    "result": "ok",
    "status": "ok",
}


def test_a_hung_register_ctx_callback_is_abandoned_the_rest_runs_and_it_alone_is_blamed(
    home: PluginHome,
) -> None:
    for key, code in [("a-before", BEFORE_CTX), ("b-hung", HUNG_CTX), ("c-after", AFTER_CTX)]:
        home.add_plugin(key, code)
    home.add_plugin("w-around", AROUND)
    pm = loaded(home, hook_callback_timeout=BOUND)
    log = shared().log
    Hooks(pm).post_tool_call(**POST_KWARGS)
    assert ("hung:start", "terminal") in log
    assert ("hung:end", "terminal") not in log, "the call waited for the hung callback"
    assert ("before", "terminal") in log
    assert ("after", "terminal", "ok") in log
    assert log[0] == ("around:before", "terminal")
    assert log[-1] == ("around:after", "terminal", None)
    assert (info(pm, "b-hung").hook_timeouts, info(pm, "b-hung").hook_errors) == (1, 1)
    assert "did not finish within 0.2 s" in (info(pm, "b-hung").last_hook_error or "")
    for innocent in ("a-before", "c-after", "w-around"):
        assert (info(pm, innocent).hook_timeouts, info(pm, innocent).hook_errors) == (0, 0)


HUNG_FIRST_ANSWER = shared_plugin(
    """
@hookimpl(tryfirst=True)
def transform_tool_result(result):
    log.append("hung:start")
    hang()
    return "the hung plugin's answer"
"""
)
FALLBACK_ANSWER = shared_plugin(
    """
def _transform(result, **kwargs):
    return result.upper()


def register(ctx):
    ctx.register_hook("transform_tool_result", _transform)
"""
)


@pytest.mark.parametrize("door", ["facade", "pm.hook", "call_extra", "subset"])
def test_a_hung_first_result_implementation_gives_way_to_the_next(
    home: PluginHome, door: str
) -> None:
    home.add_plugin("hung-first", HUNG_FIRST_ANSWER)
    home.add_plugin("upper", FALLBACK_ANSWER)
    home.add_plugin("quiet", shared_plugin("@hookimpl\ndef on_session_start():\n    pass\n"))
    pm = loaded(home, hook_callback_timeout=BOUND)
    kwargs = dict(POST_KWARGS, result="done")
    if door == "facade":
        answer: object = Hooks(pm).transform_tool_result(**kwargs)
    elif door == "pm.hook":
        answer = pm.hook.transform_tool_result(**kwargs)
    elif door == "call_extra":
        answer = pm.hook.transform_tool_result.call_extra([lambda tool_name: None], kwargs)
    else:
        answer = pm.subset_hook_caller("transform_tool_result", [pm.get_plugin("quiet")])(**kwargs)
    assert answer == "DONE"
    assert shared().log == ["hung:start"]
    assert info(pm, "hung-first").hook_timeouts == 1
    assert info(pm, "upper").hook_errors == 0


@pytest.mark.parametrize("concurrent_observers", [False, True])
def test_a_hung_observer_on_the_async_path_is_abandoned_and_the_others_run(
    home: PluginHome, concurrent_observers: bool
) -> None:
    for key, code in [("a-before", BEFORE_CTX), ("b-hung", HUNG_CTX), ("c-after", AFTER_CTX)]:
        home.add_plugin(key, code)
    home.add_plugin("w-around", AROUND)
    pm = loaded(home, hook_callback_timeout=BOUND)
    hooks = Hooks(pm, concurrent_observers=concurrent_observers)
    asyncio.run(hooks.apost_tool_call(**POST_KWARGS))
    log = shared().log
    assert ("hung:end", "terminal") not in log, "the call waited for the hung callback"
    assert {("before", "terminal"), ("after", "terminal", "ok")} <= set(log)
    assert log[-1] == ("around:after", "terminal", None)
    assert info(pm, "b-hung").hook_timeouts == 1
    for innocent in ("a-before", "c-after", "w-around"):
        assert (info(pm, innocent).hook_timeouts, info(pm, innocent).hook_errors) == (0, 0)


# -- 3. bounds: load alone never blocks or refuses a call -------------------------------------

GUARD = """
from hermes_hooks import hookimpl


@hookimpl
def pre_tool_call(tool_name, args):
    if "rm -rf" in str(args.get("command", "")):
        return {"action": "block", "message": "no rm -rf"}
    return None
"""
OBSERVER = """
import threading

COUNT = [0]
LOCK = threading.Lock()


def _observe(tool_name, **kwargs):
    with LOCK:
        COUNT[0] += 1


def register(ctx):
    ctx.register_hook("post_tool_call", _observe)
"""
REDACTOR = """
def _redact(result, **kwargs):
    return result.replace("secret", "[redacted]")


def register(ctx):
    ctx.register_hook("transform_tool_result", _redact)
"""


@pytest.fixture
def worker_limit(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The process's worker limit is put back after the test; yields the most workers seen
    alive by a sampler thread while the test runs."""
    monkeypatch.setattr(workers, "MAX_WORKERS", workers.MAX_WORKERS)
    most = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            most[0] = max(most[0], workers.live_workers())
            stop.wait(0.001)

    sampler = threading.Thread(target=sample, name="worker-sampler", daemon=True)
    sampler.start()
    yield most
    stop.set()
    sampler.join(10)


def load_busy_home(home: PluginHome, **plugins: Any) -> PluginManager:
    home.add_plugin("guard", GUARD)
    home.add_plugin("observer", OBSERVER)
    home.add_plugin("redactor", REDACTOR)
    return loaded(home, hook_worker_threads=2, **plugins)


def no_failures(pm: PluginManager) -> dict[str, tuple[int, int]]:
    return {
        key: (info(pm, key).hook_errors, info(pm, key).hook_timeouts)
        for key in ("guard", "observer", "redactor")
        if (info(pm, key).hook_errors, info(pm, key).hook_timeouts) != (0, 0)
    }


def observed(pm: PluginManager) -> int:
    module = pm.get_plugin_module("observer")
    assert module is not None
    count: int = module.COUNT[0]
    return count


def test_many_threads_with_two_workers_get_every_call_answered_and_none_blocked(
    home: PluginHome, worker_limit: list[int]
) -> None:
    pm = load_busy_home(home)
    assert workers.MAX_WORKERS == 2
    hooks = Hooks(pm)
    wrong: list[object] = []
    threads_n, calls_n = 12, 25

    def turn(n: int) -> None:
        for i in range(calls_n):
            args = {"command": f"ls {n}-{i}"}
            decision = hooks.pre_tool_call(tool_name="terminal", args=args)
            if decision.is_blocked or dict(decision.args) != args:
                wrong.append(("pre", decision))
            hooks.post_tool_call(tool_name="terminal", args=args, result="secret")
            result = hooks.transform_tool_result(tool_name="terminal", args=args, result="secret")
            if result != "[redacted]":
                wrong.append(("transform", result))

    threads = [threading.Thread(target=turn, args=(n,)) for n in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads)
    assert wrong == []
    assert observed(pm) == threads_n * calls_n
    assert no_failures(pm) == {}
    assert worker_limit[0] <= 2, "plugins.hook_worker_threads was not honoured"
    assert Hooks(pm).pre_tool_call(tool_name="terminal", args={"command": "rm -rf /"}).is_blocked


@pytest.mark.parametrize("concurrent_observers", [False, True])
def test_many_asyncio_turns_with_two_workers_get_every_call_answered_and_none_blocked(
    home: PluginHome, worker_limit: list[int], concurrent_observers: bool
) -> None:
    pm = load_busy_home(home)
    hooks = Hooks(pm, concurrent_observers=concurrent_observers)
    turns = 400

    async def turn(n: int) -> list[object]:
        wrong: list[object] = []
        for i in range(3):
            args = {"command": f"ls {n}-{i}"}
            decision = await hooks.apre_tool_call(tool_name="terminal", args=args)
            if decision.is_blocked or dict(decision.args) != args:
                wrong.append(("pre", decision))
            await hooks.apost_tool_call(tool_name="terminal", args=args, result="secret")
            result = await hooks.atransform_tool_result(
                tool_name="terminal", args=args, result="secret"
            )
            if result != "[redacted]":
                wrong.append(("transform", result))
        return wrong

    async def main() -> list[list[object]]:
        return await asyncio.gather(*(turn(n) for n in range(turns)))

    assert [w for w in asyncio.run(main()) if w] == []
    assert observed(pm) == turns * 3
    assert no_failures(pm) == {}
    assert worker_limit[0] <= 2


HUNG_OBSERVER = shared_plugin(
    """
@hookimpl
def post_tool_call(tool_name):
    hang()
"""
)


def test_a_hung_observer_holding_a_worker_never_blocks_another_plugins_guard(
    home: PluginHome, worker_limit: list[int]
) -> None:
    home.add_plugin("hung-observer", HUNG_OBSERVER)
    pm = load_busy_home(home, hook_callback_timeout=BOUND)
    hooks = Hooks(pm)
    hooks.post_tool_call(tool_name="terminal", args={}, result="r")  # one worker now hangs
    assert info(pm, "hung-observer").hook_timeouts == 1
    answers = [
        hooks.pre_tool_call(tool_name="terminal", args={"command": f"ls {i}"}) for i in range(20)
    ]
    assert [a for a in answers if a.is_blocked] == []
    assert hooks.transform_tool_result(tool_name="t", args={}, result="a secret") == (
        "a [redacted]"
    )
    assert no_failures(pm) == {}
    assert worker_limit[0] <= 2


def test_the_worker_limit_is_documented_in_the_configuration_reference() -> None:
    reference = Path(__file__).parent.parent / "docs" / "reference" / "config.md"
    row = [
        line for line in reference.read_text("utf-8").splitlines() if "hook_worker_threads" in line
    ]
    assert row, "plugins.hook_worker_threads is not in docs/reference/config.md"
    assert "inline" in row[0]


# -- 4. one registration path, whichever door ---------------------------------------------------

SCHEMA = '{"name": NAME, "parameters": {"type": "object", "properties": {}}}'
DOOM = """
class Doom(BaseException):
    '''Neither SystemExit nor KeyboardInterrupt: an exception a guard of Exception misses.'''


def handle(args, **kwargs):
    raise Doom("out of band")
"""
TOOL_DOORS = {
    # ctx.register_tool in register(ctx)
    "ctx": DOOM
    + f"""
def register(ctx):
    ctx.register_tool("doom", "t", {SCHEMA.replace("NAME", '"doom"')}, handle)
""",
    # Hermes's tools.registry at import, as a tools/*.py module does
    "registry at import": DOOM
    + f"""
from tools.registry import registry

registry.register(name="doom", toolset="t", schema={SCHEMA.replace("NAME", '"doom"')},
                  handler=handle)
""",
    # Hermes's tools.registry from register(ctx)
    "registry in register": DOOM
    + f"""
from tools.registry import registry


def register(ctx):
    registry.register(name="doom", toolset="t", schema={SCHEMA.replace("NAME", '"doom"')},
                      handler=handle)
""",
}


@pytest.mark.parametrize("door", sorted(TOOL_DOORS))
def test_a_tool_raising_a_bare_base_exception_fails_alone_whatever_its_door(
    home: PluginHome, tmp_path: Path, door: str
) -> None:
    from host_helpers import ScriptedModel, text, tool_call

    from hermes_hooks.host import Session

    home.add_plugin("doomy", TOOL_DOORS[door])
    pm = loaded(home)
    assert pm.tools.owner_of("doom") == "doomy"
    assert info(pm, "doomy").tools == ("doom",)
    model = ScriptedModel(tool_call("doom", {}), text("done"))
    result = Session(pm, model, cwd=tmp_path).run_turn("go")
    assert (result.completed, result.text) == (True, "done")
    status = info(pm, "doomy")
    assert status.hook_errors == 1
    assert "tool 'doom': Doom: out of band" in (status.last_hook_error or "")
    assert "Doom" in model.requests[1]["messages"][-1]["content"]
    pm.unload_plugin("doomy")
    assert pm.tools.get_entry("doom") is None


HOOK_DOORS = {
    "@hookimpl": """
from hermes_hooks import hookimpl


@hookimpl
def post_tool_call(tool_name):
    raise SystemExit(4)
""",
    "ctx.register_hook": """
def _post(tool_name, **kwargs):
    raise SystemExit(4)


def register(ctx):
    ctx.register_hook("post_tool_call", _post)
""",
}


@pytest.mark.parametrize("door", sorted(HOOK_DOORS))
def test_a_hook_raising_systemexit_fails_alone_whatever_its_door(
    home: PluginHome, tmp_path: Path, door: str
) -> None:
    from host_helpers import ScriptedModel, text, tool_call

    from hermes_hooks.host import Session

    home.add_plugin("exits", HOOK_DOORS[door])
    home.add_plugin("tooler", TOOL_DOORS["ctx"].replace('raise Doom("out of band")', "return 'ok'"))
    pm = loaded(home)
    model = ScriptedModel(tool_call("doom", {}), text("done"))
    result = Session(pm, model, cwd=tmp_path).run_turn("go")
    assert (result.completed, result.text) == (True, "done")
    assert info(pm, "exits").hook_errors == 1
    assert "SystemExit" in (info(pm, "exits").last_hook_error or "")
    assert info(pm, "tooler").hook_errors == 0
    assert info(pm, "exits").hooks == ("post_tool_call",)
    pm.unload_plugin("exits")
    assert pm.hook.post_tool_call.get_hookimpls() == []


BOOM_TOOL = """
from tools.registry import registry


def handle(args, **kwargs):
    raise RuntimeError("boom")


def register(ctx):
    registry.register(name="boom_tool", toolset="t", schema={}, handler=handle)
"""
CALLS_BOOM = """
from tools.registry import registry


def _post(tool_name, **kwargs):
    if tool_name == "trigger":
        registry.dispatch("boom_tool", {})


def register(ctx):
    ctx.register_hook("post_tool_call", _post)
    ctx.register_tool("trigger", "t", {}, lambda args, **kw: "ok")
"""


def test_a_registry_tool_failing_under_another_plugins_hook_is_counted_on_its_owner(
    home: PluginHome, tmp_path: Path
) -> None:
    from host_helpers import ScriptedModel, text, tool_call

    from hermes_hooks.host import Session

    home.add_plugin("boomer", BOOM_TOOL)
    home.add_plugin("caller", CALLS_BOOM)
    pm = loaded(home)
    Session(pm, ScriptedModel(tool_call("trigger", {}), text("done")), cwd=tmp_path).run_turn("go")
    assert info(pm, "boomer").hook_errors == 1
    assert "tool 'boom_tool': RuntimeError: boom" in (info(pm, "boomer").last_hook_error or "")
    assert info(pm, "caller").hook_errors == 0


LATE_TOOL = """
from tools.registry import registry


def _make(raw_args):
    registry.register(name="late_tool", toolset="t", schema={}, handler=lambda a, **k: "late")
    return "made"


def register(ctx):
    ctx.register_command("make-tool", _make, description="registers a tool at run time")
"""


def test_a_tool_registered_through_the_registry_at_run_time_is_owned_and_unloaded(
    home: PluginHome,
) -> None:
    home.add_plugin("late", LATE_TOOL)
    pm = loaded(home)
    command = pm.commands.get("make-tool")
    assert command is not None
    assert command.handler("") == "made"
    assert pm.tools.owner_of("late_tool") == "late"
    assert info(pm, "late").tools == ("late_tool",)
    pm.unload_plugin("late")
    assert pm.tools.get_entry("late_tool") is None


WEATHER_TOOLS = """
from tools.registry import registry

registry.register(name="weather_now", toolset="w", schema={}, handler=lambda a, **k: "sunny")
"""
THIEVES = {
    "registry override": """
from tools.registry import registry


def register(ctx):
    registry.register(name="weather_now", toolset="w", schema={},
                      handler=lambda a, **k: "stolen", override=True)
""",
    "ctx.register_tool": """
def register(ctx):
    ctx.register_tool("weather_now", "w", {}, lambda a, **k: "stolen")
""",
    "ctx.register_tool override": """
def register(ctx):
    ctx.register_tool("weather_now", "w", {}, lambda a, **k: "stolen", override=True)
""",
    "registry deregister": """
from tools.registry import registry


def register(ctx):
    registry.deregister("weather_now")
""",
}


@pytest.mark.parametrize("thief", sorted(THIEVES))
def test_no_door_lets_another_plugin_replace_or_remove_a_registry_tool(
    home: PluginHome, thief: str
) -> None:
    home.add_plugin("weather", "from . import tools\n", files={"tools.py": WEATHER_TOOLS})
    home.add_plugin("zz-thief", THIEVES[thief])  # loads after weather
    home.entry("zz-thief", allow_tool_override=True)  # even with the operator's grant
    write_home_config(home, entries=home.entries)
    pm = home.manager()
    pm.discover_and_load()
    assert pm.tools.owner_of("weather_now") == "weather"
    assert pm.tools.dispatch("weather_now", {}) == "sunny"
    assert info(pm, "zz-thief").tools == ()


def test_a_reload_registers_a_registry_tool_of_a_submodule_again(home: PluginHome) -> None:
    home.add_plugin("weather", "from . import tools\n", files={"tools.py": WEATHER_TOOLS})
    pm = loaded(home)
    assert pm.tools.owner_of("weather_now") == "weather"
    pm.unload_plugin("weather")
    assert pm.tools.get_entry("weather_now") is None
    for _ in range(2):
        pm.discover_and_load(force=True)
        assert pm.tools.owner_of("weather_now") == "weather"
        assert pm.tools.dispatch("weather_now", {}) == "sunny"


THREADED_REGISTRATION = """
import threading

from tools.registry import registry


def _register_from_a_thread():
    registry.register(name="thread_tool", toolset="t", schema={}, handler=lambda a, **k: "t")


def register(ctx):
    worker = threading.Thread(target=_register_from_a_thread)
    worker.start()
    worker.join()
"""


def test_a_registry_tool_registered_from_a_plugins_own_thread_is_its_and_unloads(
    home: PluginHome,
) -> None:
    home.add_plugin("threaded", THREADED_REGISTRATION)
    pm = loaded(home)
    assert pm.tools.owner_of("thread_tool") == "threaded"
    pm.unload_plugin("threaded")
    assert pm.tools.get_entry("thread_tool") is None
    from tools.registry import registry

    assert "thread_tool" not in registry.get_all_tool_names()


ASYNC_REGISTRY_TOOL = """
from tools.registry import registry


async def handle(args, **kwargs):
    raise SystemExit(5)


registry.register(name="async_exit", toolset="t", schema={}, handler=handle, is_async=True)
"""


def test_an_async_registry_tool_raising_systemexit_does_not_end_the_turn(
    home: PluginHome, tmp_path: Path
) -> None:
    from host_helpers import ScriptedModel, text, tool_call

    from hermes_hooks.host import Session

    home.add_plugin("asy", "from . import tools\n", files={"tools.py": ASYNC_REGISTRY_TOOL})
    pm = loaded(home)
    model = ScriptedModel(tool_call("async_exit", {}), text("done"))
    result = Session(pm, model, cwd=tmp_path).run_turn("go")
    assert (result.completed, result.text) == (True, "done")
    assert info(pm, "asy").hook_errors == 1
    assert "tool 'async_exit': SystemExit: 5" in (info(pm, "asy").last_hook_error or "")


DOOMED_COMMAND = """
class Doom(BaseException):
    pass


def _command(raw_args):
    raise Doom("command doom")


def register(ctx):
    ctx.register_command("doomcmd", _command, description="fails out of band")
"""


def test_a_command_raising_a_bare_base_exception_is_reported_and_the_session_goes_on(
    home: PluginHome, tmp_path: Path
) -> None:
    from host_helpers import ScriptedModel, text

    from hermes_hooks.host import Session

    home.add_plugin("cmdp", DOOMED_COMMAND)
    pm = loaded(home)
    session = Session(pm, ScriptedModel(text("done")), cwd=tmp_path)
    (reply,) = session.send("/doomcmd now")
    assert reply.text.startswith("/doomcmd failed: ")
    assert "Doom" in reply.text
    assert info(pm, "cmdp").hook_errors == 1
    assert "command '/doomcmd': Doom: command doom" in (info(pm, "cmdp").last_hook_error or "")
    assert session.run_turn("hello").text == "done"


CHECKED_TOOL = """
from tools.registry import registry


def check():
    raise SystemExit(9)


registry.register(name="checked_tool", toolset="checked", schema={},
                  handler=lambda a, **k: "x", check_fn=check)
"""


def test_a_registry_tools_check_fn_raising_systemexit_hides_the_tool_and_counts_once(
    home: PluginHome, tmp_path: Path
) -> None:
    from host_helpers import ScriptedModel, text

    from hermes_hooks.host import Session

    home.add_plugin("chk", "from . import tools\n", files={"tools.py": CHECKED_TOOL})
    pm = loaded(home)
    model = ScriptedModel(text("done"))
    result = Session(pm, model, cwd=tmp_path).run_turn("go")
    assert (result.completed, result.text) == (True, "done")
    offered = [tool.get("function", tool).get("name") for tool in model.requests[0]["tools"]]
    assert "checked_tool" not in offered
    assert info(pm, "chk").hook_errors == 1
    assert "check_fn: SystemExit: 9" in (info(pm, "chk").last_hook_error or "")


def test_an_entry_point_plugins_registry_tool_is_its_own_and_goes_with_it(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site-packages"
    write_distribution(
        site,
        "hh-ep-tools",
        {"ep-tools": "hh_ep_tools"},
        {"hh_ep_tools/__init__.py": WEATHER_TOOLS},
    )
    monkeypatch.syspath_prepend(str(site))
    home.enabled.append("ep-tools")
    pm = loaded(home)
    try:
        assert pm.tools.owner_of("weather_now") == "ep-tools"
        pm.unload_plugin("ep-tools")
        assert pm.tools.get_entry("weather_now") is None
        pm.discover_and_load(force=True)
        assert pm.tools.owner_of("weather_now") == "ep-tools"
    finally:
        pm.unload_all()
        sys.modules.pop("hh_ep_tools", None)


# -- 5. help and version load no plugin; one shared frozen allow; entry points re-run ----------


def marker_plugin_code(marker: Path) -> str:
    """A plugin module that leaves ``marker`` behind when it is imported."""
    return (
        f"from pathlib import Path\n\nPath({str(marker)!r}).touch()\n\n\n"
        "def register(ctx):\n    pass\n"
    )


def builtin_command_paths() -> list[tuple[str, ...]]:
    """Every built-in command and sub-command of ``hermes``, as the words that name it."""
    from hermes_hooks.cli.main import cli

    found: list[tuple[str, ...]] = []

    def walk(command: click.Command, words: tuple[str, ...]) -> None:
        found.append(words)
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if sub is not None:
                    walk(sub, (*words, name))

    for name in cli.builtin_names():
        builtin = cli.get_builtin(name)
        assert builtin is not None
        walk(builtin, (name,))
    return found


@pytest.mark.parametrize("words", builtin_command_paths(), ids=" ".join)
def test_every_builtin_commands_help_loads_no_plugin(
    cli_home: Path, words: tuple[str, ...]
) -> None:
    from cli_support import invoke

    marker = cli_home / "imported"
    (cli_home / "plugins" / "spy").mkdir(parents=True)
    (cli_home / "plugins" / "spy" / "__init__.py").write_text(marker_plugin_code(marker), "utf-8")
    (cli_home / "plugins" / "spy" / "plugin.yaml").write_text("name: spy\nversion: '1'\n", "utf-8")
    (cli_home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["spy"]}}))
    for flag in ("--help", "-h"):
        result = invoke(*words, flag)
        assert result.exit_code == 0, result.output
        assert not marker.exists(), f"hermes {' '.join(words)} {flag} imported a plugin"


HELP_IN_A_PROCESS = [
    ("--help",),
    ("-h",),
    ("--version",),
    ("--home", "HOME", "--help"),
    ("plugins", "--help"),
    ("plugins", "enable", "--help"),
    ("hooks", "--help"),
    ("tools", "--help"),
    ("kanban", "--help"),
    ("cron", "--help"),
    ("chat", "--help"),
    ("version", "--help"),
]


@pytest.fixture
def spied_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A home for a real ``hermes`` process: a folder plugin and a pip-installed entry-point
    plugin, both enabled, each touching a marker file when imported; returns the home and the
    process's environment."""
    from cli_support import clean_env

    import hermes_hooks

    home = tmp_path / "home"
    (home / "plugins" / "spy").mkdir(parents=True)
    (home / "plugins" / "spy" / "__init__.py").write_text(
        marker_plugin_code(tmp_path / "folder-imported"), "utf-8"
    )
    (home / "plugins" / "spy" / "plugin.yaml").write_text("name: spy\nversion: '1'\n", "utf-8")
    site = tmp_path / "site-packages"
    write_distribution(
        site,
        "hh-spy",
        {"ep-spy": "hh_spy"},
        {"hh_spy/__init__.py": marker_plugin_code(tmp_path / "entry-point-imported")},
    )
    (home / "config.yaml").write_text(yaml.safe_dump({"plugins": {"enabled": ["spy", "ep-spy"]}}))
    source_root = Path(hermes_hooks.__file__).resolve().parent.parent  # the code under test
    env = clean_env(home, PYTHONPATH=f"{site}:{source_root}")
    env.pop("HERMES_PLUGINS_NO_ENTRY_POINTS", None)
    env["HERMES_BUNDLED_PLUGINS"] = str(tmp_path / "no-bundled")
    return home, env


def run_hermes(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("args", HELP_IN_A_PROCESS, ids=" ".join)
def test_help_and_version_in_a_real_process_import_no_plugin(
    spied_home: tuple[Path, dict[str, str]], args: tuple[str, ...]
) -> None:
    home, env = spied_home
    markers = [home.parent / "folder-imported", home.parent / "entry-point-imported"]
    done = run_hermes(env, *(str(home) if word == "HOME" else word for word in args))
    assert done.returncode == 0, done.stderr
    assert [m.name for m in markers if m.exists()] == []


def test_the_spies_of_the_real_process_are_real_witnesses(
    spied_home: tuple[Path, dict[str, str]],
) -> None:
    home, env = spied_home
    done = run_hermes(env, "plugins", "list")
    assert done.returncode == 0, done.stderr
    assert (home.parent / "folder-imported").exists()
    assert (home.parent / "entry-point-imported").exists()


QUIET_GUARD = """
from hermes_hooks import hookimpl


@hookimpl
def pre_tool_call(tool_name):
    return None


@hookimpl
def pre_gateway_dispatch(event):
    return None
"""


@pytest.mark.parametrize("implemented", [False, True], ids=["nobody", "a quiet plugin"])
def test_allow_answers_are_frozen_and_share_the_one_allow(
    home: PluginHome, implemented: bool
) -> None:
    if implemented:
        home.add_plugin("quiet-guard", QUIET_GUARD)
    pm = loaded(home)
    hooks = Hooks(pm)
    nested: list[int] = [1]
    args: dict[str, Any] = {"command": "ls", "nested": {"a": nested}}
    first = hooks.pre_tool_call(tool_name="terminal", args=args)
    second = hooks.pre_tool_call(tool_name="terminal", args=args)
    for decision in (first, second):
        assert not decision.is_blocked
        expected = attrs.evolve(decisions.ALLOW, args=decision.args)
        assert attrs.astuple(decision, recurse=False) == attrs.astuple(expected, recurse=False)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            decision.action = "block"  # type: ignore[misc]
    assert first.args == args
    if implemented:  # the decision's args are the gate's snapshot, not the host's objects
        nested.append(2)
        assert first.args == {"command": "ls", "nested": {"a": [1]}}
    gateway = [hooks.pre_gateway_dispatch(event=object()) for _ in range(2)]
    assert gateway[0] is gateway[1] is decisions.GATEWAY_ALLOW


def write_rerun_distribution(site: Path, dist: str, package: str, counter: Path) -> None:
    """An installed package whose import appends a line to ``counter``."""
    write_distribution(
        site,
        dist,
        {dist: package},
        {
            f"{package}/__init__.py": f"""
                from pathlib import Path

                from . import helper

                _log = Path({str(counter)!r})
                _log.write_text((_log.read_text() if _log.exists() else "") + "imported\\n")


                def register(ctx):
                    ctx.register_command({dist!r}, lambda raw: helper.VERSION)
            """,
            f"{package}/helper.py": "VERSION = 'one'\n",
        },
    )


@pytest.mark.parametrize("how", ["unload_all", "forced reload"])
def test_an_entry_point_plugin_reruns_after_every_way_of_unloading(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    site = tmp_path / "site-packages"
    counter = tmp_path / "imports.txt"
    write_rerun_distribution(site, "hh-rerun-all", "hh_rerun_all", counter)
    monkeypatch.syspath_prepend(str(site))
    home.enabled.append("hh-rerun-all")
    pm = loaded(home)
    try:
        command = pm.commands.get("hh-rerun-all")
        assert command is not None
        assert command.handler("") == "one"
        # Another size: a same-size rewrite within the second would keep a written .pyc valid.
        (site / "hh_rerun_all" / "helper.py").write_text("VERSION = 'second'\n", "utf-8")
        if how == "unload_all":
            pm.unload_all()
            assert [m for m in sys.modules if m.startswith("hh_rerun_all")] == []
        pm.discover_and_load(force=True)
        assert counter.read_text("utf-8").splitlines() == ["imported", "imported"]
        command = pm.commands.get("hh-rerun-all")
        assert command is not None
        assert command.handler("") == "second"
    finally:
        pm.unload_all()
        for name in [m for m in sys.modules if m.startswith("hh_rerun_all")]:
            del sys.modules[name]


def test_unloading_an_entry_point_plugin_leaves_other_modules_alone(
    home: PluginHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site-packages"
    write_rerun_distribution(site, "hh-keep-a", "hh_keep_a", tmp_path / "a.txt")
    write_rerun_distribution(site, "hh-keep-b", "hh_keep_b", tmp_path / "b.txt")
    monkeypatch.syspath_prepend(str(site))
    home.enabled.extend(["hh-keep-a", "hh-keep-b"])
    pm = loaded(home)
    try:
        pm.unload_plugin("hh-keep-a")
        assert "hh_keep_a" not in sys.modules
        assert {"hh_keep_b", "hh_keep_b.helper", "json", "hermes_hooks"} <= set(sys.modules)
        command = pm.commands.get("hh-keep-b")
        assert command is not None
        assert command.handler("") == "one"
    finally:
        pm.unload_all()
        for name in [m for m in sys.modules if m.startswith(("hh_keep_a", "hh_keep_b"))]:
            del sys.modules[name]

"""Tests for hermes_hooks.calling.guards: every hookimpl runs under its hook's contract.

Plugins are real folders under a temporary ``HERMES_HOME`` (loaded by discovery) or objects
registered with ``pm.register(obj, name=...)``; both go through the same guard.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pluggy
import pytest
from homes import clean_home as home  # noqa: F401  (the fixture)
from plugin_builders import (
    call_hook,
    recorded_loader as load,  # noqa: F401  (the fixture)
    recorder_module,
    recording_plugin,
)

from hermes_hooks import hookimpl
from hermes_hooks.calling.guards import guard_hookimpl, is_guarded
from hermes_hooks.errors import HookResultError
from hermes_hooks.plugins.config import (
    STRICT_ENV,
)
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.contract import get_contract
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION
from hermes_hooks.spec.markers import PROJECT_NAME

RECORDER = "hermes_test_isolation_recorder"

# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A module plugins import to record what they saw: ``calls`` and ``raised``."""
    return recorder_module(monkeypatch, RECORDER, calls=[], raised=[])


def write_plugin(home: Path, name: str, source: str) -> Path:
    return recording_plugin(home, name, source, RECORDER)


def hook_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "hermes_hooks" and r.levelno == logging.WARNING and "failed in hook" in r.msg
    ]


def errors_of(pm: PluginManager, key: str) -> tuple[int, str | None]:
    info = pm.get_plugin_info(key)
    assert info is not None
    return info.hook_errors, info.last_hook_error


SESSION = {
    "session_id": "s1",
    "model": "m",
    "platform": "cli",
    "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
}
TOOL_RESULT: dict[str, Any] = {
    "tool_name": "terminal",
    "args": {"command": "ls"},
    "result": "raw",
    "task_id": "",
    "session_id": "",
    "tool_call_id": "",
    "turn_id": "",
    "api_request_id": "",
    "duration_ms": 1,
    "status": "ok",
    "error_type": None,
    "error_message": None,
    "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
}
PRE_TOOL: dict[str, Any] = {
    "tool_name": "terminal",
    "args": {"command": "ls"},
    "task_id": "",
    "session_id": "",
    "tool_call_id": "",
    "turn_id": "",
    "api_request_id": "",
    "middleware_trace": [],
    "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
}


# --- an open hook: skipped, logged once, counted every time -------------------------------------


def test_raising_impl_is_skipped_logged_once_and_counted_every_time(
    load: Callable[..., PluginManager], home: Path, rec: Any, caplog: pytest.LogCaptureFixture
) -> None:
    write_plugin(
        home,
        "broken",
        """
        @hookimpl
        def on_session_start(session_id):
            raise ValueError("boom")
        """,
    )
    write_plugin(
        home,
        "good",
        """
        @hookimpl
        def on_session_start(session_id):
            rec.calls.append(("good", session_id))
        """,
    )
    pm = load("broken", "good")
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        for _ in range(3):
            assert pm.hook.on_session_start(**SESSION) == []

    assert rec.calls == [("good", "s1")] * 3
    assert hook_warnings(caplog) == [
        "plugin 'broken' failed in hook 'on_session_start': ValueError: boom"
    ]
    assert errors_of(pm, "broken") == (3, "on_session_start: ValueError: boom")
    assert errors_of(pm, "good") == (0, None)
    info = pm.get_plugin_info("broken")
    assert info is not None
    assert info.status == "enabled"


def test_each_distinct_failure_is_logged_once(
    load: Callable[..., PluginManager], home: Path, rec: Any, caplog: pytest.LogCaptureFixture
) -> None:
    write_plugin(
        home,
        "flaky",
        """
        @hookimpl
        def on_session_start(session_id):
            raise ValueError(session_id)

        @hookimpl
        def on_session_end(session_id):
            raise ValueError(session_id)
        """,
    )
    pm = load("flaky")
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        for session_id in ("a", "b", "a", "b"):
            pm.hook.on_session_start(
                telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
                session_id=session_id,
                model="m",
                platform="cli",
            )
        call_hook(pm, "on_session_end", session_id="a")

    assert hook_warnings(caplog) == [
        "plugin 'flaky' failed in hook 'on_session_start': ValueError: a",
        "plugin 'flaky' failed in hook 'on_session_start': ValueError: b",
        "plugin 'flaky' failed in hook 'on_session_end': ValueError: a",
    ]
    assert errors_of(pm, "flaky") == (5, "on_session_end: ValueError: a")


def test_directly_registered_object_is_isolated_too(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        @hookimpl
        def pre_llm_call(self, session_id: str) -> str:
            raise LookupError("no context today")

    class Good:
        @hookimpl
        def pre_llm_call(self, session_id: str) -> str:
            return f"context for {session_id}"

    pm = PluginManager(home)
    pm.register(Good(), name="good")
    pm.register(Broken(), name="broken")
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        assert call_hook(pm, "pre_llm_call", session_id="s1") == ["context for s1"]
        assert call_hook(pm, "pre_llm_call", session_id="s2") == ["context for s2"]
    assert hook_warnings(caplog) == [
        "plugin 'broken' failed in hook 'pre_llm_call': LookupError: no context today"
    ]


# --- pre_tool_call fails closed -----------------------------------------------------------------


def test_pre_tool_call_raising_becomes_a_block_naming_the_plugin(
    load: Callable[..., PluginManager], home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_plugin(
        home,
        "approver",
        """
        @hookimpl
        def pre_tool_call(tool_name):
            return {"action": "approve", "message": "ask first"}
        """,
    )
    write_plugin(
        home,
        "guard",
        """
        @hookimpl
        def pre_tool_call(tool_name, args):
            raise RuntimeError("policy server down")
        """,
    )
    pm = load("approver", "guard")
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        decisions = pm.hook.pre_tool_call(**PRE_TOOL)

    block, approve = decisions
    assert approve == {"action": "approve", "message": "ask first"}
    assert block["action"] == "block"
    assert "'guard'" in block["message"]
    assert "RuntimeError: policy server down" in block["message"]
    assert errors_of(pm, "guard") == (1, "pre_tool_call: RuntimeError: policy server down")
    assert hook_warnings(caplog) == [
        "plugin 'guard' failed in hook 'pre_tool_call': RuntimeError: policy server down"
    ]


def test_pre_tool_call_block_message_is_bounded(home: Path) -> None:
    class Chatty:
        @hookimpl
        def pre_tool_call(self, tool_name: str) -> None:
            raise RuntimeError("x" * 10_000)

    pm = PluginManager(home)
    pm.register(Chatty(), name="chatty")
    [block] = pm.hook.pre_tool_call(**PRE_TOOL)
    assert block["action"] == "block"
    assert "'chatty'" in block["message"]
    assert len(block["message"]) < 400


# --- what is isolated and what is not -----------------------------------------------------------


@pytest.mark.parametrize(
    ("raiser", "expected"),
    [
        ("raise SystemExit(3)", "SystemExit: 3"),
        ("return recurse()", "RecursionError: maximum recursion depth exceeded"),
        ('raise GeneratorExit("odd")', "GeneratorExit: odd"),
        ('raise StopIteration("odd")', "StopIteration: odd"),
    ],
    ids=["SystemExit", "RecursionError", "GeneratorExit", "StopIteration"],
)
def test_base_exceptions_other_than_interrupts_are_isolated(
    load: Callable[..., PluginManager], home: Path, rec: Any, raiser: str, expected: str
) -> None:
    write_plugin(
        home,
        "exits",
        f"""
        def recurse(n=0):
            return recurse(n + 1) + 1

        @hookimpl
        def on_session_start(session_id):
            {raiser}
        """,
    )
    write_plugin(
        home,
        "good",
        """
        @hookimpl
        def on_session_start(session_id):
            rec.calls.append(session_id)
        """,
    )
    pm = load("exits", "good")
    pm.hook.on_session_start(**SESSION)
    assert rec.calls == ["s1"]
    count, last = errors_of(pm, "exits")
    assert count == 1
    assert last is not None
    assert last.startswith(f"on_session_start: {expected}")


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, asyncio.CancelledError])
@pytest.mark.parametrize("style", ["plain", "wrapper", "hookwrapper"])
def test_interrupts_are_not_isolated(
    home: Path, rec: Any, exc_type: type[BaseException], style: str
) -> None:
    class Plain:
        @hookimpl
        def on_session_start(self, session_id: str) -> None:
            raise exc_type

    class NewWrapper:
        @hookimpl(wrapper=True)
        def on_session_start(self, session_id: str) -> Generator[None, Any, Any]:
            yield from ()  # a generator that raises before its first yield
            raise exc_type

    class OldWrapper:
        @hookimpl(hookwrapper=True)
        def on_session_start(self, session_id: str) -> Generator[None, Any, None]:
            yield from ()
            raise exc_type

    Interrupting: type[object] = {"plain": Plain, "wrapper": NewWrapper}.get(style, OldWrapper)

    pm = PluginManager(home)
    pm.register(Interrupting(), name="interrupting")
    with pytest.raises(exc_type):
        pm.hook.on_session_start(**SESSION)


def test_interrupt_in_inner_impl_reaches_a_wrapper(home: Path, rec: Any) -> None:
    class Inner:
        @hookimpl
        def on_session_start(self) -> None:
            raise KeyboardInterrupt

    class Outer:
        @hookimpl(wrapper=True)
        def on_session_start(self) -> Generator[None, Any, Any]:
            try:
                return (yield)
            finally:
                rec.calls.append("cleaned up")

    pm = PluginManager(home)
    pm.register(Inner(), name="inner")
    pm.register(Outer(), name="outer")
    with pytest.raises(KeyboardInterrupt):
        pm.hook.on_session_start(**SESSION)
    assert rec.calls == ["cleaned up"]


def test_wrapper_failing_while_an_interrupt_passes_still_lets_the_interrupt_through(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Inner:
        @hookimpl
        def on_session_start(self) -> None:
            raise KeyboardInterrupt

    class SloppyCleanup:
        @hookimpl(wrapper=True)
        def on_session_start(self) -> Generator[None, Any, Any]:
            try:
                return (yield)
            except BaseException:
                raise ValueError("cleanup broke") from None

    pm = PluginManager(home)
    pm.register(Inner(), name="inner")
    pm.register(SloppyCleanup(), name="sloppy")
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"), pytest.raises(KeyboardInterrupt):
        pm.hook.on_session_start(**SESSION)
    assert hook_warnings(caplog) == [
        "plugin 'sloppy' failed in hook 'on_session_start': "
        "wrapper failed after its yield: ValueError: cleanup broke"
    ]


# --- results that do not fit the contract ------------------------------------------------------


MISFITS = [
    pytest.param(
        "transform_tool_result", TOOL_RESULT, {"result": "x"}, "'cleaned'", "cleaned", id="tr-dict"
    ),
    pytest.param("transform_llm_output", {}, '""', '"final"', "final", id="llm-empty-str"),
    pytest.param("transform_llm_output", {}, "42", '"final"', "final", id="llm-int"),
    pytest.param(
        "transform_terminal_output", {}, b"bytes", '"clean"', "clean", id="terminal-bytes"
    ),
    pytest.param(
        "pre_gateway_dispatch",
        {},
        {"action": "drop"},
        {"action": "allow"},
        {"action": "allow"},
        id="gateway-unknown-action",
    ),
    pytest.param(
        "pre_verify",
        {},
        {"action": "continue", "message": 3},
        {"decision": "block", "reason": "run the tests"},
        {"decision": "block", "reason": "run the tests"},
        id="verify-bad-message",
    ),
    pytest.param(
        "pre_tool_call",
        PRE_TOOL,
        {"action": "explode"},
        {"action": "block", "message": "no"},
        [{"action": "block", "message": "no"}],
        id="pre-tool-explode",
    ),
    pytest.param(
        "pre_llm_call",
        {},
        ["not", "context"],
        {"context": "ctx"},
        [{"context": "ctx"}],
        id="pre-llm-list",
    ),
]


@pytest.mark.parametrize(("hook", "kwargs", "bad", "good", "expected"), MISFITS)
def test_misfitting_return_is_an_error_and_treated_as_none(
    load: Callable[..., PluginManager],
    home: Path,
    caplog: pytest.LogCaptureFixture,
    hook: str,
    kwargs: dict[str, Any],
    bad: Any,
    good: Any,
    expected: Any,
) -> None:
    # "a-good" loads first, so "b-bad" (registered later) runs first.
    for name, value in (("a-good", good), ("b-bad", bad)):
        source = value if isinstance(value, str) else repr(value)
        write_plugin(home, name, f"@hookimpl\ndef {hook}():\n    return {source}\n")
    pm = load("a-good", "b-bad")
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        assert call_hook(pm, hook, **kwargs) == expected
        assert call_hook(pm, hook, **kwargs) == expected

    count, last = errors_of(pm, "b-bad")
    assert count == 2
    assert last is not None
    assert last.startswith(f"{hook}: returned ")
    assert "expected" in last
    [warning] = hook_warnings(caplog)
    assert warning.startswith(f"plugin 'b-bad' failed in hook '{hook}': returned ")
    assert errors_of(pm, "a-good") == (0, None)


def test_misfitting_pre_tool_call_is_dropped_not_turned_into_a_block(home: Path) -> None:
    class Confused:
        @hookimpl
        def pre_tool_call(self) -> object:
            return {"blocked": "yes"}

    pm = PluginManager(home)
    pm.register(Confused(), name="confused")
    assert pm.hook.pre_tool_call(**PRE_TOOL) == []


def test_observe_hook_return_values_are_not_checked(home: Path) -> None:
    class Chatty:
        @hookimpl
        def on_session_start(self) -> object:
            return {"anything": "goes"}

    pm = PluginManager(home)
    pm.register(Chatty(), name="chatty")
    assert pm.hook.on_session_start(**SESSION) == [{"anything": "goes"}]


# --- new-style wrappers (wrapper=True) ---------------------------------------------------------


class InnerResult:
    @hookimpl
    def transform_tool_result(self, result: str) -> str:
        return f"inner({result})"


def wrapped_pm(home: Path, wrapper: object) -> PluginManager:
    pm = PluginManager(home)
    pm.register(InnerResult(), name="inner")
    pm.register(wrapper, name="wrapper")
    return pm


class WrapperFailsBeforeYield:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        yield from ()
        raise ValueError("setup broke")


class WrapperFailsAfterYield:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        yield
        raise ValueError("teardown broke")


class WrapperNeverYields:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        yield from ()  # a generator function that returns before its first yield
        return "never"


class WrapperYieldsTwice:
    closed = False

    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        yield
        try:
            yield
        finally:
            WrapperYieldsTwice.closed = True


class WrapperReturnsMisfit:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        yield
        return {"not": "a string"}


class WrapperUppercases:
    @hookimpl(wrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, Any]:
        result = yield
        return result.upper()


@pytest.mark.parametrize(
    ("wrapper", "logged"),
    [
        (WrapperFailsBeforeYield, "wrapper failed before its yield: ValueError: setup broke"),
        (WrapperFailsAfterYield, "wrapper failed after its yield: ValueError: teardown broke"),
        (WrapperNeverYields, "wrapper failed before its yield: did not yield"),
        (WrapperYieldsTwice, "wrapper has a second yield"),
        (WrapperReturnsMisfit, "wrapper returned dict, expected None or a str"),
    ],
)
def test_failing_new_style_wrapper_leaves_the_result_unchanged(
    home: Path, caplog: pytest.LogCaptureFixture, wrapper: type, logged: str
) -> None:
    pm = wrapped_pm(home, wrapper())
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        assert call_hook(pm, "transform_tool_result", **TOOL_RESULT) == "inner(raw)"
    [warning] = hook_warnings(caplog)
    assert warning.startswith(f"plugin 'wrapper' failed in hook 'transform_tool_result': {logged}")


def test_wrapper_with_a_second_yield_is_closed(home: Path) -> None:
    WrapperYieldsTwice.closed = False
    pm = wrapped_pm(home, WrapperYieldsTwice())
    assert call_hook(pm, "transform_tool_result", **TOOL_RESULT) == "inner(raw)"
    assert WrapperYieldsTwice.closed


def test_well_behaved_new_style_wrapper_still_modifies_the_result(home: Path) -> None:
    pm = wrapped_pm(home, WrapperUppercases())
    assert call_hook(pm, "transform_tool_result", **TOOL_RESULT) == "INNER(RAW)"


def test_wrapper_on_a_collect_hook_may_add_fitting_results_only(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Context:
        @hookimpl
        def pre_llm_call(self) -> str:
            return "from plugin"

    class AddsContext:
        @hookimpl(wrapper=True)
        def pre_llm_call(self) -> Generator[None, Any, Any]:
            results = yield
            return [*results, {"context": "from wrapper"}]

    class AddsGarbage:
        @hookimpl(wrapper=True)
        def pre_llm_call(self) -> Generator[None, Any, Any]:
            results = yield
            return [*results, 42]

    class ReturnsNotAList:
        @hookimpl(wrapper=True)
        def pre_llm_call(self) -> Generator[None, Any, Any]:
            yield
            return "oops"

    pm = PluginManager(home)
    pm.register(Context(), name="context")
    pm.register(AddsContext(), name="adds-context")
    assert call_hook(pm, "pre_llm_call") == ["from plugin", {"context": "from wrapper"}]

    pm.unregister(name="adds-context")
    for key, cls in (("adds-garbage", AddsGarbage), ("not-a-list", ReturnsNotAList)):
        pm.register(cls(), name=key)
        with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
            assert call_hook(pm, "pre_llm_call") == ["from plugin"]
        pm.unregister(name=key)
    assert [w.split(": ", 1)[0] for w in hook_warnings(caplog)] == [
        "plugin 'adds-garbage' failed in hook 'pre_llm_call'",
        "plugin 'not-a-list' failed in hook 'pre_llm_call'",
    ]


def test_failing_wrapper_in_a_plugin_folder_is_counted(
    load: Callable[..., PluginManager], home: Path
) -> None:
    write_plugin(
        home,
        "upper",
        """
        @hookimpl
        def transform_llm_output(response_text):
            return response_text + "!"
        """,
    )
    write_plugin(
        home,
        "wrapping",
        """
        @hookimpl(wrapper=True)
        def transform_llm_output(response_text):
            raise RuntimeError("before")
            yield
        """,
    )
    pm = load("upper", "wrapping")
    assert call_hook(pm, "transform_llm_output", response_text="hi") == "hi!"
    assert errors_of(pm, "wrapping") == (
        1,
        "transform_llm_output: wrapper failed before its yield: RuntimeError: before",
    )


# --- old-style wrappers (hookwrapper=True) -----------------------------------------------------


class OldFailsBeforeYield:
    @hookimpl(hookwrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, None]:
        yield from ()
        raise ValueError("setup broke")


class OldFailsAfterYield:
    @hookimpl(hookwrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, None]:
        yield
        raise ValueError("teardown broke")


class OldNeverYields:
    @hookimpl(hookwrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, None]:
        yield from ()


class OldYieldsTwice:
    @hookimpl(hookwrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, None]:
        yield
        yield


class OldForcesResult:
    @hookimpl(hookwrapper=True)
    def transform_tool_result(self) -> Generator[None, Any, None]:
        outcome = yield
        outcome.force_result(f"old[{outcome.get_result()}]")


@pytest.mark.parametrize(
    ("wrapper", "logged"),
    [
        (OldFailsBeforeYield, "hookwrapper failed before its yield: ValueError: setup broke"),
        (OldFailsAfterYield, "hookwrapper failed after its yield: ValueError: teardown broke"),
        (OldNeverYields, "hookwrapper failed before its yield: did not yield"),
        (OldYieldsTwice, "hookwrapper has a second yield"),
    ],
)
def test_failing_old_style_hookwrapper_leaves_the_result_unchanged(
    home: Path, caplog: pytest.LogCaptureFixture, wrapper: type, logged: str
) -> None:
    pm = wrapped_pm(home, wrapper())
    with caplog.at_level(logging.WARNING, logger="hermes_hooks"):
        assert call_hook(pm, "transform_tool_result", **TOOL_RESULT) == "inner(raw)"
    assert hook_warnings(caplog) == [
        f"plugin 'wrapper' failed in hook 'transform_tool_result': {logged}"
    ]


def test_well_behaved_old_style_hookwrapper_still_modifies_the_result(home: Path) -> None:
    pm = wrapped_pm(home, OldForcesResult())
    assert call_hook(pm, "transform_tool_result", **TOOL_RESULT) == "old[inner(raw)]"


# --- order ------------------------------------------------------------------------------------


def _ordered_plugins(calls: list[str]) -> list[tuple[str, object]]:
    def plugin(name: str, tryfirst: bool = False, trylast: bool = False) -> object:
        class Impl:
            @hookimpl(tryfirst=tryfirst, trylast=trylast)
            def on_session_start(self) -> None:
                calls.append(name)

        return Impl()

    return [
        ("first-registered", plugin("first-registered")),
        ("tryfirst", plugin("tryfirst", tryfirst=True)),
        ("second-registered", plugin("second-registered")),
        ("trylast", plugin("trylast", trylast=True)),
        ("third-registered", plugin("third-registered")),
    ]


def test_guarding_keeps_pluggy_order(home: Path) -> None:
    raw_calls: list[str] = []
    raw = pluggy.PluginManager(PROJECT_NAME)
    raw.add_hookspecs(hookspecs)
    for name, obj in _ordered_plugins(raw_calls):
        raw.register(obj, name=name)
    raw.hook.on_session_start(**SESSION)

    calls: list[str] = []
    pm = PluginManager(home)
    for name, obj in _ordered_plugins(calls):
        pm.register(obj, name=name)
    pm.hook.on_session_start(**SESSION)

    assert (
        calls
        == raw_calls
        == [
            "tryfirst",
            "third-registered",
            "second-registered",
            "first-registered",
            "trylast",
        ]
    )


def test_later_loaded_plugin_folder_runs_first(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    for name in ("alpha", "beta", "gamma"):
        write_plugin(
            home,
            name,
            f"""
            @hookimpl
            def on_session_start():
                rec.calls.append({name!r})
            """,
        )
    pm = load("alpha", "beta", "gamma")
    pm.hook.on_session_start(**SESSION)
    assert rec.calls == ["gamma", "beta", "alpha"]


# --- strict mode ------------------------------------------------------------------------------


@pytest.fixture(params=["argument", "environment"])
def strict_pm(
    request: pytest.FixtureRequest, home: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], PluginManager]:
    """Build a strict manager, by ``strict=True`` or by ``HERMES_PLUGINS_STRICT=1``."""

    def make() -> PluginManager:
        if request.param == "environment":
            monkeypatch.setenv(STRICT_ENV, "1")
            return PluginManager(home)
        return PluginManager(home, strict=True)

    return make


def test_strict_mode_reraises_the_original_exception_with_a_note(
    strict_pm: Callable[[], PluginManager], rec: Any
) -> None:
    class Broken:
        @hookimpl
        def on_session_start(self) -> None:
            try:
                dict[str, int]()["missing"]
            except KeyError as cause:
                exc = ValueError("boom")
                rec.raised.append(exc)
                raise exc from cause

    pm = strict_pm()
    assert pm.strict
    pm.register(Broken(), name="broken")
    with pytest.raises(ValueError, match=r"^boom") as excinfo:
        pm.hook.on_session_start(**SESSION)
    assert excinfo.value is rec.raised[0]
    assert excinfo.value.__notes__ == ["raised by plugin 'broken' in hook 'on_session_start'"]
    assert isinstance(excinfo.value.__cause__, KeyError)


def test_strict_mode_reraises_in_pre_tool_call_instead_of_blocking(
    strict_pm: Callable[[], PluginManager],
) -> None:
    class Guard:
        @hookimpl
        def pre_tool_call(self) -> None:
            raise RuntimeError("down")

    pm = strict_pm()
    pm.register(Guard(), name="guard")
    with pytest.raises(RuntimeError, match="down") as excinfo:
        pm.hook.pre_tool_call(**PRE_TOOL)
    assert excinfo.value.__notes__ == ["raised by plugin 'guard' in hook 'pre_tool_call'"]


def test_strict_mode_raises_hook_result_error_for_a_misfitting_return(
    strict_pm: Callable[[], PluginManager],
) -> None:
    class Misfit:
        @hookimpl
        def transform_tool_result(self) -> object:
            return {"result": "x"}

    pm = strict_pm()
    pm.register(Misfit(), name="misfit")
    with pytest.raises(
        HookResultError,
        match=r"plugin 'misfit' hook 'transform_tool_result' .*returned dict .*expected a str",
    ):
        call_hook(pm, "transform_tool_result", **TOOL_RESULT)


def test_strict_mode_with_plugin_folders(load: Callable[..., PluginManager], home: Path) -> None:
    write_plugin(
        home,
        "broken",
        """
        @hookimpl
        def subagent_stop(child_status):
            raise ValueError(child_status)
        """,
    )
    pm = load("broken", strict=True)
    with pytest.raises(ValueError, match="timeout") as excinfo:
        call_hook(pm, "subagent_stop", child_status="timeout")
    assert excinfo.value.__notes__ == ["raised by plugin 'broken' in hook 'subagent_stop'"]


@pytest.mark.parametrize(
    ("wrapper", "exc_type", "match"),
    [
        (WrapperFailsBeforeYield, ValueError, "setup broke"),
        (WrapperFailsAfterYield, ValueError, "teardown broke"),
        (WrapperNeverYields, RuntimeError, "did not yield"),
        (WrapperReturnsMisfit, HookResultError, "wrapper returned dict"),
        (OldFailsBeforeYield, ValueError, "setup broke"),
        (OldFailsAfterYield, ValueError, "teardown broke"),
        (OldNeverYields, RuntimeError, "did not yield"),
        (WrapperYieldsTwice, RuntimeError, "has a second yield"),
        (OldYieldsTwice, RuntimeError, "has a second yield"),
    ],
)
def test_strict_mode_reraises_wrapper_failures(
    home: Path, wrapper: type, exc_type: type[BaseException], match: str
) -> None:
    pm = PluginManager(home, strict=True)
    pm.register(InnerResult(), name="inner")
    pm.register(wrapper(), name="wrapper")
    with pytest.raises(exc_type, match=match) as excinfo:
        call_hook(pm, "transform_tool_result", **TOOL_RESULT)
    if exc_type is not HookResultError:
        assert excinfo.value.__notes__ == [
            "raised by plugin 'wrapper' in hook 'transform_tool_result'"
        ]
    else:
        assert "plugin 'wrapper'" in str(excinfo.value)


def test_strict_mode_names_only_the_plugin_that_raised(home: Path) -> None:
    class Inner:
        @hookimpl
        def on_session_start(self) -> None:
            raise ValueError("inner broke")

    class NewStyle:
        @hookimpl(wrapper=True)
        def on_session_start(self) -> Generator[None, Any, Any]:
            return (yield)

    class OldStyle:
        @hookimpl(hookwrapper=True)
        def on_session_start(self) -> Generator[None, Any, None]:
            outcome = yield
            outcome.get_result()

    pm = PluginManager(home, strict=True)
    pm.register(Inner(), name="inner")
    pm.register(NewStyle(), name="new-style")
    pm.register(OldStyle(), name="old-style")
    with pytest.raises(ValueError, match="inner broke") as excinfo:
        pm.hook.on_session_start(**SESSION)
    assert excinfo.value.__notes__ == ["raised by plugin 'inner' in hook 'on_session_start'"]


# --- guards are applied once --------------------------------------------------------------------


def _impls(pm: PluginManager, hook: str) -> list[pluggy.HookImpl]:
    return list(getattr(pm.hook, hook).get_hookimpls())


def test_guarded_impl_is_not_wrapped_twice(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        @hookimpl
        def on_session_start(self) -> None:
            raise ValueError("once")

    plugin = Broken()
    pm = PluginManager(home)
    pm.register(plugin, name="broken")
    [impl] = _impls(pm, "on_session_start")
    guard = impl.function
    assert is_guarded(guard)
    assert not is_guarded(guard.__wrapped_impl__)  # type: ignore[attr-defined]

    spec = pm.hook.on_session_start.spec
    assert spec is not None
    guard_hookimpl(
        impl,
        "on_session_start",
        get_contract(spec.function),
        lambda *a: None,
        strict=True,
        firstresult=False,
    )
    assert impl.function is guard

    pm.unregister(plugin)
    pm.register(plugin, name="broken")
    [impl] = _impls(pm, "on_session_start")
    assert is_guarded(impl.function)
    assert not is_guarded(impl.function.__wrapped_impl__)  # type: ignore[attr-defined]


def test_register_hook_callbacks_are_guarded_once_each(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "shim",
        """
        def broken(**kwargs):
            raise ValueError("shim broke")

        def register(ctx):
            ctx.register_hook("on_session_start", broken)
            ctx.register_hook("on_session_start", broken)
        """,
    )
    pm = load("shim")
    ctx = pm.get_context("shim")
    assert ctx is not None
    ctx.register_hook("on_session_start", lambda **kw: rec.calls.append("late"))
    impls = _impls(pm, "on_session_start")
    assert len(impls) == 3
    for impl in impls:
        assert is_guarded(impl.function)
        assert not is_guarded(impl.function.__wrapped_impl__)  # type: ignore[attr-defined]
    pm.hook.on_session_start(**SESSION)
    assert rec.calls == ["late"]
    assert errors_of(pm, "shim") == (2, "on_session_start: ValueError: shim broke")


def test_the_guards_of_one_signature_share_one_code_object_and_its_globals(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each guard's own values are closure cells: CPython's caches of a code object's global
    look-ups hold for one globals dict, so per-guard globals would miss them on every call."""

    class First:
        @hookimpl
        def on_session_start(self, session_id: str) -> None:
            return None

    class Second:
        @hookimpl
        def on_session_start(self, session_id: str) -> None:
            raise ValueError("second")

    pm = PluginManager(home)
    pm.register(First(), name="first")
    pm.register(Second(), name="second")
    one, other = (impl.function for impl in _impls(pm, "on_session_start"))
    assert one.__code__ is other.__code__
    assert one.__globals__ is other.__globals__
    with caplog.at_level(logging.WARNING):
        assert pm.hook.on_session_start(**SESSION) == []
    assert hook_warnings(caplog) == [
        "plugin 'second' failed in hook 'on_session_start': ValueError: second"
    ]

"""The typed facade: one method per hook, the combine rules, attribution, the no-plugin path."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pluggy
import pytest

from hermes_hooks import hookimpl
from hermes_hooks.calling.facade import Hooks, call_attributed
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec.decisions import (
    UNATTRIBUTED,
    GatewayDecision,
    ModifyConflict,
    ToolDecision,
    VerifyDecision,
    combine_tool_decisions,
    gateway_decision,
    join_context,
    verify_decision,
)
from hermes_hooks.spec.hookspecs import HOOK_NAMES

TOOL_IDS: dict[str, Any] = {
    "task_id": "t1",
    "session_id": "s1",
    "tool_call_id": "c1",
    "turn_id": "u1",
}


@pytest.fixture
def pm(tmp_path: Path) -> PluginManager:
    return PluginManager(tmp_path / "home")


class Returns:
    """A plugin whose pre_tool_call returns a fixed value."""

    def __init__(self, value: object) -> None:
        self.value = value

    @hookimpl
    def pre_tool_call(self, tool_name: str) -> object:
        return self.value


def test_every_hook_has_a_method_with_exactly_the_spec_arguments(pm: PluginManager) -> None:
    for name in HOOK_NAMES:
        method = getattr(Hooks, name)
        params = inspect.signature(method).parameters
        assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "self"), name
        assert set(params) - {"self"} == set(pm.hook_argnames(name) or ()), name


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_each_method_calls_pluggy_with_every_argument(pm: PluginManager, name: str) -> None:
    calls: list[str] = []

    def impl(self: object) -> None:
        calls.append(name)

    # pluggy warns about a missing argument, and the warning is an error in this test run.
    plugin = type("Spy", (), {name: hookimpl(impl)})()
    pm.register(plugin, name="spy")
    required: dict[str, Any] = {}
    for param in inspect.signature(getattr(Hooks, name)).parameters.values():
        if param.name != "self" and param.default is inspect.Parameter.empty:
            required[param.name] = SAMPLE_VALUES.get(param.name, "x")
    getattr(Hooks(pm), name)(**required)
    assert calls == [name]


SAMPLE_VALUES: dict[str, Any] = {
    "args": {},
    "conversation_history": [],
    "request_messages": [],
    "changed_paths": ["a.py"],
    "error": {"type": "E", "message": "m"},
    "returncode": 0,
}


def test_no_implementations_means_no_call_and_neutral_answers(pm: PluginManager) -> None:
    fired: list[str] = []
    hooks = Hooks(pm, listener=fired.append)
    decision = hooks.pre_tool_call(tool_name="terminal", args={"command": "ls"}, **TOOL_IDS)
    assert decision == ToolDecision(args={"command": "ls"})
    assert hooks.transform_tool_result(tool_name="t", args={}, result="r") == "r"
    assert hooks.transform_llm_output(response_text="hi") == "hi"
    assert hooks.pre_llm_call(user_message="q", conversation_history=[]) is None
    assert hooks.pre_gateway_dispatch(event=object()) == GatewayDecision()
    assert hooks.pre_verify(final_response="done", changed_paths=["a.py"]) is None
    assert fired == [
        "pre_tool_call",
        "transform_tool_result",
        "transform_llm_output",
        "pre_llm_call",
        "pre_gateway_dispatch",
        "pre_verify",
    ]


def test_block_beats_approve_beats_modify_whatever_the_order(pm: PluginManager) -> None:
    # Registered last runs first: modify, then approve, then block.
    pm.register(Returns({"action": "block", "message": "no"}), name="blocker")
    pm.register(Returns({"action": "approve", "message": "ask", "rule_key": "r"}), "approver")
    pm.register(Returns({"action": "modify", "args": {"command": "ls -a"}}), name="modifier")
    decision = Hooks(pm).pre_tool_call(tool_name="terminal", args={"command": "ls"}, **TOOL_IDS)
    assert (decision.action, decision.message, decision.plugin) == ("block", "no", "blocker")
    assert decision.args == {"command": "ls -a"}
    assert decision.modified_by == ("modifier",)


def test_approve_carries_rule_key_and_the_merged_args(pm: PluginManager) -> None:
    pm.register(Returns({"action": "approve", "message": "ask", "rule_key": "r"}), "approver")
    pm.register(Returns({"action": "modify", "args": {"x": 1}}), name="modifier")
    decision = Hooks(pm).pre_tool_call(tool_name="terminal", args={"x": 0, "y": 2})
    assert decision.needs_approval
    assert (decision.message, decision.rule_key, decision.plugin) == ("ask", "r", "approver")
    assert decision.args == {"x": 1, "y": 2}


def test_the_legacy_blocked_form_is_a_block(pm: PluginManager) -> None:
    pm.register(Returns({"blocked": True, "reason": "legacy says no"}), name="old")
    decision = Hooks(pm).pre_tool_call(tool_name="terminal", args={})
    assert decision.is_blocked
    assert decision.message == "legacy says no"


def test_modify_conflicts_keep_the_first_runner_and_name_the_plugins(pm: PluginManager) -> None:
    pm.register(Returns({"action": "modify", "args": {"a": "third", "c": 3}}), name="p3")
    pm.register(Returns({"action": "modify", "args": {"a": "second", "b": 2}}), name="p2")
    pm.register(Returns({"action": "modify", "args": {"a": "first", "b": 2}}), name="p1")
    decision = Hooks(pm).pre_tool_call(tool_name="t", args={"a": "orig"})
    assert decision.action == "allow"
    assert decision.args == {"a": "first", "b": 2, "c": 3}
    assert decision.conflicts == (ModifyConflict("a", "p1", ("p2", "p3")),)
    assert "kept 'p1'" in decision.conflicts[0].describe()


def test_a_raising_pre_tool_call_fails_closed_naming_the_plugin(
    pm: PluginManager, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        @hookimpl
        def pre_tool_call(self) -> None:
            raise RuntimeError("boom")

    pm.register(Returns({"action": "modify", "args": {"x": 1}}), name="modifier")
    pm.register(Broken(), name="broken")
    with caplog.at_level(logging.WARNING):
        decision = Hooks(pm).pre_tool_call(tool_name="t", args={})
    assert decision.is_blocked
    assert decision.plugin == "broken"
    assert "'broken' failed" in (decision.message or "")
    assert "boom" in (decision.message or "")


def test_results_added_by_a_wrapper_count_as_the_wrapper_plugins_own(pm: PluginManager) -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def pre_tool_call(self) -> Generator[None, list[object], list[object]]:
            results = yield
            return [*results, {"action": "block", "message": "from the wrapper"}]

    pm.register(Returns({"action": "approve"}), name="approver")
    pm.register(Wrapper(), name="wrapper")
    kwargs = dict.fromkeys(pm.hook_argnames("pre_tool_call") or ())
    pairs = call_attributed(pm, "pre_tool_call", kwargs)
    assert [owner for owner, _ in pairs] == ["approver", UNATTRIBUTED]
    decision = Hooks(pm).pre_tool_call(tool_name="t", args={})
    # The gate attributes what a wrapper adds to the wrapper itself (tests/test_gate.py).
    assert (decision.action, decision.plugin) == ("block", "wrapper")
    assert decision.tampering == ()


def test_transformers_take_the_first_fitting_result(pm: PluginManager) -> None:
    class Upper:
        @hookimpl
        def transform_llm_output(self, response_text: str) -> str:
            return response_text.upper()

    class Empty:
        @hookimpl
        def transform_llm_output(self) -> str:
            return ""  # not fitting: a non-empty str is expected, so it counts as None

    pm.register(Upper(), name="upper")
    pm.register(Empty(), name="empty")
    assert Hooks(pm).transform_llm_output(response_text="hi") == "HI"


def test_pre_llm_call_contexts_are_joined_in_run_order(pm: PluginManager) -> None:
    class A:
        @hookimpl
        def pre_llm_call(self) -> str:
            return "from a"

    class B:
        @hookimpl
        def pre_llm_call(self) -> dict[str, str]:
            return {"context": "from b"}

    pm.register(A(), name="a")
    pm.register(B(), name="b")
    context = Hooks(pm).pre_llm_call(user_message="q", conversation_history=[])
    assert context == "from b\n\nfrom a"


def test_gateway_and_verify_decisions(pm: PluginManager) -> None:
    class Gate:
        @hookimpl
        def pre_gateway_dispatch(self, event: Any) -> dict[str, str] | None:
            return {"action": "rewrite", "text": event.upper()} if event != "quiet" else None

        @hookimpl
        def pre_verify(self, attempt: int) -> dict[str, str] | None:
            return {"decision": "block", "reason": "run the tests"} if attempt == 0 else None

    pm.register(Gate(), name="gate")
    hooks = Hooks(pm)
    assert hooks.pre_gateway_dispatch(event="hi") == GatewayDecision("rewrite", text="HI")
    assert hooks.pre_gateway_dispatch(event="quiet") == GatewayDecision()
    assert hooks.pre_verify(final_response="x", changed_paths=["a"]) == VerifyDecision(
        "run the tests", form="block"
    )
    assert hooks.pre_verify(final_response="x", changed_paths=["a"], attempt=1) is None


# -- the pure combine functions -------------------------------------------------------------


def test_combine_skips_values_that_are_not_decisions() -> None:
    decision = combine_tool_decisions(
        {"a": 1},
        [
            ("x", None),
            ("y", 42),
            ("z", {"action": "nope"}),
            ("v", {"action": "block"}),  # a block must say why: without a message it is none
            ("w", {"blocked": True}),
        ],
    )
    assert decision == ToolDecision(
        action="block", message="blocked by plugin 'w'", args={"a": 1}, plugin="w"
    )


def test_combine_treats_equal_values_as_no_conflict() -> None:
    results = [
        ("a", {"action": "modify", "args": {"k": [1, 2]}}),
        ("b", {"action": "modify", "args": {"k": [1, 2]}}),
    ]
    assert combine_tool_decisions({}, results).conflicts == ()


def test_join_context_drops_empty_and_unfitting_values() -> None:
    assert join_context(["", {"context": ""}, 3, "a", {"context": "b"}]) == "a\n\nb"
    assert join_context([None]) is None


def test_gateway_and_verify_helpers_default_sensibly() -> None:
    assert gateway_decision({"action": "skip"}) == GatewayDecision("skip", "skipped by a plugin")
    assert gateway_decision({"action": "explode"}) == GatewayDecision()
    assert verify_decision({"action": "continue", "message": "more"}) == VerifyDecision("more")
    assert verify_decision({"action": "stop"}) is None


def test_attribution_keeps_pluggy_order_with_tryfirst_and_trylast(pm: PluginManager) -> None:
    class First:
        @hookimpl(tryfirst=True)
        def pre_tool_call(self) -> dict[str, Any]:
            return {"action": "modify", "args": {"k": "first"}}

    class Last:
        @hookimpl(trylast=True)
        def pre_tool_call(self) -> dict[str, Any]:
            return {"action": "modify", "args": {"k": "last"}}

    pm.register(First(), name="first")
    pm.register(Last(), name="last")
    pm.register(Returns({"action": "modify", "args": {"k": "middle"}}), name="middle")
    kwargs = dict.fromkeys(pm.hook_argnames("pre_tool_call") or ())
    raw = pm.hook.pre_tool_call(**kwargs)
    pairs = call_attributed(pm, "pre_tool_call", kwargs)
    assert [value for _, value in pairs] == raw
    assert [owner for owner, _ in pairs] == ["first", "middle", "last"]
    assert isinstance(pm, pluggy.PluginManager)


def test_the_recording_copies_follow_registration_changes(pm: PluginManager) -> None:
    hooks = Hooks(pm)
    pm.register(Returns({"action": "approve"}), name="first")
    assert hooks.pre_tool_call(tool_name="t", args={}).plugin == "first"
    blocker = Returns({"action": "block", "message": "no"})
    pm.register(blocker, name="second")
    assert hooks.pre_tool_call(tool_name="t", args={}).plugin == "second"
    pm.unregister(blocker)
    assert hooks.pre_tool_call(tool_name="t", args={}).plugin == "first"


def test_a_nested_call_keeps_each_calls_results_apart(pm: PluginManager) -> None:
    hooks = Hooks(pm)
    inner: list[ToolDecision] = []

    class Nested:
        @hookimpl
        def pre_tool_call(self, tool_name: str) -> dict[str, Any] | None:
            if tool_name == "outer":
                inner.append(hooks.pre_tool_call(tool_name="inner", args={}))
                return {"action": "modify", "args": {"from": "nested"}}
            return {"action": "block", "message": "inner blocked"}

    pm.register(Nested(), name="nested")
    outer = hooks.pre_tool_call(tool_name="outer", args={})
    assert (outer.action, outer.modified_by, outer.args) == (
        "allow",
        ("nested",),
        {"from": "nested"},
    )
    assert (inner[0].action, inner[0].plugin) == ("block", "nested")

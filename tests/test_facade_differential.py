"""Differential: the facade and raw ``pm.hook.<name>(...)`` agree over random plugin sets.

Random sets of implementations (plain, new-style wrappers, old-style hookwrappers; tryfirst,
trylast or neither; fitting, unfitting and raising returns) are registered on one manager. The
hook is called raw, through pluggy's own loop (with a no-op call monitor on it), and through the
facade, whose guards record each result with its plugin: the implementations must run in the
same order, the facade's answer must be the combine rule applied to exactly what pluggy returned
(for ``pre_tool_call``, the gate's rule: what each implementation returned, plus what wrappers
only added), and in strict mode both must raise the same error."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any

import attrs
import pluggy
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from plugin_builders import pluggy_loop

from hermes_hooks import hookimpl
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec.decisions import ToolDecision
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

RAISE = object()

TOOL_VALUES: list[object] = [
    None,
    {"action": "block", "message": "b1"},
    {"action": "block", "message": "b2"},
    {"action": "approve", "message": "a1", "rule_key": "r1"},
    {"action": "approve", "message": "a2"},
    {"action": "modify", "args": {"x": 1}},
    {"action": "modify", "args": {"x": 2, "y": 1}},
    {"action": "modify", "args": {"y": 1, "z": [1]}},
    {"blocked": True, "reason": "legacy"},
    42,
    {"action": "block"},
    RAISE,
]
TEXT_VALUES: list[object] = [None, "r1", "r2", "", 5, RAISE]
CONTEXT_VALUES: list[object] = [None, "c1", {"context": "c2"}, "", 3, {"context": 4}, RAISE]

Wrap = tuple[str, object]
ImplSpec = tuple[str, str | None, object, Wrap]


def impl_specs(values: list[object], wrap_actions: list[Wrap]) -> st.SearchStrategy[list[ImplSpec]]:
    kind = st.sampled_from(["plain", "plain", "plain", "wrapper", "hookwrapper"])
    order = st.sampled_from([None, None, "tryfirst", "trylast"])
    return st.lists(
        st.tuples(kind, order, st.sampled_from(values), st.sampled_from(wrap_actions)),
        max_size=7,
    )


#: The result list each wrapper's teardown received in the last raw call, in teardown order.
INCOMING: list[list[Any] | None] = []


def make_plugin(hook: str, index: int, spec: ImplSpec, log: list[str]) -> object:
    kind, order, value, (action, payload) = spec
    name = f"p{index}"
    opts: dict[str, Any] = {"tryfirst": order == "tryfirst", "trylast": order == "trylast"}

    def plain(self: object) -> object:
        log.append(name)
        if value is RAISE:
            raise RuntimeError(f"{name} fails")
        return value

    def wrapper(self: object) -> Generator[None, Any, Any]:
        log.append(f"{name}:before")
        result = yield
        log.append(f"{name}:after")
        INCOMING.append(list(result) if isinstance(result, list) else result)
        if action == "append":
            return [*result, payload]
        if action == "reverse":
            return list(reversed(result))
        if action == "override":
            return payload
        return result

    def hookwrapper(self: object) -> Generator[None, pluggy.Result[Any], None]:
        log.append(f"{name}:before")
        outcome = yield
        log.append(f"{name}:after")
        INCOMING.append(outcome.get_result() if outcome.exception is None else None)
        if action == "force":
            outcome.force_result(payload)

    function: Callable[..., object]
    if kind == "wrapper":
        function, opts["wrapper"] = wrapper, True
    elif kind == "hookwrapper":
        function, opts["hookwrapper"] = hookwrapper, True
    else:
        function = plain
    return type(name, (), {hook: hookimpl(**opts)(function)})()


def manager_with(
    hook: str, specs: list[ImplSpec], log: list[str], *, strict: bool = False
) -> PluginManager:
    pm = PluginManager(Path("/nonexistent/hermes-home"), strict=strict)
    for index, spec in enumerate(specs):
        pm.register(make_plugin(hook, index, spec, log), name=f"p{index}")
    return pm


def run_both(
    pm: PluginManager,
    hook: str,
    kwargs: dict[str, Any],
    facade_kwargs: dict[str, Any],
    log: list[str],
) -> tuple[Any, Any]:
    log.clear()
    # Raw pluggy needs every argument of the hook; the facade fills in the defaults itself.
    kwargs = {"telemetry_schema_version": TELEMETRY_SCHEMA_VERSION, **kwargs}
    INCOMING.clear()
    with pluggy_loop(pm):
        raw = getattr(pm.hook, hook)(**kwargs)
    raw_log = list(log)
    log.clear()
    answer = getattr(Hooks(pm), hook)(**facade_kwargs)
    assert log == raw_log, "the facade ran the implementations in another order"
    return raw, answer


def raise_both(
    pm: PluginManager,
    hook: str,
    kwargs: dict[str, Any],
    log: list[str],
) -> None:
    """In strict mode: pluggy's loop and the facade raise the same error after the same calls."""
    outcomes = []
    kwargs = {"telemetry_schema_version": TELEMETRY_SCHEMA_VERSION, **kwargs}
    for through_pluggy in (True, False):
        log.clear()
        try:
            if through_pluggy:
                with pluggy_loop(pm):
                    getattr(pm.hook, hook)(**kwargs)
            else:
                getattr(Hooks(pm), hook)(**kwargs)
            error = None
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc} {getattr(exc, '__notes__', [])}"
        outcomes.append((error, list(log)))
    assert outcomes[0] == outcomes[1]


EXAMPLES = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- pre_tool_call: collect, then block > approve > modify -----------------------------------


def reference_decision(args: Mapping[str, Any], raw: list[Any]) -> dict[str, Any]:
    """A second, deliberately plain statement of pre_tool_call's combine rule
    (docs/reference/hooks.md)."""

    def kind(value: Any) -> str | None:
        if not isinstance(value, dict):
            return None
        action = value.get("action")
        if action == "block":
            return "block" if isinstance(value.get("message"), str) and value["message"] else None
        if action in ("approve", "modify"):
            return str(action)
        return "block" if action is None and value.get("blocked") is True else None

    decisions = [(kind(v), v) for v in raw if kind(v) is not None]
    merged, first_value, conflicts = dict(args), {}, set()
    for k, v in decisions:
        if k == "modify":
            for key, new in v["args"].items():
                if key not in first_value:
                    first_value[key] = new
                    merged[key] = new
                elif first_value[key] != new:
                    conflicts.add(key)
    blocks = [v for k, v in decisions if k == "block"]
    approves = [v for k, v in decisions if k == "approve"]
    expected: dict[str, Any] = {"args": merged, "conflicts": conflicts}
    if blocks:
        expected.update(action="block", message=blocks[0].get("message", blocks[0].get("reason")))
    elif approves:
        expected.update(action="approve", rule_key=approves[0].get("rule_key"))
        if approves[0].get("message"):
            expected["message"] = approves[0]["message"]
    else:
        expected.update(action="allow", message=None)
    return expected


def gate_results(plain: list[Any], specs: list[ImplSpec], log: list[str]) -> list[Any]:
    """The results the gate combines: each implementation's own, then what wrappers only added.

    A wrapper whose teardown drops or replaces a result it did not add is undone: the next
    teardown gets the list as it was.
    """
    teardowns = [entry.split(":")[0] for entry in log if entry.endswith(":after")]
    current, counted = list(plain), list(plain)
    for name in teardowns:
        kind, _, _, (action, payload) = specs[int(name[1:])]
        out: Any = current
        if kind == "wrapper" and action == "append":
            out = [*current, payload]
        elif kind == "wrapper" and action == "reverse":
            out = list(reversed(current))
        elif kind == "hookwrapper" and action == "force":
            out = payload
        if isinstance(out, list) and all(any(v is o for o in out) for v in current):
            counted += [o for o in out if not any(o is v for v in current)]
            current = out
    return counted


TOOL_WRAPS: list[Wrap] = [
    ("pass", None),
    ("append", {"action": "block", "message": "wrapper block"}),
    ("append", {"action": "modify", "args": {"x": "w"}}),
    ("reverse", None),
    ("force", [{"action": "approve", "message": "forced"}]),
]


@pytest.mark.filterwarnings("ignore::pluggy.PluggyTeardownRaisedWarning")
@EXAMPLES
@given(specs=impl_specs(TOOL_VALUES, TOOL_WRAPS))
def test_pre_tool_call_matches_pluggy(specs: list[ImplSpec]) -> None:
    log: list[str] = []
    pm = manager_with("pre_tool_call", specs, log)
    args = {"x": 0, "keep": True}
    ids = {"task_id": "t", "session_id": "s", "tool_call_id": "c", "turn_id": "u"}
    kwargs = {**ids, "tool_name": "terminal", "args": args, "api_request_id": ""}
    kwargs["middleware_trace"] = []
    raw, decision = run_both(pm, "pre_tool_call", kwargs, dict(kwargs), log)
    first = INCOMING[0] if INCOMING else None
    plain = list(first) if first is not None else raw
    expected = reference_decision(args, gate_results(plain, specs, log))
    assert decision.action == expected["action"]
    assert dict(decision.args) == expected["args"]
    assert {c.key for c in decision.conflicts} == expected["conflicts"]
    if "message" in expected:
        assert decision.message == expected["message"]
    if decision.action == "approve":
        assert decision.rule_key == expected["rule_key"]


# -- transform_tool_result: first result ----------------------------------------------------

TEXT_WRAPS: list[Wrap] = [
    ("pass", None),
    ("override", "from the wrapper"),
    ("override", 7),
    ("force", "forced"),
]


@EXAMPLES
@given(specs=impl_specs(TEXT_VALUES, TEXT_WRAPS))
def test_transform_tool_result_matches_pluggy(specs: list[ImplSpec]) -> None:
    log: list[str] = []
    pm = manager_with("transform_tool_result", specs, log)
    kwargs: dict[str, Any] = dict.fromkeys(pm.hook_argnames("transform_tool_result") or ())
    kwargs.update(tool_name="t", args={}, result="original", status="ok", duration_ms=1)
    facade_kwargs = {k: v for k, v in kwargs.items() if v is not None}
    facade_kwargs.update(dict.fromkeys(("task_id", "session_id", "tool_call_id", "turn_id"), ""))
    facade_kwargs["api_request_id"] = ""
    kwargs.update({k: facade_kwargs[k] for k in facade_kwargs})
    raw, answer = run_both(pm, "transform_tool_result", kwargs, facade_kwargs, log)
    assert answer == (raw if isinstance(raw, str) else "original")


# -- pre_llm_call: collect, joined ----------------------------------------------------------

CONTEXT_WRAPS: list[Wrap] = [
    ("pass", None),
    ("append", "from the wrapper"),
    ("append", {"context": 9}),
    ("reverse", None),
    ("force", ["forced"]),
]


@EXAMPLES
@given(specs=impl_specs(CONTEXT_VALUES, CONTEXT_WRAPS))
def test_pre_llm_call_matches_pluggy(specs: list[ImplSpec]) -> None:
    log: list[str] = []
    pm = manager_with("pre_llm_call", specs, log)
    facade_kwargs: dict[str, Any] = {
        "session_id": "s",
        "task_id": "t",
        "turn_id": "u",
        "user_message": "q",
        "conversation_history": [],
        "is_first_turn": True,
        "model": "m",
        "platform": "cli",
        "parent_session_id": "",
        "sender_id": "",
    }
    raw, answer = run_both(pm, "pre_llm_call", dict(facade_kwargs), facade_kwargs, log)
    parts = [
        v if isinstance(v, str) else v["context"]
        for v in raw
        if isinstance(v, str) or (isinstance(v, dict) and isinstance(v.get("context"), str))
    ]
    parts = [p for p in parts if p]
    assert answer == ("\n\n".join(parts) if parts else None)


# -- an observer: only the order matters ----------------------------------------------------


@EXAMPLES
@given(specs=impl_specs([None, 1, RAISE], [("pass", None)]))
def test_observers_run_in_pluggy_order(specs: list[ImplSpec]) -> None:
    log: list[str] = []
    pm = manager_with("on_session_start", specs, log)
    kwargs = {"session_id": "s", "model": "m", "platform": "cli"}
    raw, answer = run_both(pm, "on_session_start", kwargs, dict(kwargs), log)
    assert answer is None
    assert isinstance(raw, list)


# -- strict mode: failures raise, the same way on both paths --------------------------------

STRICT_VALUES: list[object] = [None, {"action": "block", "message": "b"}, "not a decision", RAISE]


@pytest.mark.filterwarnings("ignore::pluggy.PluggyTeardownRaisedWarning")
@EXAMPLES
@given(specs=impl_specs(STRICT_VALUES, [("pass", None), ("append", 5)]))
def test_strict_failures_raise_the_same_on_both_paths(specs: list[ImplSpec]) -> None:
    log: list[str] = []
    pm = manager_with("pre_tool_call", specs, log, strict=True)
    kwargs = {
        "tool_name": "terminal",
        "args": {"x": 0},
        "task_id": "t",
        "session_id": "s",
        "tool_call_id": "c",
        "turn_id": "u",
        "api_request_id": "",
        "middleware_trace": [],
    }
    raise_both(pm, "pre_tool_call", kwargs, log)


# -- the fast allow decision ----------------------------------------------------------------


@given(args=st.dictionaries(st.text(max_size=5), st.one_of(st.none(), st.integers(), st.text())))
def test_the_allow_decision_is_the_one_attrs_builds(args: dict[str, Any]) -> None:
    fast = ToolDecision.allow(args)
    assert fast == ToolDecision(args=dict(args))
    assert attrs.asdict(fast) == attrs.asdict(ToolDecision(args=dict(args)))
    assert fast.args == args
    assert fast.args is not args
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        fast.action = "block"  # type: ignore[misc]

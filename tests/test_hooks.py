"""Tests for the hook contract: every hook fires for both kinds of impl, with its contract.

The first test is generated from ``VALID_HOOKS``, so a new hook is covered without editing it.
Below it, one dedicated test per hook (named ``test_<hook>_...``) pins what a plugin author
relies on; ``test_every_hook_has_a_test`` fails when a hook has none, and
``test_every_hook_is_documented`` when ``docs/reference/hooks.md`` misses a hook or an argument.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pluggy
import pytest
from homes import clean_home as home  # noqa: F401  (the fixture)
from plugin_builders import (
    call_hook,
    isolated_home,
    recorded_loader as load,  # noqa: F401  (the fixture)
    recorder_module,
    recording_plugin,
    user_plugin,
)

import hermes_hooks
from hermes_hooks import VALID_HOOKS, hookimpl, hookspec
from hermes_hooks.errors import HookResultError
from hermes_hooks.plugins.manager import PluginManager
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.contract import (
    HookContract,
    Mode,
    Policy,
    get_contract,
    is_context,
    is_error_classification,
    is_gateway_decision,
    is_non_empty_str,
    is_str,
    is_tool_decision,
    is_transcription_override,
    is_verify_decision,
)
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

REPO_ROOT = Path(__file__).resolve().parents[1]
HOOKS_DOC = REPO_ROOT / "docs" / "reference" / "hooks.md"
TESTS_DIR = Path(__file__).resolve().parent
RECORDER = "hermes_test_hooks_recorder"

HOOKS_IN_THE_ISSUE = [
    "pre_tool_call",
    "post_tool_call",
    "transform_tool_result",
    "transform_terminal_output",
    "transform_llm_output",
    "pre_llm_call",
    "post_llm_call",
    "pre_api_request",
    "post_api_request",
    "api_request_error",
    "on_session_start",
    "on_session_end",
    "on_session_finalize",
    "on_session_reset",
    "subagent_start",
    "subagent_stop",
    "pre_gateway_dispatch",
    "pre_verify",
    "pre_approval_request",
    "post_approval_response",
    "kanban_task_claimed",
    "kanban_task_completed",
    "kanban_task_blocked",
]
# Issue 23: Hermes' gateway observer, beyond the 23 of the first issue.

# The 16 hooks Hermes' hermes_cli/plugins.py added since (issue 24).
NEWER_HOOKS = [
    "on_stream_start",
    "on_stream_delta",
    "on_stream_end",
    "on_interim_message",
    "transform_api_error_classification",
    "on_skill_lifecycle",
    "agent_loop_stopped",
    "pre_command",
    "pre_transcription",
    "on_room_member_activity",
    "on_kanban_worker_spawned",
    "on_kanban_worker_exited",
    "on_kanban_worker_stale_claim",
    "on_kanban_task_updated",
    "on_kanban_dispatch_tick",
    "gateway_platform_event",
]

# The hook contracts as docs/reference/hooks.md states them: hook -> (mode, error policy,
# pluggy firstresult)
OBSERVE = (Mode.OBSERVE, Policy.OPEN, False)
CONTRACT_TABLE: dict[str, tuple[Mode, Policy, bool]] = {
    "gateway_platform_event": OBSERVE,
    "pre_tool_call": (Mode.COLLECT, Policy.CLOSED, False),
    "post_tool_call": OBSERVE,
    "transform_tool_result": (Mode.FIRST_RESULT, Policy.OPEN, True),
    "transform_terminal_output": (Mode.FIRST_RESULT, Policy.OPEN, True),
    "transform_llm_output": (Mode.FIRST_RESULT, Policy.OPEN, True),
    "pre_llm_call": (Mode.COLLECT, Policy.OPEN, False),
    "post_llm_call": OBSERVE,
    "pre_api_request": OBSERVE,
    "post_api_request": OBSERVE,
    "api_request_error": OBSERVE,
    "on_session_start": OBSERVE,
    "on_session_end": OBSERVE,
    "on_session_finalize": OBSERVE,
    "on_session_reset": OBSERVE,
    "subagent_start": OBSERVE,
    "subagent_stop": OBSERVE,
    "pre_gateway_dispatch": (Mode.FIRST_RESULT, Policy.OPEN, True),
    "pre_verify": (Mode.FIRST_RESULT, Policy.OPEN, True),
    "pre_approval_request": OBSERVE,
    "post_approval_response": OBSERVE,
    "kanban_task_claimed": OBSERVE,
    "kanban_task_completed": OBSERVE,
    "kanban_task_blocked": OBSERVE,
    "on_stream_start": OBSERVE,
    "on_stream_delta": OBSERVE,
    "on_stream_end": OBSERVE,
    "on_interim_message": OBSERVE,
    "transform_api_error_classification": (Mode.COLLECT, Policy.OPEN, False),
    "on_skill_lifecycle": OBSERVE,
    "agent_loop_stopped": OBSERVE,
    "pre_command": OBSERVE,
    "pre_transcription": (Mode.COLLECT, Policy.OPEN, False),
    "on_room_member_activity": OBSERVE,
    "on_kanban_worker_spawned": OBSERVE,
    "on_kanban_worker_exited": OBSERVE,
    "on_kanban_worker_stale_claim": OBSERVE,
    "on_kanban_task_updated": OBSERVE,
    "on_kanban_dispatch_tick": OBSERVE,
}

# A fitting return value per result check, tagged so that two impls return different values.
SAMPLES: dict[Callable[[object], bool] | None, Callable[[str], object]] = {
    None: lambda tag: f"observed by {tag}",
    is_str: lambda tag: f"text from {tag}",
    is_non_empty_str: lambda tag: f"text from {tag}",
    is_context: lambda tag: {"context": f"context from {tag}"},
    is_tool_decision: lambda tag: {"action": "block", "message": f"blocked by {tag}"},
    is_gateway_decision: lambda tag: {"action": "rewrite", "text": f"rewritten by {tag}"},
    is_verify_decision: lambda tag: {"action": "continue", "message": f"continue, {tag}"},
    is_error_classification: lambda tag: {"reason": "rate_limit", "message": f"by {tag}"},
    is_transcription_override: lambda tag: {"prompt": f"prompt from {tag}"},
}

# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A module plugins import to record calls (``calls``) and to be told what to return."""
    return recorder_module(monkeypatch, RECORDER, calls=[], returns={})


def write_plugin(home: Path, name: str, source: str) -> Path:
    return recording_plugin(home, name, source, RECORDER)


def spec_argnames(hook: str) -> list[str]:
    return list(inspect.signature(getattr(hookspecs, hook)).parameters)


def hookspec_opts(hook: str) -> dict[str, Any]:
    opts = getattr(hookspecs, hook).hermes_spec
    assert isinstance(opts, dict)
    return opts


# --- (a) every hook, both kinds of impl, every argument -----------------------------------------


class Sentinel:
    """A value that is only ever equal to itself, named for the argument it stands for."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def every_hook_plugin(hook: str) -> str:
    args = spec_argnames(hook)
    received = "{" + ", ".join(f"{a!r}: {a}" for a in args) + "}"
    return f"""
        @hookimpl
        def {hook}({", ".join(args)}):
            rec.calls.append(("native", {received}))
            return rec.returns.get("native")

        def shim(**kwargs):
            rec.calls.append(("shim", kwargs))
            return rec.returns.get("shim")

        def register(ctx):
            ctx.register_hook({hook!r}, shim)
        """


@pytest.mark.parametrize("hook", sorted(VALID_HOOKS))
def test_every_hook_reaches_native_and_register_hook_impls(
    load: Callable[..., PluginManager], home: Path, rec: Any, hook: str
) -> None:
    key = "every-" + hook.replace("_", "-")
    write_plugin(home, key, every_hook_plugin(hook))
    pm = load(key)
    info = pm.get_plugin_info(key)
    assert info is not None
    assert info.hooks == (hook,)
    firstresult = bool(hookspec_opts(hook)["firstresult"])
    caller = getattr(pm.hook, hook)
    sent = {name: Sentinel(f"{hook}.{name}") for name in spec_argnames(hook)}

    # Both impls stay out of it: both run, each with exactly the values sent.
    result = caller(**sent)
    assert result == (None if firstresult else [])
    assert sorted(who for who, _ in rec.calls) == ["native", "shim"]
    for who, received in rec.calls:
        assert received.keys() == sent.keys(), who
        assert all(received[name] is sent[name] for name in sent), who

    # Both answer with a fitting value: the shape of the result follows the spec.
    sample = SAMPLES[get_contract(caller.spec.function).check]
    rec.returns.update(native=sample("native"), shim=sample("shim"))
    rec.calls.clear()
    result = caller(**sent)
    if firstresult:
        assert result in (sample("native"), sample("shim"))
        assert len(rec.calls) == 1  # the first answer stops the call
    else:
        assert isinstance(result, list)
        assert sorted(map(repr, result)) == sorted(map(repr, [sample("native"), sample("shim")]))
        assert len(rec.calls) == 2
    assert info.hook_errors == 0


@pytest.mark.parametrize("hook", sorted(VALID_HOOKS))
def test_every_hook_stamps_the_observer_schema_through_the_facade_and_invoke_hook(
    load: Callable[..., PluginManager], home: Path, rec: Any, hook: str
) -> None:
    key = "schema-" + hook.replace("_", "-")
    write_plugin(home, key, every_hook_plugin(hook))
    pm = load(key)
    contract = get_contract(getattr(pm.hook, hook).spec.function)
    assert contract.defaults["telemetry_schema_version"] == "hermes.observer.v1"
    required: dict[str, Any] = {a: None for a in spec_argnames(hook) if a not in contract.defaults}
    if "args" in required:
        required["args"] = {}
    if hook == "pre_gateway_dispatch":
        required["event"] = type("Event", (), {"text": "hi", "internal": False})()
    getattr(hermes_hooks.Hooks(pm), hook)(**required)
    pm.invoke_hook(hook)
    stamped = [received["telemetry_schema_version"] for _, received in rec.calls]
    # native and shim, through the facade and through invoke_hook: every call carries it
    assert stamped == ["hermes.observer.v1"] * 4
    rec.calls.clear()
    pm.invoke_hook(hook, telemetry_schema_version="hermes.observer.v2")
    assert {r["telemetry_schema_version"] for _, r in rec.calls} == {"hermes.observer.v2"}


def test_every_result_check_has_a_sample() -> None:
    for hook in VALID_HOOKS:
        check = get_contract(getattr(hookspecs, hook)).check
        assert check in SAMPLES, f"add a fitting sample for {check} ({hook}) to SAMPLES"
        sample = SAMPLES[check]("x")
        assert get_contract(getattr(hookspecs, hook)).fits(sample)


# --- (b) the contracts -------------------------------------------------------------------------


def test_contracts_match_the_design_table() -> None:
    assert set(CONTRACT_TABLE) == VALID_HOOKS
    for hook, (mode, policy, firstresult) in CONTRACT_TABLE.items():
        contract = get_contract(getattr(hookspecs, hook))
        assert (contract.mode, contract.policy) == (mode, policy), hook
        assert bool(hookspec_opts(hook)["firstresult"]) is firstresult, hook
        # pluggy's firstresult is exactly the "first result" mode
        assert (contract.mode is Mode.FIRST_RESULT) is firstresult, hook


def test_firstresult_hooks_are_exactly_the_first_answer_wins_hooks(home: Path) -> None:
    pm = PluginManager(home)
    firstresult = {h for h in VALID_HOOKS if getattr(pm.hook, h).spec.opts["firstresult"]}
    assert firstresult == {
        "transform_tool_result",
        "transform_terminal_output",
        "transform_llm_output",
        "pre_gateway_dispatch",
        "pre_verify",
    }


def test_manager_reports_each_hooks_contract(home: Path) -> None:
    pm = PluginManager(home)
    for hook in VALID_HOOKS:
        contract = pm.get_hook_contract(hook)
        assert isinstance(contract, HookContract)
        assert contract is get_contract(getattr(hookspecs, hook))
    assert pm.get_hook_contract("no_such_hook").mode is Mode.OBSERVE


def test_only_closed_hooks_have_a_safe_result() -> None:
    for hook in VALID_HOOKS:
        contract = get_contract(getattr(hookspecs, hook))
        assert (contract.safe_result is not None) is (contract.policy is Policy.CLOSED), hook
        assert (contract.check is None) is (contract.mode is Mode.OBSERVE), hook
    safe = get_contract(hookspecs.pre_tool_call).safe_result
    assert safe is not None
    decision = safe("my-guard", "ValueError: x")
    assert is_tool_decision(decision)
    assert "'my-guard'" in str(decision)


CONTRACT_CASES: dict[str, tuple[list[Any], list[Any]]] = {
    "pre_tool_call": (
        [
            {"action": "block", "message": "no"},
            {"action": "approve"},
            {"action": "approve", "message": "ask", "rule_key": "k"},
            {"action": "modify", "args": {"path": "/tmp/x"}},
            {"blocked": True, "reason": "legacy"},
        ],
        [
            {"action": "explode"},
            {"action": "block"},
            {"action": "block", "message": "  "},
            {"action": "block", "message": 3},
            {"action": "approve", "rule_key": 1},
            {"action": "modify"},
            {"action": "modify", "args": "path=/tmp"},
            {"blocked": False},
            {"blocked": "yes"},
            {"blocked": True, "reason": 1},
            "block",
            ["block"],
            True,
        ],
    ),
    "transform_tool_result": (["new result", ""], [b"bytes", 1, {"result": "x"}, ["x"]]),
    "transform_terminal_output": (["redacted", ""], [b"bytes", 0, {"output": "x"}]),
    "transform_llm_output": (["new response"], ["", 1, ["x"], {"text": "x"}]),
    "pre_llm_call": (
        ["remember X", {"context": "remember Y"}, {"context": ""}],
        [{"context": 1}, {"text": "x"}, 1, ["x"], b"x"],
    ),
    "pre_gateway_dispatch": (
        [
            {"action": "skip", "reason": "muted"},
            {"action": "skip"},
            {"action": "rewrite", "text": "hello"},
            {"action": "allow"},
        ],
        [
            {"action": "rewrite"},
            {"action": "rewrite", "text": 1},
            {"action": "skip", "reason": 1},
            {"action": "drop"},
            "allow",
            {},
        ],
    ),
    "pre_verify": (
        [
            {"action": "continue", "message": "run the tests"},
            {"action": "continue"},
            {"decision": "block", "reason": "tests fail"},
        ],
        [
            {"action": "block"},
            {"decision": "continue"},
            {"action": "continue", "message": 1},
            {"decision": "block", "reason": 1},
            "continue",
        ],
    ),
    "transform_api_error_classification": (
        [
            {"reason": "rate_limit"},
            {"reason": "context_overflow", "should_compress": True, "retryable": True},
            {"reason": "auth", "message": "rotate", "error_context": {"key": "k"}},
        ],
        [
            {"reason": "not_a_reason"},
            {"retryable": False},
            {"reason": "timeout", "retryable": "yes"},
            {"reason": "timeout", "message": 1},
            {"reason": "timeout", "error_context": []},
            "rate_limit",
        ],
    ),
    "pre_transcription": (
        [{"prompt": "names: Ada"}, {"language": "fr", "model": "whisper-1"}, {}],
        [{"prompt": 1}, {"language": None}, "fr", ["prompt"]],
    ),
}


def test_every_non_observe_hook_has_contract_cases() -> None:
    non_observe = {h for h in VALID_HOOKS if get_contract(getattr(hookspecs, h)).check}
    assert set(CONTRACT_CASES) == non_observe


def _returning(hook: str, value: Any) -> object:
    class Plugin:
        pass

    def impl() -> Any:
        return value

    setattr(Plugin, hook, staticmethod(hookimpl(specname=hook)(impl)))
    return Plugin()


@pytest.mark.parametrize(
    ("hook", "value"),
    [(h, v) for h, (fitting, _) in CONTRACT_CASES.items() for v in fitting],
    ids=repr,
)
def test_fitting_return_passes_through(home: Path, hook: str, value: Any) -> None:
    assert get_contract(getattr(hookspecs, hook)).fits(value)
    for strict in (False, True):
        pm = PluginManager(home, strict=strict)
        pm.register(_returning(hook, value), name="plugin")
        expected = value if hookspec_opts(hook)["firstresult"] else [value]
        assert call_hook(pm, hook) == expected


@pytest.mark.parametrize(
    ("hook", "value"),
    [(h, v) for h, (_, misfits) in CONTRACT_CASES.items() for v in misfits],
    ids=repr,
)
def test_misfitting_return_is_dropped(home: Path, hook: str, value: Any) -> None:
    assert not get_contract(getattr(hookspecs, hook)).fits(value)
    pm = PluginManager(home)
    pm.register(_returning(hook, value), name="plugin")
    assert call_hook(pm, hook) == (None if hookspec_opts(hook)["firstresult"] else [])

    strict = PluginManager(home, strict=True)
    strict.register(_returning(hook, value), name="plugin")
    with pytest.raises(HookResultError, match=f"plugin 'plugin' hook '{hook}'"):
        call_hook(strict, hook)


# --- (d) package surface ------------------------------------------------------------------------


def test_markers_and_project_name(home: Path) -> None:
    assert hermes_hooks.PROJECT_NAME == "hermes"
    assert isinstance(hookimpl, pluggy.HookimplMarker)
    assert isinstance(hookspec, pluggy.HookspecMarker)
    assert hookimpl.project_name == hookspec.project_name == "hermes"
    assert PluginManager(home).project_name == "hermes"

    @hookimpl(tryfirst=True)
    def on_session_start() -> None: ...

    assert on_session_start.hermes_impl["tryfirst"] is True  # type: ignore[attr-defined]


def test_valid_hooks_is_the_frozenset_of_the_39_hermes_hooks(home: Path) -> None:
    assert isinstance(VALID_HOOKS, frozenset)
    assert len(HOOKS_IN_THE_ISSUE) == 23
    assert len(NEWER_HOOKS) == 16
    assert frozenset(HOOKS_IN_THE_ISSUE + NEWER_HOOKS) == VALID_HOOKS
    assert len(VALID_HOOKS) == 39
    assert set(PluginManager(home).known_hooks()) == VALID_HOOKS
    for hook in VALID_HOOKS:
        assert hookspec_opts(hook)["historic"] is False


# --- (c) meta-tests -----------------------------------------------------------------------------


def documented_sections() -> dict[str, str]:
    """Return the text of each ``## `name``` section of the hook reference, by name."""
    sections: dict[str, str] = {}
    parts = re.split(r"^## ", HOOKS_DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)
    for part in parts[1:]:
        title, _, body = part.partition("\n")
        match = re.fullmatch(r"`([a-z_]+)`\s*", title)
        if match:
            sections[match.group(1)] = body
    return sections


def test_every_hook_is_documented() -> None:
    sections = documented_sections()
    assert sorted(set(sections) - VALID_HOOKS) == [], "documented hooks that do not exist"
    missing = sorted(VALID_HOOKS - set(sections))
    assert missing == [], f"hooks without a section in {HOOKS_DOC.name}"
    undocumented = {
        hook: [arg for arg in spec_argnames(hook) if f"`{arg}`" not in sections[hook]]
        for hook in VALID_HOOKS
    }
    assert {h: args for h, args in undocumented.items() if args} == {}


def test_every_hookspec_documents_every_argument() -> None:
    for hook in VALID_HOOKS:
        doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
        missing = [a for a in spec_argnames(hook) if f":param {a}:" not in doc]
        assert missing == [], hook
        assert ":returns:" in doc, hook
        assert "Error policy:" in doc, hook


def collect_test_names(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    ]


def test_every_hook_has_a_test() -> None:
    names = [
        name for path in sorted(TESTS_DIR.glob("test_*.py")) for name in collect_test_names(path)
    ]
    untested = sorted(
        hook
        for hook in VALID_HOOKS
        if not any(re.search(rf"(^test|_){hook}(_|$)", name) for name in names)
    )
    assert untested == [], "hooks without a dedicated test_<hook>_... test"


# --- one dedicated test per hook ---------------------------------------------------------------


TOOL_CALL: dict[str, Any] = {
    "tool_name": "write_file",
    "args": {"path": "/etc/passwd", "content": "x"},
    "task_id": "task-1",
    "session_id": "sess-1",
    "tool_call_id": "call-1",
    "turn_id": "turn-1",
    "api_request_id": "req-1",
    "middleware_trace": [],
    "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
}


def test_pre_tool_call_collects_every_decision_and_fails_closed(
    load: Callable[..., PluginManager], home: Path
) -> None:
    write_plugin(
        home,
        "protect-etc",
        """
        @hookimpl
        def pre_tool_call(tool_name, args):
            if tool_name == "write_file" and args["path"].startswith("/etc/"):
                return {"action": "block", "message": "no writes to /etc"}
        """,
    )
    write_plugin(
        home,
        "add-backup",
        """
        def modify(args, **kwargs):
            return {"action": "modify", "args": {**args, "backup": True}}

        def register(ctx):
            ctx.register_hook("pre_tool_call", modify)
        """,
    )
    write_plugin(
        home,
        "broken-guard",
        """
        @hookimpl
        def pre_tool_call(tool_call_id):
            raise ConnectionError("policy server unreachable")
        """,
    )
    pm = load("add-backup", "broken-guard", "protect-etc")
    decisions = pm.hook.pre_tool_call(**TOOL_CALL)
    assert {"action": "block", "message": "no writes to /etc"} in decisions
    assert {
        "action": "modify",
        "args": {"path": "/etc/passwd", "content": "x", "backup": True},
    } in decisions
    [closed] = [d for d in decisions if "broken-guard" in d.get("message", "")]
    assert closed["action"] == "block"
    assert "ConnectionError: policy server unreachable" in closed["message"]
    assert len(decisions) == 3

    # A harmless call: only the modify decision and the fail-closed block remain.
    harmless = pm.hook.pre_tool_call(**{**TOOL_CALL, "args": {"path": "/tmp/x"}})
    assert [d["action"] for d in harmless] == ["block", "modify"]


def test_post_tool_call_callback_gets_only_the_arguments_it_names(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "tool-log",
        """
        def log(tool_name, status, error_type=None, duration_ms=0):
            rec.calls.append((tool_name, status, error_type, duration_ms))

        def register(ctx):
            ctx.register_hook("post_tool_call", log)
        """,
    )
    pm = load("tool-log")
    call_hook(
        pm,
        "post_tool_call",
        tool_name="terminal",
        result='{"error": "blocked"}',
        status="blocked",
        error_type="plugin_block",
        error_message="no",
        duration_ms=0,
    )
    call_hook(pm, "post_tool_call", tool_name="read_file", status="ok", duration_ms=12)
    assert rec.calls == [("terminal", "blocked", "plugin_block", 0), ("read_file", "ok", None, 12)]


def test_transform_tool_result_first_string_wins_and_none_keeps_the_result(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "a-truncate",
        """
        @hookimpl
        def transform_tool_result(tool_name, result):
            rec.calls.append("truncate")
            return result[:5] if tool_name == "read_file" else None
        """,
    )
    write_plugin(
        home,
        "b-redact",
        """
        @hookimpl
        def transform_tool_result(result, status):
            rec.calls.append("redact")
            if "sk-" in result:
                return result.replace("sk-secret", "[redacted]")
            return None
        """,
    )
    pm = load("a-truncate", "b-redact")
    # b-redact loaded later, so it runs first and its answer wins.
    assert call_hook(
        pm, "transform_tool_result", tool_name="read_file", result="key=sk-secret"
    ) == ("key=[redacted]")
    assert rec.calls == ["redact"]
    assert (
        call_hook(pm, "transform_tool_result", tool_name="read_file", result="0123456789")
        == "01234"
    )
    assert call_hook(pm, "transform_tool_result", tool_name="terminal", result="unchanged") is None


def test_transform_terminal_output_may_redact_and_sees_running_processes(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "redactor",
        """
        def redact(command, output, returncode, **kwargs):
            rec.calls.append((command, returncode, kwargs["env_type"]))
            return output.replace("hunter2", "*******")

        def register(ctx):
            ctx.register_hook("transform_terminal_output", redact)
        """,
    )
    pm = load("redactor")
    out = call_hook(
        pm,
        "transform_terminal_output",
        command="cat .env",
        output="PASSWORD=hunter2",
        returncode=None,
        task_id="",
        env_type="",
    )
    assert out == "PASSWORD=*******"
    assert rec.calls == [("cat .env", None, "")]


def test_transform_llm_output_empty_string_does_not_replace_the_response(
    load: Callable[..., PluginManager], home: Path
) -> None:
    write_plugin(
        home,
        "a-signature",
        """
        @hookimpl
        def transform_llm_output(response_text, platform):
            return f"{response_text}\\n-- sent from {platform}"
        """,
    )
    write_plugin(
        home,
        "b-eraser",
        """
        @hookimpl
        def transform_llm_output(response_text):
            return ""
        """,
    )
    pm = load("a-signature", "b-eraser")
    assert call_hook(pm, "transform_llm_output", response_text="Done.", platform="telegram") == (
        "Done.\n-- sent from telegram"
    )
    info = pm.get_plugin_info("b-eraser")
    assert info is not None
    assert info.hook_errors == 1


def test_pre_llm_call_collects_context_from_every_plugin(
    load: Callable[..., PluginManager], home: Path
) -> None:
    write_plugin(
        home,
        "memory",
        """
        @hookimpl
        def pre_llm_call(session_id, user_message, is_first_turn):
            if is_first_turn:
                return {"context": f"Known facts for {session_id}: likes tea."}
        """,
    )
    write_plugin(
        home,
        "clock",
        """
        def now(**kwargs):
            return "It is 09:00."

        def register(ctx):
            ctx.register_hook("pre_llm_call", now)
        """,
    )
    write_plugin(
        home,
        "silent",
        """
        @hookimpl
        def pre_llm_call(conversation_history):
            return None
        """,
    )
    pm = load("clock", "memory", "silent")
    first = call_hook(pm, "pre_llm_call", session_id="s1", user_message="hi", is_first_turn=True)
    assert sorted(map(str, first)) == sorted(
        ["It is 09:00.", str({"context": "Known facts for s1: likes tea."})]
    )
    later = call_hook(pm, "pre_llm_call", session_id="s1", user_message="hi", is_first_turn=False)
    assert later == ["It is 09:00."]


def test_post_llm_call_sees_the_final_response_and_history(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "transcript",
        """
        @hookimpl
        def post_llm_call(user_message, assistant_response, conversation_history):
            rec.calls.append((user_message, assistant_response, len(conversation_history)))
        """,
    )
    pm = load("transcript")
    history = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    call_hook(
        pm,
        "post_llm_call",
        user_message="2+2?",
        assistant_response="4",
        conversation_history=history,
    )
    assert rec.calls == [("2+2?", "4", 2)]


def test_pre_api_request_sees_each_retry_with_the_sanitized_request(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "api-audit",
        """
        def audit(api_request_id, retry_count, request, **kwargs):
            rec.calls.append((api_request_id, retry_count, request["method"], kwargs["provider"]))

        def register(ctx):
            ctx.register_hook("pre_api_request", audit)
        """,
    )
    pm = load("api-audit")
    request = {"method": "POST", "body": {"model": "m"}}
    for retry in range(2):
        call_hook(
            pm,
            "pre_api_request",
            api_request_id="req-7",
            retry_count=retry,
            request=request,
            provider="openrouter",
        )
    assert rec.calls == [("req-7", 0, "POST", "openrouter"), ("req-7", 1, "POST", "openrouter")]


def test_post_api_request_receives_usage_and_timings(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "cost",
        """
        @hookimpl
        def post_api_request(usage, api_duration, first_chunk_at, finish_reason):
            rec.calls.append((usage["total_tokens"], api_duration, first_chunk_at, finish_reason))
        """,
    )
    pm = load("cost")
    call_hook(
        pm,
        "post_api_request",
        usage={"total_tokens": 42},
        api_duration=1.5,
        first_chunk_at=None,
        finish_reason="stop",
    )
    assert rec.calls == [(42, 1.5, None, "stop")]


def test_api_request_error_passes_the_error_and_retry_state(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "alerts",
        """
        @hookimpl
        def api_request_error(status_code, retryable, reason, error):
            rec.calls.append((status_code, retryable, reason, error["type"]))
        """,
    )
    pm = load("alerts")
    call_hook(
        pm,
        "api_request_error",
        status_code=429,
        retryable=True,
        reason="rate_limit",
        error={"type": "RateLimitError", "message": "slow down"},
    )
    assert rec.calls == [(429, True, "rate_limit", "RateLimitError")]


def test_on_session_start_runs_every_plugin_even_when_one_raises(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "a-welcome",
        """
        @hookimpl
        def on_session_start(session_id, model, platform):
            rec.calls.append((session_id, model, platform))
        """,
    )
    write_plugin(
        home,
        "b-broken",
        """
        @hookimpl
        def on_session_start(session_id):
            raise RuntimeError("db locked")
        """,
    )
    pm = load("a-welcome", "b-broken")
    assert (
        pm.hook.on_session_start(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id="s9",
            model="m",
            platform="cli",
        )
        == []
    )
    assert rec.calls == [("s9", "m", "cli")]
    info = pm.get_plugin_info("b-broken")
    assert info is not None
    assert (info.hook_errors, info.last_hook_error) == (
        1,
        "on_session_start: RuntimeError: db locked",
    )


def test_on_session_end_reports_how_the_turn_ended(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "outcomes",
        """
        def ended(completed, failed, interrupted, turn_exit_reason, **kwargs):
            rec.calls.append((completed, failed, interrupted, turn_exit_reason, kwargs["reason"]))

        def register(ctx):
            ctx.register_hook("on_session_end", ended)
        """,
    )
    pm = load("outcomes")
    call_hook(
        pm,
        "on_session_end",
        completed=False,
        failed=False,
        interrupted=True,
        turn_exit_reason="interrupted",
        reason="quit",
    )
    assert rec.calls == [(False, False, True, "interrupted", "quit")]


def test_on_session_finalize_passes_old_and_new_session_on_reset(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "flush",
        """
        @hookimpl
        def on_session_finalize(session_id, old_session_id, new_session_id, reason):
            rec.calls.append((session_id, old_session_id, new_session_id, reason))
        """,
    )
    pm = load("flush")
    call_hook(pm, "on_session_finalize", session_id=None, platform="cli", reason="exit")
    call_hook(
        pm,
        "on_session_finalize",
        session_id="old",
        platform="telegram",
        old_session_id="old",
        new_session_id="new",
        reason="/new",
    )
    assert rec.calls == [(None, None, None, "exit"), ("old", "old", "new", "/new")]


def test_on_session_reset_gets_the_rotated_session(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "resetter",
        """
        def reset(session_id, platform, **kwargs):
            rec.calls.append((session_id, platform, kwargs["old_session_id"]))

        def register(ctx):
            ctx.register_hook("on_session_reset", reset)
        """,
    )
    pm = load("resetter")
    call_hook(pm, "on_session_reset", session_id="new", platform="gateway", old_session_id="old")
    assert rec.calls == [("new", "gateway", "old")]


def test_subagent_start_sees_the_child_goal_and_role(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "delegation-log",
        """
        @hookimpl
        def subagent_start(parent_session_id, child_subagent_id, child_role, child_goal):
            rec.calls.append((parent_session_id, child_subagent_id, child_role, child_goal))
        """,
    )
    pm = load("delegation-log")
    call_hook(
        pm,
        "subagent_start",
        parent_session_id="p",
        child_subagent_id="sa-1",
        child_role="leaf",
        child_goal="read the docs",
    )
    assert rec.calls == [("p", "sa-1", "leaf", "read the docs")]


def test_subagent_stop_passes_status_and_tool_history(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "delegation-stats",
        """
        def stopped(child_status, tool_call_history, duration_ms, **kwargs):
            tools = [call["tool_name"] for call in tool_call_history]
            rec.calls.append((child_status, tools, duration_ms))

        def register(ctx):
            ctx.register_hook("subagent_stop", stopped)
        """,
    )
    pm = load("delegation-stats")
    history = [
        {"tool_name": "read_file", "status": "ok"},
        {"tool_name": "terminal", "status": "ok"},
    ]
    call_hook(
        pm, "subagent_stop", child_status="timeout", tool_call_history=history, duration_ms=900
    )
    assert rec.calls == [("timeout", ["read_file", "terminal"], 900)]


class GatewayEvent:
    def __init__(self, text: str) -> None:
        self.text = text


def test_pre_gateway_dispatch_first_fitting_decision_wins(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "a-mute",
        """
        @hookimpl
        def pre_gateway_dispatch(event):
            rec.calls.append("mute")
            if event.text.startswith("!"):
                return {"action": "skip", "reason": "bot command"}
        """,
    )
    write_plugin(
        home,
        "b-rewrite",
        """
        @hookimpl
        def pre_gateway_dispatch(event, gateway, session_store):
            rec.calls.append("rewrite")
            if event.text == "hi":
                return {"action": "rewrite", "text": "hello"}
            if event.text == "!bad":
                return {"action": "rewrite"}  # missing text: does not fit, so skipped
        """,
    )
    pm = load("a-mute", "b-rewrite")
    store = object()
    assert call_hook(pm, "pre_gateway_dispatch", event=GatewayEvent("hi"), session_store=store) == {
        "action": "rewrite",
        "text": "hello",
    }
    assert rec.calls == ["rewrite"]
    assert call_hook(pm, "pre_gateway_dispatch", event=GatewayEvent("!bad")) == {
        "action": "skip",
        "reason": "bot command",
    }
    assert call_hook(pm, "pre_gateway_dispatch", event=GatewayEvent("plain")) is None


def test_pre_verify_accepts_the_claude_code_stop_form(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "tests-first",
        """
        def verify(changed_paths, attempt, **kwargs):
            rec.calls.append((tuple(changed_paths), attempt))
            if attempt == 0 and any(p.endswith(".py") for p in changed_paths):
                return {"decision": "block", "reason": "run pytest before finishing"}
            return None

        def register(ctx):
            ctx.register_hook("pre_verify", verify)
        """,
    )
    pm = load("tests-first")
    first = call_hook(pm, "pre_verify", attempt=0, changed_paths=["app.py"], coding=True)
    assert first == {"decision": "block", "reason": "run pytest before finishing"}
    assert call_hook(pm, "pre_verify", attempt=1, changed_paths=["app.py"], coding=True) is None
    assert rec.calls == [(("app.py",), 0), (("app.py",), 1)]


def test_pre_approval_request_is_observed_by_every_plugin(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    for name in ("a-notify", "b-notify"):
        write_plugin(
            home,
            name,
            f"""
            @hookimpl
            def pre_approval_request(command, pattern_keys, surface):
                rec.calls.append(({name!r}, command, tuple(pattern_keys), surface))
            """,
        )
    pm = load("a-notify", "b-notify")
    call_hook(
        pm,
        "pre_approval_request",
        command="rm -rf build",
        pattern_key="rm_rf",
        pattern_keys=["rm_rf"],
        surface="cli",
    )
    assert sorted(rec.calls) == [
        ("a-notify", "rm -rf build", ("rm_rf",), "cli"),
        ("b-notify", "rm -rf build", ("rm_rf",), "cli"),
    ]


def test_post_approval_response_passes_choice_and_who_decided(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "approval-audit",
        """
        def decided(command, choice, decided_by, **kwargs):
            rec.calls.append((command, choice, decided_by))

        def register(ctx):
            ctx.register_hook("post_approval_response", decided)
        """,
    )
    pm = load("approval-audit")
    call_hook(pm, "post_approval_response", command="rm -rf build", choice="deny", decided_by=None)
    call_hook(
        pm, "post_approval_response", command="ls", choice="smart_approve", decided_by="aux_llm"
    )
    assert rec.calls == [("rm -rf build", "deny", None), ("ls", "smart_approve", "aux_llm")]


def test_kanban_task_claimed_passes_board_and_run(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "board-watch",
        """
        @hookimpl
        def kanban_task_claimed(task_id, profile_name, board, assignee, run_id):
            rec.calls.append((task_id, profile_name, board, assignee, run_id))
        """,
    )
    pm = load("board-watch")
    call_hook(pm, "kanban_task_claimed", task_id="T-1", profile_name="default", run_id=7)
    assert rec.calls == [("T-1", "default", None, None, 7)]


def test_kanban_task_completed_passes_the_summary(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "done-notifier",
        """
        def done(task_id, summary, **kwargs):
            rec.calls.append((task_id, summary))

        def register(ctx):
            ctx.register_hook("kanban_task_completed", done)
        """,
    )
    pm = load("done-notifier")
    call_hook(pm, "kanban_task_completed", task_id="T-2", profile_name="default", summary="shipped")
    assert rec.calls == [("T-2", "shipped")]


def test_kanban_task_blocked_passes_reason(
    load: Callable[..., PluginManager], home: Path, rec: Any
) -> None:
    write_plugin(
        home,
        "blocked-notifier",
        """
        @hookimpl
        def kanban_task_blocked(task_id, assignee, reason):
            rec.calls.append((task_id, assignee, reason))
        """,
    )
    pm = load("blocked-notifier")
    call_hook(
        pm,
        "kanban_task_blocked",
        task_id="T-3",
        profile_name="work",
        assignee="ana",
        reason="waiting on API key",
    )
    assert rec.calls == [("T-3", "ana", "waiting on API key")]


# -- raw calls with the arguments Hermes passes -------------------------------------------------

README_STYLE = """
seen = []


def register(ctx):
    ctx.register_hook("post_tool_call", lambda **kw: None)
    ctx.register_hook("pre_tool_call", lambda **kw: seen.append(kw))
"""

# What Hermes's agent loop passes: none of the arguments this project added beyond them.
HERMES_PRE_TOOL_CALL = {
    "tool_name": "terminal",
    "args": {"command": "rm -rf /"},
    "task_id": "task-1",
    "session_id": "session-1",
    "tool_call_id": "call-1",
}


def test_a_raw_call_with_only_hermes_arguments_reaches_kwargs_callbacks_and_the_guards_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch, bundled=True)
    user_plugin(home, "readme-style", README_STYLE)
    (home / "config.yaml").write_text(
        "plugins:\n  enabled: [readme-style, command-guard]\n", encoding="utf-8"
    )
    pm = PluginManager(home, strict=True)  # a HookCallError would raise, not be logged
    pm.discover_and_load()
    seen = sys.modules["hermes_plugins.readme_style"].seen
    try:
        # No warning either (filterwarnings = error): only arguments without a default count.
        results = pm.hook.pre_tool_call(**HERMES_PRE_TOOL_CALL)
        pm.hook.post_tool_call(**HERMES_PRE_TOOL_CALL, result='{"output": ""}')
        pm.hook.pre_tool_call(**HERMES_PRE_TOOL_CALL)
    finally:
        pm.unload_all()
    assert [(r["action"], r["message"].split(":")[0]) for r in results] == [
        ("block", "command-guard")
    ]
    first, second = seen
    # The omitted arguments arrive with the contract's defaults, a fresh list each call.
    assert first == {
        **HERMES_PRE_TOOL_CALL,
        "turn_id": "",
        "api_request_id": "",
        "middleware_trace": [],
        "telemetry_schema_version": "hermes.observer.v1",
    }
    assert first["middleware_trace"] is not second["middleware_trace"]


def test_a_raw_call_missing_an_argument_without_a_default_still_warns(home: Path) -> None:
    pm = PluginManager(home)
    with pytest.warns(UserWarning, match=r"Argument\(s\) 'args' which are declared"):
        pm.hook.pre_tool_call(tool_name="terminal")

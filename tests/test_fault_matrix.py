"""The fault matrix: for every hook, every place a plugin can fail and every way it can fail.

Each cell loads two plugins into a real host (``create_manager`` + ``Session`` + ``Gateway``):
``aa-witness``, healthy, implementing every hook; and ``faulty``, which implements the cell's
hook and fails at the cell's site with the cell's fault. Then one workload fires every hook:
a gateway message, a turn whose model fails once and then calls ``terminal``, an approved
tool that changes a file (so ``pre_verify`` fires) and ``delegate_task``, the plugin's own
tool and slash command, ``/new``, closing, and, for the hooks the reference host does not fire
itself (``kanban_*``), ``pm.invoke_hook``. For every cell:

- the host's turn completes;
- the witness still ran for the cell's hook (the other plugins' implementations run);
- the faulty plugin's status shows the failure (``error`` at load, ``hook_errors`` after);
- the policy is the documented one: an *open* hook behaves as if the failing implementation had
  returned ``None`` (the hooks fired are exactly those of a healthy run), the *closed*
  ``pre_tool_call`` blocks the call naming the plugin.

The matrix is generated from ``VALID_HOOKS``: a new hook gets its row without editing this file.

A hang (an implementation that never returns) is tried in every hook the contract bounds by
``plugins.hook_callback_timeout``, here 0.2 s; the hooks it leaves unbounded by design (session
finalize and reset, approvals, subagents, the gateway, kanban) have no hang cell. A result
past ``plugins.max_hook_result_bytes`` (here 4096 bytes) is tried in every hook whose results
are used: a failure under the hook's policy, as a raise is.
"""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import pytest
import reliability_figures
import suite_size
import yaml

from hermes_hooks import Hooks
from hermes_hooks.backends.models import ModelError, ModelProvider, ModelResponse, ToolCall
from hermes_hooks.host import Gateway, MessageEvent, Session, create_manager
from hermes_hooks.host.records import TurnResult
from hermes_hooks.plugins.manager import PluginInfo, PluginManager
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.contract import Policy, get_contract
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION, VALID_HOOKS

pytestmark = pytest.mark.slow

HOOKS: Final = sorted(VALID_HOOKS)
RAISES: Final = ("Exception", "SystemExit", "RecursionError")

#: site -> the faults tried there. ``wrong-type`` returns a value no hook accepts; ``refused`` is
#: a registration the framework itself refuses (a host tool without the operator's grant).
SITES: Final[Mapping[str, tuple[str, ...]]] = {
    "dispatch": (*RAISES, "wrong-type"),
    "import": RAISES,
    "register": RAISES,
    "registration": (*RAISES, "refused"),
    "tool-handler": (*RAISES, "wrong-type"),
    "tool-check": RAISES,
    "command-handler": RAISES,
}
LOAD_SITES: Final = frozenset({"import", "register", "registration"})

#: A hang (an implementation that does not return) in every hook bounded by
#: plugins.hook_callback_timeout; the hooks the contract leaves unbounded (session finalize,
#: approvals, kanban...) are not, by design: see docs/reference/hooks.md.
BOUNDED: Final = [hook for hook in HOOKS if get_contract(getattr(hookspecs, hook)).timeout]
HANG_TIMEOUT: Final = 0.2
"""Seconds of plugins.hook_callback_timeout in the hang cells."""

#: A result past plugins.max_hook_result_bytes (here 4096 bytes) in every hook whose results
#: the host uses (an observer's return value is ignored, so it costs nothing to bound there).
USED: Final = [hook for hook in HOOKS if get_contract(getattr(hookspecs, hook)).check is not None]
RESULT_BYTES: Final = 4096
"""Bytes of plugins.max_hook_result_bytes in the oversized cells."""

ALL_CELLS: Final = [
    *[(hook, site, fault) for hook in HOOKS for site, faults in SITES.items() for fault in faults],
    *[(hook, "dispatch", "hang") for hook in BOUNDED],
    *[(hook, "dispatch", "oversized") for hook in USED],
]
"""The full matrix (``--full``, tests/suite_size.py)."""

#: The quick default: every fault of every hook's own dispatch (where each hook's policy
#: applies), every hang and oversized cell; at the other sites, which fail the same whatever the
#: hook, every hook with the site's faults taken in turn from one hook to the next, so that each
#: fault is still tried at each site.
QUICK_CELLS: Final = [
    *[(hook, site, fault) for hook, site, fault in ALL_CELLS if site == "dispatch"],
    *[
        (hook, site, faults[n % len(faults)])
        for n, hook in enumerate(HOOKS)
        for site, faults in SITES.items()
        if site != "dispatch"
    ],
]

CELLS: Final = ALL_CELLS if suite_size.full() else QUICK_CELLS

LOG_MODULE: Final = "hermes_fault_log"
"""A module both plugins append their calls to (it outlives the plugins' own modules)."""

WITNESS: Final = """
import hermes_fault_log as LOG
from hermes_hooks.spec.hookspecs import HOOK_NAMES
from hermes_hooks.host.tools import record_changed_path


def register(ctx):
    for name in HOOK_NAMES:
        def record(_name=name, **kwargs):
            LOG.CALLS.append(("witness", _name))
            if _name == "pre_tool_call" and kwargs.get("tool_name") == "witness_tool":
                return {"action": "approve", "message": "the witness asks"}
            if _name == "pre_verify" and kwargs.get("attempt") == 0:
                return {"action": "continue", "message": "check your work"}
            return None
        ctx.register_hook(name, record)

    def witness_tool(args, **kwargs):
        record_changed_path("notes.txt")
        return "noted"

    ctx.register_tool("witness_tool", "witness", {"description": "notes"}, witness_tool)
"""

FAULTY: Final = """
import hermes_fault_log as LOG
from hermes_hooks import hookimpl

HOOK = {hook!r}
SITE = {site!r}
FAULT = {fault!r}


def _recurse(depth):
    return _recurse(depth + 1) + 1


def _fail():
    if FAULT == "Exception":
        raise RuntimeError("injected fault at " + SITE)
    if FAULT == "SystemExit":
        raise SystemExit(3)
    if FAULT == "RecursionError":
        _recurse(0)
    raise AssertionError("no such fault: " + FAULT)


def _impl(**kwargs):
    LOG.CALLS.append(("faulty", HOOK))
    if SITE == "dispatch":
        if FAULT == "hang":
            LOG.RELEASE.wait(30)  # set when the test ends, so the abandoned worker finishes
            return None
        if FAULT == "wrong-type":
            return {{"unexpected": 42}}
        if FAULT == "oversized":
            return "x" * (2 * {result_bytes})
        _fail()
    return None


def _check():
    if SITE == "tool-check":
        _fail()
    return True


def _tool(args, **kwargs):
    if SITE == "tool-handler":
        if FAULT == "wrong-type":
            return 42
        _fail()
    return "faulty tool ran"


def _command(raw_args):
    if SITE == "command-handler":
        _fail()
    return "faulty command ran"


class _ExplodingSchema(dict):
    def get(self, *args):
        _fail()


if SITE == "import":
    @hookimpl(specname=HOOK)
    def _native():
        LOG.CALLS.append(("faulty", HOOK))

    _fail()


def register(ctx):
    ctx.register_hook(HOOK, _impl)
    ctx.register_tool("faulty_tool", "faulty", {{"description": "may fail"}}, _tool, _check)
    ctx.register_command("faulty", _command, description="may fail")
    if SITE == "register":
        _fail()
    if SITE == "registration":
        if FAULT == "refused":
            ctx.register_tool("terminal", "faulty", {{}}, _tool)
        else:
            ctx.register_tool("faulty_bad", "faulty", _ExplodingSchema(), _tool)
"""


# -- the host side -------------------------------------------------------------------------------


class WorkloadModel(ModelProvider):
    """A deterministic model that drives every hook of the reference host.

    The first request of the ``work`` turn fails (retryable), the second asks for every tool
    the turn offers among ``terminal``, ``witness_tool``, ``faulty_tool`` and
    ``delegate_task``; after tool results it answers ``done``; anything else gets ``ok``.
    """

    provider = "workload"
    model = "workload-1"

    def __init__(self) -> None:
        self.failed_once = False

    def complete(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        **options: Any,
    ) -> ModelResponse:
        last = messages[-1]
        if last["role"] == "tool":
            return ModelResponse(text="done")
        if not str(last.get("content", "")).startswith("work"):
            return ModelResponse(text="ok")
        if not self.failed_once:
            self.failed_once = True
            raise ModelError("overloaded", status_code=503, retryable=True, reason="server_error")
        offered = {tool["function"]["name"] for tool in tools}
        wanted = {
            "terminal": {"command": "echo hi"},
            "witness_tool": {},
            "faulty_tool": {},
            "delegate_task": {"goal": "child: say ok"},
        }
        calls = tuple(
            ToolCall(f"call_{i}", name, json.dumps(args))
            for i, (name, args) in enumerate(wanted.items())
            if name in offered
        )
        return ModelResponse(tool_calls=calls, finish_reason="tool_calls")


def approve_once(request: object) -> str:
    return "once"


#: Delivered off the token path, each implementation on its own worker: their order among the
#: other hooks is not the host's, so they are compared apart, sorted.
STREAM_HOOKS: Final = frozenset(
    {"on_stream_start", "on_stream_delta", "on_stream_end", "on_interim_message"}
)


def _in_host_order(hooks: list[str]) -> list[str]:
    return [h for h in hooks if h not in STREAM_HOOKS] + sorted(
        h for h in hooks if h in STREAM_HOOKS
    )


class Run:
    """What one workload left: the turn, the replies, and every hook each plugin ran."""

    def __init__(
        self, pm: PluginManager, turn: TurnResult, command_reply: str, gateway_action: str
    ) -> None:
        self.pm = pm
        self.turn = turn
        self.command_reply = command_reply
        self.gateway_action = gateway_action
        calls: list[tuple[str, str]] = sys.modules[LOG_MODULE].CALLS
        self.witness = _in_host_order([hook for who, hook in calls if who == "witness"])
        self.faulty = _in_host_order([hook for who, hook in calls if who == "faulty"])

    def info(self, key: str) -> PluginInfo:
        found = self.pm.get_plugin_info(key)
        assert found is not None, f"{key} was not discovered"
        return found


def run_workload(pm: PluginManager, cwd: Path) -> Run:
    """Fire every hook through the host and return what happened."""
    model = WorkloadModel()
    gateway = Gateway(pm, model, approver=approve_once, retry_backoff=0.0)
    outcome = gateway.dispatch(MessageEvent("hello", platform="test", sender="ann"))
    gateway.shutdown()
    with Session(pm, model, approver=approve_once, retry_backoff=0.0, cwd=cwd) as session:
        turn = session.run_turn("work")
        command = session.send("/faulty")[0].text
        session.send("/new")
    fired = set(sys.modules[LOG_MODULE].CALLS)
    hooks = Hooks(pm)
    for name in HOOKS:  # hooks this workload does not reach (kanban_*, transcription...)
        if ("witness", name) not in fired:
            # Through the facade, as a host fires them: their results are checked there.
            required = {
                arg: {} if arg in ("args", "payload") else ""
                for arg in pm.hook_argnames(name) or ()
                if arg not in pm.get_hook_contract(name).defaults
            }
            getattr(hooks, name)(**required)
    return Run(pm, turn, command, outcome.action)


@pytest.fixture
def fault_log() -> Iterator[types.ModuleType]:
    module = types.ModuleType(LOG_MODULE)
    module.CALLS = []  # type: ignore[attr-defined]
    module.RELEASE = threading.Event()  # type: ignore[attr-defined]
    sys.modules[LOG_MODULE] = module
    yield module
    module.RELEASE.set()
    del sys.modules[LOG_MODULE]


@pytest.fixture
def witness_home(clean_home: Path, fault_log: types.ModuleType) -> Path:
    _write_plugin(clean_home, "aa-witness", WITNESS)
    return clean_home


def _write_plugin(home: Path, key: str, code: str) -> None:
    folder = home / "plugins" / key
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(yaml.safe_dump({"name": key, "version": "1.0"}), "utf-8")
    (folder / "__init__.py").write_text(textwrap.dedent(code), encoding="utf-8")


def _faulty(hook: str, site: str, fault: str) -> str:
    return FAULTY.format(hook=hook, site=site, fault=fault, result_bytes=RESULT_BYTES)


def _load(
    home: Path, *keys: str, timeout: float | None = None, result_bytes: int | None = None
) -> PluginManager:
    home.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {"plugins": {"enabled": list(keys)}}
    if timeout is not None:
        config["plugins"]["hook_callback_timeout"] = timeout
    if result_bytes is not None:
        config["plugins"]["max_hook_result_bytes"] = result_bytes
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return create_manager(home)


_BASELINES: dict[bool, list[str]] = {}


def _baseline(tmp_path: Path, log: types.ModuleType, *, with_faulty: bool) -> list[str]:
    """Return the hooks the witness saw in a healthy run (computed once per session)."""
    if with_faulty not in _BASELINES:
        home = tmp_path / "baseline"
        _write_plugin(home, "aa-witness", WITNESS)
        keys = ["aa-witness"]
        if with_faulty:
            _write_plugin(home, "faulty", _faulty("-", "none", "-"))
            keys.append("faulty")
        pm = _load(home, *keys)
        try:
            run = run_workload(pm, tmp_path)
        finally:
            pm.unload_all()
            log.CALLS.clear()
        assert run.turn.completed
        _BASELINES[with_faulty] = run.witness
    return _BASELINES[with_faulty]


# -- the matrix ------------------------------------------------------------------------------------


def test_the_workload_fires_every_hook(witness_home: Path, tmp_path: Path, fault_log: Any) -> None:
    _write_plugin(witness_home, "faulty", _faulty("post_tool_call", "none", "-"))
    pm = _load(witness_home, "aa-witness", "faulty")
    run = run_workload(pm, tmp_path)
    assert run.turn.completed
    assert set(run.witness) == VALID_HOOKS
    assert [r.status for r in run.turn.tool_calls] == ["ok"] * 4
    assert run.command_reply == "faulty command ran"
    assert run.info("faulty").hook_errors == run.info("aa-witness").hook_errors == 0
    pm.unload_all()


@pytest.mark.parametrize(("hook", "site", "fault"), CELLS, ids=["-".join(c) for c in CELLS])
def test_a_failing_plugin_never_costs_the_host_its_turn(
    witness_home: Path, tmp_path: Path, fault_log: Any, hook: str, site: str, fault: str
) -> None:
    expected_hooks = _baseline(tmp_path, fault_log, with_faulty=site not in LOAD_SITES)
    _write_plugin(witness_home, "faulty", _faulty(hook, site, fault))
    pm = _load(
        witness_home,
        "aa-witness",
        "faulty",
        timeout=HANG_TIMEOUT if fault == "hang" else None,
        result_bytes=RESULT_BYTES if fault == "oversized" else None,
    )
    try:
        run = run_workload(pm, tmp_path)
        _check_cell(run, hook, site, fault, expected_hooks)
        if fault == "hang":
            assert run.info("faulty").hook_timeouts >= 1
        info = run.info("faulty")
        injected = 1 if info.status == "error" else info.hook_errors
        reliability_figures.add("fault matrix", "cells", 1)
        reliability_figures.add("fault matrix", f"cells: {fault}", 1)
        reliability_figures.add("fault matrix", "faults injected", injected)
        reliability_figures.add("fault matrix", "host turns completed", int(run.turn.completed))
    finally:
        pm.unload_all()


_EXC_NAME: Final = {
    "Exception": "RuntimeError",
    "SystemExit": "SystemExit",
    "RecursionError": "RecursionError",
    "refused": "PluginToolOverrideError",
    "hang": "HookTimeoutError",
    "oversized": "max_hook_result_bytes",
}


#: Delivered off the token path, on each implementation's own queue and worker, so their
#: place among the other hooks (and how often a late start or end shows before the
#: workload's end) depends on the machine's load: they are compared as a set.
ASYNC_HOOKS: Final = frozenset(
    {"on_stream_start", "on_stream_delta", "on_stream_end", "on_interim_message"}
)


def assert_same_hooks(witnessed: list[str], expected: list[str]) -> None:
    """The witness saw the hooks of the baseline: in order, but for the stream observers."""
    assert [h for h in witnessed if h not in ASYNC_HOOKS] == [
        h for h in expected if h not in ASYNC_HOOKS
    ]
    assert {h for h in witnessed if h in ASYNC_HOOKS} == {h for h in expected if h in ASYNC_HOOKS}


def _check_cell(run: Run, hook: str, site: str, fault: str, expected_hooks: list[str]) -> None:
    # 1. The host's turn completed, and so did the rest of the workload.
    assert run.turn.completed, run.turn.error
    assert run.turn.text in {"done", "ok"}
    assert run.gateway_action == "replied"
    # 2. The other plugin's implementation of this hook ran.
    assert hook in run.witness
    info = run.info("faulty")
    witness = run.info("aa-witness")
    assert (witness.status, witness.hook_errors) == ("enabled", 0)
    contract = run.pm.get_hook_contract(hook)
    if site in LOAD_SITES:
        # 3. Its status says why; nothing it registered before failing is left behind.
        assert info.status == "error"
        assert info.error is not None
        assert _EXC_NAME[fault] in info.error
        assert (info.hooks, info.tools, info.commands) == ((), (), ())
        assert hook not in run.faulty
        assert all(i.plugin_name != "faulty" for i in getattr(run.pm.hook, hook).get_hookimpls())
        assert "Unknown command /faulty" in run.command_reply
        # 4. The host ran as if the plugin had never been there.
        assert_same_hooks(run.witness, expected_hooks)
        return
    assert info.status == "enabled"
    assert hook in run.faulty
    if site == "dispatch" and fault == "wrong-type" and contract.check is None:
        # An observer's return value is ignored: not a failure.
        assert info.hook_errors == 0
        assert_same_hooks(run.witness, expected_hooks)
        return
    assert info.hook_errors >= 1
    assert info.last_hook_error is not None
    if site == "dispatch":
        assert info.last_hook_error.startswith(f"{hook}: ")
        if fault == "wrong-type":
            assert "expected" in info.last_hook_error
        elif fault == "oversized":
            too_big = f"returned str of {2 * RESULT_BYTES} bytes, more than"
            assert too_big in info.last_hook_error
            assert f"plugins.max_hook_result_bytes ({RESULT_BYTES} bytes)" in info.last_hook_error
        else:
            assert _EXC_NAME[fault] in info.last_hook_error
        if contract.policy is Policy.CLOSED and fault != "wrong-type":
            assert {r.status for r in run.turn.tool_calls} == {"blocked"}
            assert all(r.decided_by == "faulty" for r in run.turn.tool_calls)
            assert all("faulty" in (r.error_message or "") for r in run.turn.tool_calls)
            return
        assert_same_hooks(run.witness, expected_hooks)
        return
    if site == "tool-handler":
        record = next(r for r in run.turn.tool_calls if r.tool_name == "faulty_tool")
        assert record.status == "error"
        assert "faulty_tool" in info.last_hook_error
        expected = "expected a string" if fault == "wrong-type" else _EXC_NAME[fault]
        assert expected in record.result
        assert expected in info.last_hook_error
    elif site == "tool-check":
        # A raising check makes the tool unavailable: it is not offered, so never called.
        assert "faulty_tool" not in {r.tool_name for r in run.turn.tool_calls}
        assert info.last_hook_error.startswith("tool 'faulty_tool' check_fn: ")
        assert _EXC_NAME[fault] in info.last_hook_error
        assert {r.status for r in run.turn.tool_calls} == {"ok"}
        return
    else:
        assert run.command_reply.startswith("/faulty failed")
        assert info.last_hook_error.startswith("command '/faulty': ")
        assert _EXC_NAME[fault] in info.last_hook_error
    assert {r.status for r in run.turn.tool_calls if r.tool_name != "faulty_tool"} == {"ok"}
    assert_same_hooks(run.witness, expected_hooks)


# -- failures outside discovery ------------------------------------------------------------------


class _Direct:
    """A plugin object a host registers itself, not found by discovery."""

    @staticmethod
    def on_session_start(session_id: str) -> None:
        raise ValueError(f"no session {session_id}")


def test_failures_of_objects_registered_directly_are_counted(witness_home: Path) -> None:
    from hermes_hooks import hookimpl

    pm = _load(witness_home)
    direct = _Direct()
    direct.on_session_start = hookimpl(_Direct.on_session_start)  # type: ignore[method-assign]
    pm.register(direct, name="direct")
    for n in range(3):
        pm.hook.on_session_start(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=f"s{n}",
            model="m",
            platform="p",
        )
    failures = pm.get_failures("direct")
    assert failures.count == 3
    assert failures.last == "on_session_start: ValueError: no session s2"
    assert pm.get_failures("never-registered").count == 0
    pm.unregister(name="direct")


def test_failures_with_ever_new_messages_are_logged_from_a_bounded_set(witness_home: Path) -> None:
    pm = _load(witness_home)
    for n in range(5000):
        pm._report_failure("noisy", "on_session_start", f"ValueError: request {n}" * 20, None)
    assert pm.get_failures("noisy").count == 5000
    assert len(pm._logged_failures) <= 1024
    last = pm.get_failures("noisy").last
    assert last is not None
    assert len(last) < 1100  # a huge message is clipped on the status


def test_docs_reliability_states_the_size_of_this_matrix() -> None:
    page = Path(__file__).parent.parent / "docs" / "reliability.md"
    text = page.read_text(encoding="utf-8")
    assert f"{len(ALL_CELLS)} cells" in text
    assert f"{len(QUICK_CELLS)} cells of the quick default" in text
    assert f"{len(BOUNDED)} hangs" in text
    by_fault = {fault: sum(1 for cell in ALL_CELLS if cell[2] == fault) for fault in _EXC_NAME}
    assert (
        f"{by_fault['Exception']} each for `Exception`, `SystemExit` and `RecursionError`" in text
    )

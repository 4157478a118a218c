"""Dispatch: one hook call with k implementations, ours against pluggy and two plain loops.

Every variant calls the same functions, one per plugin:

- ``plain``: a loop over the functions in pluggy's call order, positional arguments (the floor);
- ``hermes``: a Hermes-style dispatcher, a dict of callback lists and a loop with try/except
  per callback collecting the non-``None`` results, callbacks called with ``**kwargs``;
- ``pluggy``: ``pm.hook.<name>(...)`` on a plain ``pluggy.PluginManager`` (the anchor);
- ``ours``: ``pm.hook.<name>(...)`` on our ``PluginManager``, every impl guarded;
- ``facade``: ``Hooks(pm).<name>(...)``, which also combines the results into one answer.

A case is one hook shape (``collect``: ``pre_tool_call``; ``wrapper``: the same with one
``wrapper=True`` implementation more; ``firstresult``: ``transform_tool_result``) and one k.
Each call is a ``timeit`` statement with the host's keyword arguments written out, so no
closure or ``**`` unpacking is added to what is measured. Rounds run every case, cases and
variants in a fresh random order each round; a ratio is taken within a round, and the report
gives the median over rounds of ns per call and of each ratio.
"""

from __future__ import annotations

import logging
import random
import statistics
import tempfile
import timeit
import types
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pluggy

from hermes_hooks import hookimpl
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION
from hermes_hooks.spec.markers import PROJECT_NAME

__all__ = [
    "CASE_KINDS",
    "VARIANTS",
    "Case",
    "CaseResult",
    "DispatchResults",
    "HermesStyleDispatcher",
    "build_case",
    "run_dispatch",
]

logger = logging.getLogger("benchmarks.dispatch")

VARIANTS: Final = ("plain", "hermes", "pluggy", "ours", "facade")
"""Every variant, in the order the tables show them."""

VARIANT_LABELS: Final = {
    "plain": "plain loop",
    "hermes": "Hermes-style dispatcher",
    "pluggy": "raw pluggy `pm.hook.X`",
    "ours": "our `pm.hook.X` (isolated)",
    "facade": "our `Hooks(pm).X`",
}

CASE_KINDS: Final = ("collect", "wrapper", "firstresult", "bounded")
"""``collect``: pre_tool_call; ``wrapper``: plus one wrapper=True impl; ``firstresult``:
transform_tool_result; ``bounded``: ``collect`` under the default ``hook_callback_timeout``."""

_HOOK_OF: Final = {
    "collect": "pre_tool_call",
    "wrapper": "pre_tool_call",
    "firstresult": "transform_tool_result",
    "bounded": "pre_tool_call",
}

UNBOUNDED_CONFIG: Final = "plugins:\n  hook_callback_timeout: 0\n"
"""Our managers' ``config.yaml`` in every case but ``bounded``: no per-call bound, so that
each implementation runs inline as under pluggy (the bound sends it to a worker thread)."""

# What the host passes: every argument of the hook, as the agent loop has them.
_CALL_ARGS: Final[Mapping[str, Mapping[str, object]]] = {
    "pre_tool_call": {
        "tool_name": "terminal",
        "args": {"command": "ls -la"},
        "task_id": "task-1",
        "session_id": "session-1",
        "tool_call_id": "call-1",
        "turn_id": "turn-1",
        "api_request_id": "req-1",
        "middleware_trace": [],
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
    "transform_tool_result": {
        "tool_name": "terminal",
        "args": {"command": "ls -la"},
        "result": "total 0",
        "task_id": "task-1",
        "session_id": "session-1",
        "tool_call_id": "call-1",
        "turn_id": "turn-1",
        "api_request_id": "req-1",
        "duration_ms": 3,
        "status": "ok",
        "error_type": None,
        "error_message": None,
        "telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
    },
}

ANSWER: Final = "result, as the first plugin to answer rewrote it"


# -- the implementations ------------------------------------------------------------------------


def _tool_impl(index: int) -> Callable[..., object]:
    def pre_tool_call(tool_name: str, args: object, session_id: str, **kwargs: object) -> object:
        # A typical policy plugin: looks at the call, lets it through.
        if tool_name == "never-called-tool":
            return {"action": "block", "message": f"plugin {index} blocks it"}
        return None

    return pre_tool_call


def _result_impl(answer: str | None) -> Callable[..., object]:
    def transform_tool_result(tool_name: str, result: str, **kwargs: object) -> str | None:
        if tool_name == "never-called-tool":
            return result.upper()
        return answer

    return transform_tool_result


@hookimpl(wrapper=True)
def _passing_wrapper(tool_name: str) -> Generator[None, object, object]:
    result = yield
    return result


def _plugin(index: int, hook: str, function: Callable[..., object]) -> types.ModuleType:
    """Return a module-like plugin holding one marked implementation."""
    module = types.ModuleType(f"bench_plugin_{index}")
    setattr(module, hook, function)
    return module


# -- the Hermes-style dispatcher and the plain loops -------------------------------------------


class HermesStyleDispatcher:
    """The shape of Hermes Agent's ``invoke_hook``: a dict of callback lists, each guarded."""

    def __init__(self) -> None:
        self._hooks: dict[str, list[Callable[..., Any]]] = {}

    def register_hook(self, hook_name: str, callback: Callable[..., Any]) -> None:
        """Add a callback, run after the ones already there."""
        self._hooks.setdefault(hook_name, []).append(callback)

    def invoke_hook(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """Call every callback of ``hook_name`` and return the non-``None`` results."""
        callbacks = self._hooks.get(hook_name, [])
        results: list[Any] = []
        for callback in callbacks:
            try:
                ret = callback(**kwargs)
                if ret is not None:
                    results.append(ret)
            except Exception as exc:
                logger.warning(
                    "hook %r callback %s raised: %s",
                    hook_name,
                    getattr(callback, "__name__", repr(callback)),
                    exc,
                )
        return results


def _plain_collect(functions: Sequence[Callable[..., object]]) -> Callable[..., list[object]]:
    def plain(
        *,
        tool_name: str,
        args: object,
        task_id: str,
        session_id: str,
        tool_call_id: str,
        turn_id: str,
        api_request_id: str,
        middleware_trace: object,
        telemetry_schema_version: str,
    ) -> list[object]:
        results = []
        for function in functions:
            result = function(tool_name, args, session_id)
            if result is not None:
                results.append(result)
        return results

    return plain


def _plain_first(functions: Sequence[Callable[..., object]]) -> Callable[..., object]:
    def plain(
        *,
        tool_name: str,
        args: object,
        result: str,
        task_id: str,
        session_id: str,
        tool_call_id: str,
        turn_id: str,
        api_request_id: str,
        duration_ms: int,
        status: str,
        error_type: str | None,
        error_message: str | None,
        telemetry_schema_version: str,
    ) -> object:
        for function in functions:
            answer = function(tool_name, result)
            if answer is not None:
                return answer
        return None

    return plain


# -- cases ----------------------------------------------------------------------------------


@dataclass
class Case:
    """One hook shape at one k: the statement and namespace of each variant."""

    kind: str
    k: int
    statements: dict[str, str]
    namespace: dict[str, object]
    expected: dict[str, object]

    @property
    def name(self) -> str:
        """``kind`` and ``k``, as the tables and logs name the case."""
        return f"{self.kind} k={self.k}"

    def check(self) -> None:
        """Run each variant once and check it gives the answer every other variant gives.

        A warning is an error here: pluggy warns on every call that leaves out an argument
        of the hookspec, and a warning per call would be timed as part of the call.
        """
        for variant, statement in self.statements.items():
            scope = dict(self.namespace)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                exec(statement, scope)  # the statement stores its value in _out
            got = _normalise(self.kind, scope["_out"])
            if got != self.expected[variant]:
                raise AssertionError(
                    f"{self.name}: {variant} gave {got!r}, expected {self.expected[variant]!r}"
                )


def _normalise(kind: str, value: object) -> object:
    """Reduce a variant's answer to what every variant must agree on."""
    if kind == "firstresult":
        return value
    if isinstance(value, list):
        return ("results", tuple(map(repr, value)))
    action = getattr(value, "action", None)
    if action == "allow":
        return ("results", ())  # the facade's answer when every plugin let the call through
    return ("decision", action)


def _call(target: str, hook: str, *, leading: str = "") -> str:
    """Return the call of ``target`` with every argument of ``hook`` by keyword."""
    arguments = ", ".join(
        [*([leading] if leading else []), *(f"{n}=_{n}" for n in _CALL_ARGS[hook])]
    )
    return f"{target}({arguments})"


def _statements(
    kind: str, hook: str, in_pluggy_order: list[Callable[..., object]], namespace: dict[str, object]
) -> dict[str, str]:
    """Each variant's statement of case ``kind``; the plain loop goes into ``namespace``."""
    statements = {
        "pluggy": "_out = " + _call(f"raw.hook.{hook}", hook),
        "ours": "_out = " + _call(f"ours.hook.{hook}", hook),
        "facade": "_out = " + _call(f"hooks.{hook}", hook),
    }
    if kind == "collect":
        namespace["plain"] = _plain_collect(in_pluggy_order)
        statements["plain"] = "_out = " + _call("plain", hook)
        statements["hermes"] = "_out = " + _call("hermes.invoke_hook", hook, leading=repr(hook))
    elif kind == "firstresult":
        namespace["plain"] = _plain_first(in_pluggy_order)
        statements["plain"] = "_out = " + _call("plain", hook)
        # The host takes the first result of the list Hermes returns, or keeps its own.
        statements["hermes"] = (
            "_all = " + _call("hermes.invoke_hook", hook, leading=repr(hook)) + "\n"
            "_out = _all[0] if _all else _result"
        )
    return statements


def build_case(kind: str, k: int, home: Path) -> Case:
    """Return the case ``kind`` with ``k`` plugins, set up on fresh managers.

    :param home: an empty folder; the managers' Hermes homes are made inside it.
    """
    from hermes_hooks.plugins.manager import PluginManager

    hook = _HOOK_OF[kind]
    home = home / f"{kind}-{k}"
    home.mkdir()
    if kind != "bounded":
        (home / "config.yaml").write_text(UNBOUNDED_CONFIG, encoding="utf-8")
    if kind == "firstresult":
        # Registered first, so pluggy runs it last: every variant calls all k functions.
        functions = [_result_impl(ANSWER if i == 0 else None) for i in range(k)]
    else:
        functions = [_tool_impl(i) for i in range(k)]
    raw = pluggy.PluginManager(PROJECT_NAME)
    raw.add_hookspecs(hookspecs)
    ours = PluginManager(home)
    ours.reload_config()
    hermes = HermesStyleDispatcher()
    for index, function in enumerate(functions):
        marked = hookimpl(function)
        raw.register(_plugin(index, hook, marked), name=f"plugin{index}")
        ours.register(_plugin(index, hook, marked), name=f"plugin{index}")
        hermes.register_hook(hook, function)
    if kind == "wrapper":
        raw.register(_plugin(k, hook, _passing_wrapper), name="wrapper")
        ours.register(_plugin(k, hook, _passing_wrapper), name="wrapper")
    wanted = k + (kind == "wrapper")
    for manager in (raw, ours):
        got = len(getattr(manager.hook, hook).get_hookimpls())
        if got != wanted:
            raise AssertionError(f"{kind} k={k}: {got} implementations registered, not {wanted}")
    namespace: dict[str, object] = {f"_{name}": value for name, value in _CALL_ARGS[hook].items()}
    namespace.update(raw=raw, ours=ours, hooks=Hooks(ours), hermes=hermes)
    statements = _statements(kind, hook, list(reversed(functions)), namespace)
    expected: dict[str, object] = dict.fromkeys(statements, ("results", ()))
    if kind == "firstresult":
        expected = dict.fromkeys(statements, ANSWER if k else None)
        if not k:  # the host keeps its own result when nobody answers
            expected["facade"] = expected["hermes"] = _CALL_ARGS[hook]["result"]
    case = Case(kind, k, statements, namespace, expected)
    case.check()
    return case


# -- measuring --------------------------------------------------------------------------------


@dataclass
class CaseResult:
    """Every round's ns per call of each variant of one case."""

    kind: str
    k: int
    samples: dict[str, list[float]] = field(default_factory=dict)

    def median(self, variant: str) -> float:
        """Median ns per call of ``variant`` over the rounds."""
        return statistics.median(self.samples[variant])

    def ratio(self, variant: str, anchor: str) -> float:
        """Median over rounds of ``variant``'s time divided by ``anchor``'s, same round."""
        pairs = zip(self.samples[variant], self.samples[anchor], strict=True)
        return statistics.median(a / b for a, b in pairs)


@dataclass
class DispatchResults:
    """What :func:`run_dispatch` measured."""

    ks: tuple[int, ...]
    rounds: int
    target_seconds: float
    cases: list[CaseResult]

    def get(self, kind: str, k: int) -> CaseResult | None:
        """Return the results of one case, or ``None`` when it was not run."""
        for case in self.cases:
            if case.kind == kind and case.k == k:
                return case
        return None


def _calibrate(timer: timeit.Timer, target: float) -> int:
    """Return how many calls take about ``target`` seconds."""
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= target / 10 or number >= 10**7:
            return max(1, int(number * target / max(elapsed, 1e-9)))
        number *= 10


@contextmanager
def _quiet_logging() -> Iterator[None]:
    """Keep the managers' warnings (there should be none) from flooding the run."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)


def run_dispatch(
    ks: Sequence[int] = (0, 1, 5, 20),
    *,
    kinds: Sequence[str] = CASE_KINDS,
    rounds: int = 25,
    target_seconds: float = 0.02,
    seed: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> DispatchResults:
    """Measure every variant of every case, interleaved in shuffled rounds.

    :param target_seconds: how long one timing of one variant lasts (its call count is
        calibrated once, before the rounds).
    """
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-home-") as home, _quiet_logging():
        cases = [build_case(kind, k, Path(home)) for kind in kinds for k in ks]
        timers = {
            (case.name, variant): timeit.Timer(statement, globals=case.namespace)
            for case in cases
            for variant, statement in case.statements.items()
        }
        numbers = {key: _calibrate(timer, target_seconds) for key, timer in timers.items()}
        results = {case.name: CaseResult(case.kind, case.k) for case in cases}
        for round_index in range(rounds):
            if progress is not None:
                progress(f"dispatch: round {round_index + 1}/{rounds}")
            for case in rng.sample(cases, len(cases)):
                variants = list(case.statements)
                for variant in rng.sample(variants, len(variants)):
                    key = (case.name, variant)
                    elapsed = timers[key].timeit(numbers[key])
                    samples = results[case.name].samples.setdefault(variant, [])
                    samples.append(elapsed / numbers[key] * 1e9)
    return DispatchResults(tuple(ks), rounds, target_seconds, list(results.values()))

"""``Hooks(pm)``: one typed method per hook, applying the hook's combine rule, sync and async.

Every method takes the hook's arguments as keywords, fills in what the host leaves out (the
defaults of the hook's contract: ``""`` for ids, ``None`` for optional values, a fresh empty list
or dict), calls pluggy exactly as ``pm.hook.<name>(...)`` would (same implementations, order,
``firstresult`` and wrappers), and turns what comes back into one typed answer with the rules of
:mod:`hermes_hooks.spec.decisions`. A hook with no implementations is not called at all.

The per-hook methods are generated (:mod:`hermes_hooks.calling.facadegen`, between the two
marker lines of ``Hooks``) and each is its typed signature and one line handing its arguments to
``Hooks._run``; what a hook's answer is comes from data: :data:`RULES` (the neutral answer and
the combine rule of every hook that is not an observer) and the hook's contract (its defaults,
and whether it is gated: a contract that ``protects`` an argument). ``_async`` makes each
coroutine method from the same sync method, run on a view of the facade that hands the call back
to be awaited through :func:`hermes_hooks.calling.aio.amulticall`."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, Final, Literal, ParamSpec, TypeVar, cast

import pluggy

from hermes_hooks.calling import aio, handoff
from hermes_hooks.calling.gate import GateWatch
from hermes_hooks.calling.pluggy_private import live_hookimpls
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.spec import hookspecs
from hermes_hooks.spec.contract import get_contract
from hermes_hooks.spec.decisions import (
    UNATTRIBUTED,
    ErrorClassification,
    GatewayDecision,
    ToolDecision,
    VerifyDecision,
    combine_tool_decisions,
    error_classification,
    gateway_decision,
    join_context,
    transcription_overrides,
    verify_decision,
)

__tracebackhide__ = hide_in_pytest  # a plugin's failure: pytest leaves these frames out

if TYPE_CHECKING:
    from hermes_hooks.calling.guarded import GuardedManager

__all__ = [
    "CONCURRENT_PREFIXES",
    "RULES",
    "HookListener",
    "Hooks",
    "Rule",
    "acall_hook",
    "call_attributed",
]

logger = logging.getLogger(__name__)

HookListener = Callable[[str], None]
"""Told the name of every hook the facade fires, whether or not a plugin implements it."""

CONCURRENT_PREFIXES: Final = ("post_", "on_", "subagent_", "kanban_")
"""Observer hooks whose implementations may run concurrently in the async path, when asked."""

_ALLOW: Final = GatewayDecision()


def _attribute(raw: object, records: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """Pair each value of pluggy's result list (or its first result) with its plugin's record."""
    values = raw if isinstance(raw, list) else [] if raw is None else [raw]
    if len(values) == len(records) and all(
        v is r for v, (_, r) in zip(values, records, strict=True)
    ):
        return records
    pending = list(records)
    attributed: list[tuple[str, object]] = []
    for value in values:
        for index, (owner, recorded) in enumerate(pending):
            if recorded is value:
                attributed.append((owner, value))
                del pending[index]
                break
        else:
            attributed.append((UNATTRIBUTED, value))
    return attributed


def call_attributed(
    pm: GuardedManager,
    name: str,
    kwargs: Mapping[str, object],
    watch: GateWatch | None = None,
) -> list[tuple[str, object]]:
    """Call a collecting hook as ``pm.hook.<name>(**kwargs)``; say which plugin returned what.

    The call is pluggy's own (ordering, wrappers, tracing and monitoring are pluggy's); each
    guarded implementation records its result with its plugin on the way
    (:class:`~hermes_hooks.calling.handoff.Sink`). The returned list is pluggy's result list,
    each value paired with the plugin that returned it, or :data:`UNATTRIBUTED` when a wrapper
    put it there.

    :param watch: a gated call's watch: the records go to ``watch.records``, and the watch is
        told after each implementation and each half of a wrapper.
    """
    caller: pluggy.HookCaller = getattr(pm.hook, name)
    records: list[tuple[str, object]] = [] if watch is None else watch.records
    previous = handoff.set_sink(handoff.Sink(name, records, watch))
    try:
        raw = caller(**kwargs)
    finally:
        handoff.set_sink(previous)
    return _attribute(raw, records)


async def acall_hook(
    pm: GuardedManager,
    name: str,
    kwargs: Mapping[str, object],
    *,
    attributed: bool = False,
    concurrent: bool = False,
    watch: GateWatch | None = None,
) -> Any:
    """Await hook ``name`` and return what ``pm.hook.<name>(**kwargs)`` would return.

    ``async def`` implementations are awaited on the running loop; sync ones are called as pluggy
    calls them (within ``plugins.hook_callback_timeout`` where it applies, see
    :mod:`hermes_hooks.calling.guards`). Unlike ``pm.hook``, the call does not pass through pluggy's
    call monitors (``add_hookcall_monitoring``).

    :param attributed: return ``[(plugin, result), ...]`` as :func:`call_attributed` does.
    :param concurrent: run the plain implementations concurrently (observer hooks only).
    :param watch: a gated call's watch (see :func:`call_attributed`); the records go to it.
    """
    caller: pluggy.HookCaller = getattr(pm.hook, name)
    spec = caller.spec
    firstresult = bool(spec.opts.get("firstresult")) if spec is not None else False
    records: list[tuple[str, object]] | None = [] if attributed else None
    if watch is not None:
        records = watch.records
    # A copy, as pluggy takes one: an implementation may register plugins while it runs.
    raw = await aio.amulticall(
        name,
        list(caller.get_hookimpls()),
        kwargs,
        firstresult,
        records=records,
        concurrent=concurrent and not firstresult and watch is None,
        watch=watch,
    )
    return _attribute(raw, records) if records is not None else raw


def _decide_tool_call(gate: GateWatch, kwargs: Mapping[str, Any]) -> ToolDecision:
    """The ``pre_tool_call`` decision of a gated call: each implementation's own result counts.

    The arguments are the snapshot taken before the first implementation ran (what the host
    passed), with the declared ``modify`` results merged over them.
    """
    return combine_tool_decisions(
        gate.original("args"), gate.records, tuple(gate.tampering), owned=True
    )


class Rule:
    """What the method of a hook that is not an observer answers.

    :param returns: the method's return annotation (the generator writes it).
    :param neutral: the answer when no plugin implements the hook: an expression of the
        method's arguments, which the generator writes into the method (so that a hook
        nobody implements costs a look, not a call).
    :param finish: the answer from pluggy's result (a gated hook's: its
        :class:`~hermes_hooks.calling.gate.GateWatch`) and the call's arguments.
    """

    __slots__ = ("finish", "neutral", "returns")

    def __init__(
        self, returns: str, neutral: str, finish: Callable[[Any, Mapping[str, Any]], Any]
    ) -> None:
        self.returns, self.neutral, self.finish = returns, neutral, finish


def _replacement(argument: str, *, nonempty: bool = False) -> Rule:
    """The rule of a transform hook: the first ``str`` a plugin returns, else ``argument``."""

    def finish(new: object, kwargs: Mapping[str, Any]) -> Any:
        fits = isinstance(new, str) and (bool(new) or not nonempty)
        return new if fits else kwargs[argument]

    return Rule("str", argument, finish)


RULES: Final[Mapping[str, Rule]] = {
    "pre_tool_call": Rule("ToolDecision", "ToolDecision.allow(args)", _decide_tool_call),
    "transform_tool_result": _replacement("result"),
    "transform_terminal_output": _replacement("output"),
    "transform_llm_output": _replacement("response_text", nonempty=True),
    "pre_llm_call": Rule(
        "str | None",
        "None",
        lambda results, kw: join_context(results if isinstance(results, list) else []),
    ),
    "pre_gateway_dispatch": Rule(
        "GatewayDecision", "_ALLOW", lambda raw, kw: gateway_decision(raw)
    ),
    "pre_verify": Rule("VerifyDecision | None", "None", lambda raw, kw: verify_decision(raw)),
    "transform_api_error_classification": Rule(
        "ErrorClassification | None", "None", lambda raw, kw: error_classification(raw)
    ),
    "pre_transcription": Rule("dict[str, str]", "{}", lambda raw, kw: transcription_overrides(raw)),
}
"""Every hook that is not an observer: its answer's type, its neutral answer, its combine rule."""


def _plan(name: str) -> tuple[Rule | None, tuple[tuple[str, Any], ...], bool]:
    """Hook ``name``'s rule, its arguments whose default is a fresh list or dict, and whether
    it is gated (its contract ``protects`` an argument)."""
    contract = get_contract(getattr(hookspecs, name))
    fresh = tuple((k, v) for k, v in contract.defaults.items() if isinstance(v, list | dict))
    return RULES.get(name), fresh, bool(contract.protects)


_PLANS: Final = {name: _plan(name) for name in hookspecs.HOOK_NAMES}


class _Pending:
    """A hook call an async method is to await, and how its raw result becomes the answer."""

    __slots__ = ("kwargs", "name", "rule")

    def __init__(self, name: str, kwargs: Mapping[str, Any], rule: Rule | None) -> None:
        self.name, self.kwargs, self.rule = name, kwargs, rule


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _async(
    method: Callable[Concatenate[Hooks, _P], _R],
) -> Callable[Concatenate[Hooks, _P], Coroutine[Any, Any, _R]]:
    """Make the coroutine method of a sync one: same arguments, same answer, awaited calls.

    The sync method runs on a :class:`_Deferred` view of the facade, which hands its hook call
    back instead of running it; that call is awaited, and its result finished the same way.
    """

    @functools.wraps(method)
    async def amethod(self: Hooks, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        answer = method(_Deferred(self), *args, **kwargs)
        if not isinstance(answer, _Pending):
            return answer  # nothing to call: the neutral answer
        raw = await self._arun(answer)
        rule = answer.rule  # None: an observer hook, whose method returns None
        return cast("_R", rule.finish(raw, answer.kwargs) if rule is not None else None)

    amethod.__name__ = "a" + method.__name__
    amethod.__qualname__ = method.__qualname__.rsplit(".", 1)[0] + "." + amethod.__name__
    return amethod


class Hooks:
    """The typed facade over a plugin manager's hooks.

    Every hook has a method (``hooks.pre_tool_call(...)``) and a coroutine method with an ``a``
    in front (``await hooks.apre_tool_call(...)``): the same arguments and the same answer, with
    ``async def`` implementations awaited on the caller's loop.

    :param pm: the manager whose hooks are called.
    :param listener: called with each hook's name before it fires (for event logs and tests).
    :param concurrent_observers: in the coroutine methods, run the implementations of the
        observer hooks ``post_*``, ``on_*``, ``subagent_*`` and ``kanban_*`` concurrently
        (wrappers still run around all of them); every hook with a result runs in order.
    """

    def __init__(
        self,
        pm: GuardedManager,
        *,
        listener: HookListener | None = None,
        concurrent_observers: bool = False,
    ) -> None:
        self.pm = pm
        self.listener = listener
        self.concurrent_observers = concurrent_observers
        self._protects: dict[str, tuple[str, ...]] = {}

    def _implemented(self, name: str) -> bool:
        """Tell the listener that hook ``name`` fires; return whether a plugin implements it."""
        if self.listener is not None:
            self.listener(name)
        return bool(live_hookimpls(getattr(self.pm.hook, name)))  # pluggy's list, not a copy

    def _run(self, name: str, kwargs: dict[str, Any], /) -> Any:
        """Call hook ``name`` with a method's ``locals()``; return the hook's answer.

        ``None`` for an observer, else the rule's combination of what the call returned (the
        method has answered already when no plugin implements the hook).
        """
        del kwargs["self"]
        rule, fresh, gated = _PLANS[name]
        for argument, empty in fresh:
            if kwargs[argument] is None:
                kwargs[argument] = empty.copy()
        if gated:
            return self._dispatch(name, kwargs, rule, None)
        return self._dispatch(name, kwargs, rule, getattr(self.pm.hook, name))

    def _fire(self, name: str, kwargs: dict[str, Any], /) -> None:
        """Fire observer hook ``name``; on a :class:`_Deferred` view, hand back the call."""
        if self.listener is not None:
            self.listener(name)
        caller: pluggy.HookCaller = getattr(self.pm.hook, name)
        if not live_hookimpls(caller):
            return None
        del kwargs["self"]
        for argument, empty in _PLANS[name][1]:
            if kwargs[argument] is None:
                kwargs[argument] = empty.copy()
        return self._dispatch(name, kwargs, None, caller)  # type: ignore[no-any-return]

    def _watch(self, name: str, kwargs: Mapping[str, Any]) -> GateWatch:
        protects = self._protects.get(name)
        if protects is None:
            protects = self._protects[name] = self.pm.get_hook_contract(name).protects
        return GateWatch(name, kwargs, protects)

    def _settle(self, watch: GateWatch) -> GateWatch:
        """End a gated call: a late change undone, and each thing undone reported on its plugin."""
        watch.finish()
        for tampering in watch.tampering:
            message = tampering.describe()
            logger.warning("hook %r: %s", watch.hook, message)
            self.pm.count_failure(tampering.plugin, watch.hook, message)
        return watch

    def _dispatch(self, name: str, kwargs: dict[str, Any], rule: Rule | None, caller: Any) -> Any:
        """Run one hook call now and finish its result (:class:`_Deferred` hands it back).

        :param caller: the hook's caller, or ``None`` for a gated call.
        """
        raw = self._gated(name, kwargs) if caller is None else caller(**kwargs)
        return rule.finish(raw, kwargs) if rule is not None else None

    def _gated(self, name: str, kwargs: Mapping[str, Any]) -> GateWatch:
        """Run one gated call now; return its watch."""
        watch = self._watch(name, kwargs)
        try:
            call_attributed(self.pm, name, kwargs, watch)
        finally:
            self._settle(watch)
        return watch

    async def _arun(self, call: _Pending) -> Any:
        """Run one call the asynchronous way: awaited implementations, pluggy's order."""
        if _PLANS[call.name][2]:
            watch = self._watch(call.name, call.kwargs)
            try:
                await acall_hook(self.pm, call.name, call.kwargs, watch=watch)
            finally:
                self._settle(watch)
            return watch
        concurrent = self.concurrent_observers and call.name.startswith(CONCURRENT_PREFIXES)
        return await acall_hook(self.pm, call.name, call.kwargs, concurrent=concurrent)

    # -- generated by hermes_hooks.calling.facadegen: do not edit --

    # -- tools ------------------------------------------------------------------------------------

    def pre_tool_call(
        self,
        *,
        tool_name: str,
        args: Mapping[str, Any],
        task_id: str = "",
        session_id: str = "",
        tool_call_id: str = "",
        turn_id: str = "",
        api_request_id: str = "",
        middleware_trace: list[dict[str, Any]] | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> ToolDecision:
        """Ask the plugins about a tool call; block > approve > modify, whatever their order."""
        if not self._implemented("pre_tool_call"):
            return ToolDecision.allow(args)
        answer: ToolDecision = self._run("pre_tool_call", locals())
        return answer

    apre_tool_call = _async(pre_tool_call)

    def post_tool_call(
        self,
        *,
        tool_name: str,
        args: Mapping[str, Any],
        result: str,
        task_id: str = "",
        session_id: str = "",
        tool_call_id: str = "",
        turn_id: str = "",
        api_request_id: str = "",
        duration_ms: int = 0,
        status: Literal["ok", "error", "blocked"] = "ok",
        error_type: str | None = None,
        error_message: str | None = None,
        middleware_trace: list[dict[str, Any]] | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a tool call returned, failed or was blocked."""
        return self._fire("post_tool_call", locals())

    apost_tool_call = _async(post_tool_call)

    def transform_tool_result(
        self,
        *,
        tool_name: str,
        args: Mapping[str, Any],
        result: str,
        task_id: str = "",
        session_id: str = "",
        tool_call_id: str = "",
        turn_id: str = "",
        api_request_id: str = "",
        duration_ms: int = 0,
        status: Literal["ok", "error"] = "ok",
        error_type: str | None = None,
        error_message: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> str:
        """Return the tool result the model sees: the first plugin's replacement, or ``result``."""
        if not self._implemented("transform_tool_result"):
            return result
        answer: str = self._run("transform_tool_result", locals())
        return answer

    atransform_tool_result = _async(transform_tool_result)

    def transform_terminal_output(
        self,
        *,
        command: str,
        output: str,
        returncode: int | None,
        task_id: str = "",
        env_type: str = "",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> str:
        """Return the terminal output the tool keeps: the first replacement, or ``output``."""
        if not self._implemented("transform_terminal_output"):
            return output
        answer: str = self._run("transform_terminal_output", locals())
        return answer

    atransform_terminal_output = _async(transform_terminal_output)

    # -- the model turn ---------------------------------------------------------------------------

    def transform_llm_output(
        self,
        *,
        response_text: str,
        session_id: str = "",
        model: str = "",
        platform: str = "",
        turn_id: str = "",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> str:
        """Return the final response: the first non-empty replacement, or ``response_text``."""
        if not self._implemented("transform_llm_output"):
            return response_text
        answer: str = self._run("transform_llm_output", locals())
        return answer

    atransform_llm_output = _async(transform_llm_output)

    def pre_llm_call(
        self,
        *,
        user_message: str | list[dict[str, Any]],
        conversation_history: list[dict[str, Any]],
        session_id: str = "",
        task_id: str = "",
        turn_id: str = "",
        is_first_turn: bool = False,
        model: str = "",
        platform: str = "",
        parent_session_id: str = "",
        sender_id: str = "",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> str | None:
        """Return the plugins' context for this turn, joined with blank lines, or ``None``."""
        if not self._implemented("pre_llm_call"):
            return None
        answer: str | None = self._run("pre_llm_call", locals())
        return answer

    apre_llm_call = _async(pre_llm_call)

    def post_llm_call(
        self,
        *,
        user_message: str | list[dict[str, Any]],
        assistant_response: str,
        conversation_history: list[dict[str, Any]],
        session_id: str = "",
        task_id: str = "",
        turn_id: str = "",
        model: str = "",
        platform: str = "",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a turn produced its final response."""
        return self._fire("post_llm_call", locals())

    apost_llm_call = _async(post_llm_call)

    def pre_api_request(
        self,
        *,
        request_messages: list[dict[str, Any]],
        task_id: str = "",
        turn_id: str = "",
        api_request_id: str = "",
        session_id: str = "",
        user_message: str | list[dict[str, Any]] = "",
        conversation_history: list[dict[str, Any]] | None = None,
        platform: str = "",
        model: str = "",
        provider: str = "",
        base_url: str = "",
        api_mode: str = "chat_completions",
        api_call_count: int = 1,
        retry_count: int = 0,
        message_count: int = 0,
        tool_count: int = 0,
        approx_input_tokens: int = 0,
        request_char_count: int = 0,
        max_tokens: int | None = None,
        started_at: float = 0.0,
        middleware_trace: list[dict[str, Any]] | None = None,
        request: dict[str, Any] | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a model request is about to be sent."""
        return self._fire("pre_api_request", locals())

    apre_api_request = _async(pre_api_request)

    def post_api_request(
        self,
        *,
        task_id: str = "",
        turn_id: str = "",
        api_request_id: str = "",
        session_id: str = "",
        platform: str = "",
        model: str = "",
        provider: str = "",
        base_url: str = "",
        api_mode: str = "chat_completions",
        api_call_count: int = 1,
        api_duration: float = 0.0,
        started_at: float = 0.0,
        ended_at: float = 0.0,
        first_chunk_at: float | None = None,
        first_delta_at: float | None = None,
        finish_reason: str | None = None,
        message_count: int = 0,
        response_model: str | None = None,
        response: dict[str, Any] | None = None,
        usage: dict[str, Any] | None = None,
        assistant_message: Any = None,
        assistant_content_chars: int = 0,
        assistant_tool_call_count: int = 0,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a model response arrived and was normalized."""
        return self._fire("post_api_request", locals())

    apost_api_request = _async(post_api_request)

    def api_request_error(
        self,
        *,
        error: dict[str, str],
        task_id: str = "",
        turn_id: str = "",
        api_request_id: str = "",
        session_id: str = "",
        platform: str = "",
        model: str = "",
        provider: str = "",
        base_url: str = "",
        api_mode: str = "chat_completions",
        api_call_count: int = 1,
        api_duration: float = 0.0,
        started_at: float = 0.0,
        ended_at: float = 0.0,
        first_chunk_at: float | None = None,
        first_delta_at: float | None = None,
        status_code: int | None = None,
        retry_count: int | None = None,
        max_retries: int | None = None,
        retryable: bool | None = None,
        reason: str | None = None,
        request: dict[str, Any] | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a model request failed."""
        return self._fire("api_request_error", locals())

    aapi_request_error = _async(api_request_error)

    # -- sessions ---------------------------------------------------------------------------------

    def on_session_start(
        self,
        *,
        session_id: str,
        model: str = "",
        platform: str = "",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a new session runs its first turn."""
        return self._fire("on_session_start", locals())

    aon_session_start = _async(on_session_start)

    def on_session_end(
        self,
        *,
        session_id: str,
        task_id: str = "",
        turn_id: str = "",
        completed: bool = False,
        failed: bool = False,
        interrupted: bool = False,
        turn_exit_reason: str = "",
        model: str = "",
        platform: str = "",
        reason: str | None = None,
        api_request_id: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a turn ended, whatever its outcome."""
        return self._fire("on_session_end", locals())

    aon_session_end = _async(on_session_end)

    def on_session_finalize(
        self,
        *,
        session_id: str | None,
        platform: str = "",
        reason: str | None = None,
        old_session_id: str | None = None,
        new_session_id: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a session is torn down."""
        return self._fire("on_session_finalize", locals())

    aon_session_finalize = _async(on_session_finalize)

    def on_session_reset(
        self,
        *,
        session_id: str | None,
        platform: str = "",
        reason: str | None = None,
        old_session_id: str | None = None,
        new_session_id: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a replacement session exists."""
        return self._fire("on_session_reset", locals())

    aon_session_reset = _async(on_session_reset)

    # -- subagents --------------------------------------------------------------------------------

    def subagent_start(
        self,
        *,
        parent_session_id: str | None,
        child_session_id: str | None,
        child_subagent_id: str,
        child_goal: str,
        parent_turn_id: str = "",
        parent_subagent_id: str | None = None,
        child_role: str = "leaf",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a child agent is about to run."""
        return self._fire("subagent_start", locals())

    asubagent_start = _async(subagent_start)

    def subagent_stop(
        self,
        *,
        parent_session_id: str | None,
        child_session_id: str | None,
        child_status: str,
        parent_turn_id: str = "",
        child_role: str | None = None,
        child_summary: str | None = None,
        tool_call_history: list[dict[str, Any]] | None = None,
        duration_ms: int = 0,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a child agent finished."""
        return self._fire("subagent_stop", locals())

    asubagent_stop = _async(subagent_stop)

    # -- the gateway and the verify gate ----------------------------------------------------------

    def pre_gateway_dispatch(
        self,
        *,
        event: Any,
        gateway: Any = None,
        session_store: Any = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> GatewayDecision:
        """Return what happens to an inbound message: allow, skip (with reason) or rewrite."""
        if not self._implemented("pre_gateway_dispatch"):
            return _ALLOW
        answer: GatewayDecision = self._run("pre_gateway_dispatch", locals())
        return answer

    apre_gateway_dispatch = _async(pre_gateway_dispatch)

    # -- gateway platform events ------------------------------------------------------------------

    def gateway_platform_event(
        self,
        *,
        platform: str = "",
        event_type: str = "",
        payload: dict[str, Any] | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers the gateway normalized a platform event."""
        return self._fire("gateway_platform_event", locals())

    agateway_platform_event = _async(gateway_platform_event)

    def pre_verify(
        self,
        *,
        final_response: str,
        changed_paths: list[str],
        session_id: str = "",
        platform: str = "",
        model: str = "",
        coding: bool = True,
        attempt: int = 0,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> VerifyDecision | None:
        """Return a decision that sends the agent back to work, or ``None`` to finish."""
        if not self._implemented("pre_verify"):
            return None
        answer: VerifyDecision | None = self._run("pre_verify", locals())
        return answer

    apre_verify = _async(pre_verify)

    # -- approvals --------------------------------------------------------------------------------

    def pre_approval_request(
        self,
        *,
        command: str,
        description: str = "",
        pattern_key: str = "",
        pattern_keys: list[str] | None = None,
        session_key: str = "",
        surface: str = "cli",
        turn_id: str = "",
        tool_call_id: str = "",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a person is about to be asked to approve ``command``."""
        return self._fire("pre_approval_request", locals())

    apre_approval_request = _async(pre_approval_request)

    def post_approval_response(
        self,
        *,
        command: str,
        choice: str,
        description: str = "",
        pattern_key: str = "",
        pattern_keys: list[str] | None = None,
        session_key: str = "",
        surface: str = "cli",
        turn_id: str = "",
        tool_call_id: str = "",
        decided_by: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers how an approval was answered."""
        return self._fire("post_approval_response", locals())

    apost_approval_response = _async(post_approval_response)

    # -- the kanban board -------------------------------------------------------------------------

    def kanban_task_claimed(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a task was claimed."""
        return self._fire("kanban_task_claimed", locals())

    akanban_task_claimed = _async(kanban_task_claimed)

    def kanban_task_completed(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        summary: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a task was completed."""
        return self._fire("kanban_task_completed", locals())

    akanban_task_completed = _async(kanban_task_completed)

    def kanban_task_blocked(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        reason: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a task moved to blocked."""
        return self._fire("kanban_task_blocked", locals())

    akanban_task_blocked = _async(kanban_task_blocked)

    # -- streaming output -------------------------------------------------------------------------

    def on_stream_start(
        self,
        *,
        turn_id: str = "",
        iteration: int = 0,
        session_id: str = "",
        model: str = "",
        provider: str = "",
        surface: str = "cli",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a streaming response begins."""
        return self._fire("on_stream_start", locals())

    aon_stream_start = _async(on_stream_start)

    def on_stream_delta(
        self,
        *,
        delta: str,
        kind: Literal["text", "reasoning"],
        turn_id: str = "",
        iteration: int = 0,
        session_id: str = "",
        model: str = "",
        provider: str = "",
        surface: str = "cli",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a streaming response brought ``delta``."""
        return self._fire("on_stream_delta", locals())

    aon_stream_delta = _async(on_stream_delta)

    def on_stream_end(
        self,
        *,
        final_text: str,
        finished: bool,
        error: str | None = None,
        turn_id: str = "",
        iteration: int = 0,
        session_id: str = "",
        model: str = "",
        provider: str = "",
        surface: str = "cli",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a streaming response ended."""
        return self._fire("on_stream_end", locals())

    aon_stream_end = _async(on_stream_end)

    def on_interim_message(
        self,
        *,
        text: str,
        already_streamed: bool = False,
        turn_id: str = "",
        iteration: int = 0,
        session_id: str = "",
        model: str = "",
        provider: str = "",
        surface: str = "cli",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers the model said ``text`` mid-turn."""
        return self._fire("on_interim_message", locals())

    aon_interim_message = _async(on_interim_message)

    # -- model errors -----------------------------------------------------------------------------

    def transform_api_error_classification(
        self,
        *,
        error: Any,
        provider: str = "",
        model: str = "",
        status_code: int | None = None,
        error_type: str = "",
        error_code: str | None = None,
        error_message: str = "",
        error_body: Any = None,
        approx_tokens: int = 0,
        context_length: int | None = None,
        num_messages: int = 0,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> ErrorClassification | None:
        """Return the first plugin's classification of a failed model request, or ``None``."""
        if not self._implemented("transform_api_error_classification"):
            return None
        answer: ErrorClassification | None = self._run(
            "transform_api_error_classification", locals()
        )
        return answer

    atransform_api_error_classification = _async(transform_api_error_classification)

    # -- skills -----------------------------------------------------------------------------------

    def on_skill_lifecycle(
        self,
        *,
        action: str,
        skill_name: str,
        provenance: str = "",
        task_id: str = "",
        session_id: str = "",
        use_count: int = 0,
        reused: bool = False,
        reuse_after_patch: bool = False,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a skill's usage state changed."""
        return self._fire("on_skill_lifecycle", locals())

    aon_skill_lifecycle = _async(on_skill_lifecycle)

    # -- the agent loop and slash commands --------------------------------------------------------

    def agent_loop_stopped(
        self,
        *,
        session_key: str,
        platform: str = "",
        reason: str = "",
        invalidation_reason: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a running turn was interrupted."""
        return self._fire("agent_loop_stopped", locals())

    aagent_loop_stopped = _async(agent_loop_stopped)

    def pre_command(
        self,
        *,
        command: str,
        surface: Literal["cli", "gateway"] = "cli",
        alias_used: str | None = None,
        args_raw: str = "",
        session_key: str = "",
        platform: str = "",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a slash command is about to run."""
        return self._fire("pre_command", locals())

    apre_command = _async(pre_command)

    # -- transcription ----------------------------------------------------------------------------

    def pre_transcription(
        self,
        *,
        file_path: str,
        provider: str = "",
        model: str | None = None,
        language: str | None = None,
        prompt: str | None = None,
        source: str = "",
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> dict[str, str]:
        """Return the plugins' changes to ``prompt``, ``language`` and ``model`` (later wins)."""
        if not self._implemented("pre_transcription"):
            return {}
        answer: dict[str, str] = self._run("pre_transcription", locals())
        return answer

    apre_transcription = _async(pre_transcription)

    # -- group chat -------------------------------------------------------------------------------

    def on_room_member_activity(
        self,
        *,
        room_id: str,
        kind: str,
        payload: dict[str, Any],
        thread_id: str = "",
        member_id: str = "",
        turn_id: str = "",
        task_id: str = "",
        execution_generation: int = 0,
        seq: int = 0,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a group-chat member's session emitted an event."""
        return self._fire("on_room_member_activity", locals())

    aon_room_member_activity = _async(on_room_member_activity)

    # -- kanban workers ---------------------------------------------------------------------------

    def on_kanban_worker_spawned(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        worker_pid: int | None = None,
        workspace_path: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a task's worker started."""
        return self._fire("on_kanban_worker_spawned", locals())

    aon_kanban_worker_spawned = _async(on_kanban_worker_spawned)

    def on_kanban_worker_exited(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        worker_pid: int | None = None,
        exit_kind: str = "unknown",
        exit_code: int | None = None,
        outcome: str | None = None,
        retry_status: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a task's worker was found dead."""
        return self._fire("on_kanban_worker_exited", locals())

    aon_kanban_worker_exited = _async(on_kanban_worker_exited)

    def on_kanban_worker_stale_claim(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        worker_pid: int | None = None,
        heartbeat_stale: bool = True,
        retry_status: str | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a stale claim was reclaimed."""
        return self._fire("on_kanban_worker_stale_claim", locals())

    aon_kanban_worker_stale_claim = _async(on_kanban_worker_stale_claim)

    def on_kanban_task_updated(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        changed_fields: list[str] | None = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a task's fields were written."""
        return self._fire("on_kanban_task_updated", locals())

    aon_kanban_task_updated = _async(on_kanban_task_updated)

    def on_kanban_dispatch_tick(
        self,
        *,
        board: str | None = None,
        profile_name: str = "default",
        dry_run: bool = False,
        outcome: Literal["ok", "skipped_locked", "idle"] = "ok",
        result: Any = None,
        telemetry_schema_version: str = "hermes.observer.v1",
    ) -> None:
        """Tell the observers a dispatcher tick ended."""
        return self._fire("on_kanban_dispatch_tick", locals())

    aon_kanban_dispatch_tick = _async(on_kanban_dispatch_tick)

    # -- end of generated code --


class _Deferred(Hooks):
    """A view of a :class:`Hooks` (sharing its state) whose hook calls are handed back.

    Running a sync method on it gives the method's :class:`_Pending` call, or its neutral
    answer when no plugin implements the hook; the coroutine methods await the call.
    """

    def __init__(self, hooks: Hooks) -> None:  # no super().__init__: the state is shared
        self.__dict__ = hooks.__dict__

    def _dispatch(self, name: str, kwargs: dict[str, Any], rule: Rule | None, caller: Any) -> Any:
        return _Pending(name, kwargs, rule)

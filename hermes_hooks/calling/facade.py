"""``Hooks(pm)``: one typed method per hook, applying the hook's combine rule, sync and async.

The per-hook methods are generated (:mod:`hermes_hooks.calling.facadegen`); each hands its
``locals()`` to ``Hooks._run``, and what a hook answers is data (:data:`RULES`, the hook's
contract). How it works: docs/explanation/facade-and-gate.md.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, Final, Literal, NamedTuple, ParamSpec, TypeVar

from hermes_hooks.calling import aio, handoff
from hermes_hooks.calling.gate import GateWatch
from hermes_hooks.calling.pluggy_private import ContractHookCaller, live_hookimpls
from hermes_hooks.calling.tracebacks import hide_in_pytest
from hermes_hooks.spec import decisions as rules, hookspecs
from hermes_hooks.spec.contract import get_contract
from hermes_hooks.spec.decisions import (
    GATEWAY_ALLOW,
    UNATTRIBUTED,
    ErrorClassification,
    GatewayDecision,
    ToolDecision,
    VerifyDecision,
)
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION as V1

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


def _attribute(raw: object, records: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """Pair each value of pluggy's result list (or its first result) with its plugin's record."""
    values = raw if isinstance(raw, list) else [] if raw is None else [raw]
    if len(values) == len(records) and all(map(_is_record, values, records)):
        return records
    pending = list(records)
    attributed: list[tuple[str, object]] = []
    for value in values:
        found = next((i for i, (_, recorded) in enumerate(pending) if recorded is value), None)
        attributed.append((UNATTRIBUTED, value) if found is None else pending.pop(found))
    return attributed


def _is_record(value: object, record: tuple[str, object]) -> bool:
    return value is record[1]


def call_attributed(
    pm: GuardedManager, name: str, kwargs: Mapping[str, object]
) -> list[tuple[str, object]]:
    """Call ``pm.hook.<name>(**kwargs)``; pair each result with the plugin that returned it
    (:data:`~hermes_hooks.spec.decisions.UNATTRIBUTED` for a value a wrapper added)."""
    records: list[tuple[str, object]] = []
    previous = handoff.set_sink(handoff.Sink(name, records))
    try:
        raw = getattr(pm.hook, name)(**kwargs)
    finally:
        handoff.set_sink(previous)
    return _attribute(raw, records)


async def acall_hook(pm: GuardedManager, name: str, kwargs: Mapping[str, object]) -> Any:
    """Await what ``pm.hook.<name>(**kwargs)`` returns, ``async def`` implementations awaited
    (arguments left out take the contract's defaults, as in the sync call)."""
    caller = getattr(pm.hook, name)
    if isinstance(caller, ContractHookCaller):
        kwargs = caller.arguments(kwargs)
    return await aio.finish(aio.start(caller, kwargs))


class Rule(NamedTuple):
    """What the method of a hook that is not an observer answers.

    :param returns: the method's return annotation.
    :param neutral: the answer when no plugin implements the hook: an expression of the
        method's arguments, written into the method (no call then).
    :param finish: the answer from pluggy's result (a gated hook's: its
        :class:`~hermes_hooks.calling.gate.GateWatch`) and the call's arguments.
    """

    returns: str
    neutral: str
    finish: Callable[[Any, Mapping[str, Any]], Any]


def _first_str(argument: str, *, nonempty: bool = False) -> Rule:
    """The rule of a transform hook: the first ``str`` a plugin returns, else ``argument``."""

    def finish(new: object, kwargs: Mapping[str, Any]) -> Any:
        fits = isinstance(new, str) and (bool(new) or not nonempty)
        return new if fits else kwargs[argument]

    return Rule("str", argument, finish)


def _decide_tool_call(gate: GateWatch, kwargs: Mapping[str, Any]) -> ToolDecision:
    """Combine what each implementation itself returned, over the snapshot of ``args``."""
    args = gate.original("args")
    if not gate.records and not gate.tampering:  # nobody had anything to say
        return ToolDecision.allow(args, owned=True)
    return rules.combine_tool_decisions(args, gate.records, tuple(gate.tampering), owned=True)


def _on_raw(combine: Callable[[Any], Any]) -> Callable[[Any, Mapping[str, Any]], Any]:
    return lambda raw, kwargs: combine(raw)


RULES: Final[Mapping[str, Rule]] = {
    "pre_tool_call": Rule("ToolDecision", "ToolDecision.allow(args)", _decide_tool_call),
    "transform_tool_result": _first_str("result"),
    "transform_terminal_output": _first_str("output"),
    "transform_llm_output": _first_str("response_text", nonempty=True),
    "pre_llm_call": Rule(
        "str | None",
        "None",
        lambda raw, kw: rules.join_context(raw if isinstance(raw, list) else []),
    ),
    "pre_gateway_dispatch": Rule(
        "GatewayDecision", "GATEWAY_ALLOW", _on_raw(rules.gateway_decision)
    ),
    "pre_verify": Rule("VerifyDecision | None", "None", _on_raw(rules.verify_decision)),
    "transform_api_error_classification": Rule(
        "ErrorClassification | None", "None", _on_raw(rules.error_classification)
    ),
    "pre_transcription": Rule("dict[str, str]", "{}", _on_raw(rules.transcription_overrides)),
}
"""Every hook that is not an observer: its answer's type, its neutral answer, its combine rule."""

_Names = tuple[str, ...]


def _plan(name: str) -> tuple[Rule | None, tuple[tuple[str, Any], ...], _Names]:
    """Hook ``name``'s rule, its arguments whose default is a fresh list or dict, its protects."""
    contract = get_contract(getattr(hookspecs, name))
    fresh = tuple((k, v) for k, v in contract.defaults.items() if isinstance(v, list | dict))
    return RULES.get(name), fresh, contract.protects


_PLANS: Final = {name: _plan(name) for name in hookspecs.HOOK_NAMES}


class _Pending(tuple[str, dict[str, Any], "Rule | None", _Names]):
    """A hook call a coroutine method is to await: its hook, arguments, rule and protects."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _async(
    method: Callable[Concatenate[Hooks, _P], _R],
) -> Callable[Concatenate[Hooks, _P], Coroutine[Any, Any, _R]]:
    """Make the coroutine twin of a method: run it on the deferred view, await the call it gives.

    One coroutine from the caller to the worker: a thousand suspended turns keep little alive.
    """

    @functools.wraps(method)
    async def amethod(self: Hooks, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        answer: Any = method(self._deferred, *args, **kwargs)
        if not isinstance(answer, _Pending):
            return answer  # type: ignore[no-any-return]
        name, kw, rule, protects = answer
        del answer, args, kwargs  # not kept alive while the call is awaited
        watch = GateWatch(name, kw, protects) if protects else None
        concurrent = self.concurrent_observers and name.startswith(CONCURRENT_PREFIXES)
        try:
            call = aio.start(getattr(self.pm.hook, name), kw, concurrent=concurrent, watch=watch)
            # aio.finish(call), written out: a coroutine frame less per suspended call, which
            # measured 1.02-1.06x against 1.08-1.12x for 1,000 concurrent bounded turns.
            if type(call) is handoff.Batch:
                try:
                    await call.future  # type: ignore[misc]
                except BaseException:
                    handoff.give_up(call)  # cancelled: the worker may still be busy
                    raise
                raw = aio.collected(call)
            else:
                raw = await call  # type: ignore[misc]
        finally:
            if watch is not None:
                self._settle(watch)
        answer = None if rule is None else rule.finish(raw if watch is None else watch, kw)
        return answer  # type: ignore[no-any-return]

    amethod.__name__ = "a" + method.__name__
    amethod.__qualname__ = method.__qualname__.rsplit(".", 1)[0] + "." + amethod.__name__
    return amethod


class Hooks:
    """The typed facade over a plugin manager's hooks.

    ``hooks.X(...)`` calls hook ``X`` (docs/reference/hooks.md) and returns its answer;
    ``await hooks.aX(...)`` is the same call with ``async def`` implementations awaited.

    :param pm: the manager whose hooks are called.
    :param listener: called with each hook's name before it fires (for event logs and tests).
    :param concurrent_observers: in the coroutine methods, run the implementations of the
        observer hooks ``post_*``, ``on_*``, ``subagent_*`` and ``kanban_*`` concurrently.
    """

    _defers = False  # True on the deferred view

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
        self._deferred: Hooks = _Deferred(self)

    def _implemented(self, name: str) -> bool:
        """Tell the listener that hook ``name`` fires; return whether a plugin implements it."""
        if self.listener is not None:
            self.listener(name)
        return bool(live_hookimpls(getattr(self.pm.hook, name)))  # pluggy's list, not a copy

    def _fire(self, name: str, kwargs: dict[str, Any], /) -> None:
        """Fire observer hook ``name`` with a method's ``locals()``, when a plugin implements it."""
        if self._implemented(name):
            return self._run(name, kwargs)  # type: ignore[no-any-return]  # a deferred call
        return None

    def _run(self, name: str, kwargs: dict[str, Any], /) -> Any:
        """Call hook ``name`` with a method's ``locals()``; return its answer (observers: None).

        The deferred view hands the call back instead (a ``_Pending``, for the coroutine twin).
        """
        del kwargs["self"]
        rule, fresh, protects = _PLANS[name]
        for argument, empty in fresh:
            if kwargs[argument] is None:
                kwargs[argument] = empty.copy()
        if self._defers:
            return _Pending((name, kwargs, rule, protects))
        caller = getattr(self.pm.hook, name)
        if not protects:
            raw = caller(**kwargs)
        else:  # gated: the watch is the call's sink, told after each implementation
            raw = watch = GateWatch(name, kwargs, protects)
            # Only an implementation abandoned at the bound can change the arguments after the
            # call: with the bound off before and after it, there is no late check to make.
            bound = self.pm.callback_bound
            bounded = bound.seconds > 0
            previous = handoff.set_sink(watch)
            try:
                caller(**kwargs)
            finally:
                handoff.set_sink(previous)
                self._settle(watch, late=bounded or bound.seconds > 0)
        return None if rule is None else rule.finish(raw, kwargs)

    def _settle(self, watch: GateWatch, *, late: bool = True) -> None:
        """End a gated call: a ``late`` change undone, each thing undone reported on its plugin."""
        watch.finish(late=late)
        for tampering in watch.tampering:
            message = tampering.describe()
            logger.warning("hook %r: %s", watch.hook, message)
            self.pm.count_failure(tampering.plugin, watch.hook, message)

    # -- generated by hermes_hooks.calling.facadegen: do not edit --
    # fmt: off

    def pre_tool_call(self, *, tool_name: str, args: Mapping[str, Any], task_id: str = "",
            session_id: str = "", tool_call_id: str = "", turn_id: str = "",
            api_request_id: str = "", middleware_trace: list[dict[str, Any]] | None = None,
            telemetry_schema_version: str = V1) -> ToolDecision:
        if not self._implemented("pre_tool_call"):
            return ToolDecision.allow(args)
        answer: ToolDecision = self._run("pre_tool_call", locals())
        return answer
    apre_tool_call = _async(pre_tool_call)

    def post_tool_call(self, *, tool_name: str, args: Mapping[str, Any], result: str,
            task_id: str = "", session_id: str = "", tool_call_id: str = "", turn_id: str = "",
            api_request_id: str = "", duration_ms: int = 0,
            status: Literal["ok", "error", "blocked"] = "ok", error_type: str | None = None,
            error_message: str | None = None, middleware_trace: list[dict[str, Any]] | None = None,
            telemetry_schema_version: str = V1) -> None:
        return self._fire("post_tool_call", locals())
    apost_tool_call = _async(post_tool_call)

    def transform_tool_result(self, *, tool_name: str, args: Mapping[str, Any], result: str,
            task_id: str = "", session_id: str = "", tool_call_id: str = "", turn_id: str = "",
            api_request_id: str = "", duration_ms: int = 0, status: Literal["ok", "error"] = "ok",
            error_type: str | None = None, error_message: str | None = None,
            telemetry_schema_version: str = V1) -> str:
        if not self._implemented("transform_tool_result"):
            return result
        answer: str = self._run("transform_tool_result", locals())
        return answer
    atransform_tool_result = _async(transform_tool_result)

    def transform_terminal_output(self, *, command: str, output: str, returncode: int | None,
            task_id: str = "", env_type: str = "", telemetry_schema_version: str = V1) -> str:
        if not self._implemented("transform_terminal_output"):
            return output
        answer: str = self._run("transform_terminal_output", locals())
        return answer
    atransform_terminal_output = _async(transform_terminal_output)

    def transform_llm_output(self, *, response_text: str, session_id: str = "", model: str = "",
            platform: str = "", turn_id: str = "", telemetry_schema_version: str = V1) -> str:
        if not self._implemented("transform_llm_output"):
            return response_text
        answer: str = self._run("transform_llm_output", locals())
        return answer
    atransform_llm_output = _async(transform_llm_output)

    def pre_llm_call(self, *, user_message: str | list[dict[str, Any]],
            conversation_history: list[dict[str, Any]], session_id: str = "", task_id: str = "",
            turn_id: str = "", is_first_turn: bool = False, model: str = "", platform: str = "",
            parent_session_id: str = "", sender_id: str = "",
            telemetry_schema_version: str = V1) -> str | None:
        if not self._implemented("pre_llm_call"):
            return None
        answer: str | None = self._run("pre_llm_call", locals())
        return answer
    apre_llm_call = _async(pre_llm_call)

    def post_llm_call(self, *, user_message: str | list[dict[str, Any]], assistant_response: str,
            conversation_history: list[dict[str, Any]], session_id: str = "", task_id: str = "",
            turn_id: str = "", model: str = "", platform: str = "",
            telemetry_schema_version: str = V1) -> None:
        return self._fire("post_llm_call", locals())
    apost_llm_call = _async(post_llm_call)

    def pre_api_request(self, *, request_messages: list[dict[str, Any]], task_id: str = "",
            turn_id: str = "", api_request_id: str = "", session_id: str = "",
            user_message: str | list[dict[str, Any]] = "",
            conversation_history: list[dict[str, Any]] | None = None, platform: str = "",
            model: str = "", provider: str = "", base_url: str = "",
            api_mode: str = "chat_completions", api_call_count: int = 1, retry_count: int = 0,
            message_count: int = 0, tool_count: int = 0, approx_input_tokens: int = 0,
            request_char_count: int = 0, max_tokens: int | None = None, started_at: float = 0.0,
            middleware_trace: list[dict[str, Any]] | None = None,
            request: dict[str, Any] | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("pre_api_request", locals())
    apre_api_request = _async(pre_api_request)

    def post_api_request(self, *, task_id: str = "", turn_id: str = "", api_request_id: str = "",
            session_id: str = "", platform: str = "", model: str = "", provider: str = "",
            base_url: str = "", api_mode: str = "chat_completions", api_call_count: int = 1,
            api_duration: float = 0.0, started_at: float = 0.0, ended_at: float = 0.0,
            first_chunk_at: float | None = None, first_delta_at: float | None = None,
            finish_reason: str | None = None, message_count: int = 0,
            response_model: str | None = None, response: dict[str, Any] | None = None,
            usage: dict[str, Any] | None = None, assistant_message: Any = None,
            assistant_content_chars: int = 0, assistant_tool_call_count: int = 0,
            telemetry_schema_version: str = V1) -> None:
        return self._fire("post_api_request", locals())
    apost_api_request = _async(post_api_request)

    def api_request_error(self, *, error: dict[str, str], task_id: str = "", turn_id: str = "",
            api_request_id: str = "", session_id: str = "", platform: str = "", model: str = "",
            provider: str = "", base_url: str = "", api_mode: str = "chat_completions",
            api_call_count: int = 1, api_duration: float = 0.0, started_at: float = 0.0,
            ended_at: float = 0.0, first_chunk_at: float | None = None,
            first_delta_at: float | None = None, status_code: int | None = None,
            retry_count: int | None = None, max_retries: int | None = None,
            retryable: bool | None = None, reason: str | None = None,
            request: dict[str, Any] | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("api_request_error", locals())
    aapi_request_error = _async(api_request_error)

    def on_session_start(self, *, session_id: str, model: str = "", platform: str = "",
            telemetry_schema_version: str = V1) -> None:
        return self._fire("on_session_start", locals())
    aon_session_start = _async(on_session_start)

    def on_session_end(self, *, session_id: str, task_id: str = "", turn_id: str = "",
            completed: bool = False, failed: bool = False, interrupted: bool = False,
            turn_exit_reason: str = "", model: str = "", platform: str = "",
            reason: str | None = None, api_request_id: str | None = None,
            telemetry_schema_version: str = V1) -> None:
        return self._fire("on_session_end", locals())
    aon_session_end = _async(on_session_end)

    def on_session_finalize(self, *, session_id: str | None, platform: str = "",
            reason: str | None = None, old_session_id: str | None = None,
            new_session_id: str | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("on_session_finalize", locals())
    aon_session_finalize = _async(on_session_finalize)

    def on_session_reset(self, *, session_id: str | None, platform: str = "",
            reason: str | None = None, old_session_id: str | None = None,
            new_session_id: str | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("on_session_reset", locals())
    aon_session_reset = _async(on_session_reset)

    def subagent_start(self, *, parent_session_id: str | None, child_session_id: str | None,
            child_subagent_id: str, child_goal: str, parent_turn_id: str = "",
            parent_subagent_id: str | None = None, child_role: str = "leaf",
            telemetry_schema_version: str = V1) -> None:
        return self._fire("subagent_start", locals())
    asubagent_start = _async(subagent_start)

    def subagent_stop(self, *, parent_session_id: str | None, child_session_id: str | None,
            child_status: str, parent_turn_id: str = "", child_role: str | None = None,
            child_summary: str | None = None, tool_call_history: list[dict[str, Any]] | None = None,
            duration_ms: int = 0, telemetry_schema_version: str = V1) -> None:
        return self._fire("subagent_stop", locals())
    asubagent_stop = _async(subagent_stop)

    def pre_gateway_dispatch(self, *, event: Any, gateway: Any = None, session_store: Any = None,
            telemetry_schema_version: str = V1) -> GatewayDecision:
        if not self._implemented("pre_gateway_dispatch"):
            return GATEWAY_ALLOW
        answer: GatewayDecision = self._run("pre_gateway_dispatch", locals())
        return answer
    apre_gateway_dispatch = _async(pre_gateway_dispatch)

    def gateway_platform_event(self, *, platform: str = "", event_type: str = "",
            payload: dict[str, Any] | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("gateway_platform_event", locals())
    agateway_platform_event = _async(gateway_platform_event)

    def pre_verify(self, *, final_response: str, changed_paths: list[str], session_id: str = "",
            platform: str = "", model: str = "", coding: bool = True, attempt: int = 0,
            telemetry_schema_version: str = V1) -> VerifyDecision | None:
        if not self._implemented("pre_verify"):
            return None
        answer: VerifyDecision | None = self._run("pre_verify", locals())
        return answer
    apre_verify = _async(pre_verify)

    def pre_approval_request(self, *, command: str, description: str = "", pattern_key: str = "",
            pattern_keys: list[str] | None = None, session_key: str = "", surface: str = "cli",
            turn_id: str = "", tool_call_id: str = "", telemetry_schema_version: str = V1) -> None:
        return self._fire("pre_approval_request", locals())
    apre_approval_request = _async(pre_approval_request)

    def post_approval_response(self, *, command: str, choice: str, description: str = "",
            pattern_key: str = "", pattern_keys: list[str] | None = None, session_key: str = "",
            surface: str = "cli", turn_id: str = "", tool_call_id: str = "",
            decided_by: str | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("post_approval_response", locals())
    apost_approval_response = _async(post_approval_response)

    def kanban_task_claimed(self, *, task_id: str, profile_name: str = "default",
            board: str | None = None, assignee: str | None = None, run_id: int | None = None,
            telemetry_schema_version: str = V1) -> None:
        return self._fire("kanban_task_claimed", locals())
    akanban_task_claimed = _async(kanban_task_claimed)

    def kanban_task_completed(self, *, task_id: str, profile_name: str = "default",
            board: str | None = None, assignee: str | None = None, run_id: int | None = None,
            summary: str | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("kanban_task_completed", locals())
    akanban_task_completed = _async(kanban_task_completed)

    def kanban_task_blocked(self, *, task_id: str, profile_name: str = "default",
            board: str | None = None, assignee: str | None = None, run_id: int | None = None,
            reason: str | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("kanban_task_blocked", locals())
    akanban_task_blocked = _async(kanban_task_blocked)

    def on_stream_start(self, *, turn_id: str = "", iteration: int = 0, session_id: str = "",
            model: str = "", provider: str = "", surface: str = "cli",
            telemetry_schema_version: str = V1) -> None:
        return self._fire("on_stream_start", locals())
    aon_stream_start = _async(on_stream_start)

    def on_stream_delta(self, *, delta: str, kind: Literal["text", "reasoning"], turn_id: str = "",
            iteration: int = 0, session_id: str = "", model: str = "", provider: str = "",
            surface: str = "cli", telemetry_schema_version: str = V1) -> None:
        return self._fire("on_stream_delta", locals())
    aon_stream_delta = _async(on_stream_delta)

    def on_stream_end(self, *, final_text: str, finished: bool, error: str | None = None,
            turn_id: str = "", iteration: int = 0, session_id: str = "", model: str = "",
            provider: str = "", surface: str = "cli", telemetry_schema_version: str = V1) -> None:
        return self._fire("on_stream_end", locals())
    aon_stream_end = _async(on_stream_end)

    def on_interim_message(self, *, text: str, already_streamed: bool = False, turn_id: str = "",
            iteration: int = 0, session_id: str = "", model: str = "", provider: str = "",
            surface: str = "cli", telemetry_schema_version: str = V1) -> None:
        return self._fire("on_interim_message", locals())
    aon_interim_message = _async(on_interim_message)

    def transform_api_error_classification(self, *, error: Any, provider: str = "", model: str = "",
            status_code: int | None = None, error_type: str = "", error_code: str | None = None,
            error_message: str = "", error_body: Any = None, approx_tokens: int = 0,
            context_length: int | None = None, num_messages: int = 0,
            telemetry_schema_version: str = V1) -> ErrorClassification | None:
        if not self._implemented("transform_api_error_classification"):
            return None
        answer: ErrorClassification | None = self._run("transform_api_error_classification",
            locals())
        return answer
    atransform_api_error_classification = _async(transform_api_error_classification)

    def on_skill_lifecycle(self, *, action: str, skill_name: str, provenance: str = "",
            task_id: str = "", session_id: str = "", use_count: int = 0, reused: bool = False,
            reuse_after_patch: bool = False, telemetry_schema_version: str = V1) -> None:
        return self._fire("on_skill_lifecycle", locals())
    aon_skill_lifecycle = _async(on_skill_lifecycle)

    def agent_loop_stopped(self, *, session_key: str, platform: str = "", reason: str = "",
            invalidation_reason: str | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("agent_loop_stopped", locals())
    aagent_loop_stopped = _async(agent_loop_stopped)

    def pre_command(self, *, command: str, surface: Literal["cli", "gateway"] = "cli",
            alias_used: str | None = None, args_raw: str = "", session_key: str = "",
            platform: str = "", telemetry_schema_version: str = V1) -> None:
        return self._fire("pre_command", locals())
    apre_command = _async(pre_command)

    def pre_transcription(self, *, file_path: str, provider: str = "", model: str | None = None,
            language: str | None = None, prompt: str | None = None, source: str = "",
            telemetry_schema_version: str = V1) -> dict[str, str]:
        if not self._implemented("pre_transcription"):
            return {}
        answer: dict[str, str] = self._run("pre_transcription", locals())
        return answer
    apre_transcription = _async(pre_transcription)

    def on_room_member_activity(self, *, room_id: str, kind: str, payload: dict[str, Any],
            thread_id: str = "", member_id: str = "", turn_id: str = "", task_id: str = "",
            execution_generation: int = 0, seq: int = 0,
            telemetry_schema_version: str = V1) -> None:
        return self._fire("on_room_member_activity", locals())
    aon_room_member_activity = _async(on_room_member_activity)

    def on_kanban_worker_spawned(self, *, task_id: str, profile_name: str = "default",
            board: str | None = None, assignee: str | None = None, run_id: int | None = None,
            worker_pid: int | None = None, workspace_path: str | None = None,
            telemetry_schema_version: str = V1) -> None:
        return self._fire("on_kanban_worker_spawned", locals())
    aon_kanban_worker_spawned = _async(on_kanban_worker_spawned)

    def on_kanban_worker_exited(self, *, task_id: str, profile_name: str = "default",
            board: str | None = None, assignee: str | None = None, run_id: int | None = None,
            worker_pid: int | None = None, exit_kind: str = "unknown", exit_code: int | None = None,
            outcome: str | None = None, retry_status: str | None = None,
            telemetry_schema_version: str = V1) -> None:
        return self._fire("on_kanban_worker_exited", locals())
    aon_kanban_worker_exited = _async(on_kanban_worker_exited)

    def on_kanban_worker_stale_claim(self, *, task_id: str, profile_name: str = "default",
            board: str | None = None, assignee: str | None = None, run_id: int | None = None,
            worker_pid: int | None = None, heartbeat_stale: bool = True,
            retry_status: str | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("on_kanban_worker_stale_claim", locals())
    aon_kanban_worker_stale_claim = _async(on_kanban_worker_stale_claim)

    def on_kanban_task_updated(self, *, task_id: str, profile_name: str = "default",
            board: str | None = None, assignee: str | None = None, run_id: int | None = None,
            changed_fields: list[str] | None = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("on_kanban_task_updated", locals())
    aon_kanban_task_updated = _async(on_kanban_task_updated)

    def on_kanban_dispatch_tick(self, *, board: str | None = None, profile_name: str = "default",
            dry_run: bool = False, outcome: Literal["ok", "skipped_locked", "idle"] = "ok",
            result: Any = None, telemetry_schema_version: str = V1) -> None:
        return self._fire("on_kanban_dispatch_tick", locals())
    aon_kanban_dispatch_tick = _async(on_kanban_dispatch_tick)
    # fmt: on
    # -- end of generated code --


class _Deferred(Hooks):
    """A view of a :class:`Hooks` (sharing its state) whose hook calls are handed back, not run."""

    _defers = True

    def __init__(self, hooks: Hooks) -> None:  # no super().__init__: the state is shared
        self.__dict__ = hooks.__dict__

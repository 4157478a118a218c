"""``Hooks(pm)``: one typed method per hook, applying the hook's combine rule.

Every method takes the hook's arguments as keywords, fills in what the host leaves out (``""``
for ids, ``None`` for optional values, empty lists and dicts), calls pluggy exactly as
``pm.hook.<name>(...)`` would (same implementations, order, ``firstresult`` and wrappers), and
turns what comes back into one typed answer with the rules of :mod:`hermes_hooks.host.combine`.
A hook with no implementations is not called at all.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

import pluggy

from hermes_hooks.host.combine import (
    UNATTRIBUTED,
    GatewayDecision,
    ToolDecision,
    VerifyDecision,
    combine_tool_decisions,
    gateway_decision,
    join_context,
    verify_decision,
)

if TYPE_CHECKING:
    from hermes_hooks.manager import PluginManager

__all__ = ["HookListener", "Hooks", "ShadowCache", "call_attributed"]

HookListener = Callable[[str], None]
"""Told the name of every hook the facade fires, whether or not a plugin implements it."""

_ALLOW: Final = GatewayDecision()


class _Sink(threading.local):
    """Where the recording copies of the implementations put results, per thread and call."""

    records: list[tuple[str, object]] | None = None


_sink = _Sink()

ShadowCache = dict[str, tuple[tuple[tuple[object, object], ...], list[pluggy.HookImpl]]]
"""Recording copies of a hook's implementations, kept while its implementations are the same."""


def _recording(function: Callable[..., object], owner: str) -> Callable[..., object]:
    def recording(*args: object, **kwargs: object) -> object:
        result = function(*args, **kwargs)
        records = _sink.records
        if result is not None and records is not None:
            records.append((owner, result))
        return result

    return recording


def _shadows(impls: list[pluggy.HookImpl]) -> list[pluggy.HookImpl]:
    shadows = []
    for impl in impls:
        if impl.wrapper or impl.hookwrapper:
            shadows.append(impl)
            continue
        shadow = copy.copy(impl)
        # HookImpl.function is Final for type checkers only; argnames stay the original's.
        setattr(shadow, "function", _recording(impl.function, impl.plugin_name))  # noqa: B010
        shadows.append(shadow)
    return shadows


def call_attributed(
    pm: pluggy.PluginManager,
    name: str,
    kwargs: Mapping[str, object],
    cache: ShadowCache | None = None,
) -> list[tuple[str, object]]:
    """Call a collecting hook as pluggy does and say which plugin returned each result.

    The implementations run through pluggy's own executor (so ordering, wrappers, tracing and
    monitoring are pluggy's); each non-wrapper implementation runs through a recording copy of
    its ``HookImpl``. The returned list is pluggy's result list, each value paired with the
    plugin that returned it, or :data:`UNATTRIBUTED` when a wrapper put it there.

    :param cache: keeps the recording copies between calls while the implementations stay
        the same (``Hooks`` passes one).
    """
    caller: pluggy.HookCaller = getattr(pm.hook, name)
    impls = caller.get_hookimpls()
    key = tuple((impl, impl.function) for impl in impls)
    cached = cache.get(name) if cache is not None else None
    if cached is not None and cached[0] == key:
        shadows = cached[1]
    else:
        shadows = _shadows(impls)
        if cache is not None:
            cache[name] = (key, shadows)
    previous = _sink.records
    records: list[tuple[str, object]] = []
    _sink.records = records
    try:
        # PluginManager._hookexec is what every HookCaller calls (pluggy 0.x to 1.x).
        raw = pm._hookexec(name, shadows, kwargs, False)
    finally:
        _sink.records = previous
    values = raw if isinstance(raw, list) else []
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


class Hooks:
    """The typed facade over a plugin manager's hooks.

    :param pm: the manager whose hooks are called.
    :param listener: called with each hook's name before it fires (for event logs and tests).
    """

    def __init__(self, pm: PluginManager, *, listener: HookListener | None = None) -> None:
        self.pm = pm
        self.listener = listener
        self._shadows: ShadowCache = {}

    def _caller(self, name: str) -> pluggy.HookCaller | None:
        if self.listener is not None:
            self.listener(name)
        caller: pluggy.HookCaller = getattr(self.pm.hook, name)
        return caller if caller.get_hookimpls() else None

    def _observe(self, name: str, **kwargs: Any) -> None:
        caller = self._caller(name)
        if caller is not None:
            caller(**kwargs)

    # -- tools ----------------------------------------------------------------------------------

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
    ) -> ToolDecision:
        """Ask the plugins about a tool call; block > approve > modify, whatever their order."""
        if self._caller("pre_tool_call") is None:
            return ToolDecision(args=dict(args))
        kwargs = {
            "tool_name": tool_name,
            "args": args,
            "task_id": task_id,
            "session_id": session_id,
            "tool_call_id": tool_call_id,
            "turn_id": turn_id,
            "api_request_id": api_request_id,
            "middleware_trace": middleware_trace if middleware_trace is not None else [],
        }
        results = call_attributed(self.pm, "pre_tool_call", kwargs, self._shadows)
        return combine_tool_decisions(args, results)

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
    ) -> None:
        """Tell the observers a tool call returned, failed or was blocked."""
        self._observe(
            "post_tool_call",
            tool_name=tool_name,
            args=args,
            result=result,
            task_id=task_id,
            session_id=session_id,
            tool_call_id=tool_call_id,
            turn_id=turn_id,
            api_request_id=api_request_id,
            duration_ms=duration_ms,
            status=status,
            error_type=error_type,
            error_message=error_message,
            middleware_trace=middleware_trace if middleware_trace is not None else [],
        )

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
    ) -> str:
        """Return the tool result the model sees: the first plugin's replacement, or ``result``."""
        caller = self._caller("transform_tool_result")
        if caller is None:
            return result
        new = caller(
            tool_name=tool_name,
            args=args,
            result=result,
            task_id=task_id,
            session_id=session_id,
            tool_call_id=tool_call_id,
            turn_id=turn_id,
            api_request_id=api_request_id,
            duration_ms=duration_ms,
            status=status,
            error_type=error_type,
            error_message=error_message,
        )
        return new if isinstance(new, str) else result

    def transform_terminal_output(
        self,
        *,
        command: str,
        output: str,
        returncode: int | None,
        task_id: str = "",
        env_type: str = "",
    ) -> str:
        """Return the terminal output the tool keeps: the first replacement, or ``output``."""
        caller = self._caller("transform_terminal_output")
        if caller is None:
            return output
        new = caller(
            command=command,
            output=output,
            returncode=returncode,
            task_id=task_id,
            env_type=env_type,
        )
        return new if isinstance(new, str) else output

    # -- the model turn ---------------------------------------------------------------------------

    def transform_llm_output(
        self,
        *,
        response_text: str,
        session_id: str = "",
        model: str = "",
        platform: str = "",
        turn_id: str = "",
    ) -> str:
        """Return the final response: the first non-empty replacement, or ``response_text``."""
        caller = self._caller("transform_llm_output")
        if caller is None:
            return response_text
        new = caller(
            response_text=response_text,
            session_id=session_id,
            model=model,
            platform=platform,
            turn_id=turn_id,
        )
        return new if isinstance(new, str) and new else response_text

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
    ) -> str | None:
        """Return the plugins' context for this turn, joined with blank lines, or ``None``."""
        caller = self._caller("pre_llm_call")
        if caller is None:
            return None
        results = caller(
            session_id=session_id,
            task_id=task_id,
            turn_id=turn_id,
            user_message=user_message,
            conversation_history=conversation_history,
            is_first_turn=is_first_turn,
            model=model,
            platform=platform,
            parent_session_id=parent_session_id,
            sender_id=sender_id,
        )
        return join_context(results if isinstance(results, list) else [])

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
    ) -> None:
        """Tell the observers a turn produced its final response."""
        self._observe(
            "post_llm_call",
            session_id=session_id,
            task_id=task_id,
            turn_id=turn_id,
            user_message=user_message,
            assistant_response=assistant_response,
            conversation_history=conversation_history,
            model=model,
            platform=platform,
        )

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
    ) -> None:
        """Tell the observers a model request is about to be sent."""
        self._observe(
            "pre_api_request",
            task_id=task_id,
            turn_id=turn_id,
            api_request_id=api_request_id,
            session_id=session_id,
            user_message=user_message,
            conversation_history=conversation_history if conversation_history is not None else [],
            platform=platform,
            model=model,
            provider=provider,
            base_url=base_url,
            api_mode=api_mode,
            api_call_count=api_call_count,
            retry_count=retry_count,
            request_messages=request_messages,
            message_count=message_count,
            tool_count=tool_count,
            approx_input_tokens=approx_input_tokens,
            request_char_count=request_char_count,
            max_tokens=max_tokens,
            started_at=started_at,
            middleware_trace=middleware_trace if middleware_trace is not None else [],
            request=request if request is not None else {},
        )

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
    ) -> None:
        """Tell the observers a model response arrived and was normalized."""
        self._observe(
            "post_api_request",
            task_id=task_id,
            turn_id=turn_id,
            api_request_id=api_request_id,
            session_id=session_id,
            platform=platform,
            model=model,
            provider=provider,
            base_url=base_url,
            api_mode=api_mode,
            api_call_count=api_call_count,
            api_duration=api_duration,
            started_at=started_at,
            ended_at=ended_at,
            first_chunk_at=first_chunk_at,
            first_delta_at=first_delta_at,
            finish_reason=finish_reason,
            message_count=message_count,
            response_model=response_model,
            response=response if response is not None else {},
            usage=usage,
            assistant_message=assistant_message,
            assistant_content_chars=assistant_content_chars,
            assistant_tool_call_count=assistant_tool_call_count,
        )

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
    ) -> None:
        """Tell the observers a model request failed."""
        self._observe(
            "api_request_error",
            task_id=task_id,
            turn_id=turn_id,
            api_request_id=api_request_id,
            session_id=session_id,
            platform=platform,
            model=model,
            provider=provider,
            base_url=base_url,
            api_mode=api_mode,
            api_call_count=api_call_count,
            api_duration=api_duration,
            started_at=started_at,
            ended_at=ended_at,
            first_chunk_at=first_chunk_at,
            first_delta_at=first_delta_at,
            status_code=status_code,
            retry_count=retry_count,
            max_retries=max_retries,
            retryable=retryable,
            reason=reason,
            error=error,
            request=request if request is not None else {},
        )

    # -- sessions ---------------------------------------------------------------------------------

    def on_session_start(self, *, session_id: str, model: str = "", platform: str = "") -> None:
        """Tell the observers a new session runs its first turn."""
        self._observe("on_session_start", session_id=session_id, model=model, platform=platform)

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
    ) -> None:
        """Tell the observers a turn ended, whatever its outcome."""
        self._observe(
            "on_session_end",
            session_id=session_id,
            task_id=task_id,
            turn_id=turn_id,
            completed=completed,
            failed=failed,
            interrupted=interrupted,
            turn_exit_reason=turn_exit_reason,
            model=model,
            platform=platform,
            reason=reason,
            api_request_id=api_request_id,
        )

    def on_session_finalize(
        self,
        *,
        session_id: str | None,
        platform: str = "",
        reason: str | None = None,
        old_session_id: str | None = None,
        new_session_id: str | None = None,
    ) -> None:
        """Tell the observers a session is torn down."""
        self._observe(
            "on_session_finalize",
            session_id=session_id,
            platform=platform,
            reason=reason,
            old_session_id=old_session_id,
            new_session_id=new_session_id,
        )

    def on_session_reset(
        self,
        *,
        session_id: str | None,
        platform: str = "",
        reason: str | None = None,
        old_session_id: str | None = None,
        new_session_id: str | None = None,
    ) -> None:
        """Tell the observers a replacement session exists."""
        self._observe(
            "on_session_reset",
            session_id=session_id,
            platform=platform,
            reason=reason,
            old_session_id=old_session_id,
            new_session_id=new_session_id,
        )

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
    ) -> None:
        """Tell the observers a child agent is about to run."""
        self._observe(
            "subagent_start",
            parent_session_id=parent_session_id,
            parent_turn_id=parent_turn_id,
            parent_subagent_id=parent_subagent_id,
            child_session_id=child_session_id,
            child_subagent_id=child_subagent_id,
            child_role=child_role,
            child_goal=child_goal,
        )

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
    ) -> None:
        """Tell the observers a child agent finished."""
        self._observe(
            "subagent_stop",
            parent_session_id=parent_session_id,
            parent_turn_id=parent_turn_id,
            child_session_id=child_session_id,
            child_role=child_role,
            child_summary=child_summary,
            child_status=child_status,
            tool_call_history=tool_call_history if tool_call_history is not None else [],
            duration_ms=duration_ms,
        )

    # -- the gateway and the verify gate ---------------------------------------------------------

    def pre_gateway_dispatch(
        self, *, event: Any, gateway: Any = None, session_store: Any = None
    ) -> GatewayDecision:
        """Return what happens to an inbound message: allow, skip (with reason) or rewrite."""
        caller = self._caller("pre_gateway_dispatch")
        if caller is None:
            return _ALLOW
        return gateway_decision(caller(event=event, gateway=gateway, session_store=session_store))

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
    ) -> VerifyDecision | None:
        """Return a decision that sends the agent back to work, or ``None`` to finish."""
        caller = self._caller("pre_verify")
        if caller is None:
            return None
        return verify_decision(
            caller(
                session_id=session_id,
                platform=platform,
                model=model,
                coding=coding,
                attempt=attempt,
                final_response=final_response,
                changed_paths=changed_paths,
            )
        )

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
    ) -> None:
        """Tell the observers a person is about to be asked to approve ``command``."""
        self._observe(
            "pre_approval_request",
            command=command,
            description=description,
            pattern_key=pattern_key,
            pattern_keys=pattern_keys if pattern_keys is not None else [],
            session_key=session_key,
            surface=surface,
            turn_id=turn_id,
            tool_call_id=tool_call_id,
        )

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
    ) -> None:
        """Tell the observers how an approval was answered."""
        self._observe(
            "post_approval_response",
            command=command,
            description=description,
            pattern_key=pattern_key,
            pattern_keys=pattern_keys if pattern_keys is not None else [],
            session_key=session_key,
            surface=surface,
            turn_id=turn_id,
            tool_call_id=tool_call_id,
            choice=choice,
            decided_by=decided_by,
        )

    # -- the kanban board -------------------------------------------------------------------------

    def kanban_task_claimed(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
    ) -> None:
        """Tell the observers a task was claimed."""
        self._observe(
            "kanban_task_claimed",
            task_id=task_id,
            profile_name=profile_name,
            board=board,
            assignee=assignee,
            run_id=run_id,
        )

    def kanban_task_completed(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        summary: str | None = None,
    ) -> None:
        """Tell the observers a task was completed."""
        self._observe(
            "kanban_task_completed",
            task_id=task_id,
            profile_name=profile_name,
            board=board,
            assignee=assignee,
            run_id=run_id,
            summary=summary,
        )

    def kanban_task_blocked(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        reason: str | None = None,
    ) -> None:
        """Tell the observers a task moved to blocked."""
        self._observe(
            "kanban_task_blocked",
            task_id=task_id,
            profile_name=profile_name,
            board=board,
            assignee=assignee,
            run_id=run_id,
            reason=reason,
        )

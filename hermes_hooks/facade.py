"""``Hooks(pm)``: one typed method per hook, applying the hook's combine rule, sync and async.

Every method takes the hook's arguments as keywords, fills in what the host leaves out (``""``
for ids, ``None`` for optional values, empty lists and dicts), calls pluggy exactly as
``pm.hook.<name>(...)`` would (same implementations, order, ``firstresult`` and wrappers), and
turns what comes back into one typed answer with the rules of :mod:`hermes_hooks.host.combine`.
A hook with no implementations is not called at all.

Each hook is written once, as a generator that yields the one hook call it needs and returns
the answer; ``_sync`` runs that call through pluggy, ``_async`` through
:func:`hermes_hooks._aio.amulticall`, so both methods share their arguments and combine rule.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable, Coroutine, Generator, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, Final, Literal, ParamSpec, TypeVar

import attrs
import pluggy

from hermes_hooks import _aio
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

__all__ = [
    "CONCURRENT_PREFIXES",
    "HookListener",
    "Hooks",
    "ShadowCache",
    "acall_hook",
    "call_attributed",
]

HookListener = Callable[[str], None]
"""Told the name of every hook the facade fires, whether or not a plugin implements it."""

CONCURRENT_PREFIXES: Final = ("post_", "on_", "subagent_", "kanban_")
"""Observer hooks whose implementations may run concurrently in the async path, when asked."""

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


def _attribute(raw: object, records: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """Pair each value of pluggy's result list with the plugin whose record it is."""
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
    return _attribute(raw, records)


async def acall_hook(
    pm: pluggy.PluginManager,
    name: str,
    kwargs: Mapping[str, object],
    *,
    attributed: bool = False,
    concurrent: bool = False,
) -> Any:
    """Await hook ``name`` and return what ``pm.hook.<name>(**kwargs)`` would return.

    ``async def`` implementations are awaited on the running loop; sync ones are called as pluggy
    calls them (within ``plugins.hook_callback_timeout`` where it applies, see
    :mod:`hermes_hooks.isolation`). Unlike ``pm.hook``, the call does not pass through pluggy's
    call monitors (``add_hookcall_monitoring``).

    :param attributed: return ``[(plugin, result), ...]`` as :func:`call_attributed` does.
    :param concurrent: run the plain implementations concurrently (observer hooks only).
    """
    caller: pluggy.HookCaller = getattr(pm.hook, name)
    spec = caller.spec
    firstresult = bool(spec.opts.get("firstresult")) if spec is not None else False
    records: list[tuple[str, object]] | None = [] if attributed else None
    # A copy, as pluggy takes one: an implementation may register plugins while it runs.
    raw = await _aio.amulticall(
        name,
        list(caller.get_hookimpls()),
        kwargs,
        firstresult,
        records=records,
        concurrent=concurrent and not firstresult,
    )
    return _attribute(raw, records) if records is not None else raw


@attrs.frozen
class _Call:
    """The one hook call a facade method needs: its name, its arguments, attributed or not."""

    name: str
    kwargs: Mapping[str, Any]
    attributed: bool = False


_P = ParamSpec("_P")
_R = TypeVar("_R")
_Body = Generator[_Call, Any, _R]


def _rename(method: Callable[..., Any], body: Callable[..., Any], name: str) -> None:
    method.__name__ = name
    method.__qualname__ = body.__qualname__.rsplit(".", 1)[0] + "." + name


def _sync(
    body: Callable[Concatenate[Hooks, _P], _Body[_R]],
) -> Callable[Concatenate[Hooks, _P], _R]:
    """Make the method that runs ``body``'s hook call through pluggy and returns its answer."""

    @functools.wraps(body)
    def method(self: Hooks, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        gen = body(self, *args, **kwargs)
        try:
            call = next(gen)
            while True:
                call = gen.send(self._run(call))
        except StopIteration as stop:
            answer: _R = stop.value
            return answer

    _rename(method, body, body.__name__.lstrip("_"))
    return method


def _async(
    body: Callable[Concatenate[Hooks, _P], _Body[_R]],
) -> Callable[Concatenate[Hooks, _P], Coroutine[Any, Any, _R]]:
    """Make the coroutine method that awaits ``body``'s hook call and returns its answer."""

    @functools.wraps(body)
    async def method(self: Hooks, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        gen = body(self, *args, **kwargs)
        try:
            call = next(gen)
            while True:
                call = gen.send(await self._arun(call))
        except StopIteration as stop:
            answer: _R = stop.value
            return answer

    _rename(method, body, "a" + body.__name__.lstrip("_"))
    return method


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
        pm: PluginManager,
        *,
        listener: HookListener | None = None,
        concurrent_observers: bool = False,
    ) -> None:
        self.pm = pm
        self.listener = listener
        self.concurrent_observers = concurrent_observers
        self._shadows: ShadowCache = {}

    def _implemented(self, name: str) -> bool:
        """Tell the listener that hook ``name`` fires; return whether a plugin implements it."""
        if self.listener is not None:
            self.listener(name)
        caller: pluggy.HookCaller = getattr(self.pm.hook, name)
        return bool(caller.get_hookimpls())

    def _call(self, name: str, **kwargs: Any) -> _Body[Any]:
        """Call hook ``name`` with ``kwargs`` (the driver runs it sync or async)."""
        return (yield _Call(name, kwargs))

    def _fire(self, name: str, **kwargs: Any) -> _Body[None]:
        """Call observer hook ``name`` when a plugin implements it."""
        if self._implemented(name):
            yield _Call(name, kwargs)

    def _run(self, call: _Call) -> Any:
        """Run one call the synchronous way: pluggy's own executor."""
        if call.attributed:
            return call_attributed(self.pm, call.name, call.kwargs, self._shadows)
        caller: pluggy.HookCaller = getattr(self.pm.hook, call.name)
        return caller(**call.kwargs)

    async def _arun(self, call: _Call) -> Any:
        """Run one call the asynchronous way: awaited implementations, pluggy's order."""
        concurrent = self.concurrent_observers and call.name.startswith(CONCURRENT_PREFIXES)
        return await acall_hook(
            self.pm, call.name, call.kwargs, attributed=call.attributed, concurrent=concurrent
        )

    # -- tools ----------------------------------------------------------------------------------

    def _pre_tool_call(
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
    ) -> _Body[ToolDecision]:
        """Ask the plugins about a tool call; block > approve > modify, whatever their order."""
        if not self._implemented("pre_tool_call"):
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
        results = yield _Call("pre_tool_call", kwargs, attributed=True)
        return combine_tool_decisions(args, results)

    pre_tool_call = _sync(_pre_tool_call)
    apre_tool_call = _async(_pre_tool_call)

    def _post_tool_call(
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
    ) -> _Body[None]:
        """Tell the observers a tool call returned, failed or was blocked."""
        yield from self._fire(
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

    post_tool_call = _sync(_post_tool_call)
    apost_tool_call = _async(_post_tool_call)

    def _transform_tool_result(
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
    ) -> _Body[str]:
        """Return the tool result the model sees: the first plugin's replacement, or ``result``."""
        if not self._implemented("transform_tool_result"):
            return result
        new = yield from self._call(
            "transform_tool_result",
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

    transform_tool_result = _sync(_transform_tool_result)
    atransform_tool_result = _async(_transform_tool_result)

    def _transform_terminal_output(
        self,
        *,
        command: str,
        output: str,
        returncode: int | None,
        task_id: str = "",
        env_type: str = "",
    ) -> _Body[str]:
        """Return the terminal output the tool keeps: the first replacement, or ``output``."""
        if not self._implemented("transform_terminal_output"):
            return output
        new = yield from self._call(
            "transform_terminal_output",
            command=command,
            output=output,
            returncode=returncode,
            task_id=task_id,
            env_type=env_type,
        )
        return new if isinstance(new, str) else output

    transform_terminal_output = _sync(_transform_terminal_output)
    atransform_terminal_output = _async(_transform_terminal_output)

    # -- the model turn ---------------------------------------------------------------------------

    def _transform_llm_output(
        self,
        *,
        response_text: str,
        session_id: str = "",
        model: str = "",
        platform: str = "",
        turn_id: str = "",
    ) -> _Body[str]:
        """Return the final response: the first non-empty replacement, or ``response_text``."""
        if not self._implemented("transform_llm_output"):
            return response_text
        new = yield from self._call(
            "transform_llm_output",
            response_text=response_text,
            session_id=session_id,
            model=model,
            platform=platform,
            turn_id=turn_id,
        )
        return new if isinstance(new, str) and new else response_text

    transform_llm_output = _sync(_transform_llm_output)
    atransform_llm_output = _async(_transform_llm_output)

    def _pre_llm_call(
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
    ) -> _Body[str | None]:
        """Return the plugins' context for this turn, joined with blank lines, or ``None``."""
        if not self._implemented("pre_llm_call"):
            return None
        results = yield from self._call(
            "pre_llm_call",
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

    pre_llm_call = _sync(_pre_llm_call)
    apre_llm_call = _async(_pre_llm_call)

    def _post_llm_call(
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
    ) -> _Body[None]:
        """Tell the observers a turn produced its final response."""
        yield from self._fire(
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

    post_llm_call = _sync(_post_llm_call)
    apost_llm_call = _async(_post_llm_call)

    def _pre_api_request(
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
    ) -> _Body[None]:
        """Tell the observers a model request is about to be sent."""
        yield from self._fire(
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

    pre_api_request = _sync(_pre_api_request)
    apre_api_request = _async(_pre_api_request)

    def _post_api_request(
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
    ) -> _Body[None]:
        """Tell the observers a model response arrived and was normalized."""
        yield from self._fire(
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

    post_api_request = _sync(_post_api_request)
    apost_api_request = _async(_post_api_request)

    def _api_request_error(
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
    ) -> _Body[None]:
        """Tell the observers a model request failed."""
        yield from self._fire(
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

    api_request_error = _sync(_api_request_error)
    aapi_request_error = _async(_api_request_error)

    # -- sessions ---------------------------------------------------------------------------------

    def _on_session_start(
        self, *, session_id: str, model: str = "", platform: str = ""
    ) -> _Body[None]:
        """Tell the observers a new session runs its first turn."""
        yield from self._fire(
            "on_session_start", session_id=session_id, model=model, platform=platform
        )

    on_session_start = _sync(_on_session_start)
    aon_session_start = _async(_on_session_start)

    def _on_session_end(
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
    ) -> _Body[None]:
        """Tell the observers a turn ended, whatever its outcome."""
        yield from self._fire(
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

    on_session_end = _sync(_on_session_end)
    aon_session_end = _async(_on_session_end)

    def _on_session_finalize(
        self,
        *,
        session_id: str | None,
        platform: str = "",
        reason: str | None = None,
        old_session_id: str | None = None,
        new_session_id: str | None = None,
    ) -> _Body[None]:
        """Tell the observers a session is torn down."""
        yield from self._fire(
            "on_session_finalize",
            session_id=session_id,
            platform=platform,
            reason=reason,
            old_session_id=old_session_id,
            new_session_id=new_session_id,
        )

    on_session_finalize = _sync(_on_session_finalize)
    aon_session_finalize = _async(_on_session_finalize)

    def _on_session_reset(
        self,
        *,
        session_id: str | None,
        platform: str = "",
        reason: str | None = None,
        old_session_id: str | None = None,
        new_session_id: str | None = None,
    ) -> _Body[None]:
        """Tell the observers a replacement session exists."""
        yield from self._fire(
            "on_session_reset",
            session_id=session_id,
            platform=platform,
            reason=reason,
            old_session_id=old_session_id,
            new_session_id=new_session_id,
        )

    on_session_reset = _sync(_on_session_reset)
    aon_session_reset = _async(_on_session_reset)

    # -- subagents --------------------------------------------------------------------------------

    def _subagent_start(
        self,
        *,
        parent_session_id: str | None,
        child_session_id: str | None,
        child_subagent_id: str,
        child_goal: str,
        parent_turn_id: str = "",
        parent_subagent_id: str | None = None,
        child_role: str = "leaf",
    ) -> _Body[None]:
        """Tell the observers a child agent is about to run."""
        yield from self._fire(
            "subagent_start",
            parent_session_id=parent_session_id,
            parent_turn_id=parent_turn_id,
            parent_subagent_id=parent_subagent_id,
            child_session_id=child_session_id,
            child_subagent_id=child_subagent_id,
            child_role=child_role,
            child_goal=child_goal,
        )

    subagent_start = _sync(_subagent_start)
    asubagent_start = _async(_subagent_start)

    def _subagent_stop(
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
    ) -> _Body[None]:
        """Tell the observers a child agent finished."""
        yield from self._fire(
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

    subagent_stop = _sync(_subagent_stop)
    asubagent_stop = _async(_subagent_stop)

    # -- the gateway and the verify gate ---------------------------------------------------------

    def _pre_gateway_dispatch(
        self, *, event: Any, gateway: Any = None, session_store: Any = None
    ) -> _Body[GatewayDecision]:
        """Return what happens to an inbound message: allow, skip (with reason) or rewrite."""
        if not self._implemented("pre_gateway_dispatch"):
            return _ALLOW
        results = yield from self._call(
            "pre_gateway_dispatch", event=event, gateway=gateway, session_store=session_store
        )
        return gateway_decision(results)

    pre_gateway_dispatch = _sync(_pre_gateway_dispatch)
    apre_gateway_dispatch = _async(_pre_gateway_dispatch)

    def _pre_verify(
        self,
        *,
        final_response: str,
        changed_paths: list[str],
        session_id: str = "",
        platform: str = "",
        model: str = "",
        coding: bool = True,
        attempt: int = 0,
    ) -> _Body[VerifyDecision | None]:
        """Return a decision that sends the agent back to work, or ``None`` to finish."""
        if not self._implemented("pre_verify"):
            return None
        result = yield from self._call(
            "pre_verify",
            session_id=session_id,
            platform=platform,
            model=model,
            coding=coding,
            attempt=attempt,
            final_response=final_response,
            changed_paths=changed_paths,
        )
        return verify_decision(result)

    pre_verify = _sync(_pre_verify)
    apre_verify = _async(_pre_verify)

    # -- approvals --------------------------------------------------------------------------------

    def _pre_approval_request(
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
    ) -> _Body[None]:
        """Tell the observers a person is about to be asked to approve ``command``."""
        yield from self._fire(
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

    pre_approval_request = _sync(_pre_approval_request)
    apre_approval_request = _async(_pre_approval_request)

    def _post_approval_response(
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
    ) -> _Body[None]:
        """Tell the observers how an approval was answered."""
        yield from self._fire(
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

    post_approval_response = _sync(_post_approval_response)
    apost_approval_response = _async(_post_approval_response)

    # -- the kanban board -------------------------------------------------------------------------

    def _kanban_task_claimed(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
    ) -> _Body[None]:
        """Tell the observers a task was claimed."""
        yield from self._fire(
            "kanban_task_claimed",
            task_id=task_id,
            profile_name=profile_name,
            board=board,
            assignee=assignee,
            run_id=run_id,
        )

    kanban_task_claimed = _sync(_kanban_task_claimed)
    akanban_task_claimed = _async(_kanban_task_claimed)

    def _kanban_task_completed(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        summary: str | None = None,
    ) -> _Body[None]:
        """Tell the observers a task was completed."""
        yield from self._fire(
            "kanban_task_completed",
            task_id=task_id,
            profile_name=profile_name,
            board=board,
            assignee=assignee,
            run_id=run_id,
            summary=summary,
        )

    kanban_task_completed = _sync(_kanban_task_completed)
    akanban_task_completed = _async(_kanban_task_completed)

    def _kanban_task_blocked(
        self,
        *,
        task_id: str,
        profile_name: str = "default",
        board: str | None = None,
        assignee: str | None = None,
        run_id: int | None = None,
        reason: str | None = None,
    ) -> _Body[None]:
        """Tell the observers a task moved to blocked."""
        yield from self._fire(
            "kanban_task_blocked",
            task_id=task_id,
            profile_name=profile_name,
            board=board,
            assignee=assignee,
            run_id=run_id,
            reason=reason,
        )

    kanban_task_blocked = _sync(_kanban_task_blocked)
    akanban_task_blocked = _async(_kanban_task_blocked)

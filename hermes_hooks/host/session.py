"""``Session``: a conversation that runs turns and fires every hook at its place.

One turn, in order (see docs/explanation/turn.md for the diagram)::

    on_session_start          (first turn only; then the memory providers' initialize)
    memory: on_turn_start, prefetch (recalled context for this turn's user message)
    pre_llm_call              (context appended to this turn's user message, for this turn)
    loop:
        context engine: should_compress → [memory on_pre_compress] → compress
        pre_api_request → model → post_api_request | api_request_error (per attempt)
        per tool call: pre_tool_call → [approval] → tool → post_tool_call → transform_tool_result
    pre_verify                (when a tool recorded changed files)
    transform_llm_output
    post_llm_call
    memory: sync_turn, queue_prefetch
    on_session_end            (always, also when the turn fails or is interrupted)

At the session's end (``close``, ``/new``) the memory providers get ``on_session_end`` and
``shutdown``, the context engine ``on_session_end``.
"""

from __future__ import annotations

import collections
import logging
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from hermes_hooks.backends.models import ModelError, ModelProvider, ModelResponse, set_active_model
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.calling.tracebacks import trimmed
from hermes_hooks.host.approval import Approver, deny_all
from hermes_hooks.host.records import CommandReply, SubagentOutcome, ToolCallRecord, TurnResult
from hermes_hooks.host.toolloop import run_tool_call
from hermes_hooks.host.tools import current_session
from hermes_hooks.host.transcript import Transcript
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.host.context import SessionContext
    from hermes_hooks.host.memory import SessionMemory
    from hermes_hooks.host.streaming import StreamObservers
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["DEFAULT_SYSTEM_PROMPT", "Session", "TurnState", "new_id"]

logger = logging.getLogger(__name__)

DEFAULT_SYSTEM_PROMPT: Final = (
    "You are Hermes, a helpful agent. Use the tools you are given when they help; answer "
    "plainly when they do not."
)
MAX_DEPTH: Final = 2
"""How deep subagents may nest: a child of a child cannot delegate further."""


def new_id(prefix: str) -> str:
    """Return a fresh opaque id such as ``turn-3f2a9c1d0b7e``."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@attrs.define
class TurnState:
    """What the loop keeps for the turn that is running."""

    turn_id: str
    task_id: str
    api_request_id: str = ""
    offered_tools: frozenset[str] = frozenset()
    changed_paths: set[str] = attrs.Factory(set)
    records: list[ToolCallRecord] = attrs.Factory(list)
    streamed: bool = False
    responses: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def count(self, usage: Mapping[str, Any] | None) -> None:
        """Count one model response and the tokens its provider reported (OpenAI's
        ``prompt_tokens``/``completion_tokens``, Anthropic's ``input_tokens``/``output_tokens``)."""
        self.responses += 1
        if usage:
            self.input_tokens += _tokens(usage, "input_tokens", "prompt_tokens")
            self.output_tokens += _tokens(usage, "output_tokens", "completion_tokens")


def _tokens(usage: Mapping[str, Any], *keys: str) -> int:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return 0


DEFAULT_MAX_TOOL_CALLS: Final = 32
"""Tool calls one model answer may run (:class:`Session`'s ``max_tool_calls``)."""


class Session:
    """A conversation with a model, its tools and the loaded plugins.

    :param pm: the plugin manager (with the host tools installed, see ``create_manager``).
    :param model: the model; the one the host runs for ``pm`` when omitted, else ``config.yaml``.
    :param approver: answers approval requests; ``deny_all`` by default (fail closed).
    :param platform: where the session runs (``"cli"``, ``"telegram"``...).
    :param surface: ``"cli"`` or ``"gateway"``: how resets and approvals are reported.
    :param attach: receive ``ctx.inject_message`` while the session is open (top-level
        sessions); a session always receives them while its own turn runs.
    :param record_events: keep :attr:`events` (hooks fired, tool calls, turns) for ``--json``.
    :param max_iterations: model calls one turn may make before it stops without an answer.
    :param max_tool_calls: tool calls one model answer may run; the ones past it are not run
        (the model is told in the last result), so a turn runs at most
        ``max_iterations * max_tool_calls`` tool calls.
    :param parent: the delegating session, for subagents.
    """

    def __init__(
        self,
        pm: PluginManager,
        model: ModelProvider | None = None,
        *,
        approver: Approver | None = None,
        platform: str = "cli",
        surface: Literal["cli", "gateway"] = "cli",
        sender_id: str = "",
        session_id: str | None = None,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        cwd: Path | None = None,
        max_iterations: int = 8,
        max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
        max_verify_nudges: int = 2,
        max_followups: int = 5,
        max_retries: int = 2,
        retry_backoff: float = 1.0,
        toolsets: frozenset[str] | None = None,
        attach: bool = True,
        record_events: bool = False,
        events: list[dict[str, Any]] | None = None,
        parent: Session | None = None,
        role: str = "leaf",
    ) -> None:
        if model is None:
            from hermes_hooks.host.runtime import load_model

            model = load_model(pm)
        self.pm = pm
        self.model = model
        self.approver: Approver = approver or deny_all
        self.platform = platform
        self.surface = surface
        self.sender_id = sender_id
        self.session_id = session_id or new_id("session")
        self.system_prompt = system_prompt
        self.cwd = cwd or Path.cwd()
        self.max_iterations = max_iterations
        self.max_tool_calls = max(1, max_tool_calls)
        self.max_verify_nudges = max_verify_nudges
        self.max_followups = max_followups
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.toolsets = toolsets
        self.parent = parent
        self.role = role
        self.depth: int = parent.depth + 1 if parent is not None else 0
        self.subagent_id: str | None = None
        self.events: list[dict[str, Any]] = events if events is not None else []
        self._record = record_events or events is not None
        self.hooks = Hooks(pm, listener=self._on_hook if self._record else None)
        self._init_state()
        self._previous_sink: Callable[[str, str], bool] | None = None
        self._attached = attach and parent is None
        if self._attached:
            self._previous_sink = pm.message_sink
            pm.message_sink = self.inject
            set_active_model(pm, model)

    def _init_state(self) -> None:
        """The state a session builds up as it runs: its conversation, memory, queues, and the
        callbacks of the surface showing it."""
        self.messages: list[dict[str, Any]] = []
        #: The session's messages in the home's session store (``state.db``, Hermes'
        #: ``hermes_state``), written as each turn ends.
        self.transcript = Transcript(self.pm.hermes_home)
        self.approved_rules: set[str] = set()
        self.turn: TurnState | None = None
        self.closed = False
        self._started = False
        #: The memory providers of this session (top-level sessions with memory on), and its
        #: context engine; both set up by the first turn.
        self.memory: SessionMemory | None = None
        self.context_engine: SessionContext | None = None
        self._backends_open = False
        self._pending: collections.deque[str] = collections.deque()
        #: Called, from the injecting thread, when a message is queued while no turn runs:
        #: a surface waiting for input (hermes chat) wakes and calls :meth:`run_pending`.
        self.on_pending: Callable[[], None] | None = None
        self.on_event: Callable[[str, dict[str, Any]], None] | None = None
        """Called with each event as it happens (``model_request``, ``tool_start``,
        ``tool_call``, ``text_delta`` when the model streams, ``turn_end``...): a surface's
        live display (``hermes chat``). It must not raise."""
        self._interrupts: collections.deque[str] = collections.deque()
        #: Told each piece of the model's text as it streams in (``hermes chat`` prints it);
        #: with it set, or a plugin implementing a stream hook, the model is asked to stream.
        self.on_text: Callable[[str], None] | None = None
        #: Told when a model response whose text was streamed ends (``hermes chat`` ends the
        #: line there).
        self.on_text_end: Callable[[], None] | None = None
        self._streams: StreamObservers | None = None
        self._sections: str | None = None

    def __repr__(self) -> str:
        return f"<Session {self.session_id} {self.model.describe()}>"

    # -- events, injection ------------------------------------------------------------------------

    def _on_hook(self, name: str) -> None:
        self.events.append({"type": "hook", "hook": name, "session_id": self.session_id})

    def _event(self, kind: str, **data: Any) -> None:
        if self._record:
            self.events.append({"type": kind, "session_id": self.session_id, **data})
        self._live(kind, **data)

    def _live(self, kind: str, **data: Any) -> None:
        """Tell the live display (:attr:`on_event`) only; ``--json`` does not record these."""
        listener = self.on_event
        if listener is not None:
            listener(kind, data)

    @property
    def is_running(self) -> bool:
        """Whether a turn of this session is running now."""
        return self.turn is not None

    @property
    def can_delegate(self) -> bool:
        """Whether ``delegate_task`` is offered: top-level sessions and shallow orchestrators."""
        return self.depth == 0 or (self.role == "orchestrator" and self.depth < MAX_DEPTH)

    @property
    def pending(self) -> list[str]:
        """Injected messages waiting to become turns, oldest first."""
        return list(self._pending)

    def inject(self, content: str, role: str = "user") -> bool:
        """Queue a message as Hermes' CLI does: it interrupts a running turn, else waits.

        A role other than ``user`` is kept as a ``[role] `` prefix. The message becomes the
        next turn (see :meth:`send`); this is what ``ctx.inject_message`` reaches.
        """
        if self.closed:
            return False
        message = content if role == "user" else f"[{role}] {content}"
        if self.is_running:
            self._interrupts.append(message)
            return True
        self._pending.append(message)
        wake = self.on_pending
        if wake is not None:
            wake()
        return True

    def open_backends(self) -> None:
        """Set up the memory providers and the context engine (the first turn does it)."""
        if self._backends_open:
            return
        self._backends_open = True
        from hermes_hooks.host.context import SessionContext
        from hermes_hooks.host.memory import SessionMemory

        self.memory = SessionMemory.for_session(self)
        self.context_engine = SessionContext.for_session(self)

    def full_system_prompt(self) -> str:
        """Return the system prompt sent: the session's, the memory providers' blocks, then the
        plugins' sections (``ctx.register_system_prompt_section``), rendered once per session
        and frozen."""
        if self._sections is None:
            from hermes_hooks.plugins.newer_ctx import render_system_prompt_sections

            self._sections = render_system_prompt_sections(
                self.pm,
                {
                    "session_id": self.session_id,
                    "model": self.model.model,
                    "provider": self.model.provider,
                    "platform": self.platform,
                    "profile_name": "default",
                    "cwd": str(self.cwd),
                },
            )
        parts = [self.system_prompt]
        memory = self.memory
        if memory is not None and memory.prompt_block:
            parts.append(memory.prompt_block)
        if self._sections:
            parts.append(self._sections)
        return "\n\n".join(parts)

    def stream_observers(self) -> StreamObservers | None:
        """Return the stream hooks' workers, or ``None`` when no plugin implements one."""
        if self._streams is None:
            from hermes_hooks.host.streaming import STREAM_HOOKS, StreamObservers

            observers = StreamObservers(self.pm)
            if not observers.implemented((*STREAM_HOOKS, "on_room_member_activity")):
                return None
            self._streams = observers
        return self._streams

    def note_changed_path(self, path: str) -> None:
        """Record that a tool changed ``path`` during the running turn."""
        if self.turn is not None:
            self.turn.changed_paths.add(path)

    # -- the surface: text in, replies out --------------------------------------------------------

    def send(self, text: str) -> list[TurnResult | CommandReply]:
        """Handle one input: a ``/command`` or a turn, then the injected messages it caused.

        :returns: the replies in order; each has ``.text``.
        """
        from hermes_hooks.host.slash import run_slash_command

        replies: list[TurnResult | CommandReply] = []
        # Hermes modules the plugins import (hermes_constants, tools.registry...) answer for
        # this session's manager while it handles the input.
        with self.pm.activate():
            if text.startswith("/"):
                replies.append(run_slash_command(self, text))
            else:
                replies.append(self.run_turn(text))
        return replies + self.run_pending()

    def run_pending(self) -> list[TurnResult | CommandReply]:
        """Run the injected messages waiting to become turns (at most ``max_followups``).

        :meth:`send` calls it after each input; a surface that was woken by
        :attr:`on_pending` while it waited for input calls it directly.
        """
        replies: list[TurnResult | CommandReply] = []
        with self.pm.activate():
            while self._pending and len(replies) < self.max_followups and not self.closed:
                replies.append(self.run_turn(self._pending.popleft()))
        return replies

    # -- one turn ---------------------------------------------------------------------------------

    def run_turn(self, user_message: str) -> TurnResult:
        """Run one turn on ``user_message`` and return how it ended; never raises but Ctrl-C.

        The session's manager is the current one while the turn runs (``pm.activate()``).
        """
        with self.pm.activate():
            return self._run_turn(user_message)

    def _run_turn(self, user_message: str) -> TurnResult:
        if self.closed:
            raise RuntimeError(f"session {self.session_id} is closed")
        turn = TurnState(turn_id=new_id("turn"), task_id=new_id("task"))
        self.turn = turn
        token = current_session.set(self)
        # A top-level session receives ctx.inject_message while its turn runs; subagents do not.
        sink = self.pm.message_sink
        if self.parent is None:
            self.pm.message_sink = self.inject
        first = not self._started
        self._started = True
        outcome: dict[str, Any] = {
            "text": "",
            "completed": False,
            "failed": False,
            "interrupted": False,
            "exit_reason": "",
            "error": None,
        }
        context: str | None = None
        recalled: str | None = None
        api_calls = 0
        self._event("turn_start", turn_id=turn.turn_id, user_message=user_message)
        try:
            recalled, context = self._open_turn(turn, user_message, first)
            user_index = len(self.messages) - 1
            extra = "\n\n".join(part for part in (recalled, context) if part) or None
            api_calls = self._loop(turn, user_index, extra, outcome)
            memory = self.memory
            if memory is not None and outcome["completed"] and outcome["text"]:
                memory.turn_end(user_message, outcome["text"])
        except ModelError as exc:
            outcome.update(failed=True, error=str(exc), text=f"The model request failed: {exc}")
            outcome["exit_reason"] = f"api_error({exc.reason})"
        except KeyboardInterrupt:
            outcome.update(interrupted=True, exit_reason="interrupted_by_user")
            raise
        except Exception as exc:
            logger.error("turn %s failed", turn.turn_id, exc_info=trimmed(exc))
            outcome.update(failed=True, error=f"{type(exc).__name__}: {exc}", exit_reason="error")
            outcome["text"] = f"The turn failed: {outcome['error']}"
        finally:
            self._session_end_hook(turn, outcome)
            self._keep_transcript()
            self.transcript.count(
                self.session_id,
                model=self.model.model,
                api_calls=turn.responses,
                input_tokens=turn.input_tokens,
                output_tokens=turn.output_tokens,
            )
            self._pending.extend(self._interrupts)
            self._interrupts.clear()
            self.pm.message_sink = sink
            current_session.reset(token)
            self.turn = None
        result = TurnResult(
            session_id=self.session_id,
            turn_id=turn.turn_id,
            task_id=turn.task_id,
            user_message=user_message,
            tool_calls=tuple(turn.records),
            api_calls=api_calls,
            context=context,
            recalled=recalled,
            **outcome,
        )
        self._event(
            "turn_end",
            turn_id=turn.turn_id,
            completed=result.completed,
            failed=result.failed,
            interrupted=result.interrupted,
            exit_reason=result.exit_reason,
        )
        return result

    def _keep_transcript(self) -> None:
        self.transcript.write(
            self.session_id,
            self.messages,
            source="subagent" if self.parent is not None else self.platform,
            model=self.model.model,
            system_prompt=self.system_prompt,
            parent_session_id=self.parent.session_id if self.parent is not None else None,
            user_id=self.sender_id,
            cwd=str(self.cwd),
        )

    def _open_turn(
        self, turn: TurnState, user_message: str, first: bool
    ) -> tuple[str | None, str | None]:
        """Open the turn: ``on_session_start`` (first turn), the backends, the memory's recall,
        the user's message appended, ``pre_llm_call``; return (the recalled memory, the
        plugins' context)."""
        if first:
            self.hooks.on_session_start(
                telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
                session_id=self.session_id,
                model=self.model.model,
                platform=self.platform,
            )
        self.open_backends()
        recalled: str | None = None
        memory = self.memory
        if memory is not None:
            recalled = memory.turn_start(user_message) or None
            if recalled is not None:
                self._event("memory_recall", turn_id=turn.turn_id, chars=len(recalled))
        self.messages.append({"role": "user", "content": user_message})
        self._keep_transcript()  # the session's row first: its subagents point at it
        context: str | None = self.hooks.pre_llm_call(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=self.session_id,
            task_id=turn.task_id,
            turn_id=turn.turn_id,
            user_message=user_message,
            conversation_history=[dict(m) for m in self.messages],
            is_first_turn=first,
            model=self.model.model,
            platform=self.platform,
            parent_session_id=self.parent.session_id if self.parent else "",
            sender_id=self.sender_id,
        )
        return recalled, context

    def _session_end_hook(self, turn: TurnState, outcome: dict[str, Any]) -> None:
        self.hooks.on_session_end(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=self.session_id,
            task_id=turn.task_id,
            turn_id=turn.turn_id,
            completed=outcome["completed"],
            failed=outcome["failed"],
            interrupted=outcome["interrupted"],
            turn_exit_reason=outcome["exit_reason"],
            model=self.model.model,
            platform=self.platform,
        )

    def _loop(
        self, turn: TurnState, user_index: int, context: str | None, outcome: dict[str, Any]
    ) -> int:
        """Ask the model and run its tool calls until it answers; return the model calls made."""
        calls = nudges = 0
        while True:
            if self._interrupts:
                outcome.update(interrupted=True, exit_reason="interrupted")
                outcome["text"] = "(interrupted by an injected message)"
                self.hooks.agent_loop_stopped(
                    telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
                    session_key=self.session_id,
                    platform=self.platform,
                    reason="interrupt",
                    invalidation_reason=None,
                )
                return calls
            if calls >= self.max_iterations:
                outcome["exit_reason"] = f"max_iterations_reached({calls}/{self.max_iterations})"
                outcome["text"] = f"(stopped after {calls} model calls without a final answer)"
                return calls
            calls += 1
            engine = self.context_engine
            if engine is not None:
                user_index = engine.fit(user_index, context)
            self._live("model_request", turn_id=turn.turn_id, call=calls)
            response = self._request(turn, user_index, context, calls)
            turn.count(response.usage)
            dropped = len(response.tool_calls) - self.max_tool_calls
            if dropped > 0:
                logger.warning(
                    "the model asked for %d tool calls in one answer; running the first %d "
                    "(max_tool_calls)",
                    len(response.tool_calls),
                    self.max_tool_calls,
                )
                response = attrs.evolve(
                    response, tool_calls=response.tool_calls[: self.max_tool_calls]
                )
            self.messages.append(response.assistant_message())
            if engine is not None:
                engine.observe(response)
            if response.tool_calls:
                if response.text:
                    self._interim(turn, response.text, calls)
                self._run_tool_calls(turn, response, dropped)
                continue
            if (
                turn.changed_paths
                and nudges < self.max_verify_nudges
                and self._verify_nudge(turn, response.text, nudges)
            ):
                nudges += 1
                continue
            self._final_answer(turn, user_index, response, outcome)
            return calls

    def _run_tool_calls(self, turn: TurnState, response: ModelResponse, dropped: int) -> None:
        """Run the answer's tool calls in order (skipped once the turn is interrupted), each
        result appended as a ``tool`` message; say how many calls were ``dropped``."""
        for call in response.tool_calls:
            if self._interrupts:
                result = '{"error": "skipped: the turn was interrupted"}'
            else:
                self._live(
                    "tool_start", turn_id=turn.turn_id, tool_name=call.name, args=call.arguments
                )
                record = run_tool_call(self, turn, call)
                turn.records.append(record)
                self._event("tool_call", turn_id=turn.turn_id, **record.to_dict())
                result = record.result
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        if dropped > 0:
            self.messages[-1]["content"] += (
                f"\n[{dropped} more tool calls of this answer were not run: one answer "
                f"may run at most max_tool_calls ({self.max_tool_calls})]"
            )

    def _verify_nudge(self, turn: TurnState, text: str, nudges: int) -> bool:
        """Ask ``pre_verify`` about a final answer after file changes; when a plugin nudges,
        append its message as the user's and return True (the loop asks the model again)."""
        decision = self.hooks.pre_verify(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=self.session_id,
            platform=self.platform,
            model=self.model.model,
            coding=True,
            attempt=nudges,
            final_response=text,
            changed_paths=sorted(turn.changed_paths),
        )
        if decision is None:
            return False
        self.messages.append({"role": "user", "content": decision.message})
        return True

    def _final_answer(
        self,
        turn: TurnState,
        user_index: int,
        response: ModelResponse,
        outcome: dict[str, Any],
    ) -> None:
        """The model answered: ``transform_llm_output`` on its text, then ``post_llm_call``."""
        text = response.text
        if text:
            text = self.hooks.transform_llm_output(
                telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
                response_text=text,
                session_id=self.session_id,
                model=self.model.model,
                platform=self.platform,
                turn_id=turn.turn_id,
            )
            self.messages[-1]["content"] = text
        outcome.update(text=text, completed=True)
        outcome["exit_reason"] = f"text_response({response.finish_reason or 'stop'})"
        self.hooks.post_llm_call(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=self.session_id,
            task_id=turn.task_id,
            turn_id=turn.turn_id,
            user_message=self.messages[user_index]["content"],
            assistant_response=text,
            conversation_history=[dict(m) for m in self.messages],
            model=self.model.model,
            platform=self.platform,
        )

    def _interim(self, turn: TurnState, text: str, iteration: int) -> None:
        """Fire ``on_interim_message`` for text the model said beside its tool calls."""
        observers = self.stream_observers()
        if observers is not None:
            observers.interim(
                text,
                already_streamed=turn.streamed,
                turn_id=turn.turn_id,
                iteration=iteration,
                session_id=self.session_id,
                model=self.model.model,
                provider=self.model.provider,
                surface=self.platform if self.surface == "gateway" else self.surface,
            )

    def _request(
        self, turn: TurnState, user_index: int, context: str | None, api_call_count: int
    ) -> ModelResponse:
        """Send one model request, with retries, firing the API hooks for each attempt."""
        from hermes_hooks.host.requests import send_request

        return send_request(self, turn, user_index, context, api_call_count)

    # -- session boundaries -----------------------------------------------------------------------

    def reset(self, reason: str = "/new") -> str:
        """Start a fresh conversation under a new session id; return the new id.

        Fires ``on_session_finalize`` for the old session, then ``on_session_reset`` for the
        new one (with ``old_session_id``/``new_session_id`` on the gateway surface).
        """
        old, new = self.session_id, new_id("session")
        gateway = self.surface == "gateway"
        if self.memory is not None:
            self.memory.session_end(self.messages)
            self.memory.switched(new, old)
        if self.context_engine is not None:
            self.context_engine.end(old, self.messages)
            self.context_engine.reset()
        self.transcript.end(old, reason)
        self.session_id = new
        self._sections = None  # a new session renders the plugins' sections anew
        self.messages.clear()
        self.approved_rules.clear()
        self._started = False
        self.hooks.on_session_finalize(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=old,
            platform=self.platform,
            reason=reason,
            old_session_id=old if gateway else None,
            new_session_id=new if gateway else None,
        )
        self.hooks.on_session_reset(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=new,
            platform=self.platform,
            reason=reason,
            old_session_id=old if gateway else None,
            new_session_id=new if gateway else None,
        )
        return new

    def close(self, reason: str = "exit") -> None:
        """Tear the session down: ``on_session_finalize``, and stop receiving injections."""
        if self.closed:
            return
        self.closed = True
        self.transcript.end(self.session_id, reason)
        self.transcript.close()
        if self.memory is not None:
            with self.pm.activate():
                self.memory.session_end(self.messages)
                self.memory.close()
        if self.context_engine is not None:
            with self.pm.activate():
                self.context_engine.end(self.session_id, self.messages)
        self.hooks.on_session_finalize(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            session_id=self.session_id,
            platform=self.platform,
            reason=reason,
        )
        if self._streams is not None:
            self._streams.close()
        if self._attached and self.pm.message_sink == self.inject:
            self.pm.message_sink = self._previous_sink
            set_active_model(self.pm, None)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- subagents --------------------------------------------------------------------------------

    def delegate(self, goal: str, *, context: str = "", role: str = "leaf") -> SubagentOutcome:
        """Run a child session on ``goal``, firing ``subagent_start`` and ``subagent_stop``."""
        from hermes_hooks.host.subagents import run_subagent

        return run_subagent(self, goal, context=context, role=role)

    def spawn_child(self, role: str) -> Session:
        """Return a child session sharing this one's model, tools, approver and event log."""
        return Session(
            self.pm,
            self.model,
            approver=self.approver,
            platform=self.platform,
            surface=self.surface,
            sender_id=self.sender_id,
            cwd=self.cwd,
            max_iterations=self.max_iterations,
            max_tool_calls=self.max_tool_calls,
            max_retries=self.max_retries,
            retry_backoff=self.retry_backoff,
            toolsets=self.toolsets,
            attach=False,
            events=self.events if self._record else None,
            parent=self,
            role=role,
        )

    def tool_definitions(self) -> list[dict[str, Any]]:
        """Return the tools offered to the model now (available ones, of :attr:`toolsets`)."""
        # check_fn of host tools (delegate_task) asks which session is running.
        token = current_session.set(self)
        try:
            definitions = self.pm.tools.definitions(self.toolsets)
        finally:
            current_session.reset(token)
        memory, engine = self.memory, self.context_engine
        offers_memory = self.toolsets is None or "memory" in self.toolsets
        if memory is not None and memory.definitions and offers_memory:
            definitions = [*definitions, *memory.definitions]
        if engine is not None and engine.definitions:
            definitions = [*definitions, *engine.definitions]
        return definitions

    def dispatch_tool(self, name: str, args: dict[str, Any], *, task_id: str = "") -> str:
        """Run tool ``name``: a memory provider's or the context engine's, else ``pm.tools``'."""
        memory, engine = self.memory, self.context_engine
        if memory is not None and memory.has_tool(name):
            return memory.handle_tool_call(name, args)
        if engine is not None and engine.has_tool(name):
            return engine.handle_tool_call(name, args)
        return self.pm.tools.dispatch(name, args, task_id=task_id)

"""A session's context engine: keeps the conversation under the model's context budget.

Built for every session (subagents too) from ``context.engine``: the bundled ``compressor``
with the ``compression:`` settings, summarizing with the session's model, or a copy of the
engine a plugin registered (each session keeps its own token state). An engine that
``context.engine`` names but no plugin registered is reported and ``compressor`` runs instead,
as in Hermes.

Before every model request the host asks :meth:`SessionContext.fit`: with the size of the
request (the model's reported usage of the last response plus an estimate of what was added
since, else an estimate of it all) it asks ``should_compress``, and when the engine says so
it calls the memory providers' ``on_pre_compress`` first and passes what they return to
``compress``. After every response, ``update_from_response`` gets the usage.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_hooks.backends.context_engine import (
    CompressionSettings,
    ContextCompressor,
    ContextEngine,
    ContextSettings,
    get_context_engines,
    get_model_context_length,
)
from hermes_hooks.backends.context_engine.tokens import (
    estimate_message_tokens,
    estimate_messages_tokens_rough,
    estimate_tokens_rough,
    usage_tokens,
)
from hermes_hooks.backends.memory import normalize_tool_schema
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.host.backend_calls import BackendCaller, accepted_kwargs
from hermes_hooks.plugins.config import load_config
from hermes_hooks.registries.base import HOST

if TYPE_CHECKING:
    from hermes_hooks.backends.models import ModelResponse
    from hermes_hooks.host.session import Session

__all__ = ["SessionContext"]

logger = logging.getLogger(__name__)


class SessionContext:
    """The context engine of one session; build it with :meth:`for_session`."""

    def __init__(self, session: Session, engine: ContextEngine, owner: str) -> None:
        self.session = session
        self.engine = engine
        self.owner = owner
        self.caller = BackendCaller(session.pm, "context engine")
        self.started = False
        self.definitions: list[dict[str, Any]] = []
        self._tools: set[str] = set()
        self._usage_base: tuple[int, int] | None = None  # (tokens reported, messages then)
        self._estimate = 0
        self.configured_length: int | None = None
        """``model.context_length``, when ``config.yaml`` sets it."""

    @property
    def name(self) -> str:
        """The engine's ``name`` (``?`` when it raises)."""
        try:
            return str(self.engine.name)
        except Exception:
            return "?"

    @classmethod
    def for_session(cls, session: Session) -> SessionContext | None:
        """Return the context engine of ``session``, or ``None`` without a context family."""
        pm = session.pm
        try:
            registry = get_context_engines(pm)
        except KeyError:
            return None
        try:
            config = load_config(pm.hermes_home)
        except HermesHooksError as exc:
            logger.warning("context engine: %s; the defaults apply", exc)
            config = {}
        try:
            chosen = ContextSettings.from_config(config).chosen
        except HermesHooksError as exc:
            logger.warning("context engine: %s; compressor runs", exc)
            chosen = "compressor"
        engine: ContextEngine | None = None
        owner = HOST
        found = registry.find(chosen) if chosen != "compressor" else None
        if found is not None and found[1] != HOST:
            prototype, owner = found
            try:
                engine = copy.deepcopy(prototype)
            except Exception as exc:
                logger.warning(
                    "context engine %r of plugin %r cannot be copied for this session (%s: %s); "
                    "compressor runs instead",
                    chosen,
                    owner,
                    type(exc).__name__,
                    exc,
                )
                owner = HOST
        elif chosen != "compressor":
            message = (
                f"context.engine is {chosen!r}, but no loaded plugin registered a context "
                f"engine of that name; compressor runs instead ('hermes plugins list --all' "
                f"shows whether its plugin loaded)"
            )
            logger.warning("%s", message)
            session._event("context_warning", message=message)
        if engine is None:
            engine = cls._compressor(session, config)
        made = cls(session, engine, owner)
        with contextlib.suppress(HermesHooksError):
            made.configured_length = CompressionSettings.from_config(config).context_length
        return made

    @staticmethod
    def _compressor(session: Session, config: Mapping[str, Any]) -> ContextCompressor:
        try:
            settings = CompressionSettings.from_config(config)
        except HermesHooksError as exc:
            logger.warning("compression: %s; the defaults apply", exc)
            settings = CompressionSettings()
        for warning in settings.warnings:
            logger.warning("%s", warning)
        engine = ContextCompressor.from_settings(settings, session.model.model)
        engine.bind_model(session.model)
        return engine

    # -- calling ----------------------------------------------------------------------------------

    def _call(self, method: str, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        function = getattr(self.engine, method)
        outcome = self.caller.call(
            self.owner,
            self.name,
            method,
            function,
            *args,
            seconds=self.session.pm.plugins_config.hook_callback_timeout,
            **accepted_kwargs(function, kwargs),
        )
        return outcome.ok, outcome.value

    # -- the session ------------------------------------------------------------------------------

    def start(self) -> None:
        """Tell the engine the model and its window, and that the session starts."""
        if self.started:
            return
        self.started = True
        session, model = self.session, self.session.model
        length = self.engine.context_length or get_model_context_length(
            model.model, self.configured_length
        )
        self._call(
            "update_model",
            model.model,
            length,
            base_url=model.base_url,
            provider=model.provider,
            api_mode=model.api_mode,
        )
        self._call(
            "on_session_start",
            session.session_id,
            hermes_home=str(session.pm.hermes_home),
            platform=session.platform,
            model=model.model,
        )
        ok, schemas = self._call("get_tool_schemas")
        taken = set(session.pm.tools.names())
        for raw in schemas if ok and isinstance(schemas, list) else []:
            schema = normalize_tool_schema(raw)
            if schema is None or schema["name"] in taken:
                logger.warning("context engine %r: tool %r is not offered", self.name, raw)
                continue
            self._tools.add(schema["name"])
            self.definitions.append({"type": "function", "function": schema})

    def _request_tokens(self, context: str | None) -> int:
        """The size of the next request: reported usage plus what came since, else estimated."""
        messages = self.session.messages
        extra = estimate_tokens_rough(self.session.full_system_prompt()) + estimate_tokens_rough(
            context or ""
        )
        base = self._usage_base
        if base is not None and base[1] <= len(messages):
            tokens, count = base
            return tokens + sum(estimate_message_tokens(m) for m in messages[count:])
        return estimate_messages_tokens_rough(messages) + extra

    def fit(self, user_index: int, context: str | None) -> int:
        """Compact the conversation before a request when the engine says so.

        :returns: where the turn's user message is now (compaction moves it).
        """
        self.start()
        tokens = self._estimate = self._request_tokens(context)
        ok, wanted = self._call("should_compress", tokens)
        if not (ok and wanted):
            return user_index
        session = self.session
        messages = [{"role": "system", "content": session.full_system_prompt()}, *session.messages]
        memory = session.memory
        notes = memory.pre_compress([dict(m) for m in messages]) if memory is not None else ""
        user = session.messages[user_index]
        ok, result = self._call("compress", messages, current_tokens=tokens, memory_context=notes)
        compacted = self._checked(result) if ok else None
        if compacted is None:
            return user_index
        index = _find_user(compacted, user)
        if index is None:
            logger.warning(
                "context engine %r dropped the turn's user message; its compaction is not used",
                self.name,
            )
            return user_index
        before = len(session.messages)
        session.messages[:] = compacted
        self._usage_base = None
        session._event(
            "context_compressed",
            engine=self.name,
            tokens_before=tokens,
            tokens_after=estimate_messages_tokens_rough(compacted),
            messages_before=before,
            messages_after=len(compacted),
            memory_notes=bool(notes),
        )
        return index

    def _checked(self, result: object) -> list[dict[str, Any]] | None:
        """Return the engine's messages without the system prompt, or ``None`` when unusable."""
        if not isinstance(result, list) or not all(
            isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in result
        ):
            logger.warning(
                "context engine %r: compress() returned %s, not a list of chat messages; ignored",
                self.name,
                type(result).__name__,
            )
            if self.owner != HOST:
                self.session.pm.count_failure(
                    self.owner, f"context engine '{self.name}' compress()", "not chat messages"
                )
            return None
        kept = list(result)
        while kept and kept[0].get("role") == "system":
            kept.pop(0)  # the host keeps its own system prompt
        return [m if isinstance(m, dict) else dict(m) for m in kept]

    def observe(self, response: ModelResponse) -> None:
        """After a response: give the engine its usage (reported, else estimated)."""
        counts = usage_tokens(response.usage)
        messages = self.session.messages
        if counts is not None:
            self._usage_base = (counts["total_tokens"], len(messages))
        else:
            completion = estimate_tokens_rough(response.text) + sum(
                estimate_tokens_rough(call.arguments) for call in response.tool_calls
            )
            counts = {
                "prompt_tokens": self._estimate,
                "completion_tokens": completion,
                "total_tokens": self._estimate + completion,
            }
        self._call("update_from_response", counts)

    def has_tool(self, name: str) -> bool:
        """Tell whether ``name`` is a tool of this session's engine."""
        return name in self._tools

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        """Run one of the engine's tools (it gets the live ``messages``)."""
        ok, result = self._call("handle_tool_call", name, args, messages=self.session.messages)
        if not ok:
            return json.dumps({"error": f"context engine tool {name!r} failed"})
        return result if isinstance(result, str) else json.dumps(result, default=str)

    def reset(self) -> None:
        """``/new``: the engine forgets the session's state."""
        self._usage_base = None
        if self.started:
            self._call("on_session_reset")

    def end(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """The session ends: ``on_session_end``."""
        if self.started:
            self._call("on_session_end", session_id, [dict(m) for m in messages])


def _find_user(messages: list[dict[str, Any]], user: Mapping[str, Any]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index] is user:
            return index
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and message.get("content") == user.get("content"):
            return index
    return None

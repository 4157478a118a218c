"""A session's memory: the providers that run, called where Hermes calls them.

``SessionMemory`` is what Hermes' ``MemoryManager`` is to its agent: the builtin provider first,
then the external one ``memory.provider`` selects (see
:class:`~hermes_hooks.backends.memory.MemoryRegistry`). It is built for a top-level session
(subagents have none, as in Hermes) and only when a provider runs, so a host with memory off
pays nothing per turn. Every call goes through a
:class:`~hermes_hooks.host.backend_calls.BackendCaller`: a plugin's provider is bounded (its
``prefetch`` by ``memory.prefetch_timeout``, the rest by ``plugins.hook_callback_timeout``)
and isolated, so a provider that raises or hangs is logged, counted on its plugin, and the
turn goes on.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from hermes_hooks.backends.memory import (
    ActiveProvider,
    MemorySettings,
    RecallStatus,
    build_memory_context_block,
    get_memory,
    is_trivial_prompt,
    normalize_tool_schema,
)
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.host.backend_calls import BackendCaller, accepted_kwargs
from hermes_hooks.registries.base import HOST

if TYPE_CHECKING:
    from hermes_hooks.backends.memory import MemoryRegistry
    from hermes_hooks.host.session import Session

__all__ = ["SessionMemory"]

logger = logging.getLogger(__name__)

_MIRRORED = {"add": "add", "forget": "remove"}
"""The builtin tool's writes, and the ``on_memory_write`` action each is mirrored as."""


class SessionMemory:
    """The memory providers of one session; build it with :meth:`for_session`.

    :param session: the session.
    :param registry: its manager's memory registry.
    :param providers: the providers that run, the builtin first.
    :param settings: the ``memory:`` settings they were chosen by.
    """

    def __init__(
        self,
        session: Session,
        registry: MemoryRegistry,
        providers: list[ActiveProvider],
        settings: MemorySettings,
    ) -> None:
        self.session = session
        self.registry = registry
        self.providers = providers
        self.settings = settings
        self.caller = BackendCaller(session.pm, "memory provider")
        self.started = False
        self.prompt_block = ""
        self.definitions: list[dict[str, Any]] = []
        self.recall: list[RecallStatus] = []
        self._tools: dict[str, ActiveProvider] = {}
        self._turns = 0

    @classmethod
    def for_session(cls, session: Session) -> SessionMemory | None:
        """Return the memory of ``session``, or ``None`` when no provider runs for it.

        A ``memory.provider`` that names no loaded provider is reported (logged, and on the
        session's events) and the builtin runs alone, as Hermes does.
        """
        if session.parent is not None:
            return None
        try:
            registry = get_memory(session.pm)
        except KeyError:
            return None  # no memory family listed in this process
        try:
            settings = registry.settings()
        except HermesHooksError as exc:
            logger.warning("memory: %s; no memory provider runs", exc)
            return None
        for warning in settings.warnings:
            logger.warning("%s", warning)
        try:
            providers = registry.active(settings)
        except HermesHooksError as exc:
            logger.warning("memory: %s; the builtin provider runs alone", exc)
            session._event("memory_warning", message=str(exc))
            builtin = registry.builtin()
            keep = settings.builtin and builtin is not None
            providers = [ActiveProvider(builtin, HOST)] if keep and builtin is not None else []
        chosen = {id(active.provider) for active in providers}
        for extra in registry.external_providers():
            if id(extra.provider) not in chosen:
                logger.info(
                    "memory provider %r of plugin %r does not run: only one external provider "
                    "does, the one memory.provider selects",
                    extra.name,
                    extra.owner,
                )
        return cls(session, registry, providers, settings) if providers else None

    # -- calling ----------------------------------------------------------------------------------

    @property
    def _bound(self) -> float:
        return self.session.pm.plugins_config.hook_callback_timeout

    def _call(self, active: ActiveProvider, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``active.provider.<method>``; return its value, or ``None`` when it failed."""
        function = getattr(active.provider, method)
        outcome = self.caller.call(
            active.owner,
            active.name,
            method,
            function,
            *args,
            seconds=self._bound,
            **accepted_kwargs(function, kwargs),
        )
        return outcome.value if outcome.ok else None

    # -- the session ------------------------------------------------------------------------------

    def start(self) -> None:
        """Initialize every provider, then gather their system prompt blocks and tools.

        A provider whose ``initialize`` fails does not run in this session.
        """
        if self.started:
            return
        self.started = True
        session = self.session
        kwargs: dict[str, Any] = {
            "hermes_home": str(session.pm.hermes_home),
            "platform": session.platform,
            "agent_context": "primary",
        }
        if session.sender_id:
            kwargs["user_id"] = session.sender_id
        running = []
        for active in self.providers:
            if not active.is_builtin and self._call(active, "is_available") is not True:
                # As Hermes: an unavailable provider is never initialized; say what it needs.
                reason = self._call(active, "unavailable_reason")
                hint = f": {reason}" if isinstance(reason, str) and reason.strip() else ""
                message = (
                    f"memory provider {active.name!r} of plugin {active.owner!r} is not "
                    f"available{hint}; the builtin provider runs alone"
                )
                logger.warning("%s", message)
                session._event("memory_warning", message=message)
                continue
            function = active.provider.initialize
            outcome = self.caller.call(
                active.owner,
                active.name,
                "initialize",
                function,
                session.session_id,
                seconds=self._bound,
                **kwargs,
            )
            if outcome.ok:
                self.registry.acquire(active.provider)
                running.append(active)
        self.providers = running
        blocks = [self._call(a, "system_prompt_block") for a in running]
        self.prompt_block = "\n\n".join(
            b.strip() for b in blocks if isinstance(b, str) and b.strip()
        )
        self._gather_tools()

    def _gather_tools(self) -> None:
        taken = set(self.session.pm.tools.names())
        for active in self.providers:
            schemas = self._call(active, "get_tool_schemas")
            for raw in schemas if isinstance(schemas, list) else []:
                schema = normalize_tool_schema(raw)
                if schema is None:
                    logger.warning(
                        "memory provider %r: a tool schema without a name: %r", active.name, raw
                    )
                    continue
                name = schema["name"]
                if name in taken or name in self._tools:
                    owner = self._tools[name].name if name in self._tools else "the tool registry"
                    logger.warning(
                        "memory provider %r: its tool %r is not offered, %s has that name",
                        active.name,
                        name,
                        owner,
                    )
                    continue
                self._tools[name] = active
                self.definitions.append({"type": "function", "function": schema})

    def turn_start(self, message: str, *, tool_count: int = 0) -> str:
        """A user turn starts: ``on_turn_start``, then ``prefetch`` (not for a trivial prompt).

        :returns: the recalled context to inject, fenced, or ``""``.
        """
        self.start()
        self._turns += 1
        session = self.session
        for active in self.providers:
            self._call(
                active,
                "on_turn_start",
                self._turns,
                message,
                model=session.model.model,
                platform=session.platform,
                tool_count=tool_count,
            )
        self.recall = []
        if is_trivial_prompt(message):
            return ""
        parts = []
        for active in self.providers:
            function = active.provider.prefetch
            outcome = self.caller.call(
                active.owner,
                active.name,
                "prefetch",
                function,
                message,
                seconds=self.settings.prefetch_timeout,
                bound_name="memory.prefetch_timeout",
                **accepted_kwargs(function, {"session_id": session.session_id}),
            )
            if outcome.ok and isinstance(outcome.value, str) and outcome.value.strip():
                parts.append(outcome.value.strip())
                status = self._call(active, "recall_status")
                if isinstance(status, RecallStatus):
                    self.recall.append(status)
        return build_memory_context_block("\n\n".join(parts))

    def turn_end(self, user: str, assistant: str) -> None:
        """A turn finished: ``sync_turn``, then ``queue_prefetch`` for the next one."""
        session = self.session
        messages = [dict(m) for m in session.messages]
        for active in self.providers:
            self._call(
                active,
                "sync_turn",
                user,
                assistant,
                session_id=session.session_id,
                messages=messages,
            )
        for active in self.providers:
            self._call(active, "queue_prefetch", user, session_id=session.session_id)

    def has_tool(self, name: str) -> bool:
        """Tell whether ``name`` is a tool of a provider of this session."""
        return name in self._tools

    def handle_tool_call(self, name: str, args: dict[str, Any]) -> str:
        """Run a provider's tool; a failure is an error result for the model."""
        active = self._tools.get(name)
        if active is None:
            return json.dumps({"error": f"no memory provider has the tool {name!r}"})
        result = self._call(
            active, "handle_tool_call", name, args, session_id=self.session.session_id
        )
        if result is None:
            return json.dumps({"error": f"memory tool {name!r} failed"})
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        if active.is_builtin:
            self._mirror(args, text)
        return text

    def _mirror(self, args: dict[str, Any], result: str) -> None:
        """Tell the external providers what the builtin memory tool wrote (``on_memory_write``)."""
        action = _MIRRORED.get(str(args.get("action")))
        externals = [a for a in self.providers if not a.is_builtin]
        if action is None or not externals:
            return
        try:
            data = json.loads(result)
        except ValueError:
            return
        if not isinstance(data, dict) or data.get("success") is not True:
            return
        metadata = {
            "write_origin": "memory_tool",
            "session_id": self.session.session_id,
            "platform": self.session.platform,
            "tool_name": "memory",
            "fact_id": data.get("id"),
        }
        if action == "remove":
            metadata["previous_content"] = data.get("removed_entry")
        target, content = str(data.get("target") or "memory"), str(data.get("content") or "")
        for active in externals:
            function = active.provider.on_memory_write
            if "metadata" in accepted_kwargs(function, {"metadata": None}):
                self._call(active, "on_memory_write", action, target, content, metadata=metadata)
            else:
                self._call(active, "on_memory_write", action, target, content)

    def pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """The context engine is about to compact: what the providers want the summary to keep."""
        parts = [self._call(a, "on_pre_compress", messages) for a in self.providers]
        return "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())

    def delegated(self, task: str, result: str, *, child_session_id: str) -> None:
        """A subagent finished: ``on_delegation`` on this, the parent's, providers."""
        for active in self.providers:
            self._call(active, "on_delegation", task, result, child_session_id=child_session_id)

    def session_end(self, messages: list[dict[str, Any]]) -> None:
        """The session ends (exit, ``/new``): ``on_session_end`` with the whole conversation."""
        if not self.started:
            return
        snapshot = [dict(m) for m in messages]
        for active in self.providers:
            self._call(active, "on_session_end", snapshot)

    def switched(self, new_session_id: str, old_session_id: str) -> None:
        """``/new``: ``on_session_switch`` to the new id, as a reset."""
        if not self.started:
            return
        self._turns = 0
        for active in self.providers:
            self._call(
                active,
                "on_session_switch",
                new_session_id,
                parent_session_id=old_session_id,
                reset=True,
            )

    def close(self) -> None:
        """Shut the providers down, the external one first; each once its last session ends."""
        if not self.started:
            return
        self.started = False
        for active in reversed(self.providers):
            if self.registry.release(active.provider):
                self._call(active, "shutdown")

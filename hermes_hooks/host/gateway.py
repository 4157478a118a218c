"""``Gateway``: inbound chat messages → ``pre_gateway_dispatch`` → a session per chat.

Every event reaches the hook as Hermes' ``gateway.platforms.base.MessageEvent`` (``.text``,
``.message_type``, ``.source.platform.value``, ``.source.chat_id``...), whether it came from a
platform adapter (``hermes gateway run``), from ``hermes gateway replay`` or from code passing
this module's short :class:`MessageEvent`. Sessions are keyed by Hermes' session keys
(``agent:main:<platform>:dm:<chat_id>``...).

For each non-internal event the first fitting ``pre_gateway_dispatch`` result
decides: ``skip`` drops the message (no reply, no session), ``rewrite`` replaces its text,
``allow`` or nothing dispatches it as it is. Internal events skip the hook, as in Hermes.
Approvals are denied unless an approver is given (``approver``, or ``approver_for`` per chat:
:class:`~hermes_hooks.host.gateway_runner.GatewayRunner` asks in the chat).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

from hermes_hooks.backends.models import get_active_model, set_active_model
from hermes_hooks.calling.facade import Hooks
from hermes_hooks.compat import (
    gateway_config as _hconfig,
    gateway_platforms_base as _hbase,
    gateway_session as _hsession,
)
from hermes_hooks.host.approval import Approver, deny_all
from hermes_hooks.host.session import Session
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.backends.models import ModelProvider
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "DispatchOutcome",
    "Gateway",
    "MessageEvent",
    "SessionSource",
    "SessionStore",
    "read_events",
]

logger = logging.getLogger(__name__)


@attrs.frozen
class SessionSource:
    """Where a message came from, in the shape Hermes plugins read (``event.source``)."""

    platform: str
    chat_id: str
    user_id: str
    user_name: str = ""


@attrs.define
class MessageEvent:
    """One inbound message. Mutable like Hermes' event: a ``rewrite`` replaces :attr:`text`.

    :param platform: ``"telegram"``, ``"discord"``, ``"cli"``...
    :param sender: who sent it (the platform's user id).
    :param chat_id: the chat it was sent in; the sender's own chat when empty.
    :param internal: a host-generated event (background completions...); skips the hook.
    """

    text: str
    platform: str = "local"
    sender: str = "user"
    chat_id: str = ""
    message_id: str = ""
    internal: bool = False

    @property
    def source(self) -> SessionSource:
        """The event's origin: platform, chat and user."""
        return SessionSource(self.platform, self.chat_id or self.sender, self.sender)

    def to_hermes(self) -> _hbase.MessageEvent:
        """Return the event as Hermes' ``MessageEvent`` (a direct chat when ``chat_id`` is
        empty or the sender's own, else a group)."""
        chat_id = self.chat_id or self.sender
        source = _hsession.SessionSource(
            platform=_hconfig.host_platform(self.platform),
            chat_id=chat_id,
            chat_name=chat_id,
            chat_type="dm" if chat_id == self.sender else "group",
            user_id=self.sender,
            user_name=self.sender,
        )
        return _hbase.MessageEvent(
            text=self.text,
            message_type=(
                _hbase.MessageType.COMMAND if self.text.startswith("/") else _hbase.MessageType.TEXT
            ),
            source=source,
            message_id=self.message_id or None,
            internal=self.internal,
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> MessageEvent:
        """Build an event from a JSON object with ``text`` and optional other fields.

        :raises ValueError: ``text`` is missing or a field has the wrong type.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"expected a JSON object, found {type(data).__name__}")
        text = data.get("text")
        if not isinstance(text, str):
            raise ValueError(f"'text' must be a string, found {type(text).__name__}")
        fields: dict[str, Any] = {"text": text}
        for name in ("platform", "sender", "chat_id", "message_id"):
            value = data.get(name)
            if value is not None:
                if not isinstance(value, str | int):
                    raise ValueError(f"{name!r} must be a string, found {type(value).__name__}")
                fields[name] = str(value)
        internal = data.get("internal", False)
        if not isinstance(internal, bool):
            raise ValueError(f"'internal' must be true or false, found {internal!r}")
        fields["internal"] = internal
        unknown = sorted(
            set(data) - {"text", "platform", "sender", "chat_id", "message_id", "internal"}
        )
        if unknown:
            logger.debug("message event fields ignored: %s", ", ".join(unknown))
        return cls(**fields)


@attrs.frozen
class DispatchOutcome:
    """What happened to one event.

    :param action: ``replied`` (a session answered), ``skipped`` (a plugin dropped it) or
        ``invalid`` (the input could not be read as an event).
    :param text: the text dispatched (after a ``rewrite``).
    :param replies: what the session answered, in order.
    """

    action: Literal["replied", "skipped", "invalid"]
    event: MessageEvent | None
    text: str = ""
    rewritten: bool = False
    reason: str | None = None
    replies: tuple[str, ...] = ()
    session_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the outcome as a JSON-ready dict."""
        data = attrs.asdict(self, recurse=False)
        data["event"] = attrs.asdict(self.event) if self.event is not None else None
        data["replies"] = list(self.replies)
        return data


class SessionStore:
    """The gateway's sessions, one per Hermes session key (one per chat, and per user in a
    group when ``group_sessions_per_user``).

    :param factory: builds the session for a new key from the event that opened it.
    """

    def __init__(
        self,
        factory: Callable[[str, _hbase.MessageEvent], Session],
        *,
        group_sessions_per_user: bool = True,
        thread_sessions_per_user: bool = False,
    ) -> None:
        self._factory = factory
        self._sessions: dict[str, Session] = {}
        self.group_sessions_per_user = group_sessions_per_user
        self.thread_sessions_per_user = thread_sessions_per_user

    def key_for(self, event: _hbase.MessageEvent | MessageEvent) -> str:
        """Return the session key of an event's chat, as Hermes builds it."""
        hermes = event.to_hermes() if isinstance(event, MessageEvent) else event
        return _hsession.build_session_key(
            hermes.source,
            group_sessions_per_user=self.group_sessions_per_user,
            thread_sessions_per_user=self.thread_sessions_per_user,
        )

    def get(self, key: str) -> Session | None:
        """Return the session of ``key``, or ``None``."""
        return self._sessions.get(key)

    def get_or_create(self, event: _hbase.MessageEvent) -> Session:
        """Return the chat's session, making it on its first message."""
        key = self.key_for(event)
        session = self._sessions.get(key)
        if session is None or session.closed:
            session = self._sessions[key] = self._factory(key, event)
        return session

    def keys(self) -> list[str]:
        """Return the keys of the open sessions, sorted."""
        return sorted(self._sessions)

    def close_all(self, reason: str) -> None:
        """Close every session (``on_session_finalize`` for each) and forget them."""
        for session in self._sessions.values():
            session.close(reason)
        self._sessions.clear()


class Gateway:
    """Routes inbound messages to sessions, letting plugins skip or rewrite them first.

    :param pm: the plugin manager.
    :param model: the model every session uses (``config.yaml``'s when omitted).
    :param approver: answers approvals; ``deny_all`` (fail closed) by default.
    :param approver_for: makes each new session's approver from its chat's key and first
        event (the running gateway asks in the chat); ``approver`` when omitted.
    :param session_options: more keyword arguments for each :class:`Session`.
    """

    def __init__(
        self,
        pm: PluginManager,
        model: ModelProvider | None = None,
        *,
        approver: Approver | None = None,
        approver_for: Callable[[str, _hbase.MessageEvent], Approver] | None = None,
        group_sessions_per_user: bool = True,
        thread_sessions_per_user: bool = False,
        **session_options: Any,
    ) -> None:
        if model is None:
            from hermes_hooks.host.runtime import load_model

            model = load_model(pm)
        self.pm = pm
        self.model = model
        self.hooks = Hooks(pm)
        self.approver = approver or deny_all
        self.approver_for = approver_for
        self.sessions = SessionStore(
            self._new_session,
            group_sessions_per_user=group_sessions_per_user,
            thread_sessions_per_user=thread_sessions_per_user,
        )
        self._options = session_options
        set_active_model(pm, model)  # what ctx.llm runs on while the gateway is up

    def _new_session(self, key: str, event: _hbase.MessageEvent) -> Session:
        session = Session(
            self.pm,
            self.model,
            approver=self.approver_for(key, event) if self.approver_for else self.approver,
            platform=event.source.platform.value,
            surface="gateway",
            sender_id=event.source.user_id or event.source.chat_id,
            attach=False,
            **self._options,
        )
        from hermes_hooks.host.rooms import attach_room

        attach_room(session, event.source, key)  # a group chat: on_room_member_activity
        return session

    def dispatch(self, event: MessageEvent | _hbase.MessageEvent) -> DispatchOutcome:
        """Decide, then route one inbound message; return what happened to it.

        ``event`` is this module's :class:`MessageEvent` or Hermes' own; the hook always gets
        Hermes' (a ``rewrite`` is copied back onto a short event too).
        """
        with self.pm.activate():
            if isinstance(event, MessageEvent):
                hermes = event.to_hermes()
                outcome = self._dispatch(hermes, event)
                event.text = hermes.text
                return outcome
            return self._dispatch(event, None)

    def decide(self, event: _hbase.MessageEvent) -> tuple[str, str | None]:
        """Run ``pre_gateway_dispatch`` on ``event`` (applying a ``rewrite``); return the
        action (``skip``, ``rewrite``, ``allow``) and the skip's reason."""
        if event.internal:
            return "allow", None
        decision = self.hooks.pre_gateway_dispatch(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            event=event,
            gateway=self,
            session_store=self.sessions,
        )
        if decision.action == "skip":
            return "skip", decision.reason
        if decision.action == "rewrite" and decision.text is not None:
            event.text = decision.text
            return "rewrite", None
        return "allow", None

    def route(self, event: _hbase.MessageEvent) -> tuple[Session, list[str]]:
        """Send ``event``'s text to its chat's session; return the session and its replies."""
        session = self.sessions.get_or_create(event)
        if event.internal and not event.allow_gateway_control:
            # A host or plugin message (inject_message) is never a slash command, as in Hermes.
            with self.pm.activate():
                results = [session.run_turn(event.text), *session.run_pending()]
            return session, [result.text for result in results]
        replies = session.send(event.text)
        return session, [reply.text for reply in replies]

    def _dispatch(self, event: _hbase.MessageEvent, short: MessageEvent | None) -> DispatchOutcome:
        original = event.text
        action, reason = self.decide(event)
        if action == "skip":
            return DispatchOutcome("skipped", short, text=original, reason=reason)
        session, replies = self.route(event)
        return DispatchOutcome(
            "replied",
            short,
            text=event.text,
            rewritten=event.text != original,
            replies=tuple(replies),
            session_id=session.session_id,
        )

    def replay(self, lines: Iterable[str]) -> Iterator[DispatchOutcome]:
        """Dispatch the events of JSON lines in order (blank lines and ``#`` comments skipped)."""
        for number, item in read_events(lines):
            if isinstance(item, MessageEvent):
                yield self.dispatch(item)
            else:
                yield DispatchOutcome("invalid", None, reason=f"line {number}: {item}")

    def shutdown(self, reason: str = "shutdown") -> None:
        """Close every session; ``on_session_finalize`` fires for each."""
        self.sessions.close_all(reason)
        if get_active_model(self.pm) is self.model:
            set_active_model(self.pm, None)


def read_events(lines: Iterable[str]) -> Iterator[tuple[int, MessageEvent | str]]:
    """Yield ``(line number, event)`` per JSON line, or ``(line number, error)`` for a bad one."""
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            yield number, MessageEvent.from_mapping(json.loads(text))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError too
            yield number, f"not a message event: {exc}"

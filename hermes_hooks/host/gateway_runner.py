"""``GatewayRunner``: the platforms' adapters on one asyncio loop, the agent behind them.

``hermes gateway run`` builds one. For every enabled platform (``gateway.platforms.<name>``
in ``config.yaml``, or enabled from the environment by its plugin's ``env_enablement_fn``)
the registry builds the adapter (``check_fn``, ``ensure_deps_fn``, ``validate_config``, the
factory); a supervisor task per platform connects it within ``connect_timeout`` and, when the
connection fails or is lost, reconnects after ``min(base * 2**(n-1), cap)`` seconds (Hermes'
30 s doubling, capped at 300 s). A platform that cannot come up is reported in the runtime
status and retried; the others keep running. A non-retryable failure (bad config, lock held
elsewhere) stops that platform's retries.

Each inbound message runs ``pre_gateway_dispatch``, then the platform's authorization (its
``allowed_users_env`` / ``allow_all_env``, ``GATEWAY_ALLOWED_USERS``,
``GATEWAY_ALLOW_ALL_USERS``, or a user approved through ``hermes pairing``; an unknown user
in a direct chat gets a pairing code, as in Hermes), then a turn of the chat's session on a
worker thread (a bounded pool: the loop never blocks, other chats go on). A reply finished
while its platform is reconnecting waits for the connection (at most ``drain_timeout``)
instead of being lost.
:meth:`request_stop` (SIGINT/SIGTERM under the CLI) stops taking messages, waits for the
turns in flight (at most ``drain_timeout``), disconnects every adapter and closes every
session.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import attrs

from hermes_hooks.compat import (
    gateway_config as _hconfig,
    gateway_drain_control,
    gateway_run as _hrun,
    gateway_status as _hstatus,
    tools_approval,
)
from hermes_hooks.compat.agent_async_utils import safe_schedule_threadsafe
from hermes_hooks.compat.gateway_pairing import PairingStore
from hermes_hooks.compat.gateway_platforms_base import (
    BasePlatformAdapter,
    MessageEvent,
    MessageType,
)
from hermes_hooks.compat.gateway_session import SessionSource
from hermes_hooks.host import gateway_approvals, gateway_authz
from hermes_hooks.host.gateway import Gateway
from hermes_hooks.registries.platforms import AdapterUnavailable

if TYPE_CHECKING:
    from hermes_hooks.backends.models import ModelProvider
    from hermes_hooks.host.approval import Approver
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["GatewayRunner", "PlatformState", "backoff_delay"]

logger = logging.getLogger(__name__)

PAIRING_CODE_TEXT = (
    "Hi~ I don't recognize you yet!\n\n"
    "Here's your pairing code: `{code}`\n\n"
    "Ask the bot owner to run:\n"
    "`hermes pairing approve {platform} {code}`"
)
"""What an unknown user gets in a direct chat (Hermes' words): a pairing code to pass on."""

PAIRING_BUSY_TEXT = "Too many pairing requests right now~ Please try again later!"
"""The answer when no code can be issued (3 pending, or approvals locked), as in Hermes."""


DRAIN_POLL_SECONDS: Final = 1.0
DRAINING_TEXT: Final = (
    "⏳ This agent is draining for a maintenance action and isn't accepting new turns right "
    "now. It'll be back in a moment — please resend shortly."
)


def backoff_delay(attempt: int, base: float, cap: float) -> float:
    """Return the wait before reconnection ``attempt`` (1-based): ``base`` doubled each time,
    never more than ``cap``."""
    return float(min(base * (2 ** max(attempt - 1, 0)), cap))


@attrs.define
class PlatformState:
    """What ``hermes gateway status`` shows of one platform."""

    name: str
    state: str = "pending"
    error_code: str | None = None
    error_message: str | None = None
    attempts: int = 0
    next_retry_in: float | None = None
    messages: int = 0
    last_error_code: str | None = None


class GatewayRunner:
    """Runs the enabled platforms (see the module's description).

    :param pm: the plugin manager, with the platform plugins loaded.
    :param model: the model every session uses (``config.yaml``'s when omitted).
    :param config: the gateway config; ``load_gateway_config()`` of ``pm``'s home by default.
    :param max_workers: the turns that may run at once (one thread each).
    """

    def __init__(
        self,
        pm: PluginManager,
        model: ModelProvider | None = None,
        *,
        config: _hconfig.GatewayConfig | None = None,
        max_workers: int = 16,
        **session_options: Any,
    ) -> None:
        self.pm = pm
        with pm.activate():
            self.config = config or _hconfig.load_gateway_config()
        self.gateway = Gateway(
            pm,
            model,
            approver_for=self._approver_for,
            group_sessions_per_user=self.config.group_sessions_per_user,
            thread_sessions_per_user=self.config.thread_sessions_per_user,
            **session_options,
        )
        self.adapters: dict[str, BasePlatformAdapter] = {}
        self.states: dict[str, PlatformState] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="hermes-gateway-turn"
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._stopping = False
        self._connected: dict[str, asyncio.Event] = {}
        self._lost: dict[str, asyncio.Event] = {}
        self._supervisors: list[asyncio.Task[None]] = []
        self._last_chat: tuple[str, str, str] | None = None  # platform, chat id, session key
        self._origins: dict[str, tuple[str, SessionSource]] = {}  # session key: platform, source
        self._previous_sink: Callable[[str, str], bool] | None = None
        self._approval_keys: set[str] = set()  # the chats whose approvals are asked in them
        self.draining = False
        """An external drain is on (the home's ``.drain_request.json``): no new turns."""

    # -- life cycle -------------------------------------------------------------------------------

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop the gateway runs on, while it runs."""
        return self._loop

    @property
    def stopping(self) -> bool:
        """Whether the gateway is stopping (no new turns, no reconnections)."""
        return self._stopping

    def request_stop(self) -> None:
        """Ask the gateway to stop (thread-safe; what SIGINT/SIGTERM call)."""
        loop, stop = self._loop, self._stop
        if loop is None or stop is None:
            self._stopping = True
            return
        loop.call_soon_threadsafe(self._begin_stop)

    def _begin_stop(self) -> None:
        self._stopping = True
        if self._stop is not None:
            self._stop.set()
        for event in self._lost.values():
            event.set()  # wake supervisors waiting on a connection

    async def run(self, *, ready: Callable[[], None] | None = None) -> int:
        """Run until :meth:`request_stop`; return the exit status (0 for a clean stop)."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if self._stopping:
            self._stop.set()
        self._status(gateway_state="starting")
        self._previous_sink = self.pm.message_sink
        self.pm.message_sink = self._inject
        self.pm.gateway_injector = self.inject_into_session
        _hrun.set_running_gateway(self)  # gateway.run._gateway_runner_ref() for plugins
        try:
            for platform in self.config.platforms:
                cfg = self.config.platforms[platform]
                if cfg.enabled:
                    self._start_platform(platform.value, cfg)
            if not self.states:
                logger.warning("gateway: no platform is enabled (gateway.platforms.<name>)")
            self._status(gateway_state="running")
            from hermes_hooks.host.platform_actions import install_sink

            undo_actions = install_sink(self.pm, self.adapters)  # ctx.platform_actions → adapters
            watcher = asyncio.create_task(self._watch_drain())
            try:
                if ready is not None:
                    ready()
                await self._stop.wait()
            finally:
                watcher.cancel()
                undo_actions()
        finally:
            await self._shutdown()
        return 0

    def _start_platform(self, name: str, cfg: _hconfig.PlatformConfig) -> None:
        state = self.states[name] = PlatformState(name)
        try:
            with self.pm.activate():
                adapter = self.pm.platforms.create_adapter(name, cfg)
        except AdapterUnavailable as exc:
            self._set_state(state, "unavailable", "unavailable", exc.reason)
            logger.error("gateway: %s", exc)
            return
        if not isinstance(adapter, BasePlatformAdapter):
            self._set_state(
                state,
                "unavailable",
                "bad_adapter",
                f"the factory returned {type(adapter).__name__}, not an adapter",
            )
            return
        self.adapters[name] = adapter
        self._connected[name] = asyncio.Event()
        self._lost[name] = asyncio.Event()
        adapter.set_message_handler(lambda event: self._handle_message(name, adapter, event))
        adapter.set_fatal_error_handler(lambda _adapter: self._on_fatal(name))
        adapter.set_platform_event_handler(
            lambda event, source: self._on_platform_event(name, event, source)
        )
        adapter.set_authorization_check(lambda source: self.is_authorized(name, source))
        adapter.set_session_store(self.gateway.sessions)
        adapter._delivery_error_handler = lambda exc, where: self._on_delivery_error(
            name, exc, where
        )
        self._supervisors.append(
            asyncio.create_task(self._supervise(name, adapter), name=f"gateway-{name}")
        )

    def _on_fatal(self, name: str) -> None:
        connected = self._connected.get(name)
        if connected is not None:
            connected.clear()
        lost = self._lost.get(name)
        if lost is not None:
            lost.set()

    async def _supervise(self, name: str, adapter: BasePlatformAdapter) -> None:
        state = self.states[name]
        connected, lost = self._connected[name], self._lost[name]
        while not self._stopping:
            state.attempts += 1
            self._set_state(state, "connecting", None, None)
            ok = await self._connect_once(name, adapter)
            if ok:
                state.attempts = 0
                self._set_state(state, "connected", None, None)
                connected.set()
                await lost.wait()
                lost.clear()
                connected.clear()
                if self.stopping:
                    return
                logger.warning(
                    "gateway: %s lost its connection (%s)",
                    name,
                    adapter.fatal_error_message or "closed",
                )
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(adapter.disconnect(), timeout=10)
                state.attempts = 1
            if adapter.has_fatal_error and not adapter.fatal_error_retryable:
                self._set_state(
                    state, "fatal", adapter.fatal_error_code, adapter.fatal_error_message
                )
                logger.error("gateway: %s stopped: %s", name, adapter.fatal_error_message)
                return
            delay = backoff_delay(
                state.attempts,
                self.config.reconnect_backoff_base,
                self.config.reconnect_backoff_cap,
            )
            state.next_retry_in = delay
            self._set_state(
                state,
                "retrying",
                adapter.fatal_error_code or state.error_code,
                adapter.fatal_error_message or state.error_message,
            )
            assert self._stop is not None
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=delay)
            state.next_retry_in = None

    async def _connect_once(self, name: str, adapter: BasePlatformAdapter) -> bool:
        state = self.states[name]
        timeout = self.config.connect_timeout
        try:
            with self.pm.activate():
                ok = await asyncio.wait_for(adapter.connect(), timeout=timeout)
        except TimeoutError:
            self._set_state(
                state, "retrying", "connect_timeout", f"no connection within {timeout:g} s"
            )
            logger.error("gateway: %s did not connect within %g s", name, timeout)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(adapter.disconnect(), timeout=5)
            adapter._fatal_error_code = None
            adapter._fatal_error_message = None
            adapter._fatal_error_retryable = True
            return False
        except Exception as exc:
            self._count(name, "connect", exc)
            self._set_state(state, "retrying", "connect_raised", f"{type(exc).__name__}: {exc}")
            logger.error("gateway: %s connect() raised %s: %s", name, type(exc).__name__, exc)
            return False
        if not ok:
            self._set_state(
                state,
                "retrying",
                adapter.fatal_error_code or "connect_failed",
                adapter.fatal_error_message or "connect() returned False",
            )
            return False
        return True

    async def _shutdown(self) -> None:
        self._stopping = True
        self._status(gateway_state="stopping")
        for key in sorted(self._approval_keys):  # a turn waiting for an answer is denied now
            tools_approval.unregister_gateway_notify(key)
        self._approval_keys.clear()
        timeout = self.config.drain_timeout
        adapters = list(self.adapters.items())
        drained = await asyncio.gather(
            *(adapter.wait_idle(timeout) for _, adapter in adapters), return_exceptions=True
        )
        for (name, adapter), idle in zip(adapters, drained, strict=True):
            if idle is not True:
                logger.warning("gateway: %s still had turns after %g s; cancelling", name, timeout)
                with contextlib.suppress(Exception):
                    await adapter.cancel_background_tasks()
        for task in self._supervisors:
            task.cancel()
        await asyncio.gather(*self._supervisors, return_exceptions=True)
        for name, adapter in adapters:
            try:
                await asyncio.wait_for(adapter.disconnect(), timeout=10)
            except Exception as exc:
                self._count(name, "disconnect", exc)
            self._set_state(self.states[name], "stopped", None, None)
        self.pm.message_sink = self._previous_sink
        if self.pm.gateway_injector == self.inject_into_session:
            self.pm.gateway_injector = None
        _hrun.set_running_gateway(None, only_if=self)
        await asyncio.get_running_loop().run_in_executor(self._pool, self.gateway.shutdown)
        self._pool.shutdown(wait=True)
        self._status(gateway_state="stopped", exit_reason="stopped")

    async def _watch_drain(self) -> None:
        """Follow the home's drain marker (``POST /api/gateway/drain``), as Hermes' gateway
        does: present, new turns are refused and the status says ``draining``; removed, the
        gateway takes turns again. The process stays up either way."""
        home = self.pm.hermes_home
        while not self._stopping:
            try:
                asked = await asyncio.to_thread(gateway_drain_control.drain_requested, home=home)
            except Exception as exc:  # a passing fault must not stop the gateway
                logger.debug("gateway: drain marker unreadable: %s", exc)
                asked = self.draining
            if asked != self.draining and not self._stopping:
                self.draining = asked
                logger.info(
                    "gateway: external drain %s",
                    "engaged: refusing new turns" if asked else "released: taking turns again",
                )
                self._status(gateway_state="draining" if asked else "running")
            await asyncio.sleep(DRAIN_POLL_SECONDS)

    # -- messages ---------------------------------------------------------------------------------

    def is_authorized(self, name: str, source: SessionSource | None) -> bool:
        """Whether ``source``'s user may talk to the agent on platform ``name`` (Hermes' rules:
        :func:`hermes_hooks.host.gateway_authz.is_authorized`)."""
        return gateway_authz.is_authorized(self.pm, name, source, self.adapters.get(name))

    async def _handle_message(
        self, name: str, adapter: BasePlatformAdapter, event: MessageEvent
    ) -> str | None:
        if self._stopping:
            return None
        self.states[name].messages += 1
        assert self._loop is not None
        reply = await self._loop.run_in_executor(self._pool, self._turn, name, event)
        if reply is None:
            return None
        if not adapter.is_connected and not self._stopping:
            # The connection dropped during the turn: deliver after the reconnection.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(
                    self._connected[name].wait(), timeout=self.config.drain_timeout
                )
        return reply

    def _turn(self, name: str, event: MessageEvent) -> str | None:
        """On a worker: the hook, authorization, then the chat's session."""
        with self.pm.activate():
            action, _reason = self.gateway.decide(event)
            if action == "skip":
                return None
            if not self.is_authorized(name, event.source):
                return self._unauthorized(name, event.source)
            key = self.gateway.sessions.key_for(event)
            answer = gateway_approvals.approval_reply(event, key)
            if answer is not None:  # /approve, /deny: the waiting turn resumes
                return answer
            if self.draining and not event.internal:
                return DRAINING_TEXT
            self._last_chat = (name, event.source.chat_id, key)
            self._origins[key] = (name, event.source)
            _session, replies = self.gateway.route(event)
        return "\n\n".join(reply for reply in replies if reply) or None

    def _approver_for(self, key: str, event: MessageEvent) -> Approver:
        """A new chat session's approver: the request is shown in the chat (the adapter's
        buttons, or Hermes' text) and waits for the chat's ``/approve`` or ``/deny``
        (:mod:`hermes_hooks.host.gateway_approvals`)."""
        adapter = self.adapters.get(event.source.platform.value)
        loop = self._loop
        if adapter is None or loop is None:
            return self.gateway.approver
        source = event.source
        metadata = {"thread_id": source.thread_id} if source.thread_id else None
        tools_approval.register_gateway_notify(
            key, gateway_approvals.notifier(loop, adapter, source.chat_id, key, metadata)
        )
        self._approval_keys.add(key)
        return tools_approval.GatewayApprover(session_key=key)

    def _unauthorized(self, name: str, source: SessionSource) -> str | None:
        """Hermes' answer to an unknown user: in a direct chat, when the behaviour is ``pair``
        (:func:`hermes_hooks.host.gateway_authz.unauthorized_dm_behavior`), a pairing code, at
        most one answer per user per 10 minutes; nothing in a group or under ``ignore``."""
        logger.warning(
            "gateway: unauthorized user %s (%s) on %s", source.user_id, source.user_name, name
        )
        if source.chat_type != "dm":
            return None
        behavior = gateway_authz.unauthorized_dm_behavior(
            self.pm, self.config, name, self.adapters.get(name)
        )
        if behavior != "pair":
            return None
        user_id = str(source.user_id or source.chat_id or "")
        if not user_id:
            return None
        with self.pm.activate():
            store = PairingStore()
            if store._is_rate_limited(name, user_id):  # one answer per user per window
                return None
            code = store.generate_code(name, user_id, source.user_name or "")
            if code is None:
                store._record_rate_limit(name, user_id)
                return PAIRING_BUSY_TEXT
        return PAIRING_CODE_TEXT.format(code=code, platform=name)

    def inject_into_session(self, *, session_key: str, content: str, plugin_id: str) -> bool:
        """``ctx.inject_message(session_key=...)``: a turn of that session, answered in its
        chat, as Hermes routes it. The session must be one this gateway served, its user still
        authorized and its platform's adapter running; the message then enters the adapter
        like an inbound one (queued behind a turn in progress), marked internal (no
        ``pre_gateway_dispatch``, never a slash command). Thread-safe; ``False`` when refused."""
        loop = self._loop
        if self._stopping or loop is None or loop.is_closed():
            return False
        origin = self._origins.get(session_key)
        if origin is None:
            logger.warning(
                "gateway: %s injected into unknown session %s; dropped", plugin_id, session_key
            )
            return False
        name, source = origin
        with self.pm.activate():
            authorized = self.is_authorized(name, source)
        adapter = self.adapters.get(name)
        if not authorized or adapter is None:
            logger.warning(
                "gateway: %s injection into %s refused (%s)",
                plugin_id,
                session_key,
                "no longer authorized" if not authorized else "its platform is not running",
            )
            return False
        session = self.gateway.sessions.get(session_key)
        event = MessageEvent(
            text=content,
            message_type=MessageType.TEXT,
            source=source,
            internal=True,
            allow_gateway_control=False,
            metadata={
                "hermes_plugin_id": plugin_id,
                "hermes_plugin_injection": True,
                "gateway_session_key": session_key,
                "gateway_session_id": session.session_id if session is not None else None,
                "gateway_session_strict": True,
            },
        )
        future = safe_schedule_threadsafe(
            adapter.handle_message(event),
            loop,
            logger=logger,
            log_message=f"gateway: {plugin_id}'s injection into {session_key} not scheduled",
            log_level=logging.WARNING,
        )
        return future is not None

    def _inject(self, content: str, role: str = "user") -> bool:
        """``ctx.inject_message`` outside a turn: into the chat that spoke last; its reply is
        sent to that chat."""
        chat = self._last_chat
        loop = self._loop
        if chat is None or loop is None or self._stopping:
            return False
        name, chat_id, key = chat
        session = self.gateway.sessions.get(key)
        if session is None or not session.inject(content, role):
            return False
        if not session.is_running:
            loop.call_soon_threadsafe(
                lambda: asyncio.ensure_future(self._run_injected(name, chat_id, key))
            )
        return True

    async def _run_injected(self, name: str, chat_id: str, key: str) -> None:
        session = self.gateway.sessions.get(key)
        adapter = self.adapters.get(name)
        if session is None or adapter is None or self._loop is None:
            return
        replies = await self._loop.run_in_executor(self._pool, session.run_pending)
        for reply in replies:
            if reply.text:
                try:
                    await adapter.send(chat_id, reply.text)
                except Exception as exc:
                    self._on_delivery_error(name, exc, "send")

    async def _on_platform_event(
        self, name: str, event: dict[str, Any], source: SessionSource | None
    ) -> None:
        if not self.is_authorized(name, source):
            return
        raw = event.get("payload")
        platform = str(event.get("platform") or name)
        event_type = str(event.get("event_type") or "")
        payload: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
        assert self._loop is not None

        def fire() -> None:
            with self.pm.activate():
                self.gateway.hooks.gateway_platform_event(
                    platform=platform, event_type=event_type, payload=payload
                )

        try:
            await self._loop.run_in_executor(self._pool, fire)
        except Exception:
            logger.debug("gateway_platform_event dispatch failed", exc_info=True)

    # -- bookkeeping ------------------------------------------------------------------------------

    def _owner(self, name: str) -> str | None:
        entry = self.pm.platforms.get(name)
        return entry.owner if entry is not None else None

    def _count(self, name: str, where: str, exc: BaseException) -> None:
        owner = self._owner(name)
        if owner is not None:
            self.pm.count_failure(
                owner, f"platform {name!r} {where}", f"{type(exc).__name__}: {exc}"
            )

    def _on_delivery_error(self, name: str, exc: BaseException, where: str) -> None:
        logger.error("gateway: %s %s raised %s: %s", name, where, type(exc).__name__, exc)
        self._count(name, where, exc)

    def _set_state(
        self, state: PlatformState, value: str, code: str | None, message: str | None
    ) -> None:
        state.state, state.error_code, state.error_message = value, code, message
        if code is not None:
            state.last_error_code = code
        extra: dict[str, Any] = {"attempts": state.attempts}
        if state.next_retry_in is not None:
            extra["next_retry_at"] = time.time() + state.next_retry_in
        with self.pm.activate():
            try:
                _hstatus.write_runtime_status(
                    platform=state.name,
                    platform_state=value,
                    error_code=code,
                    error_message=message,
                    **extra,
                )
            except OSError:
                logger.debug("could not write the runtime status", exc_info=True)

    def _status(self, **fields: Any) -> None:
        with self.pm.activate():
            try:
                _hstatus.write_runtime_status(**fields)
            except OSError:
                logger.debug("could not write the runtime status", exc_info=True)

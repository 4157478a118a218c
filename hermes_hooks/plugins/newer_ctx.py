"""The ``ctx`` members Hermes added since the seeds (its ``hermes_cli/plugins.py`` today).

``set_config``, ``state``, ``spawn_task``, ``emit``/``subscribe``,
``register_system_prompt_section``, ``register_approval_transport``,
``register_redaction_patterns``, ``register_auxiliary_task``, ``has_capability``,
``register_context_reference``, ``platform_actions`` and ``subagent_lifecycle``, mixed into
:class:`~hermes_hooks.plugins.context.PluginContext`. What they register is kept per manager
(:func:`extras`) and removed when the plugin unloads. A bad argument raises ``ValueError`` or
``TypeError`` naming the plugin, what was expected and what was found, as in Hermes, and
refuses that entry alone; the rest of the plugin loads.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import logging
import os
import queue
import re
import tempfile
import threading
import types
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

if TYPE_CHECKING:
    import asyncio

    from hermes_hooks.plugins.manager import PluginManager
    from hermes_hooks.plugins.manifest import PluginManifest

__all__ = [
    "BUILTIN_REFERENCE_PREFIXES",
    "ActionResult",
    "MAX_SECTION_CHARS",
    "MAX_SECTIONS",
    "MAX_SECTIONS_TOTAL_CHARS",
    "ManagerExtras",
    "NewerContextMembers",
    "PluginState",
    "extras",
    "install_log_redaction",
    "redact_everywhere",
    "redact_text",
    "redaction_patterns",
    "render_system_prompt_sections",
]

logger = logging.getLogger(__name__)

MAX_SECTION_CHARS: Final = 4_000
MAX_SECTIONS: Final = 32
MAX_SECTIONS_TOTAL_CHARS: Final = 8_000
SECTION_POSITIONS: Final = frozenset({"after_memory"})
_SECTION_ID: Final = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
SECTIONS_START: Final = "<!-- hermes-plugin-sections:start -->"
SECTIONS_END: Final = "<!-- hermes-plugin-sections:end -->"
HERMES_EVENT_NAMESPACE: Final = "hermes"
EVENT_PENDING_CAP: Final = 64
EVENT_DEPTH_CAP: Final = 8
_TRANSPORT_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
BUILTIN_AUX_TASKS: Final = frozenset(
    {"vision", "web_extract", "compression", "session_search", "approval", "title", "moa"}
)
"""The auxiliary tasks the host itself has: a plugin may not take their keys."""
BUILTIN_REFERENCE_PREFIXES: Final = frozenset({"diff", "staged", "file", "folder", "git", "url"})


# -- what the members keep, per manager ------------------------------------------------------------


@attrs.define
class Section:
    """One registered system prompt section."""

    id: str
    content: str | Callable[[Mapping[str, Any]], str]
    position: str
    max_chars: int
    plugin: str


class EventBus:
    """Plugin events: one worker delivers them in order, so an emitter never waits."""

    def __init__(self) -> None:
        self.subscriptions: dict[str, list[tuple[str, Callable[..., Any]]]] = {}
        self.lock = threading.Lock()
        self.queue: queue.Queue[tuple[str, dict[str, Any], tuple[Any, ...], int]] = queue.Queue(
            EVENT_PENDING_CAP
        )
        self.depth = threading.local()
        self.worker: threading.Thread | None = None

    def emit(self, event: str, payload: dict[str, Any]) -> int:
        depth = getattr(self.depth, "value", 0)
        if depth >= EVENT_DEPTH_CAP:
            logger.warning("event %r dropped: subscribers emitted %d deep", event, depth)
            return 0
        with self.lock:
            subscribers = tuple(self.subscriptions.get(event, ()))
            if not subscribers:
                return 0
            try:
                self.queue.put_nowait((event, dict(payload), subscribers, depth + 1))
            except queue.Full:
                logger.warning("event %r dropped: %d events are pending", event, EVENT_PENDING_CAP)
                return 0
            if self.worker is None or not self.worker.is_alive():
                self.worker = threading.Thread(target=self._run, name="plugin-events", daemon=True)
                self.worker.start()
        return len(subscribers)

    def _run(self) -> None:
        while True:
            event, payload, subscribers, depth = self.queue.get()
            self.depth.value = depth
            for owner, callback in subscribers:
                try:
                    result = callback(**copy.deepcopy(payload))
                    if inspect.iscoroutine(result):
                        import asyncio

                        asyncio.run(result)
                except Exception:
                    logger.warning(
                        "plugin %r: subscriber of %r raised", owner, event, exc_info=True
                    )
            self.queue.task_done()

    def wait(self, timeout: float = 5.0) -> bool:
        """Wait until every queued event was delivered (for tests and shutdown)."""
        done = threading.Event()

        def join() -> None:
            self.queue.join()
            done.set()

        threading.Thread(target=join, daemon=True).start()
        return done.wait(timeout)

    def remove_owner(self, owner: str) -> None:
        with self.lock:
            for event, entries in list(self.subscriptions.items()):
                self.subscriptions[event] = [e for e in entries if e[0] != owner]


@attrs.define
class ManagerExtras:
    """What the newer members registered on one manager."""

    events: EventBus = attrs.Factory(EventBus)
    sections: dict[str, Section] = attrs.Factory(dict)
    approval_transports: dict[str, tuple[str, Callable[..., Any]]] = attrs.Factory(dict)
    redaction_patterns: list[tuple[str, re.Pattern[str]]] = attrs.Factory(list)
    aux_tasks: dict[str, dict[str, Any]] = attrs.Factory(dict)
    context_references: dict[str, tuple[str, Any]] = attrs.Factory(dict)
    platform_action_sink: Callable[[str, str, Mapping[str, Any]], Mapping[str, Any]] | None = None
    #: Set by the host: the running session's subagents, as snapshots.
    subagent_lookup: Callable[[], Iterable[Mapping[str, Any]]] | None = None

    def remove_owner(self, owner: str) -> None:
        """Remove everything ``owner`` registered (its plugin unloads)."""
        self.events.remove_owner(owner)
        for table in (self.sections, self.aux_tasks):
            for key in [k for k, v in table.items() if _owner_of(v) == owner]:
                del table[key]
        for mapping in (self.approval_transports, self.context_references):
            for key in [k for k, v in mapping.items() if v[0] == owner]:
                del mapping[key]
        self.redaction_patterns[:] = [p for p in self.redaction_patterns if p[0] != owner]


def _owner_of(value: object) -> object:
    return value.plugin if isinstance(value, Section) else value.get("plugin")  # type: ignore[attr-defined]


_EXTRAS: weakref.WeakKeyDictionary[PluginManager, ManagerExtras] = weakref.WeakKeyDictionary()
_EXTRAS_LOCK: Final = threading.Lock()


def extras(pm: PluginManager) -> ManagerExtras:
    """Return what the newer members registered on ``pm``."""
    with _EXTRAS_LOCK:
        found = _EXTRAS.get(pm)
        if found is None:
            found = _EXTRAS[pm] = ManagerExtras()
        return found


def render_system_prompt_sections(pm: PluginManager, session_info: Mapping[str, Any]) -> str:
    """Render the plugins' sections for a new session (sorted by id, bounded, failing open).

    A section that raises, is not a string, is empty, is longer than its ``max_chars``, or
    would take the whole past :data:`MAX_SECTIONS_TOTAL_CHARS` (or :data:`MAX_SECTIONS`) is
    skipped with a warning naming it.
    """
    info = types.MappingProxyType(dict(session_info))
    blocks: list[str] = []
    total = len(SECTIONS_START) + len(SECTIONS_END) + 2
    for section in sorted(extras(pm).sections.values(), key=lambda s: s.id):
        try:
            value: object = section.content(info) if callable(section.content) else section.content
        except Exception as exc:
            logger.warning(
                "prompt section %s (%s) raised; skipped: %s", section.id, section.plugin, exc
            )
            continue
        if not isinstance(value, str):
            logger.warning(
                "prompt section %s (%s) is not text; skipped", section.id, section.plugin
            )
            continue
        if not value.strip():
            continue
        text = value.strip()
        if SECTIONS_START in text or SECTIONS_END in text or len(text) > section.max_chars:
            logger.warning(
                "prompt section %s (%s) is too long or malformed; skipped",
                section.id,
                section.plugin,
            )
            continue
        block = (
            f"## Plugin Context: {section.id}\n"
            f"<!-- hermes-plugin-section-chars:{len(text)} -->\n\n{text}"
        )
        if len(blocks) >= MAX_SECTIONS or total + len(block) + 2 > MAX_SECTIONS_TOTAL_CHARS:
            logger.warning(
                "prompt section %s (%s) is over the sessions' budget; skipped",
                section.id,
                section.plugin,
            )
            continue
        blocks.append(block)
        total += len(block) + 2
    if not blocks:
        return ""
    return f"{SECTIONS_START}\n" + "\n\n".join(blocks) + f"\n{SECTIONS_END}"


def redact_text(pm: PluginManager, text: str, replacement: str = "***") -> str:
    """Return ``text`` with every plugin-registered secret pattern replaced."""
    for _, pattern in extras(pm).redaction_patterns:
        text = pattern.sub(replacement, text)
    return text


def redaction_patterns() -> list[re.Pattern[str]]:
    """The patterns every live manager's plugins registered (Hermes' ``agent.redact`` is one
    process-wide table; here each manager keeps its own, and all of them apply)."""
    with _EXTRAS_LOCK:
        tables = [
            found.redaction_patterns
            for pm, found in _EXTRAS.items()
            if found.redaction_patterns and _redaction_on(pm)
        ]
    return [pattern for table in tables for _, pattern in list(table)]


def _redaction_on(pm: PluginManager) -> bool:
    """Hermes' ``security.redact_secrets: false`` turns redaction off, the plugins' too."""
    config = getattr(pm, "config", None)
    security = config.get("security") if isinstance(config, Mapping) else None
    return not (isinstance(security, Mapping) and security.get("redact_secrets") is False)


def redact_everywhere(text: str, replacement: str = "***") -> str:
    """Return ``text`` with every plugin-registered pattern of every live manager replaced:
    what every redaction of the host applies besides its own (the model transport's keys,
    the terminal's output, the log, approval requests)."""
    if not text:
        return text
    for pattern in redaction_patterns():
        try:
            text = pattern.sub(replacement, text)
        except Exception:  # a pathological pattern never breaks what it redacts
            continue
    return text


_LOG_REDACTION: list[bool] = []


def install_log_redaction() -> None:
    """Make every log record of the process go through the plugins' patterns (once).

    The record factory is wrapped, so the message is redacted when the record is made,
    whichever logger and handler it then goes to (Hermes redacts its logs with a formatter).
    """
    with _EXTRAS_LOCK:
        if _LOG_REDACTION:
            return
        _LOG_REDACTION.append(True)
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if not redaction_patterns():
            return record
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not format stays as it is
            return record
        redacted = redact_everywhere(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return record

    logging.setLogRecordFactory(factory)


# -- durable state ---------------------------------------------------------------------------------


class PluginState:
    """A plugin's durable JSON state in its home: ``$HERMES_HOME/plugin-state/<key>.json``.

    Every write is a read-modify-write under a file lock, replacing the file atomically, so two
    processes of the same profile never lose each other's keys and a crash never leaves it
    half-written. Values must be JSON (``TypeError`` otherwise).
    """

    def __init__(self, home: Path, plugin_id: str) -> None:
        self.path = home / "plugin-state" / f"{plugin_id.replace('/', '__')}.json"
        self.plugin_id = plugin_id

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ValueError(
                f"plugin {self.plugin_id!r}: state file {self.path} is unreadable: {exc}"
            ) from exc
        return data if isinstance(data, dict) else {}

    def _key(self, key: object) -> str:
        if not isinstance(key, str) or not key:
            raise ValueError(
                f"plugin {self.plugin_id!r}: a state key is a non-empty string, found {key!r}"
            )
        return key

    def get(self, key: str, default: Any = None) -> Any:
        """Return the value of ``key``, or ``default``."""
        return self._read().get(self._key(key), default)

    def all(self) -> dict[str, Any]:
        """Return every key and value."""
        return self._read()

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (JSON) under ``key``."""
        self.update({self._key(key): value})

    def update(self, values: Mapping[str, Any]) -> None:
        """Store several keys at once, atomically."""
        for key in values:
            self._key(key)
        try:
            json.dumps(dict(values))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"plugin {self.plugin_id!r}: state values must be JSON: {exc}") from exc
        with self._locked() as data:
            data.update(values)

    def delete(self, key: str) -> bool:
        """Remove ``key``; return whether it was there."""
        with self._locked() as data:
            return data.pop(self._key(key), _ABSENT) is not _ABSENT

    @contextlib.contextmanager
    def _locked(self) -> Any:
        import fcntl  # POSIX; imported where it is used, so the module imports anywhere

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a+", encoding="utf-8") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            data = self._read()
            yield data
            _write_json(self.path, data)


_ABSENT: Final = object()


def _write_json(path: Path, data: object) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# -- the members -----------------------------------------------------------------------------------


class ActionResult(dict[str, Any]):
    """What a ``ctx.platform_actions`` verb answers: ``{"ok": bool, ...}``, and awaitable, so
    that Hermes' ``await ctx.platform_actions.add_reaction(...)`` works as well as a plain
    call. A verb called on the gateway's own loop is scheduled there; awaiting the result
    waits for it (used without ``await`` it says ``{"ok": True, "scheduled": True}``)."""

    def __init__(self, fields: Mapping[str, Any], pending: Any = None) -> None:
        super().__init__(fields)
        self._pending = pending

    def __await__(self) -> Any:
        if self._pending is not None:
            outcome = yield from self._pending.__await__()
            self.clear()
            self.update(outcome)
            self._pending = None
        return self


class PlatformActions:
    """``ctx.platform_actions``: gateway actions gated by the ``gateway.platform_actions``
    capability; every verb answers ``{"ok": bool, ...}`` (Hermes' ``{"ok": False, "error":
    code, "detail"}`` on failure), is awaitable, and never raises.

    Under ``hermes gateway run`` the gateway installs the sink that reaches the platform's
    adapter (:mod:`hermes_hooks.host.platform_actions`); elsewhere there is none."""

    def __init__(self, context: NewerContextMembers) -> None:
        self._context = context

    def _act(self, verb: str, **arguments: Any) -> ActionResult:
        plugin = self._context._plugin_id
        if not self._context.has_capability("gateway.platform_actions"):
            return ActionResult(
                {
                    "ok": False,
                    "error": "capability_not_granted",
                    "detail": f"plugin {plugin!r} lacks the gateway.platform_actions capability",
                }
            )
        for name, value in arguments.items():
            if not isinstance(value, str) or not value.strip():
                return ActionResult(
                    {
                        "ok": False,
                        "error": "invalid_argument",
                        "detail": f"{verb}: {name} must be a non-empty string",
                    }
                )
        sink = extras(self._context._manager).platform_action_sink
        if sink is None:
            return ActionResult(
                {
                    "ok": False,
                    "error": "gateway_unavailable",
                    "detail": "no live gateway serves platform actions",
                }
            )
        try:
            answer = sink(plugin, verb, arguments)
        except Exception as exc:
            return ActionResult(
                {"ok": False, "error": "action_failed", "detail": f"{type(exc).__name__}: {exc}"}
            )
        if isinstance(answer, ActionResult):
            return answer
        return ActionResult({"ok": True, **dict(answer)})

    def add_reaction(
        self, platform: str, chat_id: str, message_id: str, emoji: str
    ) -> ActionResult:
        """React to a message with ``emoji``."""
        return self._act(
            "add_reaction", platform=platform, chat_id=chat_id, message_id=message_id, emoji=emoji
        )

    def set_thread_title(
        self, platform: str, chat_id: str, thread_id: str, title: str
    ) -> ActionResult:
        """Rename a thread (a forum topic)."""
        return self._act(
            "set_thread_title", platform=platform, chat_id=chat_id, thread_id=thread_id, title=title
        )


class SubagentLifecycle:
    """``ctx.subagent_lifecycle``: snapshots of the running session's subagents, never live ones."""

    def __init__(self, manager: PluginManager) -> None:
        self._manager = manager

    def list_active(self) -> list[dict[str, Any]]:
        """Return ``{"subagent_id", "role", "depth", "session_id"}`` for each running child."""
        lookup = extras(self._manager).subagent_lookup
        if lookup is None:
            return []
        try:
            return [dict(item) for item in lookup()]
        except Exception:  # a snapshot is a courtesy: never let it break the plugin
            logger.debug("subagent snapshot failed", exc_info=True)
            return []


class NewerContextMembers:
    """The members; :class:`~hermes_hooks.plugins.context.PluginContext` inherits them."""

    _manager: PluginManager
    _plugin_id: str
    manifest: PluginManifest

    def _owned(self) -> ManagerExtras:
        found = extras(self._manager)
        flag = f"_hermes_extras_cleanup_{id(found)}"
        if not getattr(self, flag, False):
            setattr(self, flag, True)
            self._manager.add_unload_callback(
                self._plugin_id, lambda: found.remove_owner(self._plugin_id)
            )
        return found

    # settings and state

    def set_config(self, key: str, value: Any) -> None:
        """Write ``plugins.entries.<plugin_id>.settings.<key>`` atomically in ``config.yaml``.

        :raises ValueError: ``key`` is not plugin-relative (as for :meth:`get_config`).
        :raises TypeError: ``value`` is not plain data (None, bool, number, str, list, dict).
        """
        from hermes_hooks.plugins.configfile import update_config
        from hermes_hooks.plugins.context import _config_segments

        segments = _config_segments(key, self._plugin_id)
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"plugin {self._plugin_id!r}: set_config({key!r}) needs plain data (None, bool, "
                f"number, str, list, dict), found {type(value).__name__}"
            ) from exc

        def write(config: dict[str, Any]) -> None:
            node = config
            for part in ("plugins", "entries", self._plugin_id, "settings", *segments[:-1]):
                child = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
            node[segments[-1]] = copy.deepcopy(value)

        update_config(self._manager.hermes_home, write)
        self._manager.reload_config()

    @property
    def state(self) -> PluginState:
        """This plugin's durable JSON state (per plugin and profile)."""
        return PluginState(self._manager.hermes_home, self._plugin_id)

    # tasks and events

    def spawn_task(
        self, coro: Coroutine[Any, Any, Any], *, name: str | None = None
    ) -> asyncio.Task[Any]:
        """Start ``coro`` as a supervised task on the running loop; unload cancels it.

        :raises TypeError: ``coro`` is not a coroutine.
        :raises RuntimeError: no event loop runs in this thread.
        """
        import asyncio

        if not asyncio.iscoroutine(coro):
            raise TypeError(
                f"plugin {self._plugin_id!r}: spawn_task expects a coroutine, found "
                f"{type(coro).__name__}"
            )
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            raise RuntimeError(
                f"plugin {self._plugin_id!r}: spawn_task needs a running event loop"
            ) from None
        task = loop.create_task(coro, name=name or f"plugin:{self._plugin_id}:task")

        def cancel() -> None:
            if not task.done():
                loop.call_soon_threadsafe(task.cancel)

        self._manager.add_unload_callback(self._plugin_id, cancel)
        return task

    def emit(self, event: str, payload: Mapping[str, Any] | None = None) -> int:
        """Publish ``<plugin_id>:<event>``; return the number of subscribers it was queued for.

        :raises ValueError: ``event`` is empty or has a ``:`` (the namespace is this plugin's;
            ``hermes:`` is the host's).
        :raises TypeError: ``payload`` is not a dict.
        """
        if not isinstance(event, str) or not event:
            raise ValueError(f"plugin {self._plugin_id!r}: emit() needs a non-empty event name")
        if ":" in event:
            raise ValueError(
                f"plugin {self._plugin_id!r} may not emit {event!r}: emit the bare name; the "
                f"namespace is forced to {self._plugin_id!r} and {HERMES_EVENT_NAMESPACE!r} is "
                "the host's"
            )
        if payload is not None and not isinstance(payload, Mapping):
            raise TypeError(f"plugin {self._plugin_id!r}: emit() payload must be a dict or None")
        return extras(self._manager).events.emit(f"{self._plugin_id}:{event}", dict(payload or {}))

    def subscribe(self, event: str, callback: Callable[..., Any]) -> None:
        """Call ``callback(**payload)`` for each ``<plugin_key>:<event>`` emitted (any plugin's).

        :raises ValueError: ``event`` is empty.
        :raises TypeError: ``callback`` is not callable.
        """
        if not isinstance(event, str) or not event:
            raise ValueError(
                f"plugin {self._plugin_id!r}: subscribe() needs a non-empty event name"
            )
        if not callable(callback):
            raise TypeError(f"plugin {self._plugin_id!r}: subscribe() callback must be callable")
        bus = self._owned().events
        with bus.lock:
            bus.subscriptions.setdefault(event, []).append((self._plugin_id, callback))

    # the prompt, approvals, redaction, auxiliary tasks, references

    def register_system_prompt_section(
        self,
        id: str,
        content: str | Callable[[Mapping[str, Any]], str],
        *,
        position: str = "after_memory",
        max_chars: int = MAX_SECTION_CHARS,
    ) -> None:
        """Add a bounded section frozen into each new session's system prompt.

        :raises ValueError: a bad id, position or ``max_chars``, or an id already registered.
        :raises TypeError: ``content`` is neither a string nor a callable.
        """
        if not isinstance(id, str) or not _SECTION_ID.fullmatch(id):
            raise ValueError(
                f"plugin {self._plugin_id!r}: system prompt section id must be 1-128 lowercase "
                f"letters, digits, '.', '_' or '-', found {id!r}"
            )
        if not isinstance(content, str) and not callable(content):
            raise TypeError(
                f"plugin {self._plugin_id!r}: section content must be a string or callable"
            )
        if position not in SECTION_POSITIONS:
            raise ValueError(
                f"plugin {self._plugin_id!r}: section position must be 'after_memory', found "
                f"{position!r}"
            )
        if (
            isinstance(max_chars, bool)
            or not isinstance(max_chars, int)
            or not 0 < max_chars <= MAX_SECTION_CHARS
        ):
            raise ValueError(
                f"plugin {self._plugin_id!r}: section max_chars must be 1 to {MAX_SECTION_CHARS}, "
                f"found {max_chars!r}"
            )
        sections = self._owned().sections
        if id in sections:
            raise ValueError(
                f"system prompt section {id!r} is already registered by plugin "
                f"{sections[id].plugin!r}"
            )
        sections[id] = Section(id, content, position, max_chars, self._plugin_id)

    def register_approval_transport(self, name: str, present_fn: Callable[..., Any]) -> None:
        """Register a way to put approvals to a person, chosen by ``security.approval.transport``.

        :raises ValueError: ``builtin``, a name outside ``[a-z0-9][a-z0-9_-]{0,63}``, or taken.
        :raises TypeError: ``present_fn`` is not callable.
        """
        clean = str(name).strip().lower()
        if clean == "builtin":
            raise ValueError("approval transport name 'builtin' is reserved")
        if not _TRANSPORT_NAME.fullmatch(clean):
            raise ValueError(
                f"approval transport name must match [a-z0-9][a-z0-9_-]{{0,63}}, found {name!r}"
            )
        if not callable(present_fn):
            raise TypeError("approval transport present_fn must be callable")
        transports = self._owned().approval_transports
        if clean in transports:
            raise ValueError(
                f"approval transport {clean!r} is already registered by {transports[clean][0]!r}"
            )
        transports[clean] = (self._plugin_id, present_fn)

    def register_redaction_patterns(self, patterns: Iterable[str]) -> int:
        """Add secret patterns (regexes) to the host's redaction; return how many were accepted.

        A pattern that does not compile, or does not start with at least two literal characters
        (so it cannot match everything), is skipped with a warning.
        """
        if isinstance(patterns, str):
            patterns = [patterns]
        accepted = 0
        table = self._owned().redaction_patterns
        for raw in patterns:
            if not isinstance(raw, str) or len(re.match(r"[A-Za-z0-9_\-]*", raw).group()) < 2:  # type: ignore[union-attr]
                logger.warning(
                    "plugin %r: redaction pattern %r needs 2+ literal leading characters; skipped",
                    self._plugin_id,
                    raw,
                )
                continue
            try:
                compiled = re.compile(raw)
            except re.error as exc:
                logger.warning(
                    "plugin %r: redaction pattern %r does not compile (%s); skipped",
                    self._plugin_id,
                    raw,
                    exc,
                )
                continue
            table.append((self._plugin_id, compiled))
            accepted += 1
        if accepted:
            install_log_redaction()
        return accepted

    def register_auxiliary_task(
        self,
        key: str,
        *,
        display_name: str,
        description: str,
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        """Register an auxiliary model task with its own ``auxiliary.<key>`` settings.

        :raises ValueError: an empty or invalid key, a built-in task's key, or another plugin's.
        """
        if not isinstance(key, str) or not key or not all(c.isalnum() or c == "_" for c in key):
            raise ValueError(
                f"plugin {self._plugin_id!r}: auxiliary task key must be letters, digits and '_', "
                f"found {key!r}"
            )
        if key in BUILTIN_AUX_TASKS:
            raise ValueError(
                f"plugin {self._plugin_id!r} cannot register auxiliary task {key!r}: a built-in "
                f"task has it"
            )
        tasks = self._owned().aux_tasks
        existing = tasks.get(key)
        if existing is not None and existing["plugin"] != self._plugin_id:
            raise ValueError(
                f"plugin {self._plugin_id!r} cannot register auxiliary task {key!r}: plugin "
                f"{existing['plugin']!r} has it"
            )
        tasks[key] = {
            "key": key,
            "display_name": display_name,
            "description": description,
            "defaults": {
                "provider": "auto",
                "model": "",
                "base_url": "",
                "api_key": "",
                "timeout": 60,
                "extra_body": {},
                **dict(defaults or {}),
            },
            "plugin": self._plugin_id,
        }

    def register_context_reference(self, provider: Any) -> None:
        """Register a provider of ``@<prefix>:...`` references (``prefix`` and ``resolve(value)``).

        :raises ValueError: no usable ``prefix``, a built-in one, or one already taken.
        :raises TypeError: it has no callable ``resolve``.
        """
        prefix = getattr(provider, "prefix", None)
        if not isinstance(prefix, str) or not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", prefix):
            raise ValueError(
                f"plugin {self._plugin_id!r}: a context reference provider needs a lowercase "
                f"'prefix', found {prefix!r}"
            )
        if prefix in BUILTIN_REFERENCE_PREFIXES:
            raise ValueError(f"plugin {self._plugin_id!r}: @{prefix}: is a built-in reference")
        if not callable(getattr(provider, "resolve", None)):
            raise TypeError(
                f"plugin {self._plugin_id!r}: a context reference provider needs resolve(value)"
            )
        references = self._owned().context_references
        if prefix in references:
            raise ValueError(
                f"@{prefix}: is already registered by plugin {references[prefix][0]!r}"
            )
        references[prefix] = (self._plugin_id, provider)

    # capabilities

    def has_capability(self, capability: str) -> bool:
        """Whether ``capability`` is live for this plugin: declared in the manifest's
        ``capabilities`` and granted in the stored consent (``plugins.entries.<id>``'s
        ``granted_capabilities``, which ``hermes plugins enable`` writes, or the capability's
        legacy ``allow_*`` key), read from ``config.yaml`` now; a bundled plugin has
        ``tools.override`` (as in Hermes). A capability the plugin did not declare is refused
        (False, with a warning); an unreadable config grants nothing."""
        from hermes_hooks.plugins.capabilities import capability_granted
        from hermes_hooks.plugins.config import PluginsConfig

        declared = getattr(self.manifest, "capabilities", ()) or ()
        if capability not in declared:
            logger.warning(
                "plugin %r asked for capability %r, which its manifest does not declare",
                self._plugin_id,
                capability,
            )
            return False
        if capability == "tools.override" and self._is_bundled():
            return True  # Hermes: a bundled plugin's override is its maintainers' choice
        try:
            entry = PluginsConfig.from_home(self._manager.hermes_home).entry(self._plugin_id)
        except Exception as exc:  # fail closed: consent that cannot be read is not given
            logger.warning(
                "plugin %r: capability %r not granted: %s", self._plugin_id, capability, exc
            )
            return False
        return capability_granted(entry, capability)

    def _is_bundled(self) -> bool:
        """Whether this plugin is one of the host's bundled plugins (its folder is there)."""
        from hermes_hooks.plugins.discovery import bundled_plugins_dir

        info = self._manager.get_plugin_info(self._plugin_id)  # None while it registers
        if info is not None:
            return info.source == "bundled"
        path = getattr(self, "path", None)
        if path is None:
            return False
        try:
            return Path(path).resolve().is_relative_to(bundled_plugins_dir().resolve())
        except OSError:
            return False

    @property
    def platform_actions(self) -> PlatformActions:
        """Gateway actions (``add_reaction``, ``set_thread_title``), capability-gated."""
        return PlatformActions(self)

    @property
    def subagent_lifecycle(self) -> SubagentLifecycle:
        """Snapshots of the running session's subagents."""
        return SubagentLifecycle(self._manager)

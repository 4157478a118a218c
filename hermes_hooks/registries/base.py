"""Registries for what plugins register: tools, slash commands, CLI commands and skills.

Every registry follows one ownership policy (docs/reference/context.md): each entry records
its owner (a plugin
key, or :data:`HOST` for the host application); a name owned by the host is refused unless the
registry's override rule allows it; a name owned by another plugin is refused with an error
naming both owners; every registration returns a :class:`Handle` that undoes it; and removing a
plugin's entries restores whatever they displaced.

Providers follow Hermes' *last writer wins* instead (``Registry(..., last_writer_wins=True)``):
a registration under a taken name displaces the entry there, whoever owns it (a user plugin
overriding a bundled provider, say), and removing it brings the displaced one back.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final, Generic, TypeVar

import attrs

from hermes_hooks.calling import aio
from hermes_hooks.errors import PluginExitError, RegistrationError

__all__ = ["HOST", "Entry", "Handle", "Registry"]

HOST: Final = "<host>"
"""The owner recorded for entries that the host application registers itself."""

_T = TypeVar("_T")


def describe_owner(owner: str) -> str:
    """Return how an owner is named in messages: ``the host`` or ``plugin 'key'``."""
    if owner == HOST:
        return "the host"
    if owner.startswith("config:mcp:"):  # the tools of an mcp_servers: entry
        return f"MCP server {owner[len('config:mcp:') :]!r}"
    return f"plugin {owner!r}"


@attrs.frozen
class Entry(Generic[_T]):
    """One registered value, its normalised name and its owner."""

    name: str
    value: _T
    owner: str


@attrs.define(eq=False)
class Handle:
    """Undoes one registration; calling :meth:`unregister` twice is harmless.

    Hermes calls this object a ``PluginRegistration``; :meth:`dispose`, :attr:`active`,
    :attr:`key` and :attr:`plugin_key` are its names for the same things.
    """

    _undo: Callable[[], None] | None
    name: str
    owner: str
    kind: str = ""

    @property
    def active(self) -> bool:
        """Whether the registration has not been undone through this handle yet."""
        return self._undo is not None

    @property
    def key(self) -> str:
        """The registered name (Hermes' ``PluginRegistration.key``)."""
        return self.name

    @property
    def plugin_key(self) -> str:
        """The owner (Hermes' ``PluginRegistration.plugin_key``)."""
        return self.owner

    def unregister(self) -> None:
        """Remove the entry this handle stands for, restoring what it displaced."""
        undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    def dispose(self) -> None:
        """Hermes' name for :meth:`unregister`."""
        self.unregister()


class Registry(Generic[_T]):
    """A thread-safe name → value map with owners and the shared collision policy.

    :param kind: what the entries are, for messages (``"tool"``, ``"slash command"``...).
    :param normalize: maps a requested name to the stored name; may raise ``ValueError``.
    :param last_writer_wins: a registration under a taken name displaces the entry there
        (whoever owns it) instead of being refused; removing it restores the displaced one.
    """

    def __init__(
        self,
        kind: str,
        *,
        normalize: Callable[[str], str] | None = None,
        last_writer_wins: bool = False,
    ) -> None:
        self.kind = kind
        self._normalize = normalize
        self.last_writer_wins = last_writer_wins
        self._entries: dict[str, Entry[_T]] = {}
        # Entries displaced by a permitted replacement, most recent last, restored on removal.
        self._displaced: dict[str, list[Entry[_T]]] = {}
        # owner -> the names it has an entry under, current or displaced (kept exact by
        # _remove and remove_owner), so that removing an owner does not scan every entry.
        self._owned: dict[str, set[str]] = {}
        self._lock = threading.RLock()
        self._acting: Callable[[], frozenset[str]] | None = None

    def set_acting_plugins(self, lookup: Callable[[], frozenset[str]] | None) -> None:
        """Tell the registry how to find the plugins whose code is making the current call.

        With it, a plugin's code may register only as that plugin, and may not remove the
        host's entries or another plugin's, whatever ``owner`` it passes (see
        :class:`~hermes_hooks.plugins.loading.CodeOwners`).
        """
        self._acting = lookup

    def _check_acting(self, owner: str, name: str, action: str) -> None:
        """Refuse a call made from plugin code on behalf of another owner."""
        if self._acting is None:
            return
        acting = self._acting()
        if acting and owner not in acting:
            who = ", ".join(repr(key) for key in sorted(acting))
            raise RegistrationError(
                f"{self.kind} {name!r} is refused: code of plugin {who} may not {action} "
                f"{describe_owner(owner)}; a plugin registers through its own ctx"
            )

    # -- reading ------------------------------------------------------------------------------

    def normalize(self, name: str) -> str:
        """Return the stored form of ``name``."""
        if not isinstance(name, str) or not name.strip():
            raise RegistrationError(
                f"{self.kind} has an empty name: the name must be a non-empty string, "
                f"found {name!r}"
            )
        return self._normalize(name) if self._normalize is not None else name

    def get(self, name: str) -> _T | None:
        """Return the value registered under ``name``, or ``None``."""
        try:
            key = self.normalize(name)
        except (RegistrationError, ValueError):
            return None
        entry = self._entries.get(key)
        return entry.value if entry is not None else None

    def get_entry(self, name: str) -> Entry[_T] | None:
        """Return the :class:`Entry` registered under ``name``, or ``None``."""
        try:
            return self._entries.get(self.normalize(name))
        except (RegistrationError, ValueError):
            return None

    def owner_of(self, name: str) -> str | None:
        """Return the owner of ``name``, or ``None`` when it is not registered."""
        entry = self.get_entry(name)
        return entry.owner if entry is not None else None

    def names(self, *, owner: str | None = None) -> list[str]:
        """Return the registered names, sorted; only those ``owner`` has an entry under.

        An entry ``owner`` registered that another displaced counts too: it comes back when
        the displacing one is removed.
        """
        with self._lock:
            if owner is None:
                return sorted(self._entries)
            return sorted(self._owned.get(owner, ()))

    def entries(self) -> list[Entry[_T]]:
        """Return every entry, sorted by name."""
        with self._lock:
            return sorted(self._entries.values(), key=lambda e: e.name)

    def closest(self, name: object, n: int = 3) -> list[str]:
        """Return up to ``n`` registered names close to ``name`` (for "did you mean")."""
        if not isinstance(name, str):
            return []
        with self._lock:
            known = list(self._entries)
        return difflib.get_close_matches(name, known, n=n, cutoff=0.6)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get_entry(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

    # -- writing ------------------------------------------------------------------------------

    def register(
        self, name: str, value: _T, *, owner: str = HOST, replace_host: bool = False
    ) -> Handle:
        """Register ``value`` under ``name`` for ``owner``.

        :param replace_host: a plugin may displace a host entry (the caller has checked the
            grant); the host entry comes back when the plugin's entry is removed.
        :raises RegistrationError: the name is invalid, owned by the host (without
            ``replace_host``) or owned by another plugin (unless the registry's last writer
            wins).
        """
        key = self.normalize(name)
        self._check_acting(owner, key, "register as")
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None and self.last_writer_wins:
                self._displaced.setdefault(key, []).append(existing)
            elif existing is not None and existing.owner != owner:
                if existing.owner == HOST and not replace_host:
                    raise RegistrationError(
                        f"{self.kind} {key!r} from {describe_owner(owner)} is refused: "
                        f"the name belongs to the host"
                    )
                if existing.owner != HOST:
                    raise RegistrationError(
                        f"{self.kind} {key!r} from {describe_owner(owner)} is refused: "
                        f"already registered by {describe_owner(existing.owner)}"
                    )
                self._displaced.setdefault(key, []).append(existing)
            entry = Entry(name=key, value=value, owner=owner)
            self._entries[key] = entry
            self._owned.setdefault(owner, set()).add(key)
        return Handle(lambda: self._remove(entry), key, owner, self.kind)

    def _remove(self, entry: Entry[_T]) -> None:
        with self._lock:
            if self._entries.get(entry.name) is not entry:
                # Already removed, or re-registered since: drop it from the displaced stack only.
                stack = self._displaced.get(entry.name, [])
                if entry in stack:
                    stack.remove(entry)
                    if not stack:
                        del self._displaced[entry.name]
                self._forget_owner(entry.owner, entry.name)
                return
            displaced = self._displaced.get(entry.name)
            if displaced:
                self._entries[entry.name] = displaced.pop()
                if not displaced:
                    del self._displaced[entry.name]
            else:
                del self._entries[entry.name]
            self._forget_owner(entry.owner, entry.name)

    def _forget_owner(self, owner: str, key: str) -> None:
        """Drop ``key`` from ``owner``'s names unless it still has an entry there."""
        current = self._entries.get(key)
        if (current is not None and current.owner == owner) or any(
            e.owner == owner for e in self._displaced.get(key, ())
        ):
            return
        keys = self._owned.get(owner)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._owned[owner]

    def unregister(self, name: str, *, owner: str | None = None) -> bool:
        """Remove ``name`` (only if ``owner`` owns it, when given); return whether it was there."""
        entry = self.get_entry(name)
        if entry is None or (owner is not None and entry.owner != owner):
            return False
        self._check_acting(entry.owner, entry.name, "remove an entry of")
        self._remove(entry)
        return True

    def remove_owner(self, owner: str) -> list[str]:
        """Remove every entry of ``owner``, restoring what they displaced; return their names.

        The names include those where only a displaced entry of ``owner`` was dropped.
        """
        if owner == HOST:
            self._check_acting(owner, "*", "remove the entries of")
        with self._lock:
            names = sorted(self._owned.pop(owner, ()))
            for key in names:
                stack = self._displaced.get(key)
                if stack:
                    stack[:] = [e for e in stack if e.owner != owner]
                    if not stack:
                        del self._displaced[key]
                current = self._entries.get(key)
                if current is not None and current.owner == owner:
                    self._remove(current)
        return names


FailureCounter = Callable[[str, str, str], None]
"""``count(plugin, where, message)``: one failure of a plugin's handler, on its status."""

_GUARDED_HANDLER: Final = "__hermes_guarded_handler__"


def _pass_through() -> tuple[type[BaseException], ...]:
    # Ctrl-C, a task's cancellation, a coroutine being closed: never a failed call.
    return (GeneratorExit, *aio.pass_through())


def guard_handler(
    owner: str,
    where: str,
    handler: Callable[..., Any],
    count: FailureCounter,
    *,
    wants_str: bool = False,
) -> Callable[..., Any]:
    """Wrap a plugin's tool or command handler so that its failures count and never stop the host.

    Every door a handler comes through (``ctx.register_tool``, Hermes's ``tools.registry``,
    ``ctx.register_command``) ends in a registry, which applies this once. An ``Exception`` is
    counted and raised again for the caller to report (the tool registry and slash commands
    turn it into an error reply); ``SystemExit`` and other ``BaseException``s are counted and
    raised as :class:`PluginExitError`. With ``wants_str``, a result that is not a string is
    counted too (the caller refuses it). Coroutines are guarded when they are awaited.
    """
    if getattr(handler, _GUARDED_HANDLER, False):
        return handler

    def failed(exc: BaseException) -> BaseException:
        text = str(exc)
        count(owner, where, f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
        if isinstance(exc, Exception):
            return exc
        return PluginExitError(
            f"plugin {owner!r}: {where} raised {type(exc).__name__}({text}); the host keeps running"
        )

    def check(result: object) -> object:
        if wants_str and not isinstance(result, str):
            count(owner, where, f"returned {type(result).__name__}, expected a string")
        return result

    async def awaited(pending: Any) -> object:
        try:
            result = await pending
        except _pass_through():
            raise
        except BaseException as exc:
            error = failed(exc)
            if error is exc:
                raise
            raise error from exc
        return check(result)

    @functools.wraps(handler)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            result = handler(*args, **kwargs)
        except _pass_through():
            raise
        except BaseException as exc:
            error = failed(exc)
            if error is exc:
                raise
            raise error from exc
        if inspect.isawaitable(result):
            return awaited(result)
        return check(result)

    setattr(guarded, _GUARDED_HANDLER, True)
    return guarded

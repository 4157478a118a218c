"""A session's transcript, written to the home's session store as its turns end.

Hermes keeps every session in ``$HERMES_HOME/state.db`` (``hermes_state.SessionDB``), and its
plugins read it there: the ``hermes-achievements`` dashboard tab counts tool calls and models
over every session, memory plugins search past conversations. :class:`Transcript` gives the
reference host the same store: the session's row (its source is the platform, ``subagent`` for a
delegated child, with the parent's id), then each message once, the tool results named by the
tool that produced them; the session ends with its close or ``/new``.

Writing is best effort: a store that cannot be opened or written is logged once per session and
the conversation goes on (a turn never fails because its transcript could not be kept).
"""

from __future__ import annotations

import atexit
import collections
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any, Final

from hermes_hooks.backends.sessions import SessionStore, SessionStoreError, state_db_path

__all__ = ["Transcript"]

logger = logging.getLogger(__name__)

OPEN_STORES: Final = 4
"""Session stores kept open per process (the latest homes used), so that a session does not
pay for opening the file and for the checkpoint SQLite makes when its last connection closes."""

_stores: collections.OrderedDict[Path, SessionStore] = collections.OrderedDict()
_stores_lock = threading.Lock()


def _shared_store(path: Path) -> SessionStore:
    """The process's open store of ``path``, opened when needed; the least recently used one
    is closed past :data:`OPEN_STORES`."""
    with _stores_lock:
        store = _stores.get(path)
        if store is not None and store.db_path.exists():
            _stores.move_to_end(path)
            return store
        if store is not None:  # the file was removed under it: open it anew
            _stores.pop(path).close()
        store = _stores[path] = SessionStore(path)
        while len(_stores) > OPEN_STORES:
            _stores.popitem(last=False)[1].close()
        return store


@atexit.register
def close_stores() -> None:
    """Close every store kept open (at exit, and for tests)."""
    with _stores_lock:
        while _stores:
            _stores.popitem()[1].close()


class Transcript:
    """Where one host session's messages are kept.

    :param home: the Hermes home (the store is ``home/state.db``).
    """

    def __init__(self, home: Path) -> None:
        self.path = state_db_path(home)
        self._store: SessionStore | None = None
        self._session_id = ""
        #: The messages written, by identity: a context engine's compression replaces the
        #: list's contents, so a count of messages written would skip or repeat some.
        self._written: list[dict[str, Any]] = []
        self._written_ids: set[int] = set()
        self._tool_names: dict[str, str] = {}
        self._broken = False

    def write(
        self,
        session_id: str,
        messages: list[dict[str, Any]],
        *,
        source: str,
        model: str,
        system_prompt: str,
        parent_session_id: str | None,
        user_id: str,
        cwd: str,
    ) -> None:
        """Record ``session_id`` (the first time) and the messages not written yet."""
        if self._broken:
            return
        args = (session_id, messages, source, model, system_prompt, parent_session_id, user_id, cwd)
        for attempt in range(2):
            try:
                self._write(*args)
                return
            except sqlite3.ProgrammingError as exc:
                # The shared store was closed (another home's session took its place): once more.
                self._store = None
                if attempt:
                    self._fail(session_id, exc)
            except (OSError, sqlite3.Error, SessionStoreError, TypeError, ValueError) as exc:
                self._fail(session_id, exc)  # a message that cannot be stored included
                return

    def count(
        self, session_id: str, *, model: str, api_calls: int, input_tokens: int, output_tokens: int
    ) -> None:
        """Add a turn's model calls and tokens to the session's totals (once it is written)."""
        if self._broken or session_id != self._session_id or not api_calls:
            return
        try:
            _shared_store(self.path).update_token_counts(
                session_id,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                model=model,
                api_call_count=api_calls,
            )
        except (OSError, sqlite3.Error, SessionStoreError) as exc:
            self._fail(session_id, exc)

    def _fail(self, session_id: str, exc: BaseException) -> None:
        self._broken = True
        logger.warning(
            "session %s: its transcript is not kept in %s: %s", session_id, self.path, exc
        )

    def _write(
        self,
        session_id: str,
        messages: list[dict[str, Any]],
        source: str,
        model: str,
        system_prompt: str,
        parent_session_id: str | None,
        user_id: str,
        cwd: str,
    ) -> None:
        store = self._open()
        if session_id != self._session_id:
            store.create_session(
                session_id,
                source,
                model=model,
                system_prompt=system_prompt,
                parent_session_id=parent_session_id,
                user_id=user_id or None,
                cwd=cwd,
            )
            self._session_id = session_id
            self._forget()
        fresh = [message for message in messages if id(message) not in self._written_ids]
        if fresh:
            store.append_messages(session_id, [self._row(message) for message in fresh])
            self._written.extend(fresh)
            self._written_ids.update(id(message) for message in fresh)

    def _forget(self) -> None:
        self._written.clear()
        self._written_ids.clear()

    def _row(self, message: dict[str, Any]) -> dict[str, Any]:
        calls = message.get("tool_calls") or None
        for call in calls or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and call.get("id") and function.get("name"):
                self._tool_names[str(call["id"])] = str(function["name"])
        call_id = message.get("tool_call_id")
        return {
            "role": str(message.get("role", "")),
            "content": message.get("content"),
            "tool_name": message.get("name")
            or (self._tool_names.get(call_id) if call_id else None),
            "tool_calls": calls,
            "tool_call_id": call_id,
        }

    def end(self, session_id: str, reason: str) -> None:
        """Mark ``session_id`` ended (when it was written) and start afresh for the next one."""
        if self._session_id and session_id == self._session_id and not self._broken:
            try:
                _shared_store(self.path).end_session(session_id, reason)
            except (OSError, sqlite3.Error, SessionStoreError) as exc:
                logger.warning("session %s: could not record its end: %s", session_id, exc)
        self._session_id = ""
        self._forget()

    def close(self) -> None:
        """Let the store go (it stays open for the process's next session of this home)."""
        self._store = None

    def _open(self) -> SessionStore:
        if self._store is None:
            self._store = _shared_store(self.path)
        return self._store

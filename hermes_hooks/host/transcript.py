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

import logging
import sqlite3
from pathlib import Path
from typing import Any

from hermes_hooks.backends.sessions import SessionStore, SessionStoreError, state_db_path

__all__ = ["Transcript"]

logger = logging.getLogger(__name__)


class Transcript:
    """Where one host session's messages are kept.

    :param home: the Hermes home (the store is ``home/state.db``).
    """

    def __init__(self, home: Path) -> None:
        self.path = state_db_path(home)
        self._store: SessionStore | None = None
        self._session_id = ""
        self._written = 0
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
        try:
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
                self._session_id, self._written = session_id, 0
            fresh = messages[self._written :]
            if fresh:
                store.append_messages(session_id, [self._row(message) for message in fresh])
                self._written += len(fresh)
        except (OSError, sqlite3.Error, SessionStoreError) as exc:
            self._broken = True
            logger.warning(
                "session %s: its transcript is not kept in %s: %s", session_id, self.path, exc
            )

    def _row(self, message: dict[str, Any]) -> dict[str, Any]:
        calls = message.get("tool_calls") or None
        for call in calls or ():
            function = call.get("function") or {}
            if call.get("id") and function.get("name"):
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
        if self._store is not None and session_id == self._session_id and not self._broken:
            try:
                self._store.end_session(session_id, reason)
            except sqlite3.Error as exc:
                logger.warning("session %s: could not record its end: %s", session_id, exc)
        self._session_id, self._written = "", 0

    def close(self) -> None:
        """Close the store."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def _open(self) -> SessionStore:
        if self._store is None:
            self._store = SessionStore(self.path)
        return self._store

"""Hermes' ``hermes_state``: ``SessionDB``, the session store plugins read.

``SessionDB()`` opens the current home's ``state.db`` (``get_hermes_home() / "state.db"``, read
at each construction, so a plugin opening it from a dashboard route or a test with its own
``HERMES_HOME`` gets that home's) — the very file the reference host writes every session's
messages to as its turns end, so the ``hermes-achievements`` dashboard plugin and a memory
plugin read the real sessions of ``hermes -z`` and ``hermes chat``. Its methods are Hermes':
``create_session``, ``append_message``, ``get_messages``, ``list_sessions_rich``,
``search_messages``... (see :class:`hermes_hooks.backends.sessions.SessionStore`).
``apply_wal_with_fallback`` is Hermes' helper that the holographic memory plugin uses on its
own database.
"""

from __future__ import annotations

from pathlib import Path

from hermes_hooks.backends.sessions import (
    SCHEMA_VERSION,
    SessionStore,
    SessionStoreError,
    apply_wal_with_fallback,
    state_db_path,
)
from hermes_hooks.compat.current import current_home

__all__ = [
    "DEFAULT_DB_PATH",
    "SCHEMA_VERSION",
    "SessionDB",
    "StateDbCorruptError",
    "apply_wal_with_fallback",
]

DEFAULT_DB_PATH: Path = state_db_path(current_home())
"""The home's database when this module was first imported (Hermes' constant). A
``SessionDB()`` reads the home again each time, unless this was re-pointed (as Hermes' own
tests do): then it opens that file."""
_IMPORT_DEFAULT_DB_PATH: Path = DEFAULT_DB_PATH

StateDbCorruptError = SessionStoreError
"""Raised when ``state.db`` is not a session database (Hermes' name)."""


class SessionDB(SessionStore):
    """Hermes' session store on ``db_path``, by default the current home's ``state.db``.

    :param db_path: the database file.
    :param read_only: open an existing file without writing to it.
    """

    def __init__(self, db_path: Path | str | None = None, read_only: bool = False) -> None:
        super().__init__(Path(db_path) if db_path else _default_db_path(), read_only=read_only)


def _default_db_path() -> Path:
    if DEFAULT_DB_PATH != _IMPORT_DEFAULT_DB_PATH:
        return DEFAULT_DB_PATH
    return state_db_path(current_home())

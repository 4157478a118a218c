"""The session store: every conversation's metadata and messages in ``$HERMES_HOME/state.db``.

The reference host writes each session here as its turns end (:mod:`hermes_hooks.host.session`),
and Hermes' plugins read it through ``hermes_state.SessionDB``
(:mod:`hermes_hooks.compat.hermes_state`). The file is Hermes' own: the ``sessions`` and
``messages`` tables with Hermes' columns (a database written by Hermes Agent opens here and the
other way round), ``state_meta`` and ``schema_version``, and an FTS5 index of the messages'
content, tool names and tool calls where the SQLite build has FTS5 (a ``LIKE`` search where it
has not).

The standard library's ``sqlite3``: one connection per store, WAL mode, every write one
``BEGIN IMMEDIATE`` transaction (a session row and its counters change with the message that
changes them), retried with jitter while another process holds the write lock. The file and its
``-wal``/``-shm`` are created 0600: transcripts are as private as ``config.yaml``.
"""

from __future__ import annotations

import json
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

__all__ = [
    "SCHEMA_VERSION",
    "SessionStore",
    "SessionStoreError",
    "apply_wal_with_fallback",
    "state_db_path",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

SCHEMA_VERSION: Final = 22
"""The ``schema_version`` a new database records (Hermes' at the columns served here)."""

_CONTENT_JSON_PREFIX: Final = "\x00json:"
"""Hermes' marker of structured (multimodal) content stored as JSON text."""

_WAL_INCOMPAT_MARKERS: Final = ("locking protocol", "not authorized", "disk i/o error")

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    cwd TEXT,
    billing_provider TEXT,
    estimated_cost_usd REAL,
    title TEXT,
    api_call_count INTEGER DEFAULT 0,
    profile_name TEXT,
    archived INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    platform_message_id TEXT,
    active INTEGER NOT NULL DEFAULT 1,
    api_content TEXT
);
CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT);
"""

_INDEXES: Final = """
CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE UNIQUE INDEX IF NOT EXISTS idx_sessions_title_unique ON sessions(title)
    WHERE title IS NOT NULL;
"""

_FTS: Final = """
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(content);
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id,
        COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' '
        || COALESCE(new.tool_calls, ''));
END;
CREATE TRIGGER IF NOT EXISTS messages_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
END;
"""

_SESSION_FIELDS: Final = (
    "user_id",
    "model",
    "model_config",
    "system_prompt",
    "parent_session_id",
    "cwd",
    "profile_name",
)

_LISTED: Final = """
SELECT s.*,
    COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, char(10), ' '), char(13), ' '), 1, 63)
              FROM messages m WHERE m.session_id = s.id AND m.role = 'user'
              AND m.content IS NOT NULL ORDER BY m.timestamp, m.id LIMIT 1), '') AS _preview,
    COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id),
             s.started_at) AS last_active
FROM sessions s
"""


class SessionStoreError(Exception):
    """The file is not a session database this version can use."""


def state_db_path(home: Path) -> Path:
    """Return the session database of ``home``: ``home/state.db``, as Hermes names it."""
    return home / "state.db"


def apply_wal_with_fallback(conn: sqlite3.Connection, *, db_label: str = "state.db") -> str:
    """Set ``journal_mode=WAL`` on ``conn``, falling back to ``DELETE`` where the file system
    refuses WAL (NFS, SMB, some FUSE mounts); return the mode set (``"wal"`` or ``"delete"``).

    :raises sqlite3.OperationalError: any other failure.
    """
    current = conn.execute("PRAGMA journal_mode").fetchone()
    if current and str(current[0]).lower() == "wal":
        return "wal"
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        return "wal"
    except sqlite3.OperationalError as exc:
        if not any(marker in str(exc).lower() for marker in _WAL_INCOMPAT_MARKERS):
            raise
        logger.warning(
            "%s: WAL is not supported here (%s); using journal_mode=DELETE", db_label, exc
        )
        conn.execute("PRAGMA journal_mode=DELETE")
        return "delete"


def _private(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        sidecar = path.with_name(name)
        if sidecar.is_file() and not sidecar.is_symlink():
            os.chmod(sidecar, 0o600)


def _encode_content(content: Any) -> Any:
    if content is None or isinstance(content, str | bytes | int | float):
        return content
    try:
        return _CONTENT_JSON_PREFIX + json.dumps(content)
    except (TypeError, ValueError):
        return str(content)


def _decode_content(content: Any) -> Any:
    if isinstance(content, str) and content.startswith(_CONTENT_JSON_PREFIX):
        try:
            return json.loads(content[len(_CONTENT_JSON_PREFIX) :])
        except ValueError:
            return content
    return content


def _json_or_none(value: Any) -> str | None:
    return json.dumps(value) if value else None


def _fts5_available(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp._probe USING fts5(x)")
        conn.execute("DROP TABLE temp._probe")
    except sqlite3.OperationalError:
        return False
    return True


_MESSAGE_FIELDS: Final = (
    "tool_name",
    "tool_calls",
    "tool_call_id",
    "token_count",
    "finish_reason",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "platform_message_id",
    "timestamp",
    "api_content",
)


def _message_row(session_id: str, role: str, content: Any, **fields: Any) -> tuple[Any, ...]:
    """The ``messages`` row of one message, in the column order of :func:`_insert_message`."""
    calls = fields.get("tool_calls")
    timestamp = fields.get("timestamp")
    return (
        session_id,
        role,
        _encode_content(content),
        fields.get("tool_call_id"),
        _json_or_none(calls),
        fields.get("tool_name"),
        float(timestamp) if timestamp is not None else time.time(),
        fields.get("token_count"),
        fields.get("finish_reason"),
        fields.get("reasoning"),
        fields.get("reasoning_content"),
        _json_or_none(fields.get("reasoning_details")),
        fields.get("platform_message_id"),
        fields.get("api_content"),
        0 if calls is None else len(calls) if isinstance(calls, list) else 1,
    )


def _insert_message(db: sqlite3.Connection, row: tuple[Any, ...]) -> int:
    """Insert one row of :func:`_message_row` and count it on its session."""
    cursor = db.execute(
        "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, "
        "tool_name, timestamp, token_count, finish_reason, reasoning, reasoning_content, "
        "reasoning_details, platform_message_id, api_content) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        row[:-1],
    )
    db.execute(
        "UPDATE sessions SET message_count = message_count + 1, "
        "tool_call_count = tool_call_count + ? WHERE id = ?",
        (row[-1], row[0]),
    )
    return int(cursor.lastrowid or 0)


class SessionStore:
    """The sessions and messages of one database file; safe to share between threads.

    :param db_path: the database file (its folder is created unless ``read_only``).
    :param read_only: open an existing file for reading only.
    :raises SessionStoreError: the file is not a session database.
    """

    _WRITE_ATTEMPTS: Final = 15

    def __init__(self, db_path: Path | str, *, read_only: bool = False) -> None:
        self.db_path = Path(db_path)
        self.read_only = read_only
        self._lock = threading.RLock()
        try:
            if read_only:
                uri = f"{self.db_path.absolute().as_uri()}?mode=ro"
                self._conn = sqlite3.connect(
                    uri, uri=True, timeout=5.0, isolation_level=None, check_same_thread=False
                )
            else:
                _private(self.db_path)
                self._conn = sqlite3.connect(
                    self.db_path, timeout=1.0, isolation_level=None, check_same_thread=False
                )
            self._conn.row_factory = sqlite3.Row
            if not read_only:
                if apply_wal_with_fallback(self._conn) == "wal":
                    # Safe from corruption in WAL mode; a power cut may lose the last commits.
                    self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute("PRAGMA foreign_keys=ON")
                self._init_schema()
            self.fts = bool(
                self._conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'"
                ).fetchone()
            )
        except sqlite3.DatabaseError as exc:
            raise SessionStoreError(
                f"{self.db_path}: not a session database this version can use: {exc}"
            ) from exc

    def _init_schema(self) -> None:
        self._conn.executescript(_SCHEMA)
        self._reconcile_columns()
        self._conn.executescript(_INDEXES)  # after the columns they index exist
        if self._conn.execute("SELECT version FROM schema_version").fetchone() is None:
            self._conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        if _fts5_available(self._conn):
            self._conn.executescript(_FTS)

    def _reconcile_columns(self) -> None:
        """Add the columns this schema declares that an older (or Hermes') file lacks."""
        reference = sqlite3.connect(":memory:")
        try:
            reference.executescript(_SCHEMA)
            for table in ("sessions", "messages"):
                live = {row[1] for row in self._conn.execute(f'PRAGMA table_info("{table}")')}
                for _cid, name, kind, notnull, default, _pk in reference.execute(
                    f'PRAGMA table_info("{table}")'
                ):
                    if name in live:
                        continue
                    spec = " ".join(
                        part
                        for part in (
                            kind,
                            "NOT NULL" if notnull else "",
                            f"DEFAULT {default}" if default is not None else "",
                        )
                        if part
                    )
                    self._conn.execute(f'ALTER TABLE "{table}" ADD COLUMN "{name}" {spec}')
        finally:
            reference.close()

    # -- the connection ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the database (idempotent); a later call raises ``sqlite3.ProgrammingError``."""
        with self._lock:
            conn: sqlite3.Connection | None = getattr(self, "_conn", None)
            if conn is not None:
                conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self.read_only:
            raise sqlite3.OperationalError(f"{self.db_path} is open read-only")
        for attempt in range(self._WRITE_ATTEMPTS):
            try:
                with self._lock:
                    self._conn.execute("BEGIN IMMEDIATE")
                    try:
                        result = fn(self._conn)
                    except BaseException:
                        self._conn.execute("ROLLBACK")
                        raise
                    self._conn.execute("COMMIT")
                    return result
            except sqlite3.OperationalError as exc:
                text = str(exc).lower()
                if ("locked" in text or "busy" in text) and attempt < self._WRITE_ATTEMPTS - 1:
                    time.sleep(random.uniform(0.020, 0.150))
                    continue
                raise
        raise sqlite3.OperationalError("database is locked")  # pragma: no cover

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(row) for row in self._conn.execute(sql, tuple(params)).fetchall()]

    # -- sessions ---------------------------------------------------------------------------------

    def create_session(self, session_id: str, source: str, **kwargs: Any) -> str:
        """Record a new session (nothing happens when it exists); return ``session_id``.

        :param kwargs: ``model``, ``model_config`` (a dict, stored as JSON), ``system_prompt``,
            ``user_id``, ``parent_session_id``, ``cwd``, ``profile_name``.
        """
        values = {key: kwargs.get(key) for key in _SESSION_FIELDS}
        if isinstance(values["model_config"], dict):
            values["model_config"] = json.dumps(values["model_config"]) or None
        columns = ", ".join(("id", "source", "started_at", *_SESSION_FIELDS))
        marks = ", ".join("?" * (3 + len(_SESSION_FIELDS)))
        self._write(
            lambda db: db.execute(
                f"INSERT OR IGNORE INTO sessions ({columns}) VALUES ({marks})",
                (session_id, source, time.time(), *values.values()),
            )
        )
        return session_id

    def ensure_session(
        self, session_id: str, source: str = "unknown", model: str | None = None, **kwargs: Any
    ) -> str:
        """Make sure a session row exists; return ``session_id``."""
        return self.create_session(session_id, source, model=model, **kwargs)

    def end_session(self, session_id: str, end_reason: str) -> None:
        """Mark a session ended; the first reason stays (an ended session is left as is)."""
        self._write(
            lambda db: db.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ? "
                "WHERE id = ? AND ended_at IS NULL",
                (time.time(), end_reason, session_id),
            )
        )

    def reopen_session(self, session_id: str) -> None:
        """Clear a session's end so it can be resumed."""
        self._write(
            lambda db: db.execute(
                "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?",
                (session_id,),
            )
        )

    def update_token_counts(
        self,
        session_id: str,
        input_tokens: int = 0,
        output_tokens: int = 0,
        model: str | None = None,
        api_call_count: int = 0,
        **_ignored: Any,
    ) -> None:
        """Add a call's tokens and API calls to the session's totals (and set its model once)."""
        self._write(
            lambda db: db.execute(
                "UPDATE sessions SET input_tokens = input_tokens + ?, "
                "output_tokens = output_tokens + ?, model = COALESCE(model, ?), "
                "api_call_count = COALESCE(api_call_count, 0) + ? WHERE id = ?",
                (input_tokens, output_tokens, model, api_call_count, session_id),
            )
        )

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        """Return the session's row, or ``None``."""
        rows = self._rows("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return rows[0] if rows else None

    def set_session_title(self, session_id: str, title: str) -> bool:
        """Set a session's title (unique among titled sessions); ``False`` when no such session.

        :raises ValueError: another session has that title.
        """
        clean = " ".join(str(title or "").split())[:100] or None

        def do(db: sqlite3.Connection) -> bool:
            if clean is not None:
                taken = db.execute(
                    "SELECT id FROM sessions WHERE title = ? AND id != ?", (clean, session_id)
                ).fetchone()
                if taken is not None:
                    raise ValueError(f"Title {clean!r} is already in use by session {taken[0]}")
            return (
                db.execute(
                    "UPDATE sessions SET title = ? WHERE id = ?", (clean, session_id)
                ).rowcount
                > 0
            )

        return self._write(do)

    def get_session_title(self, session_id: str) -> str | None:
        """Return the session's title, or ``None``."""
        session = self.get_session(session_id)
        return session.get("title") if session else None

    def list_sessions_rich(
        self,
        source: str | None = None,
        exclude_sources: Iterable[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        include_children: bool = False,
        min_message_count: int = 0,
        project_compression_tips: bool = True,
        order_by_last_active: bool = False,
        include_archived: bool = False,
        archived_only: bool = False,
        **_ignored: Any,
    ) -> list[dict[str, Any]]:
        """Sessions, newest first, each with ``preview`` (its first user message, 60
        characters) and ``last_active`` (its last message's time, else its start).

        Child sessions (subagents, continuations) are left out unless ``include_children``;
        ``limit=-1`` lists them all. ``project_compression_tips`` is accepted: this host
        never splits a session on compression, so there is nothing to project.
        """
        del project_compression_tips
        where, params = self._filters(
            source, exclude_sources, include_children, include_archived, archived_only
        )
        if min_message_count > 0:
            where.append("s.message_count >= ?")
            params.append(min_message_count)
        order = (
            "last_active DESC, s.started_at DESC" if order_by_last_active else "s.started_at DESC"
        )
        sql = f"{_LISTED}{self._where(where)} ORDER BY {order}, s.id DESC LIMIT ? OFFSET ?"
        sessions = self._rows(sql, [*params, int(limit), int(offset)])
        for row in sessions:
            raw = str(row.pop("_preview") or "").strip()
            row["preview"] = raw[:60] + ("..." if len(raw) > 60 else "")
        return sessions

    @staticmethod
    def _filters(
        source: str | None,
        exclude_sources: Iterable[str] | None,
        include_children: bool,
        include_archived: bool,
        archived_only: bool,
    ) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if not include_children:
            where.append("s.parent_session_id IS NULL")
        if source:
            where.append("s.source = ?")
            params.append(source)
        excluded = list(exclude_sources or ())
        if excluded:
            where.append(f"s.source NOT IN ({', '.join('?' * len(excluded))})")
            params.extend(excluded)
        if archived_only:
            where.append("s.archived = 1")
        elif not include_archived:
            where.append("s.archived = 0")
        return where, params

    @staticmethod
    def _where(clauses: list[str]) -> str:
        return f" WHERE {' AND '.join(clauses)}" if clauses else ""

    def session_count(
        self,
        source: str | None = None,
        min_message_count: int = 0,
        include_archived: bool = False,
        archived_only: bool = False,
        exclude_children: bool = False,
        exclude_sources: Iterable[str] | None = None,
        **_ignored: Any,
    ) -> int:
        """Count sessions, with the filters of :meth:`list_sessions_rich`."""
        where, params = self._filters(
            source, exclude_sources, not exclude_children, include_archived, archived_only
        )
        if min_message_count > 0:
            where.append("s.message_count >= ?")
            params.append(min_message_count)
        with self._lock:
            row = self._conn.execute(
                f"SELECT COUNT(*) FROM sessions s{self._where(where)}", params
            ).fetchone()
        return int(row[0])

    def delete_session(self, session_id: str, **_ignored: Any) -> bool:
        """Delete a session and its messages (its children are kept, unparented)."""

        def do(db: sqlite3.Connection) -> bool:
            db.execute(
                "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?",
                (session_id,),
            )
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            return db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

        return self._write(do)

    def clear_messages(self, session_id: str) -> None:
        """Delete a session's messages and zero its counters; keep the session."""

        def do(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            db.execute(
                "UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = ?",
                (session_id,),
            )

        self._write(do)

    # -- messages ---------------------------------------------------------------------------------

    def append_message(
        self,
        session_id: str,
        role: str,
        content: Any = None,
        tool_name: str | None = None,
        tool_calls: Any = None,
        tool_call_id: str | None = None,
        token_count: int | None = None,
        finish_reason: str | None = None,
        reasoning: str | None = None,
        reasoning_content: str | None = None,
        reasoning_details: Any = None,
        platform_message_id: str | None = None,
        timestamp: float | None = None,
        api_content: str | None = None,
        **_ignored: Any,
    ) -> int:
        """Append a message to a session and return its row id; the session's
        ``message_count`` grows by one and its ``tool_call_count`` by the calls it makes."""
        row = _message_row(
            session_id,
            role,
            content,
            tool_name=tool_name,
            tool_calls=tool_calls,
            tool_call_id=tool_call_id,
            token_count=token_count,
            finish_reason=finish_reason,
            reasoning=reasoning,
            reasoning_content=reasoning_content,
            reasoning_details=reasoning_details,
            platform_message_id=platform_message_id,
            timestamp=timestamp,
            api_content=api_content,
        )
        return self._write(lambda db: _insert_message(db, row))

    def append_messages(self, session_id: str, messages: Iterable[Mapping[str, Any]]) -> list[int]:
        """Append several messages in one transaction (each a mapping of
        :meth:`append_message`'s arguments, ``role`` required); return their row ids."""
        rows = [
            _message_row(
                session_id,
                str(message["role"]),
                message.get("content"),
                **{key: message.get(key) for key in _MESSAGE_FIELDS},
            )
            for message in messages
        ]
        return self._write(lambda db: [_insert_message(db, row) for row in rows])

    def get_messages(
        self,
        session_id: str,
        include_inactive: bool = False,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """A session's messages in the order written, ``tool_calls`` decoded from JSON."""
        sql = "SELECT * FROM messages WHERE session_id = ?"
        sql += "" if include_inactive else " AND active = 1"
        sql += " ORDER BY id"
        params: list[Any] = [session_id]
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params.extend([-1 if limit is None else limit, offset])
        messages = self._rows(sql, params)
        for message in messages:
            message["content"] = _decode_content(message.get("content"))
            if message.get("tool_calls"):
                try:
                    message["tool_calls"] = json.loads(message["tool_calls"])
                except ValueError:
                    message["tool_calls"] = []
        return messages

    def get_messages_as_conversation(self, session_id: str) -> list[dict[str, Any]]:
        """A session's messages as a model request takes them (``role``, ``content``, and
        ``tool_calls``, ``tool_call_id``, ``name`` where set)."""
        conversation = []
        for row in self.get_messages(session_id):
            message: dict[str, Any] = {"role": row["role"], "content": row.get("content")}
            if row.get("tool_calls"):
                message["tool_calls"] = row["tool_calls"]
            if row.get("tool_call_id"):
                message["tool_call_id"] = row["tool_call_id"]
            if row["role"] == "tool" and row.get("tool_name"):
                message["name"] = row["tool_name"]
            conversation.append(message)
        return conversation

    def message_count(self, session_id: str | None = None) -> int:
        """Count the messages of one session, or of all."""
        with self._lock:
            if session_id:
                found = self._conn.execute(
                    "SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,)
                ).fetchone()
            else:
                found = self._conn.execute("SELECT COUNT(*) FROM messages").fetchone()
        return int(found[0])

    def search_messages(
        self,
        query: str,
        source_filter: Iterable[str] | None = None,
        exclude_sources: Iterable[str] | None = None,
        role_filter: Iterable[str] | None = None,
        limit: int = 20,
        offset: int = 0,
        **_ignored: Any,
    ) -> list[dict[str, Any]]:
        """Messages matching ``query`` (every word, in content, tool name or tool calls), best
        first, each with ``snippet``, its session's ``source``, ``model`` and
        ``session_started``, and ``context`` (the messages either side, 200 characters)."""
        words = "".join(c if c.isalnum() else " " for c in query).split()
        if not words:
            return []
        where: list[str] = []
        params: list[Any] = []
        if self.fts:
            match = " ".join(f'"{word}"' for word in words)
            base = (
                "SELECT m.*, snippet(messages_fts, 0, '>>>', '<<<', '...', 40) AS snippet "
                "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
            )
            where.append("messages_fts MATCH ?")
            params.append(match)
            order = "rank"
        else:
            base = "SELECT m.*, SUBSTR(m.content, 1, 120) AS snippet FROM messages m "
            for word in words:
                where.append("(m.content LIKE ? OR m.tool_name LIKE ? OR m.tool_calls LIKE ?)")
                params.extend([f"%{word}%"] * 3)
            order = "m.timestamp DESC"
        base += "JOIN sessions s ON s.id = m.session_id"
        for column, values, negate in (
            ("s.source", source_filter, False),
            ("s.source", exclude_sources, True),
            ("m.role", role_filter, False),
        ):
            chosen = list(values or ())
            if chosen:
                where.append(
                    f"{column} {'NOT ' if negate else ''}IN ({', '.join('?' * len(chosen))})"
                )
                params.extend(chosen)
        sql = (
            base.replace(
                "SELECT m.*", "SELECT m.*, s.source, s.model, s.started_at AS session_started"
            )
            + self._where(where)
            + f" ORDER BY {order} LIMIT ? OFFSET ?"
        )
        found = self._rows(sql, [*params, int(limit), int(offset)])
        for match_row in found:
            around = self._rows(
                "SELECT role, content FROM messages WHERE session_id = ? AND id BETWEEN ? AND ? "
                "AND id != ? ORDER BY id",
                (
                    match_row["session_id"],
                    match_row["id"] - 1,
                    match_row["id"] + 1,
                    match_row["id"],
                ),
            )
            match_row["context"] = [
                {"role": row["role"], "content": str(_decode_content(row["content"]) or "")[:200]}
                for row in around
            ]
            match_row["content"] = _decode_content(match_row.get("content"))
        return found

    def export_session(self, session_id: str) -> dict[str, Any] | None:
        """Return a session's row with its ``messages``, or ``None``."""
        session = self.get_session(session_id)
        if session is None:
            return None
        return {**session, "messages": self.get_messages(session_id)}

    def export_all(self, source: str | None = None) -> list[dict[str, Any]]:
        """Every session (of ``source``), each with its messages."""
        rows = self._rows(
            "SELECT id FROM sessions"
            + (" WHERE source = ?" if source else "")
            + " ORDER BY started_at",
            (source,) if source else (),
        )
        return [item for row in rows if (item := self.export_session(row["id"])) is not None]

    # -- metadata ---------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """Return a value of ``state_meta``, or ``None``."""
        rows = self._rows("SELECT value FROM state_meta WHERE key = ?", (key,))
        return rows[0]["value"] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of ``state_meta``."""
        self._write(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)", (key, value)
            )
        )

"""The builtin provider's fact store: one SQLite database under ``$HERMES_HOME/memory/``.

The standard library's ``sqlite3``, nothing else. Facts are rows of ``facts``; where the SQLite
build has FTS5, an external-content full-text index (``facts_fts``, Porter stemming, so
"editors" finds "editor") ranks them by BM25; where it has not, a plain ``LIKE`` over the
query's words ranks them by how many words they contain. The database runs in WAL mode with
``synchronous=FULL``, and every write (an add, a forget, a batch) is one transaction that
updates the facts and their index together: a process killed at any moment leaves every
committed fact and a readable database, and a reader never waits for a writer.

An index left behind by a build without FTS5 (the facts were written where it was missing) is
rebuilt the next time a build with FTS5 opens the database.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import attrs

__all__ = [
    "DB_FILE",
    "FTS_SEARCH_SQL",
    "MAX_FACT_CHARS",
    "Fact",
    "FactStore",
    "StoreError",
    "db_path",
    "fts5_available",
    "fts_query",
    "query_terms",
]

DB_FILE: Final = Path("memory") / "facts.db"
"""Where the builtin provider keeps its facts, relative to the Hermes home."""
MAX_FACT_CHARS: Final = 4000
"""The longest fact accepted."""
SCHEMA_VERSION: Final = 1

_WORD: Final = re.compile(r"\w+", re.UNICODE)
_STOPWORD_TEXT: Final = """
a about above after again against all am an and any are as at
be because been before being below between both but by can could did do
does doing down during each few for from further had has have having he
her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off
on once only or other our ours ourselves out over own same she should
so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when
where which while who whom why will with would you your yours yourself yourselves
tell know remember recall please
"""
STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())
"""Words a query's search leaves out: they match nearly every fact and rank nothing."""


class StoreError(Exception):
    """A fact cannot be written or read (empty, too long, the database is damaged)."""


def db_path(home: Path) -> Path:
    """Return the builtin provider's database file under ``home``."""
    return home / DB_FILE


@functools.cache
def fts5_available() -> bool:
    """Tell whether this Python's SQLite has the FTS5 full-text module."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        connection.close()


def query_terms(query: str, limit: int = 16) -> list[str]:
    """Return the words of ``query`` a search looks for: lower case, no stopwords, no repeats."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        seen.setdefault(word, None)
        if len(seen) >= limit:
            break
    return list(seen)


def fts_query(terms: Sequence[str]) -> str:
    """Return the FTS5 ``MATCH`` expression for ``terms``: any of them, each quoted."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


@attrs.frozen
class Fact:
    """One remembered fact.

    :param id: its number, stable for its life (``hermes memory forget ID``).
    :param content: the fact's text.
    :param target: ``memory`` (the agent's notes) or ``user`` (about the person).
    :param created_at: when it was written, ISO 8601 UTC.
    :param session_id: the session that wrote it, if known.
    """

    id: int
    content: str
    target: str = "memory"
    created_at: str = ""
    session_id: str = ""

    def to_dict(self) -> dict[str, object]:
        """Return the fact as JSON data."""
        return attrs.asdict(self)


_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT 'memory',
    created_at TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_FTS_SCHEMA: Final = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(content, content='facts', "
    "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')"
)
_COLUMNS: Final = "id, content, target, created_at, session_id"
FTS_SEARCH_SQL: Final = (
    "SELECT f.id, f.content, f.target, f.created_at, f.session_id FROM facts_fts "
    "JOIN facts AS f ON f.id = facts_fts.rowid "
    "WHERE facts_fts MATCH ? ORDER BY bm25(facts_fts), f.id DESC LIMIT ?"
)
"""The full-text search: the facts matching a ``MATCH`` expression, the best BM25 first."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _private_file(path: Path) -> None:
    """Create ``path``'s folder (0700) and the file itself (0600) before SQLite opens it.

    Facts are as private as ``config.yaml`` and ``.env``: SQLite gives its ``-wal`` and ``-shm``
    files the database file's mode, so creating the file 0600 keeps all three private.
    """
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.name == "memory":
        os.chmod(folder, 0o700)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    os.chmod(path, 0o600)


class FactStore:
    """The facts of one home; safe to share between threads (one connection, one lock).

    :param path: the database file; its folder is created.
    :param use_fts: use FTS5 when the build has it (``False`` forces the ``LIKE`` search).
    :param timeout: seconds to wait for another process's write lock.
    :raises StoreError: the file is not a database this store can use.
    """

    def __init__(self, path: Path, *, use_fts: bool = True, timeout: float = 5.0) -> None:
        self.path = path
        _private_file(path)
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(
                path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            if self._db.execute("PRAGMA user_version").fetchone()[0] == 0:
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.fts = bool(use_fts) and fts5_available()
            if self.fts:
                self._open_fts()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a memory database this version can use: {exc}") from exc

    def _open_fts(self) -> None:
        self._db.execute(_FTS_SCHEMA)
        stale = self._db.execute("SELECT value FROM meta WHERE key = 'fts_stale'").fetchone()
        if stale is not None and stale[0] == "1":
            with self._write():
                self._db.execute("INSERT INTO facts_fts(facts_fts) VALUES ('rebuild')")
                self._db.execute("DELETE FROM meta WHERE key = 'fts_stale'")

    def close(self) -> None:
        """Close the database (a later call on this store fails)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> FactStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed whole, or rolled back whole."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _mark_stale(self, db: sqlite3.Connection) -> None:
        if not self.fts:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('fts_stale', '1')")

    # -- writing ----------------------------------------------------------------------------------

    @staticmethod
    def _checked(content: object) -> str:
        if not isinstance(content, str) or not content.strip():
            raise StoreError(f"a fact must be non-empty text, found {content!r}")
        text = content.strip()
        if len(text) > MAX_FACT_CHARS:
            raise StoreError(
                f"a fact may have at most {MAX_FACT_CHARS} characters, found {len(text)}"
            )
        return text

    def add(self, content: str, *, target: str = "memory", session_id: str = "") -> Fact:
        """Write one fact, in one transaction, and return it.

        :raises StoreError: empty, or longer than :data:`MAX_FACT_CHARS`.
        """
        return self.add_many([content], target=target, session_id=session_id)[0]

    def add_many(
        self, contents: Iterable[str], *, target: str = "memory", session_id: str = ""
    ) -> list[Fact]:
        """Write several facts in one transaction; none is written if one is refused."""
        texts = [self._checked(content) for content in contents]
        created = _now()
        facts = []
        with self._write() as db:
            for text in texts:
                cursor = db.execute(
                    "INSERT INTO facts(content, target, created_at, session_id) "
                    "VALUES (?, ?, ?, ?)",
                    (text, target, created, session_id),
                )
                fact_id = int(cursor.lastrowid or 0)
                if self.fts:
                    db.execute(
                        "INSERT INTO facts_fts(rowid, content) VALUES (?, ?)", (fact_id, text)
                    )
                facts.append(Fact(fact_id, text, target, created, session_id))
            self._mark_stale(db)
        return facts

    def forget(self, fact_id: int) -> Fact | None:
        """Delete fact ``fact_id`` in one transaction; return it, or ``None`` when there is none."""
        with self._write() as db:
            row = db.execute(f"SELECT {_COLUMNS} FROM facts WHERE id = ?", (fact_id,)).fetchone()
            if row is None:
                return None
            if self.fts:
                db.execute(
                    "INSERT INTO facts_fts(facts_fts, rowid, content) VALUES ('delete', ?, ?)",
                    (row[0], row[1]),
                )
            db.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            self._mark_stale(db)
        return Fact(*row)

    # -- reading ----------------------------------------------------------------------------------

    def get(self, fact_id: int) -> Fact | None:
        """Return fact ``fact_id``, or ``None``."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM facts WHERE id = ?", (fact_id,)
            ).fetchone()
        return Fact(*row) if row is not None else None

    def count(self) -> int:
        """Return how many facts there are."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM facts").fetchone()[0])

    def latest(self, limit: int = 20) -> list[Fact]:
        """Return the newest facts, newest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM facts ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
        return [Fact(*row) for row in rows]

    def search(self, query: str, limit: int = 5) -> list[Fact]:
        """Return up to ``limit`` facts matching any word of ``query``, the best first.

        FTS5's BM25 ranking where available, else the number of the query's words a fact has.
        A query of stopwords only finds nothing.
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        with self._lock:
            if self.fts:
                rows = self._db.execute(FTS_SEARCH_SQL, (fts_query(terms), limit)).fetchall()
            else:
                patterns = [f"%{_escape_like(term)}%" for term in terms]
                score = " + ".join("(content LIKE ? ESCAPE '\\')" for _ in patterns)
                rows = self._db.execute(
                    f"SELECT {_COLUMNS} FROM (SELECT *, ({score}) AS score FROM facts) "
                    "WHERE score > 0 ORDER BY score DESC, id DESC LIMIT ?",
                    (*patterns, limit),
                ).fetchall()
        return [Fact(*row) for row in rows]

    def check(self) -> str:
        """Return SQLite's ``quick_check`` verdict (``ok`` for a sound database)."""
        with self._lock:
            return str(self._db.execute("PRAGMA quick_check").fetchone()[0])


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

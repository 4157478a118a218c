"""The builtin memory provider: facts in SQLite under ``$HERMES_HOME``, and the ``memory`` tool.

Always active first (``memory.builtin: false`` turns it off), offline, no key. The model keeps
facts with the ``memory`` tool (``add``, ``search``, ``forget``, ``list``); before each user
turn :meth:`BuiltinMemoryProvider.prefetch` recalls the facts that match the message, which the
host injects as recalled context. See :mod:`hermes_hooks.backends.memory.store` for the
database.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.memory.provider import MemoryProvider, RecallStatus
from hermes_hooks.backends.memory.registry import BUILTIN_NAME

if TYPE_CHECKING:
    from hermes_hooks.backends.memory.store import Fact, FactStore

__all__ = ["MEMORY_TOOL", "MEMORY_TOOL_SCHEMA", "PREFETCH_LIMIT", "BuiltinMemoryProvider"]

MEMORY_TOOL: Final = "memory"
PREFETCH_LIMIT: Final = 5
"""How many facts a turn recalls at most."""
_LIST_LIMIT: Final = 20

MEMORY_TOOL_SCHEMA: Final[dict[str, Any]] = {
    "name": MEMORY_TOOL,
    "description": (
        "Your persistent memory, kept across sessions. add: save a durable fact the moment "
        "you learn it (a preference, a decision, a detail about the user or the project), "
        "one fact per call; search: look facts up by words; forget: delete a fact that is "
        "wrong or that the user asks you to forget, by its id; list: the newest facts. Facts "
        "that match each message are recalled for you automatically."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "search", "forget", "list"]},
            "content": {"type": "string", "description": "The fact to save (add)."},
            "target": {
                "type": "string",
                "enum": ["memory", "user"],
                "description": "user: about the person; memory: your own notes (add).",
            },
            "query": {"type": "string", "description": "Words to look for (search)."},
            "id": {"type": "integer", "description": "The fact's id (forget)."},
            "limit": {"type": "integer", "description": "At most this many facts (default 10)."},
        },
        "required": ["action"],
    },
}
"""The ``memory`` tool, in the shape Hermes' providers return from ``get_tool_schemas``."""


def _error(message: str) -> str:
    return json.dumps({"success": False, "error": message}, ensure_ascii=False)


def _ok(**data: Any) -> str:
    return json.dumps({"success": True, **data}, ensure_ascii=False)


class BuiltinMemoryProvider(MemoryProvider):
    """The host's memory: one :class:`~hermes_hooks.backends.memory.store.FactStore` per home.

    Shared by the sessions of its manager: ``initialize`` notes the home, the store is opened
    on first use (and the database created by the first fact: a home that never kept one has
    none), ``shutdown`` closes it (the host calls it when the last session ends).

    :param use_fts: use FTS5 where the build has it (``False`` forces the ``LIKE`` search).
    """

    def __init__(self, *, use_fts: bool = True) -> None:
        self._use_fts = use_fts
        self._store: FactStore | None = None
        self._home: Path | None = None
        self._lock = threading.Lock()
        self._last_recall = 0

    @property
    def name(self) -> str:
        return BUILTIN_NAME

    @property
    def store(self) -> FactStore | None:
        """The store, opened (or created) now; ``None`` before ``initialize``."""
        return self._open(create=True) if self._home is not None else None

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Use ``<hermes_home>/memory/facts.db`` (created when the first fact is kept)."""
        home = Path(str(kwargs["hermes_home"]))
        with self._lock:
            if self._store is not None and self._home != home:
                self._store.close()
                self._store = None
            self._home = home

    def _open(self, *, create: bool) -> FactStore | None:
        """Return the store; ``None`` when it has no database yet and ``create`` is false."""
        from hermes_hooks.backends.memory.store import FactStore, db_path

        with self._lock:
            if self._store is None:
                if self._home is None:
                    raise RuntimeError("the builtin memory provider is not initialized")
                path = db_path(self._home)
                if not create and not path.is_file():
                    return None
                self._store = FactStore(path, use_fts=self._use_fts)
            return self._store

    def shutdown(self) -> None:
        """Close the store."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def _require(self) -> FactStore:
        store = self._open(create=True)
        assert store is not None
        return store

    def system_prompt_block(self) -> str:
        store = self._open(create=False) if self._home is not None else None
        count = store.count() if store is not None else 0
        saved = "no facts saved yet" if count == 0 else f"{count} facts saved"
        return (
            f"# Memory\nYou have a persistent memory ({saved}). Facts that match each message "
            "are recalled into it in a <memory-context> block. Use the memory tool to save a "
            "durable fact the moment you learn one (action add), to look facts up (search), "
            "and to delete a fact that is wrong or that the user asks you to forget (forget, "
            "by id)."
        )

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Return the facts that match ``query``, one ``- [#id] fact`` line each."""
        store = self._open(create=False)
        facts = store.search(query, limit=PREFETCH_LIMIT) if store is not None else []
        self._last_recall = len(facts)
        if not facts:
            return ""
        return "## Memory (builtin)\n" + "\n".join(f"- [#{f.id}] {f.content}" for f in facts)

    def recall_status(self) -> RecallStatus | None:
        return RecallStatus("Memory", self._last_recall) if self._last_recall else None

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return [MEMORY_TOOL_SCHEMA]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run the ``memory`` tool; the result is JSON with ``success`` and the facts."""
        if tool_name != MEMORY_TOOL:
            return _error(f"the builtin memory provider has no tool {tool_name!r}")
        from hermes_hooks.backends.memory.store import StoreError

        action = args.get("action")
        try:
            store = self._require()
            if action == "add":
                target = args.get("target") or "memory"
                if target not in ("memory", "user"):
                    return _error(f"target must be 'memory' or 'user', found {target!r}")
                fact = store.add(
                    args.get("content", ""),
                    target=str(target),
                    session_id=str(kwargs.get("session_id") or ""),
                )
                return _ok(action="add", **fact.to_dict())
            if action == "search":
                query = args.get("query") or args.get("content") or ""
                found = store.search(str(query), limit=_limit(args, 10))
                return _ok(action="search", results=_facts(found), count=len(found))
            if action == "forget":
                fact_id = args.get("id")
                if isinstance(fact_id, str) and fact_id.strip().lstrip("#").isdigit():
                    fact_id = int(fact_id.strip().lstrip("#"))
                if isinstance(fact_id, bool) or not isinstance(fact_id, int):
                    return _error(f"forget needs the fact's id (an integer), found {fact_id!r}")
                gone = store.forget(fact_id)
                if gone is None:
                    return _error(f"there is no fact #{fact_id}")
                return _ok(action="forget", removed_entry=gone.content, **gone.to_dict())
            if action == "list":
                latest = store.latest(_limit(args, _LIST_LIMIT))
                return _ok(action="list", facts=_facts(latest), total=store.count())
        except StoreError as exc:
            return _error(str(exc))
        return _error(f"action must be add, search, forget or list, found {action!r}")


def _limit(args: dict[str, Any], default: int) -> int:
    value = args.get("limit")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return min(value, 100)
    return default


def _facts(facts: list[Fact]) -> list[dict[str, object]]:
    return [fact.to_dict() for fact in facts]

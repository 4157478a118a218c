"""The kanban board: tasks in SQLite under the home, and the hooks each transition fires.

As in Hermes (``hermes_cli/kanban_db.py``), the default board is ``$HERMES_HOME/kanban.db``,
another board ``$HERMES_HOME/kanban/boards/<slug>/kanban.db``, and ``HERMES_KANBAN_DB`` pins
the file. A task is ``todo``, ``claimed``, ``done`` or ``blocked``:

- :meth:`KanbanBoard.claim` moves ``todo`` → ``claimed`` and starts a run (``kanban_task_claimed``);
- :meth:`KanbanBoard.complete` moves ``claimed`` → ``done`` (``kanban_task_completed``);
- :meth:`KanbanBoard.block` moves ``todo`` or ``claimed`` → ``blocked`` (``kanban_task_blocked``);
- :meth:`KanbanBoard.unblock` moves ``blocked`` → ``todo``; :meth:`KanbanBoard.update` writes
  fields (``on_kanban_task_updated``, with the names of the fields written).

Each transition is one conditional ``UPDATE`` in its own transaction, so two processes racing
for the same task cannot both win: exactly one commits, and only that one fires the hook, once,
after the commit (a slow plugin never holds the write lock). A transition that does not apply
raises :class:`KanbanError` naming the task, its status and what was asked.

:meth:`KanbanBoard.dispatch_once` is the dispatcher's tick: it reclaims claims whose worker
died (``on_kanban_worker_exited``) or whose time ran out with no worker
(``on_kanban_worker_stale_claim``; a live worker's claim is extended, silently), claims the
assigned ``todo`` tasks and starts a worker for each (``on_kanban_worker_spawned``), then fires
``on_kanban_dispatch_tick`` after its lock is released.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from hermes_hooks.errors import HermesHooksError
from hermes_hooks.spec.hookspecs import TELEMETRY_SCHEMA_VERSION

if TYPE_CHECKING:
    from hermes_hooks.calling.facade import Hooks

__all__ = [
    "CLAIM_TTL",
    "WORKER_ENV",
    "STATUSES",
    "DispatchResult",
    "KanbanBoard",
    "KanbanError",
    "board_path",
    "finish_worker_task",
    "worker_spawner",
]

Status = Literal["todo", "claimed", "done", "blocked"]
STATUSES: Final[tuple[Status, ...]] = ("todo", "claimed", "done", "blocked")
"""Every status a task can have."""

CLAIM_TTL: Final = 3600.0
"""How long a claim lasts without being renewed, in seconds, before the dispatcher reclaims it."""

DEFAULT_BOARD: Final = "default"

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'todo',
    assignee TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    run_id INTEGER,
    worker_pid INTEGER,
    claim_expires REAL,
    summary TEXT,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    outcome TEXT
);
"""

_COLUMNS: Final = ("id", "title", "body", "status", "assignee", "created_at", "updated_at")
_EDITABLE: Final = ("title", "body", "assignee")


class KanbanError(HermesHooksError):
    """A task that does not exist, or a transition its status does not allow."""


def board_path(home: Path, board: str | None = None) -> Path:
    """Return the SQLite file of ``board`` under ``home`` (``HERMES_KANBAN_DB`` pins it)."""
    pinned = os.environ.get("HERMES_KANBAN_DB", "").strip()
    if pinned:
        return Path(pinned).expanduser()
    if board is None or board == DEFAULT_BOARD:
        return home / "kanban.db"
    if not board.replace("-", "").replace("_", "").isalnum():
        raise KanbanError(f"board {board!r}: a board's name is letters, digits, '-' and '_'")
    return home / "kanban" / "boards" / board / "kanban.db"


@attrs.define
class DispatchResult:
    """What one dispatcher tick did (task ids)."""

    spawned: list[str] = attrs.Factory(list)
    reclaimed: list[str] = attrs.Factory(list)
    stale: list[str] = attrs.Factory(list)

    def to_dict(self) -> dict[str, list[str]]:
        """The result as plain lists, for ``--json``."""
        return {"spawned": self.spawned, "reclaimed": self.reclaimed, "stale": self.stale}


def _worker_state(pid: int) -> tuple[bool, str, int | None]:
    """Return whether worker ``pid`` runs, and when it does not, its exit kind and code.

    A dead child is reaped here; a process that is not this one's child is only probed.
    """
    try:
        waited, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False, "unknown", None
        except PermissionError:
            return True, "", None
        return True, "", None
    if waited == 0:
        return True, "", None
    if os.WIFSIGNALED(status):
        return False, "signaled", -os.WTERMSIG(status)
    code = os.WEXITSTATUS(status)
    return False, ("clean_exit" if code == 0 else "nonzero_exit"), code


class KanbanBoard:
    """One board's tasks, in its SQLite file.

    :param path: the board's database file (made, with its folder, on first use).
    :param board: the board's name; ``None`` for the default board.
    :param hooks: the facade the transitions' hooks are fired through; ``None`` fires none
        (a reader such as the dashboard).
    :param profile_name: the profile reported to the hooks.
    :param claim_ttl: how long a claim lasts, in seconds (:data:`CLAIM_TTL`).
    """

    def __init__(
        self,
        path: Path,
        *,
        board: str | None = None,
        hooks: Hooks | None = None,
        profile_name: str = "default",
        claim_ttl: float = CLAIM_TTL,
    ) -> None:
        self.path = path
        self.claim_ttl = claim_ttl
        self.board = board
        self.hooks = hooks
        self.profile_name = profile_name
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.executescript(_SCHEMA)

    @classmethod
    def open(
        cls,
        home: Path,
        board: str | None = None,
        *,
        hooks: Hooks | None = None,
        profile_name: str = "default",
        claim_ttl: float = CLAIM_TTL,
    ) -> KanbanBoard:
        """Open ``board`` (the default one when ``None``) under the Hermes home ``home``."""
        return cls(
            board_path(home, board),
            board=None if board == DEFAULT_BOARD else board,
            hooks=hooks,
            profile_name=profile_name,
            claim_ttl=claim_ttl,
        )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30, isolation_level=None)) as db:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            yield db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``), committed at the end."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- reading --------------------------------------------------------------------------------

    def list_tasks(self, status: str | None = None) -> list[dict[str, object]]:
        """Return the tasks (oldest first), each with ``id``, ``title``, ``body``, ``status``,
        ``assignee``, ``created_at`` and ``updated_at`` (seconds since the epoch)."""
        query = f"SELECT {', '.join(_COLUMNS)} FROM tasks"
        args: tuple[object, ...] = ()
        if status is not None:
            query += " WHERE status = ?"
            args = (status,)
        with self._connect() as db:
            rows = db.execute(query + " ORDER BY created_at, id", args).fetchall()
        return [dict(row) for row in rows]

    def get(self, task_id: str) -> dict[str, object]:
        """Return one task as :meth:`list_tasks` does.

        :raises KanbanError: there is no such task.
        """
        with self._connect() as db:
            row = db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM tasks WHERE id = ?", (task_id,)
            ).fetchone()
        if row is None:
            raise KanbanError(f"no task {task_id!r} on board {self.board or DEFAULT_BOARD!r}")
        return dict(row)

    # -- transitions ----------------------------------------------------------------------------

    def create(
        self, title: str, body: str = "", *, assignee: str | None = None
    ) -> dict[str, object]:
        """Add a ``todo`` task and return it.

        :raises KanbanError: ``title`` is empty.
        """
        if not isinstance(title, str) or not title.strip():
            raise KanbanError("a task needs a non-empty title")
        now = time.time()
        task_id = f"t_{uuid.uuid4().hex[:10]}"
        with self._write() as db:
            db.execute(
                "INSERT INTO tasks (id, title, body, status, assignee, created_at, updated_at)"
                " VALUES (?, ?, ?, 'todo', ?, ?, ?)",
                (task_id, title.strip(), body, assignee, now, now),
            )
        return self.get(task_id)

    def _move(
        self,
        db: sqlite3.Connection,
        task_id: str,
        allowed: tuple[str, ...],
        wanted: str,
        fields: Mapping[str, object],
    ) -> sqlite3.Row:
        """Move ``task_id`` from one of ``allowed`` to ``wanted`` in ``db``; return the row."""
        assignments = ", ".join(f"{name} = ?" for name in fields)
        marks = ", ".join("?" for _ in allowed)
        cursor = db.execute(
            f"UPDATE tasks SET status = ?, updated_at = ?{', ' if fields else ''}{assignments}"
            f" WHERE id = ? AND status IN ({marks})",
            (wanted, time.time(), *fields.values(), task_id, *allowed),
        )
        row = db.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
        if cursor.rowcount != 1:
            if row is None:
                raise KanbanError(f"no task {task_id!r} on board {self.board or DEFAULT_BOARD!r}")
            raise KanbanError(
                f"task {task_id!r} is {row['status']}: it cannot become {wanted} "
                f"(only a task that is {' or '.join(allowed)} can)"
            )
        return row  # type: ignore[no-any-return]

    def _fire(self, hook: str, row: sqlite3.Row | Mapping[str, Any], **extra: Any) -> None:
        if self.hooks is None:
            return
        getattr(self.hooks, hook)(
            telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
            task_id=row["id"],
            profile_name=self.profile_name,
            board=self.board,
            assignee=row["assignee"],
            run_id=row["run_id"],
            **extra,
        )

    def _claim(self, db: sqlite3.Connection, task_id: str, assignee: str | None) -> sqlite3.Row:
        cursor = db.execute(
            "INSERT INTO runs (task_id, started_at) VALUES (?, ?)", (task_id, time.time())
        )
        fields: dict[str, object] = {
            "run_id": cursor.lastrowid,
            "claim_expires": time.time() + self.claim_ttl,
            "worker_pid": None,
        }
        if assignee is not None:
            fields["assignee"] = assignee
        return self._move(db, task_id, ("todo",), "claimed", fields)

    def claim(self, task_id: str, *, assignee: str | None = None) -> dict[str, object]:
        """Claim a ``todo`` task (for ``assignee``, when given) and start its run.

        :raises KanbanError: no such task, or it is not ``todo``.
        """
        with self._write() as db:
            row = self._claim(db, task_id, assignee)
        self._fire("kanban_task_claimed", row)
        return self.get(task_id)

    def complete(self, task_id: str, *, summary: str | None = None) -> dict[str, object]:
        """Complete a ``claimed`` task, with the worker's ``summary``.

        :raises KanbanError: no such task, or it is not ``claimed``.
        """
        with self._write() as db:
            row = self._move(
                db, task_id, ("claimed",), "done", {"summary": summary, "claim_expires": None}
            )
            db.execute(
                "UPDATE runs SET ended_at = ?, outcome = 'completed' WHERE id = ?",
                (time.time(), row["run_id"]),
            )
        self._fire("kanban_task_completed", row, summary=summary)
        return self.get(task_id)

    def block(self, task_id: str, *, reason: str | None = None) -> dict[str, object]:
        """Block a ``todo`` or ``claimed`` task, saying why.

        :raises KanbanError: no such task, or it is done or blocked already.
        """
        with self._write() as db:
            row = self._move(
                db,
                task_id,
                ("todo", "claimed"),
                "blocked",
                {"reason": reason, "claim_expires": None},
            )
        self._fire("kanban_task_blocked", row, reason=reason)
        return self.get(task_id)

    def unblock(self, task_id: str) -> dict[str, object]:
        """Put a ``blocked`` task back to ``todo`` (``on_kanban_task_updated``: ``status``)."""
        with self._write() as db:
            row = self._move(db, task_id, ("blocked",), "todo", {"reason": None})
        self._fire("on_kanban_task_updated", row, changed_fields=["status"])
        return self.get(task_id)

    def update(self, task_id: str, **fields: str | None) -> dict[str, object]:
        """Write ``title``, ``body`` or ``assignee`` of a task (``on_kanban_task_updated``).

        :raises KanbanError: no such task, or another field is named.
        """
        unknown = sorted(set(fields) - set(_EDITABLE))
        if unknown:
            raise KanbanError(f"cannot update {unknown} of a task: only {list(_EDITABLE)}")
        if not fields:
            return self.get(task_id)
        with self._write() as db:
            assignments = ", ".join(f"{name} = ?" for name in fields)
            cursor = db.execute(
                f"UPDATE tasks SET {assignments}, updated_at = ? WHERE id = ?",
                (*fields.values(), time.time(), task_id),
            )
            row = db.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
        if cursor.rowcount != 1:
            raise KanbanError(f"no task {task_id!r} on board {self.board or DEFAULT_BOARD!r}")
        self._fire("on_kanban_task_updated", row, changed_fields=sorted(fields))
        return self.get(task_id)

    # -- the dispatcher -------------------------------------------------------------------------

    def dispatch_once(
        self,
        spawn: Callable[[Mapping[str, object]], tuple[int, str | None]],
        *,
        dry_run: bool = False,
        max_spawn: int | None = None,
        default_assignee: str | None = None,
    ) -> DispatchResult:
        """Run one dispatcher tick.

        :param spawn: starts the worker of a claimed task; returns its pid and its workspace
            folder (or ``None``). It runs inside the tick's write lock: keep it fast.
        :param dry_run: only look: what would be spawned is reported, nothing is written.
        :param max_spawn: start at most this many workers in this tick (Hermes'
            ``kanban.max_spawn`` / ``--max``); the others wait for the next tick.
        :param default_assignee: who a ``todo`` task without an assignee is given to
            (``kanban.default_assignee``); without it such a task is not dispatched.
        """
        result = DispatchResult()
        spawned: list[tuple[sqlite3.Row, int, str | None]] = []
        exited: list[tuple[sqlite3.Row, str, int | None]] = []
        stale: list[sqlite3.Row] = []
        claimed: list[sqlite3.Row] = []
        extended: list[str] = []
        with self._connect() if dry_run else self._write() as db:
            now = time.time()
            for row in db.execute("SELECT * FROM tasks WHERE status = 'claimed'").fetchall():
                pid = row["worker_pid"]
                alive, kind, code = _worker_state(int(pid)) if pid is not None else (True, "", None)
                expired = row["claim_expires"] is not None and row["claim_expires"] < now
                if not alive:
                    exited.append((row, kind, code))
                elif expired and pid is None:
                    stale.append(row)
                elif expired:
                    extended.append(row["id"])
            result.reclaimed.extend(row["id"] for row, _, _ in exited)
            result.stale.extend(row["id"] for row in stale)
            todo = db.execute(
                "SELECT * FROM tasks WHERE status = 'todo'"
                " AND (assignee IS NOT NULL OR ? IS NOT NULL) ORDER BY created_at",
                (default_assignee,),
            ).fetchall()
            if max_spawn is not None:
                todo = todo[: max(max_spawn, 0)]
            result.spawned.extend(row["id"] for row in todo)
            if not dry_run:
                for task_id in extended:  # a live worker keeps its claim: no hook
                    db.execute(
                        "UPDATE tasks SET claim_expires = ? WHERE id = ?",
                        (now + self.claim_ttl, task_id),
                    )
                for row, kind, _ in exited:
                    self._requeue(db, row, f"worker_{kind}")
                for row in stale:
                    self._requeue(db, row, "stale_claim")
                claimed.extend(
                    self._claim(db, row["id"], None if row["assignee"] else default_assignee)
                    for row in todo
                )
                for row in claimed:
                    pid, workspace = spawn(dict(row))
                    db.execute("UPDATE tasks SET worker_pid = ? WHERE id = ?", (pid, row["id"]))
                    spawned.append((row, pid, workspace))
        if not dry_run:
            self._fire_dispatched(exited, stale, claimed, spawned)
        if self.hooks is not None:
            busy = result.spawned or result.reclaimed or result.stale
            self.hooks.on_kanban_dispatch_tick(
                telemetry_schema_version=TELEMETRY_SCHEMA_VERSION,
                board=self.board,
                profile_name=self.profile_name,
                dry_run=dry_run,
                outcome="ok" if busy else "idle",
                result=result,
            )
        return result

    def _fire_dispatched(
        self,
        exited: list[tuple[sqlite3.Row, str, int | None]],
        stale: list[sqlite3.Row],
        claimed: list[sqlite3.Row],
        spawned: list[tuple[sqlite3.Row, int, str | None]],
    ) -> None:
        """Fire the hooks of what a tick did, once its write lock is released."""
        for row, kind, code in exited:
            self._fire(
                "on_kanban_worker_exited",
                row,
                worker_pid=row["worker_pid"],
                exit_kind=kind,
                exit_code=code,
                outcome="requeued",
                retry_status="will_retry",
            )
        for row in stale:
            self._fire(
                "on_kanban_worker_stale_claim",
                row,
                worker_pid=row["worker_pid"],
                heartbeat_stale=True,
                retry_status="will_retry",
            )
        for row in claimed:
            self._fire("kanban_task_claimed", row)
        for row, pid, workspace in spawned:
            self._fire("on_kanban_worker_spawned", row, worker_pid=pid, workspace_path=workspace)

    def _requeue(self, db: sqlite3.Connection, row: sqlite3.Row, outcome: str) -> None:
        db.execute(
            "UPDATE tasks SET status = 'todo', worker_pid = NULL, claim_expires = NULL,"
            " updated_at = ? WHERE id = ?",
            (time.time(), row["id"]),
        )
        db.execute(
            "UPDATE runs SET ended_at = ?, outcome = ? WHERE id = ?",
            (time.time(), outcome, row["run_id"]),
        )


WORKER_ENV: Final = (
    "HERMES_KANBAN_TASK",
    "HERMES_KANBAN_DB",
    "HERMES_KANBAN_BOARD",
    "HERMES_KANBAN_WORKSPACE",
    "HERMES_KANBAN_RUN_ID",
)
"""What a worker is told in its environment (Hermes' names): its task, the board's file and
name, its workspace and its run."""


def worker_spawner(
    home: Path, board: KanbanBoard, *, command: list[str] | None = None
) -> Callable[[Mapping[str, object]], tuple[int, str | None]]:
    """Return the ``spawn`` of :meth:`KanbanBoard.dispatch_once` that ``hermes kanban
    dispatch`` uses: each claimed task gets a worker, ``hermes -z "<title>\n\n<body>"`` in
    its own session (it outlives the dispatcher), in the workspace
    ``$HERMES_HOME/kanban/workspaces/<task id>/`` (``HERMES_KANBAN_WORKSPACES_ROOT`` moves the
    folder of workspaces) with its output in ``worker.log`` there, and
    :data:`WORKER_ENV` set, so that the worker completes (or blocks) the task itself.

    :param command: the program and its first arguments (``hermes`` by default, as
        ``python -m hermes_hooks``).
    """
    import sys

    program = command or [sys.executable, "-m", "hermes_hooks"]

    def spawn(task: Mapping[str, object]) -> tuple[int, str | None]:
        task_id = str(task["id"])
        root = os.environ.get("HERMES_KANBAN_WORKSPACES_ROOT", "").strip()
        workspace = (Path(root).expanduser() if root else home / "kanban" / "workspaces") / task_id
        workspace.mkdir(parents=True, exist_ok=True)
        prompt = str(task.get("title") or "")
        if task.get("body"):
            prompt += f"\n\n{task['body']}"
        env = dict(os.environ)
        env.update(
            {
                "HERMES_HOME": str(home),
                "HERMES_KANBAN_TASK": task_id,
                "HERMES_KANBAN_DB": str(board.path),
                "HERMES_KANBAN_BOARD": board.board or DEFAULT_BOARD,
                "HERMES_KANBAN_WORKSPACE": str(workspace),
                "HERMES_KANBAN_RUN_ID": str(task.get("run_id") or ""),
            }
        )
        log = os.open(workspace / "worker.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            # posix_spawn, not Popen: the worker outlives the dispatcher and is nobody's
            # object to wait for. sh only enters the workspace; the arguments stay arguments.
            argv = [
                "/bin/sh",
                "-c",
                'cd "$1" && shift && exec "$@"',
                "sh",
                str(workspace),
                *program,
                "--home",
                str(home),
                "-z",
                prompt,
            ]
            pid = os.posix_spawn(
                argv[0],
                argv,
                env,
                file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, log, 1),
                    (os.POSIX_SPAWN_DUP2, log, 2),
                    (os.POSIX_SPAWN_CLOSE, log),
                ],
                setsid=True,
            )
        finally:
            os.close(log)
        return pid, str(workspace)

    return spawn


def finish_worker_task(
    home: Path, hooks: Hooks | None, *, ok: bool, summary: str
) -> dict[str, object] | None:
    """In a worker (:data:`WORKER_ENV` set): complete its task with ``summary``, or block it
    when the turn failed, firing ``kanban_task_completed`` or ``kanban_task_blocked`` here, in
    the worker, as Hermes does. Outside a worker it does nothing and returns ``None``.

    :raises KanbanError: the task is not ``claimed`` any more (reclaimed meanwhile).
    """
    task_id = os.environ.get("HERMES_KANBAN_TASK", "").strip()
    if not task_id:
        return None
    pinned = os.environ.get("HERMES_KANBAN_DB", "").strip()
    name = os.environ.get("HERMES_KANBAN_BOARD", "").strip() or None
    path = Path(pinned) if pinned else board_path(home, name)
    board = KanbanBoard(path, board=None if name == DEFAULT_BOARD else name, hooks=hooks)
    text = summary.strip()[:2000]
    if ok:
        return board.complete(task_id, summary=text or "done")
    return board.block(task_id, reason=text or "the worker's turn failed")

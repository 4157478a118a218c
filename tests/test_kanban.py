"""The kanban board: SQLite under the home, ``hermes kanban``, and one hook per transition."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from plugin_builders import PluginHome, home, recorder_module

from hermes_hooks import Hooks
from hermes_hooks.cli.main import cli
from hermes_hooks.host import create_manager
from hermes_hooks.host.kanban import KanbanBoard, KanbanError

__all__ = ["home"]

REC = "hermes_test_kanban_rec"

KANBAN_HOOKS = [
    "kanban_task_claimed",
    "kanban_task_completed",
    "kanban_task_blocked",
    "on_kanban_worker_spawned",
    "on_kanban_worker_exited",
    "on_kanban_worker_stale_claim",
    "on_kanban_task_updated",
    "on_kanban_dispatch_tick",
]

RECORDER = f"""
import {REC} as rec

def make(name):
    return lambda **kwargs: rec.calls.append((name, kwargs))

def register(ctx):
    for name in {KANBAN_HOOKS!r}:
        ctx.register_hook(name, make(name))
"""

# The same, writing to a file: the CLI test runs the command in its own manager.
FILE_RECORDER = f"""
import json, os

def make(name):
    def record(**kwargs):
        with open(os.path.join(os.environ["HERMES_HOME"], "hooks.jsonl"), "a") as out:
            out.write(json.dumps([name, kwargs.get("task_id"), kwargs.get("summary"),
                                  kwargs.get("reason")]) + "\\n")
    return record

def register(ctx):
    for name in {KANBAN_HOOKS[:3]!r}:
        ctx.register_hook(name, make(name))
"""


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Any:
    return recorder_module(monkeypatch, REC, calls=[])


@pytest.fixture
def board(home: PluginHome, rec: Any) -> KanbanBoard:
    home.add_plugin("recorder", RECORDER)
    home.write_config()
    return KanbanBoard.open(home.root, hooks=Hooks(create_manager(home.root)))


def fired(rec: Any) -> list[str]:
    return [name for name, _ in rec.calls if name != "on_kanban_dispatch_tick"]


def test_the_board_lives_in_sqlite_under_the_home(tmp_path: Path) -> None:
    board = KanbanBoard.open(tmp_path)
    task = board.create("Write notes", "the release", assignee="writer")
    assert (tmp_path / "kanban.db").is_file()
    again = KanbanBoard.open(tmp_path).list_tasks()
    assert again == [task]
    assert set(task) == {"id", "title", "body", "status", "assignee", "created_at", "updated_at"}
    assert (task["status"], task["assignee"], task["body"]) == ("todo", "writer", "the release")
    other = KanbanBoard.open(tmp_path, "ops")
    assert other.path == tmp_path / "kanban" / "boards" / "ops" / "kanban.db"
    assert other.list_tasks() == []
    with pytest.raises(KanbanError, match="non-empty title"):
        board.create("  ")


def test_kanban_task_claimed_fires_once_per_transition(board: KanbanBoard, rec: Any) -> None:
    task_id = str(board.create("t")["id"])
    board.claim(task_id, assignee="ann")
    with pytest.raises(KanbanError, match="is claimed: it cannot become claimed"):
        board.claim(task_id)
    board.complete(task_id, summary="all done")
    with pytest.raises(KanbanError, match="is done"):
        board.block(task_id, reason="late")
    assert fired(rec) == ["kanban_task_claimed", "kanban_task_completed"]
    claimed, completed = (kwargs for _, kwargs in rec.calls)
    assert (claimed["task_id"], claimed["assignee"], claimed["board"]) == (task_id, "ann", None)
    assert isinstance(claimed["run_id"], int)
    assert completed["run_id"] == claimed["run_id"]
    assert completed["summary"] == "all done"
    assert board.get(task_id)["status"] == "done"


def test_kanban_task_claimed_two_racing_claims_fire_one_hook(board: KanbanBoard, rec: Any) -> None:
    task_id = str(board.create("contested")["id"])
    outcomes: list[str] = []
    start = threading.Barrier(4)

    def claim() -> None:
        start.wait()
        try:
            board.claim(task_id)
            outcomes.append("won")
        except KanbanError:
            outcomes.append("lost")

    threads = [threading.Thread(target=claim) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["lost", "lost", "lost", "won"]
    assert fired(rec) == ["kanban_task_claimed"]


def test_kanban_task_blocked_and_on_kanban_task_updated(board: KanbanBoard, rec: Any) -> None:
    task_id = str(board.create("t")["id"])
    board.block(task_id, reason="waiting for keys")
    board.unblock(task_id)
    board.update(task_id, title="t, renamed", assignee="bob")
    with pytest.raises(KanbanError, match="only"):
        board.update(task_id, status="done")
    with pytest.raises(KanbanError, match="no task 'nope'"):
        board.update("nope", title="x")
    assert fired(rec) == ["kanban_task_blocked", "on_kanban_task_updated", "on_kanban_task_updated"]
    assert rec.calls[0][1]["reason"] == "waiting for keys"
    assert rec.calls[1][1]["changed_fields"] == ["status"]
    assert rec.calls[2][1]["changed_fields"] == ["assignee", "title"]
    assert rec.calls[2][1]["assignee"] == "bob"


def test_a_reader_fires_nothing(home: PluginHome, board: KanbanBoard, rec: Any) -> None:
    task_id = str(board.create("t")["id"])
    reader = KanbanBoard.open(home.root)
    reader.claim(task_id)
    assert rec.calls == []
    assert [t["status"] for t in reader.list_tasks("claimed")] == ["claimed"]


def _spawner(code: str, workers: list[subprocess.Popen[bytes]], workspace: Path) -> Any:
    def spawn(task: Any) -> tuple[int, str]:
        worker = subprocess.Popen([sys.executable, "-c", code])
        workers.append(worker)  # kept, so that nothing else reaps it
        return worker.pid, str(workspace)

    return spawn


def test_on_kanban_worker_exited_after_on_kanban_worker_spawned_through_dispatch(
    board: KanbanBoard, rec: Any, tmp_path: Path
) -> None:
    task_id = str(board.create("work", assignee="worker")["id"])
    board.create("nobody's")  # not assigned: not dispatched
    workers: list[subprocess.Popen[bytes]] = []
    result = board.dispatch_once(_spawner("raise SystemExit(3)", workers, tmp_path))
    assert result.spawned == [task_id]
    (worker,) = workers
    os.waitid(os.P_PID, worker.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped yet
    again = board.dispatch_once(_spawner("pass", workers, tmp_path))
    assert again.reclaimed == [task_id]
    names = fired(rec)
    assert names[:2] == ["kanban_task_claimed", "on_kanban_worker_spawned"]
    assert "on_kanban_worker_exited" in names
    spawned = rec.calls[[n for n, _ in rec.calls].index("on_kanban_worker_spawned")][1]
    assert (spawned["worker_pid"], spawned["workspace_path"]) == (worker.pid, str(tmp_path))
    exited = next(kw for n, kw in rec.calls if n == "on_kanban_worker_exited")
    assert (exited["worker_pid"], exited["exit_kind"], exited["exit_code"]) == (
        worker.pid,
        "nonzero_exit",
        3,
    )
    assert exited["outcome"] == "requeued"
    for leftover in workers:
        leftover.wait()


def test_on_kanban_worker_stale_claim_and_on_kanban_dispatch_tick(
    home: PluginHome, rec: Any
) -> None:
    home.add_plugin("recorder", RECORDER)
    home.write_config()
    board = KanbanBoard.open(home.root, hooks=Hooks(create_manager(home.root)), claim_ttl=0)
    task_id = str(board.create("claimed by hand")["id"])
    board.claim(task_id)  # no worker: its claim runs out at once
    idle_spawn: Any = lambda task: pytest.fail("nothing to spawn")  # noqa: E731
    result = board.dispatch_once(idle_spawn, dry_run=True)
    assert result.stale == [task_id]
    assert board.get(task_id)["status"] == "claimed"  # a dry run writes nothing
    result = board.dispatch_once(idle_spawn)
    assert result.stale == [task_id]
    assert board.get(task_id)["status"] == "todo"
    board.dispatch_once(idle_spawn)
    ticks = [kw for name, kw in rec.calls if name == "on_kanban_dispatch_tick"]
    assert [(t["dry_run"], t["outcome"]) for t in ticks] == [
        (True, "ok"),
        (False, "ok"),
        (False, "idle"),
    ]
    assert ticks[1]["result"].stale == [task_id]
    (stale,) = [kw for name, kw in rec.calls if name == "on_kanban_worker_stale_claim"]
    assert (stale["task_id"], stale["heartbeat_stale"]) == (task_id, True)


def test_hermes_kanban_commands_fire_their_hook_once(
    home: PluginHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.add_plugin("filerec", FILE_RECORDER)
    home.write_config()
    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(cli, ["--home", str(home.root), "kanban", *args])
        return result

    created = run("create", "Ship it", "--assignee", "ann", "--json")
    assert created.exit_code == 0, created.output
    task_id = json.loads(created.output)["id"]
    assert run("claim", task_id).exit_code == 0
    twice = run("claim", task_id)
    assert twice.exit_code == 1
    assert "cannot become claimed" in twice.output
    assert run("complete", task_id, "--summary", "shipped").exit_code == 0
    other = json.loads(run("create", "Later", "--json").output)["id"]
    assert run("block", other, "--reason", "no budget").exit_code == 0
    listing = run("list")
    assert "Ship it" in listing.output
    assert "done" in listing.output
    assert json.loads(run("list", "--status", "blocked", "--json").output)[0]["id"] == other
    lines = (home.root / "hooks.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        ["kanban_task_claimed", task_id, None, None],
        ["kanban_task_completed", task_id, "shipped", None],
        ["kanban_task_blocked", other, None, "no budget"],
    ]

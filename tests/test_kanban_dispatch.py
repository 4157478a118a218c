"""``hermes kanban dispatch``: one tick that starts a worker (``hermes -z`` on the task) for
each assigned todo task; the worker completes its task and fires ``kanban_task_completed`` in
its own process; ``--dry-run``, ``--max`` and ``kanban.default_assignee``."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from plugin_builders import PluginHome, home

from hermes_hooks.cli.main import cli
from hermes_hooks.host.kanban import KanbanBoard

__all__ = ["home"]

RECORDER = """
import json, os

def make(name):
    def record(**kwargs):
        with open(os.path.join(os.environ["HERMES_HOME"], "hooks.jsonl"), "a") as out:
            out.write(json.dumps([name, kwargs.get("task_id"), os.getpid(),
                                  kwargs.get("worker_pid"),
                                  os.environ.get("HERMES_KANBAN_WORKSPACE")]) + "\\n")
    return record

def register(ctx):
    for name in ("kanban_task_claimed", "kanban_task_completed", "kanban_task_blocked",
                 "on_kanban_worker_spawned", "on_kanban_dispatch_tick"):
        ctx.register_hook(name, make(name))
"""


def _run(home: PluginHome, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--home", str(home.root), "kanban", *args])


def _hooks(home: PluginHome) -> list[list[Any]]:
    path = home.root / "hooks.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_dispatch_starts_a_worker_that_completes_its_task(home: PluginHome) -> None:
    home.add_plugin("recorder", RECORDER)
    home.write_config()
    board = KanbanBoard.open(home.root)
    task_id = str(board.create("Say hello", body="briefly", assignee="worker")["id"])
    board.create("Nobody's")  # no assignee, no default_assignee: not dispatched

    preview = _run(home, "dispatch", "--dry-run", "--json")
    assert preview.exit_code == 0, preview.output
    assert json.loads(preview.output)["spawned"] == [task_id]
    assert board.get(task_id)["status"] == "todo"  # a dry run changes nothing

    started = _run(home, "dispatch")
    assert started.exit_code == 0, started.output
    assert "started 1 worker(s)" in started.output
    spawned = [h for h in _hooks(home) if h[0] == "on_kanban_worker_spawned"]
    assert [h[1] for h in spawned] == [task_id]
    worker_pid = spawned[0][3]
    try:
        deadline = time.monotonic() + 60
        while board.get(task_id)["status"] == "claimed" and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        os.waitpid(worker_pid, 0)  # the worker is this process's child here: reap it
    workspace = home.root / "kanban" / "workspaces" / task_id
    log = (workspace / "worker.log").read_text() if (workspace / "worker.log").exists() else ""
    task = board.get(task_id)
    assert task["status"] == "done", log
    completed = [h for h in _hooks(home) if h[0] == "kanban_task_completed"]
    assert [h[1] for h in completed] == [task_id]
    assert completed[0][2] == worker_pid  # fired in the worker, as Hermes does
    assert completed[0][4] == str(workspace)  # with Hermes' HERMES_KANBAN_* variables
    names = [h[0] for h in _hooks(home)]
    assert names.count("kanban_task_claimed") == 1
    assert names.count("on_kanban_dispatch_tick") == 2  # the dry run and the real tick


def test_max_and_the_default_assignee(home: PluginHome) -> None:
    home.write_config()
    config = home.root / "config.yaml"
    data = yaml.safe_load(config.read_text()) or {}
    data["kanban"] = {"default_assignee": "default", "max_spawn": 1}
    config.write_text(yaml.safe_dump(data))
    board = KanbanBoard.open(home.root)
    first = str(board.create("one")["id"])
    board.create("two")
    board.create("three")
    capped = _run(home, "dispatch", "--dry-run", "--json")
    assert json.loads(capped.output)["spawned"] == [first]  # kanban.max_spawn: 1
    wider = _run(home, "dispatch", "--dry-run", "--json", "--max", "2")
    assert len(json.loads(wider.output)["spawned"]) == 2  # --max overrides it
    assert _run(home, "dispatch", "--max", "-1").exit_code == 2


def test_a_worker_outside_dispatch_finishes_nothing(home: PluginHome, tmp_path: Path) -> None:
    from hermes_hooks.host.kanban import finish_worker_task

    assert "HERMES_KANBAN_TASK" not in os.environ
    assert finish_worker_task(home.root, None, ok=True, summary="x") is None

"""``hermes kanban claim|complete|block`` move a task; a task that is not there is an error."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import invoke
from homes import cli_home as home  # noqa: F401  (the fixture)


def kanban(*args: str) -> dict[str, object]:
    result = invoke("kanban", *args, "--json")
    assert result.exit_code == 0, result.output
    task: dict[str, object] = json.loads(result.stdout)
    return task


def test_claim_complete_and_block_move_a_task(home: Path) -> None:
    first = kanban("create", "Write the notes")
    claimed = kanban("claim", str(first["id"]), "--assignee", "ann")
    assert (claimed["status"], claimed["assignee"]) == ("claimed", "ann")
    done = kanban("complete", str(first["id"]), "--summary", "see NOTES.md")
    assert done["status"] == "done"
    second = kanban("create", "Rotate the keys")
    blocked = kanban("block", str(second["id"]), "--reason", "waiting for the keys")
    assert blocked["status"] == "blocked"
    missing = invoke("kanban", "claim", "t_nothing")
    assert missing.exit_code == 1
    assert "t_nothing" in missing.stderr

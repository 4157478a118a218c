"""``hermes kanban``: the task board under the home; each transition fires its hook once."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from hermes_hooks.cli.common import build_manager, echo_json, fit_table, get_home, terminal_width

if TYPE_CHECKING:
    from hermes_hooks.host.kanban import KanbanBoard

__all__ = ["kanban"]


def _board(ctx: click.Context, *, hooks: bool = True) -> KanbanBoard:
    from hermes_hooks.calling.facade import Hooks
    from hermes_hooks.host.kanban import KanbanBoard

    board: str | None = ctx.meta.get("hermes.kanban_board")
    facade = Hooks(build_manager(ctx)) if hooks else None
    return KanbanBoard.open(get_home(ctx), board, hooks=facade)


def _run(action: Callable[[], dict[str, object]], as_json: bool) -> None:
    from hermes_hooks.host.kanban import KanbanError

    try:
        task = action()
    except KanbanError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        echo_json(task)
    else:
        click.echo(f"{task['id']}  {task['status']}  {task['title']}")


_JSON = click.option("--json", "as_json", is_flag=True, help="Print the task as JSON.")


@click.group("kanban")
@click.option("--board", metavar="SLUG", help="Another board than the default one.")
@click.pass_context
def kanban(ctx: click.Context, board: str | None) -> None:
    """The task board: $HERMES_HOME/kanban.db (HERMES_KANBAN_DB pins another file).

    A task is todo, claimed, done or blocked. Claiming, completing and blocking fire the
    plugins' kanban_task_claimed, kanban_task_completed and kanban_task_blocked hooks, once
    each, after the change is saved.

    \b
    Examples:
      hermes kanban create "Write the release notes" --assignee writer
      hermes kanban claim t_1a2b3c4d5e
      hermes kanban complete t_1a2b3c4d5e --summary "Done, see NOTES.md"
      hermes kanban list --status todo
    """
    ctx.meta["hermes.kanban_board"] = board


@kanban.command("create")
@click.argument("title")
@click.option("--body", default="", help="What the task is about.")
@click.option("--assignee", help="Who should do it (a profile or a person).")
@_JSON
@click.pass_context
def create(ctx: click.Context, title: str, body: str, assignee: str | None, as_json: bool) -> None:
    """Add a todo task titled TITLE.

    \b
    Example:
      hermes kanban create "Write the release notes" --assignee writer
    """
    board = _board(ctx, hooks=False)
    _run(lambda: board.create(title, body, assignee=assignee), as_json)


def _transition(verb: str, option: str, option_help: str, doc: str) -> click.Command:
    """Add ``hermes kanban VERB TASK_ID [--OPTION TEXT] [--json]``: ``board.VERB(task_id,
    OPTION=TEXT)``, with the hooks of that transition."""

    @click.argument("task_id")
    @click.option(f"--{option}", option, help=option_help)
    @_JSON
    @click.pass_context
    def command(ctx: click.Context, /, task_id: str, as_json: bool, **text: str | None) -> None:
        board = _board(ctx)
        _run(lambda: getattr(board, verb)(task_id, **text), as_json)

    command.__doc__ = doc
    return kanban.command(verb)(command)


claim = _transition(
    "claim",
    "assignee",
    "Who claims it (kept as the task's assignee).",
    """Claim todo task TASK_ID (fires kanban_task_claimed).

    \b
    Example:
      hermes kanban claim t_1a2b3c4d5e --assignee ann
    """,
)
complete = _transition(
    "complete",
    "summary",
    "What was done.",
    """Complete claimed task TASK_ID (fires kanban_task_completed).

    \b
    Example:
      hermes kanban complete t_1a2b3c4d5e --summary "Done, see NOTES.md"
    """,
)
block = _transition(
    "block",
    "reason",
    "Why it cannot go on.",
    """Block todo or claimed task TASK_ID (fires kanban_task_blocked).

    \b
    Example:
      hermes kanban block t_1a2b3c4d5e --reason "waiting for the keys"
    """,
)


@kanban.command("list")
@click.option(
    "--status",
    type=click.Choice(["todo", "claimed", "done", "blocked"]),
    help="Only the tasks with this status.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of tasks.")
@click.pass_context
def list_tasks(ctx: click.Context, status: str | None, as_json: bool) -> None:
    """List the tasks, oldest first.

    \b
    Examples:
      hermes kanban list
      hermes kanban --board ops list --status blocked --json
    """
    tasks = _board(ctx, hooks=False).list_tasks(status)
    if as_json:
        echo_json(tasks)
        return
    if not tasks:
        click.echo("No tasks." if status is None else f"No {status} tasks.")
        return
    rows = [
        [
            str(task["id"]),
            str(task["status"]),
            str(task["assignee"] or "-"),
            time.strftime("%Y-%m-%d %H:%M", time.localtime(float(str(task["updated_at"])))),
            str(task["title"]),
        ]
        for task in tasks
    ]
    for line in fit_table(["ID", "STATUS", "ASSIGNEE", "UPDATED", "TITLE"], rows, terminal_width()):
        click.echo(line)

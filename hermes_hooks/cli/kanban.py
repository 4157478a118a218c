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
      hermes kanban dispatch --dry-run
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


def _kanban_setting(ctx: click.Context, field: str) -> object:
    from hermes_hooks.plugins.configfile import load_config

    section = load_config(get_home(ctx)).get("kanban")
    return section.get(field) if isinstance(section, dict) else None


@kanban.command("dispatch")
@click.option("--dry-run", is_flag=True, help="Only say what would be done; change nothing.")
@click.option(
    "--max",
    "max_spawn",
    type=click.IntRange(min=0),
    help="Start at most this many workers (default: kanban.max_spawn, else no limit).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what the tick did as JSON.")
@click.pass_context
def dispatch(ctx: click.Context, dry_run: bool, max_spawn: int | None, as_json: bool) -> None:
    """Run one dispatcher tick: reclaim dead or stale claims, then start a worker for each
    assigned todo task.

    A worker is `hermes -z` on the task's title and body, in its own session and in the
    workspace $HERMES_HOME/kanban/workspaces/<id>/ (its output in worker.log there), with
    Hermes' HERMES_KANBAN_TASK, _DB, _BOARD, _WORKSPACE and _RUN_ID set: when its turn ends it
    completes the task with its answer, or blocks it if the turn failed. The tick fires
    kanban_task_claimed and on_kanban_worker_spawned for each worker started,
    on_kanban_worker_exited and on_kanban_worker_stale_claim for each claim taken back, and
    on_kanban_dispatch_tick once, after its lock is released. kanban.max_spawn bounds the
    workers of one tick (--max overrides it); kanban.default_assignee is given the todo tasks
    that have no assignee.

    \b
    Examples:
      hermes kanban dispatch
      hermes kanban dispatch --dry-run --json
      hermes kanban --board ops dispatch --max 2
    """
    from hermes_hooks.host.kanban import KanbanError, worker_spawner

    configured = _kanban_setting(ctx, "max_spawn")
    if max_spawn is None and isinstance(configured, int) and not isinstance(configured, bool):
        max_spawn = configured
    assignee = _kanban_setting(ctx, "default_assignee")
    board = _board(ctx)
    try:
        result = board.dispatch_once(
            worker_spawner(get_home(ctx), board),
            dry_run=dry_run,
            max_spawn=max_spawn,
            default_assignee=assignee if isinstance(assignee, str) and assignee else None,
        )
    except (KanbanError, OSError) as exc:
        raise click.ClickException(f"dispatch failed: {exc}") from None
    if as_json:
        echo_json({"dry_run": dry_run, **result.to_dict()})
        return
    verb = "would start" if dry_run else "started"
    click.echo(
        f"{verb} {len(result.spawned)} worker(s); reclaimed {len(result.reclaimed)} dead "
        f"and {len(result.stale)} stale claim(s)"
    )
    for task_id in result.spawned:
        click.echo(f"  {task_id}")

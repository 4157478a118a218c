"""``hermes cron``: list, add, run, pause, resume and remove scheduled jobs.

Formatting only: the store is :mod:`hermes_hooks.backends.cron.jobs`, a run is the reference
host's :func:`hermes_hooks.host.cron.run_one_job`.
"""

from __future__ import annotations

from typing import Any

import click

from hermes_hooks.cli.common import build_manager, echo_json, get_home, warn

__all__ = ["cron"]


@click.group("cron")
def cron() -> None:
    """Schedule prompts: each run is a fresh agent session with platform "cron", where
    every plugin hook fires; its output is kept in $HERMES_HOME/cron/output/<id>/.

    \b
    Schedules: '30m' (once, from now), 'every 2h', a cron expression ('0 9 * * *'),
    or a time ('2026-02-03T14:00').
    \b
    Examples:
      hermes cron add "every 1d" "Summarise yesterday's notes"
      hermes cron list
      hermes cron run 3f2a9c01b7de
    """


def _changed(ctx: click.Context, job: dict[str, Any] | None = None) -> None:
    """Tell the active scheduler (cron.provider) that the jobs changed."""
    from hermes_hooks.backends.cron import resolve_cron_scheduler

    pm = build_manager(ctx)
    scheduler = resolve_cron_scheduler(pm)
    try:
        if job is not None:
            scheduler.register_job(job)
        scheduler.on_jobs_changed()
    except Exception as exc:
        warn(f"cron scheduler {scheduler.name!r} could not arm the job: {exc}")


def _job_or_fail(job_id: str, job: dict[str, Any] | None) -> dict[str, Any]:
    if job is None:
        raise click.ClickException(f"no cron job {job_id!r} (see 'hermes cron list')")
    return job


@cron.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include paused and finished jobs.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def list_command(ctx: click.Context, show_all: bool, as_json: bool) -> None:
    """List the scheduled jobs.

    \b
    Examples:
      hermes cron list
      hermes cron list --json
    """
    from hermes_hooks.backends.cron import jobs

    found = jobs.list_jobs(include_disabled=show_all, home=get_home(ctx))
    if as_json:
        echo_json(found)
        return
    if not found:
        click.echo("No cron jobs.")
        return
    for job in found:
        state = job.get("state") or ("scheduled" if job.get("enabled", True) else "done")
        click.echo(f"{job['id']}  {job.get('schedule_display')}  [{state}]  {job.get('name')}")
        click.echo(f"    next: {job.get('next_run_at') or '-'}  last: "
                   f"{job.get('last_status') or '-'}  deliver: {job.get('deliver')}")  # fmt: skip


@cron.command("add")
@click.argument("schedule")
@click.argument("prompt")
@click.option("--name", help="A name for the job (the prompt's start by default).")
@click.option("--repeat", type=int, help="How many runs (for ever by default; once for '30m').")
@click.option("--deliver", help="Where the result goes: local, origin, PLATFORM[:CHAT_ID].")
@click.pass_context
def add(
    ctx: click.Context, schedule: str, prompt: str, name: str | None, repeat: int | None,
    deliver: str | None,
) -> None:  # fmt: skip
    """Schedule PROMPT on SCHEDULE: a cron expression, "every 2h", or "30m" (once, from now).

    \b
    Examples:
      hermes cron add "0 9 * * 1-5" "Summarise the open issues"
      hermes cron add "every 30m" "Check the build" --name build-watch
    """
    from hermes_hooks.backends.cron import jobs

    try:
        job = jobs.create_job(prompt, schedule, name=name, repeat=repeat, deliver=deliver,
                              home=get_home(ctx))  # fmt: skip
    except jobs.CronError as exc:
        raise click.ClickException(str(exc)) from None
    _changed(ctx, job)
    click.echo(f"Added cron job {job['id']} ({job['schedule_display']}); next run "
               f"{job['next_run_at']}.")  # fmt: skip


@cron.command("run")
@click.argument("job_id")
@click.pass_context
def run(ctx: click.Context, job_id: str) -> None:
    """Run job JOB_ID now (its schedule goes on).

    \b
    Example:
      hermes cron run 3f2a9c
    """
    from hermes_hooks.backends.cron import executions, jobs
    from hermes_hooks.host.cron import run_one_job

    home = get_home(ctx)
    job = _job_or_fail(job_id, jobs.get_job(job_id, home=home))
    job["execution_id"] = executions.create_execution(job_id, source="cli", home=home)["id"]
    ok = run_one_job(job, pm=build_manager(ctx))
    runs = executions.list_executions(job_id, home=home)
    where = runs[-1].get("output_path") if runs else None
    click.echo(f"Cron job {job_id} {'succeeded' if ok else 'failed'}; output: {where}")
    if not ok:
        ctx.exit(1)


@cron.command("pause")
@click.argument("job_id")
@click.pass_context
def pause(ctx: click.Context, job_id: str) -> None:
    """Pause job JOB_ID (it keeps its schedule).

    \b
    Example:
      hermes cron pause 3f2a9c
    """
    from hermes_hooks.backends.cron import jobs

    _job_or_fail(job_id, jobs.pause_job(job_id, home=get_home(ctx)))
    _changed(ctx)
    click.echo(f"Paused cron job {job_id}.")


@cron.command("resume")
@click.argument("job_id")
@click.pass_context
def resume(ctx: click.Context, job_id: str) -> None:
    """Resume paused job JOB_ID.

    \b
    Example:
      hermes cron resume 3f2a9c
    """
    from hermes_hooks.backends.cron import jobs

    job = _job_or_fail(job_id, jobs.resume_job(job_id, home=get_home(ctx)))
    _changed(ctx)
    click.echo(f"Resumed cron job {job_id}; next run {job['next_run_at']}.")


@cron.command("remove")
@click.argument("job_id")
@click.pass_context
def remove(ctx: click.Context, job_id: str) -> None:
    """Remove job JOB_ID.

    \b
    Example:
      hermes cron remove 3f2a9c
    """
    from hermes_hooks.backends.cron import jobs

    if not jobs.remove_job(job_id, home=get_home(ctx)):
        _job_or_fail(job_id, None)
    _changed(ctx)
    click.echo(f"Removed cron job {job_id}.")

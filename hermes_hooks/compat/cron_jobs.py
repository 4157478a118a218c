"""Hermes' ``cron.jobs``: the job store under the current home (``<home>/cron/jobs.json``).

Each function works on the home of the manager loading or calling the plugin, else
``$HERMES_HOME`` (see :mod:`hermes_hooks.backends.cron.jobs`).
"""

from __future__ import annotations

from datetime import datetime

from hermes_hooks.backends.cron.jobs import (
    CronError,
    claim_job_for_fire,
    compute_next_run,
    create_job,
    get_due_jobs,
    get_job,
    list_jobs,
    load_jobs,
    mark_job_run,
    now as _now,
    parse_duration,
    parse_schedule,
    pause_job,
    remove_job,
    resume_job,
    save_job_output,
    save_jobs,
    trigger_job,
    update_job,
)

__all__ = [
    "CronError",
    "_ensure_aware",
    "_hermes_now",
    "claim_job_for_fire",
    "compute_next_run",
    "create_job",
    "get_due_jobs",
    "get_job",
    "list_jobs",
    "load_jobs",
    "mark_job_run",
    "parse_duration",
    "parse_schedule",
    "pause_job",
    "remove_job",
    "resume_job",
    "save_job_output",
    "save_jobs",
    "trigger_job",
    "update_job",
]


def _hermes_now() -> datetime:
    """The current time, aware, in the local zone (Hermes' private name, which Chronos uses)."""
    return _now()


def _ensure_aware(value: datetime) -> datetime:
    """``value`` with a zone (the local one when it had none)."""
    return value if value.tzinfo is not None else value.astimezone()

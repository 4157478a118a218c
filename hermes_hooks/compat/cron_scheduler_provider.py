"""Hermes' ``cron.scheduler_provider``: the :class:`CronScheduler` ABC, the built-in ticker
and the resolver reading ``cron.provider`` (for the current manager)."""

from __future__ import annotations

from hermes_hooks.backends.cron import (
    CronScheduler,
    InProcessCronScheduler,
    resolve_cron_scheduler as _resolve,
)

__all__ = ["CronScheduler", "InProcessCronScheduler", "resolve_cron_scheduler"]


def resolve_cron_scheduler() -> CronScheduler:
    """Return the scheduler ``cron.provider`` names, else the built-in (with a warning)."""
    return _resolve()

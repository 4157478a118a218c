"""Hermes' ``cron.scheduler``: what firing a job means (``run_one_job``) and one ``tick``.

Both are the reference host's (:mod:`hermes_hooks.host.cron`), reached through the extension
point: a job runs in a fresh session with ``platform="cron"`` on the current home's manager,
with every plugin hook.
"""

from __future__ import annotations

from typing import Any

from hermes_hooks.plugins import extensions

__all__ = ["run_job", "run_one_job", "tick"]


def run_one_job(job: dict[str, Any], *, adapters: Any = None, loop: Any = None) -> bool:
    """Run one job now; return whether it succeeded."""
    return bool(extensions.service("cron.run_one_job")(job, adapters=adapters, loop=loop))


def run_job(job: dict[str, Any], *, adapters: Any = None, loop: Any = None) -> bool:
    """The older name of :func:`run_one_job`."""
    return run_one_job(job, adapters=adapters, loop=loop)


def tick(verbose: bool = False, *, adapters: Any = None, loop: Any = None, **_: Any) -> int:
    """Claim and run every due job once; return how many ran."""
    return int(extensions.service("cron.tick")(adapters=adapters, loop=loop))

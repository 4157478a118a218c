"""Cron schedulers: the provider family that decides *when* a due cron job fires.

Hermes' shape (``cron/scheduler_provider.py``): a :class:`CronScheduler` has a ``name`` and a
``start(stop_event, *, adapters, loop, interval)``; the built-in
:class:`InProcessCronScheduler` ticks every ``interval`` seconds in the caller's thread until
``stop_event`` is set; another provider (Chronos, arming one-shots with an external service)
registers with ``ctx.register_cron_scheduler`` and is chosen by ``cron.provider``.
:func:`resolve_cron_scheduler` falls back to the built-in, with a warning, when the named
provider is missing or unavailable: cron never loses its trigger. What *firing* means (a fresh
session with ``platform="cron"``, the output kept, the delivery) is the reference host's
``run_one_job``, reached through the extension point's ``cron.run_one_job`` service.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.family import Family, Selection
from hermes_hooks.plugins import extensions

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "BUILTIN_NAMES",
    "CRON",
    "CronScheduler",
    "InProcessCronScheduler",
    "resolve_cron_scheduler",
]

logger = logging.getLogger(__name__)

BUILTIN_NAMES: Final = frozenset({"", "builtin", "in-process", "inprocess"})
"""The ``cron.provider`` values that mean the built-in ticker."""


class CronScheduler(ABC):
    """A cron trigger: decides when a due job fires (never what firing does)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Short identifier: ``builtin``, ``chronos``."""

    def is_available(self) -> bool:
        """Whether it can run here; must not reach the network (the built-in always can)."""
        return True

    @abstractmethod
    def start(
        self,
        stop_event: threading.Event,
        *,
        adapters: Any = None,
        loop: Any = None,
        interval: int = 60,
    ) -> None:
        """Begin firing due jobs: block until ``stop_event`` (the built-in), or arm an
        external trigger and return."""

    def stop(self) -> None:
        """Let go of external resources; setting ``stop_event`` is the main stop signal."""
        return None

    def on_jobs_changed(self) -> None:
        """Called after a job was created, changed, paused, resumed or removed."""
        return None

    def register_job(self, job: dict[str, Any]) -> None:
        """Arm the first fire of a new job (may raise, so the caller can say it failed)."""
        return None

    def recover_interrupted(self) -> int:
        """Mark the executions a previous process left ``running`` as ``unknown``."""
        from hermes_hooks.backends.cron.executions import recover_interrupted_executions

        return recover_interrupted_executions()

    def claim_fire(self, job_id: str) -> dict[str, Any] | None:
        """Claim this fire of ``job_id`` (at most once across processes); return the job with
        its new ``execution_id``, or ``None`` when the claim was lost or the job is gone."""
        from hermes_hooks.backends.cron.executions import create_execution
        from hermes_hooks.backends.cron.jobs import claim_job_for_fire, get_job

        if not claim_job_for_fire(job_id):
            return None
        job = get_job(job_id)
        if job is None:
            return None
        job["execution_id"] = create_execution(job_id, source=self.name)["id"]
        return job

    def fire_claimed(
        self,
        claimed_job: dict[str, Any],
        *,
        adapters: Any = None,
        loop: Any = None,
        cancel_event: Any = None,
    ) -> bool:
        """Run a claimed job now through the shared ``run_one_job``; return whether it ran."""
        run_one_job = extensions.service("cron.run_one_job")
        return bool(run_one_job(claimed_job, adapters=adapters, loop=loop))

    def fire_due(self, job_id: str, *, adapters: Any = None, loop: Any = None) -> bool:
        """Claim and run job ``job_id`` now (an external scheduler's inbound fire)."""
        job = self.claim_fire(job_id)
        if job is None:
            return False
        return self.fire_claimed(job, adapters=adapters, loop=loop)

    def reconcile(self) -> None:
        """Converge an external registry toward the job store (the built-in has none)."""
        return None


class InProcessCronScheduler(CronScheduler):
    """The built-in: ticks every ``interval`` seconds until ``stop_event`` is set."""

    @property
    def name(self) -> str:
        return "builtin"

    def start(
        self,
        stop_event: threading.Event,
        *,
        adapters: Any = None,
        loop: Any = None,
        interval: int = 60,
    ) -> None:
        recovered = self.recover_interrupted()
        if recovered:
            logger.warning("marked %d interrupted cron execution(s) unknown", recovered)
        tick = extensions.service("cron.tick")
        while not stop_event.is_set():
            try:
                tick(adapters=adapters, loop=loop)
            except Exception as exc:  # a failing tick never kills the ticker
                logger.error("cron tick failed: %s: %s", type(exc).__name__, exc)
            stop_event.wait(interval)


def resolve_cron_scheduler(manager: PluginManager | None = None) -> CronScheduler:
    """Return the scheduler ``cron.provider`` names, else the built-in (with a warning when
    the named one is missing or unavailable)."""
    if manager is None:
        from hermes_hooks.plugins import active

        manager = active.current_manager()
    if manager is None:
        return InProcessCronScheduler()
    section = manager.config.get("cron") if isinstance(manager.config, dict) else None
    raw = section.get("provider") if isinstance(section, dict) else None
    name = str(raw or "").strip()
    if name in BUILTIN_NAMES:
        return InProcessCronScheduler()
    registry = getattr(manager, "cron", None)
    provider = registry.get_provider(name) if registry is not None else None
    if provider is None:
        logger.warning("cron.provider %r is not registered; using the built-in ticker", name)
        return InProcessCronScheduler()
    try:
        available = bool(provider.is_available())
    except Exception as exc:
        logger.warning("cron.provider %r: is_available() failed (%s); using the built-in", name,
                       exc)  # fmt: skip
        return InProcessCronScheduler()
    if not available:
        logger.warning("cron.provider %r is not available; using the built-in ticker", name)
        return InProcessCronScheduler()
    return provider  # type: ignore[no-any-return]


CRON: Final[Family[CronScheduler]] = Family(
    name="cron",
    title="cron scheduler",
    provider_type=CronScheduler,
    selections=(Selection("cron.provider", default="builtin"),),
    ctx_method="register_cron_scheduler",
    provider_kind="cron scheduler",
    none_registered_hint="; the built-in ticker runs when cron.provider is unset",
    plugin_kind="cron-provider",
    categories=("cron_providers",),
    default_timeout=0.0,
)
"""The cron scheduler family (``cron.provider``; the built-in when unset)."""

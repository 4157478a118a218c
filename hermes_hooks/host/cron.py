"""What firing a cron job means: the job's prompt in a fresh session with ``platform="cron"``.

Hermes users reported plugin hooks silently not firing in cron, because a cron run built its
agent without the plugins. Here :func:`run_one_job` runs the prompt in a real
:class:`~hermes_hooks.host.session.Session` on the manager of the home (the current one, or a
manager created for the home with every plugin loaded), so ``on_session_start``,
``pre_llm_call``, the tool hooks, middleware and ``on_session_end`` all fire, with
``platform="cron"``. The output is kept under ``<home>/cron/output/<job_id>/``, the job's run
recorded (``last_status``, its next run) and its execution finished; then the result is
delivered when the job asks (``deliver``):

- ``local`` (the default without an origin): kept only;
- ``origin``: to the platform and chat of the job's ``origin`` (``{"platform", "chat_id"}``);
- ``PLATFORM`` or ``PLATFORM:CHAT_ID``: to that platform.

Delivery goes through a small interface, *adapters*: a mapping of platform name to an object
with ``send(chat_id, content)`` (a plain or an ``async`` method; a coroutine is run on ``loop``
when one is given, else to completion here), which is what Hermes' gateway hands its cron
ticker. A failed delivery is recorded on the job (``last_delivery_error``), never a failed run.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_hooks.backends.cron import executions, jobs
from hermes_hooks.backends.home import using_hermes_home
from hermes_hooks.plugins import active

if TYPE_CHECKING:
    from hermes_hooks.backends.models import ModelProvider
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["delivery_target", "deliver_result", "run_one_job", "tick"]

logger = logging.getLogger(__name__)


def _manager(home: Path | None) -> PluginManager:
    current = active.current_manager()
    if current is not None and (home is None or current.hermes_home == Path(home).absolute()):
        return current
    from hermes_hooks.host.runtime import create_manager

    return create_manager(home)


def delivery_target(job: Mapping[str, Any]) -> tuple[str, str | None] | None:
    """Return ``(platform, chat_id)`` the job's result goes to, or ``None`` for ``local``."""
    deliver = str(job.get("deliver") or "local").strip()
    if deliver in ("", "local", "none"):
        return None
    if deliver == "origin":
        origin = job.get("origin")
        if not isinstance(origin, Mapping) or not origin.get("platform"):
            return None
        chat = origin.get("chat_id")
        return str(origin["platform"]), str(chat) if chat is not None else None
    platform, _, chat_id = deliver.partition(":")
    return platform, chat_id or None


def deliver_result(
    job: Mapping[str, Any], content: str, *, adapters: Any = None, loop: Any = None
) -> str | None:
    """Deliver ``content`` where the job asks; return what went wrong, or ``None``."""
    target = delivery_target(job)
    if target is None:
        return None
    platform, chat_id = target
    adapter = adapters.get(platform) if isinstance(adapters, Mapping) else None
    if adapter is None or not callable(getattr(adapter, "send", None)):
        known = ", ".join(sorted(adapters)) if isinstance(adapters, Mapping) else "none"
        return f"no adapter for platform {platform!r} to deliver to (adapters: {known})"
    try:
        sent = adapter.send(chat_id, content)
        if inspect.isawaitable(sent):
            if loop is not None:
                asyncio.run_coroutine_threadsafe(_awaited(sent), loop).result(timeout=60)
            else:
                asyncio.run(_awaited(sent))
    except Exception as exc:
        return f"delivery to {platform} failed: {type(exc).__name__}: {exc}"
    return None


async def _awaited(pending: Any) -> Any:
    return await pending


def _output(job: Mapping[str, Any], text: str, ok: bool) -> str:
    status = "ok" if ok else "error"
    return (
        f"# Cron job: {job.get('name') or job.get('id')}\n\n"
        f"- id: {job.get('id')}\n- schedule: {job.get('schedule_display')}\n"
        f"- run at: {datetime.now().astimezone().isoformat()}\n- status: {status}\n\n"
        f"## Prompt\n\n{job.get('prompt')}\n\n## Response\n\n{text}\n"
    )


def run_one_job(
    job: dict[str, Any],
    *,
    adapters: Any = None,
    loop: Any = None,
    pm: PluginManager | None = None,
    model: ModelProvider | None = None,
    home: Path | None = None,
) -> bool:
    """Run one job now, in a fresh session with ``platform="cron"``; return whether it
    succeeded (see the module's docstring for what happens around it)."""
    from hermes_hooks.host.session import Session, new_id

    manager = pm or _manager(home)
    where = manager.hermes_home
    job_id = str(job["id"])
    execution_id = (
        job.get("execution_id")
        or executions.create_execution(job_id, source="manual", home=where)["id"]
    )
    text, ok, error = "", False, None
    with using_hermes_home(where), manager.activate():
        try:
            session = Session(
                manager, model, platform="cron", session_id=new_id(f"cron_{job_id}"),
                cwd=where,
            )  # fmt: skip
            try:
                result = session.run_turn(str(job.get("prompt") or ""))
            finally:
                session.close("cron_complete")
            text, ok = result.text, result.completed and not result.failed
            error = None if ok else (result.error or result.exit_reason)
        except Exception as exc:  # a broken model or config is the job's failure, not ours
            text, error = f"(the run failed: {type(exc).__name__}: {exc})", f"{exc}"
            logger.warning("cron job %s failed: %s", job_id, error)
        path = jobs.save_job_output(job_id, _output(job, text, ok), home=where)
        jobs.mark_job_run(job_id, ok, error, home=where)
        executions.finish_execution(str(execution_id), "ok" if ok else "error", error=error,
                                    output_path=str(path), home=where)  # fmt: skip
        problem = deliver_result(job, text, adapters=adapters, loop=loop) if text else None
        if problem is not None:
            logger.warning("cron job %s: %s", job_id, problem)
            jobs.update_job(job_id, {"last_delivery_error": problem}, home=where)
    return ok


def tick(
    *,
    adapters: Any = None,
    loop: Any = None,
    pm: PluginManager | None = None,
    model: ModelProvider | None = None,
    home: Path | None = None,
) -> int:
    """Claim and run every due job once; return how many ran."""
    manager = pm or _manager(home)
    ran = 0
    with using_hermes_home(manager.hermes_home):
        due = jobs.get_due_jobs()
        for job in due:
            if not jobs.claim_job_for_fire(job["id"]):
                continue  # another process has this fire
            job["execution_id"] = executions.create_execution(job["id"])["id"]
            run_one_job(job, adapters=adapters, loop=loop, pm=manager, model=model)
            ran += 1
    return ran

"""Cron: the job store, a job that runs in a real session with every plugin hook, delivery,
``hermes cron``, and a Chronos-shaped external scheduler against a local stand-in service.

The Chronos-shaped plugin has the shape of Hermes' ``plugins/cron_providers/chronos`` (a
``CronScheduler`` that arms one one-shot per job with a service and re-arms after each fire),
written here; the service is an HTTP server on 127.0.0.1 with its three endpoints.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import home, invoke
from host_helpers import names, recorded, recorder_home
from local_http import Request, Server, running
from plugin_builders import user_plugin, write_config

from hermes_hooks.backends.cron import InProcessCronScheduler, jobs, resolve_cron_scheduler
from hermes_hooks.backends.cron.executions import list_executions
from hermes_hooks.host import create_manager
from hermes_hooks.host.cron import run_one_job, tick
from hermes_hooks.plugins.manager import PluginManager

__all__ = ["home"]


def test_schedules_are_read_as_hermes_reads_them(tmp_path: Path) -> None:
    assert jobs.parse_schedule("every 2h")["minutes"] == 120
    assert jobs.parse_schedule("30m")["kind"] == "once"
    cron = jobs.parse_schedule("0 9 * * 1-5")
    assert cron == {"kind": "cron", "expr": "0 9 * * 1-5", "display": "0 9 * * 1-5"}
    upcoming = jobs.compute_next_run(cron)
    assert upcoming is not None
    assert "T09:00:00" in upcoming
    with pytest.raises(jobs.CronError, match="invalid cron expression '61 9 \\* \\* \\*'"):
        jobs.parse_schedule("61 9 * * *")
    with pytest.raises(jobs.CronError, match="invalid schedule 'sometimes'"):
        jobs.parse_schedule("sometimes")


def test_the_store_claims_each_fire_once_and_counts_repeats(tmp_path: Path) -> None:
    job = jobs.create_job("ping", "every 5m", repeat=2, home=tmp_path)
    assert jobs.claim_job_for_fire(job["id"], home=tmp_path)
    assert not jobs.claim_job_for_fire(job["id"], home=tmp_path)  # another process lost it
    after = jobs.mark_job_run(job["id"], True, home=tmp_path)
    assert after is not None
    assert (after["last_status"], after["repeat"]["completed"]) == ("ok", 1)
    assert jobs.claim_job_for_fire(job["id"], home=tmp_path)  # released by the run
    assert jobs.mark_job_run(job["id"], False, "boom", home=tmp_path) is None  # out of repeats
    assert jobs.load_jobs(home=tmp_path) == []
    paused = jobs.create_job("later", "every 1h", home=tmp_path)
    jobs.pause_job(paused["id"], home=tmp_path)
    jobs.trigger_job(paused["id"], home=tmp_path)
    jobs.pause_job(paused["id"], home=tmp_path)
    assert jobs.get_due_jobs(home=tmp_path) == []
    assert not jobs.claim_job_for_fire(paused["id"], home=tmp_path)


class Adapter:
    """The delivery interface a gateway hands the cron ticker: ``send(chat_id, content)``."""

    def __init__(self) -> None:
        self.sent: list[tuple[str | None, str]] = []

    async def send(self, chat_id: str | None, content: str) -> None:
        self.sent.append((chat_id, content))


def test_a_due_job_runs_in_a_fresh_session_where_every_plugin_hook_fires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = recorder_home(tmp_path, monkeypatch)
    pm = create_manager(home)
    job = jobs.create_job("run `echo cron-ran`", "every 1h", deliver="telegram:42", home=home)
    jobs.trigger_job(job["id"], home=home)
    adapter = Adapter()
    assert tick(pm=pm, adapters={"telegram": adapter}) == 1
    calls = recorded(pm)
    fired = names(calls)
    assert fired[0] == "on_session_start"
    assert {"pre_llm_call", "pre_tool_call", "post_tool_call", "on_session_end"} <= set(fired)
    assert dict(calls[0][1])["platform"] == "cron"
    ((chat, content),) = adapter.sent
    assert chat == "42"
    assert "cron-ran" in content
    stored = jobs.get_job(job["id"], home=home)
    assert stored is not None
    assert stored["last_status"] == "ok"
    (execution,) = list_executions(job["id"], home=home)
    assert execution["status"] == "ok"
    assert "cron-ran" in Path(execution["output_path"]).read_text(encoding="utf-8")
    assert tick(pm=pm) == 0  # not due again
    pm.unload_all()


def test_a_missing_adapter_is_recorded_not_a_failed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = recorder_home(tmp_path, monkeypatch)
    pm = create_manager(home)
    job = jobs.create_job("hello", "every 1h", deliver="discord", home=home)
    assert run_one_job(job, pm=pm)
    stored = jobs.get_job(job["id"], home=home)
    assert stored is not None
    assert "no adapter for platform 'discord'" in stored["last_delivery_error"]
    pm.unload_all()


def test_hermes_cron_add_list_run_pause_remove(home: Path) -> None:
    added = invoke("cron", "add", "every 2h", "say hello", "--name", "greeter")
    assert added.exit_code == 0, added.output
    (job,) = json.loads(invoke("cron", "list", "--json").stdout)
    assert (job["name"], job["schedule_display"]) == ("greeter", "every 120m")
    ran = invoke("cron", "run", job["id"])
    assert ran.exit_code == 0, ran.output
    assert f"Cron job {job['id']} succeeded; output: " in ran.stdout
    assert invoke("cron", "pause", job["id"]).exit_code == 0
    assert "[paused]" in invoke("cron", "list", "--all").stdout
    assert invoke("cron", "remove", job["id"]).exit_code == 0
    assert invoke("cron", "list").stdout == "No cron jobs.\n"
    missing = invoke("cron", "run", "nope")
    assert missing.exit_code == 1
    assert "no cron job 'nope'" in missing.output
    bad = invoke("cron", "add", "whenever", "x")
    assert "invalid schedule 'whenever'" in bad.output


# -- a Chronos-shaped external scheduler -------------------------------------------------------

CHRONOS_LIKE = '''
"""An external cron provider shaped as Hermes' chronos plugin: one armed one-shot per job."""

import threading

import httpx

from cron.scheduler_provider import CronScheduler
from hermes_cli.auth import get_provider_auth_state
from hermes_cli.config import cfg_get, load_config


def _cfg(*keys):
    return cfg_get(load_config(), *keys, default="")


class ChronosLike(CronScheduler):
    def __init__(self):
        self._armed = {}
        self._lock = threading.Lock()

    @property
    def name(self):
        return "chronos"

    def is_available(self):
        state = get_provider_auth_state("nous") or {}
        return bool(_cfg("cron", "chronos", "portal_url") and state.get("access_token"))

    def _post(self, path, body):
        token = get_provider_auth_state("nous")["access_token"]
        url = str(_cfg("cron", "chronos", "portal_url")) + path
        answer = httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}"})
        answer.raise_for_status()
        return answer.json()

    def start(self, stop_event, *, adapters=None, loop=None, interval=60):
        self.recover_interrupted()
        self.reconcile()

    def register_job(self, job):
        self._arm(job)

    def on_jobs_changed(self):
        self.reconcile()

    def _arm(self, job):
        self._post("/api/agent-cron/provision", {
            "job_id": job["id"], "fire_at": job["next_run_at"],
            "agent_callback_url": _cfg("cron", "chronos", "callback_url"),
            "dedup_key": f"{job['id']}:{job['next_run_at']}"})
        with self._lock:
            self._armed[job["id"]] = job["next_run_at"]

    def reconcile(self):
        from cron.jobs import get_job, load_jobs

        desired = {j["id"]: j["next_run_at"] for j in load_jobs()
                   if j.get("enabled") and j.get("next_run_at") and j.get("state") != "paused"}
        for job_id, fire_at in desired.items():
            if self._armed.get(job_id) != fire_at:
                self._arm(get_job(job_id))
        for job_id in [j for j in self._armed if j not in desired]:
            self._post("/api/agent-cron/cancel", {"job_id": job_id})
            self._armed.pop(job_id, None)

    def fire_claimed(self, claimed_job, *, adapters=None, loop=None, cancel_event=None):
        ran = super().fire_claimed(claimed_job, adapters=adapters, loop=loop)
        from cron.jobs import get_job

        job = get_job(claimed_job["id"])
        if ran and job and job.get("enabled"):
            self._arm(job)
        return ran


def register(ctx):
    ctx.register_cron_scheduler(ChronosLike())
'''


@pytest.fixture
def service() -> Iterator[Server]:
    with running() as server:
        armed: dict[str, str] = {}

        @server.route("POST", "/api/agent-cron/provision")
        def provision(request: Request) -> tuple[int, dict[str, str], bytes]:
            if request.headers.get("authorization") != "Bearer portal-token":
                return 403, {}, b'{"error": "invalid_client"}'
            body = request.json()
            armed[body["job_id"]] = body["fire_at"]
            return 200, {"Content-Type": "application/json"}, b'{"schedule_id": "s1"}'

        @server.route("POST", "/api/agent-cron/cancel")
        def cancel(request: Request) -> tuple[int, dict[str, str], bytes]:
            armed.pop(request.json()["job_id"], None)
            return 200, {"Content-Type": "application/json"}, b"{}"

        server.armed = armed  # type: ignore[attr-defined]
        yield server


def test_a_chronos_shaped_scheduler_arms_fires_and_cancels_through_its_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: Server
) -> None:
    home = recorder_home(tmp_path, monkeypatch)
    user_plugin(home, "cron_providers/chronos", CHRONOS_LIKE)
    (home / "auth.json").write_text(
        json.dumps({"providers": {"nous": {"access_token": "portal-token"}}}), encoding="utf-8"
    )
    cron = {
        "provider": "chronos",
        "chronos": {"portal_url": service.url, "callback_url": "http://127.0.0.1:9/fire"},
    }
    write_config(home, ["recorder"], cron=cron)
    pm = create_manager(home)
    with pm.activate():
        scheduler = resolve_cron_scheduler(pm)
        assert scheduler.name == "chronos"
        job = jobs.create_job("run `echo fired`", "every 1h")
        scheduler.register_job(job)
        armed: dict[str, str] = service.armed  # type: ignore[attr-defined]
        assert armed == {job["id"]: job["next_run_at"]}
        stop = threading.Event()
        scheduler.start(stop)  # arms and returns: no ticker of its own
        assert scheduler.fire_due(job["id"])  # the service's callback, claimed once
        assert "on_session_start" in names(recorded(pm))
        rearmed = jobs.get_job(job["id"])
        assert rearmed is not None
        assert armed[job["id"]] == rearmed["next_run_at"] != job["next_run_at"]
        jobs.remove_job(job["id"])
        scheduler.on_jobs_changed()
        assert armed == {}
    pm.unload_all()


def test_an_unavailable_provider_falls_back_to_the_builtin_ticker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = recorder_home(tmp_path, monkeypatch)
    user_plugin(home, "cron_providers/chronos", CHRONOS_LIKE)  # no login: unavailable
    write_config(home, ["recorder"], cron={"provider": "chronos"})
    pm: PluginManager = create_manager(home)
    assert pm.get_plugin_info("cron_providers/chronos").status == "enabled"  # type: ignore[union-attr]
    assert isinstance(resolve_cron_scheduler(pm), InProcessCronScheduler)
    assert "cron.provider 'chronos' is not available" in caplog.text
    pm.unload_all()

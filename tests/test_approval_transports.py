"""Approval transports used by the gate: when a tool call needs approval and
``security.approval.transport`` names a plugin's transport (registered from a folder), the
transport is shown a redacted request and its answer decides; a timeout, a raise, a stale or
malformed answer, or an unregistered transport deny (``transport_fallback: builtin`` lets the
host's approver answer instead).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from host_helpers import ScriptedModel, text, tool_call
from plugin_builders import PluginHome, home, recorder_module

from hermes_hooks.host import Session, create_manager
from hermes_hooks.plugins.approval_transport import (
    ApprovalDecision,
    ApprovalRequest,
    invoke_approval_transport,
)

__all__ = ["home"]

REC = "hermes_test_approval_transports"

TRANSPORT = f"""
import asyncio, time
import {REC} as rec
from hermes_cli.approval_transport import ApprovalDecision

def gate(tool_name, args, **kwargs):
    if tool_name == "terminal":
        return {{"action": "approve", "message": "runs rdx9_abcdef12 on the box",
                 "rule_key": "shell"}}

def present(request):
    rec.seen.append(request)
    mode = rec.mode[0]
    if mode == "slow":
        time.sleep(5)  # past approvals.timeout
    if mode == "raise":
        raise RuntimeError("phone is off")
    if mode == "stale":
        return ApprovalDecision("another", request.digest, "once")
    if mode == "odd":
        return "yes please"
    return request.respond(mode)

async def present_async(request):
    await asyncio.sleep(0)
    return request.respond("once")

def observe(surface, **kwargs):
    rec.surfaces.append(surface)

def register(ctx):
    ctx.register_hook("pre_tool_call", gate)
    ctx.register_hook("pre_approval_request", observe)
    ctx.register_redaction_patterns([r"rdx9_[a-z0-9]{{8}}"])
    ctx.register_approval_transport("phone", present)
    ctx.register_approval_transport("phone_async", present_async)
"""


@pytest.fixture
def rec(monkeypatch: pytest.MonkeyPatch) -> Any:
    return recorder_module(monkeypatch, REC, seen=[], mode=["once"], surfaces=[])


def _session(home: PluginHome, tmp_path: Path, **security: Any) -> Any:
    home.add_plugin("phone", TRANSPORT)
    home.write_config()
    path = home.root / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["security"] = {"approval": security}
    data["approvals"] = {"timeout": 1.5}  # room for a loaded machine
    path.write_text(yaml.safe_dump(data))
    pm = create_manager(home.root)
    home.managers.append(pm)
    denied: list[Any] = []

    def builtin(request: Any) -> str:
        denied.append(request)
        return "once"

    return pm, builtin, denied


def _run(pm: Any, builtin: Any, tmp_path: Path) -> dict[str, Any]:
    model = ScriptedModel(tool_call("terminal", {"command": "echo ran"}), text("ok"))
    result = Session(pm, model, cwd=tmp_path, approver=builtin).run_turn("go")
    answer: dict[str, Any] = json.loads(result.tool_calls[0].result)
    return answer


def test_the_selected_transport_answers_with_a_redacted_request(
    home: PluginHome, tmp_path: Path, rec: Any
) -> None:
    pm, builtin, asked_builtin = _session(home, tmp_path, transport="phone")
    assert _run(pm, builtin, tmp_path)["output"] == "ran\n"
    [shown] = rec.seen
    assert shown.command == "echo ran"
    assert shown.description == "runs *** on the box"  # the plugins' redaction applies
    assert shown.allowed_choices == ("once", "session", "always", "deny")
    assert shown.timeout_seconds == 1.5
    assert asked_builtin == []  # a selected transport replaces the built-in prompt
    assert rec.surfaces == ["transport:phone"]  # as Hermes reports it to the approval hooks
    rec.mode[0] = "deny"
    assert "not approved (deny)" in _run(pm, builtin, tmp_path)["error"]


@pytest.mark.parametrize("mode", ["slow", "raise", "stale", "odd"])
def test_a_failing_transport_denies(home: PluginHome, tmp_path: Path, rec: Any, mode: str) -> None:
    rec.mode[0] = mode
    pm, builtin, asked_builtin = _session(home, tmp_path, transport="phone")
    assert "not approved (deny)" in _run(pm, builtin, tmp_path)["error"]
    assert asked_builtin == []


def test_an_unregistered_transport_denies_unless_the_builtin_fallback_is_chosen(
    home: PluginHome, tmp_path: Path, rec: Any
) -> None:
    pm, builtin, asked_builtin = _session(home, tmp_path, transport="pager")
    assert "not approved (deny)" in _run(pm, builtin, tmp_path)["error"]
    assert asked_builtin == []
    pm2, builtin2, asked2 = _session(
        home, tmp_path, transport="pager", transport_fallback="builtin"
    )
    assert _run(pm2, builtin2, tmp_path)["output"] == "ran\n"
    assert len(asked2) == 1


def test_an_async_transport_and_the_builtin_default(
    home: PluginHome, tmp_path: Path, rec: Any
) -> None:
    pm, builtin, _asked_builtin = _session(home, tmp_path, transport="phone_async")
    assert _run(pm, builtin, tmp_path)["output"] == "ran\n"
    pm2, builtin2, asked2 = _session(home, tmp_path)  # no transport: the host's approver
    assert _run(pm2, builtin2, tmp_path)["output"] == "ran\n"
    assert len(asked2) == 1
    assert rec.seen == []
    assert rec.surfaces[-1] == "cli"


def test_a_decision_must_be_for_the_request_and_a_choice_offered() -> None:
    request = ApprovalRequest.create(
        command="ls",
        description="d",
        pattern_key="k",
        pattern_keys=("k",),
        session_key="s",
        surface="cli",
        allow_session=False,
        allow_permanent=False,
        timeout_seconds=1,
    )
    assert request.allowed_choices == ("once", "deny")
    ok = invoke_approval_transport(lambda r: r.respond("once"), request, timeout_seconds=1)
    assert (ok.choice, ok.failure) == ("once", None)
    wrong = invoke_approval_transport(lambda r: r.respond("always"), request, timeout_seconds=1)
    assert (wrong.choice, wrong.failure) == ("deny", "invalid")
    stale = invoke_approval_transport(
        lambda r: ApprovalDecision(r.request_id, "other", "once"), request, timeout_seconds=1
    )
    assert stale.failure == "stale"

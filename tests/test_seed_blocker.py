"""A blocker written as the plugin guide's seed shows it (issue 26, closing section): the
callback names ``tool_args`` and returns ``{"blocked": True, "reason": ...}``. It must block,
and a hook registration that is refused must show in ``plugins list`` and ``plugins doctor``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_support import hermes
from homes import clean_home as home  # noqa: F401  (the fixture)
from plugin_builders import call_hook, info, load, user_plugin, write_config

from hermes_hooks.calling.facade import Hooks

SEED = """
def my_pre_tool_hook(tool_name, tool_args, **kwargs):
    if tool_name == "terminal" and "rm -rf" in tool_args.get("command", ""):
        return {"blocked": True, "reason": "Not allowed"}
    return None


def register(ctx):
    ctx.register_hook("pre_tool_call", my_pre_tool_hook)
"""

REFUSED = """
def needs_what_no_hook_passes(tool_name, tool_call_budget):
    return None


def register(ctx):
    ctx.register_hook("pre_tool_call", needs_what_no_hook_passes)
"""


def only_report(data: object) -> dict[str, Any]:
    """The one plugin's report out of ``plugins doctor NAME --json``."""
    while isinstance(data, dict) and "findings" not in data:
        data = next(iter(v for v in data.values() if isinstance(v, list | dict)))
    if isinstance(data, list):
        (data,) = data
    assert isinstance(data, dict)
    return data


def test_the_guides_seed_blocker_blocks_with_its_reason(home: Path) -> None:
    user_plugin(home, "seed-guard", SEED)
    write_config(home, ["seed-guard"])
    pm = load(home)
    assert info(pm, "seed-guard").status == "enabled"
    assert info(pm, "seed-guard").warnings == ()
    results = call_hook(pm, "pre_tool_call", tool_name="terminal", args={"command": "rm -rf /"})
    assert {"blocked": True, "reason": "Not allowed"} in results
    hooks = Hooks(pm)
    decision = hooks.pre_tool_call(tool_name="terminal", args={"command": "rm -rf /"})
    assert decision.is_blocked
    assert decision.message == "Not allowed"
    assert decision.plugin == "seed-guard"
    allowed = hooks.pre_tool_call(tool_name="terminal", args={"command": "ls"})
    assert not allowed.is_blocked


def test_a_refused_hook_registration_shows_in_list_and_as_an_error_in_doctor(home: Path) -> None:
    user_plugin(home, "half-guard", REFUSED)
    write_config(home, ["half-guard"])
    listed = hermes(home, "plugins", "list")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("half-guard"))
    assert "enabled!" in row
    assert "hook 'pre_tool_call' refused" in listed.stdout
    assert "tool_call_budget" in listed.stdout
    doctor = hermes(home, "plugins", "doctor", "half-guard", "--json")
    report = only_report(json.loads(doctor.stdout))
    errors = [f for f in report["findings"] if f["level"] == "error"]
    assert any("hook 'pre_tool_call' refused" in f["message"] for f in errors), report
    assert doctor.returncode != 0


def test_doctor_points_the_blocked_form_to_hermess_own(home: Path) -> None:
    user_plugin(home, "seed-guard", SEED)
    write_config(home, ["seed-guard"])
    doctor = hermes(home, "plugins", "doctor", "seed-guard", "--json")
    report = only_report(json.loads(doctor.stdout))
    hints = [f["message"] for f in report["findings"] if f["check"] == "blocked-form"]
    assert hints, report
    assert '{"action": "block", "message": ...}' in hints[0]

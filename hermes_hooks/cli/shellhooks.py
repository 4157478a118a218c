"""``hermes hooks list|test|revoke|doctor``: the shell hooks of ``config.yaml``."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import click

from hermes_hooks.cli.common import echo_json, fit_table, get_home, terminal_width

if TYPE_CHECKING:
    from pathlib import Path

    from hermes_hooks.host.shell_hooks import ShellHookSpec

__all__ = ["add_shell_hook_commands"]


def _configured(ctx: click.Context) -> tuple[Path, list[ShellHookSpec], list[str]]:
    from hermes_hooks.errors import ConfigError
    from hermes_hooks.host.shell_hooks import parse_hooks
    from hermes_hooks.plugins.configfile import load_config

    home = get_home(ctx)
    try:
        config = load_config(home)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    specs, problems = parse_hooks(config.get("hooks"))
    return home, specs, problems


def _synthetic(event: str, tool: str | None, extra: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"session_id": "hooks-test", **extra}
    if event in ("pre_tool_call", "post_tool_call"):
        kwargs.setdefault("tool_name", tool or "terminal")
        kwargs.setdefault("args", {"command": "echo hermes hooks test"})
    return kwargs


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of shell hooks.")
@click.pass_context
def list_hooks(ctx: click.Context, as_json: bool) -> None:
    """List the shell hooks of config.yaml: event, matcher, command, and whether approved.

    \b
    Example:
      hermes hooks list
    """
    from hermes_hooks.host.shell_hooks import approval_state

    home, specs, problems = _configured(ctx)
    rows = [
        {
            "event": s.event,
            "matcher": s.matcher,
            "command": s.command,
            "timeout": s.timeout,
            "fail_closed": s.fail_closed,
            "approval": approval_state(home, s),
            "owner": s.owner,
        }
        for s in specs
    ]
    if as_json:
        echo_json({"hooks": rows, "problems": problems})
        return
    for problem in problems:
        click.echo(f"config.yaml {problem}", err=True)
    if not rows:
        click.echo("No shell hooks: add them under hooks: in config.yaml.")
        return
    table = [
        [
            str(r["event"]),
            str(r["matcher"] or "*"),
            f"{r['timeout']}s",
            str(r["approval"]),
            str(r["command"]),
        ]
        for r in rows
    ]
    for line in fit_table(
        ["EVENT", "MATCHER", "TIMEOUT", "APPROVAL", "COMMAND"], table, terminal_width()
    ):
        click.echo(line)


@click.command("test")
@click.argument("event")
@click.option("--for-tool", "tool", metavar="NAME", help="The tool_name of the made-up call.")
@click.option("--payload", metavar="JSON", help="More arguments of the call, as a JSON object.")
@click.option("--json", "as_json", is_flag=True, help="Print each run as JSON.")
@click.pass_context
def test_hooks(
    ctx: click.Context, event: str, tool: str | None, payload: str | None, as_json: bool
) -> None:
    """Run the shell hooks of EVENT once on a made-up call and show what they answer.

    They run because you ask, approved or not. Exits 1 when EVENT is not a hook.

    \b
    Examples:
      hermes hooks test pre_tool_call --for-tool terminal
      hermes hooks test pre_llm_call --payload '{"user_message": "hi"}'
    """
    from hermes_hooks.admin.actions import closest_names
    from hermes_hooks.host.shell_hooks import run_once
    from hermes_hooks.spec.hookspecs import VALID_HOOKS

    if event not in VALID_HOOKS:
        close = closest_names(event, sorted(VALID_HOOKS))
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise click.ClickException(f"{event!r} is not a hook{hint}")
    try:
        extra = json.loads(payload) if payload else {}
    except ValueError as exc:
        raise click.ClickException(f"--payload is not JSON: {exc}") from None
    if not isinstance(extra, dict):
        raise click.ClickException("--payload must be a JSON object")
    _, specs, _ = _configured(ctx)
    chosen = [s for s in specs if s.event == event]
    kwargs = _synthetic(event, tool, extra)
    runs = []
    for spec in chosen:
        if not spec.matches_tool(kwargs.get("tool_name")):
            continue
        result, answer = run_once(spec, kwargs)
        runs.append(
            {
                "command": spec.command,
                "returncode": result.returncode,
                "timed_out": result.timed_out,
                "error": result.error,
                "elapsed": round(result.elapsed, 3),
                "stderr": result.stderr.strip()[:400],
                "answer": answer,
            }
        )
    if as_json:
        echo_json(runs)
        return
    if not runs:
        click.echo(f"No shell hook runs for {event}.")
    for run in runs:
        state = "timed out" if run["timed_out"] else run["error"] or f"exit {run['returncode']}"
        click.echo(f"{run['command']}: {state} in {run['elapsed']}s")
        click.echo(f"  answer: {json.dumps(run['answer'])}")
        if run["stderr"]:
            click.echo(f"  stderr: {run['stderr']}")


@click.command("revoke")
@click.argument("command")
@click.pass_context
def revoke_hook(ctx: click.Context, command: str) -> None:
    """Withdraw the approval of shell hook COMMAND (as written in config.yaml).

    \b
    Example:
      hermes hooks revoke ~/.hermes/hooks/no-rm.py
    """
    from hermes_hooks.host.shell_hooks import revoke

    count = revoke(get_home(ctx), command)
    if count:
        click.echo(f"Revoked {count} approval(s) of {command}; it is asked about again.")
    else:
        click.echo(f"No approval of {command} to revoke.")


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def doctor_hooks(ctx: click.Context, as_json: bool) -> None:
    """Check the shell hooks: entries, scripts, approvals, and one made-up run each.

    Exits 1 when an entry is refused, a script is missing or not executable, or a run fails.

    \b
    Example:
      hermes hooks doctor
    """
    from hermes_hooks.host.shell_hooks import approval_state, run_once, script_path

    home, specs, problems = _configured(ctx)
    findings: list[dict[str, Any]] = [
        {"level": "error", "command": None, "message": p} for p in problems
    ]
    for spec in specs:

        def add(level: str, message: str, spec: ShellHookSpec = spec) -> None:
            findings.append({"level": level, "command": spec.command, "message": message})

        path = script_path(spec.command)
        if path is None or not path.is_file():
            add("error", f"{spec.event}: script not found ({path or spec.command})")
            continue
        words = spec.command.split()
        bare = os.path.expanduser(words[0]) == str(path)
        if bare and not os.access(path, os.X_OK):
            add("error", f"{spec.event}: {path} is not executable (chmod +x)")
            continue
        state = approval_state(home, spec)
        if state != "approved":
            add("warning", f"{spec.event}: {state}: it does not run until approved")
        result, answer = run_once(spec, _synthetic(spec.event, None, {}))
        if result.error or result.timed_out:
            add("error", f"{spec.event}: a test run failed: {result.error or 'timed out'}")
        else:
            add(
                "info", f"{spec.event}: ran in {result.elapsed:.3f}s, answered {json.dumps(answer)}"
            )
    ok = not any(f["level"] == "error" for f in findings)
    if as_json:
        echo_json({"ok": ok, "findings": findings})
    else:
        if not specs and not problems:
            click.echo("No shell hooks configured.")
        for finding in findings:
            who = f"{finding['command']}: " if finding["command"] else ""
            click.echo(f"{finding['level']}: {who}{finding['message']}")
    if not ok:
        ctx.exit(1)


def add_shell_hook_commands(group: click.Group) -> None:
    """Add ``list``, ``test``, ``revoke`` and ``doctor`` to ``hermes hooks``."""
    for command in (list_hooks, test_hooks, revoke_hook, doctor_hooks):
        group.add_command(command)

"""Running the agent: ``hermes -z PROMPT``, ``hermes chat`` and ``hermes gateway``.

Each builds a host on the chosen home: the host tools, then the enabled plugins, then the model
``config.yaml`` names (``offline`` by default, so all three work with no key and no network).
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import IO, TYPE_CHECKING, Any

import click

from hermes_hooks.cli.common import build_manager, connect_mcp, echo_json, use_color

if TYPE_CHECKING:
    from hermes_hooks.backends.models import ModelProvider, ModelSettings
    from hermes_hooks.host.gateway import DispatchOutcome
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["chat", "gateway", "run_oneshot"]


def open_host(ctx: click.Context) -> tuple[PluginManager, ModelProvider, ModelSettings]:
    """Return the manager (host tools first, then plugins), the model and its settings.

    :raises ConfigError: ``config.yaml`` cannot be read, or its ``model:`` section is wrong.
    """
    from hermes_hooks.backends.models import get_models, load_model_settings

    pm = build_manager(ctx)  # .env applied, host tools first, then the plugins
    connect_mcp(pm)  # the tools of mcp_servers: (nothing is imported when none is configured)
    settings = load_model_settings(pm)
    provider, name = ctx.find_root().meta.get("hermes.model_choice", (None, None))
    if provider or name:  # -m/--model, --provider: this run only
        import attrs

        changes: dict[str, Any] = {}
        if provider:
            changes["provider"] = provider.strip().lower()
        if name:
            changes["name"] = name
        settings = attrs.evolve(settings, **changes)
    return pm, get_models(pm).create_model(settings), settings


def read_prompt(ctx: click.Context, prompt: str) -> str:
    """Return the prompt of ``-z``: ``-`` reads it from stdin; an empty one is a usage error."""
    from_stdin = prompt == "-"
    if from_stdin:
        prompt = sys.stdin.read()
    if not prompt.strip():
        where = "stdin gave" if from_stdin else "-z got"
        raise click.UsageError(f"-z needs a prompt; {where} an empty one", ctx)
    return prompt.strip("\n") if from_stdin else prompt


def _session_options(settings: ModelSettings) -> dict[str, Any]:
    return {"max_retries": settings.max_retries, "retry_backoff": settings.retry_backoff}


def _finish_kanban_task(ctx: click.Context, pm: Any, ok: bool, answer: str) -> None:
    """A kanban worker (``hermes kanban dispatch`` started it) completes its task, or blocks
    it when the turn failed."""
    import os

    if not os.environ.get("HERMES_KANBAN_TASK"):
        return
    from hermes_hooks.calling.facade import Hooks
    from hermes_hooks.cli.common import get_home, warn
    from hermes_hooks.host.kanban import KanbanError, finish_worker_task

    try:
        finish_worker_task(get_home(ctx), Hooks(pm), ok=ok, summary=answer)
    except KanbanError as exc:
        warn(f"kanban task not finished: {exc}")


def run_oneshot(ctx: click.Context, prompt: str, as_json: bool) -> None:
    """Run one turn on ``prompt`` (and the follow-ups plugins inject), print the answer.

    Exits 1 when the turn failed. With ``as_json`` it prints the session's events (hooks
    fired, model requests, tool calls) and the turns instead.
    """
    from hermes_hooks.host.approval import TerminalApprover
    from hermes_hooks.host.records import TurnResult
    from hermes_hooks.host.session import Session

    # stdout is for the answer alone: what plugins print while loading and during the turn,
    # and any progress, goes to stderr (so `hermes -z ... > answer.txt` holds the answer).
    with contextlib.redirect_stdout(sys.stderr):
        pm, model, settings = open_host(ctx)
        session = Session(
            pm,
            model,
            approver=TerminalApprover(),
            record_events=as_json,
            **_session_options(settings),
        )
        try:
            replies = session.send(prompt)
        finally:
            session.close("oneshot")
            model.close()
    turns = [reply for reply in replies if isinstance(reply, TurnResult)]
    ok = not any(turn.failed for turn in turns)
    _finish_kanban_task(ctx, pm, ok, replies[-1].text if replies else "")
    if as_json:
        echo_json(
            {
                "ok": ok,
                "prompt": prompt,
                "session_id": session.session_id,
                "provider": model.provider,
                "model": model.model,
                "answer": replies[-1].text if replies else "",
                "turns": [turn.to_dict() for turn in turns],
                "events": session.events,
            }
        )
    else:
        for reply in replies:
            click.echo(reply.text, err=isinstance(reply, TurnResult) and reply.failed)
    if not ok:
        ctx.exit(1)


@click.command("chat")
@click.pass_context
def chat(ctx: click.Context) -> None:
    """Talk with the agent: one line per turn, /help lists the commands, /exit ends.

    On a terminal the line can be edited and Up and Down walk the history (kept in
    $HERMES_HOME/chat_history); approvals are asked there. Without a terminal the lines are
    read as they come and approvals are denied. A message a plugin injects while the chat
    waits for a line runs as the next input at once.

    While a turn runs, an indicator shows that the model works, each tool call is shown with
    its outcome (done, failed, blocked) as it happens, and a streaming model's answer is
    printed as it comes. Ctrl-C during a turn cancels it and returns to the prompt; at the
    prompt, Ctrl-C (exit code 130) or Ctrl-D ends the chat.

    \b
    Examples:
      hermes chat
      printf 'run `ls`\\n/exit\\n' | hermes chat
    """
    from hermes_hooks.backends.models import get_models
    from hermes_hooks.cli.chatinput import HISTORY_FILE, WAKE, LineReader, StreamReader
    from hermes_hooks.host.approval import TerminalApprover
    from hermes_hooks.host.session import Session

    pm, model, settings = open_host(ctx)
    stdin: IO[str] = sys.stdin
    approver = TerminalApprover(stdin=stdin)
    session = Session(pm, model, approver=approver, **_session_options(settings))
    reader: LineReader
    if stdin.isatty() and sys.stdout.isatty():
        from hermes_hooks.cli.chatinput import TerminalReader

        reader = TerminalReader(pm.hermes_home / HISTORY_FILE)
    else:
        reader = StreamReader(stdin)
    session.on_pending = reader.wake
    from hermes_hooks.cli.chatdisplay import ChatDisplay

    terminal = sys.stdout.isatty()
    display = ChatDisplay(sys.stdout, terminal=terminal, color=use_color(ctx, sys.stdout))
    session.on_event = display
    # Streamed text (the model clients call on_text per delta) goes to the live display.
    session.on_text = lambda text: display("text_delta", {"text": text})
    session.on_text_end = lambda: display("text_end", {})
    click.echo(f"hermes chat on {model.describe()}: /help lists the commands, /exit ends.")
    reason = "exit"
    try:
        while True:
            # Injected before the reader listened (while the session started), or just now.
            line = WAKE if session.pending else reader.read("> ")
            if line is None:
                break
            if line is not WAKE and not (isinstance(line, str) and line.strip()):
                continue
            try:
                display.start_turn()
                if line is WAKE:
                    replies = session.run_pending()
                else:
                    assert isinstance(line, str)
                    replies = session.send(line.strip())
            except KeyboardInterrupt:
                display.end_turn()
                # The cancelled request's connection is dropped with its client: a fresh one
                # for the next turn (an HTTP pool interrupted mid-request is not reused).
                model.close()
                model = session.model = get_models(pm).create_model(settings)
                click.echo("(cancelled: Ctrl-C again or Ctrl-D ends the chat)")
                continue
            display.end_turn()
            for reply in replies:
                if not display.streamed:
                    click.echo(reply.text)
            if any(getattr(reply, "exit", False) for reply in replies):
                break
    except KeyboardInterrupt:
        reason = "interrupted"
        click.echo("")
    finally:
        session.on_pending = None
        session.close(reason)
        model.close()
    if reason == "interrupted":
        ctx.exit(130)


@click.group("gateway")
def gateway() -> None:
    """Run the chat gateway: platform plugins in, pre_gateway_dispatch, a session per chat.

    \b
    Examples:
      hermes gateway run
      hermes gateway status
      hermes gateway replay events.jsonl
    """


@gateway.command("run")
@click.option(
    "--max-workers",
    type=click.IntRange(1, 256),
    default=16,
    show_default=True,
    help="Agent turns that may run at once (one thread each).",
)
@click.option(
    "--dashboard",
    "with_dashboard",
    is_flag=True,
    help="Also serve the dashboard on 127.0.0.1, observing this gateway.",
)
@click.option(
    "--dashboard-port",
    default=9119,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="The dashboard's port (0: any free port).",
)
@click.pass_context
def run(ctx: click.Context, max_workers: int, with_dashboard: bool, dashboard_port: int) -> None:
    """Connect every enabled platform and answer its chats until SIGINT or SIGTERM.

    A platform is enabled by gateway.platforms.<name>.enabled in config.yaml, or by its
    plugin from the environment (IRC_SERVER and IRC_CHANNEL for IRC, say). On SIGINT or
    SIGTERM the turns in flight finish (at most gateway.drain_timeout seconds), every
    adapter disconnects and every session closes; the exit status is then 0. With
    --dashboard the dashboard runs beside it on loopback and shows this gateway's own
    figures (its address, with the session token, is printed on stderr).

    \b
    Examples:
      hermes gateway run
      hermes gateway run --dashboard --dashboard-port 0
    """
    import asyncio
    import signal

    from hermes_hooks.host.gateway_runner import GatewayRunner

    pm, model, settings = open_host(ctx)
    runner = GatewayRunner(pm, model, max_workers=max_workers, **_session_options(settings))
    board = _start_dashboard(pm, dashboard_port) if with_dashboard else None

    def ready() -> None:
        names = ", ".join(sorted(runner.states)) or "none"
        click.echo(f"gateway running; platforms: {names} (Ctrl-C to stop)", err=True)

    async def main() -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, runner.request_stop)
        return await runner.run(ready=ready)

    try:
        status = asyncio.run(main())
    finally:
        model.close()
        if board is not None:
            board.stop()
    click.echo("gateway stopped", err=True)
    ctx.exit(status)


def _start_dashboard(pm: Any, port: int) -> Any:
    """Serve the dashboard beside the gateway, observing its manager; say where on stderr."""
    from hermes_hooks.dashboard import start_dashboard
    from hermes_hooks.errors import HermesHooksError

    try:
        board = start_dashboard(pm, port=port)
    except HermesHooksError as exc:
        raise click.ClickException(f"the dashboard cannot start: {exc}") from exc
    click.echo(f"dashboard: {board.url}", err=True)
    return board


@gateway.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as one JSON object.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show the registered platforms, which are enabled, and each one's last known state.

    The state comes from the running (or last) gateway's <home>/gateway_state.json.

    \b
    Example:
      hermes gateway status
    """
    from hermes_hooks.host.gateway_status import gather_status

    pm = build_manager(ctx)
    report = gather_status(pm)
    if as_json:
        echo_json(report)
        return
    gateway_line = f"gateway: {report['gateway_state']}"
    if report.get("pid"):
        gateway_line += f" (pid {report['pid']}{'' if report['alive'] else ', not running'})"
    click.echo(gateway_line)
    if not report["platforms"]:
        click.echo("no platform is registered (install or enable a kind: platform plugin)")
    for item in report["platforms"]:
        switch = "enabled" if item["enabled"] else "disabled"
        line = f"  {item['name']:<16} {item['state']:<12} {switch}  [{item['owner']}]"
        if item.get("error_message"):
            line += f"  {item['error_code']}: {item['error_message']}"
        click.echo(line)


def _describe(index: int, outcome: DispatchOutcome) -> list[str]:
    event = outcome.event
    if event is None:
        return [f"[{index}] invalid: {outcome.reason}"]
    head = f"[{index}] {event.platform} {event.sender}: {outcome.text!r}"
    if outcome.action == "skipped":
        return [f"{head} -> skipped: {outcome.reason}"]
    if outcome.rewritten:
        head += " (rewritten by a plugin)"
    lines = [f"{head} -> replied in {outcome.session_id}"]
    for reply in outcome.replies:
        lines.extend(f"    {line}" for line in (reply.splitlines() or [""]))
    return lines


@gateway.command("replay")
@click.argument("events", type=click.File("r", encoding="utf-8"), metavar="EVENTS.jsonl")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per event.")
@click.pass_context
def replay(ctx: click.Context, events: IO[str], as_json: bool) -> None:
    """Feed the gateway the messages of a JSON-lines file and show what happened to each.

    Each line is an object with "text" and optionally "platform", "sender", "chat_id",
    "message_id" and "internal". Exits 1 when a line is not a message event.

    \b
    Examples:
      hermes gateway replay events.jsonl
      echo '{"platform": "telegram", "sender": "ann", "text": "hi"}' | hermes gateway replay -
    """
    from hermes_hooks.host.gateway import Gateway

    pm, model, settings = open_host(ctx)
    hub = Gateway(pm, model, **_session_options(settings))
    invalid = 0
    try:
        for index, outcome in enumerate(hub.replay(events), start=1):
            invalid += outcome.action == "invalid"
            if as_json:
                click.echo(json.dumps(outcome.to_dict(), ensure_ascii=False, default=str))
            else:
                for line in _describe(index, outcome):
                    click.echo(line)
            sys.stdout.flush()
    finally:
        hub.shutdown()
        model.close()
    if invalid:
        click.echo(f"Error: {invalid} line(s) are not message events", err=True)
        ctx.exit(1)

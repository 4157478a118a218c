"""Running the agent: ``hermes -z PROMPT``, ``hermes chat`` and ``hermes gateway replay``.

Each builds a host on the chosen home: the host tools, then the enabled plugins, then the model
``config.yaml`` names (``offline`` by default, so all three work with no key and no network).
"""

from __future__ import annotations

import json
import sys
from typing import IO, TYPE_CHECKING, Any

import click

from hermes_hooks.cli.common import build_manager, echo_json

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
    settings = load_model_settings(pm)
    return pm, get_models(pm).create_model(settings), settings


def _session_options(settings: ModelSettings) -> dict[str, Any]:
    return {"max_retries": settings.max_retries, "retry_backoff": settings.retry_backoff}


def run_oneshot(ctx: click.Context, prompt: str, as_json: bool) -> None:
    """Run one turn on ``prompt`` (and the follow-ups plugins inject), print the answer.

    Exits 1 when the turn failed. With ``as_json`` it prints the session's events (hooks
    fired, model requests, tool calls) and the turns instead.
    """
    from hermes_hooks.host.approval import TerminalApprover
    from hermes_hooks.host.records import TurnResult
    from hermes_hooks.host.session import Session

    pm, model, settings = open_host(ctx)
    session = Session(
        pm, model, approver=TerminalApprover(), record_events=as_json, **_session_options(settings)
    )
    try:
        replies = session.send(prompt)
    finally:
        session.close("oneshot")
        model.close()
    turns = [reply for reply in replies if isinstance(reply, TurnResult)]
    ok = not any(turn.failed for turn in turns)
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
    waits for a line runs as the next input at once. Ctrl-C or Ctrl-D ends the chat
    (Ctrl-C with exit code 130).

    \b
    Examples:
      hermes chat
      printf 'run `ls`\\n/exit\\n' | hermes chat
    """
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
    streamed: list[str] = []

    def show(text: str) -> None:  # the model's text, printed as it arrives
        streamed.append(text)
        click.echo(text, nl=False)

    def end_line() -> None:
        streamed.append("\n")
        click.echo("")

    session.on_text = show
    session.on_text_end = end_line
    click.echo(f"hermes chat on {model.describe()}: /help lists the commands, /exit ends.")
    reason = "exit"
    try:
        while True:
            # Injected before the reader listened (while the session started), or just now.
            line = WAKE if session.pending else reader.read("> ")
            if line is None:
                break
            if line is WAKE:
                replies = session.run_pending()
            elif isinstance(line, str) and line.strip():
                replies = session.send(line.strip())
            else:
                continue
            for reply in replies:
                shown = "".join(streamed)
                streamed.clear()
                if not shown or not shown.rstrip().endswith(reply.text.strip()):
                    click.echo(reply.text)  # not streamed, or changed by transform_llm_output
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
    """Run the chat gateway: inbound messages, pre_gateway_dispatch, a session per sender.

    \b
    Example:
      hermes gateway replay events.jsonl
    """


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

"""``hermes memory``: which memory providers run, and the builtin provider's facts.

Formatting only: :mod:`hermes_hooks.backends.memory.status` has the logic.
"""

from __future__ import annotations

from typing import Any

import click

from hermes_hooks.cli.common import build_manager, echo_json, get_home, warn

__all__ = ["memory"]


@click.group("memory", invoke_without_command=True)
@click.pass_context
def memory(ctx: click.Context) -> None:
    """Show the memory providers, and search or forget the builtin provider's facts.

    With no sub-command, the same as 'hermes memory status'. The builtin provider keeps facts
    in $HERMES_HOME/memory/facts.db; 'hermes tools memory --provider NAME' chooses the
    external provider (memory.provider).

    \b
    Examples:
      hermes memory
      hermes memory search "favourite editor"
      hermes memory forget 12
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(status)


def _print_status(info: dict[str, Any]) -> None:
    if info.get("error"):
        warn(info["error"])
        return
    builtin = info["builtin"]
    state = "on" if builtin["enabled"] else "off (memory.builtin: false)"
    click.echo(f"builtin: {state}")
    if builtin.get("error"):
        warn(f"{builtin['path']}: {builtin['error']}")
    elif builtin["exists"]:
        count = builtin["facts"]
        facts = "1 fact" if count == 1 else f"{count} facts"
        click.echo(f"  {facts} in {builtin['path']} (search: {builtin['search']})")
        if builtin.get("check") not in (None, "ok"):
            warn(f"{builtin['path']}: integrity check says {builtin['check']}")
    else:
        click.echo(f"  no facts yet ({builtin['path']} is created by the first one)")
    external = info["external"]
    if external is None:
        click.echo("external: none (memory.provider is not set)")
    elif external["error"]:
        click.echo(f"external: {info['provider']} (not running)")
        warn(external["error"])
    else:
        state = "available" if external["available"] else "not available"
        click.echo(f"external: {external['name']} (plugin {external['plugin']}, {state})")
        for line in external.get("warnings", []):
            warn(line)
    click.echo(f"prefetch timeout: {info['prefetch_timeout']:g} s (memory.prefetch_timeout)")
    for line in info.get("warnings", []):
        warn(line)


@memory.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def status(ctx: click.Context, as_json: bool = False) -> None:
    """Show the builtin provider (its facts) and the external one memory.provider selects.

    \b
    Examples:
      hermes memory status
      hermes memory status --json
    """
    from hermes_hooks.backends.memory.status import describe_memory

    info = describe_memory(build_manager(ctx))
    if as_json:
        echo_json(info)
    else:
        _print_status(info)


@memory.command("search")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def search(ctx: click.Context, query: str, limit: int, as_json: bool) -> None:
    """Show the builtin provider's facts that match QUERY, the best first.

    \b
    Examples:
      hermes memory search "favourite editor"
      hermes memory search deploy --limit 3 --json
    """
    from hermes_hooks.backends.memory.status import search_facts

    facts = search_facts(get_home(ctx), query, limit)
    if as_json:
        echo_json([fact.to_dict() for fact in facts])
        return
    if not facts:
        click.echo(f"No fact matches {query!r}.")
    for fact in facts:
        click.echo(f"#{fact.id}  {fact.content}  ({fact.target}, {fact.created_at})")


@memory.command("forget")
@click.argument("fact_id", metavar="ID", type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def forget(ctx: click.Context, fact_id: int, as_json: bool) -> None:
    """Delete the builtin provider's fact ID (as 'hermes memory search' shows it).

    \b
    Example:
      hermes memory forget 12
    """
    from hermes_hooks.backends.memory.status import forget_fact

    fact = forget_fact(get_home(ctx), fact_id)
    if fact is None:
        raise click.ClickException(
            f"there is no fact #{fact_id} ('hermes memory search' shows them)"
        )
    if as_json:
        echo_json(fact.to_dict())
    else:
        click.echo(f"Forgot #{fact.id}: {fact.content}")

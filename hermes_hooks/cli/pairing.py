"""``hermes pairing``: the pairing codes unknown chat users get, and the users approved.

Formatting only: the store is Hermes' ``gateway.pairing`` as the compatibility layer serves it
(:mod:`hermes_hooks.compat.gateway_pairing`), in the home's ``platforms/pairing/`` folder;
``hermes gateway run`` issues the codes and authorizes the approved users.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from hermes_hooks.cli.common import build_manager, echo_json
from hermes_hooks.compat.gateway_pairing import PairingStore

__all__ = ["pairing"]


@click.group("pairing")
def pairing() -> None:
    """Approve the chat users who asked for access with a pairing code, list and revoke them.

    An unknown user who writes to the gateway in a direct chat gets an 8-character code
    (valid one hour); approving it authorizes that user on that platform.

    \b
    Examples:
      hermes pairing list
      hermes pairing approve telegram K7QX2M9P
      hermes pairing revoke telegram 123456789
      hermes pairing clear-pending
    """


@contextmanager
def _store(ctx: click.Context) -> Iterator[PairingStore]:
    """The store of the command's home, with its platform plugins loaded (their allow-list
    variables are where an approval is mirrored)."""
    pm = build_manager(ctx)
    with pm.activate():
        yield PairingStore()


@pairing.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print pending and approved as JSON.")
@click.pass_context
def list_pairing(ctx: click.Context, as_json: bool) -> None:
    """List the pending pairing requests (with their request ids) and the approved users.

    \b
    Example:
      hermes pairing list
    """
    with _store(ctx) as store:
        pending, approved = store.list_pending(), store.list_approved()
    if as_json:
        echo_json({"pending": pending, "approved": approved})
        return
    if not pending and not approved:
        click.echo("No pairing data found. No one has tried to pair yet~")
        return
    if pending:
        click.echo(f"Pending Pairing Requests ({len(pending)}):")
        click.echo(f"  {'Platform':<12} {'Request ID':<18} {'User ID':<20} {'Name':<20} Age")
        for row in pending:
            click.echo(
                f"  {row['platform']:<12} {row['request_id']:<18} {row['user_id']:<20} "
                f"{row.get('user_name', ''):<20} {row['age_minutes']}m ago"
            )
    else:
        click.echo("No pending pairing requests.")
    if approved:
        click.echo(f"Approved Users ({len(approved)}):")
        click.echo(f"  {'Platform':<12} {'User ID':<20} Name")
        for row in approved:
            click.echo(f"  {row['platform']:<12} {row['user_id']:<20} {row.get('user_name', '')}")
    else:
        click.echo("No approved users.")


@pairing.command("approve")
@click.argument("platform")
@click.argument("code")
@click.pass_context
def approve(ctx: click.Context, platform: str, code: str) -> None:
    """Approve the user of pairing CODE (or of a request id from 'list') on PLATFORM.

    \b
    Example:
      hermes pairing approve irc K7QX2M9P
    """
    platform = platform.strip().lower()
    with _store(ctx) as store:
        if store.looks_like_request_id(code):
            result = store.approve_request(platform, code)
        else:
            result = store.approve_code(platform, code)
        locked = result is None and store._is_locked_out(platform)
    if result is None:
        if locked:
            raise click.ClickException(
                f"approvals on {platform} are locked for an hour after too many failed codes"
            )
        raise click.ClickException(
            f"code {code.strip().upper()!r} not found or expired for platform {platform!r}; "
            "'hermes pairing list' shows the pending requests"
        )
    name, uid = result.get("user_name", ""), result["user_id"]
    who = f"{name} ({uid})" if name else uid
    click.echo(f"Approved! User {who} on {platform} can now use the bot~")


@pairing.command("revoke")
@click.argument("platform")
@click.argument("user_id")
@click.pass_context
def revoke(ctx: click.Context, platform: str, user_id: str) -> None:
    """Revoke USER_ID's approval on PLATFORM.

    \b
    Example:
      hermes pairing revoke irc alice
    """
    platform = platform.strip().lower()
    with _store(ctx) as store:
        found = store.revoke(platform, user_id)
    if not found:
        raise click.ClickException(f"user {user_id} is not in the approved list for {platform}")
    click.echo(f"Revoked access for user {user_id} on {platform}.")


@pairing.command("clear-pending")
@click.pass_context
def clear_pending(ctx: click.Context) -> None:
    """Drop every pending pairing request.

    \b
    Example:
      hermes pairing clear-pending
    """
    with _store(ctx) as store:
        count = store.clear_pending()
    click.echo(f"Cleared {count} pending request(s)." if count else "No pending requests to clear.")

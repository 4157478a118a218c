"""``hermes dashboard`` and ``hermes dashboard-auth``: formatting only, the logic is in
:mod:`hermes_hooks.dashboard` and :mod:`hermes_hooks.backends.dashboard_auth`."""

from __future__ import annotations

import getpass
import sys
from typing import NoReturn

import click

from hermes_hooks.cli.common import build_manager, echo_json

__all__ = ["dashboard", "dashboard_auth"]


def fail(message: str) -> NoReturn:
    """Stop the command with ``Error: message`` and exit status 1."""
    raise click.ClickException(message)


@click.command("dashboard")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=9119,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--insecure",
    is_flag=True,
    help="Listen beyond loopback without a dashboard_auth provider (the session "
    "token alone guards it).",
)
@click.option("--login", is_flag=True, help="Ask for a dashboard_auth login even on loopback.")
@click.pass_context
def dashboard(ctx: click.Context, host: str, port: int, insecure: bool, login: bool) -> None:
    """Serve the dashboard: plugins, hooks, tools, memory and the doctor in a browser.

    On loopback it prints its address with a per-process session token; open it once and
    the page keeps the token in a cookie. Beyond loopback it refuses to start unless a
    dashboard_auth provider is registered (the login page offers each) or --insecure is
    given. Plugins with a dashboard/manifest.json add their tabs.

    \b
    Examples:
      hermes dashboard
      hermes dashboard --port 0
      hermes dashboard --host 0.0.0.0      (needs a dashboard_auth provider)
    """
    from hermes_hooks.dashboard.server import serve_dashboard
    from hermes_hooks.errors import HermesHooksError

    pm = build_manager(ctx)
    try:
        serve_dashboard(
            pm, host=host, port=port, insecure=insecure, announce=click.echo, login=login
        )
    except HermesHooksError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        pass


@click.group("dashboard-auth")
def dashboard_auth() -> None:
    """The dashboard_auth providers that guard the dashboard beyond loopback.

    \b
    Examples:
      hermes dashboard-auth list
      hermes dashboard-auth check basic
    """


@dashboard_auth.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def list_providers(ctx: click.Context, as_json: bool) -> None:
    """List the registered dashboard_auth providers and what each supports.

    \b
    Example:
      hermes dashboard-auth list
    """
    from hermes_hooks.backends.dashboard_auth.registry import DASHBOARD_AUTH, providers_for

    pm = build_manager(ctx)
    registry = DASHBOARD_AUTH.registry(pm)
    rows = [
        {
            "name": p.name,
            "display_name": p.display_name,
            "plugin": registry.owner_of(p.name),
            "password": bool(getattr(p, "supports_password", False)),
            "token": bool(getattr(p, "supports_token", False)),
            "session": bool(getattr(p, "supports_session", True)),
        }
        for p in providers_for(pm)
    ]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo(
            "No dashboard_auth provider is registered: the dashboard serves loopback "
            "only (or --insecure)."
        )
        return
    for row in rows:
        kinds = [k for k in ("password", "token", "session") if row[k]]
        owner = f" (plugin {row['plugin']})" if row["plugin"] else ""
        click.echo(f"{row['name']}: {row['display_name']}{owner}; {', '.join(kinds) or 'oauth'}")


@dashboard_auth.command("check")
@click.argument("provider")
@click.option("--username", help="Check a password login as this user.")
@click.option(
    "--token",
    "token_file",
    type=click.File("r"),
    help="Check the bearer token read from this file ('-' for standard input).",
)
@click.pass_context
def check(ctx: click.Context, provider: str, username: str | None, token_file: object) -> None:
    """Check a password login or a bearer token against provider PROVIDER.

    A password provider asks for the password (not echoed; from standard input without a
    terminal); a token provider reads the token from --token. Exits 1 when it is refused.

    \b
    Examples:
      hermes dashboard-auth check basic --username admin
      hermes dashboard-auth check drain-secret --token -
    """
    from hermes_hooks.admin.actions import closest_names
    from hermes_hooks.backends.dashboard_auth.provider import (
        InvalidCredentialsError,
        ProviderError,
    )
    from hermes_hooks.backends.dashboard_auth.registry import providers_for

    pm = build_manager(ctx)
    found = {p.name: p for p in providers_for(pm)}
    chosen = found.get(provider)
    if chosen is None:
        close = closest_names(provider, found)
        hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
        fail(
            f"no dashboard_auth provider {provider!r}{hint}; 'hermes dashboard-auth list' "
            "shows them"
        )
    if token_file is not None:
        if not getattr(chosen, "supports_token", False):
            fail(f"provider {provider!r} does not check tokens")
        token = token_file.read().strip()  # type: ignore[attr-defined]
        try:
            principal = chosen.verify_token(token=token)
        except ProviderError as exc:
            fail(f"provider {provider!r} is unreachable: {exc}")
        if principal is None:
            fail(f"provider {provider!r} refused the token")
        scopes = ", ".join(principal.scopes) or "unscoped"
        click.echo(f"token accepted: principal {principal.principal!r} ({scopes})")
        return
    if not getattr(chosen, "supports_password", False):
        fail(
            f"provider {provider!r} has no password login: give --token, or log in "
            "through the dashboard's page"
        )
    if not username:
        fail("give --username for a password check")
    password = getpass.getpass("Password: ") if sys.stdin.isatty() else sys.stdin.readline()
    try:
        session = chosen.complete_password_login(username=username, password=password.rstrip("\n"))
    except InvalidCredentialsError:
        fail("login refused: invalid username or password")
    except ProviderError as exc:
        fail(f"provider {provider!r} is unreachable: {exc}")
    click.echo(f"login accepted: {session.display_name or session.user_id} through {provider!r}")

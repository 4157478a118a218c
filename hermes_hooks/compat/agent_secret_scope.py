"""Hermes' ``agent.secret_scope``: credentials read through a profile's secret scope.

Hermes' gateway can serve several profiles from one process ("multiplexing"); each turn then
installs its profile's secrets in a context variable and :func:`get_secret` reads them, failing
closed (:class:`UnscopedSecretError`) when multiplexing is on and no scope is installed. This
host runs one home per gateway, so multiplexing is off unless a caller turns it on, and a read
is the installed scope's value, else the environment's (where ``hermes`` applied the home's
``.env``), exactly as Hermes reads when multiplexing is off.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar, Token
from pathlib import Path

__all__ = [
    "UnscopedSecretError",
    "build_profile_secret_scope",
    "current_secret_scope",
    "get_secret",
    "is_multiplex_active",
    "load_env_file",
    "reset_secret_scope",
    "set_multiplex_active",
    "set_secret_scope",
]

_multiplex = False
_SCOPE: ContextVar[Mapping[str, str] | None] = ContextVar("hermes_secret_scope", default=None)

_GLOBAL_EXACT = frozenset(
    {
        "HERMES_HOME",
        "HERMES_PROFILE",
        "HERMES_GATEWAY_LOCK_DIR",
        "HERMES_MAX_ITERATIONS",
        "HERMES_MAX_TOKENS",
        "HERMES_API_TIMEOUT",
        "HERMES_REDACT_SECRETS",
        "HERMES_NOUS_TIMEOUT_SECONDS",
        "_HERMES_GATEWAY",
        "PATH",
        "HOME",
        "USER",
        "LANG",
        "LC_ALL",
        "TZ",
        "PWD",
        "SHELL",
        "TMPDIR",
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "SSL_CERT_FILE",
        "HERMES_KANBAN_DB",
        "HERMES_KANBAN_WORKSPACES_ROOT",
        "HERMES_KANBAN_BOARD",
        "API_SERVER_ENABLED",
        "API_SERVER_HOST",
        "API_SERVER_PORT",
        "API_SERVER_CORS_ORIGINS",
        "GATEWAY_RELAY_URL",
        "GATEWAY_RELAY_ENDPOINT",
        "GATEWAY_RELAY_ALLOW_DIRECT_PLATFORMS",
        "GATEWAY_RELAY_PLATFORMS",
        "GATEWAY_RELAY_BOT_IDS",
        "GATEWAY_RELAY_ROUTE_KEYS",
        "GATEWAY_RELAY_INSTANCE_ID",
        "GATEWAY_RELAY_WAKE_URL",
        "GATEWAY_RELAY_DISPLAY_NAME",
    }
)
_GLOBAL_PREFIXES = ("HERMES_KANBAN_", "HERMES_TELEGRAM_", "TERMINAL_")


class UnscopedSecretError(RuntimeError):
    """A credential was read with multiplexing on and no profile scope installed."""


def set_multiplex_active(active: bool) -> None:
    """Say whether this process serves several profiles (never, by this host's own doing)."""
    global _multiplex
    _multiplex = bool(active)


def is_multiplex_active() -> bool:
    """Whether this process serves several profiles."""
    return _multiplex


def set_secret_scope(secrets: Mapping[str, str] | None) -> Token[Mapping[str, str] | None]:
    """Install ``secrets`` as the current context's scope (``None`` clears it)."""
    return _SCOPE.set(secrets)


def reset_secret_scope(token: Token[Mapping[str, str] | None]) -> None:
    """Restore the scope that ``token``'s :func:`set_secret_scope` replaced."""
    _SCOPE.reset(token)


def current_secret_scope() -> Mapping[str, str] | None:
    """The installed scope, or ``None``."""
    return _SCOPE.get()


def _is_global(name: str) -> bool:
    return name in _GLOBAL_EXACT or name.startswith(_GLOBAL_PREFIXES)


def get_secret(name: str, default: str | None = None) -> str | None:
    """The credential ``name``: deployment-wide variables from the environment; else the
    scope's value (a miss falls through to the environment unless multiplexing); else the
    environment's.

    :raises UnscopedSecretError: multiplexing is on and no scope is installed.
    """
    if _is_global(name):
        return os.environ.get(name, default)
    scope = _SCOPE.get()
    if scope is not None:
        value = scope.get(name)
        if value is not None:
            return value
        if _multiplex:
            return default
        return os.environ.get(name, default)
    if _multiplex:
        raise UnscopedSecretError(
            f"get_secret({name!r}) called with no profile secret scope active while "
            "multiplexing is on; run the read inside set_secret_scope(...)"
        )
    return os.environ.get(name, default)


def load_env_file(env_path: Path, *, strict: bool = False) -> dict[str, str]:
    """A ``.env`` file's variables, parsed as python-dotenv does, ``os.environ`` untouched;
    ``{}`` for a missing or unreadable file (``strict``: the error is raised instead)."""
    from dotenv import dotenv_values

    path = Path(env_path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        if strict:
            raise
        return {}
    import io

    values = dotenv_values(stream=io.StringIO(text))
    return {key: value for key, value in values.items() if value is not None}


def build_profile_secret_scope(hermes_home: Path) -> dict[str, str]:
    """A scope for the profile at ``hermes_home``: its ``.env``, without deployment-wide
    variables."""
    secrets = load_env_file(Path(hermes_home) / ".env")
    return {key: value for key, value in secrets.items() if not _is_global(key)}

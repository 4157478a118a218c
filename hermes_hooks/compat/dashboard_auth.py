"""Hermes' ``hermes_cli.dashboard_auth``: dashboard-auth providers.

The package Hermes plugins import the protocol from (``from hermes_cli.dashboard_auth import
DashboardAuthProvider, Session``); its submodules ``base``, ``registry`` and ``token_auth`` are
served too. Providers registered with ``ctx.register_dashboard_auth_provider`` guard
``hermes dashboard`` when it listens beyond loopback.
"""

from __future__ import annotations

from hermes_hooks.compat import (
    dashboard_auth_base as base,
    dashboard_auth_registry as registry,
    dashboard_auth_token_auth as token_auth,
)
from hermes_hooks.compat.dashboard_auth_base import (
    DashboardAuthProvider,
    InvalidCodeError,
    InvalidCredentialsError,
    LoginStart,
    ProviderError,
    RefreshExpiredError,
    Session,
    TokenPrincipal,
    assert_protocol_compliance,
    classify_jwks_lookup_error,
)
from hermes_hooks.compat.dashboard_auth_registry import (
    clear_providers,
    get_provider,
    list_providers,
    list_session_providers,
    list_token_providers,
    register_provider,
)

# ``from hermes_cli.dashboard_auth import token_auth`` (Hermes' drain plugin test) looks the
# submodule up on this module under its real name: its children are attributes, as in a package.
_SUBMODULES = (base, registry, token_auth)

__path__: list[str] = []  # a package to the import system: the finder serves its children
__hermes_compat__ = True  # the finder serves this package's children (base, registry, token_auth)

__all__ = [
    "DashboardAuthProvider",
    "InvalidCodeError",
    "InvalidCredentialsError",
    "LoginStart",
    "ProviderError",
    "RefreshExpiredError",
    "Session",
    "TokenPrincipal",
    "assert_protocol_compliance",
    "classify_jwks_lookup_error",
    "clear_providers",
    "get_provider",
    "list_providers",
    "list_session_providers",
    "list_token_providers",
    "register_provider",
]

"""Dashboard auth: the provider contract, its family and the token routes.

A provider written for Hermes loads unchanged (``hermes_cli.dashboard_auth`` is served by the
compatibility layer) and registers with ``ctx.register_dashboard_auth_provider(provider)``.
The dashboard (``hermes dashboard``) asks them to log people in when it listens beyond
loopback. See ``docs/how-to/dashboard.md``.
"""

from __future__ import annotations

from hermes_hooks.backends.dashboard_auth.provider import (
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
from hermes_hooks.backends.dashboard_auth.registry import DASHBOARD_AUTH

__all__ = [
    "DASHBOARD_AUTH",
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
]

"""Hermes' ``hermes_cli.dashboard_auth.base``: the provider ABC, its types and exceptions."""

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
]

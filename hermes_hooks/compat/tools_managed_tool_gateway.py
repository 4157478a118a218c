"""Hermes' ``tools.managed_tool_gateway``: the Nous Tool Gateway's address and token.

The addresses and tokens are read as Hermes reads them (``<VENDOR>_GATEWAY_URL``,
``TOOL_GATEWAY_DOMAIN``, ``TOOL_GATEWAY_SCHEME``, ``TOOL_GATEWAY_USER_TOKEN``, the stored Nous
login), but :func:`resolve_managed_tool_gateway` answers ``None`` unless
``managed_nous_tools_enabled()`` says the user is entitled, which it never does here (see
``tools.tool_backend_helpers``): plugins fall back to their direct API keys.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import attrs

from hermes_hooks.compat import hermes_cli_auth, tools_tool_backend_helpers
from hermes_hooks.compat.current import current_home

__all__ = [
    "ManagedToolGatewayConfig",
    "auth_json_path",
    "build_vendor_gateway_url",
    "get_tool_gateway_scheme",
    "is_managed_tool_gateway_ready",
    "peek_nous_access_token",
    "read_nous_access_token",
    "resolve_managed_tool_gateway",
]

_DEFAULT_DOMAIN: Final = "nousresearch.com"
_REFRESH_SKEW_SECONDS: Final = 120

TokenReader = Callable[[], str | None]


@attrs.frozen
class ManagedToolGatewayConfig:
    """Where a vendor's managed gateway is, and the token to send it."""

    vendor: str
    gateway_origin: str
    nous_user_token: str = attrs.field(repr=False)
    managed_mode: bool


def auth_json_path() -> Path:
    """Return the current home's ``auth.json``."""
    return current_home() / "auth.json"


def peek_nous_access_token() -> str | None:
    """Return ``$TOOL_GATEWAY_USER_TOKEN``, else the stored Nous token (expiry not checked)."""
    explicit = os.environ.get("TOOL_GATEWAY_USER_TOKEN", "").strip()
    if explicit:
        return explicit
    token = (hermes_cli_auth.get_provider_auth_state("nous") or {}).get("access_token")
    return token.strip() if isinstance(token, str) and token.strip() else None


def read_nous_access_token() -> str | None:
    """Return a Nous token that is not about to expire (never refreshed here), or ``None``."""
    explicit = os.environ.get("TOOL_GATEWAY_USER_TOKEN", "").strip()
    if explicit:
        return explicit
    state = hermes_cli_auth.get_provider_auth_state("nous") or {}
    token = peek_nous_access_token()
    expires = state.get("expires_at")
    if token and isinstance(expires, str):
        try:
            at = datetime.fromisoformat(expires.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
        if (at - datetime.now(UTC)).total_seconds() > _REFRESH_SKEW_SECONDS:
            return token
    return None


def get_tool_gateway_scheme() -> str:
    """Return ``$TOOL_GATEWAY_SCHEME`` (``https`` by default).

    :raises ValueError: it is neither ``http`` nor ``https``.
    """
    scheme = os.environ.get("TOOL_GATEWAY_SCHEME", "").strip().lower()
    if not scheme:
        return "https"
    if scheme in {"http", "https"}:
        return scheme
    raise ValueError("TOOL_GATEWAY_SCHEME must be 'http' or 'https'")


def build_vendor_gateway_url(vendor: str) -> str:
    """Return ``$<VENDOR>_GATEWAY_URL``, else ``<scheme>://<vendor>-gateway.<domain>``."""
    explicit = os.environ.get(f"{vendor.upper().replace('-', '_')}_GATEWAY_URL", "").strip()
    if explicit:
        return explicit.rstrip("/")
    domain = os.environ.get("TOOL_GATEWAY_DOMAIN", "").strip().strip("/") or _DEFAULT_DOMAIN
    return f"{get_tool_gateway_scheme()}://{vendor}-gateway.{domain}"


def resolve_managed_tool_gateway(
    vendor: str,
    gateway_builder: Callable[[str], str] | None = None,
    token_reader: TokenReader | None = None,
) -> ManagedToolGatewayConfig | None:
    """Return the vendor's managed gateway, or ``None`` when the user is not entitled (always,
    here) or no address or token is known."""
    if not tools_tool_backend_helpers.managed_nous_tools_enabled():
        return None
    origin = (gateway_builder or build_vendor_gateway_url)(vendor)
    token = (token_reader or read_nous_access_token)()
    if not origin or not token:
        return None
    return ManagedToolGatewayConfig(
        vendor=vendor, gateway_origin=origin, nous_user_token=token, managed_mode=True
    )


def is_managed_tool_gateway_ready(
    vendor: str,
    gateway_builder: Callable[[str], str] | None = None,
    token_reader: TokenReader | None = None,
) -> bool:
    """Return whether :func:`resolve_managed_tool_gateway` would answer (token only peeked)."""
    found = resolve_managed_tool_gateway(
        vendor, gateway_builder=gateway_builder, token_reader=token_reader or peek_nous_access_token
    )
    return found is not None

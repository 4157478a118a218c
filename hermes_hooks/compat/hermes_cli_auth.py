"""Hermes' ``hermes_cli.auth``, the part plugins read: the stored provider logins.

Hermes keeps them in ``<home>/auth.json`` (``{"providers": {NAME: {"access_token": ...}}}``);
this reads that file of the current home and never refreshes a token or reaches the network.
Logging in is Hermes' own (``hermes login``, ``hermes auth spotify``) and is not served, so
a token that has expired is an :class:`AuthError` asking for a new login.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any, Final

from hermes_hooks.compat import hermes_cli_config
from hermes_hooks.compat.current import current_home

__all__ = [
    "DEFAULT_SPOTIFY_API_BASE_URL",
    "DEFAULT_SPOTIFY_REDIRECT_URI",
    "AuthError",
    "get_active_provider",
    "get_auth_status",
    "get_provider_auth_state",
    "get_spotify_auth_status",
    "read_auth_store",
    "resolve_nous_access_token",
    "resolve_spotify_runtime_credentials",
]

DEFAULT_SPOTIFY_API_BASE_URL: Final = "https://api.spotify.com/v1"
DEFAULT_SPOTIFY_REDIRECT_URI: Final = "http://127.0.0.1:43827/spotify/callback"
SPOTIFY_ACCESS_TOKEN_REFRESH_SKEW_SECONDS: Final = 120


class AuthError(RuntimeError):
    """No usable login for a provider.

    :param provider: the provider (``spotify``, ``nous``...).
    :param code: what went wrong, for programs (``spotify_auth_missing``...).
    :param relogin_required: only a new login can mend it.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        code: str | None = None,
        relogin_required: bool = False,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.code = code
        self.relogin_required = relogin_required


def read_auth_store() -> dict[str, Any]:
    """Return the current home's ``auth.json`` (empty when it is missing or unreadable)."""
    try:
        data = json.loads((current_home() / "auth.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def get_provider_auth_state(provider_id: str) -> dict[str, Any] | None:
    """Return the stored login state of ``provider_id`` (``nous``...), or ``None``."""
    providers = read_auth_store().get("providers")
    state = providers.get(provider_id) if isinstance(providers, dict) else None
    return dict(state) if isinstance(state, dict) else None


def resolve_nous_access_token(
    *,
    timeout_seconds: float = 15.0,
    insecure: bool | None = None,
    ca_bundle: str | None = None,
    refresh_skew_seconds: int = 120,
) -> str:
    """Return the stored Nous Portal access token (never refreshed here).

    :param timeout_seconds, insecure, ca_bundle: accepted as Hermes takes them (no request
        is made).
    :raises AuthError: there is none, or its ``expires_at`` falls within
        ``refresh_skew_seconds`` (Hermes would refresh it; that is a new login here).
    """
    state = get_provider_auth_state("nous") or {}
    token = state.get("access_token")
    if not isinstance(token, str) or not token:
        raise AuthError(
            "no Nous Portal login in auth.json (run 'hermes login' in Hermes)",
            provider="nous",
            code="nous_auth_missing",
            relogin_required=True,
        )
    if state.get("expires_at") is not None and _is_expiring(
        state.get("expires_at"), refresh_skew_seconds
    ):
        raise AuthError(
            "the Nous Portal access token has expired, and hermes-hooks does not refresh "
            "tokens; run 'hermes login' in Hermes",
            provider="nous",
            code="nous_refresh_unavailable",
            relogin_required=True,
        )
    return token


def get_active_provider() -> str | None:
    """Return ``auth.json``'s ``active_provider``, or ``None``."""
    active = read_auth_store().get("active_provider")
    return active if isinstance(active, str) and active else None


def _expires(value: object) -> float | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def _is_expiring(expires_at: object, skew_seconds: float) -> bool:
    """Whether a token expiring at ``expires_at`` (ISO 8601) is gone within ``skew_seconds``.

    A missing or unreadable time counts as expiring, as in Hermes.
    """
    at = _expires(expires_at)
    return at is None or at <= time.time() + skew_seconds


def _first(*candidates: object, default: str = "", url: bool = False) -> str:
    for candidate in candidates:
        text = str(candidate or "").strip()
        text = text.rstrip("/") if url else text
        if text:
            return text
    return default


def get_spotify_auth_status() -> dict[str, Any]:
    """Return the Spotify login's status: ``logged_in`` and what is stored of it."""
    state = get_provider_auth_state("spotify")
    if not state:
        return {"logged_in": False}
    refresh_token = str(state.get("refresh_token") or "").strip()
    expires_at = state.get("expires_at")
    return {
        "logged_in": bool(refresh_token or not _is_expiring(expires_at, 0)),
        "auth_type": state.get("auth_type", "oauth_pkce"),
        "client_id": state.get("client_id"),
        "redirect_uri": state.get("redirect_uri"),
        "scope": state.get("granted_scope") or state.get("scope"),
        "expires_at": expires_at,
        "api_base_url": state.get("api_base_url"),
        "has_refresh_token": bool(refresh_token),
    }


def get_auth_status(provider_id: str | None = None) -> dict[str, Any]:
    """Return a provider's login status (the active provider's by default).

    Spotify's has Hermes' fields; any other provider stored in ``auth.json`` is logged in
    while its access token has not expired (or it holds a refresh token); a provider with no
    stored login gives ``{"logged_in": False}``.
    """
    target = (provider_id or get_active_provider() or "").strip().lower()
    if not target:
        return {"logged_in": False}
    if target == "spotify":
        return get_spotify_auth_status()
    state = get_provider_auth_state(target)
    if not state:
        return {"logged_in": False}
    nested = state.get("tokens")
    tokens: dict[str, Any] = nested if isinstance(nested, dict) else state
    token = str(tokens.get("access_token") or "").strip()
    refresh = str(tokens.get("refresh_token") or "").strip()
    expires_at = tokens.get("expires_at")
    fresh = bool(token) and (expires_at is None or not _is_expiring(expires_at, 0))
    return {"logged_in": fresh or bool(refresh), "provider": target, "expires_at": expires_at}


def resolve_spotify_runtime_credentials(
    *,
    force_refresh: bool = False,
    refresh_if_expiring: bool = True,
    refresh_skew_seconds: int = SPOTIFY_ACCESS_TOKEN_REFRESH_SKEW_SECONDS,
) -> dict[str, Any]:
    """Return the stored Spotify login as the Spotify client uses it.

    ``access_token`` (also as ``api_key``), ``token_type``, ``base_url`` (``$HERMES_SPOTIFY_API_
    BASE_URL``, the stored one, else Spotify's), ``scope``, ``client_id``, ``redirect_uri``,
    ``expires_at`` and ``refresh_token``.

    :raises AuthError: no Spotify login, no access token, or a token that must be refreshed
        (asked by ``force_refresh``, or expiring within ``refresh_skew_seconds``): refreshing
        is Hermes' own and is not served here.
    """
    state = get_provider_auth_state("spotify")
    if not state:
        raise AuthError(
            "Spotify is not authenticated. Run `hermes auth spotify` first.",
            provider="spotify",
            code="spotify_auth_missing",
            relogin_required=True,
        )
    expiring = refresh_if_expiring and _is_expiring(state.get("expires_at"), refresh_skew_seconds)
    if force_refresh or expiring:
        raise AuthError(
            "The Spotify access token needs refreshing, which hermes-hooks does not do; run "
            "`hermes auth spotify` in Hermes to log in again.",
            provider="spotify",
            code="spotify_refresh_unavailable",
            relogin_required=True,
        )
    token = str(state.get("access_token") or "").strip()
    if not token:
        raise AuthError(
            "Spotify access token missing. Run `hermes auth spotify` again.",
            provider="spotify",
            code="spotify_access_token_missing",
            relogin_required=True,
        )
    env = hermes_cli_config.get_env_value
    return {
        "provider": "spotify",
        "access_token": token,
        "api_key": token,
        "token_type": str(state.get("token_type") or "Bearer"),
        "base_url": _first(
            env("HERMES_SPOTIFY_API_BASE_URL"),
            state.get("api_base_url"),
            default=DEFAULT_SPOTIFY_API_BASE_URL,
            url=True,
        ),
        "scope": str(state.get("granted_scope") or state.get("scope") or "").strip(),
        "client_id": _first(
            env("HERMES_SPOTIFY_CLIENT_ID"), env("SPOTIFY_CLIENT_ID"), state.get("client_id")
        ),
        "redirect_uri": _first(
            env("HERMES_SPOTIFY_REDIRECT_URI"),
            env("SPOTIFY_REDIRECT_URI"),
            state.get("redirect_uri"),
            default=DEFAULT_SPOTIFY_REDIRECT_URI,
        ),
        "expires_at": state.get("expires_at"),
        "refresh_token": str(state.get("refresh_token") or "").strip(),
    }

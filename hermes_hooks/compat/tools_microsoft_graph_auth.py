"""Hermes' ``tools.microsoft_graph_auth``: app-only (client credentials) Microsoft Graph tokens.

The credentials come from ``MSGRAPH_TENANT_ID``, ``MSGRAPH_CLIENT_ID`` and
``MSGRAPH_CLIENT_SECRET`` (``MSGRAPH_SCOPE`` and ``MSGRAPH_AUTHORITY_URL`` optional); a token is
fetched from ``<authority>/<tenant>/oauth2/v2.0/token`` with httpx, cached, and fetched again
``skew_seconds`` (120) before it expires.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = [
    "DEFAULT_GRAPH_AUTHORITY_URL",
    "DEFAULT_GRAPH_SCOPE",
    "DEFAULT_TOKEN_SKEW_SECONDS",
    "CachedAccessToken",
    "GraphCredentials",
    "MicrosoftGraphAuthError",
    "MicrosoftGraphConfigError",
    "MicrosoftGraphTokenError",
    "MicrosoftGraphTokenProvider",
]

DEFAULT_GRAPH_SCOPE = "https://graph.microsoft.com/.default"
DEFAULT_GRAPH_AUTHORITY_URL = "https://login.microsoftonline.com"
DEFAULT_TOKEN_SKEW_SECONDS = 120


class MicrosoftGraphAuthError(RuntimeError):
    """A Microsoft Graph authentication failure."""


class MicrosoftGraphConfigError(MicrosoftGraphAuthError):
    """The Graph credentials are missing or invalid."""


class MicrosoftGraphTokenError(MicrosoftGraphAuthError):
    """No token could be had."""


@dataclass(frozen=True)
class GraphCredentials:
    """App-only Graph credentials."""

    tenant_id: str
    client_id: str
    client_secret: str
    scope: str = DEFAULT_GRAPH_SCOPE
    authority_url: str = DEFAULT_GRAPH_AUTHORITY_URL

    @property
    def token_url(self) -> str:
        """``<authority>/<tenant>/oauth2/v2.0/token``."""
        tenant = self.tenant_id.strip().strip("/")
        return f"{self.authority_url.rstrip('/')}/{tenant}/oauth2/v2.0/token"

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, required: bool = True
    ) -> GraphCredentials | None:
        """The credentials of the ``MSGRAPH_*`` variables; ``None`` when some are missing and
        not ``required``.

        :raises MicrosoftGraphConfigError: a required variable is missing.
        """
        env = environ if environ is not None else os.environ
        values = {
            name: (env.get(name) or "").strip()
            for name in ("MSGRAPH_TENANT_ID", "MSGRAPH_CLIENT_ID", "MSGRAPH_CLIENT_SECRET")
        }
        missing = [name for name, value in values.items() if not value]
        if missing:
            if not required:
                return None
            raise MicrosoftGraphConfigError(
                f"Missing Microsoft Graph configuration: {', '.join(missing)}"
            )
        return cls(
            tenant_id=values["MSGRAPH_TENANT_ID"],
            client_id=values["MSGRAPH_CLIENT_ID"],
            client_secret=values["MSGRAPH_CLIENT_SECRET"],
            scope=(env.get("MSGRAPH_SCOPE") or DEFAULT_GRAPH_SCOPE).strip(),
            authority_url=(env.get("MSGRAPH_AUTHORITY_URL") or DEFAULT_GRAPH_AUTHORITY_URL).strip(),
        )


@dataclass
class CachedAccessToken:
    """A token and when it expires (epoch seconds)."""

    access_token: str
    expires_at: float
    token_type: str = "Bearer"

    def is_expired(self, *, skew_seconds: int = DEFAULT_TOKEN_SKEW_SECONDS) -> bool:
        """Whether it expires within ``skew_seconds``."""
        return self.expires_at <= time.time() + max(0, int(skew_seconds))

    @property
    def expires_in_seconds(self) -> int:
        """Seconds left (0 when expired)."""
        return max(0, int(self.expires_at - time.time()))


def _error_detail(response: httpx.Response) -> str:
    try:
        payload = response.json()
    except ValueError:
        return response.text.strip() or "unknown error"
    if isinstance(payload, dict):
        if isinstance(payload.get("error_description"), str):
            return str(payload["error_description"])
        error = payload.get("error")
        if isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            if message:
                return f"{code}: {message}" if code else str(message)
        if isinstance(error, str):
            return error
    return response.text.strip() or "unknown error"


class MicrosoftGraphTokenProvider:
    """Fetches and caches app-only Graph tokens (one fetch at a time)."""

    def __init__(
        self,
        credentials: GraphCredentials,
        *,
        timeout: float = 20.0,
        skew_seconds: int = DEFAULT_TOKEN_SKEW_SECONDS,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.credentials = credentials
        self.timeout = timeout
        self.skew_seconds = max(0, int(skew_seconds))
        self._transport = transport
        self._cached_token: CachedAccessToken | None = None
        self._lock = asyncio.Lock()

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, **kwargs: Any
    ) -> MicrosoftGraphTokenProvider:
        """A provider on the ``MSGRAPH_*`` credentials.

        :raises MicrosoftGraphConfigError: a variable is missing.
        """
        credentials = GraphCredentials.from_env(environ)
        assert credentials is not None  # required=True raises instead
        return cls(credentials, **kwargs)

    def clear_cache(self) -> None:
        """Forget the cached token."""
        self._cached_token = None

    def inspect_token_health(self) -> dict[str, Any]:
        """The configuration and the cached token's state, for diagnostics (no secret)."""
        cached = self._cached_token
        return {
            "configured": True,
            "tenant_id": self.credentials.tenant_id,
            "client_id": self.credentials.client_id,
            "scope": self.credentials.scope,
            "authority_url": self.credentials.authority_url,
            "token_url": self.credentials.token_url,
            "cached": bool(cached),
            "expires_in_seconds": cached.expires_in_seconds if cached else None,
            "is_expired": cached.is_expired(skew_seconds=0) if cached else None,
            "refresh_skew_seconds": self.skew_seconds,
        }

    def _fresh(self, force_refresh: bool) -> str | None:
        cached = self._cached_token
        if force_refresh or cached is None or cached.is_expired(skew_seconds=self.skew_seconds):
            return None
        return cached.access_token

    async def get_access_token(self, *, force_refresh: bool = False) -> str:
        """A valid token, from the cache or fetched.

        :raises MicrosoftGraphTokenError: the token endpoint refused or answered oddly.
        """
        token = self._fresh(force_refresh)
        if token is not None:
            return token
        async with self._lock:
            token = self._fresh(force_refresh)
            if token is not None:
                return token
            cached = await self._fetch_access_token()
            self._cached_token = cached
            return cached.access_token

    async def _fetch_access_token(self) -> CachedAccessToken:
        form = {
            "grant_type": "client_credentials",
            "client_id": self.credentials.client_id,
            "client_secret": self.credentials.client_secret,
            "scope": self.credentials.scope,
        }
        async with httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout), transport=self._transport
        ) as client:
            response = await client.post(self.credentials.token_url, data=form)
        if response.status_code >= 400:
            raise MicrosoftGraphTokenError(
                f"Microsoft Graph token request failed with HTTP {response.status_code}: "
                f"{_error_detail(response)}"
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise MicrosoftGraphTokenError(
                "Microsoft Graph token response was not valid JSON."
            ) from exc
        access_token = str(payload.get("access_token") or "").strip()
        if not access_token:
            raise MicrosoftGraphTokenError(
                "Microsoft Graph token response did not include access_token."
            )
        try:
            expires_in = int(payload.get("expires_in"))
        except (TypeError, ValueError) as exc:
            raise MicrosoftGraphTokenError(
                "Microsoft Graph token response did not include a valid expires_in."
            ) from exc
        return CachedAccessToken(
            access_token=access_token,
            token_type=str(payload.get("token_type") or "Bearer").strip() or "Bearer",
            expires_at=time.time() + max(0, expires_in),
        )

"""Hermes' ``tools.microsoft_graph_auth``: app-only (client credentials) Microsoft Graph tokens.

Credentials come from ``MSGRAPH_TENANT_ID``, ``MSGRAPH_CLIENT_ID`` and ``MSGRAPH_CLIENT_SECRET``
(``MSGRAPH_SCOPE`` and ``MSGRAPH_AUTHORITY_URL`` optional), read from the environment as
Hermes reads them. A token is fetched from
``<authority>/<tenant>/oauth2/v2.0/token`` and cached until ``skew_seconds`` before it expires.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from typing import Any, Final

import attrs
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

DEFAULT_GRAPH_SCOPE: Final = "https://graph.microsoft.com/.default"
DEFAULT_GRAPH_AUTHORITY_URL: Final = "https://login.microsoftonline.com"
DEFAULT_TOKEN_SKEW_SECONDS: Final = 120


class MicrosoftGraphAuthError(RuntimeError):
    """A Microsoft Graph authentication failure."""


class MicrosoftGraphConfigError(MicrosoftGraphAuthError):
    """Graph credentials are missing or invalid."""


class MicrosoftGraphTokenError(MicrosoftGraphAuthError):
    """The token endpoint refused, or answered something that is not a token."""


@attrs.frozen
class GraphCredentials:
    """App-only Graph credentials."""

    tenant_id: str
    client_id: str
    client_secret: str = attrs.field(repr=False)
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
        """Read the ``MSGRAPH_*`` variables.

        :raises MicrosoftGraphConfigError: one of the three required ones is unset (``None``
            instead, with ``required=False``).
        """
        env = environ if environ is not None else os.environ
        tenant_id = (env.get("MSGRAPH_TENANT_ID") or "").strip()
        client_id = (env.get("MSGRAPH_CLIENT_ID") or "").strip()
        secret = (env.get("MSGRAPH_CLIENT_SECRET") or "").strip()
        found = {
            "MSGRAPH_TENANT_ID": tenant_id,
            "MSGRAPH_CLIENT_ID": client_id,
            "MSGRAPH_CLIENT_SECRET": secret,
        }
        missing = [name for name, value in found.items() if not value]
        if missing:
            if not required:
                return None
            raise MicrosoftGraphConfigError(
                f"Missing Microsoft Graph configuration: {', '.join(missing)}"
            )
        return cls(
            tenant_id=tenant_id,
            client_id=client_id,
            client_secret=secret,
            scope=(env.get("MSGRAPH_SCOPE") or DEFAULT_GRAPH_SCOPE).strip(),
            authority_url=(env.get("MSGRAPH_AUTHORITY_URL") or DEFAULT_GRAPH_AUTHORITY_URL).strip(),
        )


@attrs.define
class CachedAccessToken:
    """A Graph token and when it expires (epoch seconds)."""

    access_token: str = attrs.field(repr=False)
    expires_at: float
    token_type: str = "Bearer"

    def is_expired(self, *, skew_seconds: int = DEFAULT_TOKEN_SKEW_SECONDS) -> bool:
        """Whether it expires within ``skew_seconds``."""
        return self.expires_at <= time.time() + max(0, int(skew_seconds))

    @property
    def expires_in_seconds(self) -> int:
        """Seconds left, never below 0."""
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
            if code and message:
                return f"{code}: {message}"
            return str(message or code or payload)
        if isinstance(error, str):
            return error
    return str(payload)


class MicrosoftGraphTokenProvider:
    """Fetches and caches app-only Graph tokens (one fetch at a time).

    :param transport: an httpx transport for the token request (tests, proxies).
    """

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
        """Build one from the ``MSGRAPH_*`` variables (see :meth:`GraphCredentials.from_env`)."""
        credentials = GraphCredentials.from_env(environ)
        assert credentials is not None  # required=True raises instead
        return cls(credentials, **kwargs)

    def clear_cache(self) -> None:
        """Forget the cached token: the next call fetches one."""
        self._cached_token = None

    def inspect_token_health(self) -> dict[str, Any]:
        """Return what is configured and cached (never the secret or the token)."""
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

    def _fresh(self) -> str | None:
        cached = self._cached_token
        if cached is not None and not cached.is_expired(skew_seconds=self.skew_seconds):
            return cached.access_token
        return None

    async def get_access_token(self, *, force_refresh: bool = False) -> str:
        """Return a token, fetching one when none is cached, it expires soon, or when asked.

        :raises MicrosoftGraphTokenError: the token endpoint refused or answered badly.
        """
        token = None if force_refresh else self._fresh()
        if token is not None:
            return token
        async with self._lock:
            token = None if force_refresh else self._fresh()
            if token is None:
                self._cached_token = await self._fetch_access_token()
                token = self._cached_token.access_token
            return token

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
        token = str(payload.get("access_token") or "").strip() if isinstance(payload, dict) else ""
        if not token:
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
            access_token=token,
            token_type=str(payload.get("token_type") or "Bearer").strip() or "Bearer",
            expires_at=time.time() + max(0, expires_in),
        )

"""The dashboard's gate, as Hermes has it.

Three modes, chosen at start (:func:`choose_mode`):

- ``token``: listening on loopback. A per-process session token is printed at start in the
  dashboard's address (``/?token=...``); the page it opens trades it for an HttpOnly,
  SameSite=Strict cookie and drops it from the address. Scripts may send it as
  ``Authorization: Bearer``.
- ``gated``: listening beyond loopback with ``dashboard_auth`` providers registered. A person
  logs in on ``/login`` (a password form per ``supports_password`` provider, an OAuth round trip
  per other interactive one); the session lives in HttpOnly, SameSite=Lax cookies
  (``hermes_session_at``, ``hermes_session_rt``, ``hermes_session_provider``), is verified on
  each request and refreshed when it nears its expiry; ``/auth/logout`` revokes it.
- ``insecure``: beyond loopback with ``--insecure``: the token mode, on a public address.

Beyond loopback with no provider and no ``--insecure``, the dashboard refuses to start.
Every state-changing request (POST, PUT, PATCH, DELETE) must carry the ``X-Hermes-CSRF``
header equal to the ``hermes_csrf`` cookie (and a same-origin ``Origin`` when it sends one),
except on token routes, which authenticate by bearer token alone. No token or secret is put in
a page or a log line.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import secrets
import time
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, Literal

from hermes_hooks.backends.dashboard_auth.provider import (
    DashboardAuthProvider,
    ProviderError,
    RefreshExpiredError,
    Session,
)
from hermes_hooks.errors import HermesHooksError

__all__ = [
    "CSRF_COOKIE",
    "CSRF_HEADER",
    "DashboardAuthError",
    "Gate",
    "Mode",
    "choose_mode",
    "is_loopback",
]

logger = logging.getLogger(__name__)

Mode = Literal["token", "gated", "insecure"]

TOKEN_COOKIE = "hermes_dashboard_token"
SESSION_AT_COOKIE = "hermes_session_at"
SESSION_RT_COOKIE = "hermes_session_rt"
SESSION_PROVIDER_COOKIE = "hermes_session_provider"
PKCE_COOKIE = "hermes_session_pkce"
CSRF_COOKIE = "hermes_csrf"
CSRF_HEADER = "x-hermes-csrf"
REFRESH_MARGIN = 120
"""A session this many seconds from its expiry is refreshed on its next request."""
_RT_MAX_AGE = 30 * 24 * 3600
_PKCE_MAX_AGE = 600
PUBLIC_PATHS = frozenset(
    {
        "/api/status",
        "/login",
        "/auth/password-login",
        "/auth/login",
        "/auth/callback",
        "/auth/providers",
        "/favicon.ico",
    }
)
PUBLIC_PREFIXES = ("/static/",)
_UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class DashboardAuthError(HermesHooksError):
    """The dashboard cannot start as asked (beyond loopback without a provider)."""


def is_loopback(host: str) -> bool:
    """Tell whether ``host`` is a loopback address (``localhost`` counts; no DNS is asked)."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def choose_mode(
    host: str,
    insecure: bool,
    providers: list[DashboardAuthProvider],
    *,
    login: bool = False,
    skip_reasons: Sequence[str] = (),
) -> Mode:
    """Return the gate's mode for listening on ``host``.

    :param login: ask for a login even on loopback.
    :param skip_reasons: why loaded dashboard-auth plugins registered no provider (their
        ``LAST_SKIP_REASON``, as Hermes' refusal shows them), each ``"plugin: reason"``.
    :raises DashboardAuthError: beyond loopback (or with ``login``) with no provider and no
        ``--insecure``.
    """
    if is_loopback(host) and not login:
        return "token"
    if insecure:
        return "insecure"
    if not any(getattr(p, "supports_session", True) for p in providers):
        where = "with --login" if is_loopback(host) else "(beyond loopback)"
        raise DashboardAuthError(
            f"refusing to listen on {host!r} {where} without dashboard auth: no "
            "dashboard_auth provider is registered ('hermes dashboard-auth list' shows them; "
            "enable one, e.g. set dashboard.basic_auth), or pass --insecure to serve anyone "
            "who has the session token" + "".join(f"\n  - {reason}" for reason in skip_reasons)
        )
    return "gated"


def _same(given: str | None, expected: str | None) -> bool:
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


class Gate:
    """The auth state of one dashboard: its mode, its token and its providers."""

    def __init__(
        self,
        mode: Mode,
        providers: Callable[[], list[DashboardAuthProvider]],
        *,
        token: str | None = None,
    ) -> None:
        self.mode: Mode = mode
        self.token = token or secrets.token_urlsafe(32)
        self._providers = providers

    # -- providers -------------------------------------------------------------------------

    def providers(self) -> list[DashboardAuthProvider]:
        """The registered providers, now."""
        return self._providers()

    def session_providers(self) -> list[DashboardAuthProvider]:
        """The providers a person can log in with."""
        return [p for p in self.providers() if getattr(p, "supports_session", True)]

    def provider(self, name: str | None) -> DashboardAuthProvider | None:
        """The interactive provider called ``name``."""
        return next((p for p in self.session_providers() if p.name == name), None)

    # -- the checks ------------------------------------------------------------------------

    def token_ok(self, request: Any) -> bool:
        """Tell whether the request carries the session token (cookie or bearer)."""
        if _same(request.cookies.get(TOKEN_COOKIE), self.token):
            return True
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and _same(value.strip(), self.token)

    def csrf_ok(self, request: Any) -> bool:
        """Tell whether a state-changing request carries the CSRF header of its cookie and,
        when it says where it comes from, comes from this origin."""
        origin = request.headers.get("origin")
        if origin and origin != "null":
            host = request.headers.get("host", "")
            if urllib.parse.urlsplit(origin).netloc != host:
                return False
        elif origin == "null":
            return False
        return _same(request.headers.get(CSRF_HEADER), request.cookies.get(CSRF_COOKIE))

    def verify(self, request: Any) -> tuple[Session | None, Session | None]:
        """Verify a gated request's session; return ``(session, refreshed)``.

        ``refreshed`` is a new session when the old one was expired or near its expiry and
        its refresh token was accepted (its cookies must be set on the answer).

        :raises ProviderError: the provider is unreachable (the answer is 503).
        """
        access = request.cookies.get(SESSION_AT_COOKIE)
        refresh = request.cookies.get(SESSION_RT_COOKIE)
        hint = request.cookies.get(SESSION_PROVIDER_COOKIE)
        candidates = self.session_providers()
        if hint:
            candidates.sort(key=lambda p: p.name != hint)
        session: Session | None = None
        owner: DashboardAuthProvider | None = None
        if access:
            for provider in candidates:
                try:
                    session = provider.verify_session(access_token=access)
                except ProviderError:
                    raise
                except Exception as exc:  # a broken provider is not a login
                    logger.warning(
                        "dashboard-auth: provider %r failed to verify: %s",
                        provider.name,
                        type(exc).__name__,
                    )
                    session = None
                if session is not None:
                    owner = provider
                    break
        near = session is not None and session.expires_at - time.time() < REFRESH_MARGIN
        if refresh and (session is None or near):
            for provider in [owner] if owner is not None else candidates:
                try:
                    renewed = provider.refresh_session(refresh_token=refresh)
                except RefreshExpiredError:
                    continue
                except ProviderError:
                    if session is not None:
                        return session, None  # still valid: keep it
                    raise
                except Exception as exc:
                    logger.warning(
                        "dashboard-auth: provider %r failed to refresh: %s",
                        provider.name,
                        type(exc).__name__,
                    )
                    continue
                return renewed, renewed
        return session, None

    # -- cookies ---------------------------------------------------------------------------

    @staticmethod
    def set_session_cookies(response: Any, session: Session, *, secure: bool) -> None:
        """Set the session's cookies (HttpOnly, SameSite=Lax) on ``response``."""
        common: dict[str, Any] = {
            "httponly": True,
            "samesite": "lax",
            "path": "/",
            "secure": secure,
        }
        max_age = max(60, int(session.expires_at - time.time()))
        response.set_cookie(SESSION_AT_COOKIE, session.access_token, max_age=max_age, **common)
        if session.refresh_token:
            response.set_cookie(
                SESSION_RT_COOKIE, session.refresh_token, max_age=_RT_MAX_AGE, **common
            )
        response.set_cookie(
            SESSION_PROVIDER_COOKIE, session.provider, max_age=_RT_MAX_AGE, **common
        )

    @staticmethod
    def clear_session_cookies(response: Any) -> None:
        """Delete the session's cookies."""
        for name in (SESSION_AT_COOKIE, SESSION_RT_COOKIE, SESSION_PROVIDER_COOKIE, PKCE_COOKIE):
            response.delete_cookie(name, path="/", httponly=True, samesite="lax")

    @staticmethod
    def ensure_csrf_cookie(request: Any, response: Any, *, secure: bool) -> None:
        """Give the browser a CSRF cookie when it has none (readable by the page's script:
        it proves the request comes from this origin, it grants nothing by itself)."""
        if not request.cookies.get(CSRF_COOKIE):
            response.set_cookie(
                CSRF_COOKIE,
                secrets.token_urlsafe(24),
                path="/",
                samesite="strict",
                secure=secure,
                httponly=False,
            )


def is_public(path: str) -> bool:
    """Tell whether ``path`` is served without a session (the login page, its assets)."""
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


def _next_of(value: object) -> str:
    text = str(value or "/")
    return text if text.startswith("/") and not text.startswith("//") else "/"


async def _form_or_json(request: Any) -> dict[str, Any]:
    kind = request.headers.get("content-type", "")
    try:
        if kind.startswith("application/json"):
            body = await request.json()
            return body if isinstance(body, dict) else {}
        form = await request.form()
        return {k: v for k, v in form.items() if isinstance(v, str)}
    except Exception:
        return {}

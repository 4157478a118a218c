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
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from hermes_hooks.backends.dashboard_auth.provider import (
    DashboardAuthProvider,
    InvalidCodeError,
    InvalidCredentialsError,
    ProviderError,
    RefreshExpiredError,
    Session,
)
from hermes_hooks.backends.dashboard_auth.registry import authenticate_token, token_route_for
from hermes_hooks.errors import HermesHooksError

if TYPE_CHECKING:
    from fastapi import FastAPI

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
PUBLIC_PATHS = frozenset({"/api/status", "/login", "/auth/password-login", "/auth/login",
                          "/auth/callback", "/auth/providers", "/favicon.ico"})
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
    host: str, insecure: bool, providers: list[DashboardAuthProvider], *, login: bool = False
) -> Mode:
    """Return the gate's mode for listening on ``host``.

    :param login: ask for a login even on loopback.
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
            "who has the session token"
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
                    logger.warning("dashboard-auth: provider %r failed to verify: %s",
                                   provider.name, type(exc).__name__)
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
                    logger.warning("dashboard-auth: provider %r failed to refresh: %s",
                                   provider.name, type(exc).__name__)
                    continue
                return renewed, renewed
        return session, None

    # -- cookies ---------------------------------------------------------------------------

    @staticmethod
    def set_session_cookies(response: Any, session: Session, *, secure: bool) -> None:
        """Set the session's cookies (HttpOnly, SameSite=Lax) on ``response``."""
        common: dict[str, Any] = {"httponly": True, "samesite": "lax", "path": "/",
                                  "secure": secure}
        max_age = max(60, int(session.expires_at - time.time()))
        response.set_cookie(SESSION_AT_COOKIE, session.access_token, max_age=max_age, **common)
        if session.refresh_token:
            response.set_cookie(SESSION_RT_COOKIE, session.refresh_token, max_age=_RT_MAX_AGE,
                                **common)
        response.set_cookie(SESSION_PROVIDER_COOKIE, session.provider, max_age=_RT_MAX_AGE,
                            **common)

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
            response.set_cookie(CSRF_COOKIE, secrets.token_urlsafe(24), path="/",
                                samesite="strict", secure=secure, httponly=False)


def is_public(path: str) -> bool:
    """Tell whether ``path`` is served without a session (the login page, its assets)."""
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


def install(app: FastAPI, gate: Gate) -> None:
    """Install the gate's middleware and its login routes on FastAPI ``app``."""
    from fastapi import Request
    from fastapi.responses import JSONResponse, RedirectResponse, Response

    def secure_of(request: Request) -> bool:
        return request.url.scheme == "https"

    def refused(request: Request, status: int, detail: str) -> Response:
        if request.url.path.startswith("/api/") or request.method != "GET":
            return JSONResponse({"error": "unauthenticated" if status == 401 else "refused",
                                 "detail": detail}, status_code=status)
        if gate.mode == "gated" and status == 401:
            target = urllib.parse.quote(request.url.path, safe="/")
            return RedirectResponse(f"/login?next={target}", status_code=303)
        from hermes_hooks.dashboard.pages import message_page

        page: Response = message_page(status, detail)
        return page

    @app.middleware("http")
    async def gate_middleware(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        path = request.url.path
        rule = token_route_for(path, request.method)
        if rule is not None:
            return await _token_route(request, call_next, rule)
        unsafe = request.method in _UNSAFE
        if unsafe and not gate.csrf_ok(request):
            return JSONResponse({"error": "csrf", "detail": "missing or wrong CSRF token "
                                 f"(send the {CSRF_COOKIE} cookie's value as X-Hermes-CSRF)"},
                                status_code=403)
        refreshed: Session | None = None
        if is_public(path):
            response = await call_next(request)
        elif gate.mode in ("token", "insecure"):
            given = request.query_params.get("token")
            if given is not None and request.method == "GET" and not path.startswith("/api/"):
                if not _same(given, gate.token):
                    return refused(request, 401, "that session token is wrong; open the "
                                   "address 'hermes dashboard' printed")
                query = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = path + ("?" + urllib.parse.urlencode(query) if query else "")
                response = RedirectResponse(target, status_code=303)
                response.set_cookie(TOKEN_COOKIE, gate.token, httponly=True, samesite="strict",
                                    path="/", secure=secure_of(request))
                gate.ensure_csrf_cookie(request, response, secure=secure_of(request))
                return response
            if not gate.token_ok(request):
                return refused(request, 401, "this dashboard needs its session token: open "
                               "the address 'hermes dashboard' printed at start")
            response = await call_next(request)
        else:
            try:
                session, refreshed = gate.verify(request)
            except ProviderError as exc:
                logger.warning("dashboard-auth: provider unreachable: %s", exc)
                return JSONResponse({"error": "provider_unreachable",
                                     "detail": "the auth provider is unreachable"},
                                    status_code=503)
            if session is None:
                response = refused(request, 401, "log in first")
                if request.cookies.get(SESSION_AT_COOKIE) or request.cookies.get(
                    SESSION_RT_COOKIE
                ):
                    gate.clear_session_cookies(response)
                return response
            request.state.session = session
            response = await call_next(request)
        if refreshed is not None:
            gate.set_session_cookies(response, refreshed, secure=secure_of(request))
        if request.method == "GET":
            gate.ensure_csrf_cookie(request, response, secure=secure_of(request))
        return response

    async def _token_route(
        request: Request, call_next: Callable[[Request], Awaitable[Response]], rule: Any
    ) -> Response:
        peer = request.client.host if request.client else ""
        if rule.loopback_only and not is_loopback(peer):
            return JSONResponse({"error": "forbidden", "detail": "loopback only"},
                                status_code=403)
        fallback = rule.allow_session_fallback and not request.headers.get("authorization")
        if fallback and gate.mode != "gated" and gate.token_ok(request):
            return await call_next(request)
        principal, unreachable = authenticate_token(
            request, required_scope=rule.required_scope, providers=gate.providers()
        )
        if principal is not None:
            if rule.required_scope is not None and rule.required_scope not in principal.scopes:
                return JSONResponse({"error": "forbidden", "detail": "Forbidden"},
                                    status_code=403)
            request.state.token_principal = principal
            request.state.token_authenticated = True
            return await call_next(request)
        if unreachable:
            return JSONResponse({"detail": f"Auth provider {unreachable!r} unreachable"},
                                status_code=503)
        return JSONResponse({"error": "unauthenticated", "detail": "Unauthorized"},
                            status_code=401)

    # -- the login routes (Hermes' /auth/*) --------------------------------------------------

    @app.get("/auth/providers")
    async def auth_providers() -> dict[str, Any]:
        return {
            "mode": gate.mode,
            "providers": [
                {"name": p.name, "display_name": p.display_name,
                 "password": bool(getattr(p, "supports_password", False))}
                for p in gate.session_providers()
            ],
        }

    @app.post("/auth/password-login")
    async def password_login(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        body = await _form_or_json(request)
        provider = gate.provider(str(body.get("provider", "")))
        if provider is None or not getattr(provider, "supports_password", False):
            return JSONResponse({"error": "unknown_provider",
                                 "detail": "no password provider of that name"}, 400)
        username, password = str(body.get("username", "")), str(body.get("password", ""))
        if not username or not password:
            return JSONResponse({"error": "missing", "detail": "username and password are "
                                 "required"}, 400)
        try:
            session = await run_in_threadpool(
                lambda: provider.complete_password_login(username=username, password=password)
            )
        except InvalidCredentialsError:
            logger.info("dashboard-auth: a password login through %r was refused", provider.name)
            return JSONResponse({"error": "invalid_credentials",
                                 "detail": "invalid username or password"}, 401)
        except ProviderError:
            return JSONResponse({"error": "provider_unreachable",
                                 "detail": "the auth provider is unreachable"}, 503)
        response = JSONResponse({"ok": True, "user": session.display_name or session.user_id,
                                 "next": _next_of(body.get("next"))})
        gate.set_session_cookies(response, session, secure=secure_of(request))
        logger.info("dashboard-auth: %r logged in through %r", session.user_id, provider.name)
        return response

    @app.get("/auth/login")
    async def oauth_login(request: Request, provider: str = "") -> Response:
        from starlette.concurrency import run_in_threadpool

        chosen = gate.provider(provider)
        if chosen is None or getattr(chosen, "supports_password", False):
            return JSONResponse({"error": "unknown_provider",
                                 "detail": "no OAuth provider of that name"}, 400)
        redirect_uri = str(request.url_for("oauth_callback"))
        try:
            start = await run_in_threadpool(lambda: chosen.start_login(redirect_uri=redirect_uri))
        except ProviderError:
            return JSONResponse({"error": "provider_unreachable",
                                 "detail": "the auth provider is unreachable"}, 503)
        response = RedirectResponse(start.redirect_url, status_code=302)
        for name, value in start.cookie_payload.items():
            payload = f"provider={chosen.name};{value}" if name == PKCE_COOKIE else value
            response.set_cookie(name, payload, max_age=_PKCE_MAX_AGE, httponly=True,
                                samesite="lax", path="/", secure=secure_of(request))
        return response

    @app.get("/auth/callback", name="oauth_callback")
    async def oauth_callback(request: Request, code: str = "", state: str = "") -> Response:
        from starlette.concurrency import run_in_threadpool

        raw = request.cookies.get(PKCE_COOKIE, "")
        fields = dict(seg.split("=", 1) for seg in raw.split(";") if "=" in seg)
        chosen = gate.provider(fields.get("provider"))
        if chosen is None or not code or not _same(state, fields.get("state")):
            return JSONResponse({"error": "invalid_state",
                                 "detail": "missing or mismatched login state; log in again"},
                                400)
        redirect_uri = str(request.url_for("oauth_callback"))
        try:
            session = await run_in_threadpool(lambda: chosen.complete_login(
                code=code, state=state, code_verifier=fields.get("verifier", ""),
                redirect_uri=redirect_uri))
        except InvalidCodeError:
            return JSONResponse({"error": "invalid_code", "detail": "the login was refused"},
                                400)
        except ProviderError:
            return JSONResponse({"error": "provider_unreachable",
                                 "detail": "the auth provider is unreachable"}, 503)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(PKCE_COOKIE, path="/")
        gate.set_session_cookies(response, session, secure=secure_of(request))
        logger.info("dashboard-auth: %r logged in through %r", session.user_id, chosen.name)
        return response

    @app.post("/auth/logout")
    async def logout(request: Request) -> Response:
        refresh = request.cookies.get(SESSION_RT_COOKIE)
        provider = gate.provider(request.cookies.get(SESSION_PROVIDER_COOKIE))
        if refresh and provider is not None:
            try:
                provider.revoke_session(refresh_token=refresh)
            except Exception as exc:  # best effort, as the protocol says
                logger.warning("dashboard-auth: revoke failed: %s", type(exc).__name__)
        response = JSONResponse({"ok": True})
        gate.clear_session_cookies(response)
        response.delete_cookie(TOKEN_COOKIE, path="/")
        return response

    @app.get("/auth/me")
    async def me(request: Request) -> dict[str, Any]:
        session: Session | None = getattr(request.state, "session", None)
        if session is None:
            return {"mode": gate.mode, "user": None}
        return {"mode": gate.mode, "user": session.display_name or session.user_id,
                "email": session.email, "provider": session.provider,
                "expires_at": session.expires_at}


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

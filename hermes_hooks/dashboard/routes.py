"""The dashboard gate's middleware and Hermes' login routes (``/auth/*``), on FastAPI.

Imported by :mod:`hermes_hooks.dashboard.app` only: FastAPI is imported at its top so that
the routes' annotations resolve. The gate's logic is :class:`~.auth.Gate`.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from hermes_hooks.backends.dashboard_auth.provider import (
    InvalidCodeError,
    InvalidCredentialsError,
    ProviderError,
    Session,
)
from hermes_hooks.backends.dashboard_auth.registry import authenticate_token, token_route_for
from hermes_hooks.dashboard.auth import (
    _PKCE_MAX_AGE,
    _UNSAFE,
    CSRF_COOKIE,
    PKCE_COOKIE,
    SESSION_AT_COOKIE,
    SESSION_PROVIDER_COOKIE,
    SESSION_RT_COOKIE,
    TOKEN_COOKIE,
    Gate,
    _form_or_json,
    _next_of,
    _same,
    is_loopback,
    is_public,
)

__all__ = ["install", "install_drain"]

logger = logging.getLogger("hermes_hooks.dashboard.auth")


def install(app: FastAPI, gate: Gate) -> None:
    """Install the gate's middleware and its login routes on FastAPI ``app``."""
    _install_middleware(app, gate)
    _install_session_routes(app, gate)
    _install_oauth_routes(app, gate)


_CallNext = Callable[[Request], Awaitable[Response]]


def _secure_of(request: Request) -> bool:
    return request.url.scheme == "https"


def _refused(gate: Gate, request: Request, status: int, detail: str) -> Response:
    """The gate's refusal: JSON for the API and non-GETs, else the login page or a message."""
    if request.url.path.startswith("/api/") or request.method != "GET":
        return JSONResponse(
            {"error": "unauthenticated" if status == 401 else "refused", "detail": detail},
            status_code=status,
        )
    if gate.mode == "gated" and status == 401:
        target = urllib.parse.quote(request.url.path, safe="/")
        return RedirectResponse(f"/login?next={target}", status_code=303)
    from hermes_hooks.dashboard.pages import message_page

    page: Response = message_page(status, detail)
    return page


def _unreachable() -> JSONResponse:
    return JSONResponse(
        {"error": "provider_unreachable", "detail": "the auth provider is unreachable"}, 503
    )


def _install_middleware(app: FastAPI, gate: Gate) -> None:
    @app.middleware("http")
    async def gate_middleware(request: Request, call_next: _CallNext) -> Response:
        path = request.url.path
        rule = token_route_for(path, request.method)
        if rule is not None:
            return await _token_route(gate, request, call_next, rule)
        unsafe = request.method in _UNSAFE
        if unsafe and not gate.csrf_ok(request):
            return JSONResponse(
                {
                    "error": "csrf",
                    "detail": "missing or wrong CSRF token "
                    f"(send the {CSRF_COOKIE} cookie's value as X-Hermes-CSRF)",
                },
                status_code=403,
            )
        refreshed: Session | None = None
        if is_public(path):
            response = await call_next(request)
        elif gate.mode in ("token", "insecure"):
            given = request.query_params.get("token")
            if given is not None and request.method == "GET" and not path.startswith("/api/"):
                return _token_in_query(gate, request, given)
            if not gate.token_ok(request):
                return _refused(
                    gate,
                    request,
                    401,
                    "this dashboard needs its session token: open "
                    "the address 'hermes dashboard' printed at start",
                )
            response = await call_next(request)
        else:
            try:
                session, refreshed = gate.verify(request)
            except ProviderError as exc:
                logger.warning("dashboard-auth: provider unreachable: %s", exc)
                return JSONResponse(
                    {"error": "provider_unreachable", "detail": "the auth provider is unreachable"},
                    status_code=503,
                )
            if session is None:
                response = _refused(gate, request, 401, "log in first")
                if request.cookies.get(SESSION_AT_COOKIE) or request.cookies.get(SESSION_RT_COOKIE):
                    gate.clear_session_cookies(response)
                return response
            request.state.session = session
            response = await call_next(request)
        if refreshed is not None:
            gate.set_session_cookies(response, refreshed, secure=_secure_of(request))
        if request.method == "GET":
            gate.ensure_csrf_cookie(request, response, secure=_secure_of(request))
        return response


def _token_in_query(gate: Gate, request: Request, given: str) -> Response:
    """A GET carrying ``?token=``: set the token cookie and redirect to the address without it."""
    if not _same(given, gate.token):
        return _refused(
            gate,
            request,
            401,
            "that session token is wrong; open the address 'hermes dashboard' printed",
        )
    query = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
    target = request.url.path + ("?" + urllib.parse.urlencode(query) if query else "")
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        TOKEN_COOKIE,
        gate.token,
        httponly=True,
        samesite="strict",
        path="/",
        secure=_secure_of(request),
    )
    gate.ensure_csrf_cookie(request, response, secure=_secure_of(request))
    return response


async def _token_route(gate: Gate, request: Request, call_next: _CallNext, rule: Any) -> Response:
    """A route a bearer token opens (a dashboard plugin's API): check the token and its scope."""
    peer = request.client.host if request.client else ""
    if rule.loopback_only and not is_loopback(peer):
        return JSONResponse({"error": "forbidden", "detail": "loopback only"}, status_code=403)
    fallback = rule.allow_session_fallback and not request.headers.get("authorization")
    if fallback and gate.mode != "gated" and gate.token_ok(request):
        return await call_next(request)
    principal, unreachable = authenticate_token(
        request, required_scope=rule.required_scope, providers=gate.providers()
    )
    if principal is not None:
        if rule.required_scope is not None and rule.required_scope not in principal.scopes:
            return JSONResponse({"error": "forbidden", "detail": "Forbidden"}, status_code=403)
        request.state.token_principal = principal
        request.state.token_authenticated = True
        return await call_next(request)
    if unreachable:
        return JSONResponse(
            {"detail": f"Auth provider {unreachable!r} unreachable"}, status_code=503
        )
    return JSONResponse({"error": "unauthenticated", "detail": "Unauthorized"}, status_code=401)


def _install_session_routes(app: FastAPI, gate: Gate) -> None:
    """The login routes that do not leave the dashboard (Hermes' ``/auth/*``)."""

    @app.get("/auth/providers")
    async def auth_providers() -> dict[str, Any]:
        return {
            "mode": gate.mode,
            "providers": [
                {
                    "name": p.name,
                    "display_name": p.display_name,
                    "password": bool(getattr(p, "supports_password", False)),
                }
                for p in gate.session_providers()
            ],
        }

    @app.post("/auth/password-login")
    async def password_login(request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        body = await _form_or_json(request)
        provider = gate.provider(str(body.get("provider", "")))
        if provider is None or not getattr(provider, "supports_password", False):
            return JSONResponse(
                {"error": "unknown_provider", "detail": "no password provider of that name"}, 400
            )
        username, password = str(body.get("username", "")), str(body.get("password", ""))
        if not username or not password:
            return JSONResponse(
                {"error": "missing", "detail": "username and password are required"}, 400
            )
        try:
            session = await run_in_threadpool(
                lambda: provider.complete_password_login(username=username, password=password)
            )
        except InvalidCredentialsError:
            logger.info("dashboard-auth: a password login through %r was refused", provider.name)
            return JSONResponse(
                {"error": "invalid_credentials", "detail": "invalid username or password"}, 401
            )
        except ProviderError:
            return _unreachable()
        response = JSONResponse(
            {
                "ok": True,
                "user": session.display_name or session.user_id,
                "next": _next_of(body.get("next")),
            }
        )
        gate.set_session_cookies(response, session, secure=_secure_of(request))
        logger.info("dashboard-auth: %r logged in through %r", session.user_id, provider.name)
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
        return {
            "mode": gate.mode,
            "user": session.display_name or session.user_id,
            "email": session.email,
            "provider": session.provider,
            "expires_at": session.expires_at,
        }


def _install_oauth_routes(app: FastAPI, gate: Gate) -> None:
    """The OAuth login: ``/auth/login`` sends the browser to the provider, which calls back."""

    @app.get("/auth/login")
    async def oauth_login(request: Request, provider: str = "") -> Response:
        from starlette.concurrency import run_in_threadpool

        chosen = gate.provider(provider)
        if chosen is None or getattr(chosen, "supports_password", False):
            return JSONResponse(
                {"error": "unknown_provider", "detail": "no OAuth provider of that name"}, 400
            )
        redirect_uri = str(request.url_for("oauth_callback"))
        try:
            start = await run_in_threadpool(lambda: chosen.start_login(redirect_uri=redirect_uri))
        except ProviderError:
            return _unreachable()
        response = RedirectResponse(start.redirect_url, status_code=302)
        for name, value in start.cookie_payload.items():
            payload = f"provider={chosen.name};{value}" if name == PKCE_COOKIE else value
            response.set_cookie(
                name,
                payload,
                max_age=_PKCE_MAX_AGE,
                httponly=True,
                samesite="lax",
                path="/",
                secure=_secure_of(request),
            )
        return response

    @app.get("/auth/callback", name="oauth_callback")
    async def oauth_callback(request: Request, code: str = "", state: str = "") -> Response:
        from starlette.concurrency import run_in_threadpool

        raw = request.cookies.get(PKCE_COOKIE, "")
        fields = dict(seg.split("=", 1) for seg in raw.split(";") if "=" in seg)
        chosen = gate.provider(fields.get("provider"))
        if chosen is None or not code or not _same(state, fields.get("state")):
            return JSONResponse(
                {
                    "error": "invalid_state",
                    "detail": "missing or mismatched login state; log in again",
                },
                400,
            )
        redirect_uri = str(request.url_for("oauth_callback"))
        try:
            session = await run_in_threadpool(
                lambda: chosen.complete_login(
                    code=code,
                    state=state,
                    code_verifier=fields.get("verifier", ""),
                    redirect_uri=redirect_uri,
                )
            )
        except InvalidCodeError:
            return JSONResponse({"error": "invalid_code", "detail": "the login was refused"}, 400)
        except ProviderError:
            return _unreachable()
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(PKCE_COOKIE, path="/")
        gate.set_session_cookies(response, session, secure=_secure_of(request))
        logger.info("dashboard-auth: %r logged in through %r", session.user_id, chosen.name)
        return response


def install_drain(app: FastAPI, home: Path) -> None:
    """Add Hermes' ``POST /api/gateway/drain``: body ``{"action": "drain"}`` (the default) or
    ``{"action": "cancel"}``; it writes or removes the home's drain marker. The
    ``dashboard_auth/drain`` plugin makes this path a token route (a bearer service credential);
    without it the dashboard's own gate guards it like any other request."""
    from fastapi import HTTPException

    from hermes_hooks.dashboard.data import gateway_drain

    @app.post("/api/gateway/drain")
    async def drain(request: Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        principal = getattr(getattr(request.state, "token_principal", None), "principal", None)
        try:
            return gateway_drain(
                home,
                str(body.get("action", "drain")).strip().lower(),
                str(principal or "dashboard"),
                bool(body.get("suppress_notification", False)),
            )
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None

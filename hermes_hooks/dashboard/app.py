"""The dashboard's web application: FastAPI routes over :mod:`hermes_hooks.dashboard.data`.

:func:`build_app` makes the application for one observed manager. FastAPI is imported here
only: the package's other modules and ``hermes plugins list`` stay free of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from hermes_hooks import __version__
from hermes_hooks.backends.dashboard_auth.registry import providers_for
from hermes_hooks.dashboard import data
from hermes_hooks.dashboard.auth import Gate
from hermes_hooks.dashboard.counters import HookCounters
from hermes_hooks.dashboard.pages import STATIC, index_page, login_page, message_page
from hermes_hooks.dashboard.tabs import DashboardTab, discover_tabs, import_api, safe_asset
from hermes_hooks.errors import HermesHooksError
from hermes_hooks.plugins.manager import PluginManager

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["DashboardLimits", "build_app"]

logger = logging.getLogger(__name__)


@attrs.frozen
class DashboardLimits:
    """What the dashboard bounds.

    :param max_body: the largest request body accepted, in bytes (413 beyond).
    :param plugin_timeout: how long a plugin API route may take, in seconds (504 beyond).
    """

    max_body: int = 1024 * 1024
    plugin_timeout: float = 30.0


class _BodyLimit:
    """ASGI middleware: a request body beyond ``limit`` bytes is answered 413, whether its
    ``Content-Length`` says so or its chunks add up to it."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _send_json(
                send,
                413,
                b'{"error":"too_large","detail":"the request body is '
                b'larger than the dashboard accepts"}',
            )
            return
        # The body is read here, up to the limit, before the application sees it: a chunked
        # upload that adds up past the limit is answered 413 without reaching a route.
        chunks: list[bytes] = []
        seen = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body = message.get("body", b"")
            seen += len(body)
            if seen > self.limit:
                await _send_json(
                    send,
                    413,
                    b'{"error":"too_large","detail":"the request body '
                    b'is larger than the dashboard accepts"}',
                )
                return
            chunks.append(body)
            more = bool(message.get("more_body", False))
        whole = b"".join(chunks)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class _PluginApiGuard:
    """ASGI middleware around the plugins' API routes (``/api/plugins/<name>/...``).

    A path of no mounted plugin is 404, one whose API failed to import 503 with the error;
    a route that raises is 500 naming the plugin, one that outlasts the bound is cancelled
    and answered 504. The rest of the dashboard never sees these faults.
    """

    def __init__(
        self, app: Any, tabs: dict[str, DashboardTab], timeout: float, pm: PluginManager
    ) -> None:
        self.app = app
        self.tabs = tabs
        self.timeout = timeout
        self.pm = pm

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith("/api/plugins/"):
            await self.app(scope, receive, send)
            return
        import anyio

        name = path[len("/api/plugins/") :].partition("/")[0]
        tab = self.tabs.get(name)
        if tab is None:
            detail = f"no dashboard plugin {name!r} has an API"
            await _send_json(send, 404, _json({"error": "not_found", "detail": detail}))
            return
        if not tab.mounted:
            await _send_json(
                send,
                503,
                _json(
                    {
                        "error": "plugin_api_unavailable",
                        "plugin": tab.plugin,
                        "detail": tab.error or tab.api_error or "it has no API",
                    }
                ),
            )
            return
        started = False

        async def tracking_send(message: Any) -> None:
            nonlocal started
            if message.get("type") == "http.response.start":
                started = True
            await send(message)

        failure: tuple[int, dict[str, Any]] | None = None
        try:
            # The observed manager is the current one for the route (its home is the one
            # hermes_constants.get_hermes_home() and hermes_state.SessionDB() open).
            with anyio.fail_after(self.timeout), self.pm.activate():
                await self.app(scope, receive, tracking_send)
        except TimeoutError:
            logger.warning(
                "dashboard: plugin %r's API %s took over %ss", tab.plugin, path, self.timeout
            )
            failure = (
                504,
                {
                    "error": "plugin_timeout",
                    "plugin": tab.plugin,
                    "detail": f"plugin {tab.plugin!r} did not answer within {self.timeout:g}s",
                },
            )
        except Exception as exc:
            logger.warning(
                "dashboard: plugin %r's API %s failed: %s: %s",
                tab.plugin,
                path,
                type(exc).__name__,
                exc,
            )
            failure = (
                500,
                {
                    "error": "plugin_error",
                    "plugin": tab.plugin,
                    "detail": f"plugin {tab.plugin!r} failed: {type(exc).__name__}: {exc}",
                },
            )
        if failure is not None and not started:
            await _send_json(send, failure[0], _json(failure[1]))


def _json(value: object) -> bytes:
    import json

    return json.dumps(value).encode("utf-8")


async def _send_json(send: Any, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_app(
    pm: PluginManager,
    *,
    gate: Gate,
    counters: HookCounters | None = None,
    limits: DashboardLimits | None = None,
) -> FastAPI:
    """Return the FastAPI application of the dashboard observing ``pm``.

    :param gate: the auth state (its mode, token and providers).
    :param counters: the hook counters attached to ``pm`` (the hooks page's figures).
    """
    from fastapi import FastAPI
    from fastapi.staticfiles import StaticFiles

    limits = limits or DashboardLimits()
    app = FastAPI(title="Hermes dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.pm = pm
    app.state.gate = gate
    app.state.counters = counters
    tabs = _mount_tabs(app, pm)
    app.state.tabs = tabs

    app.add_middleware(_PluginApiGuard, tabs=tabs, timeout=limits.plugin_timeout, pm=pm)
    from hermes_hooks.dashboard.routes import install

    install(app, gate)
    app.add_middleware(_BodyLimit, limit=limits.max_body)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _install_plugin_routes(app, pm, counters)
    _install_data_routes(app, pm, gate, tabs)
    _install_pages(app, gate, tabs)  # last: its catch-all route answers what no other does
    return app


def _mount_tabs(app: FastAPI, pm: PluginManager) -> dict[str, DashboardTab]:
    """Mount each dashboard tab's API router; a router that fails is noted on its tab."""
    tabs: dict[str, DashboardTab] = {}
    for tab in discover_tabs(pm):
        tabs[tab.name] = tab
        module = import_api(tab)
        if module is not None:
            try:
                app.include_router(module.router, prefix=f"/api/plugins/{tab.name}")
                tab.mounted = True
            except Exception as exc:
                tab.api_error = f"its router could not be mounted: {type(exc).__name__}: {exc}"
    return tabs


def _fail(exc: HermesHooksError) -> Exception:
    from fastapi import HTTPException

    return HTTPException(status_code=400, detail=str(exc))


def _install_plugin_routes(app: FastAPI, pm: PluginManager, counters: HookCounters | None) -> None:
    """The plugins, hooks and tools pages' API."""
    from fastapi import Body, HTTPException

    @app.get("/api/dashboard/plugins")
    def plugins() -> list[dict[str, Any]]:
        return data.plugins(pm)

    @app.post("/api/dashboard/plugins/{name}/enable")
    def enable(name: str) -> dict[str, Any]:
        try:
            return data.set_plugin_enabled(pm, name, True)
        except HermesHooksError as exc:
            raise _fail(exc) from None

    @app.post("/api/dashboard/plugins/{name}/disable")
    def disable(name: str) -> dict[str, Any]:
        try:
            return data.set_plugin_enabled(pm, name, False)
        except HermesHooksError as exc:
            raise _fail(exc) from None

    @app.post("/api/dashboard/plugins/{name}/doctor")
    def doctor_plugin(name: str) -> dict[str, Any]:
        try:
            return data.doctor_plugin(pm, name)
        except HermesHooksError as exc:
            raise _fail(exc) from None

    @app.get("/api/dashboard/hooks")
    def hooks() -> dict[str, Any]:
        return data.hooks(pm, counters)

    @app.get("/api/dashboard/tools")
    def tools() -> dict[str, Any]:
        return {"tools": data.tools(pm), "families": data.families(pm)}

    @app.post("/api/dashboard/families/{family}/provider")
    def choose(family: str, body: dict[str, Any] = Body(...)) -> dict[str, Any]:  # noqa: B008
        provider = body.get("provider")
        if not isinstance(provider, str) or not provider:
            raise HTTPException(400, "field 'provider' must be a provider's name")
        try:
            return data.choose_family_provider(pm, family, provider)
        except KeyError:
            raise HTTPException(404, f"no provider family {family!r}") from None
        except HermesHooksError as exc:
            raise _fail(exc) from None


def _install_data_routes(
    app: FastAPI, pm: PluginManager, gate: Gate, tabs: dict[str, DashboardTab]
) -> None:
    """The status, tabs, memory, doctor and kanban pages' API."""
    from fastapi import HTTPException

    @app.get("/api/status")
    def status() -> dict[str, Any]:
        return {"version": __version__, "auth": gate.mode}

    @app.get("/api/dashboard/tabs")
    def list_tabs() -> list[dict[str, Any]]:
        return [tab.to_dict() for tab in tabs.values()]

    @app.get("/api/dashboard/memory")
    def memory(q: str = "", limit: int = 50) -> dict[str, Any]:
        return data.memory(pm, q or None, max(1, min(limit, 500)))

    @app.post("/api/dashboard/memory/{fact_id}/forget")
    def forget(fact_id: int) -> dict[str, Any]:
        fact = data.forget_fact(pm, fact_id)
        if fact is None:
            raise HTTPException(404, f"no fact {fact_id}")
        return {"forgotten": fact}

    @app.get("/api/dashboard/doctor")
    def doctor() -> dict[str, Any]:
        return data.environment(pm)

    @app.get("/api/dashboard/kanban")
    def kanban() -> dict[str, Any]:
        return data.kanban(pm.hermes_home)

    from hermes_hooks.dashboard.routes import install_drain

    install_drain(app, pm.hermes_home)


def _install_pages(app: FastAPI, gate: Gate, tabs: dict[str, DashboardTab]) -> None:
    """The pages: the tabs' assets, the login page and the single-page app for the rest."""
    from fastapi.responses import FileResponse, JSONResponse, Response

    @app.get("/dashboard-plugins/{name}/{asset:path}")
    def plugin_asset(name: str, asset: str) -> Response:
        tab = tabs.get(name)
        path = safe_asset(tab.folder, asset) if tab is not None else None
        if path is None or not path.is_file():
            return JSONResponse({"error": "not_found", "detail": "no such asset"}, 404)
        return FileResponse(path)

    @app.get("/login")
    def login() -> Response:
        if gate.mode != "gated":
            return message_page(404, "this dashboard has no login: it uses its session token")
        return login_page()

    @app.get("/{page:path}")
    def spa(page: str) -> Response:
        if page.startswith(("api/", "auth/", "dashboard-plugins/", "static/")):
            return JSONResponse({"error": "not_found", "detail": f"no route /{page}"}, 404)
        return index_page()


def providers_of(pm: PluginManager) -> Callable[[], list[Any]]:
    """Return the function giving ``pm``'s dashboard-auth providers, now."""
    return lambda: providers_for(pm)

"""What the dashboard tests share: a dashboard on an isolated home, in process or listening.

:func:`dashboard_client` builds the application for a manager and returns a FastAPI
``TestClient`` that already holds the session token's cookie and the CSRF cookie;
:func:`csrf` gives the header a state-changing request must carry.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the dashboard extra (fastapi) is not installed")

with warnings.catch_warnings():
    # Newer Starlette warns that its test client prefers httpx2; httpx works the same here.
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from hermes_hooks.dashboard.app import DashboardLimits, build_app
from hermes_hooks.dashboard.auth import Gate, Mode
from hermes_hooks.dashboard.counters import HookCounters
from hermes_hooks.host.runtime import create_manager
from hermes_hooks.plugins.manager import PluginManager


def manager(home: Path) -> PluginManager:
    """The reference host's manager on ``home``, loaded."""
    return create_manager(home)


def dashboard_client(
    pm: PluginManager,
    *,
    mode: Mode = "token",
    limits: DashboardLimits | None = None,
    signed_in: bool = True,
) -> TestClient:
    """A client of the dashboard observing ``pm``; with ``signed_in``, holding the token's
    cookie (token modes) and the CSRF cookie."""
    from hermes_hooks.backends.dashboard_auth.registry import providers_for

    gate = Gate(mode, lambda: providers_for(pm))
    counters = HookCounters().attach(pm)
    app = build_app(pm, gate=gate, counters=counters, limits=limits)
    client = TestClient(app)
    # The tests read the app's State here; TestClient.app_state is typed as its lifespan dict.
    client.app_state = app.state  # type: ignore[assignment]
    if signed_in and mode != "gated":
        assert client.get(f"/?token={gate.token}", follow_redirects=False).status_code == 303
    else:
        client.get("/api/status")
        client.get("/login")
    return client


def csrf(client: TestClient) -> dict[str, str]:
    """The header carrying the client's CSRF cookie."""
    return {"X-Hermes-CSRF": client.cookies.get("hermes_csrf") or ""}


def post(client: TestClient, url: str, **kwargs: Any) -> Any:
    """POST with the CSRF header."""
    headers = {**csrf(client), **kwargs.pop("headers", {})}
    return client.post(url, headers=headers, **kwargs)

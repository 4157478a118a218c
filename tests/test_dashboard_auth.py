"""Dashboard auth as Hermes has it: the served ``hermes_cli.dashboard_auth``, plugins that
register providers, the login routes and their cookies, token routes, ``hermes dashboard-auth``,
and an OpenID Connect login against a local identity provider."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from dashboard_plugins import auth_plugins
from dashboard_support import dashboard_client, manager, post
from oidc_idp import running_idp
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.backends.dashboard_auth import registry
from hermes_hooks.cli.main import cli
from hermes_hooks.dashboard.auth import DashboardAuthError, choose_mode

SECRET = "Xq3v9Lr7Tz2Kp8Wm4Ny6Bc1Hd5Fg0Js-aQeRtYuIoP_z"  # 44 characters, as token_urlsafe gives


@pytest.fixture
def auth_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = isolated_home(tmp_path, monkeypatch)
    auth_plugins(home)
    monkeypatch.setenv("HERMES_DASHBOARD_DRAIN_SECRET", SECRET)
    write_config(
        home,
        enabled=["dashboard-basic", "dashboard-drain", "dashboard-self-hosted"],
        dashboard={"basic_auth": {"username": "admin", "password": "hunter2-hunter2"}},
    )
    yield home
    registry.clear_token_routes()


def replace_cookie(client: Any, name: str, value: str) -> None:
    """Put ``value`` in place of the cookie ``name`` the server set, whatever its domain.

    httpx2 (Starlette's preferred test transport) keeps server cookies under
    ``testserver.local``, so a plain ``cookies.set`` would add a second cookie beside it.
    """
    domains = {c.domain for c in client.cookies.jar if c.name == name} or {""}
    for domain in domains:
        client.cookies.delete(name, domain=domain)
        client.cookies.set(name, value, domain=domain)


def test_the_served_module_is_hermes_contract(auth_home: Path) -> None:
    pm = manager(auth_home)
    with pm.activate():
        from hermes_cli.dashboard_auth import (
            DashboardAuthProvider,
            Session,
            get_provider,
            list_session_providers,
            list_token_providers,
        )
        from hermes_cli.dashboard_auth.token_auth import (
            is_token_route,
        )

        assert {p.name for p in list_session_providers()} == {"basic"}
        assert [p.name for p in list_token_providers()] == ["drain-secret"]
        basic = get_provider("basic")
        assert isinstance(basic, DashboardAuthProvider)
        with pytest.raises(TypeError):
            basic.complete_password_login("admin", "x")  # keyword-only, as in Hermes
        session = basic.complete_password_login(username="admin", password="hunter2-hunter2")
        assert isinstance(session, Session)
        assert is_token_route("/api/gateway/drain", "POST")


def test_a_provider_of_the_wrong_type_is_refused_naming_the_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(
        home,
        "fake-auth",
        "def register(ctx):\n    ctx.register_dashboard_auth_provider(object())\n",
    )
    write_config(home, enabled=["fake-auth"])
    pm = manager(home)
    assert registry.providers_for(pm) == []
    assert "fake-auth" in caplog.text
    assert pm.get_plugin_info("fake-auth").status == "enabled"  # type: ignore[union-attr]


def test_beyond_loopback_the_dashboard_refuses_to_start_without_a_provider() -> None:
    with pytest.raises(DashboardAuthError, match="--insecure"):
        choose_mode("0.0.0.0", False, [])
    assert choose_mode("0.0.0.0", True, []) == "insecure"
    assert choose_mode("127.0.0.1", False, []) == "token"
    assert choose_mode("::1", False, []) == "token"


def _login(client: object, password: str) -> object:
    return post(
        client,  # type: ignore[arg-type]
        "/auth/password-login",
        json={
            "provider": "basic",
            "username": "admin",
            "password": password,
        },
    )


def test_a_password_login_sets_httponly_cookies_and_a_wrong_one_is_refused(
    auth_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    client = dashboard_client(manager(auth_home), mode="gated", signed_in=False)
    assert client.get("/api/dashboard/plugins").status_code == 401
    page = client.get("/", follow_redirects=False)
    assert page.status_code == 303
    assert page.headers["location"].startswith("/login")
    assert client.get("/auth/providers").json()["providers"][0]["password"] is True
    refused = _login(client, "wrong")
    assert refused.status_code == 401  # type: ignore[attr-defined]
    assert client.get("/api/dashboard/plugins").status_code == 401
    no_csrf = client.post(
        "/auth/password-login",
        json={"provider": "basic", "username": "admin", "password": "hunter2-hunter2"},
    )
    assert no_csrf.status_code == 403
    accepted = _login(client, "hunter2-hunter2")
    assert accepted.status_code == 200  # type: ignore[attr-defined]
    cookies = accepted.headers.get_list("set-cookie")  # type: ignore[attr-defined]
    session_cookie = next(c for c in cookies if c.startswith("hermes_session_at="))
    assert "HttpOnly" in session_cookie
    assert "samesite=lax" in session_cookie.lower()
    assert client.get("/api/dashboard/plugins").status_code == 200
    assert client.get("/auth/me").json()["user"] == "admin"
    assert "hunter2" not in caplog.text
    out = post(client, "/auth/logout")
    assert out.status_code == 200
    assert client.get("/api/dashboard/plugins").status_code == 401


def test_a_session_near_its_expiry_is_refreshed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    auth_plugins(home)
    write_config(
        home,
        enabled=["dashboard-basic"],
        dashboard={
            "basic_auth": {
                "username": "admin",
                "password": "pw-pw-pw-pw",
                "session_ttl_seconds": 30,
            }
        },
    )
    client = dashboard_client(manager(home), mode="gated", signed_in=False)
    post(
        client,
        "/auth/password-login",
        json={"provider": "basic", "username": "admin", "password": "pw-pw-pw-pw"},
    )
    answer = client.get("/api/dashboard/tools")  # 30 s from expiry: within the margin
    assert answer.status_code == 200
    renewed = [
        c
        for c in answer.headers.get_list("set-cookie")
        if c.startswith(("hermes_session_at=", "hermes_session_rt="))
    ]
    assert len(renewed) == 2
    assert all("HttpOnly" in c for c in renewed)


def test_a_token_route_takes_the_token_provider_s_bearer_only(auth_home: Path) -> None:
    client = dashboard_client(manager(auth_home), mode="gated", signed_in=False)
    url = "/api/gateway/drain"  # the drain plugin's DRAIN_ROUTE_PATH, as in Hermes
    marker = auth_home / ".drain_request.json"
    assert client.post(url).status_code == 401
    assert client.post(url, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert not marker.exists()
    bearer = {"Authorization": f"Bearer {SECRET}"}
    done = client.post(url, headers=bearer, json={"action": "drain"})
    assert done.status_code == 200, done.text
    assert (done.json()["action"], done.json()["draining"]) == ("drain", True)
    assert json.loads(marker.read_text())["principal"] == "drain-control"
    cancelled = client.post(url, headers=bearer, json={"action": "cancel"})
    assert cancelled.json() == {"ok": True, "action": "cancel", "was_draining": True}
    assert not marker.exists()
    assert client.post(url, headers=bearer, json={"action": "explode"}).status_code == 400


def test_a_weak_drain_secret_registers_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    auth_plugins(home)
    monkeypatch.setenv("HERMES_DASHBOARD_DRAIN_SECRET", "a" * 64)  # long, but one character
    write_config(home, enabled=["dashboard-drain"])
    pm = manager(home)
    with pm.activate():
        from hermes_cli.dashboard_auth import list_token_providers
        from hermes_cli.dashboard_auth.token_auth import is_token_route

        assert list_token_providers() == []
        assert not is_token_route("/api/gateway/drain", "POST")
    drain = pm.get_plugin_module("dashboard-drain")
    assert drain is not None
    assert "distinct" in drain.LAST_SKIP_REASON


def test_hermes_dashboard_auth_list_and_check(auth_home: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["dashboard-auth", "list"])
    assert listed.exit_code == 0, listed.output
    assert "basic: Username & Password (plugin dashboard-basic); password, session" in listed.output
    assert "drain-secret" in listed.output
    good = runner.invoke(
        cli, ["dashboard-auth", "check", "basic", "--username", "admin"], input="hunter2-hunter2\n"
    )
    assert good.exit_code == 0, good.output
    assert "login accepted: admin" in good.output
    bad = runner.invoke(
        cli, ["dashboard-auth", "check", "basic", "--username", "admin"], input="nope\n"
    )
    assert bad.exit_code == 1
    assert "invalid username or password" in bad.output
    token = runner.invoke(
        cli, ["dashboard-auth", "check", "drain-secret", "--token", "-"], input=SECRET + "\n"
    )
    assert "principal 'drain-control' (drain)" in token.output
    typo = runner.invoke(cli, ["dashboard-auth", "check", "basik"])
    assert typo.exit_code == 1
    assert "'basic'" in typo.output


def test_an_openid_connect_login_against_a_local_identity_provider(
    auth_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with running_idp(ttl=3600) as idp:
        monkeypatch.setenv("HERMES_DASHBOARD_OIDC_ISSUER", idp.issuer)
        monkeypatch.setenv("HERMES_DASHBOARD_OIDC_CLIENT_ID", idp.client_id)
        client = dashboard_client(manager(auth_home), mode="gated", signed_in=False)
        start = client.get(
            "/auth/login", params={"provider": "self-hosted"}, follow_redirects=False
        )
        assert start.status_code == 302
        pkce = next(
            c for c in start.headers.get_list("set-cookie") if c.startswith("hermes_session_pkce=")
        )
        assert "HttpOnly" in pkce
        import httpx

        approved = httpx.get(start.headers["location"], follow_redirects=False)
        assert approved.status_code == 302
        callback = urllib.parse.urlsplit(approved.headers["location"])
        forged = client.get(
            callback.path, params={"code": "x", "state": "forged"}, follow_redirects=False
        )
        assert forged.status_code == 400
        done = client.get(f"{callback.path}?{callback.query}", follow_redirects=False)
        assert done.status_code == 303, done.text
        me = client.get("/auth/me").json()
        assert (me["user"], me["provider"], me["email"]) == (
            "Ada Lovelace",
            "self-hosted",
            "ada@example.org",
        )
        assert idp.seen["/token"] == 1
        assert idp.seen["/jwks"] >= 1
        # A refresh token the identity provider no longer knows means logging in again.
        idp.refresh_tokens.clear()
        replace_cookie(client, "hermes_session_at", idp.id_token(ttl=-120))
        assert client.get("/api/dashboard/plugins").status_code == 401
    # The identity provider is gone: a 503 that keeps the cookies, not a logout.
    fresh = dashboard_client(manager(auth_home), mode="gated", signed_in=False)
    fresh.cookies.set("hermes_session_at", "a.b.c")
    fresh.cookies.set("hermes_session_provider", "self-hosted")
    down = fresh.get("/api/dashboard/plugins")
    assert down.status_code == 503
    assert down.json()["error"] == "provider_unreachable"
    assert not any("hermes_session_at" in c for c in down.headers.get_list("set-cookie"))


def test_a_nous_portal_login_rotates_its_refresh_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx

    home = isolated_home(tmp_path, monkeypatch)
    auth_plugins(home)
    write_config(home, enabled=["dashboard-nous"])
    with running_idp(client_id="agent:inst-7", ttl=3600) as portal:
        monkeypatch.setenv("HERMES_DASHBOARD_OAUTH_CLIENT_ID", portal.client_id)
        monkeypatch.setenv("HERMES_DASHBOARD_PORTAL_URL", portal.issuer)
        client = dashboard_client(manager(home), mode="gated", signed_in=False)
        start = client.get("/auth/login", params={"provider": "nous"}, follow_redirects=False)
        assert "scope=agent_dashboard%3Aaccess" in start.headers["location"]
        back = urllib.parse.urlsplit(
            httpx.get(start.headers["location"], follow_redirects=False).headers["location"]
        )
        assert client.get(f"{back.path}?{back.query}", follow_redirects=False).status_code == 303
        assert client.get("/auth/me").json()["provider"] == "nous"
        first_refresh = client.cookies.get("hermes_session_rt")
        replace_cookie(client, "hermes_session_at", portal.access_token(ttl=-120))  # expired
        assert client.get("/api/dashboard/plugins").status_code == 200
        assert portal.seen["x-nous-refresh-token"] == 1
        assert client.cookies.get("hermes_session_rt") not in (None, first_refresh)
        assert first_refresh not in portal.refresh_tokens  # rotated


def test_hermes_dashboard_beyond_loopback_without_a_provider_exits_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolated_home(tmp_path, monkeypatch)
    refused = CliRunner().invoke(cli, ["dashboard", "--host", "0.0.0.0", "--port", "0"])
    assert refused.exit_code == 1
    assert "refusing to listen on '0.0.0.0'" in refused.output
    assert "--insecure" in refused.output


def test_the_refusal_says_why_each_auth_plugin_registered_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    auth_plugins(home)
    write_config(home, enabled=["dashboard-basic", "dashboard-nous"])  # neither configured
    refused = CliRunner().invoke(cli, ["dashboard", "--host", "0.0.0.0", "--port", "0"])
    assert refused.exit_code == 1
    assert "  - dashboard-basic: dashboard.basic_auth.username is not set" in refused.output
    assert "  - dashboard-nous: HERMES_DASHBOARD_OAUTH_CLIENT_ID is not set" in refused.output

"""``hermes dashboard``'s API, in process: the pages' data, the actions, the token gate, CSRF,
the plugins' tabs and the faults a plugin or a client can bring."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml
from dashboard_plugins import achievements_plugin, broken_api_plugin
from dashboard_support import csrf, dashboard_client, manager, post
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.dashboard.app import DashboardLimits
from hermes_hooks.dashboard.server import start_dashboard
from hermes_hooks.host.session import Session

HOOKED = """
def register(ctx):
    ctx.register_hook("pre_llm_call", lambda **kwargs: None)
    ctx.register_hook("post_llm_call", lambda **kwargs: None)
    ctx.register_tool(name="echo_back", toolset="demo", schema={"name": "echo_back",
        "description": "Echo.", "parameters": {"type": "object", "properties": {}}},
        handler=lambda args, **kw: "{}", description="Echo.")
"""


@pytest.fixture
def dash_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = isolated_home(tmp_path, monkeypatch)
    user_plugin(home, "hooked", HOOKED)
    user_plugin(home, "broken", "raise RuntimeError('kaput at import')\n")
    achievements_plugin(home)
    broken_api_plugin(home)
    write_config(home, enabled=["hooked", "broken", "achievements-demo", "broken-tab"])
    return home


def test_the_plugins_page_shows_each_status_its_reason_and_what_it_registered(
    dash_home: Path,
) -> None:
    client = dashboard_client(manager(dash_home))
    rows = {row["key"]: row for row in client.get("/api/dashboard/plugins").json()}
    assert rows["broken"]["status"] == "error"
    assert "kaput at import" in rows["broken"]["error"]
    assert rows["hooked"]["status"] == "enabled"
    assert rows["hooked"]["registrations"]["tools"] == ["echo_back"]
    assert set(rows["hooked"]["hooks"]) >= {"pre_llm_call", "post_llm_call"}
    assert rows["hooked"]["version"] == "1.0"
    assert rows["hooked"]["source"] == "user"


def test_disabling_from_the_dashboard_writes_config_as_the_cli_does_and_unloads_it(
    dash_home: Path,
) -> None:
    pm = manager(dash_home)
    client = dashboard_client(pm)
    answer = post(client, "/api/dashboard/plugins/hooked/disable")
    assert answer.status_code == 200, answer.text
    config = yaml.safe_load((dash_home / "config.yaml").read_text())
    assert "hooked" in config["plugins"]["disabled"]
    row = next(r for r in client.get("/api/dashboard/plugins").json() if r["key"] == "hooked")
    assert (row["status"], row["configured"]) == ("not enabled", "disabled")
    assert "echo_back" not in pm.tools.names()
    again = post(client, "/api/dashboard/plugins/hooked/enable")
    assert again.json()["status"] == "enabled"
    assert (
        "hooked"
        not in yaml.safe_load((dash_home / "config.yaml").read_text())["plugins"]["disabled"]
    )
    assert "echo_back" in pm.tools.names()


def test_an_unknown_plugin_is_refused_with_the_closest_names(dash_home: Path) -> None:
    client = dashboard_client(manager(dash_home))
    answer = post(client, "/api/dashboard/plugins/hoked/disable")
    assert answer.status_code == 400
    assert "hooked" in answer.json()["detail"]


def test_the_doctor_of_a_plugin_and_of_the_environment(dash_home: Path) -> None:
    client = dashboard_client(manager(dash_home))
    report = post(client, "/api/dashboard/plugins/broken/doctor").json()
    assert report["ok"] is False
    assert any("kaput at import" in f["message"] for f in report["findings"])
    health = client.get("/api/dashboard/doctor").json()
    assert "facts" in health
    assert "findings" in health


def test_the_hooks_page_counts_the_calls_of_the_observed_host(
    dash_home: Path, tmp_path: Path
) -> None:
    pm = manager(dash_home)
    client = dashboard_client(pm)

    def calls() -> tuple[int, list[str]]:
        hooks = {h["hook"]: h for h in client.get("/api/dashboard/hooks").json()["hooks"]}
        impls = hooks["pre_llm_call"]["impls"]
        return hooks["pre_llm_call"]["calls"], [i["plugin"] for i in impls if i["calls"]]

    before, _ = calls()
    with Session(pm, cwd=tmp_path) as session:
        session.run_turn("hello")
    after, reached = calls()
    assert after > before
    assert "hooked" in reached
    data = client.get("/api/dashboard/hooks").json()
    impl = next(i for h in data["hooks"] if h["hook"] == "pre_llm_call" for i in h["impls"])
    if not callable(getattr(pm, "add_call_observer", None)):  # time is per hook, not guessed
        assert data["per_implementation_time"] is False
        assert impl["seconds"] is None


FAILING = """
def register(ctx):
    def fails(**kwargs):
        raise RuntimeError("this implementation fails")
    ctx.register_hook("pre_llm_call", fails)
"""


def test_the_hooks_page_times_each_implementation_from_the_calling_layer(
    dash_home: Path, tmp_path: Path
) -> None:
    user_plugin(dash_home, "failing", FAILING)
    write_config(dash_home, enabled=["hooked", "failing"])
    pm = manager(dash_home)
    if not callable(getattr(pm, "add_call_observer", None)):
        pytest.skip(
            "the calling layer has no pm.add_call_observer(fn) yet (issue 22): without it the "
            "hooks page shows time per hook, which test_the_hooks_page_counts_the_calls_... checks"
        )
    client = dashboard_client(pm)
    with Session(pm, cwd=tmp_path) as session:
        session.run_turn("hello")
    data = client.get("/api/dashboard/hooks").json()
    assert data["per_implementation_time"] is True
    hook = next(h for h in data["hooks"] if h["hook"] == "pre_llm_call")
    impls = {i["plugin"]: i for i in hook["impls"]}
    for key in ("hooked", "failing"):
        assert impls[key]["calls"] == 1
        assert impls[key]["seconds"] is not None
        assert 0 <= impls[key]["seconds"] <= hook["seconds"]
    counted = client.app_state.counters.snapshot()["pre_llm_call"]["impls"]  # type: ignore[attr-defined]
    assert (counted["failing"]["errors"], counted["hooked"]["errors"]) == (1, 0)


def test_state_changing_requests_need_the_csrf_header_and_the_same_origin(
    dash_home: Path,
) -> None:
    client = dashboard_client(manager(dash_home))
    url = "/api/dashboard/plugins/hooked/disable"
    assert client.post(url).status_code == 403
    assert client.post(url, headers={"X-Hermes-CSRF": "forged"}).status_code == 403
    cross = {**csrf(client), "Origin": "http://evil.example"}
    assert client.post(url, headers=cross).status_code == 403
    config = yaml.safe_load((dash_home / "config.yaml").read_text())
    assert "hooked" not in (config["plugins"].get("disabled") or [])


def test_the_token_gate_trades_the_token_for_an_httponly_cookie(dash_home: Path) -> None:
    pm = manager(dash_home)
    client = dashboard_client(pm, signed_in=False)
    assert client.get("/api/dashboard/plugins").status_code == 401
    assert client.get("/").status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    token = client.app_state.gate.token  # type: ignore[attr-defined]
    answer = client.get(f"/hooks?token={token}&x=1", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/hooks?x=1"
    cookie = next(
        c for c in answer.headers.get_list("set-cookie") if c.startswith("hermes_dashboard_token=")
    )
    assert "HttpOnly" in cookie
    assert "samesite=strict" in cookie.lower()
    page = client.get("/")
    assert page.status_code == 200
    assert token not in page.text
    assert client.get("/api/dashboard/plugins").status_code == 200
    bearer = type(client)(client.app)  # no cookie: the token as a bearer alone
    headers = {"Authorization": f"Bearer {token}"}
    assert bearer.get("/api/dashboard/tools", headers=headers).status_code == 200


def test_tools_families_memory_and_kanban(dash_home: Path) -> None:
    from hermes_hooks.backends.memory.store import FactStore, db_path

    db_path(dash_home).parent.mkdir(parents=True, exist_ok=True)
    with FactStore(db_path(dash_home)) as store:
        kept = store.add("the user prefers tea")
        store.add("the build uses make")
    client = dashboard_client(manager(dash_home))
    tools = client.get("/api/dashboard/tools").json()
    assert any(t["name"] == "echo_back" and t["owner"] == "hooked" for t in tools["tools"])
    assert {"image_gen", "web_search"} <= {f["family"] for f in tools["families"]}
    found = client.get("/api/dashboard/memory", params={"q": "tea"}).json()["facts"]
    assert [f["id"] for f in found] == [kept.id]
    assert post(client, f"/api/dashboard/memory/{kept.id}/forget").status_code == 200
    assert client.get("/api/dashboard/memory", params={"q": "tea"}).json()["facts"] == []
    assert post(client, "/api/dashboard/memory/99999/forget").status_code == 404
    try:
        from hermes_hooks.host.kanban import KanbanBoard
    except ImportError:  # the kanban subsystem is not on this branch: the tab says so
        board = client.get("/api/dashboard/kanban").json()
        assert board["available"] is False
        assert "not installed" in board["reason"]
    else:
        task = KanbanBoard.open(dash_home).create("Write the dashboard docs", "with screenshots")
        board = client.get("/api/dashboard/kanban").json()
        assert board["available"] is True
        assert [t["title"] for t in board["tasks"]] == ["Write the dashboard docs"]
        assert board["tasks"][0]["id"] == task["id"]


def test_choosing_a_provider_writes_the_family_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch, bundled=True)  # web/offline is bundled
    client = dashboard_client(manager(home))
    answer = post(
        client, "/api/dashboard/families/web_search/provider", json={"provider": "offline"}
    )
    assert answer.status_code == 200, answer.text
    assert yaml.safe_load((home / "config.yaml").read_text())["web"]["backend"] == "offline"
    bad = post(client, "/api/dashboard/families/web_search/provider", json={"provider": "nope"})
    assert bad.status_code == 400


def test_a_plugin_tab_its_api_and_a_tab_whose_api_fails_to_import(dash_home: Path) -> None:
    client = dashboard_client(manager(dash_home))
    tabs = {t["name"]: t for t in client.get("/api/dashboard/tabs").json()}
    demo = tabs["achievements-demo"]
    assert (demo["label"], demo["path"], demo["mounted"]) == ("Achievements", "/achievements", True)
    assert client.get(demo["entry"]).status_code == 200
    before = client.get("/api/plugins/achievements-demo/achievements").json()
    assert (before["unlocked_count"], before["error"]) == (0, None)
    assert before["home"] == str(dash_home)
    pm = client.app_state.pm  # type: ignore[attr-defined]
    with Session(pm, cwd=dash_home) as session:  # its transcript goes to state.db
        session.run_turn("run `echo one`")
    body = client.get("/api/plugins/achievements-demo/achievements").json()
    progress = {a["id"]: (a["progress"], a["state"]) for a in body["achievements"]}
    assert progress == {"first_steps": (1, "unlocked"), "terminal_goblin": (1, "discovered")}
    badges = client.get(f"/api/plugins/achievements-demo/sessions/{session.session_id}/badges")
    assert badges.json()["session"]["terminal_calls"] == 1
    broken = tabs["broken-tab"]
    assert broken["mounted"] is False
    assert "fancy_charts" in broken["error"]
    answer = client.get("/api/plugins/broken-tab/anything")
    assert answer.status_code == 503
    assert "fancy_charts" in answer.json()["detail"]
    assert client.get("/api/dashboard/plugins").status_code == 200  # the rest works


def test_a_plugin_api_answers_for_the_observed_home_not_hermes_home(
    dash_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = manager(dash_home)
    client = dashboard_client(pm)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(elsewhere))  # serve_dashboard(pm) from code
    with Session(pm, cwd=tmp_path) as session:
        session.run_turn("hello")
    body = client.get("/api/plugins/achievements-demo/achievements").json()
    assert body["home"] == str(dash_home)
    assert body["unlocked_count"] == 1  # the observed home's session
    assert not (elsewhere / "state.db").exists()


def test_bad_requests_get_the_right_status_and_leave_the_server_unharmed(
    dash_home: Path,
) -> None:
    client = dashboard_client(
        manager(dash_home), limits=DashboardLimits(max_body=4096, plugin_timeout=0.3)
    )
    assert client.get("/api/plugins/no-such-plugin/x").status_code == 404
    for traversal in (
        "../plugin_api.py",
        "%2e%2e/%2e%2e/plugin.yaml",
        "..%2f..%2fplugin.yaml",
        "/etc/passwd",
        "dist/../../plugin.yaml",
    ):
        answer = client.get(f"/dashboard-plugins/achievements-demo/{traversal}")
        assert answer.status_code == 404, traversal
    raised = client.get("/api/plugins/achievements-demo/boom")
    assert raised.status_code == 500
    assert raised.json()["plugin"] == "achievements-demo"
    hung = client.get("/api/plugins/achievements-demo/hang")
    assert hung.status_code == 504
    big = post(client, "/api/dashboard/plugins/hooked/doctor", content=b"x" * 10_000)
    assert big.status_code == 413

    def chunks() -> object:
        for _ in range(10):
            yield b"x" * 1000

    streamed = post(
        client,
        "/api/dashboard/families/web_search/provider",
        content=chunks(),
        headers={"Content-Type": "application/json"},
    )
    assert streamed.status_code == 413
    assert client.get("/api/dashboard/plugins").status_code == 200


def test_a_slow_client_does_not_hold_the_server_and_no_token_is_logged(
    dash_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="hermes_hooks.dashboard")
    pm = manager(dash_home)
    with (
        start_dashboard(pm) as server,
        socket.create_connection(("127.0.0.1", server.port)) as slow,
    ):
        slow.sendall(b"GET /api/status HTTP/1.1\r\nHost: x\r\n")  # and never finishes
        import httpx

        answer = httpx.get(server.base_url + "/api/status", timeout=5)  # raises when held
        assert answer.status_code == 200
        opened = httpx.get(server.url, timeout=5, follow_redirects=True)
        assert opened.status_code == 200
        assert server.gate.token not in opened.text
        assert answer.json()["auth"] == "token"
    assert "GET / 303" in caplog.text  # the access log has the path, not the query
    assert server.gate.token not in caplog.text


def test_the_api_of_a_plugin_not_enabled_is_never_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    marker = tmp_path / "imported"
    user_plugin(
        home,
        "sleeper",
        "def register(ctx):\n    pass\n",
        files={
            "dashboard/manifest.json": '{"name": "sleeper", "api": "api.py"}',
            "dashboard/api.py": f"open({str(marker)!r}, 'w').close()\n"
            "from fastapi import APIRouter\nrouter = APIRouter()\n",
        },
    )
    write_config(home)
    client = dashboard_client(manager(home))
    tab = next(t for t in client.get("/api/dashboard/tabs").json() if t["name"] == "sleeper")
    assert tab["mounted"] is False
    assert "not enabled" in tab["error"]
    assert not marker.exists()


@pytest.mark.parametrize(
    ("config", "mounted"),
    [
        ({}, False),
        ({"enabled": ["shown"]}, True),
        ({"enabled": ["shown"], "disabled": ["x"]}, False),
    ],
)
def test_a_dashboard_only_folder_is_imported_once_enabled_by_folder_or_manifest_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, list[str]], mounted: bool
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    marker = tmp_path / "imported"
    folder = home / "plugins" / "x" / "dashboard"  # no plugin.yaml: a dashboard plugin only
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text('{"name": "shown", "api": "api.py"}')
    (folder / "api.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nfrom fastapi import APIRouter\nrouter = APIRouter()\n"
    )
    write_config(home, config.get("enabled", ()), config.get("disabled", ()))
    client = dashboard_client(manager(home))
    tab = next(t for t in client.get("/api/dashboard/tabs").json() if t["name"] == "shown")
    assert (tab["plugin"], tab["mounted"], marker.exists()) == ("x", mounted, mounted)

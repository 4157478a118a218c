"""The dashboard in a real headless Chromium: what a person sees and does on its pages.

One browser serves every test here (:mod:`chromium`). With ``DASHBOARD_SCREENSHOTS``
set to a folder, each page is saved there as a PNG (the screenshots of the docs are made so).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from chromium import Page, browser, chromium  # noqa: F401  (fixtures)
from cli_support import hermes
from dashboard_plugins import achievements_plugin, auth_plugins
from plugin_builders import isolated_home, user_plugin, write_config

from hermes_hooks.dashboard.server import DashboardServer, start_dashboard
from hermes_hooks.host.runtime import create_manager
from hermes_hooks.host.session import Session
from hermes_hooks.plugins.manager import PluginManager

pytest.importorskip("fastapi", reason="the dashboard extra (fastapi) is not installed")

HOOKED = """
def register(ctx):
    ctx.register_hook("pre_llm_call", lambda **kwargs: None)
    ctx.register_hook("on_session_start", lambda **kwargs: None)
"""


def shoot(page: Page, name: str) -> None:
    folder = os.environ.get("DASHBOARD_SCREENSHOTS")
    if folder:
        page.screenshot(Path(folder) / f"dashboard-{name}.png")


@pytest.fixture
def observed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[PluginManager, DashboardServer, Path]]:
    home = isolated_home(tmp_path, monkeypatch, bundled=True)
    user_plugin(home, "hooked", HOOKED)
    user_plugin(home, "broken", "raise RuntimeError('kaput at import')\n")
    achievements_plugin(home)
    write_config(home, enabled=["hooked", "broken", "achievements-demo"])
    pm = create_manager(home)
    with start_dashboard(pm) as server:
        yield pm, server, home


def test_the_plugins_page_shows_the_error_and_disabling_changes_config_and_page(
    browser: Page,
    observed: tuple[PluginManager, DashboardServer, Path],
) -> None:
    _, server, home = observed
    browser.goto(server.url)
    assert "token=" not in browser.eval("location.href")  # traded for the cookie
    token_cookie = next(c for c in browser.cookies() if c["name"] == "hermes_dashboard_token")
    assert token_cookie["httpOnly"] is True
    browser.wait_for("document.querySelector('tr[data-plugin=\"broken\"]')")
    assert "kaput at import" in browser.text('tr[data-plugin="broken"] .reason')
    assert browser.text('tr[data-plugin="broken"] .badge') == "error"
    shoot(browser, "plugins")
    browser.click('tr[data-plugin="hooked"] button[data-action="disable"]')
    browser.wait_for(
        'document.querySelector(\'tr[data-plugin="hooked"] button[data-action="enable"]\')'
    )
    assert "config: disabled" in browser.text('tr[data-plugin="hooked"]')
    config = yaml.safe_load((home / "config.yaml").read_text())
    assert "hooked" in config["plugins"]["disabled"]


def test_the_hooks_page_shows_counts_rising_after_a_turn_in_the_observed_host(
    browser: Page,
    observed: tuple[PluginManager, DashboardServer, Path],
    tmp_path: Path,
) -> None:
    pm, server, _ = observed
    browser.goto(server.url)
    browser.click('nav a[data-page="Hooks"]')
    cell = 'section[data-hook="pre_llm_call"] tr[data-plugin="hooked"] .calls'
    browser.wait_for(f"document.querySelector('{cell}')")
    before = int(browser.text(cell))
    with Session(pm, cwd=tmp_path) as session:
        session.run_turn("hello there")
    browser.eval("document.querySelector('nav a[data-page=\"Hooks\"]').click()")
    browser.wait_for(f"Number(document.querySelector('{cell}').innerText) > {before}")
    assert browser.eval("document.querySelectorAll('svg.chart rect.bar').length") >= 1
    # The chart is per implementation when the calling layer times each one, else per hook.
    per = "implementation" if callable(getattr(pm, "add_call_observer", None)) else "hook"
    assert browser.eval("document.querySelector('svg.chart').getAttribute('aria-label')") == (
        f"time spent per {per}"
    )
    headings = browser.eval("Array.from(document.querySelectorAll('main h3'), e => e.innerText)")
    assert f"Time per {per}" in headings
    shoot(browser, "hooks")
    for page in ("Tools", "Memory", "Doctor"):
        browser.click(f'nav a[data-page="{page}"]')
        browser.wait_for(
            f"document.querySelector('main h2') && "
            f"document.querySelector('main h2').innerText === '{page}'"
        )
        shoot(browser, page.lower())


def test_the_achievements_tab_renders_the_sessions_of_the_observed_host(
    browser: Page,
    observed: tuple[PluginManager, DashboardServer, Path],
    tmp_path: Path,
) -> None:
    _, server, home = observed
    # Another process's turn: the plugin reads it back from state.db through hermes_state.
    ran = hermes(home, "-z", "run `echo badge`", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    browser.goto(server.url)
    browser.click('nav a[data-page="Achievements"]')
    browser.wait_for("document.querySelectorAll('.ach-card').length === 2")
    assert browser.text(".ach-count") == "1 / 2 unlocked"
    assert browser.text('.ach-card[data-id="terminal_goblin"] .ach-progress') == "1 / 3"
    shoot(browser, "plugin-tab")
    assert browser.eval("document.querySelectorAll('.ach-card svg circle').length") == 2
    # A state change re-renders in place: the filter keeps the page (and its icons).
    browser.click("button.ach-filter:not(.active)")
    browser.wait_for("document.querySelectorAll('.ach-card').length === 1")
    assert browser.eval("document.querySelectorAll('.ach-card svg circle').length") == 1
    assert (
        browser.eval("getComputedStyle(document.querySelector('.ach-card')).borderTopColor")
        == "rgb(255, 215, 0)"
    )  # its CSS loaded


def test_login_through_the_basic_provider_and_a_wrong_password_refused(
    browser: Page,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = isolated_home(tmp_path, monkeypatch)
    auth_plugins(home)
    write_config(
        home,
        enabled=["dashboard-basic"],
        dashboard={"basic_auth": {"username": "admin", "password": "correct-horse"}},
    )
    pm = create_manager(home)
    with start_dashboard(pm, login=True) as server:
        browser.goto(server.base_url + "/plugins-page-that-needs-login")
        browser.wait_for(
            "location.pathname === '/login' && "
            "document.querySelector('form[data-provider=\"basic\"]')"
        )
        shoot(browser, "login")
        browser.type('input[name="username"]', "admin")
        browser.type('input[name="password"]', "battery-staple")
        browser.click('button[type="submit"]')
        browser.wait_for("document.getElementById('login-error').innerText.length > 0")
        assert browser.text("#login-error") == "Invalid username or password."
        assert not any(c["name"] == "hermes_session_at" for c in browser.cookies())
        browser.type('input[name="password"]', "correct-horse")
        browser.click('button[type="submit"]')
        browser.wait_for(
            "document.getElementById('who') && "
            "document.getElementById('who').innerText.includes('admin')"
        )
        session = next(c for c in browser.cookies() if c["name"] == "hermes_session_at")
        assert session["httpOnly"] is True
        assert session["sameSite"] == "Lax"
        assert "correct-horse" not in browser.eval("document.documentElement.outerHTML")
        browser.click("#logout")
        browser.wait_for("location.pathname === '/login'")
        assert not any(c["name"] == "hermes_session_at" for c in browser.cookies())

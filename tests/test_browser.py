"""The browser family: the how-to's provider (docs/how-to/browser-provider.md) driving a site
served on 127.0.0.1 through the host's browser tools, the URL policy on every page it lands on,
and a Hermes-only provider (sessions, no ``open_page``) named in the tool's error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from homes import clean_home as home  # noqa: F401  (the fixture)
from local_http import Request, Server, as_html, redirect, running
from plugin_builders import load, user_plugin, write_config

from hermes_hooks import PluginManager

HOW_TO = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "browser-provider.md"
_BLOCK = re.compile(r"^```(\w+)\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)

HOME_PAGE = """<html><head><title>Corgi club</title></head><body>
<a href="/breeds">Breeds</a>
<form action="/find"><input name="q" placeholder="Search the club"></form>
</body></html>"""


@pytest.fixture
def site() -> Iterator[Server]:
    with running() as srv:
        srv.routes[("GET", "/")] = lambda r: as_html(HOME_PAGE)
        srv.routes[("GET", "/breeds")] = lambda r: as_html(
            "<html><head><title>Breeds</title></head><body><p>Pembroke and Cardigan</p></body>"
        )

        def find(request: Request) -> tuple[int, dict[str, str], bytes]:
            query = request.query["q"][0]
            return as_html(f"<html><head><title>Results for {query}</title></head></html>")

        srv.routes[("GET", "/find")] = find
        srv.routes[("GET", "/leave")] = lambda r: redirect("http://127.0.0.2:9/admin")
        yield srv


def install_how_to(home: Path) -> None:
    text = HOW_TO.read_text(encoding="utf-8")
    files = {path: body for _, path, body in _BLOCK.findall(text)}
    folder = home / "plugins" / "browser" / "http-reader"
    folder.mkdir(parents=True)
    for path, body in files.items():
        (folder / path.removeprefix("http-reader/")).write_text(body, encoding="utf-8")


def browse(pm: PluginManager, tool: str, task_id: str = "t1", **args: Any) -> dict[str, Any]:
    result = json.loads(pm.tools.dispatch(tool, args, task_id=task_id))
    assert isinstance(result, dict)
    return result


@pytest.fixture
def pm(home: Path, site: Server) -> PluginManager:
    install_how_to(home)
    write_config(
        home,
        ["browser/http-reader"],
        browser={"provider": "http-reader"},
        security={"private_url_allowlist": ["127.0.0.1"]},
    )
    return load(home, strict=True)


def test_the_how_tos_provider_is_driven_by_the_host_tools(pm: PluginManager, site: Server) -> None:
    assert pm.tools.is_available("browser_navigate")
    opened = browse(pm, "browser_navigate", url=site.url + "/")
    assert opened["success"] is True, opened
    assert (opened["title"], opened["provider"]) == ("Corgi club", "http-reader")
    snapshot = browse(pm, "browser_snapshot")["snapshot"]
    assert "[@e1] link 'Breeds'" in snapshot
    assert "[@e2] textbox 'Search the club'" in snapshot
    assert browse(pm, "browser_type", ref="@e2", text="tails")["success"] is True
    assert browse(pm, "browser_press", key="Enter")["title"] == "Results for tails"
    assert browse(pm, "browser_back")["title"] == "Corgi club"
    clicked = browse(pm, "browser_click", ref="@e1")
    assert (clicked["title"], clicked["url"]) == ("Breeds", site.url + "/breeds")
    assert "Pembroke" in browse(pm, "browser_snapshot", full=True)["snapshot"]
    assert browse(pm, "browser_close")["success"] is True
    after = browse(pm, "browser_snapshot")
    assert after["error_type"] == "no_session"
    assert site.paths() == ["GET /", "GET /find", "GET /", "GET /breeds"]


def test_each_task_has_its_own_session(pm: PluginManager, site: Server) -> None:
    browse(pm, "browser_navigate", task_id="a", url=site.url + "/")
    browse(pm, "browser_navigate", task_id="b", url=site.url + "/breeds")
    assert "Breeds" in browse(pm, "browser_snapshot", task_id="a")["snapshot"]
    assert browse(pm, "browser_snapshot", task_id="b")["url"] == site.url + "/breeds"
    assert "no browser session" in browse(pm, "browser_snapshot", task_id="c")["error"]


def test_loopback_is_refused_without_the_allowlist_and_never_requested(
    home: Path, site: Server
) -> None:
    install_how_to(home)
    write_config(home, ["browser/http-reader"], browser={"provider": "http-reader"})
    result = browse(load(home, strict=True), "browser_navigate", url=site.url + "/")
    assert result["success"] is False
    assert result["error_type"] == "url_blocked"
    assert "127.0.0.1" in result["error"]
    assert site.requests == []


def test_a_redirect_to_a_refused_address_shows_nothing(pm: PluginManager, site: Server) -> None:
    result = browse(pm, "browser_navigate", url=site.url + "/leave")
    assert result["success"] is False
    assert result["provider"] == "http-reader"
    assert "127.0.0.2" in result["error"]
    assert "title" not in result


HERMES_ONLY = """
from agent.browser_provider import BrowserProvider

CLOSED = []


class CloudBrowser(BrowserProvider):
    @property
    def name(self):
        return "cloud"

    def is_available(self):
        return True

    def create_session(self, task_id):
        return {"session_name": "s-" + task_id, "bb_session_id": "bb-1",
                "cdp_url": "wss://cloud.invalid/devtools", "features": {}}

    def close_session(self, session_id):
        CLOSED.append(session_id)
        return True

    def emergency_cleanup(self, session_id):
        pass


def register(ctx):
    ctx.register_browser_provider(CloudBrowser())
"""


def test_a_hermes_only_provider_is_called_and_named_in_the_error(home: Path) -> None:
    user_plugin(home, "cloud-browser", HERMES_ONLY, manifest={"kind": "backend"})
    write_config(home, ["cloud-browser"], browser={"provider": "cloud"})
    pm = load(home, strict=True)
    result = browse(pm, "browser_navigate", url="https://93.184.215.14/")
    assert result["success"] is False
    assert result["provider"] == "cloud"
    assert "'cloud'" in result["error"]
    assert "open_page()" in result["error"]
    module = next(m for k, m in __import__("sys").modules.items() if k.endswith("cloud_browser"))
    assert module.CLOSED == ["bb-1"]

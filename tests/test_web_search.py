"""The web search family: a Hermes-shaped provider, SearXNG against a local server that speaks
its JSON, the offline folder search, and ``web_extract`` with the URL policy (no SSRF).

Every HTTP exchange is with a server on 127.0.0.1 started here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from homes import bundled_home as home  # noqa: F401  (the fixture)
from local_http import Request, Server, as_html, as_json, redirect, running
from plugin_builders import load, user_plugin, write_config

from hermes_hooks import PluginManager


@pytest.fixture(autouse=True)
def no_searxng_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SEARXNG_URL", "SEARXNG_TIMEOUT", "HERMES_ALLOW_PRIVATE_URLS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[Server]:
    with running() as srv:
        yield srv


def call(pm: PluginManager, tool: str, **args: Any) -> dict[str, Any]:
    result = json.loads(pm.tools.dispatch(tool, args))
    assert isinstance(result, dict)
    return result


# --- a plugin shaped like Hermes's own ----------------------------------------------------------

HERMES_SHAPED = """
from agent.web_search_provider import WebSearchProvider, get_provider_env


class EchoSearch(WebSearchProvider):
    @property
    def name(self):
        return "echo"

    def is_available(self):
        return bool(get_provider_env("ECHO_SEARCH_KEY"))

    def supports_extract(self):
        return True

    def search(self, query, limit=5):
        rows = [
            {"title": f"{query} {i}", "url": f"https://example.com/{i}",
             "description": "d", "position": i}
            for i in range(1, 10)
        ]
        return {"success": True, "data": {"web": rows}}

    def extract(self, urls, **kwargs):
        return [{"url": u, "title": "t", "content": "page " + u, "raw_content": "x"} for u in urls]

    def get_setup_schema(self):
        return {"name": "Echo", "badge": "test", "tag": "",
                "env_vars": [{"key": "ECHO_SEARCH_KEY", "prompt": "key"}]}


def register(ctx):
    ctx.register_web_search_provider(EchoSearch())
"""


def echo_plugin(home: Path) -> None:
    user_plugin(home, "echo-search", HERMES_SHAPED, manifest={"kind": "backend"})


def test_a_hermes_shaped_provider_serves_both_tools(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    echo_plugin(home)
    monkeypatch.setenv("ECHO_SEARCH_KEY", "k")
    write_config(home, ["echo-search"], web={"backend": "echo", "extract_backend": "echo"})
    pm = load(home, strict=True)
    found = call(pm, "web_search", query="corgi", limit=3)
    assert found["success"] is True
    assert [r["title"] for r in found["data"]["web"]] == ["corgi 1", "corgi 2", "corgi 3"]
    url = "https://93.184.215.14/a"  # a public address: judged without a DNS lookup
    pages = call(pm, "web_extract", urls=[url])["results"]
    assert pages == [{"url": url, "title": "t", "content": "page " + url, "error": None}]


def test_an_unavailable_chosen_provider_is_not_called_and_says_why(home: Path) -> None:
    echo_plugin(home)
    write_config(home, ["echo-search"], web={"backend": "echo"})
    result = call(load(home, strict=True), "web_search", query="corgi")
    assert result["success"] is False
    assert result["error_type"] == "provider_unavailable"
    assert "unavailable" in result["error"]
    assert "ECHO_SEARCH_KEY" in result["error"]
    assert result["provider"] == "echo"


# --- SearXNG, against a server that speaks its JSON --------------------------------------------


def searxng_answer(request: Request) -> tuple[int, dict[str, str], bytes]:
    assert request.query["format"] == ["json"]
    query = request.query["q"][0]
    return as_json(
        {
            "query": query,
            "number_of_results": 3,
            "results": [
                {"title": "low", "url": "https://low.example", "content": "l", "score": 0.1},
                {"title": f"{query}!", "url": "https://top.example", "content": "t", "score": 9},
                {"title": "mid", "url": "https://mid.example", "content": "m", "score": 1.5},
            ],
        }
    )


def test_searxng_queries_the_instance_and_answers_in_hermes_shape(
    home: Path, server: Server
) -> None:
    server.routes[("GET", "/search")] = searxng_answer
    write_config(
        home, web={"backend": "searxng", "searxng": {"url": server.url + "/", "language": "en"}}
    )
    result = call(load(home, strict=True), "web_search", query="corgi facts", limit=2)
    assert result == {
        "success": True,
        "data": {
            "web": [
                {"title": "corgi facts!", "url": "https://top.example", "description": "t",
                 "position": 1},
                {"title": "mid", "url": "https://mid.example", "description": "m", "position": 2},
            ]
        },
    }  # fmt: skip
    (request,) = server.requests
    assert request.path == "/search"
    assert request.query["q"] == ["corgi facts"]
    assert request.query["language"] == ["en"]


def test_searxng_without_json_enabled_says_what_to_change(home: Path, server: Server) -> None:
    server.routes[("GET", "/search")] = lambda r: (403, {}, b"Forbidden")
    write_config(home, web={"backend": "searxng", "searxng": {"url": server.url}})
    result = call(load(home, strict=True), "web_search", query="x")
    assert result["success"] is False
    assert result["provider"] == "searxng"
    assert "search.formats" in result["error"]


def test_searxng_without_a_url_is_unavailable_with_the_key_to_set(home: Path) -> None:
    write_config(home, web={"backend": "searxng"})
    result = call(load(home, strict=True), "web_search", query="x")
    assert result["error_type"] == "provider_unavailable"
    assert "web.searxng.url" in result["error"]


# --- offline: a folder of documents ------------------------------------------------------------


def test_offline_is_the_default_and_searches_the_home_search_folder(home: Path) -> None:
    folder = home / "search"
    folder.mkdir()
    (folder / "corgi.md").write_text("# Corgis\n\nCorgis herd cattle in Wales.\n", "utf-8")
    (folder / "cats.txt").write_text("Cats sleep a lot.\n", "utf-8")
    (folder / "dogs.html").write_text(
        "<html><head><title>Dogs</title></head><body><p>Corgis and other dogs.</p></body></html>",
        "utf-8",
    )
    write_config(home)
    result = call(load(home, strict=True), "web_search", query="corgis")
    assert result["success"] is True
    hits = result["data"]["web"]
    assert {Path(h["url"].removeprefix("file://")).name for h in hits} == {"corgi.md", "dogs.html"}
    assert [h["position"] for h in hits] == [1, 2]
    assert all("Cats" not in h["description"] for h in hits)


def test_hermes_z_searches_offline_with_no_network(home: Path) -> None:
    (home / "search").mkdir()
    (home / "search" / "pembroke.md").write_text("Pembroke corgis have short tails.\n", "utf-8")
    write_config(home)
    done = subprocess.run(
        [sys.executable, "-m", "hermes_hooks", "-z", "search for pembroke corgis"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "pembroke.md" in done.stdout
    assert "short tails" in done.stdout


# --- web_extract and the URL policy ------------------------------------------------------------

PAGE = """<html><head><title>Corgi care</title></head><body>
<h1>Corgi care</h1><p>Brush <b>weekly</b>.</p><ul><li>walks</li><li>food</li></ul>
<script>var secret = 1;</script></body></html>"""


def test_extract_refuses_loopback_by_default_and_never_connects(home: Path, server: Server) -> None:
    server.routes[("GET", "/care")] = lambda r: as_html(PAGE)
    write_config(home)
    (page,) = call(load(home, strict=True), "web_extract", urls=[server.url + "/care"])["results"]
    assert page["content"] == ""
    assert "127.0.0.1" in page["error"]
    assert "private_url_allowlist" in page["error"]
    assert server.requests == []


def test_extract_with_the_allowlist_fetches_and_turns_html_into_markdown(
    home: Path, server: Server
) -> None:
    server.routes[("GET", "/care")] = lambda r: as_html(PAGE)
    write_config(home, security={"private_url_allowlist": ["127.0.0.1"]})
    (page,) = call(load(home, strict=True), "web_extract", urls=[server.url + "/care"])["results"]
    assert page["error"] is None, page
    assert page["title"] == "Corgi care"
    assert "# Corgi care" in page["content"]
    assert "**weekly**" in page["content"]
    assert "walks" in page["content"]
    assert "secret" not in page["content"]


@pytest.mark.parametrize("target", ["http://127.0.0.2:{port}/x", "http://169.254.169.254/latest"])
def test_a_redirect_to_a_refused_address_is_not_followed(
    home: Path, server: Server, target: str
) -> None:
    server.routes[("GET", "/go")] = lambda r: redirect(target.format(port=server.port))
    write_config(home, security={"private_url_allowlist": ["127.0.0.1"]})
    (page,) = call(load(home, strict=True), "web_extract", urls=[server.url + "/go"])["results"]
    assert page["content"] == ""
    host = target.split("/")[2].split(":")[0]
    assert host in page["error"]
    assert server.paths() == ["GET /go"]


def test_a_name_that_resolves_to_loopback_is_judged_by_its_address(home: Path) -> None:
    write_config(home)
    (page,) = call(load(home, strict=True), "web_extract", urls=["http://localhost:9/"])["results"]
    assert "127.0.0.1" in page["error"] or "::1" in page["error"]


def test_the_metadata_endpoint_stays_refused_even_when_private_urls_are_allowed(
    home: Path,
) -> None:
    write_config(home, security={"allow_private_urls": True})
    url = "http://169.254.169.254/latest/meta-data/"
    (page,) = call(load(home, strict=True), "web_extract", urls=[url])["results"]
    assert page["error"]
    assert page["content"] == ""


def test_a_broken_allowlist_names_the_field_and_the_item(home: Path) -> None:
    write_config(home, security={"private_url_allowlist": ["127.0.0.1", "not an address!"]})
    result = call(load(home, strict=True), "web_extract", urls=["https://93.184.215.14/"])
    assert result["error_type"] == "config_error"
    assert "security.private_url_allowlist item 2" in result["error"]


# --- the how-to's provider, docs/how-to/web-provider.md ------------------------------------------

HOW_TO = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "web-provider.md"
_BLOCK = re.compile(r"^```(\w+)\n# file: (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def install_how_to(home: Path) -> None:
    files = {path: body for _, path, body in _BLOCK.findall(HOW_TO.read_text("utf-8"))}
    folder = home / "plugins" / "web" / "my-search"
    folder.mkdir(parents=True)
    for path, body in files.items():
        (folder / path.removeprefix("my-search/")).write_text(body, encoding="utf-8")


def test_the_how_tos_provider_answers_web_search(
    home: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    @server.route("GET", "/v1/search")
    def hits(request: Request) -> tuple[int, dict[str, str], bytes]:
        found = [{"title": f"hit {i}", "link": f"https://e.example/{i}", "snippet": "s"}
                 for i in range(int(request.query["n"][0]) + 3)]  # fmt: skip
        return as_json({"hits": found})

    install_how_to(home)
    monkeypatch.setenv("MY_SEARCH_URL", server.url)
    monkeypatch.setenv("MY_SEARCH_API_KEY", "ms-key")
    write_config(home, ["web/my-search"], web={"backend": "my-search"})
    result = call(load(home, strict=True), "web_search", query="corgi", limit=2)
    assert result["data"]["web"] == [
        {"title": "hit 0", "url": "https://e.example/0", "description": "s", "position": 1},
        {"title": "hit 1", "url": "https://e.example/1", "description": "s", "position": 2},
    ]
    (request,) = server.requests
    assert request.headers["authorization"] == "Bearer ms-key"
    assert request.query["q"] == ["corgi"]


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hermes_hooks", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_without_its_key_the_plugin_is_listed_with_the_variable_and_can_be_chosen(
    home: Path,
) -> None:
    install_how_to(home)
    write_config(home, ["web/my-search"])
    listed = hermes(home, "tools", "web")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if "my-search" in x)
    assert "not available" in line or "not loaded" in line, listed.stdout
    assert "MY_SEARCH_API_KEY" in listed.stdout
    chosen = hermes(home, "tools", "web", "--provider", "my-search")
    assert chosen.returncode == 0, chosen.stderr
    config = yaml.safe_load((home / "config.yaml").read_text("utf-8"))
    assert config["web"]["backend"] == "my-search"
    result = call(load(home), "web_search", query="x")
    assert result["success"] is False
    assert "my-search" in result["error"]
    assert "MY_SEARCH_API_KEY" in result["error"]

"""searxng: ``web_search`` through any SearXNG instance's JSON API.

Search only, as in Hermes: SearXNG aggregates upstream engines but does not fetch pages (pair it
with an extract provider; the bundled ``local`` serves ``web_extract`` by default). The
instance answers ``GET <url>/search?q=...&format=json``; its ``settings.yml`` must list ``json``
under ``search.formats`` (else it answers 403, and this provider says so).

Configuration (``config.yaml``), or ``SEARXNG_URL`` (and ``SEARXNG_TIMEOUT``) as in Hermes::

    web:
      backend: searxng
      searxng:
        url: http://127.0.0.1:8888
        timeout: 15          # seconds
        categories: general  # optional, passed on
        language: en         # optional, passed on
"""

from __future__ import annotations

import logging
from typing import Any

from hermes_hooks import (
    PluginContext,
    WebSearchProvider,
    get_provider_env,
    load_web_section,
    search_failure,
    search_results,
    web_result,
)

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 15.0


def _settings() -> dict[str, Any]:
    try:
        return load_web_section("searxng")
    except Exception:  # a broken config is reported by the tool; here it means "no URL"
        return {}


def _url() -> str:
    configured = _settings().get("url")
    if isinstance(configured, str) and configured.strip():
        return configured.strip().rstrip("/")
    return get_provider_env("SEARXNG_URL").rstrip("/")


def _score(hit: dict[str, Any]) -> float:
    try:
        return float(hit.get("score") or 0)
    except (TypeError, ValueError):
        return 0.0


class SearXNGWebSearchProvider(WebSearchProvider):
    """Search via a SearXNG instance."""

    @property
    def name(self) -> str:
        return "searxng"

    @property
    def display_name(self) -> str:
        return "SearXNG"

    def is_available(self) -> bool:
        return bool(_url())

    def unavailable_reason(self) -> str:
        return "no instance URL: set web.searxng.url in config.yaml (or SEARXNG_URL)"

    def get_setup_schema(self) -> dict[str, Any]:
        return {
            "name": "SearXNG",
            "badge": "free · self-hosted",
            "tag": "Privacy-respecting metasearch; point web.searxng.url at your instance.",
            "env_vars": [],
        }

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        import httpx

        base = _url()
        if not base:
            return search_failure(self.unavailable_reason())
        settings = _settings()
        timeout = settings.get("timeout") or get_provider_env("SEARXNG_TIMEOUT") or DEFAULT_TIMEOUT
        params: dict[str, Any] = {"q": query, "format": "json", "pageno": 1}
        for key in ("categories", "language", "engines", "safesearch", "time_range"):
            if settings.get(key) not in (None, ""):
                params[key] = settings[key]
        try:
            response = httpx.get(
                f"{base}/search",
                params=params,
                headers={"Accept": "application/json"},
                timeout=max(float(timeout), 1.0),
            )
        except httpx.HTTPError as exc:
            return search_failure(f"Could not reach SearXNG at {base}: {exc}")
        if response.status_code == 403:
            return search_failure(
                f"SearXNG at {base} refused the JSON API (HTTP 403): add json to "
                f"search.formats in its settings.yml"
            )
        if response.status_code >= 400:
            return search_failure(f"SearXNG at {base} returned HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError:
            return search_failure(f"SearXNG at {base} did not answer JSON")
        raw = data.get("results") if isinstance(data, dict) else None
        if not isinstance(raw, list):
            return search_failure(f"SearXNG at {base} answered JSON without a results list")
        hits = sorted((r for r in raw if isinstance(r, dict)), key=_score, reverse=True)
        rows = [
            web_result(str(r.get("title", "")), str(r.get("url", "")), str(r.get("content", "")), i)
            for i, r in enumerate(hits[:limit], 1)
        ]
        logger.info("SearXNG search %r: %d results (of %d)", query, len(rows), len(raw))
        return search_results(rows)


def register(ctx: PluginContext) -> None:
    ctx.register_web_search_provider(SearXNGWebSearchProvider())

"""The ``web_search`` and ``web_extract`` host tools: the chosen provider, called safely.

Both are host tools of every manager (toolset ``web``), offered while a provider of their
capability is registered. Each call reads the config anew, chooses the provider
(:data:`~hermes_hooks.backends.web_search.registry.SEARCH` /
:data:`~hermes_hooks.backends.web_search.registry.EXTRACT`) and calls it as every family does
(:func:`~hermes_hooks.backends.calls.call_provider`: available first, bounded by
``web.timeout``, failures named). The answer is Hermes' shape: the provider's search dict, and
``{"results": [{"url", "title", "content", "error"}, ...]}`` for extract (``error`` is
``None`` for a page that was read); a failure is ``{"success": false, "error",
"error_type", "provider"}``.

``web_extract`` judges every URL by the URL policy before a provider sees it, and every page
a provider returns by the URL it says it came from (a redirect to a private address is
withheld): see :mod:`~hermes_hooks.backends.web_search.urlsafety`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.calls import call_provider, read_timeout
from hermes_hooks.backends.family import FamilyError, ProviderRegistry
from hermes_hooks.backends.home import using_hermes_home
from hermes_hooks.backends.web_search.provider import WebSearchProvider, page_error
from hermes_hooks.backends.web_search.registry import (
    EXTRACT,
    SEARCH,
    WEB_SEARCH,
    can_extract,
    can_search as _can_search,
)
from hermes_hooks.backends.web_search.urlsafety import UrlPolicy, check_url
from hermes_hooks.errors import ConfigError
from hermes_hooks.plugins.config import config_path, load_config
from hermes_hooks.registries.base import HOST, Handle

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = [
    "DEFAULT_CHAR_LIMIT",
    "MAX_URLS",
    "WEB_EXTRACT_SCHEMA",
    "WEB_SEARCH_SCHEMA",
    "install_web_tools",
    "run_web_extract",
    "run_web_search",
]

TOOLSET: Final = "web"
MAX_URLS: Final = 5
DEFAULT_CHAR_LIMIT: Final = 15_000
MIN_CHAR_LIMIT: Final = 2_000
MAX_CHAR_LIMIT: Final = 90_000

WEB_SEARCH_SCHEMA: Final[dict[str, Any]] = {
    "name": "web_search",
    "description": (
        "Search the web for information. Returns up to 5 results by default with titles, "
        "URLs, and descriptions. The query is passed through to the configured backend, so "
        'operators such as site:domain, filetype:pdf, -term and "exact phrase" may work '
        "when the backend supports them."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The search query to look up."},
            "limit": {
                "type": "integer",
                "description": "Maximum number of results to return. Defaults to 5.",
                "minimum": 1,
                "maximum": 100,
                "default": 5,
            },
        },
        "required": ["query"],
    },
}

WEB_EXTRACT_SCHEMA: Final[dict[str, Any]] = {
    "name": "web_extract",
    "description": (
        "Extract the readable content of up to 5 web pages as Markdown text. Long pages are "
        "cut at char_limit characters. Private and local network addresses are refused."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "urls": {
                "type": "array",
                "items": {"type": "string"},
                "description": "URLs to extract content from (max 5 URLs per call).",
                "maxItems": MAX_URLS,
            },
            "char_limit": {
                "type": "integer",
                "description": (
                    "Maximum characters returned per page. Defaults to web.extract_char_limit "
                    "(15,000); allowed range 2,000 to 90,000."
                ),
                "minimum": MIN_CHAR_LIMIT,
                "maximum": MAX_CHAR_LIMIT,
            },
        },
        "required": ["urls"],
    },
}


def _failure(error: str, error_type: str, provider: str = "") -> dict[str, Any]:
    return {"success": False, "error": error, "error_type": error_type, "provider": provider}


def _int(value: object, default: int, low: int, high: int) -> int:
    if isinstance(value, bool):
        return default
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default
    return int(min(max(number, low), high))


def _context(
    registry: ProviderRegistry[WebSearchProvider], selection: Any
) -> tuple[WebSearchProvider, Mapping[str, Any], float, Path]:
    """Return the provider, the whole config, the call bound and the home, or raise."""
    home = registry.config_home()
    config = load_config(home)
    settings = WEB_SEARCH.settings_from(config, config_path(home))
    provider = registry.select_provider(settings, selection=selection)
    section = config.get("web") or {}
    timeout = read_timeout(WEB_SEARCH, section, config_path(home))
    return provider, config, timeout, home


def _name(provider: object) -> str:
    return str(getattr(provider, "name", ""))


def run_web_search(
    registry: ProviderRegistry[WebSearchProvider], args: Mapping[str, Any]
) -> dict[str, Any]:
    """Serve one ``web_search`` call: the provider's dict, or a failure dict."""
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        return _failure("query is required: what to search the web for", "invalid_input")
    limit = _int(args.get("limit"), 5, 1, 100)
    try:
        provider, _config, timeout, home = _context(registry, SEARCH)
    except FamilyError as exc:
        return _failure(str(exc), exc.error_type)
    except ConfigError as exc:
        return _failure(f"cannot read the web configuration: {exc}", "config_error")
    name = _name(provider)
    who = f"web search provider {name!r}"
    try:
        with using_hermes_home(home):
            result = call_provider(
                WEB_SEARCH, provider, "search", query.strip(), limit, timeout=timeout,
                registry=registry,
            )  # fmt: skip
    except FamilyError as exc:
        return _failure(str(exc), exc.error_type, name)
    if not isinstance(result, dict):
        return _failure(
            f"{who} returned {type(result).__name__} from search(), expected the dict "
            f'{{"success": true, "data": {{"web": [...]}}}}',
            "provider_contract",
            name,
        )
    if result.get("success") is not True:
        error = result.get("error")
        return _failure(
            str(error) if error else f"{who} reported a failure without a message",
            str(result.get("error_type") or "provider_error"),
            name,
        )
    data = result.get("data")
    hits = data.get("web") if isinstance(data, dict) else None
    if not isinstance(hits, list) or not all(isinstance(h, dict) for h in hits):
        return _failure(
            f"{who} reported success without a list of results in data.web (found "
            f"{type(hits).__name__})",
            "provider_contract",
            name,
        )
    if len(hits) > limit:
        result = {**result, "data": {**data, "web": hits[:limit]}}  # type: ignore[dict-item]
    return result


def _url_of(item: object) -> str | None:
    """Accept a URL string or a search hit (``{"url": ...}`` / ``{"href": ...}``)."""
    if isinstance(item, str) and item.strip():
        return item.strip()
    if isinstance(item, Mapping):
        for key in ("url", "href"):
            value = item.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    omitted = len(text) - limit
    return f"{text[:limit]}\n\n[... {omitted} more characters not shown: ask for fewer pages or a higher char_limit ...]"  # noqa: E501


def run_web_extract(
    registry: ProviderRegistry[WebSearchProvider], args: Mapping[str, Any]
) -> dict[str, Any]:
    """Serve one ``web_extract`` call: ``{"results": [...]}`` in input order, or a failure."""
    raw = args.get("urls")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        return _failure("urls is required: a list of up to 5 page URLs", "invalid_input")
    if len(raw) > MAX_URLS:
        return _failure(f"at most {MAX_URLS} URLs per call, {len(raw)} were given", "invalid_input")
    try:
        provider, config, timeout, home = _context(registry, EXTRACT)
        policy = UrlPolicy.from_config(config, config_path(home))
        configured = (config.get("web") or {}).get("extract_char_limit")
    except FamilyError as exc:
        return _failure(str(exc), exc.error_type)
    except ConfigError as exc:
        return _failure(f"cannot read the configuration: {exc}", "config_error")
    default_limit = _int(configured, DEFAULT_CHAR_LIMIT, MIN_CHAR_LIMIT, MAX_CHAR_LIMIT)
    char_limit = _int(args.get("char_limit"), default_limit, MIN_CHAR_LIMIT, MAX_CHAR_LIMIT)
    name = _name(provider)
    who = f"web search provider {name!r}"
    results: list[dict[str, Any] | None] = [None] * len(raw)
    safe: list[tuple[int, str]] = []
    for index, item in enumerate(raw):
        url = _url_of(item)
        if url is None:
            results[index] = page_error("", f"item {index} is not a URL: {item!r}")
            continue
        reason = check_url(url, policy)
        if reason is not None:
            results[index] = page_error(url, reason)
        else:
            safe.append((index, url))
    if safe:
        try:
            with using_hermes_home(home):
                answer = call_provider(
                    WEB_SEARCH, provider, "extract", [u for _, u in safe], timeout=timeout,
                    registry=registry,
                )  # fmt: skip
        except FamilyError as exc:
            return _failure(str(exc), exc.error_type, name)
        if not isinstance(answer, list | tuple) or not all(isinstance(a, dict) for a in answer):
            return _failure(
                f"{who} returned {type(answer).__name__} from extract(), expected a list of "
                f"dicts, one per URL",
                "provider_contract",
                name,
            )
        for position, (index, url) in enumerate(safe):
            if position >= len(answer):
                results[index] = page_error(url, f"{who} returned no result for this URL")
                continue
            page = dict(answer[position])
            found = page.get("url")
            final = found if isinstance(found, str) and found else url
            reason = check_url(final, policy) if final != url else None
            if reason is not None:
                page = page_error(final, f"withheld: the page came from {final}: {reason}")
            content = page.get("content")
            error = page.get("error")
            # Hermes' trimmed shape: raw_content and metadata are not for the model
            results[index] = {
                "url": page.get("url") or url,
                "title": str(page.get("title") or ""),
                "content": _cut(content, char_limit) if isinstance(content, str) else "",
                "error": str(error) if error else None,
            }
    return {"results": [_trimmed(r) for r in results]}


def _trimmed(page: dict[str, Any] | None) -> dict[str, Any]:
    """Return ``page`` in Hermes' shape: ``url``, ``title``, ``content``, ``error``."""
    page = page or {}
    error = page.get("error")
    return {
        "url": str(page.get("url") or ""),
        "title": str(page.get("title") or ""),
        "content": str(page.get("content") or ""),
        "error": str(error) if error else None,
    }


def _handler(
    run: Callable[[ProviderRegistry[WebSearchProvider], Mapping[str, Any]], dict[str, Any]],
    registry: ProviderRegistry[WebSearchProvider],
) -> Callable[..., str]:
    def handler(args: Mapping[str, Any], **kwargs: Any) -> str:
        return json.dumps(run(registry, args), ensure_ascii=False, default=str)

    handler.__name__ = run.__name__.removeprefix("run_")
    return handler


def install_web_tools(
    pm: PluginManager, registry: ProviderRegistry[WebSearchProvider]
) -> list[Handle]:
    """Register ``web_search`` and ``web_extract`` as host tools of ``pm``."""

    def can(check: Callable[[object], bool]) -> Callable[[], bool]:
        def offered() -> bool:
            return any(check(p) for p in registry.list_providers())

        return offered

    search_offered = can(_can_search)
    search_offered.__doc__ = "Offered while a web search provider that can search is registered"
    extract_offered = can(can_extract)
    extract_offered.__doc__ = "Offered while a web search provider that can extract is registered"
    return [
        pm.tools.register_tool(
            "web_search",
            TOOLSET,
            WEB_SEARCH_SCHEMA,
            _handler(run_web_search, registry),
            check_fn=search_offered,
            emoji="🔍",
            owner=HOST,
        ),
        pm.tools.register_tool(
            "web_extract",
            TOOLSET,
            WEB_EXTRACT_SCHEMA,
            _handler(run_web_extract, registry),
            check_fn=extract_offered,
            emoji="📄",
            owner=HOST,
        ),
    ]

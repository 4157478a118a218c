"""Web search and extraction: the provider contract, its family and the two web tools.

A provider written for Hermes works unchanged (``agent.web_search_provider`` is served by the
compatibility layer); one written for hermes-hooks imports from ``hermes_hooks``::

    from hermes_hooks import WebSearchProvider, search_results, web_result, document

and registers with ``ctx.register_web_search_provider(MyProvider())``. ``web.backend`` chooses
the search provider, ``web.extract_backend`` the extract one. See ``docs/how-to/web-provider.md``.
"""

from __future__ import annotations

from hermes_hooks.backends.web_search.fetch import FetchedPage, FetchError, fetch_url
from hermes_hooks.backends.web_search.provider import (
    WebSearchProvider,
    document,
    get_provider_env,
    load_web_section,
    page_error,
    search_failure,
    search_results,
    web_result,
)
from hermes_hooks.backends.web_search.registry import EXTRACT, SEARCH, WEB_SEARCH
from hermes_hooks.backends.web_search.text import html_to_text
from hermes_hooks.backends.web_search.urlsafety import UrlBlockedError, UrlPolicy, check_url

__all__ = [
    "EXTRACT",
    "SEARCH",
    "WEB_SEARCH",
    "FetchError",
    "FetchedPage",
    "UrlBlockedError",
    "UrlPolicy",
    "WebSearchProvider",
    "check_url",
    "document",
    "fetch_url",
    "get_provider_env",
    "html_to_text",
    "load_web_section",
    "page_error",
    "search_failure",
    "search_results",
    "web_result",
]

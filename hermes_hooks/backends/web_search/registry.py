"""The web search family: ``web.backend`` chooses who searches, ``web.extract_backend`` who reads.

As in Hermes' ``agent/web_search_registry.py``: ``web.search_backend`` (when set) wins over
``web.backend`` for search; ``web.extract_backend`` falls back to ``web.backend``, passing over
a search-only provider there (``web.backend: searxng`` still lets ``local`` extract). A
configured name is served even when that provider is unavailable (the tool then says why);
when nothing is configured, the single available provider of the capability serves, else the
bundled default: ``offline`` for search, ``local`` for extract.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_hooks.backends.family import Family, ProviderRegistry, Selection
from hermes_hooks.backends.web_search.provider import WebSearchProvider

if TYPE_CHECKING:
    from hermes_hooks.plugins.manager import PluginManager

__all__ = ["EXTRACT", "SEARCH", "WEB_SEARCH", "can_extract", "can_search"]


def can_search(provider: object) -> bool:
    """Tell whether ``provider`` answers ``web_search`` (its ``supports_search()``)."""
    return isinstance(provider, WebSearchProvider) and bool(provider.supports_search())


def can_extract(provider: object) -> bool:
    """Tell whether ``provider`` answers ``web_extract`` (its ``supports_extract()``)."""
    return isinstance(provider, WebSearchProvider) and bool(provider.supports_extract())


SEARCH: Final = Selection(
    "web.backend",
    default="offline",
    accepts=can_search,
    override="web.search_backend",
    serves="web_search",
)
"""Who serves ``web_search``."""

EXTRACT: Final = Selection(
    "web.extract_backend",
    default="local",
    accepts=can_extract,
    fallback="web.backend",
    cli_option="--extract-provider",
    serves="web_extract",
)
"""Who serves ``web_extract``."""


def _flag(provider: WebSearchProvider, method: str) -> bool:
    try:
        return bool(getattr(provider, method)())
    except Exception:  # a broken provider must not break the listing
        return False


def _describe(provider: WebSearchProvider) -> dict[str, Any]:
    return {
        "search": _flag(provider, "supports_search"),
        "extract": _flag(provider, "supports_extract"),
    }


def _detail_lines(described: Mapping[str, Any]) -> list[str]:
    if not described.get("loaded", True):
        return []
    can = [what for what in ("search", "extract") if described.get(what)]
    return [f"offers: {' and '.join(can) or 'nothing (neither search nor extract)'}"]


def _install_tools(manager: PluginManager, registry: ProviderRegistry[WebSearchProvider]) -> None:
    from hermes_hooks.backends.web_search.tool import install_web_tools

    install_web_tools(manager, registry)


WEB_SEARCH: Final[Family[WebSearchProvider]] = Family(
    name="web_search",
    title="web search",
    provider_type=WebSearchProvider,
    selections=(SEARCH, EXTRACT),
    cli_name="web",
    cli_examples=("--provider searxng", "--extract-provider local", "--json"),
    ctx_method="register_web_search_provider",
    provider_kind="web search provider",
    install_tools=_install_tools,
    tool_names=("web_search", "web_extract"),
    none_registered_hint=(
        "; the bundled 'web/offline' searches $HERMES_HOME/search/ and 'web/local' extracts "
        "pages, with no key"
    ),
    describe_extra=_describe,
    detail_lines=_detail_lines,
    categories=("web",),
    manifest_field="provides_web_providers",
    timeout_key="web.timeout",
    default_timeout=60.0,
)
"""The web search family: ``web_search`` and ``web_extract`` are served by its providers."""

"""The ``WebSearchProvider`` ABC, ``get_provider_env`` and the result shapes of the web tools.

Faithful to Hermes' ``agent/web_search_provider.py``: a provider implements ``name`` and
``is_available()`` and at least one of ``search()`` and ``extract()``; ``supports_search()``
(true by default) and ``supports_extract()`` (false by default) route each tool to it.
``web.backend`` chooses the search provider and ``web.extract_backend`` the extract one.

The shapes, as Hermes has them (the tools pass them on to the model unchanged)::

    search:  {"success": True, "data": {"web": [{"title", "url", "description", "position"}]}}
    extract: [{"url", "title", "content", "raw_content", "metadata"?, "error"?}, ...]
    failure: {"success": False, "error": str}

:func:`search_results`, :func:`search_failure`, :func:`document` and :func:`page_error` build
them; ``extract()`` reports a page it could not read as an entry with ``error``, never by
raising. ``extract()`` may be ``async def``.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Sequence
from typing import Any

from hermes_hooks.backends.home import active_home

__all__ = [
    "WebSearchProvider",
    "document",
    "get_provider_env",
    "load_web_section",
    "page_error",
    "search_failure",
    "search_results",
    "web_result",
]


def get_provider_env(name: str) -> str:
    """Return variable ``name``, stripped: the environment first, then ``$HERMES_HOME/.env``.

    ``""`` when it is set in neither (as Hermes' helper does), so that a key saved with
    ``hermes tools`` is seen by a provider in any process of the home.
    """
    value = os.environ.get(name)
    if value is None or not value.strip():
        from hermes_hooks.plugins.envfile import read_env_file

        try:
            value = read_env_file(active_home()).get(name)
        except Exception:  # a missing or unreadable .env is no value
            value = None
    return (value or "").strip()


def load_web_section(provider: str | None = None) -> dict[str, Any]:
    """Return ``web`` (or its ``web.<provider>`` sub-section) of the active home's config.

    For providers reading their own keys (``web.searxng.url``); a missing section is ``{}``.

    :raises ConfigError: ``config.yaml`` cannot be read, or the section is not a mapping.
    """
    from hermes_hooks.plugins.config import config_path, load_config
    from hermes_hooks.plugins.settings import Table, keys_of, read_mapping

    home = active_home()
    section = load_config(home).get("web")
    fields = (provider,) if provider is not None else ()
    keys = keys_of("web", fields, defaults=False, kind=Table())
    values, _ = read_mapping(keys, section, source=config_path(home))
    if provider is None:
        return dict(section or {})
    return dict(values[provider] or {})


class WebSearchProvider(abc.ABC):
    """A web search and/or extract backend behind ``web_search`` and ``web_extract``.

    Register an instance with ``ctx.register_web_search_provider(provider)``.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Stable identifier used in ``web.backend``: lower case, no spaces."""

    @property
    def display_name(self) -> str:
        """Human-readable label shown by ``hermes tools web``; ``name`` by default."""
        return self.name

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Return whether it can serve calls now; cheap (a key, a URL), never the network."""

    def is_keyless_available(self) -> bool:
        """Return whether it can serve without credentials (a free tier); false by default."""
        return False

    def supports_search(self) -> bool:
        """Return whether :meth:`search` is implemented (``web.backend`` may choose it)."""
        return True

    def supports_extract(self) -> bool:
        """Return whether :meth:`extract` is implemented (``web.extract_backend`` may)."""
        return False

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        """Search the web; return :func:`search_results` or :func:`search_failure`."""
        raise NotImplementedError(f"{self.name} does not support search (override supports_search)")

    def extract(self, urls: list[str], **kwargs: Any) -> Any:
        """Return one :func:`document` (or :func:`page_error`) per URL, in order.

        May be ``async def``. Unknown keyword arguments (``format``, ``max_chars``) are ignored.
        """
        raise NotImplementedError(
            f"{self.name} does not support extract (override supports_extract)"
        )

    def get_setup_schema(self) -> dict[str, Any]:
        """Return picker metadata: ``name``, ``badge``, ``tag`` and the ``env_vars`` to ask for."""
        return {"name": self.display_name, "badge": "", "tag": "", "env_vars": []}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def web_result(title: str, url: str, description: str, position: int) -> dict[str, Any]:
    """Return one search hit in Hermes' key order (it reaches the model as JSON)."""
    return {"title": title, "url": url, "description": description, "position": position}


def search_results(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Return the success shape of ``search()`` around ``results`` (see :func:`web_result`)."""
    return {"success": True, "data": {"web": list(results)}}


def search_failure(error: str) -> dict[str, Any]:
    """Return the failure shape of ``search()``."""
    return {"success": False, "error": error}


def document(
    url: str, title: str, content: str, *, metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Return one extracted page; ``raw_content`` mirrors ``content`` as in Hermes."""
    return {
        "url": url,
        "title": title,
        "content": content,
        "raw_content": content,
        "metadata": {"sourceURL": url, "title": title, **(metadata or {})},
    }


def page_error(url: str, error: str) -> dict[str, Any]:
    """Return the entry of a page that could not be extracted."""
    return {"url": url, "title": "", "content": "", "error": error}

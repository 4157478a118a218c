"""web-local: ``web_extract`` for simple public pages, fetched directly, no service, no key.

As Hermes' ``web-local``: extraction only (``web.extract_backend: local``). Each URL is fetched
with :func:`hermes_hooks.fetch_url`, which judges the host's resolved addresses, and every
redirect's, by the URL policy (private, loopback and link-local addresses are refused unless
``security.private_url_allowlist`` allows them) and dials only what it judged. HTML becomes
Markdown (:func:`hermes_hooks.html_to_text`), ``text/*`` is kept as it is; anything else (a
PDF, an image) is reported per URL.

Configuration (``config.yaml``)::

    web:
      local:
        timeout: 30            # seconds per page
        max_bytes: 5000000     # a longer body is cut
"""

from __future__ import annotations

from typing import Any

from hermes_hooks import (
    FetchError,
    PluginContext,
    UrlBlockedError,
    WebSearchProvider,
    document,
    fetch_url,
    html_to_text,
    load_web_section,
    page_error,
)

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BYTES = 5_000_000
_HTML = ("text/html", "application/xhtml+xml")


class LocalWebExtractProvider(WebSearchProvider):
    """Fetches pages itself and hands their text to the model."""

    @property
    def name(self) -> str:
        return "local"

    @property
    def display_name(self) -> str:
        return "Local page extractor"

    def is_available(self) -> bool:
        return True

    def supports_search(self) -> bool:
        return False

    def supports_extract(self) -> bool:
        return True

    def get_setup_schema(self) -> dict[str, Any]:
        return {
            "name": self.display_name,
            "badge": "free · no key",
            "tag": "Fetches public HTML and text pages directly; no extraction service.",
            "env_vars": [],
        }

    def extract(self, urls: list[str], **kwargs: Any) -> list[dict[str, Any]]:
        settings = load_web_section("local")
        timeout = float(settings.get("timeout") or DEFAULT_TIMEOUT)
        max_bytes = int(settings.get("max_bytes") or DEFAULT_MAX_BYTES)
        return [self._one(url, timeout, max_bytes) for url in urls]

    @staticmethod
    def _one(url: str, timeout: float, max_bytes: int) -> dict[str, Any]:
        try:
            page = fetch_url(url, timeout=timeout, max_bytes=max_bytes)
        except UrlBlockedError as exc:
            return page_error(url, str(exc))
        except FetchError as exc:
            return page_error(url, f"local extraction failed: {exc}")
        if page.status >= 400:
            return page_error(page.url, f"the server answered HTTP {page.status}")
        metadata = {"content_type": page.content_type, "truncated": page.truncated}
        if page.content_type in _HTML or not page.content_type:
            title, text = html_to_text(page.text)
            return document(page.url, title, text, metadata=metadata)
        if page.content_type.startswith("text/"):
            return document(page.url, "", page.text.strip(), metadata=metadata)
        return page_error(
            page.url,
            f"the local extractor reads HTML and text only, this is {page.content_type}; "
            f"choose another web.extract_backend for it",
        )


def register(ctx: PluginContext) -> None:
    ctx.register_web_search_provider(LocalWebExtractProvider())

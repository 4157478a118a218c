"""Hermes' ``hermes_cli.urllib_security``: urllib requests that keep credentials on one origin.

``open_credentialed_url`` opens a request carrying an API key the way ``urlopen`` would (the
process's installed opener, its proxies and TLS settings), except that a redirect to another
origin (scheme, host, port) drops every header but ``Accept`` and ``User-Agent``: a provider's
``302`` to another host never receives the ``Authorization`` or ``x-api-key`` header.
"""

from __future__ import annotations

import copy
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from http.client import HTTPMessage
from typing import IO, Any, Final

__all__ = ["SafeCredentialRedirectHandler", "open_credentialed_url", "url_origin"]

_SAFE_HEADERS: Final = frozenset({"accept", "user-agent"})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def url_origin(url: str) -> tuple[str, str, int | None]:
    """Return ``(scheme, host, port)`` of ``url``, the port made explicit."""
    parsed = urllib.parse.urlparse(url)
    scheme = (parsed.scheme or "").lower()
    port = parsed.port
    host = (parsed.hostname or "").lower().rstrip(".")
    return scheme, host, port if port is not None else _DEFAULT_PORTS.get(scheme)


def _strip(request: urllib.request.Request, keep: frozenset[str]) -> None:
    for name, _ in list(request.header_items()):
        if name.lower() not in keep:
            request.remove_header(name)


class SafeCredentialRedirectHandler(urllib.request.HTTPRedirectHandler):
    """Follows redirects, keeping the request's headers only while the origin stays the same."""

    def __init__(
        self, original_url: str, *, cross_origin_safe_headers: Iterable[str] = _SAFE_HEADERS
    ) -> None:
        self._origin = url_origin(original_url)
        self._keep = frozenset(str(name).lower() for name in cross_origin_safe_headers)

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        redirected = super().redirect_request(req, fp, code, msg, headers, newurl)
        if redirected is not None:
            target = urllib.parse.urljoin(req.full_url, newurl)
            if url_origin(target) != self._origin:
                _strip(redirected, self._keep)
        return redirected


class _CrossOriginSanitizer(urllib.request.BaseHandler):
    """Strips headers the other handlers added, once a request has left the origin."""

    handler_order = 10**9

    def __init__(self, original_url: str) -> None:
        self._origin = url_origin(original_url)

    def _sanitize(self, request: urllib.request.Request) -> urllib.request.Request:
        if url_origin(request.full_url) != self._origin:
            _strip(request, _SAFE_HEADERS)
        return request

    http_request = _sanitize
    https_request = _sanitize


def open_credentialed_url(
    request: urllib.request.Request,
    *,
    timeout: float,
    opener_factory: Callable[..., Any] | None = None,
) -> Any:
    """Open ``request`` (see the module docstring) and return the response.

    :param opener_factory: called with the redirect handler to build the opener (a test seam,
        as in Hermes); by default the installed opener's handlers are kept, its redirect
        handler replaced.
    """
    if opener_factory is not None:
        return opener_factory(SafeCredentialRedirectHandler(request.full_url)).open(
            request, timeout=timeout
        )
    installed = getattr(urllib.request, "_opener", None) or urllib.request.build_opener()
    handlers = [
        copy.copy(handler)
        for handler in getattr(installed, "handlers", ())
        if not isinstance(handler, urllib.request.HTTPRedirectHandler)
    ]
    handlers += [
        SafeCredentialRedirectHandler(request.full_url),
        _CrossOriginSanitizer(request.full_url),
    ]
    opener = urllib.request.build_opener(*handlers)
    for name, value in getattr(installed, "addheaders", ()):
        if not request.has_header(name.capitalize()) and not request.has_header(name):
            request.add_header(name, value)
    opener.addheaders = []
    return opener.open(request, timeout=timeout)

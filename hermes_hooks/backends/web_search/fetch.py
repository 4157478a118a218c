"""Fetching a page for the web tools: every hop judged by the URL policy, at connect time.

:func:`fetch_url` is what the bundled extractor uses, and what a plugin author uses to fetch
a page the model named. It follows redirects itself (at most :data:`MAX_REDIRECTS`), and its
connections resolve each host, refuse it when one of its addresses is refused
(:class:`~hermes_hooks.backends.web_search.urlsafety.UrlPolicy`) and dial the very address
that was judged, so a name that resolves to a public address once and to ``127.0.0.1`` the
next time (DNS rebinding) cannot slip through. Proxies from the environment are not used:
the policy judges the address that is dialled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin

import attrs

from hermes_hooks.backends.home import active_home
from hermes_hooks.backends.web_search.urlsafety import UrlBlockedError, UrlPolicy, split_url
from hermes_hooks.errors import HermesHooksError

if TYPE_CHECKING:
    import ssl

__all__ = ["MAX_REDIRECTS", "FetchError", "FetchedPage", "fetch_url"]

MAX_REDIRECTS: Final = 5
DEFAULT_MAX_BYTES: Final = 5 * 1024 * 1024
USER_AGENT: Final = "hermes-hooks web_extract (+https://github.com/NousResearch/hermes-agent)"
_CHARSET: Final = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


class FetchError(HermesHooksError):
    """A page could not be fetched: the server could not be reached, or answered badly."""


@attrs.frozen
class FetchedPage:
    """A fetched page.

    :param url: the URL it was finally fetched from (after redirects).
    :param status: the HTTP status.
    :param content_type: the ``Content-Type`` without parameters, lower case.
    :param content: the body (at most the ``max_bytes`` asked for).
    :param truncated: the body was longer and was cut.
    """

    url: str
    status: int
    content_type: str
    content: bytes
    truncated: bool = False
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def text(self) -> str:
        """The body decoded: the ``Content-Type`` charset, else an HTML ``<meta>``, else UTF-8."""
        charset = None
        for name, value in self.headers:
            if name == "content-type" and "charset=" in value.lower():
                charset = value.lower().split("charset=", 1)[1].split(";", 1)[0].strip(' "')
        if charset is None:
            found = _CHARSET.search(self.content[:4096])
            charset = found.group(1).decode("ascii") if found else "utf-8"
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


class _GuardedBackend:
    """An httpcore network backend that dials only addresses the policy allows."""

    def __init__(self, policy: UrlPolicy) -> None:
        import httpcore

        self._inner = httpcore.SyncBackend()
        self._policy = policy

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        import httpcore

        try:
            addresses = self._policy.resolve(host, port)
        except UrlBlockedError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        last: Exception | None = None
        for address in addresses:
            try:
                return self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                last = exc
        assert last is not None
        raise last

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> Any:
        raise UrlBlockedError("unix sockets are not reached by the web tools")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _ssl_context() -> ssl.SSLContext:
    import ssl  # here: 18 ms at start-up otherwise, for every command that never fetches

    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:  # httpx depends on certifi; a stripped install still works
        return ssl.create_default_context()


def fetch_url(
    url: str,
    *,
    policy: UrlPolicy | None = None,
    timeout: float = 30.0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    headers: dict[str, str] | None = None,
) -> FetchedPage:
    """GET ``url`` under the URL policy, following redirects; see the module's docstring.

    :param policy: by default the policy of the active home's ``config.yaml``.
    :param timeout: seconds for connecting and for each read.
    :param max_bytes: the body is cut there (``truncated`` says so).
    :raises UrlBlockedError: the URL, or one it redirected to, is refused by the policy.
    :raises FetchError: the server could not be reached, or redirected too often.
    """
    import httpcore

    policy = policy if policy is not None else UrlPolicy.from_home(active_home())
    sent = {"User-Agent": USER_AGENT, "Accept": "text/html,text/plain;q=0.9,*/*;q=0.5"}
    sent.update(headers or {})
    current = url.strip()
    with httpcore.ConnectionPool(
        ssl_context=_ssl_context(),
        network_backend=_GuardedBackend(policy),  # type: ignore[arg-type]
        retries=0,
    ) as pool:
        for _ in range(MAX_REDIRECTS + 1):
            split_url(current)  # only http(s), with a host
            extensions = {"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout)}
            try:
                with pool.stream(
                    "GET", current, headers=list(sent.items()), extensions=extensions
                ) as response:
                    got = [
                        (k.decode("latin-1").lower(), v.decode("latin-1"))
                        for k, v in response.headers
                    ]
                    location = next((v for k, v in got if k == "location"), None)
                    if 300 <= response.status < 400 and location:
                        current = urljoin(current, location.strip())
                        continue
                    body = bytearray()
                    truncated = False
                    for chunk in response.iter_stream():
                        body.extend(chunk)
                        if len(body) > max_bytes:
                            del body[max_bytes:]
                            truncated = True
                            break
            except httpcore.ConnectError as exc:
                cause = exc.__cause__
                if isinstance(cause, UrlBlockedError):
                    raise UrlBlockedError(f"{cause} (fetching {current})") from cause
                raise FetchError(f"cannot reach {current}: {exc}") from exc
            except httpcore.TimeoutException as exc:
                raise FetchError(f"{current} did not answer within {timeout:g} s") from exc
            except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
                raise FetchError(f"fetching {current} failed: {exc}") from exc
            content_type = next((v for k, v in got if k == "content-type"), "")
            return FetchedPage(
                url=current,
                status=response.status,
                content_type=content_type.split(";", 1)[0].strip().lower(),
                content=bytes(body),
                truncated=truncated,
                headers=tuple(got),
            )
    raise FetchError(f"{url} redirected more than {MAX_REDIRECTS} times")

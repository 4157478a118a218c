"""Hermes' ``tools.url_safety``: whether a URL a model chose may be fetched (no SSRF).

The judgement is this project's own address policy (``hermes_hooks.backends.web_search.
urlsafety``), read from the current home's ``config.yaml`` at each call: private, loopback,
link-local, carrier-grade NAT, reserved and multicast addresses are refused unless
``security.allow_private_urls`` (or ``$HERMES_ALLOW_PRIVATE_URLS``) or
``security.private_url_allowlist`` allows them; the cloud metadata endpoints are refused
always. As in Hermes the check fails closed: a host that does not resolve, a scheme other than
``http``/``https``, an unreadable ``security`` section, any error, all say "not safe".
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import re
import socket
from contextvars import ContextVar
from typing import Any, Final
from urllib.parse import parse_qsl, quote, unquote, urljoin, urlsplit, urlunsplit

from hermes_hooks.backends.web_search.urlsafety import (
    IPAddress,
    UrlBlockedError,
    UrlPolicy,
    split_url,
)
from hermes_hooks.compat import hermes_cli_config
from hermes_hooks.compat.current import current_home
from hermes_hooks.errors import ConfigError

__all__ = [
    "SSRFConnectionBlocked",
    "async_is_safe_url",
    "create_ssrf_safe_async_client",
    "create_ssrf_safe_client",
    "has_sensitive_query_params",
    "is_always_blocked_url",
    "is_safe_url",
    "normalize_url_for_request",
    "redirect_target_from_response",
    "sensitive_query_param_name",
    "ssrf_safe_async_http_transport",
    "ssrf_safe_http_transport",
]

_METADATA_HOSTS: Final = frozenset({"metadata.google.internal", "metadata.goog"})

logger = logging.getLogger(__name__)

_SENSITIVE_QUERY_PARAM_NAMES: Final = frozenset(
    {
        "access_token", "api_key", "apikey", "auth_token", "authorization", "awsaccesskeyid",
        "client_secret", "credential", "credentials", "jwt", "password", "passwd", "secret",
        "session_id", "signature", "token", "x_amz_security_token", "x_amz_signature",
        "x-amz-security-token", "x-amz-signature",
    }
)  # fmt: skip
"""Hermes' list: query parameters that carry a credential."""

_TRUSTED_PRIVATE_IP_HOSTS: Final = frozenset({"multimedia.nt.qq.com.cn"})
"""HTTPS hosts Hermes lets resolve to private (proxy or benchmark) space: QQ's media host."""

_PROXY_ENV_VARS: Final = (
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
)  # fmt: skip
_FAKE_IP_NET: Final = ipaddress.ip_network("198.18.0.0/15")
_MAX_CONNECT_IPS: Final = 8
_TRUE: Final = frozenset({"true", "1", "yes"})
_FALSE: Final = frozenset({"false", "0", "no"})


class SSRFConnectionBlocked(ValueError):
    """A connection's host resolved, at connect time, to an address the policy refuses."""


def _proxy_is_configured() -> bool:
    return any(os.environ.get(name) for name in _PROXY_ENV_VARS)


def _allow_tun_fakeip() -> bool:
    """Whether a host name may resolve into 198.18.0.0/15 (TUN fake-IP DNS: Clash, sing-box)."""
    env = os.environ.get("HERMES_ALLOW_TUN_FAKEIP", "").strip().lower()
    if env in _TRUE or env in _FALSE:
        return env in _TRUE
    security = hermes_cli_config.read_raw_config().get("security")
    value = security.get("allow_tun_fakeip", False) if isinstance(security, dict) else False
    return value is True or str(value).strip().lower() in {"1", "true", "yes", "on"}


def _addresses(name: str, port: int | None) -> list[IPAddress] | None:
    """The addresses of ``name`` (one for a literal); ``None`` when it cannot be resolved."""
    try:
        return [ipaddress.ip_address(name.split("%", 1)[0])]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(name, port, socket.AF_UNSPEC, socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return None
    found: list[IPAddress] = []
    for info in infos:
        try:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        except ValueError as exc:
            raise UrlBlockedError(
                f"{name} resolves to an unparseable address {info[4][0]!r}"
            ) from exc
        if address not in found:
            found.append(address)
    return found


def _judge(scheme: str, host: str, port: int | None) -> list[str] | None:
    """Return the addresses of ``host`` that may be dialled, ``None`` when it did not resolve.

    :raises UrlBlockedError: one of its addresses is refused (which one a client dials is not
        ours to choose).
    :raises ConfigError: the policy cannot be read.
    """
    name = host.strip("[]").lower().rstrip(".")
    if name in _METADATA_HOSTS:
        raise UrlBlockedError(f"{host} is a cloud metadata endpoint, which is never reached")
    trusted = scheme == "https" and name in _TRUSTED_PRIVATE_IP_HOSTS
    policy = UrlPolicy(allow_private=True) if trusted else UrlPolicy.from_home(current_home())
    addresses = _addresses(name, port)
    if addresses is None:
        return None
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
        literal = True  # an address written in the URL is judged as it is: no fake-IP allowance
    except ValueError:
        literal = False
    fake_ok: bool | None = None
    for ip in addresses:
        reason = policy.refusal(name, ip)
        if reason is None:
            continue
        plain = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
        if not literal and plain in _FAKE_IP_NET:
            fake_ok = _allow_tun_fakeip() if fake_ok is None else fake_ok
            if fake_ok:
                continue
        raise UrlBlockedError(f"Blocked: {reason}")
    return [str(ip) for ip in addresses]


def is_safe_url(url: str) -> bool:
    """Return whether ``url`` may be fetched: ``http(s)``, and every address of its host allowed.

    Fails closed: a host that cannot be resolved (unless a proxy is configured in the
    environment, which then resolves it), an unreadable ``security`` section in
    ``config.yaml`` or any unexpected error gives ``False`` (and a logged warning).
    """
    try:
        scheme, host, port = split_url(url)
        if _judge(scheme, host, port) is None:
            if _proxy_is_configured():
                logger.debug("DNS failed for %s; a proxy is configured and resolves it", host)
                return True
            logger.warning("Blocked request: DNS resolution failed for %s", host)
            return False
    except UrlBlockedError as exc:
        logger.warning("Blocked request to %s: %s", url, exc)
        return False
    except ConfigError as exc:
        logger.warning("Blocked request to %s: the URL policy cannot be read: %s", url, exc)
        return False
    except Exception as exc:  # fail closed, as Hermes does
        logger.warning("Blocked request to %s: URL safety check error: %s", url, exc)
        return False
    return True


def normalize_url_for_request(url: Any) -> Any:
    """Return an ASCII-safe ``http(s)`` URL: the host IDNA-encoded, other non-ASCII text
    percent-encoded, existing escapes kept (``https://wttr.in/Köln``); other input unchanged."""
    if not isinstance(url, str):
        return url
    raw = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)\s+", r"\1", url.strip())
    try:
        parts = urlsplit(raw)
    except ValueError:
        return raw
    if parts.scheme.lower() not in {"http", "https"}:
        return raw
    netloc, hostname = parts.netloc, parts.hostname
    if hostname:
        try:
            ascii_host = hostname.encode("idna").decode("ascii")
        except UnicodeError:
            ascii_host = hostname
        if ascii_host != hostname:
            netloc = netloc.replace(hostname, ascii_host, 1)
    safe = "/%:@!$&'()*+,;="
    return urlunsplit(
        (
            parts.scheme,
            netloc,
            quote(parts.path, safe=safe),
            quote(parts.query, safe=safe + "?"),
            quote(parts.fragment, safe=safe + "?"),
        )
    )


def _connect_ips(host: str, port: int, scheme: str) -> list[str]:
    try:
        found = _judge(scheme, host, port)
    except (UrlBlockedError, ConfigError) as exc:
        raise SSRFConnectionBlocked(f"{exc} (during connect)") from exc
    if not found:
        raise SSRFConnectionBlocked(f"Blocked request - DNS resolution failed for: {host}")
    return found[:_MAX_CONNECT_IPS]


class _GuardedSync:
    """An httpcore network backend that judges each host at connect time and dials its address."""

    def __init__(self, inner: Any, schemes: ContextVar[dict[tuple[str, int], str]]) -> None:
        self._inner = inner
        self._schemes = schemes

    def _scheme(self, host: str, port: int) -> str:
        return self._schemes.get({}).get((host, port)) or ("https" if port == 443 else "http")

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> Any:
        import httpcore

        last: Exception | None = None
        for ip in _connect_ips(host, port, self._scheme(host, port)):
            try:
                return self._inner.connect_tcp(
                    ip, port, timeout=timeout, local_address=local_address,
                    socket_options=socket_options,
                )  # fmt: skip
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last or SSRFConnectionBlocked(f"Blocked request - no usable address for {host}")

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> Any:
        raise SSRFConnectionBlocked("Blocked Unix socket connection in SSRF-safe transport")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _GuardedAsync(_GuardedSync):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> Any:
        import httpcore

        last: Exception | None = None
        scheme = self._scheme(host, port)
        for ip in await asyncio.to_thread(_connect_ips, host, port, scheme):
            try:
                return await self._inner.connect_tcp(
                    ip, port, timeout=timeout, local_address=local_address,
                    socket_options=socket_options,
                )  # fmt: skip
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last or SSRFConnectionBlocked(f"Blocked request - no usable address for {host}")

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> Any:
        raise SSRFConnectionBlocked("Blocked Unix socket connection in SSRF-safe transport")

    async def sleep(self, seconds: float) -> None:  # type: ignore[override]
        await self._inner.sleep(seconds)


def _origin(request: Any) -> dict[tuple[str, int], str]:
    host, port, scheme = request.url.host, request.url.port, request.url.scheme
    if port is None:
        port = 443 if scheme == "https" else 80
    return {(host, port): scheme} if host and scheme in {"http", "https"} else {}


def _guard(transport: Any, *, is_async: bool) -> None:
    """Put the guarded backend under an httpx transport's connection pool (once)."""
    if getattr(transport, "_hermes_ssrf_guarded", False):
        return
    pool = getattr(transport, "_pool", None)
    if pool is None or not hasattr(pool, "_network_backend"):
        kind = "async httpx transport" if is_async else "httpx transport"
        raise SSRFConnectionBlocked(f"Unsupported {kind} cannot be made SSRF-safe")
    import httpcore

    schemes: ContextVar[dict[tuple[str, int], str]] = ContextVar("hermes_ssrf_origin_schemes")
    if is_async:
        pool._network_backend = _GuardedAsync(httpcore.AnyIOBackend(), schemes)
        handle_async = transport.handle_async_request

        async def guarded_async(request: Any) -> Any:
            token = schemes.set(_origin(request))
            try:
                return await handle_async(request)
            finally:
                schemes.reset(token)

        transport.handle_async_request = guarded_async
    else:
        pool._network_backend = _GuardedSync(httpcore.SyncBackend(), schemes)
        handle = transport.handle_request

        def guarded(request: Any) -> Any:
            token = schemes.set(_origin(request))
            try:
                return handle(request)
            finally:
                schemes.reset(token)

        transport.handle_request = guarded
    transport._hermes_ssrf_guarded = True


def create_ssrf_safe_client(**kwargs: Any) -> Any:
    """Return an ``httpx.Client`` whose direct connections are judged at connect time.

    Each host is resolved when it is dialled, refused as :func:`is_safe_url` refuses it
    (:class:`SSRFConnectionBlocked`), and the judged address is dialled (the host name stays
    for ``Host``, SNI and the certificate), so DNS rebinding cannot slip a private address in.
    Requests through a proxy (``proxy=``, or the environment's) leave resolution to the proxy.
    """
    import httpx

    client = httpx.Client(**kwargs)
    _guard(client._transport, is_async=False)
    return client


def create_ssrf_safe_async_client(**kwargs: Any) -> Any:
    """Return an ``httpx.AsyncClient`` guarded as :func:`create_ssrf_safe_client` is."""
    import httpx

    client = httpx.AsyncClient(**kwargs)
    _guard(client._transport, is_async=True)
    return client


def ssrf_safe_http_transport(**kwargs: Any) -> Any:
    """Return an ``httpx.HTTPTransport`` guarded as :func:`create_ssrf_safe_client` is."""
    import httpx

    transport = httpx.HTTPTransport(**kwargs)
    _guard(transport, is_async=False)
    return transport


def ssrf_safe_async_http_transport(**kwargs: Any) -> Any:
    """Return an ``httpx.AsyncHTTPTransport`` guarded as :func:`create_ssrf_safe_client` is."""
    import httpx

    transport = httpx.AsyncHTTPTransport(**kwargs)
    _guard(transport, is_async=True)
    return transport


async def async_is_safe_url(url: str) -> bool:
    """Return :func:`is_safe_url` of ``url``, its DNS look-up run off the event loop."""
    return await asyncio.to_thread(is_safe_url, url)


def is_always_blocked_url(url: str) -> bool:
    """Return whether ``url`` targets a cloud metadata endpoint, refused whatever is allowed.

    Narrower than :func:`is_safe_url`: ordinary private addresses are not "always blocked",
    and a URL that does not parse or a host that does not resolve gives ``False`` (the caller's
    own check decides those).
    """
    try:
        _, host, port = split_url(url)
        UrlPolicy(allow_private=True).resolve(host, port)
    except UrlBlockedError as exc:  # with every private address allowed, only the floor refuses
        return "cloud metadata endpoint" in str(exc)
    except Exception:
        return False
    return False


def redirect_target_from_response(response: Any) -> str | None:
    """Return where a redirect response points (its ``Location``, made absolute), or ``None``.

    For httpx response hooks, where ``response.next_request`` is often still ``None`` on a
    real redirect: the ``Location`` header is read first, ``next_request`` only without one.
    """
    if not getattr(response, "is_redirect", False):
        return None
    headers = getattr(response, "headers", None) or {}
    location = headers.get("location")
    if location:
        return urljoin(str(getattr(response, "url", "")), str(location))
    next_request = getattr(response, "next_request", None)
    if next_request:
        return str(next_request.url)
    return None


def sensitive_query_param_name(url: str) -> str | None:
    """Return the first query parameter of an ``http(s)`` ``url`` that carries a credential."""
    if not isinstance(url, str) or "?" not in url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in {"http", "https"} or not parts.query:
        return None
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if value and unquote(key).lower() in _SENSITIVE_QUERY_PARAM_NAMES:
            return key
    return None


def has_sensitive_query_params(url: str) -> bool:
    """Return whether ``url`` carries a credential-looking query parameter."""
    return sensitive_query_param_name(url) is not None

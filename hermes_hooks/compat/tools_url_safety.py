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
import logging
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

from hermes_hooks.backends.web_search.urlsafety import UrlBlockedError, UrlPolicy, split_url
from hermes_hooks.compat.current import current_home
from hermes_hooks.errors import ConfigError

__all__ = [
    "async_is_safe_url",
    "has_sensitive_query_params",
    "is_always_blocked_url",
    "is_safe_url",
    "redirect_target_from_response",
    "sensitive_query_param_name",
]

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


def _policy() -> UrlPolicy:
    return UrlPolicy.from_home(current_home())


def is_safe_url(url: str) -> bool:
    """Return whether ``url`` may be fetched: ``http(s)``, and every address of its host allowed.

    Fails closed: a host that cannot be resolved, an unreadable ``security`` section in
    ``config.yaml`` or any unexpected error gives ``False`` (and a logged warning).
    """
    try:
        scheme, host, port = split_url(url)
        name = host.strip("[]").lower().rstrip(".")
        if scheme == "https" and name in _TRUSTED_PRIVATE_IP_HOSTS:
            policy = UrlPolicy(allow_private=True)
        else:
            policy = _policy()
        policy.resolve(host, port)
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

"""Hermes' ``gateway.platforms._http_client_limits``: ``httpx.Limits`` for adapters' clients.

Ten keep-alive connections with a 2 s expiry by default, so that long-lived adapter clients
never pile up half-closed sockets; ``HERMES_GATEWAY_HTTPX_MAX_KEEPALIVE`` and
``HERMES_GATEWAY_HTTPX_KEEPALIVE_EXPIRY`` override them. ``None`` when httpx is not installed
(httpx is imported when the function is called, not with the module).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["platform_httpx_limits"]

_N = TypeVar("_N", int, float)

_DEFAULT_KEEPALIVE_EXPIRY_S = 2.0
_DEFAULT_MAX_KEEPALIVE = 10


def _env_number(name: str, default: _N, cast: Callable[[str], _N], *, allow_zero: bool) -> _N:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = cast(raw)
    except (TypeError, ValueError):
        return default
    return value if value > 0 or (allow_zero and value == 0) else default


def platform_httpx_limits() -> Any:
    """Return the ``httpx.Limits`` for a persistent adapter client, or ``None`` without httpx."""
    try:
        import httpx
    except ImportError:
        return None
    return httpx.Limits(
        max_keepalive_connections=_env_number(
            "HERMES_GATEWAY_HTTPX_MAX_KEEPALIVE", _DEFAULT_MAX_KEEPALIVE, int, allow_zero=True
        ),
        keepalive_expiry=_env_number(
            "HERMES_GATEWAY_HTTPX_KEEPALIVE_EXPIRY",
            _DEFAULT_KEEPALIVE_EXPIRY_S,
            float,
            allow_zero=False,
        ),
    )

"""Where dashboard-auth providers and token routes are kept.

Plugins register providers with ``ctx.register_dashboard_auth_provider(provider)``: the
``dashboard_auth`` family keeps them per manager (``pm.dashboard_auth``), owned by the plugin,
removed when it unloads. Code that calls Hermes' module function
``hermes_cli.dashboard_auth.register_provider`` directly registers in this module's process-wide
map, as Hermes does (a duplicate name is a ``ValueError``). :func:`providers_for` is what the
dashboard's gate reads: the manager's providers, then the process-wide ones.

Token routes (:func:`register_token_route`) are exact paths that authenticate by a bearer
token (``Authorization: Bearer ...``) through the ``supports_token`` providers instead of a
session cookie; process-wide, as in Hermes.
"""

from __future__ import annotations

import hmac
import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from hermes_hooks.backends.dashboard_auth.provider import (
    DashboardAuthProvider,
    ProviderError,
    TokenPrincipal,
    assert_protocol_compliance,
)
from hermes_hooks.backends.family import Family, ProviderRegistry, Selection
from hermes_hooks.plugins import active

__all__ = [
    "DASHBOARD_AUTH",
    "TokenRoute",
    "authenticate_token",
    "clear_providers",
    "clear_token_routes",
    "extract_bearer_token",
    "get_provider",
    "is_token_route",
    "list_providers",
    "list_session_providers",
    "list_token_providers",
    "providers_for",
    "register_provider",
    "register_token_route",
    "token_route_for",
]

logger = logging.getLogger(__name__)

DASHBOARD_AUTH: Final[Family[DashboardAuthProvider]] = Family(
    name="dashboard_auth",
    title="dashboard auth",
    provider_type=DashboardAuthProvider,
    selections=(Selection("dashboard.auth_provider"),),
    ctx_method="register_dashboard_auth_provider",
    provider_kind="dashboard-auth provider",
    categories=("dashboard_auth",),
    default_timeout=0.0,
)
"""The dashboard-auth family: ``ctx.register_dashboard_auth_provider`` and ``pm.dashboard_auth``.

Every registered provider guards the dashboard (the login page offers each interactive one);
``dashboard.auth_provider`` is not read to choose among them."""

_lock = threading.Lock()
_global: dict[str, DashboardAuthProvider] = {}


def register_provider(provider: DashboardAuthProvider) -> None:
    """Register ``provider`` process-wide (Hermes' ``register_provider``).

    :raises TypeError: it does not implement the protocol.
    :raises ValueError: a provider of that name is registered already.
    """
    assert_protocol_compliance(type(provider))
    with _lock:
        if provider.name in _global or provider.name in _manager_names():
            raise ValueError(f"dashboard-auth provider already registered: {provider.name!r}")
        _global[provider.name] = provider
    logger.info("dashboard-auth: registered provider %r (%s)", provider.name, provider.display_name)


def _manager_names() -> set[str]:
    manager = active.current_manager()
    if manager is None:
        return set()
    return set(_family_registry(manager).names())


def _family_registry(manager: Any) -> ProviderRegistry[DashboardAuthProvider]:
    return DASHBOARD_AUTH.registry(manager)


def providers_for(manager: Any | None) -> list[DashboardAuthProvider]:
    """Return the providers guarding ``manager``'s dashboard: its own, then the process-wide
    ones, in registration order (a name is taken once, the manager's first)."""
    found: dict[str, DashboardAuthProvider] = {}
    if manager is not None:
        for provider in _family_registry(manager).list_providers():
            found.setdefault(provider.name, provider)
    with _lock:
        for name, provider in _global.items():
            found.setdefault(name, provider)
    return list(found.values())


def list_providers() -> list[DashboardAuthProvider]:
    """Return every registered provider (the current manager's and the process-wide ones)."""
    return providers_for(active.current_manager())


def get_provider(name: str) -> DashboardAuthProvider | None:
    """Return the provider registered as ``name``, or ``None``."""
    return next((p for p in list_providers() if p.name == name), None)


def list_token_providers() -> list[DashboardAuthProvider]:
    """Return the providers with ``supports_token``: the only ones asked to verify a token."""
    return [p for p in list_providers() if getattr(p, "supports_token", False)]


def list_session_providers() -> list[DashboardAuthProvider]:
    """Return the providers with ``supports_session``: the ones a person can log in with."""
    return [p for p in list_providers() if getattr(p, "supports_session", True)]


def clear_providers() -> None:
    """Drop every process-wide registration (for tests)."""
    with _lock:
        _global.clear()


# -- token routes ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenRoute:
    """The rule of one token-authable path."""

    methods: frozenset[str] | None = None
    required_scope: str | None = None
    loopback_only: bool = False
    allow_session_fallback: bool = False

    def applies(self, method: str) -> bool:
        """Tell whether a request of ``method`` falls under this rule."""
        return self.methods is None or method.upper() in self.methods


_routes: dict[str, TokenRoute] = {}


def _methods(methods: str | Iterable[str] | None) -> frozenset[str] | None:
    if methods is None:
        return None
    items = (methods,) if isinstance(methods, str) else tuple(methods)
    if not items or any(not isinstance(m, str) or not m.strip() for m in items):
        raise ValueError("token route methods must be non-empty strings")
    return frozenset(m.strip().upper() for m in items)


def register_token_route(
    path: str,
    *,
    methods: str | Iterable[str] | None = None,
    required_scope: str | None = None,
    loopback_only: bool = False,
    allow_session_fallback: bool = False,
    scope: str | None = None,
) -> None:
    """Mark exact ``path`` as authenticated by a bearer token instead of a session cookie.

    Registering a route does not make it public: it makes it authenticate by token, and a
    request without a known token gets 401 (403 without the ``required_scope``). ``scope`` is
    accepted as another spelling of ``required_scope`` (older Hermes plugins use it). An
    identical registration again is a no-op; a conflicting one a ``ValueError``.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError(f"token route path must start with '/', got {path!r}")
    wanted = required_scope if required_scope is not None else scope
    rule = TokenRoute(
        methods=_methods(methods),
        required_scope=wanted.strip() if wanted is not None else None,
        loopback_only=bool(loopback_only),
        allow_session_fallback=bool(allow_session_fallback),
    )
    if rule.required_scope == "":
        raise ValueError("token route required_scope must be non-empty")
    with _lock:
        previous = _routes.setdefault(path, rule)
    if previous != rule:
        raise ValueError(
            f"conflicting token route registration for exact path {path!r}: "
            f"existing={previous!r}, requested={rule!r}"
        )


def token_route_for(path: str, method: str) -> TokenRoute | None:
    """Return the rule for a request of ``method`` on ``path``, or ``None``."""
    with _lock:
        rule = _routes.get(path)
    return rule if rule is not None and rule.applies(method) else None


def is_token_route(path: str, method: str | None = None) -> bool:
    """Tell whether ``path`` (for ``method``, when given) is token-authable."""
    with _lock:
        rule = _routes.get(path)
    return rule is not None and (method is None or rule.applies(method))


def clear_token_routes() -> None:
    """Drop every token route (for tests)."""
    with _lock:
        _routes.clear()


def extract_bearer_token(request: Any) -> str:
    """Return the bearer token of a request's ``Authorization`` header, or ``""``."""
    headers: Mapping[str, str] = getattr(request, "headers", {}) or {}
    scheme, _, token = str(headers.get("authorization", "")).partition(" ")
    return token.strip() if scheme.strip().lower() == "bearer" else ""


def authenticate_token(
    request: Any,
    *,
    required_scope: str | None = None,
    providers: list[DashboardAuthProvider] | None = None,
) -> tuple[TokenPrincipal | None, str | None]:
    """Ask each token provider about the request's bearer token (Hermes' contract).

    Returns ``(principal, None)`` when one accepts it (a principal without
    ``required_scope`` when only such ones did), ``(None, name)`` when none accepted it and
    provider ``name`` was unreachable, else ``(None, None)``. Never raises.
    """
    token = extract_bearer_token(request)
    if not token:
        return None, None
    candidates = providers if providers is not None else list_providers()
    unreachable: str | None = None
    unscoped: TokenPrincipal | None = None
    for provider in candidates:
        if not getattr(provider, "supports_token", False):
            continue
        try:
            principal = provider.verify_token(token=token)
        except ProviderError as exc:
            logger.warning("dashboard-auth: token provider %r unreachable: %s", provider.name, exc)
            unreachable = unreachable or provider.name
            continue
        except Exception as exc:  # a broken provider must not take the gate down
            logger.warning("dashboard-auth: token provider %r failed: %s", provider.name, exc)
            continue
        if principal is None:
            continue
        if required_scope is None or required_scope in principal.scopes:
            return principal, None
        unscoped = unscoped or principal
    if unscoped is not None:
        return unscoped, None
    return None, unreachable


def same_secret(given: str, expected: str) -> bool:
    """Compare two secrets in constant time."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))

"""The dashboard-auth contract, as Hermes' ``hermes_cli.dashboard_auth.base`` has it.

A provider guards ``hermes dashboard`` when it listens beyond loopback. Interactive providers
log people in (an OAuth round trip: :meth:`DashboardAuthProvider.start_login` then
:meth:`~DashboardAuthProvider.complete_login`; or a password form when ``supports_password``)
and mint a :class:`Session`; token providers (``supports_token``) vouch for a bearer token on
one request as a :class:`TokenPrincipal`. Every method takes keyword arguments only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

__all__ = [
    "DashboardAuthProvider",
    "InvalidCodeError",
    "InvalidCredentialsError",
    "LoginStart",
    "ProviderError",
    "RefreshExpiredError",
    "Session",
    "TokenPrincipal",
    "assert_protocol_compliance",
    "classify_jwks_lookup_error",
]


@dataclass(frozen=True)
class Session:
    """A verified interactive identity; the tokens are opaque to the dashboard.

    ``expires_at`` is in Unix seconds (the access token's ``exp``); providers without
    organisations set ``org_id=""``.
    """

    user_id: str
    email: str
    display_name: str
    org_id: str
    provider: str
    expires_at: int
    access_token: str
    refresh_token: str


@dataclass(frozen=True)
class TokenPrincipal:
    """A verified non-interactive caller: one bearer token on one request.

    ``scopes`` empty means unscoped (a route may still demand one).
    """

    principal: str
    provider: str
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoginStart:
    """The first leg of an OAuth round trip: where the browser goes, and the cookies to set
    (``hermes_session_pkce``: ``state=...;verifier=...``)."""

    redirect_url: str
    cookie_payload: dict[str, str]


class ProviderError(Exception):
    """The identity provider is unreachable or failed: the dashboard answers 503."""


class InvalidCodeError(Exception):
    """An OAuth callback's ``code``/``state`` failed validation: the dashboard answers 400."""


class InvalidCredentialsError(Exception):
    """A username/password pair was rejected: the dashboard answers a generic 401."""


class RefreshExpiredError(Exception):
    """This provider refuses the refresh token; the person must log in again."""


def classify_jwks_lookup_error(exc: BaseException) -> Exception:
    """Map a ``PyJWKClient.get_signing_key_from_jwt`` failure to the protocol's exceptions.

    A transport failure (the JWKS cannot be fetched) is a :class:`ProviderError` (503); a
    bearer that is no JWT of this provider (not a JWT, an unknown ``kid``) is an
    :class:`InvalidCodeError` (``verify_session`` then returns ``None``).
    """
    try:
        import jwt
    except ImportError:  # pragma: no cover - PyJWT comes with the dashboard extra
        return ProviderError(f"JWKS lookup failed: {exc!r}")
    if isinstance(exc, jwt.PyJWKClientConnectionError):
        return ProviderError(f"JWKS lookup failed: {exc}")
    if isinstance(exc, jwt.DecodeError | jwt.PyJWKSetError):
        return InvalidCodeError(f"token not verifiable by this provider: {exc}")
    if isinstance(exc, jwt.PyJWKClientError):
        return ProviderError(f"JWKS lookup failed: {exc}")
    if isinstance(exc, jwt.InvalidTokenError):
        return InvalidCodeError(f"token not verifiable by this provider: {exc}")
    return ProviderError(f"JWKS lookup failed: {exc!r}")


class DashboardAuthProvider(ABC):
    """What every dashboard-auth provider implements (Hermes' protocol).

    Life cycle: ``start_login`` (redirect and PKCE state), the identity provider,
    ``complete_login`` (code and verifier to a :class:`Session`), ``verify_session`` on each
    request (``None`` when expired or unknown), ``refresh_session`` near expiry
    (:class:`RefreshExpiredError` when refused), ``revoke_session`` on logout (best effort,
    never raises). Subclasses set ``name`` (a stable lowercase id) and ``display_name``.
    Flags: ``supports_password`` (a credential form and :meth:`complete_password_login`),
    ``supports_token`` (:meth:`verify_token`), ``supports_session`` (False for token-only
    credentials, never offered a login).
    """

    name: str = ""
    display_name: str = ""
    supports_password: bool = False
    supports_token: bool = False
    supports_session: bool = True

    @abstractmethod
    def start_login(self, *, redirect_uri: str) -> LoginStart: ...

    @abstractmethod
    def complete_login(
        self, *, code: str, state: str, code_verifier: str, redirect_uri: str
    ) -> Session: ...

    @abstractmethod
    def verify_session(self, *, access_token: str) -> Session | None: ...

    @abstractmethod
    def refresh_session(self, *, refresh_token: str) -> Session: ...

    @abstractmethod
    def revoke_session(self, *, refresh_token: str) -> None: ...

    def complete_password_login(self, *, username: str, password: str) -> Session:
        """Verify a username/password pair and mint a :class:`Session`.

        :raises InvalidCredentialsError: the pair is refused.
        :raises ProviderError: the credential store is unreachable.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not support password login "
            "(set supports_password = True and override complete_password_login)"
        )

    def verify_token(self, *, token: str) -> TokenPrincipal | None:
        """Verify a non-interactive bearer token; ``None`` for a token it does not know.

        :raises ProviderError: only for an outage of the provider's backing store.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not support token auth "
            "(set supports_token = True and override verify_token)"
        )


def assert_protocol_compliance(cls: type) -> None:
    """Raise ``TypeError`` when ``cls`` does not implement the whole protocol."""
    for attr in ("name", "display_name"):
        if not getattr(cls, attr, ""):
            raise TypeError(f"{cls.__name__} missing or empty attribute: {attr!r}")
    methods = ("start_login", "complete_login", "verify_session", "refresh_session")
    for method in (*methods, "revoke_session"):
        if not callable(getattr(cls, method, None)):
            raise TypeError(f"{cls.__name__} missing method: {method}")
    abstract = getattr(cls, "__abstractmethods__", None)
    if abstract:
        raise TypeError(f"{cls.__name__} has unimplemented abstract methods: {sorted(abstract)}")

# ruff: noqa: E501  (the plugins below are sources written to files, kept as Hermes lays them out)
"""Plugins of the shapes Hermes ships for its dashboard, written for these tests.

Each mirrors the imports and calls of its Hermes counterpart (``plugins/dashboard_auth/*`` and
``plugins/hermes-achievements`` of hermes-agent), so that what these tests exercise is what
Hermes' own plugins use; the unmodified plugins themselves were run against the project (see
docs/reference/compat.md, "Hermes' own dashboard plugins").

``BASIC`` is a password provider shaped as ``basic`` (scrypt hashes ``scrypt$n$r$p$salt$dk``,
HMAC-signed stateless tokens, ``dashboard.basic_auth`` read with ``cfg_get(load_config(), ...)``,
env over config, ``password_hash`` or ``password``, ``LAST_SKIP_REASON``); ``DRAIN`` a
shared-secret token provider shaped as ``drain`` (a strength check that fails closed, a
constant-time compare, a scoped principal, ``register_token_route("/api/gateway/drain",
scope=...)``); ``SELF_HOSTED`` an OpenID Connect relying party shaped as ``self_hosted``
(discovery with the issuer pinned, PKCE S256, the token endpoint, the ID token verified with a
lazily imported PyJWT ``PyJWKClient``); ``NOUS`` shaped as ``nous`` (the Portal's contract:
``agent:{instance_id}`` clients, the ``agent_dashboard:access`` scope, an access token that is a
JWT with the Portal as issuer, refresh tokens rotated with the ``x-nous-refresh-token`` header);
``ACHIEVEMENTS`` a dashboard-only plugin shaped as ``hermes-achievements`` (no plugin manifest,
an IIFE entry script on the plugin SDK, a CSS file, a FastAPI router whose scan reads the
sessions with ``hermes_state.SessionDB().list_sessions_rich(...)`` and ``get_messages``). None
of Hermes' files is copied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugin_builders import user_plugin

BASIC = """
from __future__ import annotations

import base64, hashlib, hmac, json, logging, os, secrets, time
from typing import Any, Optional

from hermes_cli.dashboard_auth import (
    DashboardAuthProvider,
    InvalidCredentialsError,
    LoginStart,
    RefreshExpiredError,
    Session,
)

logger = logging.getLogger(__name__)
_DEFAULT_TTL_SECONDS = 12 * 60 * 60
_REFRESH_TTL_SECONDS = 30 * 24 * 60 * 60
_SIG_LEN = hashlib.sha256().digest_size
LAST_SKIP_REASON: str = ""

def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    dk = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=2**12, r=8, p=1, dklen=32, maxmem=0)
    return f"scrypt${2**12}$8$1${base64.b64encode(salt).decode()}${base64.b64encode(dk).decode()}"

def _verify_password(password: str, encoded: str) -> bool:
    try:
        scheme, n_s, r_s, p_s, salt_b64, dk_b64 = encoded.split("$")
        if scheme != "scrypt":
            return False
        salt, expected = base64.b64decode(salt_b64), base64.b64decode(dk_b64)
        actual = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=int(n_s), r=int(r_s),
                                p=int(p_s), dklen=len(expected), maxmem=0)
    except (ValueError, TypeError, MemoryError):
        return False
    return hmac.compare_digest(actual, expected)

_DUMMY_HASH = hash_password("dummy-password-for-constant-time-verify")

def _sign(payload: dict, secret: bytes) -> str:
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw + hmac.new(secret, raw, hashlib.sha256).digest()).decode()

def _unsign(token: str, secret: bytes) -> Optional[dict]:
    try:
        blob = base64.urlsafe_b64decode(token.encode())
        if len(blob) <= _SIG_LEN:
            return None
        raw, sig = blob[:-_SIG_LEN], blob[-_SIG_LEN:]
        if not hmac.compare_digest(sig, hmac.new(secret, raw, hashlib.sha256).digest()):
            return None
        return json.loads(raw)
    except Exception:
        return None

class BasicAuthProvider(DashboardAuthProvider):
    name = "basic"
    display_name = "Username & Password"
    supports_password = True
    supports_oauth = False

    def __init__(self, *, username: str, password_hash: str, secret: bytes,
                 ttl_seconds: int = _DEFAULT_TTL_SECONDS) -> None:
        if not username:
            raise ValueError("username must be non-empty")
        if not password_hash:
            raise ValueError("password_hash must be non-empty")
        if len(secret) < 16:
            raise ValueError("secret must be at least 16 bytes")
        self._username, self._password_hash, self._secret = username, password_hash, secret
        self._ttl = max(60, int(ttl_seconds))

    def start_login(self, *, redirect_uri: str) -> LoginStart:
        raise NotImplementedError("BasicAuthProvider is password-only")

    def complete_login(self, *, code: str, state: str, code_verifier: str, redirect_uri: str) -> Session:
        raise NotImplementedError("BasicAuthProvider is password-only; use complete_password_login.")

    def complete_password_login(self, *, username: str, password: str) -> Session:
        username_ok = hmac.compare_digest(username.encode("utf-8"), self._username.encode("utf-8"))
        password_ok = _verify_password(password, self._password_hash if username_ok else _DUMMY_HASH)
        if not (username_ok and password_ok):
            raise InvalidCredentialsError("invalid username or password")
        return self._mint_session(self._username)

    def verify_session(self, *, access_token: str) -> Optional[Session]:
        payload = _unsign(access_token, self._secret)
        if payload is None or payload.get("kind") != "access" or payload.get("exp", 0) <= int(time.time()):
            return None
        user_id = str(payload.get("sub", ""))
        return Session(user_id=user_id, email="", display_name=user_id, org_id="", provider=self.name,
                       expires_at=int(payload["exp"]), access_token=access_token, refresh_token="")

    def refresh_session(self, *, refresh_token: str) -> Session:
        if not refresh_token:
            raise RefreshExpiredError("no refresh token present in session")
        payload = _unsign(refresh_token, self._secret)
        if payload is None or payload.get("kind") != "refresh" or payload.get("exp", 0) <= int(time.time()):
            raise RefreshExpiredError("refresh token expired or invalid")
        return self._mint_session(str(payload.get("sub", self._username)))

    def revoke_session(self, *, refresh_token: str) -> None:
        return None

    def _mint_session(self, user_id: str) -> Session:
        now = int(time.time())
        exp = now + self._ttl
        return Session(user_id=user_id, email="", display_name=user_id, org_id="", provider=self.name,
                       expires_at=exp,
                       access_token=_sign({"sub": user_id, "kind": "access", "exp": exp}, self._secret),
                       refresh_token=_sign({"sub": user_id, "kind": "refresh",
                                            "exp": now + _REFRESH_TTL_SECONDS}, self._secret))

def _load_config_basic_auth_section() -> dict:
    try:
        from hermes_cli.config import cfg_get, load_config

        cfg = load_config()
    except Exception as exc:
        logger.debug("dashboard-auth-basic: load_config() raised %s", exc)
        return {}
    section = cfg_get(cfg, "dashboard", "basic_auth", default=None)
    return section if isinstance(section, dict) else {}

def _resolve(env_name: str, cfg_section: dict, cfg_key: str) -> str:
    env = os.environ.get(env_name, "").strip()
    if env:
        return env
    return str(cfg_section.get(cfg_key, "") or "").strip()

def _resolve_secret(cfg_section: dict) -> bytes:
    raw = _resolve("HERMES_DASHBOARD_BASIC_AUTH_SECRET", cfg_section, "secret")
    if not raw:
        return secrets.token_bytes(32)
    for decoder in (base64.b64decode, bytes.fromhex):
        try:
            decoded = decoder(raw)
            if len(decoded) >= 16:
                return decoded
        except (ValueError, TypeError):
            pass
    return raw.encode("utf-8")

def register(ctx) -> None:
    global LAST_SKIP_REASON
    LAST_SKIP_REASON = ""
    section = _load_config_basic_auth_section()
    username = _resolve("HERMES_DASHBOARD_BASIC_AUTH_USERNAME", section, "username")
    password_hash = _resolve("HERMES_DASHBOARD_BASIC_AUTH_PASSWORD_HASH", section, "password_hash")
    plaintext = _resolve("HERMES_DASHBOARD_BASIC_AUTH_PASSWORD", section, "password")
    ttl_raw = _resolve("HERMES_DASHBOARD_BASIC_AUTH_TTL_SECONDS", section, "session_ttl_seconds")
    if not username:
        LAST_SKIP_REASON = "dashboard.basic_auth.username is not set"
        return
    if not password_hash and not plaintext:
        LAST_SKIP_REASON = "dashboard.basic_auth.username is set but neither password_hash nor password"
        logger.warning("dashboard-auth-basic: %s", LAST_SKIP_REASON)
        return
    if os.environ.get("HERMES_DASHBOARD_BASIC_AUTH_PASSWORD", "").strip():
        password_hash = hash_password(os.environ["HERMES_DASHBOARD_BASIC_AUTH_PASSWORD"].strip())
    elif not password_hash:
        password_hash = hash_password(plaintext)
    try:
        ttl = int(ttl_raw) if ttl_raw else _DEFAULT_TTL_SECONDS
    except ValueError:
        ttl = _DEFAULT_TTL_SECONDS
    try:
        provider = BasicAuthProvider(username=username, password_hash=password_hash,
                                     secret=_resolve_secret(section), ttl_seconds=ttl)
    except ValueError as exc:
        LAST_SKIP_REASON = f"BasicAuthProvider construction failed: {exc}"
        return
    ctx.register_dashboard_auth_provider(provider)
"""

DRAIN = """
from __future__ import annotations

import hmac, logging, math, os
from collections import Counter
from typing import Optional

from hermes_cli.dashboard_auth import (
    DashboardAuthProvider,
    LoginStart,
    Session,
    TokenPrincipal,
)

logger = logging.getLogger(__name__)
_DEFAULT_MIN_SECRET_CHARS = 43
_MIN_DISTINCT_CHARS = 16
DRAIN_ROUTE_PATH = "/api/gateway/drain"
LAST_SKIP_REASON: str = ""

def assess_secret_strength(secret: str, *, min_chars: int = _DEFAULT_MIN_SECRET_CHARS) -> Optional[str]:
    if not secret:
        return "secret is empty"
    if len(secret) < min_chars:
        return f"secret too short: {len(secret)} chars (need >= {min_chars})"
    if len(set(secret)) < _MIN_DISTINCT_CHARS:
        return "secret has too few distinct characters"
    return None

class DrainSecretProvider(DashboardAuthProvider):
    name = "drain-secret"
    display_name = "Drain Control (service credential)"
    supports_token = True
    supports_session = False

    def __init__(self, *, secret: str, scope: str = "drain") -> None:
        reason = assess_secret_strength(secret)
        if reason is not None:
            raise ValueError(f"drain secret rejected: {reason}")
        self._secret, self._scope = secret, scope

    def verify_token(self, *, token: str) -> Optional[TokenPrincipal]:
        if token and hmac.compare_digest(token.encode("utf-8"), self._secret.encode("utf-8")):
            return TokenPrincipal(principal="drain-control", provider=self.name, scopes=(self._scope,))
        return None

    def start_login(self, *, redirect_uri: str) -> LoginStart:
        raise NotImplementedError("DrainSecretProvider is a non-interactive service credential.")

    def complete_login(self, *, code: str, state: str, code_verifier: str, redirect_uri: str) -> Session:
        raise NotImplementedError("DrainSecretProvider is a non-interactive service credential.")

    def verify_session(self, *, access_token: str) -> Optional[Session]:
        return None

    def refresh_session(self, *, refresh_token: str) -> Session:
        raise NotImplementedError("DrainSecretProvider is a non-interactive service credential.")

    def revoke_session(self, *, refresh_token: str) -> None:
        return None

def _load_config_drain_auth_section() -> dict:
    try:
        from hermes_cli.config import cfg_get, load_config

        cfg = load_config()
    except Exception as exc:
        logger.debug("dashboard-auth-drain: load_config() raised %s", exc)
        return {}
    section = cfg_get(cfg, "dashboard", "drain_auth", default=None)
    return section if isinstance(section, dict) else {}

def register(ctx) -> None:
    global LAST_SKIP_REASON
    LAST_SKIP_REASON = ""
    secret = os.environ.get("HERMES_DASHBOARD_DRAIN_SECRET", "").strip()
    if not secret:
        LAST_SKIP_REASON = "HERMES_DASHBOARD_DRAIN_SECRET is not set."
        return
    section = _load_config_drain_auth_section()
    scope = str(section.get("scope", "drain") or "drain").strip() or "drain"
    try:
        min_chars = int(section.get("min_secret_chars", _DEFAULT_MIN_SECRET_CHARS))
    except (TypeError, ValueError):
        min_chars = _DEFAULT_MIN_SECRET_CHARS
    reason = assess_secret_strength(secret, min_chars=min_chars)
    if reason is not None:
        LAST_SKIP_REASON = f"HERMES_DASHBOARD_DRAIN_SECRET rejected — {reason}."
        logger.warning("dashboard-auth-drain: %s", LAST_SKIP_REASON)
        return
    ctx.register_dashboard_auth_provider(DrainSecretProvider(secret=secret, scope=scope))
    try:
        from hermes_cli.dashboard_auth.token_auth import register_token_route

        register_token_route(DRAIN_ROUTE_PATH, scope=scope)
    except Exception as exc:
        logger.warning("dashboard-auth-drain: could not register token route %s: %s", DRAIN_ROUTE_PATH, exc)
"""

SELF_HOSTED = """
from __future__ import annotations

import base64, hashlib, logging, os, secrets, threading, time, urllib.parse
from typing import Any, Dict, Optional

import httpx

from hermes_cli.dashboard_auth import (
    DashboardAuthProvider,
    InvalidCodeError,
    LoginStart,
    ProviderError,
    RefreshExpiredError,
    Session,
)

logger = logging.getLogger(__name__)
_DEFAULT_SCOPES = "openid profile email"
_ALLOWED_ID_TOKEN_ALGS = ("RS256", "ES256")
_JWKS_CACHE_SECONDS = 300
LAST_SKIP_REASON: str = ""

def _b64url_no_pad(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

def _require_https_or_loopback(url: str, *, field: str) -> str:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "https" or (parsed.scheme == "http" and parsed.hostname in ("localhost", "127.0.0.1", "::1")):
        return url
    raise ProviderError(f"OIDC {field} must be https:// (or http on localhost), got {url!r}")

class SelfHostedOIDCProvider(DashboardAuthProvider):
    name = "self-hosted"
    display_name = "Self-Hosted OIDC"

    def __init__(self, *, issuer: str, client_id: str, scopes: str = _DEFAULT_SCOPES) -> None:
        if not issuer:
            raise ValueError("issuer is required")
        if not client_id:
            raise ValueError("client_id is required")
        self._issuer = issuer.rstrip("/")
        _require_https_or_loopback(self._issuer, field="issuer")
        self._client_id = client_id
        self._scopes = scopes.strip() or _DEFAULT_SCOPES
        self._discovery: Dict[str, Any] | None = None
        self._discovery_lock = threading.Lock()
        self._jwks_client: Any = None

    def start_login(self, *, redirect_uri: str) -> LoginStart:
        if not urllib.parse.urlparse(redirect_uri).path.endswith("/auth/callback"):
            raise ProviderError(f"redirect_uri path must end with '/auth/callback', got {redirect_uri!r}")
        disco = self._get_discovery()
        code_verifier = _b64url_no_pad(secrets.token_bytes(64))
        state = _b64url_no_pad(secrets.token_bytes(32))
        params = {"response_type": "code", "client_id": self._client_id, "redirect_uri": redirect_uri,
                  "scope": self._scopes, "state": state, "code_challenge_method": "S256",
                  "code_challenge": _b64url_no_pad(hashlib.sha256(code_verifier.encode("ascii")).digest())}
        return LoginStart(redirect_url=f"{disco['authorization_endpoint']}?{urllib.parse.urlencode(params)}",
                          cookie_payload={"hermes_session_pkce": f"state={state};verifier={code_verifier}"})

    def complete_login(self, *, code: str, state: str, code_verifier: str, redirect_uri: str) -> Session:
        data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "client_id": self._client_id, "code_verifier": code_verifier}
        return self._exchange(self._get_discovery()["token_endpoint"], data, bad_request_exc=InvalidCodeError)

    def refresh_session(self, *, refresh_token: str) -> Session:
        if not refresh_token:
            raise RefreshExpiredError("no refresh token present in session")
        data = {"grant_type": "refresh_token", "client_id": self._client_id,
                "refresh_token": refresh_token, "scope": self._scopes}
        return self._exchange(self._get_discovery()["token_endpoint"], data,
                              bad_request_exc=RefreshExpiredError, previous_refresh_token=refresh_token)

    def verify_session(self, *, access_token: str) -> Optional[Session]:
        try:
            claims = self._verify_id_token(access_token)
        except InvalidCodeError:
            return None
        return self._session_from_tokens(id_token=access_token, refresh_token="", claims=claims)

    def revoke_session(self, *, refresh_token: str) -> None:
        if not refresh_token:
            return None
        try:
            endpoint = str(self._get_discovery().get("revocation_endpoint") or "").strip()
            if endpoint:
                httpx.post(endpoint, data={"token": refresh_token, "token_type_hint": "refresh_token",
                                           "client_id": self._client_id},
                           headers={"Accept": "application/json"}, timeout=10.0)
        except Exception as exc:
            logger.debug("self-hosted OIDC: revoke failed (ignored): %s", exc)
        return None

    def _exchange(self, token_endpoint: str, data: Dict[str, str], *, bad_request_exc: type[Exception],
                  previous_refresh_token: str = "") -> Session:
        try:
            response = httpx.post(token_endpoint, data=data, headers={"Accept": "application/json"}, timeout=10.0)
        except httpx.RequestError as exc:
            raise ProviderError(f"OIDC token endpoint unreachable: {exc}") from exc
        if response.status_code == 400:
            raise bad_request_exc(f"IDP rejected token request: {response.json().get('error', 'invalid_request')}")
        if response.status_code != 200:
            raise ProviderError(f"OIDC token endpoint returned {response.status_code}")
        payload = response.json()
        id_token = payload.get("id_token")
        if not id_token or not isinstance(id_token, str):
            raise ProviderError("OIDC token response missing id_token")
        claims = self._verify_id_token(id_token)
        refresh_token = payload.get("refresh_token")
        refresh_token = refresh_token if isinstance(refresh_token, str) and refresh_token else previous_refresh_token
        return self._session_from_tokens(id_token=id_token, refresh_token=refresh_token, claims=claims)

    def _get_discovery(self) -> Dict[str, Any]:
        with self._discovery_lock:
            if self._discovery is None:
                url = f"{self._issuer}/.well-known/openid-configuration"
                try:
                    response = httpx.get(url, headers={"Accept": "application/json"}, timeout=10.0,
                                         follow_redirects=True)
                except httpx.RequestError as exc:
                    raise ProviderError(f"OIDC discovery unreachable: {exc}") from exc
                if response.status_code != 200:
                    raise ProviderError(f"OIDC discovery returned {response.status_code} for {url!r}")
                payload = response.json()
                advertised = str(payload.get("issuer", "") or "").strip()
                if advertised and advertised.rstrip("/") != self._issuer:
                    raise ProviderError(f"OIDC discovery issuer mismatch: {advertised!r}")
                for field in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                    _require_https_or_loopback(payload[field], field=field)
                self._discovery = payload
            return self._discovery

    def _get_jwks_client(self) -> Any:
        if self._jwks_client is None:
            from jwt import PyJWKClient

            self._jwks_client = PyJWKClient(self._get_discovery()["jwks_uri"], cache_keys=True,
                                            lifespan=_JWKS_CACHE_SECONDS)
        return self._jwks_client

    def _verify_id_token(self, id_token: str) -> Dict[str, Any]:
        import jwt

        disco = self._get_discovery()
        try:
            signing_key = self._get_jwks_client().get_signing_key_from_jwt(id_token)
        except jwt.PyJWKClientError as exc:
            raise ProviderError(f"JWKS lookup failed: {exc}") from exc
        except Exception as exc:
            raise ProviderError(f"JWKS lookup failed: {exc!r}") from exc
        try:
            return jwt.decode(id_token, signing_key.key, algorithms=list(_ALLOWED_ID_TOKEN_ALGS),
                              audience=self._client_id, issuer=disco["issuer"],
                              options={"require": ["exp", "iat", "aud", "iss", "sub"]})
        except jwt.ExpiredSignatureError as exc:
            raise InvalidCodeError(f"ID token expired: {exc}") from exc
        except jwt.InvalidTokenError as exc:
            raise ProviderError(f"ID token verification failed: {exc}") from exc

    def _session_from_tokens(self, *, id_token: str, refresh_token: str, claims: Dict[str, Any]) -> Session:
        user_id = str(claims.get("sub", ""))
        if not user_id:
            raise ProviderError("ID token missing 'sub' (user_id) claim")
        email = str(claims.get("email", "") or "")
        display_name = str(claims.get("name") or claims.get("preferred_username") or email or "")
        return Session(user_id=user_id, email=email, display_name=display_name, org_id="",
                       provider=self.name, expires_at=int(claims["exp"]), access_token=id_token,
                       refresh_token=refresh_token)

def _load_config_oauth_section() -> dict:
    try:
        from hermes_cli.config import cfg_get, load_config

        cfg = load_config()
    except Exception as exc:
        logger.debug("dashboard-auth-self-hosted: load_config() raised %s", exc)
        return {}
    section = cfg_get(cfg, "dashboard", "oauth", default=None)
    return section if isinstance(section, dict) else {}

def _resolve_setting(env_var: str, cfg_value: Any) -> str:
    return os.environ.get(env_var, "").strip() or str(cfg_value or "").strip()

def register(ctx) -> None:
    global LAST_SKIP_REASON
    LAST_SKIP_REASON = ""
    sub = _load_config_oauth_section().get("self_hosted")
    sub = sub if isinstance(sub, dict) else {}
    issuer = _resolve_setting("HERMES_DASHBOARD_OIDC_ISSUER", sub.get("issuer"))
    client_id = _resolve_setting("HERMES_DASHBOARD_OIDC_CLIENT_ID", sub.get("client_id"))
    scopes = _resolve_setting("HERMES_DASHBOARD_OIDC_SCOPES", sub.get("scopes")) or _DEFAULT_SCOPES
    if not issuer or not client_id:
        LAST_SKIP_REASON = "set HERMES_DASHBOARD_OIDC_ISSUER and HERMES_DASHBOARD_OIDC_CLIENT_ID"
        return
    try:
        provider = SelfHostedOIDCProvider(issuer=issuer, client_id=client_id, scopes=scopes)
    except (ValueError, ProviderError) as exc:
        LAST_SKIP_REASON = f"SelfHostedOIDCProvider construction failed: {exc}"
        logger.warning("dashboard-auth-self-hosted: %s", LAST_SKIP_REASON)
        return
    ctx.register_dashboard_auth_provider(provider)
"""

NOUS = """
from __future__ import annotations

import base64, hashlib, logging, os, secrets, urllib.parse
from typing import Any, Dict, Optional

import httpx

from hermes_cli.dashboard_auth import (
    DashboardAuthProvider,
    InvalidCodeError,
    LoginStart,
    ProviderError,
    RefreshExpiredError,
    Session,
)

logger = logging.getLogger(__name__)
_DEFAULT_PORTAL_URL = "https://portal.nousresearch.com"
_SCOPE = "agent_dashboard:access"
_EXPECTED_CONTRACT_VERSION = 1
_JWKS_CACHE_SECONDS = 300
LAST_SKIP_REASON: str = ""

def _b64url_no_pad(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

class NousDashboardAuthProvider(DashboardAuthProvider):
    name = "nous"
    display_name = "Nous Research"

    def __init__(self, *, client_id: str, portal_url: str) -> None:
        if not client_id.startswith("agent:") or len(client_id) <= len("agent:"):
            raise ValueError(f"client_id must look like 'agent:{{instance_id}}', got {client_id!r}")
        self._client_id = client_id
        self._agent_instance_id = client_id[len("agent:"):]
        self._portal_url = portal_url.rstrip("/")
        self._jwks_url = f"{self._portal_url}/.well-known/jwks.json"
        self._authorize_url = f"{self._portal_url}/oauth/authorize"
        self._token_url = f"{self._portal_url}/api/oauth/token"
        self._jwks_client: Any = None

    def start_login(self, *, redirect_uri: str) -> LoginStart:
        code_verifier = _b64url_no_pad(secrets.token_bytes(64))
        state = _b64url_no_pad(secrets.token_bytes(32))
        params = {"response_type": "code", "client_id": self._client_id, "redirect_uri": redirect_uri,
                  "scope": _SCOPE, "state": state, "code_challenge_method": "S256",
                  "code_challenge": _b64url_no_pad(hashlib.sha256(code_verifier.encode("ascii")).digest())}
        return LoginStart(redirect_url=f"{self._authorize_url}?{urllib.parse.urlencode(params)}",
                          cookie_payload={"hermes_session_pkce": f"state={state};verifier={code_verifier}"})

    def complete_login(self, *, code: str, state: str, code_verifier: str, redirect_uri: str) -> Session:
        data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri,
                "client_id": self._client_id, "code_verifier": code_verifier}
        return self._token_response_to_session(self._post(data, {}), InvalidCodeError, "")

    def refresh_session(self, *, refresh_token: str) -> Session:
        if not refresh_token:
            raise RefreshExpiredError("no refresh token present in session")
        data = {"grant_type": "refresh_token", "client_id": self._client_id, "refresh_token": refresh_token}
        response = self._post(data, {"x-nous-refresh-token": refresh_token})
        return self._token_response_to_session(response, RefreshExpiredError, refresh_token)

    def _post(self, data: Dict[str, str], headers: Dict[str, str]) -> httpx.Response:
        try:
            return httpx.post(self._token_url, data=data, headers={"Accept": "application/json", **headers},
                              timeout=10.0)
        except httpx.RequestError as exc:
            raise ProviderError(f"Portal token endpoint unreachable: {exc}") from exc

    def _token_response_to_session(self, response: httpx.Response, bad: type[Exception],
                                   previous_refresh_token: str) -> Session:
        if response.status_code == 400:
            raise bad(f"Portal rejected token request: {response.json().get('error', 'invalid_request')}")
        if response.status_code != 200:
            raise ProviderError(f"Portal token endpoint returned {response.status_code}")
        payload = response.json()
        access_token = payload.get("access_token")
        if not access_token or not isinstance(access_token, str):
            raise ProviderError("Portal token response missing access_token")
        claims = self._verify_jwt(access_token)
        refresh_token = payload.get("refresh_token")
        refresh_token = refresh_token if isinstance(refresh_token, str) and refresh_token else previous_refresh_token
        return self._session_from_claims(claims, access_token, refresh_token)

    def verify_session(self, *, access_token: str) -> Optional[Session]:
        try:
            claims = self._verify_jwt(access_token)
        except InvalidCodeError:
            return None
        return self._session_from_claims(claims, access_token, "")

    def revoke_session(self, *, refresh_token: str) -> None:
        return None

    def _get_jwks_client(self) -> Any:
        if self._jwks_client is None:
            from jwt import PyJWKClient

            self._jwks_client = PyJWKClient(self._jwks_url, cache_keys=True, lifespan=_JWKS_CACHE_SECONDS)
        return self._jwks_client

    def _verify_jwt(self, access_token: str) -> Dict[str, Any]:
        import jwt

        try:
            signing_key = self._get_jwks_client().get_signing_key_from_jwt(access_token)
        except jwt.PyJWKClientError as exc:
            raise ProviderError(f"JWKS lookup failed: {exc}") from exc
        except Exception as exc:
            raise ProviderError(f"JWKS lookup failed: {exc!r}") from exc
        try:
            claims = jwt.decode(access_token, signing_key.key, algorithms=["RS256"],
                                audience=self._client_id, issuer=self._portal_url,
                                options={"require": ["exp", "iat", "aud", "iss", "sub"]})
        except jwt.ExpiredSignatureError as exc:
            raise InvalidCodeError(f"access token expired: {exc}") from exc
        except jwt.InvalidTokenError as exc:
            raise ProviderError(f"access token verification failed: {exc}") from exc
        instance = claims.get("agent_instance_id")
        if instance is not None and instance != self._agent_instance_id:
            raise ProviderError(f"agent_instance_id mismatch: token={instance!r}")
        if claims.get("oauth_contract_version", _EXPECTED_CONTRACT_VERSION) != _EXPECTED_CONTRACT_VERSION:
            raise ProviderError("unsupported oauth_contract_version")
        return claims

    def _session_from_claims(self, claims: Dict[str, Any], access_token: str, refresh_token: str) -> Session:
        return Session(user_id=str(claims["sub"]), email=str(claims.get("email", "") or ""),
                       display_name=str(claims.get("email", "") or ""), org_id=str(claims.get("org_id", "") or ""),
                       provider=self.name, expires_at=int(claims["exp"]), access_token=access_token,
                       refresh_token=refresh_token)

def _load_config_oauth_section() -> dict:
    try:
        from hermes_cli.config import cfg_get, load_config

        cfg = load_config()
    except Exception as exc:
        logger.debug("dashboard-auth-nous: load_config() raised %s", exc)
        return {}
    section = cfg_get(cfg, "dashboard", "oauth", default=None)
    return section if isinstance(section, dict) else {}

def _resolve_client_id() -> str:
    env = os.environ.get("HERMES_DASHBOARD_OAUTH_CLIENT_ID", "").strip()
    return env or str(_load_config_oauth_section().get("client_id", "") or "").strip()

def _resolve_portal_url() -> str:
    env = os.environ.get("HERMES_DASHBOARD_PORTAL_URL", "").strip()
    return env or str(_load_config_oauth_section().get("portal_url", "") or "").strip() or _DEFAULT_PORTAL_URL

def register(ctx) -> None:
    global LAST_SKIP_REASON
    LAST_SKIP_REASON = ""
    client_id = _resolve_client_id()
    portal_url = _resolve_portal_url()
    if not client_id:
        LAST_SKIP_REASON = "HERMES_DASHBOARD_OAUTH_CLIENT_ID is not set"
        return
    if not client_id.startswith("agent:"):
        LAST_SKIP_REASON = f"HERMES_DASHBOARD_OAUTH_CLIENT_ID={client_id!r} doesn't match 'agent:{{instance_id}}'"
        return
    try:
        provider = NousDashboardAuthProvider(client_id=client_id, portal_url=portal_url)
    except ValueError as exc:
        LAST_SKIP_REASON = f"NousDashboardAuthProvider construction failed: {exc}"
        return
    ctx.register_dashboard_auth_provider(provider)
"""

ACHIEVEMENTS_JS = """
(function () {
  "use strict";
  const SDK = window.__HERMES_PLUGIN_SDK__;
  if (!SDK || !window.__HERMES_PLUGINS__) return;
  const React = SDK.React;
  const hooks = SDK.hooks;
  const C = SDK.components;
  const cn = SDK.utils.cn;
  const ICON = "<circle cx=\\"12\\" cy=\\"12\\" r=\\"10\\" />";
  async function api(path, options) {
    return SDK.fetchJSON("/api/plugins/achievements-demo" + path, options || {});
  }
  function Icon() {
    const ref = React.useRef(null);
    React.useEffect(function () {
      const el = ref.current;
      const doc = new DOMParser().parseFromString(
        "<svg xmlns=\\"http://www.w3.org/2000/svg\\">" + ICON + "</svg>", "image/svg+xml");
      Array.from(doc.documentElement.childNodes).forEach(function (n) {
        el.appendChild(document.importNode(n, true));
      });
    }, []);
    return React.createElement("svg", { ref: ref, className: "ach-icon", viewBox: "0 0 24 24" });
  }
  function Page() {
    const [data, setData] = hooks.useState(null);
    const [filter, setFilter] = hooks.useState("all");
    const [error, setError] = hooks.useState(null);
    hooks.useEffect(function () {
      api("/achievements").then(setData).catch(function (e) { setError(String(e)); });
    }, []);
    if (error) return React.createElement(C.Card, { className: "ach-error" }, error);
    if (!data) return React.createElement("p", null, "Scanning…");
    const shown = data.achievements.filter(function (a) { return filter === "all" || a.state === filter; });
    return React.createElement("div", { className: "ach-page" },
      React.createElement("h1", null, "Achievements"),
      React.createElement("p", { className: "ach-count" }, data.unlocked_count + " / " + data.total_count + " unlocked"),
      React.createElement("div", null, ["all", "unlocked"].map(function (v) {
        return React.createElement(C.Button, { key: v, className: cn("ach-filter", v === filter && "active"), onClick: function () { setFilter(v); } }, v);
      })),
      React.createElement("section", { className: "ach-grid" }, shown.map(function (a) {
        return React.createElement(C.Card, { key: a.id, className: cn("ach-card", "ach-" + a.state), "data-id": a.id },
          React.createElement(C.CardContent, null, React.createElement(Icon, null),
            React.createElement(React.Fragment, null,
              React.createElement("strong", null, a.name), " ",
              React.createElement("span", { className: "ach-state" }, a.state), " ",
              React.createElement("span", { className: "ach-progress" }, a.progress + " / " + a.threshold))));
      })));
  }
  window.__HERMES_PLUGINS__.register("achievements-demo", Page);
})();
"""

ACHIEVEMENTS_API = """
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict, List, Optional

try:
    from hermes_constants import get_hermes_home
except ImportError:
    import os as _os
    def get_hermes_home() -> Path:
        val = (_os.environ.get("HERMES_HOME") or "").strip()
        return Path(val) if val else Path.home() / ".hermes"

try:
    from fastapi import APIRouter
except Exception:
    class APIRouter:
        def get(self, *_args, **_kwargs):
            return lambda fn: fn

router = APIRouter()

ACHIEVEMENTS: List[Dict[str, Any]] = [
    {"id": "first_steps", "name": "First Steps", "category": "Lifestyle",
     "threshold_metric": "session_count", "threshold": 1},
    {"id": "terminal_goblin", "name": "Terminal Goblin", "category": "Tool Mastery",
     "threshold_metric": "total_terminal_calls", "threshold": 3},
]

def _tool_name_from_call(call: Any) -> Optional[str]:
    if not isinstance(call, dict):
        return None
    fn = call.get("function") or {}
    return call.get("name") or fn.get("name")

def scan_sessions(limit: Optional[int] = None) -> Dict[str, Any]:
    try:
        from hermes_state import SessionDB
    except Exception as exc:
        return {"sessions": [], "aggregate": {}, "error": f"Could not import SessionDB: {exc}"}
    db_limit = -1 if (limit is None or limit <= 0) else int(limit)
    db = SessionDB()
    try:
        sessions_meta = db.list_sessions_rich(limit=db_limit, include_children=True, project_compression_tips=False)
        sessions = []
        for meta in sessions_meta:
            sid = meta.get("id")
            if not sid:
                continue
            messages = db.get_messages(sid)
            calls = [name for msg in messages for name in map(_tool_name_from_call, msg.get("tool_calls") or []) if name]
            sessions.append({
                "session_id": sid, "title": meta.get("title") or meta.get("preview") or "Untitled",
                "started_at": meta.get("started_at"), "last_active": meta.get("last_active"),
                "source": meta.get("source"), "model": meta.get("model"),
                "message_count": len(messages), "tool_call_count": len(calls),
                "terminal_calls": sum(1 for name in calls if "terminal" in name.lower()),
            })
    finally:
        close = getattr(db, "close", None)
        if close:
            close()
    aggregate = {"session_count": len(sessions),
                 "total_terminal_calls": sum(s["terminal_calls"] for s in sessions)}
    return {"sessions": sessions, "aggregate": aggregate, "error": None}

def evaluate_all() -> Dict[str, Any]:
    scan = scan_sessions()
    aggregate = scan.get("aggregate", {})
    evaluated = []
    for definition in ACHIEVEMENTS:
        progress = int(aggregate.get(definition["threshold_metric"], 0) or 0)
        unlocked = progress >= definition["threshold"]
        evaluated.append({**definition, "progress": progress, "unlocked": unlocked,
                          "state": "unlocked" if unlocked else "discovered"})
    return {"achievements": evaluated, "sessions": scan.get("sessions", []),
            "unlocked_count": sum(1 for a in evaluated if a["unlocked"]),
            "total_count": len(evaluated), "error": scan.get("error"),
            "generated_at": int(time.time()), "home": str(get_hermes_home())}

@router.get("/achievements")
async def achievements():
    data = evaluate_all()
    return {k: data[k] for k in ["achievements", "unlocked_count", "total_count", "error", "generated_at", "home"] if k in data}

@router.get("/sessions/{session_id}/badges")
async def session_badges(session_id: str):
    data = evaluate_all()
    session = next((s for s in data["sessions"] if s["session_id"] == session_id), None)
    return {"session_id": session_id, "session": session}

@router.get("/boom")
def boom():
    raise RuntimeError("the achievements scan fell over")

@router.get("/hang")
async def hang():
    import asyncio
    await asyncio.sleep(30)
    return {}
"""

ACHIEVEMENTS_CSS = """
.ach-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 12px; }
.ach-card { border: 1px solid gold; }
.ach-icon { width: 22px; height: 22px; fill: none; stroke: gold; stroke-width: 2;
            vertical-align: middle; margin-right: 8px; }
.ach-state, .ach-progress { opacity: 0.75; }
"""

ACHIEVEMENTS_MANIFEST = """{
  "name": "achievements-demo",
  "label": "Achievements",
  "description": "Badges from the session history.",
  "icon": "Star",
  "version": "0.4.0",
  "tab": {"path": "/achievements", "position": "after:hooks"},
  "entry": "dist/index.js",
  "css": "dist/style.css",
  "api": "plugin_api.py"
}"""


def achievements_plugin(home: Path) -> Path:
    """Write the achievements-shaped dashboard plugin into ``home/plugins/achievements-demo``:
    as Hermes' ``hermes-achievements``, only a ``dashboard/`` folder (no plugin manifest, no
    ``register``), its API reading the sessions through ``hermes_state.SessionDB``."""
    folder = home / "plugins" / "achievements-demo"
    files = {
        "dashboard/manifest.json": ACHIEVEMENTS_MANIFEST,
        "dashboard/dist/index.js": ACHIEVEMENTS_JS,
        "dashboard/dist/style.css": ACHIEVEMENTS_CSS,
        "dashboard/plugin_api.py": ACHIEVEMENTS_API,
        "dashboard/secret.txt": "not to be served outside its folder\n",
    }
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def broken_api_plugin(home: Path) -> Path:
    """A dashboard plugin whose API module raises on import."""
    return user_plugin(
        home,
        "broken-tab",
        "def register(ctx):\n    pass\n",
        files={
            "dashboard/manifest.json": '{"name": "broken-tab", "label": "Broken", "api": "api.py"}',
            "dashboard/api.py": "raise ImportError('no module named fancy_charts')\n",
        },
    )


def auth_plugins(home: Path, **config: Any) -> None:
    """Write the basic, drain, self-hosted and nous plugins into ``home``."""
    user_plugin(home, "dashboard-basic", BASIC, manifest={"kind": "backend"})
    user_plugin(home, "dashboard-self-hosted", SELF_HOSTED, manifest={"kind": "backend"})
    user_plugin(home, "dashboard-nous", NOUS, manifest={"kind": "backend"})
    user_plugin(home, "dashboard-drain", DRAIN, manifest={"kind": "backend"})

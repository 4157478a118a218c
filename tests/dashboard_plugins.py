# ruff: noqa: E501  (the plugins below are sources written to files, kept as Hermes lays them out)
"""Plugins of the shapes Hermes ships for its dashboard, written for these tests.

``BASIC`` is a password provider shaped as Hermes' ``plugins/dashboard_auth/basic`` (scrypt
hash, HMAC-signed stateless tokens, ``dashboard.basic_auth`` in config, env over config);
``DRAIN`` a shared-secret token provider shaped as its ``drain`` (a constant-time compare,
a scoped principal, ``register_token_route``) with a dashboard API route it guards;
``SELF_HOSTED`` an OpenID Connect relying party shaped as its ``self_hosted`` (discovery,
PKCE S256, the token endpoint, the ID token verified against the JWKS with PyJWT);
``NOUS`` shaped as its ``nous`` (the Portal's contract: ``agent:{instance_id}`` clients, the
``agent_dashboard:access`` scope, an access token that is a JWT, refresh tokens rotated with the
``x-nous-refresh-token`` header); ``ACHIEVEMENTS`` a dashboard plugin shaped as ``hermes-achievements`` (an IIFE entry script on
the plugin SDK, a CSS file, a FastAPI router). None of Hermes' files is copied.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plugin_builders import user_plugin

BASIC = """
import base64, hashlib, hmac, json, os, secrets, time
from hermes_cli.dashboard_auth import (
    DashboardAuthProvider, InvalidCredentialsError, LoginStart, RefreshExpiredError, Session)

def hash_password(password, salt=None):
    salt = salt or secrets.token_bytes(16)
    dk = hashlib.scrypt(password.encode(), salt=salt, n=2**12, r=8, p=1, dklen=32)
    return "scrypt$%s$%s" % (base64.b64encode(salt).decode(), base64.b64encode(dk).decode())

def _check(password, encoded):
    _, salt, dk = encoded.split("$")
    got = hash_password(password, base64.b64decode(salt)).split("$")[2]
    return hmac.compare_digest(got, dk)

class BasicAuthProvider(DashboardAuthProvider):
    name = "basic"
    display_name = "Username & Password"
    supports_password = True

    def __init__(self, *, username, password_hash, secret, ttl_seconds=3600):
        self._username, self._hash, self._secret, self._ttl = username, password_hash, secret, ttl_seconds

    def start_login(self, *, redirect_uri):
        raise NotImplementedError("password only")

    def complete_login(self, *, code, state, code_verifier, redirect_uri):
        raise NotImplementedError("password only")

    def _sign(self, payload):
        raw = json.dumps(payload).encode()
        return base64.urlsafe_b64encode(raw + hmac.new(self._secret, raw, hashlib.sha256).digest()).decode()

    def _unsign(self, token):
        try:
            blob = base64.urlsafe_b64decode(token.encode())
            raw, sig = blob[:-32], blob[-32:]
            if hmac.compare_digest(sig, hmac.new(self._secret, raw, hashlib.sha256).digest()):
                return json.loads(raw)
        except Exception:
            return None
        return None

    def _mint(self, user):
        now = int(time.time())
        return Session(user_id=user, email="", display_name=user, org_id="", provider=self.name,
                       expires_at=now + self._ttl,
                       access_token=self._sign({"sub": user, "kind": "access", "exp": now + self._ttl}),
                       refresh_token=self._sign({"sub": user, "kind": "refresh", "exp": now + 86400}))

    def complete_password_login(self, *, username, password):
        user_ok = hmac.compare_digest(username.encode(), self._username.encode())
        if not (_check(password, self._hash) and user_ok):
            raise InvalidCredentialsError("invalid username or password")
        return self._mint(self._username)

    def verify_session(self, *, access_token):
        p = self._unsign(access_token)
        if not p or p.get("kind") != "access" or p["exp"] <= time.time():
            return None
        return Session(user_id=p["sub"], email="", display_name=p["sub"], org_id="",
                       provider=self.name, expires_at=p["exp"], access_token=access_token,
                       refresh_token="")

    def refresh_session(self, *, refresh_token):
        p = self._unsign(refresh_token)
        if not p or p.get("kind") != "refresh" or p["exp"] <= time.time():
            raise RefreshExpiredError("refresh token expired or invalid")
        return self._mint(p["sub"])

    def revoke_session(self, *, refresh_token):
        return None

def register(ctx):
    from hermes_cli.config import cfg_get, load_config
    section = cfg_get(load_config(), "dashboard", "basic_auth", default=None) or {}
    username = os.environ.get("HERMES_DASHBOARD_BASIC_AUTH_USERNAME") or section.get("username")
    password = os.environ.get("HERMES_DASHBOARD_BASIC_AUTH_PASSWORD") or section.get("password")
    if not username or not password:
        return
    ttl = int(section.get("session_ttl_seconds", 3600))
    ctx.register_dashboard_auth_provider(BasicAuthProvider(
        username=username, password_hash=hash_password(password), secret=secrets.token_bytes(32),
        ttl_seconds=ttl))
"""

DRAIN = """
import hmac, os
from hermes_cli.dashboard_auth import DashboardAuthProvider, TokenPrincipal

class DrainSecretProvider(DashboardAuthProvider):
    name = "drain-secret"
    display_name = "Drain Control (service credential)"
    supports_token = True
    supports_session = False

    def __init__(self, *, secret, scope="drain"):
        self._secret, self._scope = secret, scope

    def start_login(self, *, redirect_uri):
        raise NotImplementedError("a service credential")

    def complete_login(self, *, code, state, code_verifier, redirect_uri):
        raise NotImplementedError("a service credential")

    def verify_session(self, *, access_token):
        return None

    def refresh_session(self, *, refresh_token):
        raise NotImplementedError("a service credential")

    def revoke_session(self, *, refresh_token):
        return None

    def verify_token(self, *, token):
        if hmac.compare_digest(token.encode(), self._secret.encode()):
            return TokenPrincipal(principal="drain-control", provider=self.name, scopes=(self._scope,))
        return None

def register(ctx):
    secret = os.environ.get("HERMES_DASHBOARD_DRAIN_SECRET", "")
    if len(secret) < 32:
        return
    ctx.register_dashboard_auth_provider(DrainSecretProvider(secret=secret))
    from hermes_cli.dashboard_auth.token_auth import register_token_route
    register_token_route("/api/plugins/drainctl/drain", scope="drain")
"""

DRAIN_API = """
from fastapi import APIRouter, Request
router = APIRouter()
DRAINED = []

@router.post("/drain")
def drain(request: Request):
    DRAINED.append(request.state.token_principal.principal)
    return {"draining": True, "by": request.state.token_principal.principal}
"""

SELF_HOSTED = """
import base64, hashlib, os, secrets, urllib.parse
import httpx
import jwt
from hermes_cli.dashboard_auth import (
    DashboardAuthProvider, InvalidCodeError, LoginStart, ProviderError, RefreshExpiredError,
    Session, classify_jwks_lookup_error)

def _b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

class SelfHostedOIDCProvider(DashboardAuthProvider):
    name = "self-hosted"
    display_name = "Self-Hosted OIDC"

    def __init__(self, *, issuer, client_id, scopes="openid profile email"):
        self._issuer, self._client_id, self._scopes = issuer.rstrip("/"), client_id, scopes
        self._disco = None
        self._jwks = None

    def _discovery(self):
        if self._disco is None:
            try:
                r = httpx.get(self._issuer + "/.well-known/openid-configuration", timeout=5)
            except httpx.RequestError as exc:
                raise ProviderError(f"discovery unreachable: {exc}") from exc
            if r.status_code != 200:
                raise ProviderError(f"discovery returned {r.status_code}")
            self._disco = r.json()
        return self._disco

    def start_login(self, *, redirect_uri):
        disco = self._discovery()
        verifier = _b64(secrets.token_bytes(64))
        state = _b64(secrets.token_bytes(32))
        params = {"response_type": "code", "client_id": self._client_id, "redirect_uri": redirect_uri,
                  "scope": self._scopes, "state": state, "code_challenge_method": "S256",
                  "code_challenge": _b64(hashlib.sha256(verifier.encode()).digest())}
        return LoginStart(redirect_url=disco["authorization_endpoint"] + "?" + urllib.parse.urlencode(params),
                          cookie_payload={"hermes_session_pkce": f"state={state};verifier={verifier}"})

    def _claims(self, token):
        if self._jwks is None:
            self._jwks = jwt.PyJWKClient(self._discovery()["jwks_uri"])
        try:
            key = self._jwks.get_signing_key_from_jwt(token)
        except Exception as exc:
            raise classify_jwks_lookup_error(exc) from exc
        try:
            return jwt.decode(token, key.key, algorithms=["RS256"], audience=self._client_id,
                              issuer=self._discovery()["issuer"],
                              options={"require": ["exp", "iat", "aud", "iss", "sub"]})
        except jwt.ExpiredSignatureError as exc:
            raise InvalidCodeError(f"expired: {exc}") from exc
        except jwt.InvalidTokenError as exc:
            raise InvalidCodeError(f"invalid: {exc}") from exc

    def _exchange(self, data, bad):
        try:
            r = httpx.post(self._discovery()["token_endpoint"], data=data, timeout=5)
        except httpx.RequestError as exc:
            raise ProviderError(f"token endpoint unreachable: {exc}") from exc
        if r.status_code == 400:
            raise bad("IDP rejected token request: " + r.json().get("error", "?"))
        if r.status_code != 200:
            raise ProviderError(f"token endpoint returned {r.status_code}")
        body = r.json()
        claims = self._claims(body["id_token"])
        return Session(user_id=claims["sub"], email=claims.get("email", ""),
                       display_name=claims.get("name", ""), org_id="", provider=self.name,
                       expires_at=int(claims["exp"]), access_token=body["id_token"],
                       refresh_token=body.get("refresh_token", data.get("refresh_token", "")))

    def complete_login(self, *, code, state, code_verifier, redirect_uri):
        return self._exchange({"grant_type": "authorization_code", "code": code,
                               "redirect_uri": redirect_uri, "client_id": self._client_id,
                               "code_verifier": code_verifier}, InvalidCodeError)

    def verify_session(self, *, access_token):
        try:
            claims = self._claims(access_token)
        except InvalidCodeError:
            return None
        return Session(user_id=claims["sub"], email=claims.get("email", ""),
                       display_name=claims.get("name", ""), org_id="", provider=self.name,
                       expires_at=int(claims["exp"]), access_token=access_token, refresh_token="")

    def refresh_session(self, *, refresh_token):
        if not refresh_token:
            raise RefreshExpiredError("no refresh token")
        return self._exchange({"grant_type": "refresh_token", "client_id": self._client_id,
                               "refresh_token": refresh_token}, RefreshExpiredError)

    def revoke_session(self, *, refresh_token):
        try:
            httpx.post(self._discovery()["revocation_endpoint"], data={"token": refresh_token}, timeout=5)
        except Exception:
            pass

def register(ctx):
    from hermes_cli.config import cfg_get, load_config
    section = cfg_get(load_config(), "dashboard", "oauth", "self_hosted", default=None) or {}
    issuer = os.environ.get("HERMES_DASHBOARD_OIDC_ISSUER") or section.get("issuer")
    client_id = os.environ.get("HERMES_DASHBOARD_OIDC_CLIENT_ID") or section.get("client_id")
    if issuer and client_id:
        ctx.register_dashboard_auth_provider(SelfHostedOIDCProvider(issuer=issuer, client_id=client_id))
"""

NOUS = """
import base64, hashlib, os, secrets, urllib.parse
import httpx
import jwt
from hermes_cli.dashboard_auth import (
    DashboardAuthProvider, InvalidCodeError, LoginStart, ProviderError, RefreshExpiredError,
    Session, classify_jwks_lookup_error)

def _b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

class NousDashboardAuthProvider(DashboardAuthProvider):
    name = "nous"
    display_name = "Nous Research"

    def __init__(self, *, client_id, portal_url):
        if not client_id.startswith("agent:"):
            raise ValueError("client_id must be agent:{instance_id}")
        self._client_id, self._instance = client_id, client_id[len("agent:"):]
        self._portal = portal_url.rstrip("/")
        self._jwks = None

    def start_login(self, *, redirect_uri):
        verifier, state = _b64(secrets.token_bytes(64)), _b64(secrets.token_bytes(32))
        params = {"response_type": "code", "client_id": self._client_id, "redirect_uri": redirect_uri,
                  "scope": "agent_dashboard:access", "state": state, "code_challenge_method": "S256",
                  "code_challenge": _b64(hashlib.sha256(verifier.encode()).digest())}
        return LoginStart(redirect_url=self._portal + "/oauth/authorize?" + urllib.parse.urlencode(params),
                          cookie_payload={"hermes_session_pkce": f"state={state};verifier={verifier}"})

    def _verify(self, token):
        if self._jwks is None:
            self._jwks = jwt.PyJWKClient(self._portal + "/.well-known/jwks.json", lifespan=300)
        try:
            key = self._jwks.get_signing_key_from_jwt(token)
        except Exception as exc:
            raise classify_jwks_lookup_error(exc) from exc
        try:
            claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=self._client_id)
        except jwt.InvalidTokenError as exc:
            raise InvalidCodeError(str(exc)) from exc
        if claims.get("agent_instance_id") != self._instance:
            raise InvalidCodeError("agent_instance_id does not match the client")
        if claims.get("oauth_contract_version", 1) != 1:
            raise ProviderError("unsupported oauth_contract_version")
        return claims

    def _session(self, response, bad):
        if response.status_code == 400:
            raise bad("Portal rejected token request: " + response.json().get("error", "?"))
        if response.status_code != 200:
            raise ProviderError(f"Portal token endpoint returned {response.status_code}")
        body = response.json()
        claims = self._verify(body["access_token"])
        return Session(user_id=claims["sub"], email=claims.get("email", ""), display_name=claims.get("email", ""),
                       org_id="", provider=self.name, expires_at=int(claims["exp"]),
                       access_token=body["access_token"], refresh_token=body.get("refresh_token") or "")

    def _post(self, data, headers=None):
        try:
            return httpx.post(self._portal + "/api/oauth/token", data=data, headers=headers or {}, timeout=5)
        except httpx.RequestError as exc:
            raise ProviderError(f"Portal token endpoint unreachable: {exc}") from exc

    def complete_login(self, *, code, state, code_verifier, redirect_uri):
        return self._session(self._post({"grant_type": "authorization_code", "code": code,
                                         "redirect_uri": redirect_uri, "client_id": self._client_id,
                                         "code_verifier": code_verifier}), InvalidCodeError)

    def refresh_session(self, *, refresh_token):
        if not refresh_token:
            raise RefreshExpiredError("no refresh token")
        return self._session(self._post({"grant_type": "refresh_token", "client_id": self._client_id,
                                         "refresh_token": refresh_token},
                                        {"x-nous-refresh-token": refresh_token}), RefreshExpiredError)

    def verify_session(self, *, access_token):
        try:
            claims = self._verify(access_token)
        except InvalidCodeError:
            return None
        return Session(user_id=claims["sub"], email=claims.get("email", ""), display_name=claims.get("email", ""),
                       org_id="", provider=self.name, expires_at=int(claims["exp"]),
                       access_token=access_token, refresh_token="")

    def revoke_session(self, *, refresh_token):
        return None

def register(ctx):
    from hermes_cli.config import cfg_get, load_config
    section = cfg_get(load_config(), "dashboard", "oauth", default=None) or {}
    client_id = os.environ.get("HERMES_DASHBOARD_OAUTH_CLIENT_ID") or section.get("client_id")
    portal = os.environ.get("HERMES_DASHBOARD_PORTAL_URL") or section.get("portal_url") or "https://portal.nousresearch.com"
    if client_id and client_id.startswith("agent:"):
        ctx.register_dashboard_auth_provider(NousDashboardAuthProvider(client_id=client_id, portal_url=portal))
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
  function Icon() {
    const ref = React.useRef(null);
    React.useEffect(function () {
      const ns = "http://www.w3.org/2000/svg";
      const c = document.createElementNS(ns, "circle");
      c.setAttribute("cx", "12"); c.setAttribute("cy", "12"); c.setAttribute("r", "10");
      ref.current.appendChild(c);
    }, []);
    return React.createElement("svg", { ref: ref, className: "ach-icon", viewBox: "0 0 24 24" });
  }
  function Page() {
    const [data, setData] = hooks.useState(null);
    const [filter, setFilter] = hooks.useState("all");
    const [error, setError] = hooks.useState(null);
    hooks.useEffect(function () {
      SDK.fetchJSON("/api/plugins/achievements-demo/achievements")
        .then(setData).catch(function (e) { setError(String(e)); });
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
        return React.createElement(C.Card, { key: a.id, className: cn("ach-card", "ach-" + a.state) },
          React.createElement(C.CardContent, null, React.createElement(Icon, null),
            React.createElement("strong", null, a.name), " ", React.createElement("span", null, a.state)));
      })));
  }
  window.__HERMES_PLUGINS__.register("achievements-demo", Page);
})();
"""

ACHIEVEMENTS_API = """
from fastapi import APIRouter
from hermes_constants import get_hermes_home

router = APIRouter()

@router.get("/achievements")
def achievements():
    home = str(get_hermes_home())
    items = [{"id": "first", "name": "First Steps", "state": "unlocked"},
             {"id": "second", "name": "Let Him Cook", "state": "discovered"}]
    return {"achievements": items, "unlocked_count": 1, "total_count": 2, "home": home}

@router.get("/boom")
def boom():
    raise RuntimeError("the achievements scan fell over")

@router.get("/hang")
async def hang():
    import asyncio
    await asyncio.sleep(30)
    return {}
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
    """Write the achievements-shaped dashboard plugin (``register`` does nothing) into ``home``."""
    return user_plugin(
        home,
        "achievements-demo",
        "def register(ctx):\n    pass\n",
        files={
            "dashboard/manifest.json": ACHIEVEMENTS_MANIFEST,
            "dashboard/dist/index.js": ACHIEVEMENTS_JS,
            "dashboard/dist/style.css": ".ach-card { border: 1px solid gold; }\n",
            "dashboard/plugin_api.py": ACHIEVEMENTS_API,
            "dashboard/secret.txt": "not to be served outside its folder\n",
        },
    )


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
    """Write the basic, drain (with its API tab), self-hosted and nous plugins into ``home``."""
    user_plugin(home, "dashboard-basic", BASIC, manifest={"kind": "backend"})
    user_plugin(home, "dashboard-self-hosted", SELF_HOSTED, manifest={"kind": "backend"})
    user_plugin(home, "dashboard-nous", NOUS, manifest={"kind": "backend"})
    user_plugin(
        home,
        "drainctl",
        DRAIN,
        manifest={"kind": "backend"},
        files={
            "dashboard/manifest.json": '{"name": "drainctl", "api": "plugin_api.py"}',
            "dashboard/plugin_api.py": DRAIN_API,
        },
    )

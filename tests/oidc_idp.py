"""A small OpenID Connect identity provider on 127.0.0.1, for the dashboard-auth tests.

It serves a discovery document, a JWKS with one RSA key, an authorization endpoint that
approves the configured user at once (redirecting back with a code), a token endpoint for the
``authorization_code`` grant (checking PKCE S256, the client and the redirect URI) and the
``refresh_token`` grant (rotating refresh tokens), and a revocation endpoint. ID tokens are
RS256 JWTs signed with PyJWT. Everything it was asked is counted in :attr:`IdentityProvider.seen`.

It also answers as a Nous Portal does for a client ``agent:{instance_id}``: the JWKS at
``/.well-known/jwks.json``, ``/oauth/authorize``, ``/api/oauth/token`` (the refresh token also
in the ``x-nous-refresh-token`` header), and an access token that is itself an RS256 JWT with
the ``agent_instance_id`` and ``oauth_contract_version`` claims.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


class IdentityProvider:
    """The provider's state: its key, its user, the codes and refresh tokens it issued."""

    def __init__(self, *, client_id: str = "hermes-dashboard", ttl: int = 600) -> None:
        self.client_id = client_id
        self.ttl = ttl
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(8)
        self.user = {"sub": "user-42", "email": "ada@example.org", "name": "Ada Lovelace"}
        self.codes: dict[str, dict[str, str]] = {}
        self.refresh_tokens: set[str] = set()
        self.revoked: list[str] = []
        self.seen: Counter[str] = Counter()
        self.issuer = ""

    def id_token(self, *, ttl: int | None = None) -> str:
        now = int(time.time())
        claims = {
            **self.user,
            "iss": self.issuer,
            "aud": self.client_id,
            "iat": now,
            "exp": now + (self.ttl if ttl is None else ttl),
        }
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update({"kid": self.kid, "use": "sig", "alg": "RS256"})
        return {"keys": [jwk]}

    def access_token(self, *, ttl: int | None = None) -> str:
        if not self.client_id.startswith("agent:"):
            return secrets.token_urlsafe(24)  # opaque, as most OIDC providers issue
        now = int(time.time())
        claims = {
            "sub": self.user["sub"],
            "email": self.user["email"],
            "iss": self.issuer,
            "aud": self.client_id,
            "iat": now,
            "exp": now + (self.ttl if ttl is None else ttl),
            "scope": "agent_dashboard:access",
            "oauth_contract_version": 1,
            "agent_instance_id": self.client_id.removeprefix("agent:"),
        }
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})

    def tokens(self) -> dict[str, Any]:
        refresh = secrets.token_urlsafe(24)
        self.refresh_tokens.add(refresh)
        return {
            "access_token": self.access_token(),
            "id_token": self.id_token(),
            "refresh_token": refresh,
            "token_type": "Bearer",
            "expires_in": self.ttl,
        }


def _handler(idp: IdentityProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, body: dict[str, Any]) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            idp.seen[url.path] += 1
            if url.path == "/.well-known/openid-configuration":
                self._json(
                    200,
                    {
                        "issuer": idp.issuer,
                        "authorization_endpoint": idp.issuer + "/authorize",
                        "token_endpoint": idp.issuer + "/token",
                        "jwks_uri": idp.issuer + "/jwks",
                        "revocation_endpoint": idp.issuer + "/revoke",
                        "id_token_signing_alg_values_supported": ["RS256"],
                    },
                )
            elif url.path in ("/jwks", "/.well-known/jwks.json"):
                self._json(200, idp.jwks())
            elif url.path in ("/authorize", "/oauth/authorize"):
                query = dict(urllib.parse.parse_qsl(url.query))
                if (
                    query.get("client_id") != idp.client_id
                    or query.get("code_challenge_method") != "S256"
                ):
                    self._json(400, {"error": "invalid_request"})
                    return
                code = secrets.token_urlsafe(16)
                idp.codes[code] = query
                target = (
                    query["redirect_uri"]
                    + "?"
                    + urllib.parse.urlencode({"code": code, "state": query.get("state", "")})
                )
                self.send_response(302)
                self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            idp.seen[url.path] += 1
            length = int(self.headers.get("Content-Length", "0"))
            form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
            if url.path == "/revoke":
                idp.revoked.append(form.get("token", ""))
                idp.refresh_tokens.discard(form.get("token", ""))
                self._json(200, {})
                return
            if self.headers.get("x-nous-refresh-token"):
                idp.seen["x-nous-refresh-token"] += 1
            if url.path not in ("/token", "/api/oauth/token"):
                self._json(404, {"error": "not_found"})
                return
            grant = form.get("grant_type")
            if grant == "authorization_code":
                asked = idp.codes.pop(form.get("code", ""), None)
                verifier = form.get("code_verifier", "").encode()
                challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest())
                ok = (
                    asked is not None
                    and form.get("client_id") == idp.client_id
                    and form.get("redirect_uri") == asked.get("redirect_uri")
                    and challenge.rstrip(b"=").decode() == asked.get("code_challenge")
                )
                if not ok:
                    self._json(400, {"error": "invalid_grant"})
                    return
                self._json(200, idp.tokens())
            elif grant == "refresh_token":
                token = form.get("refresh_token", "")
                if token not in idp.refresh_tokens:
                    self._json(400, {"error": "invalid_grant"})
                    return
                idp.refresh_tokens.discard(token)
                self._json(200, idp.tokens())
            else:
                self._json(400, {"error": "unsupported_grant_type"})

    return Handler


@contextmanager
def running_idp(**kwargs: Any) -> Iterator[IdentityProvider]:
    """Run an :class:`IdentityProvider` on 127.0.0.1 (a port the system chooses)."""
    idp = IdentityProvider(**kwargs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(idp))
    idp.issuer = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield idp
    finally:
        server.shutdown()
        server.server_close()

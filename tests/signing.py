"""A tenant of our own for the sign-in tests: an RSA key the test made, its JWKS served on 127.0.0.1,
and Entra-shaped ID and access tokens signed with it (or with a stranger's key)."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

CLIENT_ID = "6f0c1d2e-0000-4000-8000-00000000c1d2"
TENANT = "72f988bf-0000-4000-8000-0000000072f9"
KID = "test-key-1"


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class Tenant:
    """Signs tokens and publishes its public key at ``keys_url`` (a real HTTP server on 127.0.0.1)."""

    def __init__(self) -> None:
        self.key = new_key()
        self.stranger = new_key()  # signs tokens with our key id that the tenant never published
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        self.jwks = {"keys": [{**jwk, "kid": KID, "use": "sig", "alg": "RS256"}]}
        self.fetches = 0
        tenant = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the stdlib's name
                tenant.fetches += 1
                data = json.dumps(tenant.jwks).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.keys_url = f"http://127.0.0.1:{self.server.server_address[1]}/{TENANT}/discovery/v2.0/keys"
        self.issuer = f"https://login.microsoftonline.com/{TENANT}/v2.0"

    def settings(self) -> dict[str, str]:
        return {"EVALUATION_SIGN_IN_CLIENT_ID": CLIENT_ID, "EVALUATION_SIGN_IN_ISSUER": self.issuer,
                "EVALUATION_SIGN_IN_JWKS_URL": self.keys_url}

    def claims(self, **changes: Any) -> dict[str, Any]:
        """An ID token's claims for Ada, an admin, valid for the next hour; ``changes`` override (None drops)."""
        now = int(time.time())
        claims = {"aud": CLIENT_ID, "iss": self.issuer, "iat": now - 10, "nbf": now - 10, "exp": now + 3600,
                  "tid": TENANT, "oid": "0000ada0-0000-4000-8000-000000000ada", "sub": "ada-subject",
                  "name": "Ada Admin", "preferred_username": "ada@contoso.test", "roles": ["evaluation.admin"]}
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, *, key: rsa.RSAPrivateKey | None = None, kid: str = KID, **changes: Any) -> str:
        return jwt.encode(self.claims(**changes), key or self.key, algorithm="RS256", headers={"kid": kid})

    def app_only_token(self) -> str:
        """A client-credentials access token: an application holding the admin role, naming no user."""
        return self.token(name=None, preferred_username=None, oid="0000a990-0000-4000-8000-00000000a990",
                          sub="0000a990-0000-4000-8000-00000000a990", idtyp="app", azp="1111")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

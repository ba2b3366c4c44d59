"""Proof of who is calling for the golden download: an Entra ID token whose signature the app checks.

``X-MS-CLIENT-PRINCIPAL`` is an unsigned header. App Service authentication strips it from what callers
send, but Flex Consumption's documentation has said its authentication does not block every
unauthenticated caller, so if stripping ever fails there, one forged header would hand out any golden
file. So the golden download (and the question text an admin sees on the Evaluate page) rests on a
token instead: with the token store on, App Service authentication forwards the signed-in person's
Entra tokens to the code in ``X-MS-TOKEN-AAD-ID-TOKEN`` (and ``X-MS-TOKEN-AAD-ACCESS-TOKEN`` when
there is one), and this module believes a token only when

- its RS256 signature verifies against the tenant's published keys (``EVALUATION_SIGN_IN_JWKS_URL``,
  fetched with a 5 s timeout and cached for an hour; an unknown key id refetches them at most once
  every 30 s, so a stream of made-up key ids cannot make the app hammer the tenant),
- its audience is the app registration (``EVALUATION_SIGN_IN_CLIENT_ID`` or ``api://<client id>``),
- its issuer is the tenant's (``EVALUATION_SIGN_IN_ISSUER``),
- it has not expired (``exp``, with 60 s for clocks that disagree), and
- its claims name a person (the rules of ``api.principal``: never an application's token).

The admin role is then the token's ``roles`` claim, never the header's. Whatever the header says, no
token, or a token that fails any of these, gets 403. PyJWT does the cryptography; nothing here is
hand-rolled.
"""
from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, replace
from typing import Any, Mapping

import jwt

from .principal import Caller, caller_from_claims, header_value

log = logging.getLogger(__name__)

TOKEN_HEADERS = ("x-ms-token-aad-id-token", "x-ms-token-aad-access-token")
ALGORITHMS = ["RS256"]  # what Entra signs with; "none" and HMAC are never accepted
KEYS_TIMEOUT = 5.0      # seconds to wait for the tenant's keys
KEYS_LIFESPAN = 3600.0  # seconds the keys are kept before they are fetched again
KEYS_COOLDOWN = 30.0    # at least this long between refetches for an unknown key id
LEEWAY = 60             # seconds of clock difference allowed on exp, nbf and iat
MAX_TOKEN_LENGTH = 16_384  # Entra tokens are a few KB; anything longer is not one


@dataclass(frozen=True)
class TokenCheck:
    """What a token must match: its audiences, its issuer, and where the signing keys are."""

    audiences: tuple[str, ...]
    issuer: str
    keys_url: str

    @classmethod
    def from_settings(cls, settings: Any) -> TokenCheck | None:
        """The check the settings describe; None when sign-in is not configured (then no token passes)."""
        client_id = settings.sign_in_client_id
        if not (client_id and settings.sign_in_issuer and settings.sign_in_jwks_url):
            return None
        return cls((client_id, f"api://{client_id}"), settings.sign_in_issuer, settings.sign_in_jwks_url)


@functools.lru_cache(maxsize=4)
def _keys(url: str) -> jwt.PyJWKClient:
    # One client per keys URL and process: it keeps the key set between requests.
    return jwt.PyJWKClient(url, cache_jwk_set=True, lifespan=KEYS_LIFESPAN, timeout=KEYS_TIMEOUT,
                           cooldown_duration=KEYS_COOLDOWN)


def verified_claims(token: str, check: TokenCheck) -> dict[str, Any]:
    """The claims of ``token`` once its signature, audience, issuer and expiry hold; ``jwt.PyJWTError``
    (with a reason) otherwise."""
    if len(token) > MAX_TOKEN_LENGTH:
        raise jwt.DecodeError(f"the token is {len(token)} characters long, more than any Entra token")
    if not token.isascii():  # a token is base64url and dots; PyJWT would fail encoding anything else (a 500)
        raise jwt.DecodeError("the token holds characters no signed token has")
    key = _keys(check.keys_url).get_signing_key_from_jwt(token)
    return jwt.decode(token, key.key, algorithms=ALGORITHMS, audience=list(check.audiences), issuer=check.issuer,
                      leeway=LEEWAY, options={"require": ["exp", "iat", "aud", "iss"]})


def proven_caller(headers: Mapping[str, str], check: TokenCheck | None) -> Caller | str:
    """The person a forwarded Entra token proves, or why no token proves anyone (a sentence)."""
    if check is None:
        return ("sign-in is not configured for this app (EVALUATION_SIGN_IN_CLIENT_ID, EVALUATION_SIGN_IN_ISSUER "
                "and EVALUATION_SIGN_IN_JWKS_URL are set by deploying with signInClientId)")
    tokens = [t.strip() for t in (header_value(headers, name) for name in TOKEN_HEADERS) if t and t.strip()]
    if not tokens:
        return ("no signed token came with the request (App Service authentication forwards one from its "
                "token store once you sign in)")
    problems = []
    for token in tokens:
        try:
            claims = verified_claims(token, check)
        except jwt.PyJWKClientConnectionError as err:
            log.warning("the tenant's signing keys could not be fetched from %s: %s", check.keys_url, err)
            return "the tenant's signing keys could not be fetched to check the sign-in; try again shortly"
        except jwt.PyJWTError as err:
            problems.append(_why(err))
            continue
        return caller_from_claims(_pairs(claims), provider="aad")
    return f"the token that came with the request was refused: {problems[0]}"


def golden_caller(headers: Mapping[str, str], principal: Caller, check: TokenCheck | None) -> Caller:
    """The caller as the golden download sees it: the person a token proves, or ``principal`` (still
    signed in for the Evaluate page) who may not have golden files, with the reason."""
    proven = proven_caller(headers, check)
    if isinstance(proven, Caller):
        return proven
    why = proven if principal.signed_in else f"{principal.why_not_person}, and {proven}"
    return replace(principal, person=False, why_not_person=why)


def _pairs(claims: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A token's claims as ``(type, value)`` pairs, one per value of a list claim such as ``roles``."""
    pairs = []
    for name, value in claims.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                pairs.append((name, item))
    return pairs


def _why(err: jwt.PyJWTError) -> str:
    if isinstance(err, jwt.ExpiredSignatureError):
        return "it has expired; sign in again"
    if isinstance(err, jwt.InvalidAudienceError):
        return "it was issued for another application (its audience is not this app's registration)"
    if isinstance(err, jwt.InvalidIssuerError):
        return "it was not issued by this app's tenant"
    if isinstance(err, jwt.InvalidSignatureError):
        return "its signature does not match the tenant's keys"
    if isinstance(err, jwt.PyJWKClientError):
        return "it is signed with a key the tenant does not publish"
    if isinstance(err, jwt.MissingRequiredClaimError):
        return f"it lacks the {err.claim!r} claim"
    if isinstance(err, jwt.InvalidAlgorithmError):
        return "it is not signed with RS256"
    return f"it cannot be read as a signed token ({type(err).__name__})"

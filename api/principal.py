"""Who is calling: App Service authentication's client principal, read as the app can trust it.

When App Service authentication ("Easy Auth") is on, the platform signs callers in and passes their
claims to the app in ``X-MS-CLIENT-PRINCIPAL``: base64 of ``{"auth_typ", "claims": [{"typ", "val"}],
"name_typ", "role_typ"}``. The platform removes that header from what callers send, but only when it
is on, so the header is believed only when the settings say so (``WEBSITE_AUTH_ENABLED``); otherwise
every caller is anonymous here, whatever it sends.

A function key says nothing about who is calling: it is a shared secret of the app, so a caller with
only a key is anonymous too. The header is unsigned, so it decides only who is signed in (the
Evaluate page); golden files need a token whose signature the app checks (``api.tokens``).

A person, not an application: Microsoft Entra issues tokens to both, and an application (a managed
identity, a service principal) can be given app roles too. A principal counts as a person only when it
comes from Microsoft Entra (``auth_typ`` "aad"), does not say it is an app (``idtyp`` "app"), and
carries something only a user's sign-in has: ``idtyp`` "user", a delegated scope (``scp``), or a user
name (``preferred_username`` or ``upn``). Application-only tokens have none of these.

A name is the platform's to say, not ours to trust as tidy: a longer one than Entra allows (256
characters) is cut there with its length said, and its control characters and lone surrogates become
``\\u`` escapes (``errors.printable``), so the page, a refusal and a log line can always show it.
"""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Mapping

from evaluation.errors import printable, shown

HEADER = "x-ms-client-principal"
ENTRA = "aad"
SCOPE_CLAIMS = ("scp", "http://schemas.microsoft.com/identity/claims/scope")
USER_NAME_CLAIMS = ("preferred_username", "upn", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn")
ROLE_CLAIMS = ("roles", "http://schemas.microsoft.com/ws/2008/06/identity/claims/role")
NAME_CLAIMS = ("name", "preferred_username", "upn", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name")
MAX_NAME = 256  # characters of a caller's name the app shows or logs: the longest display name Entra allows


@dataclass(frozen=True)
class Caller:
    """What the app may believe about a caller."""

    signed_in: bool
    person: bool
    name: str | None
    roles: frozenset[str]
    why_not_person: str   # a sentence for refusals; "" for a person

    def may_download_golden(self, admin_role: str) -> tuple[bool, str]:
        """(allowed, the reason in words): an admin signed in as a person, nothing else."""
        if not self.person:
            return False, self.why_not_person
        if admin_role not in self.roles:
            return False, (f"{self.name or 'this person'} is signed in but does not hold the app role "
                           f"{admin_role!r} that golden files need; an owner of the app can assign it")
        return True, f"{self.name or 'this person'} holds the app role {admin_role!r}"


ANONYMOUS_NO_AUTH = Caller(False, False, None, frozenset(),
                           "nobody is signed in: App Service authentication is off for this app, so sign-ins "
                           "cannot be trusted (and a function key names no one)")
ANONYMOUS = Caller(False, False, None, frozenset(),
                   "nobody is signed in (a function key names no one): sign in through the app's "
                   "App Service authentication as a person")


def read_caller(headers: Mapping[str, str], *, trusted: bool) -> Caller:
    """The caller of a request with ``headers``; ``trusted`` is whether App Service authentication is on."""
    if not trusted:
        return ANONYMOUS_NO_AUTH
    raw = header_value(headers, HEADER)
    if not raw:
        return ANONYMOUS
    principal = _decode(raw)
    if principal is None:
        return Caller(False, False, None, frozenset(), "the sign-in the platform passed on cannot be read")
    return caller_from_claims(_claims(principal), provider=str(principal.get("auth_typ") or ""),
                              role_type=str(principal.get("role_typ") or "roles"),
                              name_type=str(principal.get("name_typ") or ""))


def caller_from_claims(claims: list[tuple[str, str]], *, provider: str, role_type: str = "roles",
                       name_type: str = "") -> Caller:
    """Who ``claims`` (``(type, value)`` pairs) say is calling: the rules of the module docstring, the
    same for the principal header and for a token whose signature was checked (``api.tokens``)."""
    roles = frozenset(v for t, v in claims if t in (role_type, *ROLE_CLAIMS))
    claimed = next((v for t, v in claims if t == name_type), None) or next(
        (v for wanted in NAME_CLAIMS for t, v in claims if t == wanted), None)
    # The name is shown (the page's "signed in as", a refusal) and logged: never a lone surrogate, a
    # control character or a megabyte, whatever the claim holds.
    name = printable(claimed, MAX_NAME) if claimed else None
    provider = provider.lower()
    if provider != ENTRA:
        said = shown(provider) if provider else "an unknown provider"
        return Caller(True, False, name, roles, f"signed in through {said}, not Microsoft Entra, whose app "
                                                "roles golden files need")
    kinds = {v.lower() for t, v in claims if t == "idtyp"}
    if "app" in kinds:
        return Caller(True, False, name, roles, "signed in as an application, not a person; golden files go "
                                                "only to people")
    user = ("user" in kinds or any(t in SCOPE_CLAIMS for t, _ in claims)
            or any(t in USER_NAME_CLAIMS for t, _ in claims))
    if not user:
        return Caller(True, False, name, roles, "signed in with a token that names no user (an application's "
                                                "token); golden files go only to people")
    return Caller(True, True, name, roles, "")


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict in a test or another host: match the name without case
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value


def _decode(raw: str) -> dict[str, Any] | None:
    try:
        data = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=False)
        principal = json.loads(data.decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested 100,000 deep
        return None
    return principal if isinstance(principal, dict) else None


def _claims(principal: dict[str, Any]) -> list[tuple[str, str]]:
    claims = principal.get("claims")
    found: list[tuple[str, str]] = []
    for claim in claims if isinstance(claims, list) else []:  # "claims": 5 names no one, and is no 500
        if isinstance(claim, dict) and isinstance(claim.get("typ"), str) and isinstance(claim.get("val"), str):
            found.append((claim["typ"], claim["val"]))
    return found

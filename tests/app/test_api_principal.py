"""Who is calling: a person or an application, signed in or not, holding the admin role or not."""
from __future__ import annotations

import base64
import json

import pytest

from api.principal import read_caller

ROLE = "admin"


def header(claims, *, provider="aad", role_typ="roles", padded=True) -> dict[str, str]:
    body = {"auth_typ": provider, "name_typ": "name", "role_typ": role_typ,
            "claims": [{"typ": t, "val": v} for t, v in claims]}
    text = base64.b64encode(json.dumps(body).encode()).decode()
    return {"X-MS-CLIENT-PRINCIPAL": text if padded else text.rstrip("=")}


@pytest.mark.parametrize("claims", [
    [("preferred_username", "ada@contoso.test")],                         # a browser sign-in (ID token, v2)
    [("upn", "ada@contoso.test")],                                        # v1 tokens
    [("http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn", "ada@contoso.test")],  # as Easy Auth maps it
    [("http://schemas.microsoft.com/identity/claims/scope", "user_impersonation")],       # a delegated token
    [("scp", "user_impersonation")],
    [("idtyp", "user")],
], ids=["preferred_username", "upn", "upn-uri", "scope-uri", "scp", "idtyp-user"])
def test_a_user_sign_in_is_a_person(claims):
    caller = read_caller(header([*claims, ("roles", ROLE)]), trusted=True)

    assert caller.person and caller.may_download_golden(ROLE)[0]


@pytest.mark.parametrize("claims, words", [
    ([("idtyp", "app"), ("preferred_username", "odd@contoso.test")], "signed in as an application"),
    ([("appid", "1111"), ("oid", "2222"), ("sub", "2222")], "names no user"),   # a managed identity's token
], ids=["idtyp-app", "app-only-token"])
def test_an_application_holding_the_admin_role_is_not_a_person(claims, words):
    caller = read_caller(header([*claims, ("roles", ROLE)]), trusted=True)

    allowed, reason = caller.may_download_golden(ROLE)
    assert caller.signed_in and not caller.person and not allowed and words in reason


def test_only_microsoft_entra_sign_ins_count_as_people_for_golden_files():
    caller = read_caller(header([("preferred_username", "ada@example.test"), ("roles", ROLE)], provider="github"),
                         trusted=True)

    assert not caller.person and "not Microsoft Entra" in caller.why_not_person


def test_the_role_must_be_the_admin_role_from_the_settings():
    caller = read_caller(header([("preferred_username", "ada@contoso.test"), ("name", "Ada"), ("roles", "reader"),
                                 ("roles", "administrator")]), trusted=True)

    allowed, reason = caller.may_download_golden(ROLE)
    assert (
        caller.person and not allowed and reason.startswith("Ada is signed in but does not hold the app role 'admin'")
    )
    assert caller.may_download_golden("reader")[0]


def test_roles_are_read_from_the_claim_type_the_principal_names():
    caller = read_caller(header([("upn", "ada@contoso.test"), ("http://schemas.microsoft.com/ws/2008/06/identity/claims/role",
                                                               ROLE)], role_typ="custom-role"), trusted=True)
    custom = read_caller(header([("upn", "ada@contoso.test"), ("custom-role", ROLE)], role_typ="custom-role"),
                         trusted=True)

    assert caller.may_download_golden(ROLE)[0] and custom.may_download_golden(ROLE)[0]


def test_a_principal_is_believed_only_when_app_service_authentication_is_on():
    caller = read_caller(header([("preferred_username", "ada@contoso.test"), ("roles", ROLE)]), trusted=False)

    assert not caller.signed_in and "App Service authentication is off" in caller.may_download_golden(ROLE)[1]


@pytest.mark.parametrize("headers", [{}, {"x-functions-key": "k"}, {"X-MS-CLIENT-PRINCIPAL": "not base64 json!"},
                                     {"X-MS-CLIENT-PRINCIPAL": base64.b64encode(b"[1, 2]").decode()}])
def test_no_principal_or_one_that_cannot_be_read_is_nobody(headers):
    caller = read_caller(headers, trusted=True)

    assert not caller.signed_in and not caller.may_download_golden(ROLE)[0]


def test_the_header_is_read_without_padding_and_whatever_its_case():
    caller = read_caller({"x-ms-client-principal": header([("upn", "ada@contoso.test"), ("roles", ROLE)],
                                                          padded=False)["X-MS-CLIENT-PRINCIPAL"]}, trusted=True)

    assert caller.person and caller.may_download_golden(ROLE)[0]


@pytest.mark.parametrize("inside", [b"[" * 100_000 + b"]" * 100_000, b'{"a": ' * 100_000 + b"1" + b"}" * 100_000],
                         ids=["arrays", "objects"])
def test_a_principal_nested_100000_deep_is_nobody_never_an_exception(inside):
    """Issue 22, probe 7: json.loads gave up with RecursionError, which reached the host as a 500."""
    raw = base64.b64encode(b'{"auth_typ": "aad", "claims": ' + inside + b"}").decode()

    caller = read_caller({"X-MS-CLIENT-PRINCIPAL": raw}, trusted=True)

    assert not caller.signed_in and "cannot be read" in caller.why_not_person

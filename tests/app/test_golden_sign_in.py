"""The golden download believes a person only when a signed Entra token proves it (issue 22, probe 12):
tokens signed by a tenant the test made, whose keys it serves on 127.0.0.1, checked by the real route
with PyJWT. The principal header alone, forged or not, never gets a golden file."""
from __future__ import annotations

import re
import time

import pytest

from api import routes, site
from api.tokens import KEYS_COOLDOWN
from evaluation.store import LocalStore
from evaluation.store.collections import LocalCollections

from conftest import GOLDEN_RAW
from test_api_routes import DOCS, TENANT, body, call, fill, principal, settings

URL = f"/api/v1/evaluations/{DOCS[0]}/golden?collection=docs"
PRINCIPAL = {"X-MS-CLIENT-PRINCIPAL": principal()}  # Ada, an admin, as the header claims


@pytest.fixture
def runs(tmp_path, make_report):
    fill(lambda name: LocalStore(tmp_path / name), make_report)
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        yield


def download(token: str | None, *, header: str = "X-MS-TOKEN-AAD-ID-TOKEN", principal_header=PRINCIPAL):
    headers = {**principal_header, **({header: token} if token is not None else {})}
    return call(routes.get_evaluation_golden, URL, headers)


def test_a_valid_admin_id_token_gets_the_golden_file(runs):
    response = download(TENANT.token())

    assert response.status_code == 200 and response.get_body() == GOLDEN_RAW


def test_a_delegated_access_token_for_the_apps_api_counts_too(runs):
    token = TENANT.token(aud=f"api://{TENANT.claims()['aud']}", scp="user_impersonation", preferred_username=None)

    assert download(token, header="X-MS-TOKEN-AAD-ACCESS-TOKEN").status_code == 200


def test_every_forwarded_token_is_tried_so_an_expired_id_token_beside_a_valid_access_token_gets_the_file(runs):
    # App Service authentication forwards both; the ID token expires first (an hour), the access token is
    # refreshed: trying only the first would turn a proven admin away with 403
    expired_id = TENANT.token(exp=int(time.time()) - 3600)
    access = TENANT.token(aud=f"api://{TENANT.claims()['aud']}", scp="user_impersonation", preferred_username=None)
    headers = {**PRINCIPAL, "X-MS-TOKEN-AAD-ID-TOKEN": expired_id, "X-MS-TOKEN-AAD-ACCESS-TOKEN": access}

    response = call(routes.get_evaluation_golden, URL, headers)

    assert response.status_code == 200 and response.get_body() == GOLDEN_RAW
    both_bad = call(routes.get_evaluation_golden, URL, {**headers, "X-MS-TOKEN-AAD-ACCESS-TOKEN": expired_id})
    assert both_bad.status_code == 403 and "it has expired" in body(both_bad)["error"]


def stranger_kid():
    return TENANT.token(kid="a-key-nobody-published")


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda: TENANT.token(key=TENANT.stranger), "its signature does not match the tenant's keys"),
        (lambda: TENANT.token(aud="00000003-0000-0000-c000-000000000000"), "issued for another application"),
        (
            lambda: TENANT.token(iss="https://login.microsoftonline.com/another-tenant/v2.0"),
            "not issued by this app's tenant",
        ),
        (lambda: TENANT.token(exp=int(time.time()) - 3600), "it has expired"),  # an hour ago: beyond any leeway
        (lambda: TENANT.token(exp=None), "lacks the 'exp' claim"),
        (lambda: TENANT.token(roles=["evaluation.reader"]), "does not hold the app role 'evaluation.admin'"),
        (lambda: TENANT.token(roles=None), "does not hold the app role"),
        (lambda: TENANT.app_only_token(), "signed in as an application"),
        (lambda: TENANT.token(idtyp=None, name=None, preferred_username=None), "names no user"),
        (lambda: stranger_kid(), "signed with a key the tenant does not publish"),
        (lambda: "not.a.token", "cannot be read as a signed token"),
        (lambda: None, "no signed token came with the request"),
    ],
    ids=[
        "wrong-signature",
        "wrong-audience",
        "wrong-issuer",
        "expired",
        "no-expiry",
        "no-admin-role",
        "no-roles",
        "app-only",
        "no-user",
        "unknown-key",
        "garbage",
        "forged-principal-no-token",
    ],
)
def test_any_token_that_fails_a_check_gets_403_whatever_the_principal_header_says(runs, make, says):
    response = download(make())

    assert response.status_code == 403, says
    assert response.get_body() != GOLDEN_RAW and says in body(response)["error"]


def test_a_token_that_expired_within_a_minute_is_still_accepted_for_clocks_that_disagree(runs):
    assert download(TENANT.token(exp=int(time.time()) - 30)).status_code == 200  # 30 s < the 60 s leeway
    assert download(TENANT.token(exp=int(time.time()) - 90)).status_code == 403  # 90 s > 60 s


def test_an_unsigned_token_is_never_accepted(runs):
    import jwt

    unsigned = jwt.encode(TENANT.claims(), key=None, algorithm="none", headers={"kid": "test-key-1"})

    assert download(unsigned).status_code == 403


def test_without_sign_in_settings_no_token_is_believed(tmp_path, make_report):
    fill(lambda name: LocalStore(tmp_path / name), make_report)
    with site.use(settings=settings(EVALUATION_SIGN_IN_JWKS_URL=""), collections=LocalCollections(tmp_path)):
        response = download(TENANT.token())

    assert response.status_code == 403 and "sign-in is not configured" in body(response)["error"]


def test_the_roles_come_from_the_token_never_from_the_header(runs):
    reader_header = {"X-MS-CLIENT-PRINCIPAL": principal(roles=("reader",))}

    assert download(TENANT.token(), principal_header=reader_header).status_code == 200
    assert download(TENANT.token(roles=["reader"]), principal_header=PRINCIPAL).status_code == 403


def test_the_page_shows_question_text_only_to_a_token_proven_admin(runs):
    proven = call(routes.evaluate_page, "/api/evaluate", {**PRINCIPAL, "X-MS-TOKEN-AAD-ID-TOKEN": TENANT.token()})
    claimed = call(routes.evaluate_page, "/api/evaluate", PRINCIPAL)

    assert proven.status_code == claimed.status_code == 200
    assert "Where is C?" in proven.get_body().decode()
    assert "Where is C?" not in claimed.get_body().decode() and "signed in as Ada Admin" in claimed.get_body().decode()


def test_the_keys_are_fetched_once_and_an_unknown_key_id_does_not_refetch_them_every_time(runs):
    before = TENANT.fetches
    for _ in range(3):
        assert download(TENANT.token()).status_code == 200
    for _ in range(5):
        assert download(stranger_kid()).status_code == 403

    # the key set may be fetched once by this test (if no earlier one did) plus one refetch for the
    # unknown key id, never once per request: 3 + 5 requests, at most 2 fetches within KEYS_COOLDOWN
    assert KEYS_COOLDOWN >= 30 and TENANT.fetches - before <= 2


# -- the file's name in Content-Disposition (issue 22, probe 8) -------------------------------------------

@pytest.mark.parametrize("collection", ['a"b;c', "a\r\nSet-Cookie: x=1", "équipe docs", "tab\there", "back\\slash"],
                         ids=["quote-semicolon", "crlf", "unicode", "tab", "backslash"])
def test_any_collection_name_gives_one_well_formed_content_disposition(tmp_path, make_report, collection):
    from email.message import EmailMessage
    from urllib.parse import unquote

    from evaluation.evaluate import save_report

    save_report(LocalStore(tmp_path / collection), make_report(DOCS[0]), GOLDEN_RAW)
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        response = call(routes.get_evaluation_golden, f"/api/v1/evaluations/{DOCS[0]}/golden",
                        {**PRINCIPAL, "X-MS-TOKEN-AAD-ID-TOKEN": TENANT.token()})

    assert response.status_code == 200 and response.get_body() == GOLDEN_RAW
    value = response.headers["Content-Disposition"]
    assert value.isascii() and value.isprintable() and "\r" not in value and "\n" not in value
    message = EmailMessage()
    message["Content-Disposition"] = value
    params = dict(message["Content-Disposition"].params)
    assert message.get_content_disposition() == "attachment" and set(params) == {"filename"}
    # RFC 6266: filename* (RFC 5987, UTF-8) carries the exact name; filename is its ASCII stand-in
    extended = value.split("filename*=", 1)[1]
    assert re.fullmatch(r"UTF-8''[A-Za-z0-9!#$&+.^_`|~%-]+", extended)  # RFC 5987 attr-chars and %XX only
    assert unquote(extended[len("UTF-8''"):]).startswith(f"{collection}-golden-")
    fallback = value.split('filename="', 1)[1].split('"', 1)[0]
    assert fallback.endswith(".jsonl") and all(c.isalnum() or c in "._-" for c in fallback)

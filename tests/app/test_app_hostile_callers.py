"""A signed-in caller the app cannot trust to be tidy (issue 37): a name holding a lone surrogate, control
characters or a megabyte, a provider name as long, a path that a browser would read as another host.
Every answer is the page or a short sentence, never a 500, and the way back from sign-in stays here.
Called as the host calls the routes: the registered functions with real ``azure.functions`` objects."""
from __future__ import annotations

import base64
import json
from html import escape
from urllib.parse import parse_qs, urlsplit

import azure.functions as func
import pytest

from api import routes, site
from api.principal import MAX_NAME, read_caller
from evaluation.errors import printable
from evaluation.store import LocalStore
from evaluation.store.collections import LocalCollections

from test_api_routes import ADMIN_ROLE, DOCS, TENANT, body, call, fill, principal, settings

MB = 1024 * 1024


@pytest.fixture
def runs(tmp_path, make_report):
    fill(lambda name: LocalStore(tmp_path / name), make_report)
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        yield


def signed_in_as(name: str, *, provider: str = "aad") -> dict[str, str]:
    """The principal header of a person whose name claim is ``name`` (JSON escapes a lone surrogate, as the
    platform's JSON may)."""
    return {"X-MS-CLIENT-PRINCIPAL": principal(roles=("reader",), provider=provider, claims=[
        {"typ": "name", "val": name}, {"typ": "preferred_username", "val": "ada@contoso.test"}])}


HOSTILE_NAMES = {
    "lone-surrogate": "Ada \ud800 Admin",
    "control-characters": "Ada\x00\x07\x1b[31m\r\nSet-Cookie: x=1",
    "reordering-marks": "Ada \u202eelif.exe\u2066",
    "markup": "<script>alert(1)</script>\"'&",
    "a-megabyte": "N" * MB,
    "separators-only": "\u2028\u2029\x85",
}


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_the_evaluate_page_answers_any_signed_in_name_and_shows_it_cut_and_escaped(runs, name):
    plain = call(routes.evaluate_page, "/api/evaluate", signed_in_as("Ada"))
    response = call(routes.evaluate_page, "/api/evaluate", signed_in_as(name))

    assert response.status_code == 200
    page = response.get_body().decode("utf-8")  # strict: the page is UTF-8 through and through
    assert f'<span class="who">signed in as {escape(printable(name, MAX_NAME))}</span>' in page
    assert len(page) < len(plain.get_body()) + 2 * MAX_NAME  # at most about 256 characters of name, escaped
    assert "<script>alert" not in page


def test_a_name_over_256_characters_is_cut_with_its_length_said():
    caller = read_caller(signed_in_as("N" * MB), trusted=True)

    assert caller.name == "N" * (MAX_NAME - 1) + "… (1,048,576 characters)" and caller.signed_in


def test_a_provider_name_of_a_megabyte_is_refused_in_a_short_sentence():
    caller = read_caller(signed_in_as("Ada", provider="p" * MB), trusted=True)

    assert not caller.person and "not Microsoft Entra" in caller.why_not_person
    assert len(caller.why_not_person) < 300 and "(1,048,576 characters)" in caller.why_not_person


def test_a_token_proven_reader_with_a_long_name_is_refused_in_a_short_sentence(runs):
    # a token is at most 16,384 characters, so its name at most about 12,000
    token = TENANT.token(name="N" * 10_000, roles=["reader"])
    response = call(routes.get_evaluation_golden, "/api/v1/evaluations/latest/golden",
                    {"X-MS-CLIENT-PRINCIPAL": principal(), "X-MS-TOKEN-AAD-ID-TOKEN": token})

    assert response.status_code == 403 and len(response.get_body()) < 1024
    assert f"does not hold the app role '{ADMIN_ROLE}'" in body(response)["error"]


@pytest.mark.parametrize("claims", [5, "name", {"typ": "name", "val": "Ada"}, None, [5, ["name", "Ada"], None]],
                         ids=["a-number", "a-string", "an-object", "null", "odd-items"])
def test_a_principal_whose_claims_are_not_a_list_of_claims_is_answered_never_a_500(runs, claims):
    raw = base64.b64encode(json.dumps({"auth_typ": "aad", "claims": claims}).encode()).decode()

    response = call(routes.evaluate_page, "/api/evaluate", {"X-MS-CLIENT-PRINCIPAL": raw})

    assert response.status_code == 200 and "signed in as" not in response.get_body().decode()  # nobody named


@pytest.mark.parametrize("token", ["\ud800.\ud800.\ud800", "é" * 100, "a.b.c\x00"], ids=["lone-surrogates", "accents",
                                                                                         "control-character"])
def test_a_token_holding_characters_no_signed_token_has_is_refused_with_403_never_a_500(runs, token):
    response = call(routes.get_evaluation_golden, f"/api/v1/evaluations/{DOCS[0]}/golden?collection=docs",
                    {"X-MS-CLIENT-PRINCIPAL": principal(), "X-MS-TOKEN-AAD-ID-TOKEN": token})

    assert response.status_code == 403 and "cannot be read as a signed token" in body(response)["error"]


# -- the way back from sign-in ------------------------------------------------------------------------

def way_back(response: func.HttpResponse) -> str:
    location = urlsplit(response.headers["Location"])
    assert location.path == "/.auth/login/aad" and not location.netloc
    return parse_qs(location.query)["post_login_redirect_uri"][0]


@pytest.mark.parametrize("path, back", [
    ("//evil.example/api/evaluate", "/evil.example/api/evaluate"),
    ("///evil.example/x?page=2", "/evil.example/x?page=2"),
    ("/\\evil.example/x", "/evil.example/x"),
    ("/\\/evil.example", "/evil.example"),
    ("/api/evaluate?run=x", "/api/evaluate?run=x"),   # a path of this site: kept as it is
], ids=["two-slashes", "three-slashes", "backslash", "backslash-slash", "same-site"])
def test_the_way_back_from_sign_in_is_a_path_of_this_site_never_another_host(runs, path, back):
    # a browser reads //evil.example/x, and /\evil.example/x, as the host evil.example (an open redirect)
    request = func.HttpRequest("GET", f"https://evals.azurewebsites.net{path}", headers={},
                               params=dict(parse_qs(urlsplit(path).query)), body=b"")

    response = routes.evaluate_page.build().get_user_function()(request)

    assert response.status_code == 302
    kept = way_back(response)
    assert kept == back and not urlsplit(kept).netloc and not kept.startswith(("//", "/\\"))


def test_a_lone_surrogate_in_the_url_is_sent_to_sign_in_never_a_500(runs):
    request = func.HttpRequest("GET", "https://evals.azurewebsites.net/api/evaluate?run=\ud800", headers={},
                               params={"run": "\ud800"}, body=b"")

    response = routes.evaluate_page.build().get_user_function()(request)

    assert response.status_code == 302 and way_back(response).startswith("/api/evaluate?run=")


"""The runs routes and the Evaluate page, called as the Functions host calls them: the registered
functions with real ``azure.functions.HttpRequest`` objects, over runs kept in a local folder and in
an Azurite container (opened from the app's settings, as in Azure)."""
from __future__ import annotations

import base64
import json
import re
from urllib.parse import parse_qsl, urlsplit

import azure.functions as func
import pytest

from api import routes, site
from api.page import MENU_SIZE
from app.settings import AppSettings
from evaluation.evaluate import save_report
from evaluation.store import LocalStore, open_store
from evaluation.store.collections import LocalCollections

from conftest import GOLDEN_RAW
from signing import Tenant

ADMIN_ROLE = "evaluation.admin"
PERSON_CLAIMS = [{"typ": "name", "val": "Ada Admin"}, {"typ": "preferred_username", "val": "ada@contoso.test"},
                 {"typ": "http://schemas.microsoft.com/identity/claims/scope", "val": "user_impersonation"}]


def principal(*, roles=(ADMIN_ROLE,), claims=PERSON_CLAIMS, provider="aad") -> str:
    """An X-MS-CLIENT-PRINCIPAL value as App Service authentication writes it."""
    body = {"auth_typ": provider, "name_typ": "name", "role_typ": "roles",
            "claims": [*claims, *({"typ": "roles", "val": r} for r in roles)]}
    return base64.b64encode(json.dumps(body).encode()).decode()


# The tenant people sign in with: its keys served on 127.0.0.1 for the whole module. An admin's request
# carries what App Service authentication forwards with its token store on: the principal and the ID token.
TENANT = Tenant()
ADMIN = {"X-MS-CLIENT-PRINCIPAL": principal(), "X-MS-TOKEN-AAD-ID-TOKEN": TENANT.token()}
READER = {"X-MS-CLIENT-PRINCIPAL": principal(roles=("reader",))}
APP_WITH_ADMIN_ROLE = {"X-MS-CLIENT-PRINCIPAL": principal(claims=[{"typ": "idtyp", "val": "app"},
                                                                  {"typ": "appid", "val": "1111"}])}
KEY_ONLY = {"x-functions-key": "a-valid-function-key"}

# -- the runs: two collections, times interleaved -------------------------------------------------

DOCS = ["20261101T090000000Z-0000d1", "20261103T090000000Z-0000d2", "20261105T090000000Z-0000d3"]
FAQ = ["20261102T090000000Z-0000f1", "20261104T090000000Z-0000f2"]
NEWEST_FIRST = [("docs", DOCS[2]), ("faq", FAQ[1]), ("docs", DOCS[1]), ("faq", FAQ[0]), ("docs", DOCS[0])]


OLD_GOLDEN = GOLDEN_RAW.replace(b"Where is C?", b"Where was C?")


def fill(store_of, make_report) -> None:
    """docs: three runs with golden copies and pages; faq: its older run, on an older golden file, saved
    bare (no golden copy, no page, as runs were kept before pages existed), its newer one with both."""
    for run_id in DOCS:
        save_report(store_of("docs"), make_report(run_id), GOLDEN_RAW)
    store_of("faq").save(make_report(FAQ[0], golden_raw=OLD_GOLDEN, with_text=True))  # made before issue 8
    save_report(store_of("faq"), make_report(FAQ[1]), GOLDEN_RAW)


def settings(**extra) -> AppSettings:
    return AppSettings.from_environ({"EVALUATION_ADMIN_ROLE": ADMIN_ROLE, "WEBSITE_AUTH_ENABLED": "True",
                                     **TENANT.settings(), **extra})


@pytest.fixture(params=["folder", pytest.param("azurite", marks=pytest.mark.azurite)])
def app(request, tmp_path, make_report):
    """The routes reading runs from a folder, or from an Azurite container opened from the settings."""
    if request.param == "folder":
        fill(lambda name: LocalStore(tmp_path / name), make_report)
        with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
            yield request.param
        return
    azurite = request.getfixturevalue("azurite")
    container = azurite.new_container()
    fill(lambda name: open_store(azurite.address(container, name)), make_report)
    with site.use(settings=settings(EVALUATION_STORAGE_CONNECTION_STRING=azurite.connection_string,
                                    EVALUATION_CONTAINER=container)):
        yield request.param


def call(route, url: str, headers: dict | None = None) -> func.HttpResponse:
    """Call a registered route as the host would, for ``url`` (its path fills the route's parameters)."""
    parts = urlsplit(url)
    template = route.build().get_trigger().route
    pattern = "^/api/" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template.replace(".", r"\.")) + "$"
    match = re.match(pattern, parts.path)
    assert match, f"{url} does not match {template}"
    request = func.HttpRequest("GET", f"http://localhost{url}", headers=headers or {},
                               params=dict(parse_qsl(parts.query)), route_params=match.groupdict(), body=b"")
    return route.build().get_user_function()(request)


def body(response: func.HttpResponse):
    return json.loads(response.get_body())


# -- the list ---------------------------------------------------------------------------------------

def test_runs_are_listed_newest_first_across_collections_a_page_at_a_time(app):
    first = call(routes.list_evaluations, "/api/v1/evaluations?limit=2&offset=0")
    last = call(routes.list_evaluations, "/api/v1/evaluations?limit=2&offset=4")

    assert first.status_code == 200 and first.mimetype == "application/json"
    page = body(first)
    assert [(r["collection"], r["id"]) for r in page["runs"]] == NEWEST_FIRST[:2]
    assert (page["total"], page["limit"], page["offset"]) == (5, 2, 0)
    assert page["next"] == "/api/v1/evaluations?limit=2&offset=2"
    assert [(r["collection"], r["id"]) for r in body(last)["runs"]] == NEWEST_FIRST[4:]
    assert body(last)["next"] is None
    exactly_all = body(call(routes.list_evaluations, "/api/v1/evaluations?limit=5"))  # 0 + 5 = 5 runs: no more
    assert len(exactly_all["runs"]) == 5 and exactly_all["next"] is None
    row = page["runs"][0]
    assert row["links"]["self"] == f"/api/v1/evaluations/{DOCS[2]}?collection=docs"
    assert row["found_10"] == {"local.keyword.bm25": 2, "local.dense.bge-small": 3, "local.hybrid.bge-small": None}


def test_the_default_page_is_twenty_and_a_collection_narrows_the_list(app):
    everything = body(call(routes.list_evaluations, "/api/v1/evaluations"))
    faq = body(call(routes.list_evaluations, "/api/v1/evaluations?collection=faq"))

    assert everything["limit"] == 20 and len(everything["runs"]) == 5
    assert [r["id"] for r in faq["runs"]] == [FAQ[1], FAQ[0]]


@pytest.mark.parametrize("query, words", [("limit=0", 'limit="0" must be a whole number from 1 to 100'),
                                          ("limit=101", "from 1 to 100"), ("offset=-1", 'offset="-1"'),
                                          ("limit=ten", 'limit="ten"')])
def test_a_page_that_cannot_be_read_is_a_400_naming_the_parameter(app, query, words):
    response = call(routes.list_evaluations, f"/api/v1/evaluations?{query}")

    assert response.status_code == 400 and words in body(response)["error"]


def test_an_unknown_collection_is_a_404_that_names_the_ones_there(app):
    response = call(routes.list_evaluations, "/api/v1/evaluations?collection=fqa")

    assert response.status_code == 404
    assert 'no collection "fqa"' in body(response)["error"] and 'Did you mean "faq"?' in body(response)["error"]


# -- one run ----------------------------------------------------------------------------------------

def test_latest_is_the_newest_run_of_all_collections_or_of_the_one_named(app):
    newest = body(call(routes.get_evaluation, "/api/v1/evaluations/latest"))
    newest_faq = body(call(routes.get_evaluation, "/api/v1/evaluations/latest?collection=faq"))

    assert (newest["collection"], newest["id"]) == ("docs", DOCS[2])
    assert (newest_faq["collection"], newest_faq["id"]) == ("faq", FAQ[1])


def test_latest_and_the_evaluate_page_pass_over_strange_folders_and_a_broken_newest_report(tmp_path, make_report):
    fill(lambda name: LocalStore(tmp_path / name), make_report)
    LocalStore(tmp_path / "faq")._write_new("retrieval/runs/zzz/report.json",  # sorts after every time id
                                            (json.dumps(make_report("zzz")) + "\n").encode())
    LocalStore(tmp_path / "faq")._write_new("retrieval/runs/20261106T090000000Z-0000f3/report.json", b"{broken")

    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        newest = call(routes.get_evaluation, "/api/v1/evaluations/latest")
        page = call(routes.evaluate_page, "/api/evaluate", READER)

    assert newest.status_code == 200 and (body(newest)["collection"], body(newest)["id"]) == ("docs", DOCS[2])
    assert page.status_code == 200 and f"Run <code>{DOCS[2]}</code>" in page.get_body().decode()


def test_a_run_is_found_by_its_id_alone_and_holds_no_question_text(app):
    response = call(routes.get_evaluation, f"/api/v1/evaluations/{FAQ[0]}")

    run = body(response)
    assert response.status_code == 200 and (run["collection"], run["id"]) == ("faq", FAQ[0])
    assert run["setups"][0]["key"] == "local.keyword.bm25" and run["picks"]["finds_the_most"]
    assert b"Question q1?" not in response.get_body()  # the stored report still holds it (made before issue 8)
    assert run["questions"][0] == {"id": "q1", "expected": ["doc-a"]}


def test_an_unknown_run_is_a_404_and_an_id_that_could_leave_its_folder_a_400(app):
    unknown = call(routes.get_evaluation, "/api/v1/evaluations/20261130T000000000Z-000000")
    hostile = call(routes.get_evaluation, "/api/v1/evaluations/..%2F..?collection=docs".replace("%2F", "-"))
    dotted = call(routes.get_evaluation, "/api/v1/evaluations/.hidden")

    assert (
        unknown.status_code == 404 and 'no run "20261130T000000000Z-000000" in any collection' in body(unknown)["error"]
    )
    assert hostile.status_code == 400 and dotted.status_code == 400
    assert call(routes.get_evaluation, f"/api/v1/evaluations/{FAQ[0]}?collection=docs").status_code == 404


def test_one_run_id_in_two_collections_needs_the_collection_named(app, tmp_path, make_report):
    _store(app, tmp_path, "faq").save(make_report(DOCS[0]))

    both = call(routes.get_evaluation, f"/api/v1/evaluations/{DOCS[0]}")
    named = call(routes.get_evaluation, f"/api/v1/evaluations/{DOCS[0]}?collection=faq")

    assert both.status_code == 409 and "(docs, faq); add ?collection=NAME" in body(both)["error"]
    assert named.status_code == 200 and body(named)["collection"] == "faq"


def test_missing_documents_are_given_in_words(app, tmp_path, make_report):
    report = make_report("20261106T090000000Z-0000d4")
    report["missing"] = {"local": {"documents": ["doc-c"], "questions": {"q3": ["doc-c"]}}}
    _store(app, tmp_path, "docs").save(report)

    run = body(call(routes.get_evaluation, "/api/v1/evaluations/latest"))

    assert run["missing_notes"] == ["local does not hold 1 expected document: doc-c; questions that cannot be "
                                    "found there: q3"]


def test_golden_download_says_whether_this_caller_may_have_the_file(app):
    url = f"/api/v1/evaluations/{DOCS[0]}"

    for headers in ({}, KEY_ONLY, READER, APP_WITH_ADMIN_ROLE):
        download = body(call(routes.get_evaluation, url, headers))["golden_download"]
        assert download["allowed"] is False and download["reason"] and "url" not in download
    download = body(call(routes.get_evaluation, url, ADMIN))["golden_download"]
    assert download == {"allowed": True, "reason": "Ada Admin holds the app role 'evaluation.admin'",
                        "url": f"/api/v1/evaluations/{DOCS[0]}/golden?collection=docs"}


# -- the page of a run --------------------------------------------------------------------------------

def test_report_html_is_the_page_kept_beside_the_run(app):
    response = call(routes.get_evaluation_report, f"/api/v1/evaluations/{DOCS[1]}/report.html?collection=docs")

    page = response.get_body().decode()
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert f"Run <code>{DOCS[1]}</code>" in page and 'data-question="q3"' in page
    assert "Question q3?" not in page and "Where is C?" not in page
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]


def test_report_html_of_a_run_kept_without_a_page_is_rendered_from_its_report(app):
    response = call(routes.get_evaluation_report, f"/api/v1/evaluations/{FAQ[0]}/report.html")

    page = response.get_body().decode()
    assert response.status_code == 200 and f"Run <code>{FAQ[0]}</code>" in page and "Question q1?" not in page


# -- the golden file ------------------------------------------------------------------------------------

@pytest.mark.parametrize("who, headers", [("nobody", {}), ("a function key alone", KEY_ONLY),
                                          ("a key in the query", None), ("a person without the role", READER),
                                          ("an application holding the role", APP_WITH_ADMIN_ROLE)])
def test_the_golden_file_is_refused_to_anyone_but_an_admin_signed_in_as_a_person(app, who, headers):
    url = f"/api/v1/evaluations/{DOCS[0]}/golden?collection=docs"
    if headers is None:
        url, headers = url + "&code=a-valid-function-key", {}

    response = call(routes.get_evaluation_golden, url, headers)

    assert response.status_code == 403, who
    assert response.get_body() != GOLDEN_RAW and "golden files go only to an admin" in body(response)["error"]


def test_an_admin_signed_in_as_a_person_gets_the_exact_golden_file_the_run_read(app):
    response = call(routes.get_evaluation_golden, f"/api/v1/evaluations/{DOCS[0]}/golden", ADMIN)

    assert response.status_code == 200 and response.get_body() == GOLDEN_RAW
    assert response.headers["Content-Disposition"].startswith('attachment; filename="docs-golden-')


def test_the_golden_file_is_a_404_when_no_copy_was_kept_or_the_run_is_unknown(app):
    not_kept = call(routes.get_evaluation_golden, f"/api/v1/evaluations/{FAQ[0]}/golden", ADMIN)
    unknown = call(routes.get_evaluation_golden, "/api/v1/evaluations/20261130T000000000Z-000000/golden", ADMIN)

    assert not_kept.status_code == 404 and "keeps no golden file" in body(not_kept)["error"]
    assert unknown.status_code == 404
    # refused callers learn nothing about which runs exist
    assert call(routes.get_evaluation_golden, "/api/v1/evaluations/20261130T000000000Z-000000/golden",
                READER).status_code == 403


def test_without_app_service_authentication_no_sign_in_is_believed(tmp_path, make_report):
    fill(lambda name: LocalStore(tmp_path / name), make_report)
    with site.use(settings=settings(WEBSITE_AUTH_ENABLED=""), collections=LocalCollections(tmp_path)):
        golden = call(routes.get_evaluation_golden, f"/api/v1/evaluations/{DOCS[0]}/golden", ADMIN)
        page = call(routes.evaluate_page, "/api/evaluate", ADMIN)

    assert golden.status_code == 403 and "App Service authentication is off" in body(golden)["error"]
    assert page.status_code == 401 and "signed in" in page.get_body().decode()  # no sign-in to send them to


# -- the Evaluate page ------------------------------------------------------------------------------------

def test_the_evaluate_page_shows_the_newest_run_and_a_menu_of_the_older_ones(app):
    response = call(routes.evaluate_page, "/api/evaluate", READER)

    page = response.get_body().decode()
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert f"Run <code>{DOCS[2]}</code>" in page
    menu = re.findall(r'<li value="\d+" data-run="([^"]+)" data-collection="([^"]+)"><a href="([^"]+)"', page)
    assert [(c, r) for r, c, _ in menu] == NEWEST_FIRST[1:]
    assert menu[0][2] == f"?run={FAQ[1]}"
    assert "faq · 2026-11-04 09:00:00 UTC" in page  # named by collection and time
    # q3 is named by id (keyword misses it); its text is for admins only
    assert 'data-question="q3"' in page
    assert "older run" not in page and "Question q3?" not in page and "Where is C?" not in page


def test_an_older_run_on_screen_says_so_with_a_way_back_to_the_newest(app):
    response = call(routes.evaluate_page, f"/api/evaluate?run={FAQ[0]}&collection=faq", READER)

    page = response.get_body().decode()
    assert f"Run <code>{FAQ[0]}</code>" in page
    assert ("You are looking at an older run (faq · 2026-11-02 09:00:00 UTC). "
            '<a class="back" href="?collection=faq">Back to the newest run</a> (faq · 2026-11-04 09:00:00 UTC)') in page


def test_an_admin_sees_question_text_from_the_kept_golden_file_and_a_download_link(app):
    page = call(routes.evaluate_page, "/api/evaluate", ADMIN).get_body().decode()

    assert "Where is C?" in page  # from golden_dataset/<sha256>.jsonl
    assert f'href="/api/v1/evaluations/{DOCS[2]}/golden?collection=docs"' in page
    assert "signed in as Ada Admin" in page


def test_the_evaluate_page_sends_callers_who_are_not_signed_in_to_sign_in_and_back(app):
    for headers in ({}, KEY_ONLY):
        response = call(routes.evaluate_page, "/api/evaluate?run=x&collection=faq", headers)
        assert response.status_code == 302 and response.get_body() == b""
        assert response.headers["Location"] == ("/.auth/login/aad?post_login_redirect_uri="
                                                "%2Fapi%2Fevaluate%3Frun%3Dx%26collection%3Dfaq")


def test_the_way_back_from_sign_in_stays_on_this_site():
    assert routes.sign_in_url("https://evil.example/api/evaluate?page=2") == \
        "/.auth/login/aad?post_login_redirect_uri=%2Fapi%2Fevaluate%3Fpage%3D2"


def test_the_menu_shows_older_runs_twelve_at_a_time(tmp_path, make_report):
    store = LocalStore(tmp_path / "docs")
    ids = [f"202611{day:02d}T090000000Z-0000{day:02d}" for day in range(1, 16)]  # 15 runs: newest + 14 older
    for run_id in ids:
        store.save(make_report(run_id))
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        first = call(routes.evaluate_page, "/api/evaluate", READER).get_body().decode()
        second = call(routes.evaluate_page, "/api/evaluate?page=2", READER).get_body().decode()
        beyond = call(routes.evaluate_page, "/api/evaluate?page=3", READER)

    older = ids[::-1][1:]
    assert re.findall(r'data-run="([^"]+)"', first) == older[:MENU_SIZE] and MENU_SIZE == 12
    assert re.findall(r'data-run="([^"]+)"', second) == older[12:14]
    assert "page 1 of 2" in first and '<a rel="next" href="?page=2">older</a>' in first
    assert '<details class="menu" open>' in second and '<a rel="prev" href="?">newer</a>' in second
    assert beyond.status_code == 404


def test_an_empty_container_says_there_are_no_runs_yet(tmp_path):
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        page = call(routes.evaluate_page, "/api/evaluate", READER)
        listed = body(call(routes.list_evaluations, "/api/v1/evaluations"))
        latest = call(routes.get_evaluation, "/api/v1/evaluations/latest")

    assert page.status_code == 200 and "No runs yet" in page.get_body().decode()
    assert listed == {"runs": [], "total": 0, "limit": 20, "offset": 0, "next": None}
    assert latest.status_code == 404


# -- how the routes are registered ---------------------------------------------------------------------

def test_the_routes_are_registered_with_the_auth_levels_their_callers_need():
    def trigger(route):
        return route.build().get_trigger()

    levels = {trigger(r).route: trigger(r).auth_level for r in (
        routes.evaluate_page, routes.list_evaluations, routes.get_evaluation, routes.get_evaluation_report,
        routes.get_evaluation_golden)}
    assert levels == {"evaluate": func.AuthLevel.ANONYMOUS,               # browsers carry no key
                      "v1/evaluations": func.AuthLevel.FUNCTION,
                      "v1/evaluations/{run}": func.AuthLevel.FUNCTION,
                      "v1/evaluations/{run}/report.html": func.AuthLevel.FUNCTION,
                      "v1/evaluations/{run}/golden": func.AuthLevel.ANONYMOUS}  # the person is checked in code


def test_the_function_app_registers_the_routes():
    import function_app

    names = {f.get_function_name() for f in function_app.app.get_functions()}
    assert {"evaluate_page", "list_evaluations", "get_evaluation", "get_evaluation_report",
            "get_evaluation_golden"} <= names


def _store(app, tmp_path, name):
    if app == "folder":
        return LocalStore(tmp_path / name)
    return site.collections().store(name)

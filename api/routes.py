"""The read-only HTTP routes over the runs, as one Functions blueprint (registered in function_app.py).

    GET /api/evaluate                                   the Evaluate page (newest run, older runs menu)
    GET /api/v1/evaluations?limit=20&offset=0           runs across collections, newest first
    GET /api/v1/evaluations/{run}                       one run (or `latest`) with missing_notes, golden_download
    GET /api/v1/evaluations/{run}/report.html           the run's page
    GET /api/v1/evaluations/{run}/golden                the exact golden file the run read: admins, as people

Every route takes ``?collection=NAME`` to name the collection (see ``api.runs``).

Who may call what:
- The JSON routes and report.html are for programs and scripts that may read runs: function level
  (the host checks the key). A run holds scores and ids, never question text.
- The Evaluate page is for people in a browser, who carry no key: anonymous at the host, and answered
  only to a caller signed in through App Service authentication; anyone else is sent to sign in
  (or gets 401 when App Service authentication is off).
- The golden file holds the questions: anonymous at the host, so a browser can fetch it, and given only to
  a person holding the admin app role (``EVALUATION_ADMIN_ROLE``) as a signed Entra token proves it
  (``api.tokens``: the principal header alone is never enough). A function key names no one, so a
  key alone gets 403.
"""
from __future__ import annotations

import logging
from urllib.parse import urlencode, urlsplit

import azure.functions as func

from app.http import Refusal, attachment, json_answer, refusal_answer

from . import site
from .page import error_page, evaluate_page as render_evaluate_page
from .principal import Caller, read_caller
from .runs import MAX_LIMIT, find_run, golden_file, kept_page, read_report, run_document, runs_page, whole_number
from .tokens import golden_caller

log = logging.getLogger(__name__)
bp = func.Blueprint()

# A page and a report fetch nothing and run no script; say so to the browser as well.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
}


def _html(text: str, status: int = 200, *, cache: str = "no-store") -> func.HttpResponse:
    return func.HttpResponse(text, status_code=status, mimetype="text/html", charset="utf-8",
                             headers={**PAGE_HEADERS, "Cache-Control": cache})


def sign_in_url(url: str) -> str:
    """App Service authentication's Entra sign-in, coming back to the same page. Only the path and query
    of ``url`` are kept, and the path starts with exactly one "/", so the way back never leads to another
    site: a browser reads ``//evil.example/x`` (and ``/\\evil.example/x``) as the host evil.example."""
    parts = urlsplit(url)
    path = "/" + parts.path.lstrip("/\\")
    back = path + (f"?{parts.query}" if parts.query else "")
    # errors: a lone surrogate (no real request carries one) is percent-encoded, never a 500
    return "/.auth/login/aad?" + urlencode({"post_login_redirect_uri": back}, errors="surrogatepass")


def _collection(req: func.HttpRequest) -> str | None:
    return req.params.get("collection") or None


def _caller(req: func.HttpRequest) -> Caller:
    """Who is calling: signed in as the principal header says (when the platform sets it), and allowed
    golden files only as a signed token proves (``api.tokens``)."""
    trusted = site.settings().app_service_auth
    principal = read_caller(req.headers, trusted=trusted)
    if not trusted:  # App Service authentication is off: no sign-in at all, so no token is looked for
        return principal
    return golden_caller(req.headers, principal, site.token_check())


@bp.function_name("evaluate_page")
@bp.route(route="evaluate", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def evaluate_page(req: func.HttpRequest) -> func.HttpResponse:
    caller = _caller(req)
    if not caller.signed_in:
        if site.settings().app_service_auth:  # a person in a browser: off to sign in, and back here
            return func.HttpResponse(status_code=302, headers={"Location": sign_in_url(req.url),
                                                               "Cache-Control": "no-store"})
        return _html(error_page(401, "The Evaluate page is for people signed in to this app: "
                                     + caller.why_not_person + "."), 401)
    try:
        menu_page = whole_number(req.params.get("page"), "page", 1, lowest=1)
        page = render_evaluate_page(site.collections(), caller, site.settings().admin_role, run=req.params.get("run"),
                             collection=_collection(req), menu_page=menu_page)
    except Refusal as err:
        return _html(error_page(err.status, err.message + " "), err.status)
    return _html(page)


@bp.function_name("list_evaluations")
@bp.route(route="v1/evaluations", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
def list_evaluations(req: func.HttpRequest) -> func.HttpResponse:
    try:
        limit = whole_number(req.params.get("limit"), "limit", 20, lowest=1, highest=MAX_LIMIT)
        offset = whole_number(req.params.get("offset"), "offset", 0, lowest=0)
        return json_answer(runs_page(site.collections(), limit=limit, offset=offset, collection=_collection(req)))
    except Refusal as err:
        return refusal_answer(err)


@bp.function_name("get_evaluation")
@bp.route(route="v1/evaluations/{run}", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
def get_evaluation(req: func.HttpRequest) -> func.HttpResponse:
    try:
        shelf = site.collections()
        ref = find_run(shelf, req.route_params.get("run", ""), _collection(req))
        return json_answer(run_document(shelf, ref, _caller(req), site.settings().admin_role))
    except Refusal as err:
        return refusal_answer(err)


@bp.function_name("get_evaluation_report")
@bp.route(route="v1/evaluations/{run}/report.html", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
def get_evaluation_report(req: func.HttpRequest) -> func.HttpResponse:
    from evaluation.report.html import run_page
    from evaluation.store.builds import latest_views

    try:
        shelf = site.collections()
        ref = find_run(shelf, req.route_params.get("run", ""), _collection(req))
        store = shelf.store(ref.collection)
        # The kept page, unless the collection has chunking runs: a page kept before them (or before the
        # Chunking tab existed) has no tab, so it is drawn again from report.json with the latest ones, as
        # the Evaluate page does (ids only, never text). A page kept before runs had pages is drawn too.
        views = latest_views(store)
        kept = None if views else kept_page(store, ref)
        if kept is None:
            report = read_report(shelf, ref)
            text = run_page(report, store, views=views)
        else:
            text = kept.decode("utf-8", "replace")
    except Refusal as err:
        return _html(error_page(err.status, err.message), err.status)
    # a run never changes once kept, so its page may be cached by the caller (named runs only)
    cache = "private, max-age=3600" if req.route_params.get("run") != "latest" else "no-store"
    return _html(text, cache=cache)


@bp.function_name("get_evaluation_golden")
@bp.route(route="v1/evaluations/{run}/golden", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def get_evaluation_golden(req: func.HttpRequest) -> func.HttpResponse:
    caller = _caller(req)
    allowed, reason = caller.may_download_golden(site.settings().admin_role)
    if not allowed:  # before looking anything up: a refused caller learns nothing about the runs
        return refusal_answer(Refusal(403, f"golden files go only to an admin signed in as a person: {reason}"))
    try:
        shelf = site.collections()
        ref = find_run(shelf, req.route_params.get("run", ""), _collection(req))
        found = golden_file(shelf, ref)
    except Refusal as err:
        return refusal_answer(err)
    log.info("golden file %s of run %s (%s) given to %s", found.sha256[:12], ref.run_id, ref.collection, caller.name)
    return func.HttpResponse(found.data, status_code=200, mimetype="application/x-ndjson", headers={
        "Content-Disposition": attachment(found.filename), "ETag": f'"{found.sha256}"',
        "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})

"""The app's routes over a run whose kept files are damaged: a sentence naming the file, 404 (kept, but no
report that can be read), never a 500, which would say the app itself failed (issue 37)."""
from __future__ import annotations

import json
import shutil

import pytest
from test_api_routes import ADMIN, DOCS, READER, body, call, fill, settings

from api import routes, site
from evaluation.store import LocalStore
from evaluation.store.collections import LocalCollections

BROKEN = DOCS[1]


def _report_json(tmp_path):
    return tmp_path / "docs" / "retrieval" / "runs" / BROKEN / "report.json"


DAMAGES = {
    "not JSON": lambda path: path.write_text("{not json", encoding="utf-8"),
    "a field of the wrong kind": lambda path: path.write_text(
        json.dumps({**json.loads(path.read_text(encoding="utf-8")), "setups": None}), encoding="utf-8"),
    "a folder": lambda path: (path.unlink(), path.mkdir()),
}


@pytest.fixture(params=sorted(DAMAGES))
def damaged(request, tmp_path, make_report):
    fill(lambda name: LocalStore(tmp_path / name), make_report)
    DAMAGES[request.param](_report_json(tmp_path))
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        yield request.param


@pytest.mark.parametrize("route, url, headers", [
    (routes.get_evaluation, f"/api/v1/evaluations/{BROKEN}", {}),
    (routes.evaluate_page, f"/api/evaluate?collection=docs&run={BROKEN}", READER),
    (routes.get_evaluation_golden, f"/api/v1/evaluations/{BROKEN}/golden", ADMIN),
], ids=["json", "evaluate page", "golden"])
def test_a_run_whose_report_cannot_be_read_is_a_404_naming_the_file_never_a_500(damaged, route, url, headers):
    response = call(route, url, headers)

    text = response.get_body().decode("utf-8")
    assert response.status_code == 404, text[:300]
    assert f"run {BROKEN} of docs is kept, but its report cannot be read" in text
    assert f"{BROKEN}/report.json" in text


def test_report_html_of_a_damaged_run_is_its_kept_page_or_without_one_a_404(damaged, tmp_path):
    kept = call(routes.get_evaluation_report, f"/api/v1/evaluations/{BROKEN}/report.html")
    (_report_json(tmp_path).parent / "report.html").unlink()
    none_kept = call(routes.get_evaluation_report, f"/api/v1/evaluations/{BROKEN}/report.html")

    assert kept.status_code == 200 and f"Run <code>{BROKEN}</code>" in kept.get_body().decode()
    assert none_kept.status_code == 404
    assert f"run {BROKEN} of docs is kept, but its report cannot be read" in none_kept.get_body().decode()


def test_the_list_the_latest_run_and_the_evaluate_page_still_answer_over_a_damaged_run(damaged):
    listed = call(routes.list_evaluations, "/api/v1/evaluations")
    latest = call(routes.get_evaluation, "/api/v1/evaluations/latest")
    page = call(routes.evaluate_page, "/api/evaluate", READER)

    rows = {row["id"]: row for row in body(listed)["runs"]}
    assert listed.status_code == 200 and f"{BROKEN}/report.json" in rows[BROKEN]["error"]
    assert latest.status_code == 200 and body(latest)["id"] == DOCS[2]
    assert page.status_code == 200 and f"Run <code>{DOCS[2]}</code>" in page.get_body().decode()


def test_a_kept_page_that_cannot_be_read_is_drawn_again_from_its_report(tmp_path, make_report):
    fill(lambda name: LocalStore(tmp_path / name), make_report)
    page = tmp_path / "docs" / "retrieval" / "runs" / DOCS[2] / "report.html"
    page.unlink()
    page.mkdir()

    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        shown = call(routes.get_evaluation_report, f"/api/v1/evaluations/{DOCS[2]}/report.html")
        evaluate = call(routes.evaluate_page, "/api/evaluate?collection=docs", READER)

    assert shown.status_code == 200 and f"Run <code>{DOCS[2]}</code>" in shown.get_body().decode()
    assert evaluate.status_code == 200 and f"Run <code>{DOCS[2]}</code>" in evaluate.get_body().decode()


def test_a_store_that_stops_answering_is_a_503_not_a_500(tmp_path, make_report, monkeypatch):
    from evaluation.errors import StoreError

    fill(lambda name: LocalStore(tmp_path / name), make_report)

    def refuse(self, path):
        raise StoreError(f"{self.root / path}: the storage account refused the request (403)")

    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        monkeypatch.setattr(LocalStore, "_read", refuse)
        answered = call(routes.get_evaluation, f"/api/v1/evaluations/{DOCS[0]}")

    assert answered.status_code == 503 and "did not answer" in body(answered)["error"]
    shutil.rmtree(tmp_path / "docs")

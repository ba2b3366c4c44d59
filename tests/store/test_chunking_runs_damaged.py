"""A kept chunking, sweep or matrix run that is damaged (readable JSON of the wrong shape, or no JSON) is one
sentence naming the file and the field: ``chunking runs show`` says it, ``chunking runs list`` and the
Chunking tab pass over it and name it, and the app's pages still answer 200 for the collection (issue 37)."""
from __future__ import annotations

import copy
import json
import logging

import pytest
from test_chunking_page import report as chunking_report
from test_chunking_sweep_view import sweep_report
from test_matrix import matrix

from conftest import GOLDEN_RAW, run_cli
from evaluation.errors import StoreError
from evaluation.evaluate import save_report
from evaluation.store import LocalStore
from evaluation.store.builds import ChunkingRuns, latest_views

GOOD, BAD = "20261201T100000000Z-aaaaaa", "20261201T110000000Z-bbbbbb"


def keep(store: LocalStore, report: dict, run_id: str) -> dict:
    report = {**copy.deepcopy(report), "id": run_id, "format": 1}
    ChunkingRuns(store).save(report)
    return report


def damage(store: LocalStore, run_id: str, change) -> None:
    """Edit the kept report.json of ``run_id`` in place, as anyone with write access to the store could."""
    path = store.root / "chunking" / "runs" / run_id / "report.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    change(report)
    path.write_text(json.dumps(report), encoding="utf-8")


def _set(path: str, value):
    def change(report):
        *parents, last = path.split(".")
        node = report
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value
    return change


DAMAGES = [  # (kind, field, value, what the sentence says)
    ("chunking", "techniques", None, "techniques is null, not a list"),
    ("chunking", "techniques.1.against_best.p_holm", "0.5", "techniques[1].against_best.p_holm is a string"),
    ("chunking", "builds.0.chunks", 1e300, "builds[0].chunks is 1e+300, not a whole number"),
    ("chunking", "builds", None, "builds is null, not a list"),
    ("chunking", "budget", 0, "budget is 0, not a whole number of 1 or more"),
    ("chunking", "vectors", None, "vectors is null, not an object"),
    ("sweep", "rows.0.counts", {"1": 7}, "rows[0].counts needs every k the run names (1, 3, 5, 10); 3 is missing"),
    ("sweep", "rows.0.ndcg_10", "0.7", "rows[0].ndcg_10 is a string, not a finite number"),
    ("sweep", "k", None, "k is null, not a list"),
    ("matrix", "experiments.0.metrics.3", {"hit_rate": 1.0}, "experiments[0].metrics.3.precision is missing"),
    ("matrix", "experiments.0.chunking", ["fixed"], "experiments[0].chunking is a list, not a string"),
    ("matrix", "top_k", [], "top_k is an empty list"),
    ("matrix", "gate", None, "gate is null, not an object"),
]


def made(kind: str, tmp_path) -> dict:
    return {"chunking": chunking_report, "sweep": sweep_report}[kind]() if kind != "matrix" else matrix(tmp_path)


@pytest.mark.parametrize("kind, path, value, says", DAMAGES, ids=[f"{d[0]}-{d[1]}" for d in DAMAGES])
def test_a_kept_run_of_the_wrong_shape_is_a_sentence_naming_the_file_and_the_field(tmp_path, capsys, kind, path,
                                                                                      value, says):
    store = LocalStore(tmp_path / "store")
    keep(store, made(kind, tmp_path), BAD)
    damage(store, BAD, _set(path, value))

    with pytest.raises(StoreError) as caught:
        ChunkingRuns(store).get(BAD)
    code, out, err = run_cli(capsys, "chunking", "runs", "show", BAD, "--store", str(store.root))

    assert says in str(caught.value) and f"chunking/runs/{BAD}/report.json" in str(caught.value)
    assert code == 1 and err.startswith("error: ") and says in err
    assert "this is a bug" not in err and "Traceback" not in err


def test_chunking_runs_list_names_a_damaged_run_and_lists_the_others(tmp_path, capsys):
    store = LocalStore(tmp_path / "store")
    keep(store, chunking_report(), GOOD)
    keep(store, chunking_report(), BAD)
    keep(store, sweep_report(), "20261201T120000000Z-cccccc")
    damage(store, BAD, _set("techniques", None))
    unreadable = store.root / "chunking" / "runs" / "20261201T130000000Z-dddddd"
    unreadable.mkdir(parents=True)
    (unreadable / "report.json").write_text('{"kind": "chunking", "techniques": [', encoding="utf-8")

    code, out, err = run_cli(capsys, "chunking", "runs", "list", "--store", str(store.root), "--json")

    assert code == 0 and [row["id"] for row in json.loads(out)] == ["20261201T120000000Z-cccccc", GOOD]
    assert err.count("warning: skipped a chunking run that cannot be read") == 2
    assert "techniques is null, not a list" in err and "20261201T130000000Z-dddddd/report.json: not a readable" in err


def test_show_latest_and_the_chunking_tab_pass_over_a_damaged_newest_run_and_name_it(tmp_path, capsys, caplog):
    store = LocalStore(tmp_path / "store")
    keep(store, chunking_report(), GOOD)
    keep(store, chunking_report(), BAD)
    damage(store, BAD, _set("techniques", None))

    with caplog.at_level(logging.WARNING):
        views = latest_views(store)
    assert views["chunking"]["id"] == GOOD
    assert f"chunking run {BAD} passed over" in caplog.text and "techniques is null" in caplog.text

    caplog.clear()
    with caplog.at_level(logging.WARNING):  # the command line's warnings are these log lines, on stderr
        code, out, err = run_cli(capsys, "chunking", "runs", "show", "latest", "--store", str(store.root))
    assert code == 0 and "Pick: markdown-1000-h." in out
    assert f"chunking run {BAD} passed over" in caplog.text and "techniques is null" in caplog.text


def test_report_latest_draws_the_run_page_with_the_readable_chunking_run(tmp_path, capsys, make_report):
    store = LocalStore(tmp_path / "store")
    save_report(store, make_report("20261130T090000000Z-000001"), GOLDEN_RAW)
    keep(store, chunking_report(), GOOD)
    keep(store, chunking_report(), BAD)
    damage(store, BAD, _set("techniques", None))

    code, out, err = run_cli(capsys, "report", "latest", "--store", str(store.root), "--out", str(tmp_path / "p.html"))

    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert code == 0 and "this is a bug" not in err
    assert 'id="tab-chunking"' in page and "Pick: <code>markdown-1000-h</code>" in page


@pytest.mark.parametrize("kind, path, value", [("chunking", "techniques", None), ("sweep", "rows.0.counts", {}),
                                               ("matrix", "experiments.0.metrics", {"3": None})])
def test_the_report_page_and_the_evaluate_page_answer_200_over_a_damaged_chunking_run(tmp_path, make_report, kind,
                                                                                      path, value):
    from test_api_routes import READER, call, settings

    from api import routes, site
    from evaluation.store.collections import LocalCollections

    docs = LocalStore(tmp_path / "collections" / "docs")
    save_report(docs, make_report("20261130T090000000Z-000001"), GOLDEN_RAW)
    keep(docs, made(kind, tmp_path), BAD)
    damage(docs, BAD, _set(path, value))

    with site.use(settings=settings(), collections=LocalCollections(tmp_path / "collections")):
        page = call(routes.evaluate_page, "/api/evaluate?collection=docs", READER)
        report = call(routes.get_evaluation_report, "/api/v1/evaluations/latest/report.html")

    assert page.status_code == 200 and report.status_code == 200
    assert "Run <code>20261130T090000000Z-000001</code>" in page.get_body().decode()

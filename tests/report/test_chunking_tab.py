"""The Chunking tab on the run page: the collection's latest chunking and matrix runs from the store, beside
Retrieval; a page with neither is byte for byte the page before tabs; the tabs are CSS alone."""
from __future__ import annotations

import json
import re
from pathlib import Path

from test_chunking_page import report as chunking_report
from test_chunking_sweep_view import sweep_report
from test_matrix import matrix

from evaluation.report.html import render_html
from evaluation.store import LocalStore
from evaluation.store.builds import ChunkingRuns, latest_views
from evaluation.report.style import CSS

SAVED = Path(__file__).parent.parent / "fixtures" / "page"


def _saved_report() -> dict:
    return json.loads((SAVED / "report.json").read_text(encoding="utf-8"))


def _tab(page: str, name: str) -> str:
    start = page.index(f'<section class="tab" id="tab-{name}"')
    return page[start:page.index("</section>\n<", page.index('data-tab="', start))] if name else ""


def test_no_chunking_run_leaves_the_page_byte_for_byte_and_its_css_unchanged():
    page = render_html(_saved_report(), chunking=None, matrix=None)
    assert page == (SAVED / "page.html").read_text(encoding="utf-8")
    assert "nav.tabs" not in page and "tab-chunking" not in page


def test_a_chunking_run_gets_its_tab_after_retrieval_with_the_pick_and_the_tab_css():
    page = render_html(_saved_report(), chunking=chunking_report())
    retrieval = page.index('<section class="tab" id="tab-retrieval"')
    chunking = page.index('<section class="tab" id="tab-chunking"')
    assert retrieval < page.index('id="picks"') < chunking < page.index('id="chunking"') < page.index("<footer>")
    assert "Pick: <code>markdown-1000-h</code>" in page[chunking:]
    assert 'id="matrix"' not in page  # no matrix run: no matrix view
    style = page[page.index("<style>") + 7:page.index("</style>")]
    assert style.startswith(CSS) and "nav.tabs" in style[len(CSS):]
    # the open tab's link is drawn as open: the first by default, each when the address names it
    assert 'main:has(#tab-chunking:target, #tab-chunking :target) nav.tabs a[href="#tab-chunking"]' in style
    assert "<script" not in page


def test_a_matrix_run_shows_its_experiments_in_the_chunking_tab(tmp_path):
    made = matrix(tmp_path)
    page = render_html(_saved_report(), matrix=made)
    chunking = page.index('<section class="tab" id="tab-chunking"')
    assert chunking < page.index('id="matrix"') and 'id="chunking"' not in page
    assert len(re.findall(r'<tr(?: class="picked")?><td><code>', page[chunking:])) == len(made["experiments"]) == 2


def test_a_report_of_another_kind_passed_as_chunking_shows_no_tab():
    page = render_html(_saved_report(), chunking={"kind": "sweep", "rows": []})
    assert page == (SAVED / "page.html").read_text(encoding="utf-8")


def _kept(store: LocalStore, report: dict, run_id: str) -> dict:
    report = {**report, "id": run_id, "format": 1}
    ChunkingRuns(store).save(report)
    return report


def test_latest_views_takes_the_newest_run_of_each_kind_and_passes_over_one_it_cannot_read(tmp_path):
    store = LocalStore(tmp_path / "store")
    assert latest_views(store) == {}
    older = _kept(store, chunking_report(), "20261201T100000000Z-aaaaaa")
    newer = _kept(store, chunking_report(), "20261201T110000000Z-bbbbbb")
    sweep = _kept(store, sweep_report(), "20261201T120000000Z-cccccc")
    made = _kept(store, matrix(tmp_path), "20261201T090000000Z-dddddd")
    broken = store.root / "chunking" / "runs" / "20261201T130000000Z-eeeeee"
    broken.mkdir(parents=True)
    (broken / "report.json").write_text("{not json", encoding="utf-8")
    views = latest_views(store)
    assert views["chunking"]["id"] == newer["id"] != older["id"]
    assert views["matrix"]["id"] == made["id"] and views["sweep"]["id"] == sweep["id"]
    assert set(views) == {"chunking", "sweep", "matrix"}


def test_a_run_saved_after_a_chunking_run_keeps_a_page_with_the_chunking_tab(tmp_path, sample_index):
    from evaluation import EmbeddedTarget, evaluate, open_index

    store = LocalStore(tmp_path / "store")
    _kept(store, chunking_report(), "20261201T100000000Z-aaaaaa")
    golden = Path(__file__).parent.parent.parent / "samples" / "golden.jsonl"
    report = evaluate(EmbeddedTarget(open_index(sample_index)), golden, save_to=store,
                      only=["local.keyword.bm25"], timed=0)
    kept = store.page(report["id"]).decode("utf-8")
    assert 'id="tab-chunking"' in kept and "Pick: <code>markdown-1000-h</code>" in kept


QUESTION_WORDS = ("signing keys", "password length")  # in the queries file (tests/builds/test_matrix.py)
PASSAGE_WORDS = ("cafeteria", "Passwords must hold", "Hello world")  # in the corpus


def test_a_matrix_run_is_kept_with_ids_and_numbers_and_never_a_question_or_a_passage(tmp_path):
    store = LocalStore(tmp_path / "store")
    made = matrix(tmp_path, per_query=True, save_to=store)
    assert re.fullmatch(r"\d{8}T\d{9}Z-\w+", made["id"]) and made["created_at"].endswith("Z")
    kept = ChunkingRuns(store).get("latest")
    assert kept == json.loads(json.dumps(made))
    folder = store.root / "chunking" / "runs" / made["id"]
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "report.json"]
    for path in folder.iterdir():
        text = path.read_text(encoding="utf-8")
        for words in QUESTION_WORDS + PASSAGE_WORDS:
            assert words.lower() not in text.lower(), (path.name, words)
    assert "q2" in (folder / "report.json").read_text(encoding="utf-8")  # ids are kept: per query, by id


def test_matrix_save_to_then_chunking_runs_list_and_show_read_it(capsys, tmp_path, monkeypatch):
    from conftest import run_cli
    from test_matrix import write

    monkeypatch.chdir(tmp_path)
    corpus, queries = write(tmp_path)
    code, out, err = run_cli(capsys, "matrix", "--quiet", "--corpus", str(corpus), "--queries", str(queries),
                             "--top-k", "1,3", "--embedder", "hash", "--methods", "keyword,dense", "--save-to", "runs")
    assert code == 0, err
    assert "Saved as matrix run " in out
    code, listed, _ = run_cli(capsys, "chunking", "runs", "list", "--store", "runs", "--json")
    rows = json.loads(listed)
    assert code == 0 and [(r["kind"], r["questions"], r["builds"]) for r in rows] == [("matrix", 3, 1)]
    assert rows[0]["pick"].startswith("fixed-500-100 ")
    code, shown, _ = run_cli(capsys, "chunking", "runs", "show", "latest", "--store", "runs")
    assert code == 0 and shown.startswith("Pick: ") and "\n2 experiments on 3 queries" in shown and "nDCG" in shown


def test_matrix_save_to_a_store_that_cannot_be_opened_is_refused_before_any_work(capsys, tmp_path):
    from conftest import run_cli
    from test_matrix import write

    corpus, queries = write(tmp_path)
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    code, out, err = run_cli(capsys, "matrix", "--quiet", "--corpus", str(corpus), "--queries", str(queries),
                             "--embedder", "hash", "--save-to", str(tmp_path / "afile"))
    assert code != 0 and "afile" in err and "experiments" not in out


def test_the_evaluate_page_shows_a_chunking_run_kept_after_the_run_it_shows(tmp_path, make_report):
    """A reader's page is the kept report.html, unless the collection has chunking runs: a page kept before
    the chunking run holds no tab, so it is drawn again (ids only, as the kept page) with the tab."""
    from test_api_routes import READER, call, settings

    from api import routes, site
    from evaluation.store.collections import LocalCollections

    docs, faq = _docs_with_a_later_chunking_run_and_faq_without(tmp_path, make_report)
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        shown = call(routes.evaluate_page, "/api/evaluate?collection=docs", READER).get_body().decode()
        other = call(routes.evaluate_page, "/api/evaluate?collection=faq", READER).get_body().decode()
    assert 'id="tab-chunking"' in shown and "Pick: <code>markdown-1000-h</code>" in shown
    assert "Where is C?" not in shown  # drawn for a reader: question ids, never text
    assert "tab-chunking" not in other  # the faq collection has no chunking run: its kept page, no tab
    banner = other[other.index("<body>\n") + len("<body>\n"):other.index("<main>")]  # the site's menu
    assert other.replace(banner, "", 1) == faq.page("20261102T090000000Z-0000f1").decode()


def test_report_html_of_a_run_kept_before_a_chunking_run_is_drawn_again_with_the_chunking_tab(tmp_path, make_report):
    """``GET .../report.html`` serves the kept page, unless the collection has chunking runs: a page kept
    before them has no tab, so it is drawn again from report.json with the tab, as the Evaluate page is."""
    from test_api_routes import call, settings

    from api import routes, site
    from evaluation.store.collections import LocalCollections

    docs, faq = _docs_with_a_later_chunking_run_and_faq_without(tmp_path, make_report)
    with site.use(settings=settings(), collections=LocalCollections(tmp_path)):
        shown = call(routes.get_evaluation_report, "/api/v1/evaluations/20261101T090000000Z-0000d1/report.html")
        other = call(routes.get_evaluation_report, "/api/v1/evaluations/20261102T090000000Z-0000f1/report.html")
    page = shown.get_body().decode()
    assert shown.status_code == 200 and 'id="tab-chunking"' in page and "Pick: <code>markdown-1000-h</code>" in page
    assert "Where is C?" not in page  # drawn from the report: question ids, never text
    assert other.get_body() == faq.page("20261102T090000000Z-0000f1")  # no chunking run there: the kept page


def _docs_with_a_later_chunking_run_and_faq_without(tmp_path, make_report):
    """Two collections, one run each with its page; docs then gets a chunking run, so its kept page has no tab."""
    from evaluation.evaluate import save_report

    from conftest import GOLDEN_RAW

    docs, faq = LocalStore(tmp_path / "docs"), LocalStore(tmp_path / "faq")
    save_report(docs, make_report("20261101T090000000Z-0000d1"), GOLDEN_RAW)
    save_report(faq, make_report("20261102T090000000Z-0000f1"), GOLDEN_RAW)
    assert b"tab-chunking" not in docs.page("20261101T090000000Z-0000d1")
    _kept(docs, chunking_report(), "20261201T100000000Z-aaaaaa")
    return docs, faq


def test_a_kept_runs_page_holds_its_history_and_the_stores_latest_chunking_runs(tmp_path, make_report):
    from evaluation.report.html import run_page

    store = LocalStore(tmp_path / "store")
    older, shown = make_report("20261101T090000000Z-000001"), make_report("20261102T090000000Z-000002")
    store.save(older)
    store.save(shown)
    assert older["id"] not in render_html(shown)  # drawn alone, a run's page names no other run
    _kept(store, sweep_report(), "20261201T130000000Z-abcdef")

    page = run_page(shown, store)

    assert older["id"] in page and "the only run on this golden file" not in page  # its history: the older run
    assert 'id="tab-chunking"' in page and '<section class="sweep" id="sweep">' in page  # the store's latest sweep
    assert 'id="tab-chunking"' not in run_page(shown, store, views={})  # views the caller read are the ones shown


def test_every_caller_draws_a_kept_runs_page_with_run_page_and_none_assembles_its_own():
    """Saving a run, ``report``, the app's Evaluate page and its report.html once each gathered the history and
    the chunking runs themselves; ``report.html.run_page`` is the one place now."""
    root = Path(__file__).parent.parent.parent
    sources = [*(root / "evaluation").rglob("*.py"), *(root / "api").rglob("*.py")]
    gathering = sorted(str(p.relative_to(root)) for p in sources
                       if "collect_trend(" in p.read_text(encoding="utf-8") and p.name not in ("html.py", "trend.py"))
    assert gathering == []
    callers = sorted(str(p.relative_to(root)) for p in sources if "run_page(" in p.read_text(encoding="utf-8"))
    assert callers == ["api/page.py", "api/routes.py", "evaluation/cli/report_cmd.py", "evaluation/evaluate.py",
                       "evaluation/report/html.py"]

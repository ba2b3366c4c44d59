"""The HTML report: what it shows, what it never holds (question text), and reports it must tolerate."""
from __future__ import annotations

import copy
import hashlib
import html
import math
import re
from html.parser import HTMLParser

import pytest

from evaluation.store.run_report import RunReport
from evaluation.store.report_parts import Compared
from evaluation.golden.texts import question_texts
from evaluation.report.html import render_html, with_banner
from evaluation.report.notes import found_gap_words, missing_notes
from evaluation.report.trend import collect_trend, index_changes, trend_point
from evaluation.scoring.significance import MOST_QUESTIONS, questions_to_tell
from evaluation.store import LocalStore

from conftest import GOLDEN_RAW


class Elements(HTMLParser):
    """Every start tag of a page as (tag, attributes); the words a reader sees in ``text``."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.page = page
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    @property
    def text(self) -> str:
        """Inline tags vanish, block tags become a space; no style, title or SVG text."""
        body = re.sub(r"<(style|title|svg)\b.*?</\1>", " ", self.page, flags=re.S)
        body = re.sub(r"</?(code|strong|span|small|a|em)\b[^>]*>", "", body)
        return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body))).strip()

    def having(self, tag: str, cls: str | None = None, **attrs: str) -> list[dict[str, str]]:
        found = []
        for name, values in self.tags:
            if name != tag or (cls and cls not in values.get("class", "").split()):
                continue
            if all(values.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                found.append(values)
        return found


def drawings(page: str) -> dict[str, str]:
    """The page's found/time chart as each of its drawings (``wide``, ``narrow``: the page shows the one
    its width has room for), by name."""
    return {name: re.search(rf'<svg class="chart {name}".*?</svg>', page, flags=re.S).group(0)
            for name in ("wide", "narrow")}


def timed(report: dict, times: dict[str, list[float]]) -> dict:
    """``report`` with the given searches' times (ms) per setup, and the medians they make."""
    report = copy.deepcopy(report)
    for setup in report["setups"]:
        if setup["key"] in times and setup["summary"]:
            setup["times_ms"] = times[setup["key"]]
            ordered = sorted(times[setup["key"]])
            setup["summary"]["median_ms"] = ordered[len(ordered) // 2]
    return report


THREE = {  # found@10: keyword 2 of 3 (q1 at 1, q2 at 2), dense 3 of 3, hybrid 1 of 3 (q1 at 1)
    "local.keyword.bm25": {"q1": ["doc-a"], "q2": ["report.pdf#page=2", "report.pdf#page=4"], "q3": ["doc-b"]},
    "local.dense.bge-small": {"q1": ["doc-a"], "q2": ["report.pdf#page=4"], "q3": ["doc-c"]},
    "local.hybrid.bge-small": {"q1": ["doc-a"], "q2": [], "q3": []},
}


# -- what the page never holds --------------------------------------------------------------------

def test_the_page_names_questions_by_id_and_holds_no_question_text(make_report):
    report = make_report(with_text=True)  # its "questions" still hold text, as reports made before issue 8 do
    texts = [row["question"] for row in report["questions"]]
    assert texts == ["Question q1?", "Question q2?", "Question q3?"]

    page = render_html(report)

    assert not [text for text in texts if text in page]
    # keyword misses q3 (its only result is doc-b) and the dense setup finds all three: q3 is named by id
    assert Elements(page).having("tr", data_question="q3")


def test_question_text_comes_only_from_the_golden_file_the_run_read(make_report):
    report = make_report()

    assert question_texts(GOLDEN_RAW, report) == {"q1": "Where is A?", "q2": "What is on page four?",
                                                   "q3": "Where is C?"}
    assert question_texts(GOLDEN_RAW + b"\n", report) == {}  # other bytes: another sha256
    report["questions"][0]["sha256"] = hashlib.sha256("Where is A?".encode()).hexdigest()
    report["questions"][1]["sha256"] = "0" * 64  # the golden copy's text is not the one the run scored
    assert set(question_texts(GOLDEN_RAW, report)) == {"q1", "q3"}


def test_question_text_is_shown_when_the_caller_passes_it(make_report):
    report = make_report()

    page = render_html(report, questions=question_texts(GOLDEN_RAW, report))

    assert "Where is C?" in page


def test_text_read_from_a_golden_file_or_an_index_is_escaped(make_report):
    hostile = '<script>alert("q")</script>'
    report = make_report(questions={hostile: ["doc-a"], "q2": ["doc-z"]})
    report["setups"][0]["error"] = None
    report["missing"] = {"local": {"documents": ["<img src=x onerror=alert(1)>"], "questions": {"q2": ["x"]}}}

    page = render_html(report, questions={hostile: "</td><script>alert(2)</script>"})

    tags = {tag for tag, _ in Elements(page).tags}
    assert "script" not in tags and "img" not in tags
    assert "&lt;script&gt;alert(&quot;q&quot;)&lt;/script&gt;" in page


def test_the_page_refers_to_nothing_outside_itself(make_report):
    page = render_html(make_report())
    elements = Elements(page)

    assert not [a for _, a in elements.tags if "src" in a]
    assert not [a["href"] for _, a in elements.tags if "href" in a and not a["href"].startswith("#")]
    assert "@import" not in page and "url(" not in page
    assert {tag for tag, _ in elements.tags} & {"script", "link", "img", "iframe", "object"} == set()


# -- what it shows --------------------------------------------------------------------------------

def test_the_golden_line_names_the_questions_the_source_the_sha256_and_the_collection(make_report):
    report = make_report()
    text = Elements(render_html(report)).text

    assert "Golden data: 3 labelled questions from golden.jsonl, sha256 " + report["golden"]["sha256"][:12] in text
    assert "collection docs" in text


def test_every_setup_that_ran_is_one_chart_point_and_one_ranked_row(make_report):
    report = make_report(setups=THREE)

    elements = Elements(render_html(report))

    points = {p["data-key"]: p for p in elements.having("g", "point")}
    assert set(points) == {"local.keyword.bm25", "local.dense.bge-small", "local.hybrid.bge-small"}
    assert float(points["local.dense.bge-small"]["data-found10"]) == pytest.approx(3 / 3)
    assert float(points["local.keyword.bm25"]["data-found10"]) == pytest.approx(2 / 3, abs=1e-4)
    assert float(points["local.hybrid.bge-small"]["data-found10"]) == pytest.approx(1 / 3, abs=1e-4)
    rows = [r["data-key"] for r in elements.having("tr", "ranked")]
    assert rows == ["local.dense.bge-small", "local.keyword.bm25", "local.hybrid.bge-small"]


def test_a_failed_setup_is_a_row_with_its_error_and_never_a_point(make_report):
    report = make_report()  # local.hybrid.bge-small failed

    page = render_html(report)
    elements = Elements(page)

    assert "local.hybrid.bge-small" not in {p["data-key"] for p in elements.having("g", "point")}
    assert elements.having("tr", "failed", data_key="local.hybrid.bge-small")
    assert "failed, never picked: RuntimeError: the index is gone" in elements.text


def test_time_is_on_a_log_axis_and_more_found_is_higher(make_report):
    # medians 1, 10 and 100 ms: on a log axis the two gaps are equal; on a linear one they are 1:10
    report = timed(make_report(setups=THREE), {"local.keyword.bm25": [1.0], "local.dense.bge-small": [10.0],
                                                "local.hybrid.bge-small": [100.0]})

    for drawing in drawings(render_html(report)).values():  # in each drawing, wide and narrow
        elements = Elements(drawing)

        circles = [a for t, a in elements.tags if t == "circle" and "fill" in a]
        by_found = {round(float(p["data-found10"]), 2): p for p in elements.having("g", "point")}
        assert len(circles) == 3
        xs = sorted(float(c["cx"]) for c in circles)
        assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], abs=0.2)
        ys = {float(c["cy"]): float(c["cx"]) for c in circles}
        y_of = {x: y for y, x in ys.items()}
        # dense (100%, 10 ms) above keyword (67%, 1 ms) above hybrid (33%, 100 ms): SVG y grows downwards
        assert y_of[xs[1]] < y_of[xs[0]] < y_of[xs[2]]
        assert set(by_found) == {1.0, 0.67, 0.33}


def test_points_that_share_a_spot_stay_there_and_each_keeps_its_own_number(make_report):
    # keyword and dense both found 2 of 3 at a median of 6 ms: the same spot
    same = {"local.keyword.bm25": THREE["local.keyword.bm25"], "local.dense.bge-small": THREE["local.keyword.bm25"]}
    report = make_report(setups=same)

    for drawing in drawings(render_html(report)).values():  # in each drawing, wide and narrow
        elements = Elements(drawing)

        circles = {(a["cx"], a["cy"]) for t, a in elements.tags if t == "circle" and "fill" in a}
        labels = [a for a in elements.having("text", "rank-label")]
        assert len(circles) == 1  # drawn where the numbers put them: one spot
        assert sorted(a["data-key"] for a in labels) == sorted(same)
        spots = {(a["x"], a["y"]) for a in labels}
        assert len(spots) == 2  # two numbers, two places
        assert elements.having("line", "leader") == []  # right and left of the spot: near enough to need no line


def test_the_frontier_is_joined_in_time_order_and_the_picks_are_ringed(make_report):
    report = timed(make_report(setups=THREE), {"local.keyword.bm25": [1.0], "local.dense.bge-small": [10.0],
                                                "local.hybrid.bge-small": [100.0]})
    report["frontier"] = ["local.dense.bge-small", "local.keyword.bm25"]  # as the report lists them: by rank
    report["picks"] = {"finds_the_most": "local.dense.bge-small", "best_for_balance": "local.dense.bge-small",
                       "best_for_time": "local.keyword.bm25"}

    page = render_html(report)
    for drawing in drawings(page).values():  # in each drawing, wide and narrow
        drawn = Elements(drawing)
        line = drawn.having("polyline", "frontier")
        assert len(line) == 1
        xs = [float(pair.split(",")[0]) for pair in line[0]["points"].split()]
        assert len(xs) == 2 and xs[0] < xs[1]  # keyword (1 ms) first
        ringed = {p["data-key"] for p in drawn.having("g", "pick")}
        assert ringed == {"local.dense.bge-small", "local.keyword.bm25"}
    elements = Elements(page)
    cards = {c["data-pick"]: c["data-key"] for c in elements.having("article", "pick")}
    assert cards == report["picks"]


def test_each_pick_shows_its_found10_and_median_time(make_report):
    report = timed(make_report(setups=THREE), {"local.keyword.bm25": [4.0, 6.0, 9.0],
                                                "local.dense.bge-small": [40.0, 60.0, 80.0],
                                                "local.hybrid.bge-small": [1.0]})
    report["picks"] = {"finds_the_most": "local.dense.bge-small", "best_for_balance": "local.keyword.bm25",
                       "best_for_time": "local.keyword.bm25"}

    page = render_html(report)
    cards = {name: Elements(card).text for name, card in
             re.findall(r'<article class="pick" data-pick="(\w+)".*?>(.*?)</article>', page)}

    # dense: 3 of 3 = 100%, median 60 ms; keyword: 2 of 3 = 67%, median 6.0 ms, 60 / 6 = 10 times faster
    assert cards["finds_the_most"].startswith("Finds the most local.dense.bge-small")
    assert "100% found@10 · 3 of 3" in cards["finds_the_most"] and "60 ms" in cards["finds_the_most"]
    assert "67% found@10 · 2 of 3" in cards["best_for_balance"] and "6.0 ms" in cards["best_for_balance"]
    # against the top, both setups named; timed apart (no pair), the ratio 60 / 6 = 10 is said as its band
    assert ("it finds 1 question fewer than local.dense.bge-small (2 against 3 of 3), and is between 10x and 20x "
            "faster than local.dense.bge-small") in cards["best_for_balance"]
    # the third pick is the second's setup: one short card that says so, not the whole card again
    assert "best_for_time" not in cards
    same = re.findall(r'<article class="pick same" data-pick="best_for_time".*?>(.*?)</article>', page)
    assert len(same) == 1 and "The same setup as Best for balance (local.keyword.bm25)" in Elements(same[0]).text
    assert "found@10 ·" not in Elements(same[0]).text


def test_the_ranked_table_has_found_at_every_cutoff_mrr_ndcg_and_times(make_report):
    report = make_report(setups=THREE)
    elements = Elements(render_html(report))
    heads = [h for h in re.findall(r"<th[^>]*>([^<]+)</th>", render_html(report))]

    # found@10 (the ranking key) and the times first, so they read without sliding the table
    assert heads[:12] == ["#", "setup", "found@10", "median ms", "p95 ms", "found@1", "found@3", "found@5", "found@20",
                          "recall@10", "MRR", "nDCG@10"]
    # keyword: q1 at 1, q2 at 2, q3 not found: MRR (1 + 1/2 + 0) / 3 = 0.500
    row = re.search(r'<tr class="ranked" data-key="local.keyword.bm25".*?</tr>', render_html(report)).group(0)
    assert "<td class=\"num\">0.500</td>" in row
    assert elements.having("tr", "ranked", data_key="local.keyword.bm25", data_rank="2")


def test_missing_documents_are_named_in_the_words_evaluate_warns_with(make_report):
    report = make_report()
    report["missing"] = {"local": {"documents": ["doc-c", "doc-d"], "questions": {"q3": ["doc-c"]},
                                   "partly": {"q2": ["doc-d"]}}}

    notes = missing_notes(RunReport.from_json(report))
    text = Elements(render_html(report)).text

    assert notes == ["local does not hold 2 expected documents: doc-c, doc-d; questions that cannot be "
                     "found there: q3; questions that lost some of their expected documents: q2"]
    assert notes[0] in text


def test_missing_notes_read_question_lists_and_cut_long_lists():
    report = {"missing": {"search": {"documents": [f"d{n}" for n in range(12)], "questions": ["q1"]}}}

    assert missing_notes(RunReport.from_json(report)) == [
        "search does not hold 12 expected documents: d0, d1, d2, d3, d4, d5, d6, d7, "
        "d8, d9 ... and 2 more; questions that cannot be found there: q1"]
    assert missing_notes(RunReport.from_json({"missing": {}})) == [] == missing_notes(RunReport.from_json({}))


def test_the_page_explains_each_number_with_the_names_other_tools_use(make_report):
    text = Elements(render_html(make_report())).text

    for words in ("hit rate@k", "recall@k", "Mean reciprocal rank", "Normalised discounted cumulative gain",
                  "frontier", "p95"):
        assert words in text


# -- reports from other versions --------------------------------------------------------------------

def test_a_report_from_a_newer_version_shows_what_it_adds(make_report):
    report = make_report(setups=THREE, with_text=True)
    for setup in report["setups"]:
        setup["summary"]["recall"] = {"1": 0.25, "10": 0.875}
        setup["difference_to_top"] = -0.0833
        setup["p_value"] = 0.031
        setup["method"] = "keyword_semantic" if setup["key"].endswith("bm25") else setup["method"]
    report["picks"] = {"finds_the_most": {"key": "local.dense.bge-small", "tied": ["local.keyword.bm25"]},
                       "best_for_balance": "local.keyword.bm25", "best_for_time": None}
    for row in report["questions"]:
        row.pop("question")
        row["sha256"] = "0" * 64

    page = render_html(report)
    text = Elements(page).text

    assert '<th class="num">recall@10</th>' in page and "88%" in text  # 0.875 rounds to 88%
    assert "p value 0.031" in text and "difference to top -0.0833" in text
    assert 'tied: ["local.keyword.bm25"]' in text
    assert Elements(page).having("article", "pick", data_pick="finds_the_most", data_key="local.dense.bge-small")
    assert "keyword + semantic ranker" in text


def test_throttling_retries_and_setups_an_index_cannot_do_are_shown(make_report):
    report = make_report(setups=THREE)
    report["setups"][0].update(requests=7, retries=2)
    report["targets"]["search"] = {"name": "search", "engine": "azure_search", "endpoint": "https://s.search.windows.net",
                                   "index": "docs", "state": "c" * 64,
                                   "left_out": [{"what": "keyword_semantic", "reason": "no semantic configuration"}]}

    text = Elements(render_html(report)).text

    assert "requests 7 retried after throttling 2 (the times include the waits)" in text
    assert (
        "Setups left out because the index cannot do them: on search: keyword_semantic (no semantic configuration)"
        in text
    )
    assert "index docs, endpoint https://s.search.windows.net, index state cccccccccccc" in text


def test_a_report_with_only_the_required_keys_renders(make_report):
    bare = {"format": 1, "id": "r1", "setups": [{"key": "t.keyword.bm25", "summary": {
        "questions": 2, "counts": {"10": 1}, "found": {"10": 0.5}, "median_ms": None}}]}

    page = render_html(bare)

    assert "t.keyword.bm25" in page and "Not drawn (no timed search): t.keyword.bm25." in Elements(page).text
    assert render_html({"format": 1, "id": "empty", "setups": []}).startswith("<!doctype html>")


def test_numbers_a_report_cannot_hold_are_shown_as_a_dash(make_report):
    report = make_report(setups=THREE)
    report["setups"][0]["summary"]["mrr"] = math.inf
    report["setups"][0]["summary"]["found"]["1"] = "n/a"

    assert "–" in render_html(report)


# -- the runs before this one ----------------------------------------------------------------------

def _saved(store, make_report, run_id, *, golden=GOLDEN_RAW, state="a" * 64, setups=None):
    report = make_report(run_id, golden_raw=golden, setups=setups)
    report["targets"]["local"]["fingerprint"] = state
    store.save(report)
    return report


def test_the_history_is_the_runs_on_the_same_golden_file_oldest_first_with_index_changes(tmp_path, make_report):
    store = LocalStore(tmp_path)
    other_golden = GOLDEN_RAW + b'{"id": "q4", "question": "And D?", "expected": ["doc-d"]}\n'
    first = _saved(store, make_report, "20261101T000000000Z-000001")
    _saved(store, make_report, "20261102T000000000Z-000002", golden=other_golden)
    second = _saved(store, make_report, "20261103T000000000Z-000003", setups=THREE)
    third = _saved(store, make_report, "20261104T000000000Z-000004", state="b" * 64)
    _saved(store, make_report, "20261105T000000000Z-000005")  # newer than the run shown: not its history

    points = collect_trend(store, RunReport.from_json(third))

    assert [p["id"] for p in points] == [first["id"], second["id"], third["id"]]
    assert index_changes(points) == [[], [], ["local"]]
    # keyword found@10: 2 of 3, then 2 of 3 again, then 2 of 3
    assert [p["found_10"]["local.keyword.bm25"] for p in points] == [0.6667, 0.6667, 0.6667]
    assert [p["found_10"]["local.hybrid.bge-small"] for p in points] == [None, 0.3333, None]
    page = render_html(third, history=points)
    elements = Elements(page)
    heads = elements.having("th", "changed")
    assert len(heads) == 1 and heads[0]["title"] == third["id"]
    assert "▲ index changed" in elements.text
    assert len(elements.having("tr", data_key="local.keyword.bm25")) == 2  # ranked table and history


def test_the_history_keeps_the_newest_runs_and_reads_a_bounded_number(tmp_path, make_report):
    store = LocalStore(tmp_path)
    reports = [_saved(store, make_report, f"202611{day:02d}T000000000Z-0000{day:02d}") for day in range(1, 7)]

    last = RunReport.from_json(reports[-1])
    assert [p["id"] for p in collect_trend(store, last, runs=3)] == [r["id"] for r in reports[3:]]
    assert [p["id"] for p in collect_trend(store, last, scan=2)] == [r["id"] for r in reports[3:]]


def test_a_run_alone_says_so_and_a_store_not_made_yet_has_no_history(tmp_path, make_report):
    report = make_report()

    model = RunReport.from_json(report)
    assert collect_trend(LocalStore(tmp_path / "not-yet"), model) == [trend_point(model)]
    assert "This is the only run on this golden file in the store." in Elements(render_html(report)).text


def test_an_index_state_counts_only_when_both_runs_know_it():
    points = [{"index_state": {"a": "1", "b": None}}, {"index_state": {"a": "1", "b": "2"}},
              {"index_state": {"a": "3", "c": "9"}}]

    assert index_changes(points) == [[], [], ["a"]]


def test_a_banner_goes_first_in_the_body(make_report):
    page = with_banner(render_html(make_report()), '<nav class="page-nav">menu</nav>')

    assert re.search(r"<body>\n<nav class=\"page-nav\">menu</nav>\n<main>", page)


def _with_significance(report: dict, *, tied: bool) -> dict:
    """``report`` with the paired-test fields assemble_report writes: the second setup one question
    behind the top (better 0, worse 1), Holm p as given, and the pick's tie entry."""
    report = copy.deepcopy(report)
    ranked = sorted((s for s in report["setups"] if s["summary"]), key=lambda s: s["rank"])
    top, second = ranked[0], ranked[1]
    second["versus_top"] = {"top": top["key"], "questions": 3, "tied": tied,
                            "found@10": {"difference": -1 / 3, "interval": [-1.0, 0.0], "better": 0, "worse": 1,
                                         "p": 1.0 if tied else 0.01, "p_holm": 1.0 if tied else 0.02},
                            "mrr": {"difference": -0.25, "interval": [-0.5, 0.0], "p": 0.5, "p_holm": 0.5}}
    top["versus_top"] = None
    report["significance"] = {"alpha": 0.05}
    row = {"key": second["key"], "median_ms": 1.0, "better": 0, "worse": 1, "p": 1.0 if tied else 0.01,
           "p_holm": 1.0 if tied else 0.02, "tied": tied, "questions_to_tell": 6}
    report["ties"] = {name: {"pick": top["key"], "tied": tied, "with": second["key"] if tied else None,
                             "faster": [row]}
                      for name in ("finds_the_most", "best_for_balance", "best_for_time")}
    report["question_ids"] = ["q1", "q2", "q3"]
    return report, top["key"], second["key"]


def test_the_ranked_table_says_whether_each_setup_is_within_noise_of_the_top(make_report):
    report, top, second = _with_significance(make_report(), tied=True)
    page = Elements(render_html(report))
    rows = re.findall(r'<tr class="ranked" data-key="([^"]+)".*?<td class="num main"[^>]*>(.*?)</td>', page.page,
                      flags=re.S)
    by_key = {key: html.unescape(re.sub(r"<[^>]+>", " ", cell)) for key, cell in rows}
    assert by_key[top].split() == ["100%", "3", "of", "3", "the", "top"]
    assert "-1 q, p 1.00" in by_key[second] and "too few to tell" in by_key[second]
    real, _, second_key = _with_significance(make_report(), tied=False)
    cell = re.search(rf'<tr class="ranked" data-key="{re.escape(second_key)}".*?<td class="num main"[^>]*>(.*?)</td>',
                     render_html(real), flags=re.S)
    assert 'class="vs real"' in cell.group(1) and "p 0.02" in cell.group(1) and "a real difference" in cell.group(1)


def test_a_faster_setup_the_test_cannot_tell_is_said_to_need_more_questions_and_one_it_can_to_find_less(make_report):
    report, top, second = _with_significance(make_report(), tied=True)
    card = re.search(r'<article class="pick" data-pick="finds_the_most".*?</article>', render_html(report), flags=re.S)
    words = html.unescape(re.sub(r"<[^>]+>", "", card.group(0)))
    # the words carry the report's own questions_to_tell (6 in this made-up row)
    assert (f"Paired test on found@10: {second} is faster than {top} and finds 1 question fewer in the top 10, and "
            "3 questions are too few to tell whether that is luck (telling a gap this size would take about 6 "
            "questions).") in words
    assert "noise" not in words and "as good" not in words and "loses nothing" not in words
    report, _, _ = _with_significance(make_report(), tied=False)
    card = re.search(r'<article class="pick" data-pick="finds_the_most".*?</article>', render_html(report), flags=re.S)
    said = f"the one faster setup, {second}, finds significantly fewer than {top} (paired test at 0.05)."
    assert said in card.group(0)


def test_a_gap_no_100000_questions_would_tell_is_said_to_need_more_than_100000_never_about():
    # questions_to_tell gives MOST_QUESTIONS when even that many would not tell (a gap of 1 in 1,000 needs
    # millions); only a smaller count is "about" that many
    needed = questions_to_tell(450, 451, 1000, 0.05)
    assert needed == MOST_QUESTIONS == 100_000

    said = found_gap_words(Compared(None, None, None, None, better=450, worse=451, questions_to_tell=needed), 1000)
    assert said.endswith("(telling a gap this size would take more than 100,000 questions)")
    gap = Compared(None, None, None, None, better=0, worse=1, questions_to_tell=99_999)
    assert "about 99,999 questions" in found_gap_words(gap, 1000)


def test_the_page_never_says_a_tie_loses_nothing_and_its_glossary_says_too_few_to_tell(make_report):
    report, _, _ = _with_significance(make_report(), tied=True)
    page = html.unescape(render_html(report))
    assert "loses nothing" not in page and "within noise" not in page
    assert "the questions are too few to tell, which is not the same as finding as many" in page


def test_a_pick_tied_on_time_names_the_setups_it_was_chosen_among(make_report):
    # two setups with the same results and times (median 6 ms): the same found@10 and found@1, one time
    # tier, so the key decided, and the card says that, not the rule
    same = THREE["local.dense.bge-small"]
    report = make_report(setups={"local.dense.bge-small": same, "local.hybrid.bge-small": same})
    pick, other = "local.dense.bge-small", "local.hybrid.bge-small"
    report["picks"].update(best_for_time=pick)
    report["ties_on_time"] = {"finds_the_most": [pick, other], "best_for_balance": [], "best_for_time": [pick]}
    card = re.search(r'<article class="pick" data-pick="finds_the_most".*?</article>', render_html(report), flags=re.S)
    words = html.unescape(re.sub(r"<[^>]+>", "", card.group(0)))
    assert (f"Why: it finds the most questions in its top 10 (3 of 3); 1 other setup finds as many: {other} finds "
            "as many first, is tied with it on time (their medians' 99% intervals overlap) and comes after it by "
            "name.") in words
    assert "then found@1, then key" not in words
    time_card = re.search(r'<article class="pick[^"]*" data-pick="best_for_time".*?</article>',
                          render_html(report), flags=re.S)
    assert "tied" not in time_card.group(0)


def test_a_report_without_significance_shows_no_vs_top_column(make_report):
    page = render_html(make_report())
    assert 'class="vs' not in page and 'class="tie' not in page


def test_a_refused_run_says_why_it_never_started_with_every_error_by_line():
    from evaluation.run import refusal_report

    report = refusal_report("the golden file has 2 error(s); fix them and save it again", source="docs/golden.jsonl",
                            sha256="ab" * 32, run_id="20261130T000000000Z-000001", created_at="2026-11-30T00:00:00Z")
    report["refused"]["errors"] = [{"line": 3, "message": '"expeted" is not a field. Did you mean "expected"?'},
                                   {"line": None, "message": "no question is ready"}]
    page = Elements(render_html(report))
    assert "This run never started. The golden file has 2 error(s); fix them and save it again." in page.text
    assert 'line 3: "expeted" is not a field. Did you mean "expected"?' in page.text
    assert "no question is ready" in page.text
    assert not page.having("section", id="picks") and not page.having("table")  # nothing ran, nothing picked


def test_a_report_saved_before_the_refactor_renders_the_page_it_rendered_then():
    import json
    from pathlib import Path

    saved = Path(__file__).parent.parent / "fixtures" / "page"
    report = json.loads((saved / "report.json").read_text(encoding="utf-8"))
    texts = question_texts((saved / "golden.jsonl").read_bytes(), report)
    assert texts == {"a": "where is alpha", "b": "where is beta", "c": "where is gamma"}
    assert render_html(report) == (saved / "page.html").read_text(encoding="utf-8")
    assert render_html(report, questions=texts) == (saved / "page_with_questions.html").read_text(encoding="utf-8")


def test_questions_most_setups_miss_lists_only_those_more_than_half_missed(make_report):
    # three setups that ran: q1 found by all 3, q2 by 2 of 3 (missed by 1: "some"), q3 by 0 of 3 ("most")
    report = make_report(setups={
        "local.keyword.bm25": {"q1": ["doc-a"], "q2": ["report.pdf#page=4"], "q3": ["doc-b"]},
        "local.dense.bge-small": {"q1": ["doc-a"], "q2": ["report.pdf#page=4"], "q3": ["doc-b"]},
        "local.hybrid.bge-small": {"q1": ["doc-a"], "q2": ["doc-b"], "q3": ["doc-b"]},
    })
    page = render_html(report)
    section = page[page.index('<section id="questions">'):page.index("</section>",
                                                                     page.index('<section id="questions">'))]
    most = section.split("<h3>Questions some setups miss</h3>")[0]
    some = section.split("<h3>Questions some setups miss</h3>")[1]

    assert 'data-question="q3"' in most and 'data-question="q2"' not in most and 'data-question="q1"' not in most
    assert 'data-question="q2"' in some and "2 of 3" in some
    assert "at least 2 of the 3 setups did not find" in most  # 3 // 2 + 1 = 2: more than half


def test_the_page_names_no_hover_and_keeps_bookkeeping_in_the_footer(make_report):
    report = make_report()
    report["cache"] = {"pairs_cached": 0, "pairs_computed": 0, "vectors_cached": 0, "vectors_computed": 0}
    page = render_html(report)

    assert "hover" not in Elements(page).text.lower()
    assert page.index('id="cache"') > page.index("<footer>")
    assert page.index('id="picks"') < page.index('id="chart"') < page.index('id="ranked"')


def test_a_pick_says_how_much_faster_with_the_pairs_interval_and_why_setups_are_tied_in_text_and_page(tmp_path):
    # every search costs a fixed time on a made-up clock: keyword 1 ms, dense 2 ms, hybrid 30 ms (+ 1 ms
    # on every third question, so each pair's ratios spread): keyword and dense are equally fast (both
    # under the 5 ms floor), hybrid finds the most and keyword and dense are 15x and 30x faster
    from evaluation import evaluate
    from evaluation.report.text import render_picks
    from fakes import ListTarget, write_golden

    now = [0.0]
    cost = {"keyword": 1.0, "dense": 2.0, "hybrid": 30.0}

    class Timed(ListTarget):
        def search(self, setup, question, depth):
            now[0] += (cost[setup.method] + (1.0 if len(self.calls) % 3 == 0 else 0.0)) / 1000
            return super().search(setup, question, depth)

    golden = write_golden(tmp_path, [{"id": f"q{n}", "question": f"question {n}", "expected": [f"d{n}"]}
                                     for n in range(12)])
    answers = {"hybrid": {f"question {n}": [f"d{n}"] for n in range(12)},  # all first: finds the most
               "dense": {f"question {n}": ["x", f"d{n}"] for n in range(12)},
               "keyword": {f"question {n}": ["x", f"d{n}"] for n in range(12)}}
    report = evaluate(Timed("t", answers, held={f"d{n}" for n in range(12)}), golden, clock=lambda: now[0],
                      time_floor=6, balance=100, time_points=100)
    assert report["picks"]["finds_the_most"] == "t.hybrid.m" and report["rules"]["equally_fast_ms"] == 5.0
    pair = next(p for p in report["time_pairs"] if {p["faster"], p["slower"]} == {"t.keyword.bm25", "t.hybrid.m"})
    assert pair["faster"] == "t.keyword.bm25" and pair["questions"] >= 6 and pair["low"] < pair["ratio"] < pair["high"]
    fast = report["picks"]["best_for_time"]
    other = ({"t.keyword.bm25", "t.dense.m"} - {fast}).pop()
    assert report["ties_on_time"]["best_for_time"] == [fast, other]

    text = " ".join(" ".join(line.split()) for line in render_picks(report).splitlines())
    # the fastest within the points (keyword, 1 ms) and the pick (dense, 2 ms) are equally fast under the
    # 5 ms floor: the reason that decided is said (the key, the last thing the rule looks at, as nothing
    # else differs), and each multiplier names both setups with the interval of their pair
    assert report["picks"]["best_for_balance"] == fast == "t.dense.m"
    assert ("why: t.keyword.bm25, the fastest within 100 points (12 questions) of the most, is tied with it on time "
            "(equally fast: both under 5 ms) and finds as many and as many first, is not shown slower by more than "
            "5 ms, and comes after it by name") in text
    dense = next(p for p in report["time_pairs"] if {p["faster"], p["slower"]} == {"t.dense.m", "t.hybrid.m"})
    times = lambda v: f"{v:,.0f}" if v >= 10 else f"{v:.1f}"  # noqa: E731
    faster = (f"is {times(dense['ratio'])}x faster than t.hybrid.m ({times(dense['low'])}x to "
              f"{times(dense['high'])}x)")
    assert faster in text
    whole = render_html(report)
    # both time picks are one setup here: its card is the balance pick's, the time pick's says it is the same
    assert re.search(r'<article class="pick same" data-pick="best_for_time"', whole)
    card = re.search(r'<article class="pick" data-pick="best_for_balance".*?</article>', whole, flags=re.S)
    page = html.unescape(re.sub(r"<[^>]+>", "", card.group(0)))
    assert faster in page and "is tied with it on time (equally fast: both under 5 ms)" in page
    words = html.unescape(re.search(r'<section id="words">.*?</section>', whole, flags=re.S).group(0))
    assert "<dt>equally fast</dt><dd>Setups under 5 ms of each other" in words
    assert ("<dt>inside a tier</dt><dd>A time pick takes the setup shown faster by more than the floor, and only "
            "between setups as fast as each other does found@1 decide.</dd>") in words

"""Numbers that use the judge's grades are never mixed silently with the people's: a test per view (the
terminal, the page, the JSON and the store's check, the exports), on a world where the two differ."""
from __future__ import annotations

import copy
import json
import re

import pytest
from judge_world import ScriptedJudge, World
from test_judge_holes import PRICES, world_run

from evaluation.golden import Question
from evaluation.holes import judge_holes, with_judged
from evaluation.report.html import render_html
from evaluation.report.text import render_report
from evaluation.report.trec import export_csv, export_trec
from evaluation.store.shape import report_problem

MARK = "+judged"


@pytest.fixture(scope="module")
def world_reports():
    world = World(40)
    report, questions = world_run(world)
    block = judge_holes(report, questions, world.texts, ScriptedJudge(world), prices=PRICES, calibration=60)
    chosen = judge_holes(report, questions, world.texts, ScriptedJudge(world), prices=PRICES, calibration=60,
                         picks_from="judged")
    return report, with_judged(report, block), with_judged(report, chosen)


def _table(text: str) -> list[str]:
    """The ranked table's rows (from the header to the first blank line)."""
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("#  setup"))
    end = lines.index("", start)
    return lines[start:end]


def test_the_terminal_shows_judged_numbers_only_under_marked_names(world_reports):
    plain, judged, _ = world_reports
    before, after = render_report(plain), render_report(judged)
    assert _table(after) == _table(before)  # the people's table: not a number moved
    assert "75%" in next(r for r in _table(after) if "w.hybrid.m1" in r)  # its human found@10, 30 of 40
    section = after[after.index("Holes judged by"):after.index("Picks (nothing")]
    header = next(line for line in section.splitlines() if line.strip().startswith("setup"))
    columns = re.split(r"\s{2,}", header.strip())
    assert columns == ["setup", "found@10", f"found@10{MARK}", f"MRR{MARK}", f"nDCG@10{MARK}", "holes graded"]
    hybrid = next(line for line in section.splitlines() if line.strip().startswith("w.hybrid.m1"))
    assert re.split(r"\s{2,}", hybrid.strip())[1:3] == ["75%", "100%"]  # the people's, then the judged, named
    assert after[after.index("Picks (nothing"):] == before[before.index("Picks (nothing"):]  # picks: the people's
    assert f"Picks the {MARK} numbers would name" in section and "finds_the_most w.dense.m1" in section


def test_the_terminal_says_when_the_picks_are_named_from_judged_grades(world_reports):
    plain, _, chosen = world_reports
    picks = render_report(chosen).split("Picks (nothing is switched: a person chooses):")[1]
    said = " ".join(picks.split())  # the lines are wrapped at 100 columns
    assert "named from the people's labels WITH the judge's grades (+judged" in said
    assert "on the people's labels alone: finds_the_most w.keyword.bm25" in said
    assert f"found@10{MARK} 40 of 40 (100%): the number this pick was named by" in said
    # the reason cites the numbers the pick was named by, marked, never the people's 20 of 40 for it
    assert "why: it finds the most questions in its top 10 (40 of 40); 2 other setups find as many" in said
    assert f"({MARK} numbers)" in said and "(20 of 40)" not in said
    assert "Finds the most: w.dense.m1" in said


def _section(page: str, name: str) -> str:
    match = re.search(rf'<section id="{name}".*?</section>', page, re.S)
    return match.group(0) if match else ""


def test_the_page_keeps_judged_numbers_in_their_own_marked_section(world_reports):
    plain, judged, chosen = world_reports
    before, after = render_html(plain), render_html(judged)
    assert _section(after, "ranked") == _section(before, "ranked") != ""
    assert _section(after, "picks") == _section(before, "picks")
    section = _section(after, "judged")
    headers = re.findall(r"<th(?:\s[^>]*)?>(.*?)</th>", section.split('<table class="judged">')[1])
    assert headers == ["setup", "found@10", f"found@10{MARK}", f"MRR{MARK}", f"nDCG@10{MARK}", "holes graded"]
    assert "kappa 1.00" in section and "Kendall tau 0.55" in section
    picks = _section(render_html(chosen), "picks")
    assert 'data-picks-from="judged"' in picks and f"found@10{MARK} 40 of 40" in picks
    assert "Why: it finds the most questions in its top 10 (40 of 40)" in picks and f"({MARK} numbers)" in picks
    assert _section(render_html(chosen), "judged") != ""


def test_the_json_keeps_the_judged_block_apart_and_the_store_checks_it(world_reports):
    plain, judged, chosen = world_reports
    assert [s["summary"] for s in judged["setups"]] == [s["summary"] for s in plain["setups"]]
    assert [q for q in judged["questions"]] == [q for q in plain["questions"]]
    assert judged["picks_from"] == "human" and chosen["picks_from"] == "human+judged"
    assert set(judged) - set(plain) == {"judged", "picks_from"}
    assert report_problem(json.loads(json.dumps(judged))) is None
    assert report_problem(json.loads(json.dumps(chosen))) is None
    forged = copy.deepcopy(chosen)
    forged["judged"]["counted"] = False
    assert "picks_from says human+judged" in report_problem(forged)
    text = copy.deepcopy(judged)
    text["judged"]["grades"]["q1"]["b1"] = "relevant"
    assert "judged.grades" in report_problem(text)


def test_the_exports_hold_the_peoples_labels_only(world_reports, tmp_path):
    plain, judged, _ = world_reports
    for name, report in (("plain", plain), ("judged", judged)):
        export_trec(report, tmp_path / f"{name}.run", tmp_path / f"{name}.qrels")
        export_csv(report, tmp_path / f"{name}.csv")
    for suffix in ("run", "qrels", "csv"):
        assert (tmp_path / f"judged.{suffix}").read_bytes() == (tmp_path / f"plain.{suffix}").read_bytes()
    assert "b1" not in (tmp_path / "judged.qrels").read_text()


def test_a_family_conflict_and_a_bias_are_printed_on_the_pick_they_concern(world_reports):
    plain, _, _ = world_reports
    world = World(40)
    questions = [Question(r["question"], expected=r["expected"], id=r["id"]) for r in world.golden_rows()]
    reranked = copy.deepcopy(plain)
    top = next(s for s in reranked["setups"] if s["key"] == reranked["picks"]["finds_the_most"])
    top["method"] = "hybrid_reranked"  # as if the pick were reordered by the bundled MiniLM cross-encoder
    judge = ScriptedJudge(world, "biased", favoured="keyword", name="ms-marco-MiniLM-judge")
    block = judge_holes(reranked, questions, world.texts, judge, prices=PRICES, calibration=80, min_kappa=0.0,
                        allow_family=True)
    shown = render_report(with_judged(reranked, block))
    picks = " ".join(shown.split("Picks (nothing is switched: a person chooses):")[1].split())  # unwrapped
    assert (f"FAMILY CONFLICT: the judge ms-marco-MiniLM-judge is of the MiniLM / MS MARCO family, as "
            f"ms-marco-minilm-l12 under test in {top['key']}") in picks
    assert f"the judge is biased toward {top['key']}" in picks
    page = _section(render_html(with_judged(reranked, block)), "picks")
    assert "FAMILY CONFLICT" in page and "biased toward" in page


def test_comparing_runs_reads_the_peoples_numbers_of_a_judged_run(world_reports):
    from evaluation.report.compare import compare_reports, render_comparison

    plain, judged, chosen = world_reports
    alone = compare_reports(plain, plain, resamples=200, seed=0)
    for other in (judged, chosen):
        compared = compare_reports(plain, other, resamples=200, seed=0)
        assert compared["setups"] == alone["setups"]  # the judge's grades move no setup between two runs
        assert MARK not in render_comparison(compared)

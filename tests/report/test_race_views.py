"""A setup the race stopped, in every view: never in the ranked table, never picked, and never shown as if it
had searched every question. The terminal, the page, the JSON and the exports (CSV tables, TREC run,
Azure evaluator rows) say it stopped, after how many questions and why, in one voice, and hold only the
questions it searched; comparing two runs compares it on those."""
from __future__ import annotations

import csv
import html
import json
import re

import pytest

from evaluation.store.report_parts import SetupResult
from evaluation.report.compare import compare_reports, render_comparison
from evaluation.report.html import render_html
from evaluation.report.race_words import stopped_sentence
from evaluation.report.text import render_report
from evaluation.store import open_store

from conftest import run_cli
from test_race import BEHIND, FAR_BEHIND, N, RERANKED, run


@pytest.fixture(scope="module")
def raced(tmp_path_factory):
    report, _ = run(tmp_path_factory.mktemp("raced"))
    assert report["race"]["stopped"] == [RERANKED]
    return report


def stopped_of(report):
    return next(s for s in report["setups"] if s["key"] == RERANKED)


def test_the_terminal_lists_it_apart_with_its_questions_and_why_never_in_the_table(raced):
    lines = render_report(raced)
    assert max(len(line) for line in lines.splitlines()) <= 100  # wrapped as every terminal line is
    text = " ".join(lines.split())  # the sentences, as read across the wrapped lines
    entry = stopped_of(raced)
    searched = len(entry["stopped"]["questions"])
    table = lines.split("Stopped by the race")[0]
    assert RERANKED not in table  # no row of the ranked table, whose numbers are over every question
    assert "\nStopped by the race (never picked; each one's numbers are over the questions it searched):\n  " in lines
    assert (f"Stopped by the race (never picked; each one's numbers are over the questions it searched): "
            f"{RERANKED}: {' '.join(stopped_sentence(SetupResult.from_json(entry)).split())}") in text
    assert f"stopped by the race after searching {searched} of {N} questions" in text
    assert f"found@10 {entry['stopped']['summary']['counts']['10']} of those {searched} (" in text
    assert "more than the 16 (8 points) any pick allows: adjusted p" in text
    assert "The race made" in text and "--exhaustive makes them all" in text
    picks = text.split("Picks (nothing is switched")[1]
    assert RERANKED not in picks
    assert "Race: 1 costly setup (about 0.1 s a question or more) raced" in " ".join(
        render_report(raced, details=True).split())


def test_the_page_says_the_same_in_its_table_and_the_setup_s_detail(raced):
    page = render_html(raced)
    entry = stopped_of(raced)
    assert f'<tr class="ranked" data-key="{RERANKED}"' not in page
    row = re.search(rf'<tr class="stopped" data-key="{re.escape(RERANKED)}">.*?</tr>', page).group(0)
    cell = html.unescape(re.sub(r"<[^>]+>", "", row))
    sentence = stopped_sentence(SetupResult.from_json(entry))
    searched, found, why = sentence.split("; ", 2)
    assert f"{searched}, never picked: {found}; {why}" in cell  # the terminal's sentence, word for word
    detail = re.search(rf'<details class="setup" id="setup-{re.escape(RERANKED)}".*?</details>', page).group(0)
    assert "stopped by the race</summary>" in detail and "<h3>Stopped by the race</h3>" in detail
    assert "found@10 " not in detail.split("</summary>")[0]  # its head shows no number as if over every question
    assert 'id="race-cost"' in page and 'id="race"' in page


def test_the_json_keeps_its_numbers_under_stopped_never_as_the_setup_s_summary(raced):
    entry = stopped_of(json.loads(json.dumps(raced)))
    assert entry["summary"] is None and entry["rank"] is None
    assert entry["stopped"]["summary"]["questions"] == len(entry["stopped"]["questions"]) < N
    assert set(entry["ranks"]) == set(entry["results"]) == set(entry["stopped"]["questions"])


def test_the_exports_hold_only_the_questions_it_searched_and_say_so(raced, tmp_path, capsys):
    store = open_store(str(tmp_path / "runs"))
    store.save(raced)
    entry = stopped_of(raced)
    searched = set(entry["stopped"]["questions"])
    out = tmp_path / "out"
    code, printed, said = run_cli(capsys, "runs", "export", raced["id"], "--store", str(tmp_path / "runs"),
                                  "--out", str(out))
    assert code == 0
    assert (f"{RERANKED} was stopped by the race after searching {len(searched)} of {N} questions: its lines, rows "
            "and evaluator rows cover those questions only") in said
    with open(out / f"{raced['id']}.setups.csv", encoding="utf-8") as handle:
        setups = {row["key"]: row for row in csv.DictReader(handle)}
    row = setups[RERANKED]
    assert row["questions"] == str(len(searched)) and row["found@10"] == "" and row["rank"] == ""
    assert row["stopped"] == stopped_sentence(SetupResult.from_json(entry)) and setups["t.hybrid.m"]["stopped"] == ""
    with open(out / f"{raced['id']}.questions.csv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["key"] == RERANKED]
    assert {r["question_id"] for r in rows} == searched  # no row for a question it never searched
    run_lines = (out / f"{raced['id']}.run.trec").read_text(encoding="utf-8").splitlines()
    assert {line.split()[0] for line in run_lines if line.endswith(f" {RERANKED}")} <= searched
    [rows_file] = out.glob(f"{raced['id']}.*hybrid_reranked*.azure.jsonl")
    assert {json.loads(line)["query_id"] for line in rows_file.read_text(encoding="utf-8").splitlines()} == searched


def test_two_runs_compare_a_setup_stopped_in_one_on_the_questions_it_searched_in_both(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    every, _ = run(tmp_path / "a", {**FAR_BEHIND, "hybrid_reranked": 0.9}, exhaustive=True)
    now, _ = run(tmp_path / "b", BEHIND, run_id="r2")
    entry = stopped_of(now)
    comparison = compare_reports(every, now, resamples=500)

    setup = comparison["setups"][RERANKED]
    assert setup["questions"] == len(entry["stopped"]["questions"]) and setup["stopped_in"] == ["current"]
    assert setup["regressed"]  # 90% before, about half since: caught on the questions it searched
    assert (f"{RERANKED}: stopped by the race in the current run, so compared on the {setup['questions']} shared "
            "questions it searched in both") in render_comparison(comparison)


def test_a_kept_report_whose_race_fields_were_damaged_is_a_sentence_naming_the_field(raced):
    from evaluation.store.shape import report_problem

    assert report_problem(raced) is None
    damaged = json.loads(json.dumps(raced))
    n = next(i for i, s in enumerate(damaged["setups"]) if s["key"] == RERANKED)
    damaged["setups"][n]["stopped"]["questions"] = 5
    assert report_problem(damaged).startswith(f"setups[{n}].stopped.questions is ")
    damaged = json.loads(json.dumps(raced))
    damaged["race"]["cost"] = None
    assert report_problem(damaged).startswith("race.cost is ")


def test_the_race_s_rule_reads_as_typed_numbers_and_a_part_a_report_lacks_is_left_out_never_printed_none(raced):
    """``store.report_parts.Race`` types each field (a count, a number, a name, or None); the sentence a report
    read past the shape check (a library caller's dict) is missing a part of leaves that part out."""
    from evaluation.report.race_words import cost_words, race_rule_words
    from evaluation.store.run_report import RunReport

    race = RunReport.from_json(raced).race
    assert race is not None and race.cost is not None
    assert isinstance(race.margin, int) and isinstance(race.family, int) and isinstance(race.seed, int)
    assert isinstance(race.alpha, float) and isinstance(race.points, (int, float)) and isinstance(race.test, str)
    assert isinstance(race.cost.searches, int) and isinstance(race.cost.share, (int, float))
    whole = race_rule_words(RunReport.from_json(raced))
    assert f"(seed {race.seed})" in whole and f"more than {race.margin} questions ({race.points:g} points" in whole
    damaged = json.loads(json.dumps(raced))
    for name in ("seed", "threshold_seconds", "points", "margin", "alpha", "test"):
        damaged["race"][name] = "?" if name != "test" else 7  # not the kind the field holds
    damaged["race"]["cost"]["searches"] = "many"
    report = RunReport.from_json(damaged)
    assert report.race is not None and report.race.seed is None and report.race.test is None
    said = race_rule_words(report)
    assert "None" not in said and "?" not in said
    assert said.startswith("1 costly setup raced: searched in batches in a seeded order, each stopped once shown "
                           "to find more questions fewer than a setup that searches every question")
    assert cost_words(report) == ""  # no "the race made None of ..."

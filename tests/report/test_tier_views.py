"""Tiers read the same everywhere: the report's JSON, ``runs show`` and ``evaluate``'s text at the
terminal, and the page; the picks say when they share a tier; label next is listed when tier 1 is tied."""
from __future__ import annotations

import json
import re

import pytest

from evaluation.store.report_parts import Tiers
from evaluation import evaluate
from evaluation.report.html import render_html
from evaluation.report.text import render_report
from evaluation.report.tier_words import detectable_words
from evaluation.store import LocalStore
from evaluation.target import Hit, Setup

from conftest import run_cli
from fakes import write_golden

N = 36


class ThreeSetups:
    """36 questions, each answered by document d<i>: the top finds 30, the near one 29 (one fewer), the
    worse one 22 (eight fewer, 22 points, none more). A miss returns other documents only."""

    engine = "test"
    name = "t"

    def __init__(self):
        self.found = {"keyword": range(22), "dense": range(29), "hybrid": range(30)}

    def describe(self):
        return {"name": self.name, "engine": self.engine, "collection": "docs", "chunks": N, "models": []}

    def setups(self):
        return [Setup(self.name, self.engine, "keyword"), Setup(self.name, self.engine, "dense", ("m",)),
                Setup(self.name, self.engine, "hybrid", ("m",))]

    def _results(self, setup, question):
        i = int(question.rsplit(" ", 1)[1])
        found = i in self.found[setup.method]
        docs = [f"d{i}"] if found else [f"x{i}", f"{setup.method}-{i}"]
        return [Hit(id=f"{d}:0", doc_id=d, page=None, score=1.0 / (n + 1)) for n, d in enumerate(docs)]

    def search(self, setup, question, depth):
        return self._results(setup, question)[:depth]

    def search_batch(self, setup, questions, depth):
        return [self._results(setup, q)[:depth] for q in questions]

    def holds(self, doc_ids):
        return set(doc_ids)


@pytest.fixture
def kept(tmp_path):
    golden = write_golden(tmp_path, [{"id": f"q{i}", "question": f"where is {i}", "expected": [f"d{i}"]}
                                     for i in range(N)])
    store = LocalStore(tmp_path / "store")
    # exhaustive: the three are tiered here, and a race would stop keyword (22 points behind) before the tiers
    report = evaluate(ThreeSetups(), golden, save_to=store, timed=3, exhaustive=True)
    return report, str(tmp_path / "store")


def groups_in_text(text: str) -> list[list[str]]:
    """The tiers as the text numbers them: ``tier N: key (...), key (...)``."""
    out: dict[int, list[str]] = {}
    lines: list[str] = []
    for line in text.splitlines():  # a tier's line wrapped to the terminal's width, joined again
        if lines and line.startswith("    ") and line.strip():
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    for line in lines:
        said = re.match(r"\s+tier (\d+): (.*)", line)
        if said:
            out[int(said.group(1))] = [re.sub(r" \(.*", "", part) for part in re.split(r", (?=t\.)", said.group(2))]
    return [out[n] for n in sorted(out)] if sorted(out) == list(range(1, len(out) + 1)) else [["numbered", str(out)]]


def groups_in_page(page: str) -> list[list[str]]:
    rows = re.findall(r'<tr data-tier="(\d+)" data-key="([^"]+)">', page)
    out: list[list[str]] = []
    for tier, key in rows:
        while len(out) < int(tier):
            out.append([])
        out[int(tier) - 1].append(key)
    return out


def test_the_tiers_are_the_same_in_the_json_the_terminal_the_cli_and_the_page(kept, capsys):
    report, store = kept
    expected = [["t.hybrid.m", "t.dense.m"], ["t.keyword.bm25"]]
    assert report["tiers"]["groups"] == expected
    saved = json.loads(json.dumps(report))
    assert groups_in_text(render_report(saved)) == expected
    code, out, _ = run_cli(capsys, "runs", "show", report["id"], "--store", store)
    assert code == 0 and groups_in_text(out) == expected
    code, out, _ = run_cli(capsys, "runs", "show", report["id"], "--store", store, "--json")
    assert code == 0 and json.loads(out)["tiers"] == report["tiers"]
    assert groups_in_page(render_html(saved)) == expected


def test_a_pick_sharing_its_tier_says_so_in_the_terminal_and_on_the_page(kept):
    report, _ = kept
    assert report["picks"]["finds_the_most"] == "t.hybrid.m"
    words = "in tier 1 with t.dense.m: the paired tests cannot separate them"
    assert words in render_report(report)
    assert "In tier 1 with t.dense.m: the paired tests cannot separate them." in render_html(report)


def test_the_detectable_difference_is_said_with_its_numbers(kept):
    report, _ = kept
    detect = report["tiers"]["detectable"]
    said = detectable_words(Tiers.from_json(report["tiers"]))
    assert f"under {detect['points']:.0f} points ({detect['questions']:.1f} questions)" in said
    assert said in " ".join(render_report(report).split()) and said in render_html(report)


def test_label_next_is_listed_when_tier_one_is_tied_and_never_with_question_text(kept):
    report, _ = kept
    proposal = report["label_next"]
    assert proposal["tied"] == ["t.hybrid.m", "t.dense.m"]
    # q29: hybrid finds d29, dense returns x29 and dense-29, unjudged; either, relevant, would make dense find it;
    # q30-q35: both miss, and hybrid-i (dense-i), relevant, would make one alone find it; x30-x35 both return
    expected = {("q29", "x29"), ("q29", "dense-29")} | {(f"q{i}", f"{m}-{i}") for i in range(30, 36)
                                                         for m in ("hybrid", "dense")}
    assert {(r["question"], r["result"]) for r in proposal["results"]} == expected
    assert proposal["results_scored"] == 14 and len(proposal["results"]) == 14
    page = render_html(report)
    assert 'id="label-next"' in page and "dense-29" in page
    assert "where is" not in json.dumps(proposal)  # ids and scores only
    text = render_report(report)
    first = proposal["results"][0]
    assert "Label next, to separate tier 1 (t.hybrid.m, t.dense.m)" in text
    assert f"{first['question']}: {first['result']}" in text and "... and 9 more" in text  # the first 5 of 14


def test_a_report_from_before_tiers_renders_without_them(kept):
    report, _ = kept
    old = {k: v for k, v in report.items() if k not in ("tiers", "label_next")}
    assert "Tiers:" not in render_report(old)
    assert 'id="tiers"' not in render_html(old) and 'id="label-next"' not in render_html(old)


@pytest.mark.parametrize("damage", [
    {"groups": [["markdown", "fixed"], None]},  # a group that is not a list of keys (found by the kept-files fuzz)
    {"pairs": True},  # pairs that are not a list (found by the kept-files fuzz)
    {"groups": "markdown"}, {"groups": True}, {"pick": None}, {"pick": ["markdown"]}, {"pick": {"technique": 3}},
])
def test_a_damaged_builds_tiers_block_is_read_as_far_as_it_holds_and_never_raises(damage):
    from evaluation.report.tier_words import builds_tier_lines, builds_tiers_pick

    tiers = {"metric": "right", "alpha": 0.05, "groups": [["markdown", "fixed"], ["sentence"]],
             "pairs": [{"a": "markdown", "b": "fixed"}], "pick": {"technique": "markdown"}, **damage}
    pick = builds_tiers_pick(tiers, "technique")
    lines = builds_tier_lines(tiers, pick)
    assert pick in ("markdown", None)
    if isinstance(tiers["groups"], list):
        assert lines[0].startswith("Tiers (right") and "1: markdown, fixed" in lines[0]
    else:
        assert lines == []
    assert builds_tiers_pick([1, 2]) is None and builds_tier_lines([1, 2], None) == []

"""The race of a builds run (``builds.race``): a costly row (the cross-encoder's) shown to score less than the
best row asked every question is stopped, never named best or picked, and said so in the report and its
views; the cheap rows are asked every question; no race with ``exhaustive``, with a gate that needs every
row on every query, or with too few questions. The cross-encoder is stood in for by a ranker that finds
nothing (its search patched), so the runs take seconds and the race has something to stop."""
from __future__ import annotations

import csv
import io
import json
import random

import pytest

from evaluation.builds import run_matrix
from evaluation.builds.race import BuildRace
from evaluation.engine.target import EmbeddedTarget
from evaluation.report.builds.export import matrix_csv
from evaluation.report.builds.matrix_page import best_experiment, matrix_section
from evaluation.report.builds.text import matrix_text
from evaluation.store.builds_shape import chunking_report_problem

N = 60


def test_a_costly_row_far_below_the_best_is_stopped_after_a_prefix_of_the_order():
    race = BuildRace(N, raced=1, measure="nDCG@10")
    race.ran("good", [1.0] * N)
    asked: list[int] = []

    def search(indices):
        asked.extend(indices)
        return [0.0] * len(indices)

    found, stop = race.race("bad", search)
    assert stop is not None and stop["comparator"] == "good" and stop["adjusted_p"] <= 0.05
    assert asked == race.order[:stop["drawn"]] == list(found) and stop["drawn"] < N
    assert stop["interval"][0] > 0  # over every question it scores less: never the best


def test_a_costly_row_as_good_as_the_best_is_asked_every_question():
    rng = random.Random(1)
    values = [float(rng.random() < 0.7) for _ in range(N)]
    race = BuildRace(N, raced=1, measure="nDCG@10")
    race.ran("good", values)
    found, stop = race.race("same", lambda indices: [values[i] for i in indices])
    assert stop is None and sorted(found) == list(range(N))


def test_no_race_when_exhaustive_when_nothing_is_costly_or_too_few_questions_or_nothing_to_compare_with():
    assert not BuildRace(N, raced=1, measure="m", exhaustive=True).on
    assert not BuildRace(N, raced=0, measure="m").on
    assert not BuildRace(3, raced=1, measure="m").on  # one look, at the last question: nothing to save
    race = BuildRace(N, raced=1, measure="m")
    found, stop = race.race("first", lambda indices: [0.0] * len(indices))  # no row ran in full yet
    assert stop is None and sorted(found) == list(range(N))


# -- a matrix whose reranked experiment finds nothing ---------------------------------------------------

def corpus_and_queries(tmp_path):
    words = ["alpha", "bravo", "cedar", "delta", "ember", "fjord", "grove", "harbor", "island", "jasper"]
    docs, queries = [], []
    for i in range(N):
        name = f"{words[i % 10]}{i}"
        docs.append({"id": f"doc-{i}", "text": f"The {name} notes say {name} is kept in room {i}. " * 12})
        queries.append({"id": f"q{i}", "query": f"where is {name} kept", "relevant_ids": [f"doc-{i}"]})
    corpus, golden = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    golden.write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    return corpus, golden


@pytest.fixture
def blind_reranker(monkeypatch):
    """The cross-encoder's searches return nothing (no model loaded): its experiments find nothing."""
    searched: list[str] = []
    original = EmbeddedTarget.search_batch

    def search_batch(self, setup, questions, depth, **kwargs):
        if setup.ranker == "cross-encoder":
            searched.extend(questions)
            return [[] for _ in questions]
        return original(self, setup, questions, depth, **kwargs)

    monkeypatch.setattr(EmbeddedTarget, "search_batch", search_batch)
    return searched


def matrix(tmp_path, **options):
    corpus, queries = corpus_and_queries(tmp_path)
    return run_matrix(corpus, queries, embedders=("hash",), methods=("keyword", "hybrid", "hybrid_reranked"),
                      top_k=(5, 10), workdir=tmp_path, **options)


def test_a_matrix_s_reranked_experiment_that_finds_nothing_is_stopped_and_never_the_pick(tmp_path, blind_reranker):
    report = matrix(tmp_path)

    [stopped] = [x for x in report["experiments"] if x.get("stopped")]
    assert stopped["method"] == "hybrid_reranked" and stopped["metrics"] is None  # never shown as over every query
    said = stopped["stopped"]
    assert len(said["questions"]) == said["drawn"] < N and len(blind_reranker) == said["drawn"]
    assert said["metrics"]["10"]["hit_rate"] == 0.0 and said["words"].startswith(
        f"stopped by the race after searching {said['drawn']} of {N} questions")
    assert "hybrid_reranked" not in (best_experiment(report) or "") and report["race"]["family"] == 1
    assert said["words"] in matrix_text(report) and '<tr class="stopped">' in matrix_section(report)
    rows = [r for r in csv.DictReader(io.StringIO(matrix_csv(report))) if r["method"] == "hybrid_reranked"]
    assert {r["stopped"] for r in rows} == {said["words"]} and {r["hit_rate"] for r in rows} == {""}
    assert {r["questions"] for r in rows} == {str(said["drawn"])}
    assert chunking_report_problem({**report, "id": "r1", "gate": report["gate"]}) is None  # a store keeps it


def test_a_matrix_with_a_gate_or_asked_for_everything_races_nothing(tmp_path, blind_reranker):
    from evaluation.builds import parse_thresholds

    gated = matrix(tmp_path, fail_under=tuple(parse_thresholds(["hit_rate@5=0.1"], (5, 10))))
    assert "race" not in gated and not any(x.get("stopped") for x in gated["experiments"])
    assert len(blind_reranker) == N
    (tmp_path / "every").mkdir()
    every = matrix(tmp_path / "every", exhaustive=True)
    assert "race" not in every and not any(x.get("stopped") for x in every["experiments"])


# -- a sweep and a chunking comparison, their reranked rows finding nothing ------------------------------

def docs_and_golden(tmp_path):
    corpus, queries = corpus_and_queries(tmp_path)
    rows = [json.loads(line) for line in queries.read_text(encoding="utf-8").splitlines()]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps({"id": r["id"], "question": r["query"], "expected": [r["relevant_ids"][0]]})
                              + "\n" for r in rows), encoding="utf-8")
    return corpus, golden


def test_a_sweep_s_reranked_row_that_finds_nothing_is_stopped_and_never_best(tmp_path, blind_reranker):
    from evaluation.builds import sweep
    from evaluation.report.builds.sweep_page import sweep_section
    from evaluation.report.builds.text import sweep_markdown, sweep_text

    from chunking_cut import engine_cutter

    corpus, golden = docs_and_golden(tmp_path)
    report = sweep(corpus, golden, builds=["fixed-50-n"], methods=("keyword", "hybrid_reranked"), models=("hash",),
                   timed=0, workdir=tmp_path, cutter=engine_cutter)

    [stopped] = [r for r in report["rows"] if r.get("stopped")]
    assert stopped["method"] == "hybrid_reranked" and stopped["rank"] is None
    assert report["best"] == "fixed-50-n.keyword" and report["rows"][-1] is stopped
    assert stopped["questions"] == len(stopped["stopped"]["questions"]) == len(blind_reranker) < N
    words = stopped["stopped"]["words"]
    assert f"Stopped: fixed-50-n.hybrid_reranked: {words}." in sweep_text(report)
    assert words in sweep_markdown(report) and words in sweep_section(report)
    assert "None" not in sweep_text(report)  # no row without a rank in the ranked table
    assert chunking_report_problem({**report, "id": "r1"}) is None  # a store keeps it, and its lists read it


def test_a_chunking_comparison_of_reranked_builds_stops_a_build_that_finds_nothing_and_never_picks_it(
        tmp_path, monkeypatch):
    from evaluation.builds import compare_chunking
    from evaluation.report.builds.text import compare_text

    from chunking_cut import engine_cutter

    original = EmbeddedTarget.search_batch

    def blind_small_chunks(self, setup, questions, depth, **kwargs):  # the 50-word build's reranker finds nothing
        if setup.ranker == "cross-encoder" and len(self.index.chunks) > 2 * N:
            return [[] for _ in questions]
        if setup.ranker == "cross-encoder":  # the other build's: as hybrid does, no model loaded
            from dataclasses import replace as rebuilt

            setup = rebuilt(setup, ranker=None)
        return original(self, setup, questions, depth, **kwargs)

    monkeypatch.setattr(EmbeddedTarget, "search_batch", blind_small_chunks)
    corpus, golden = docs_and_golden(tmp_path)
    report = compare_chunking(corpus, golden, techniques=("fixed",), sizes=(200, 50), headings=(False,),
                              cutter=engine_cutter, method="hybrid_reranked", model="hash", workdir=tmp_path,
                              cache=None)

    [stopped] = report["stopped"]
    assert stopped["build"] == "fixed-50-n" and stopped["comparator"] == "fixed-200-n"
    assert stopped["build"] not in [b["key"] for b in report["builds"]]
    assert report["pick"]["pick"] != stopped["build"]
    assert f"Stopped: {stopped['build']}: {stopped['words']}." in compare_text(report)
    assert chunking_report_problem({**report, "id": "r1"}) is None

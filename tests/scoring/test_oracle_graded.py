"""The report's numbers are the numbers trec_eval's engine, ir_measures, ranx and Azure's evaluator give on
the files it exports.

Random graded judgements (0-4, 0 = judged not relevant), judged pages beside their documents (the page
grain, inside ``doc``), results that bring a document back in several chunks, unjudged results (holes),
both readings of a rank (among results, among documents) at both exportable grains (``doc``, ``chunk``),
and relevance levels 1-3. For each draw, the setup's entry is made as a run makes it (``run.judged`` +
``with_times``, then ``add_azure_numbers``), and:

- exported with ``export_trec``, the files scored by pytrec_eval (trec_eval's code), ir_measures, ranx
  and our own ``score``: found@k (success / hit_rate), MRR (recip_rank), nDCG@10 (ndcg_cut_10, gains =
  grades) and recall@k at the relevance level, question by question, and the report's rounded means;
- exported as Azure evaluator rows (``report_evaluator_rows``, what ``runs export --format azure``
  writes), scored row by row by azure-ai-evaluation's ``DocumentRetrievalEvaluator`` (the report's
  ``summary.azure.exact``), by ir_measures' nDCG@3 with the evaluator's gains 2**g - 1 (the corrected
  ``ndcg@3``), and read back by ``score --azure-rows``' own code (the report's found@k, MRR, nDCG@10,
  recall@k and Azure numbers, and its reading).

The ``evidence`` grain has no such files: quotes are not TREC units nor documents the evaluator ranks,
and both exports refuse it with a sentence (``tests/cli/test_export_readings.py``, ``test_trec.py``).
"""
from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ir_measures
import pytrec_eval
from ir_measures import RR, R, Judged, Success, nDCG

from evaluation.golden import Golden, Question
from evaluation.measures import CUTOFFS
from evaluation.report.azure_rows import (
    GROUND_TRUTH, RETRIEVED, read_evaluator_rows, report_evaluator_rows, score_evaluator_rows, write_evaluator_rows,
)
from evaluation.report.trec import export_trec, read_trec_run, score_run
from evaluation.run.assemble import add_azure_numbers
from evaluation.run.judged import judged
from evaluation.run.one_setup import with_times
from evaluation.scoring.judging import Rule
from evaluation.target import Hit

from test_azure_retrieval_metrics import KEYS, evaluator_class

import ranx  # a dev requirement, as pytrec_eval and ir_measures are: the test must not skip unseen

ROUNDED = 5e-5 + 1e-9  # the report keeps means to 4 places
DOCS = [f"d{n}" for n in range(8)]
PAGED = {"d0", "d1"}  # these documents have pages 1-3; a question may judge a page of them


@st.composite
def draws(draw):
    by = draw(st.sampled_from(["doc", "chunk"]))
    rank_among = draw(st.sampled_from(["results", "documents"]))  # at chunk the two are one: drawn to show it
    min_grade = draw(st.integers(1, 3))
    questions, hit_lists = [], []
    for n in range(draw(st.integers(1, 6))):
        hits = []
        for i in range(draw(st.integers(0, 24))):
            doc = draw(st.sampled_from(DOCS))
            page = draw(st.integers(1, 3)) if doc in PAGED else None
            hits.append(Hit(id=f"{doc}:{i}", doc_id=doc, page=page, score=1.0))
        if by == "chunk":
            pool = [h.id for h in hits] + [f"{d}:99" for d in DOCS]  # some judged chunks never come back
        else:
            pool = DOCS + [f"{d}#page={p}" for d in sorted(PAGED) for p in (1, 2, 3)]
        labels = draw(st.dictionaries(st.sampled_from(pool), st.integers(0, 4), min_size=1, max_size=8))
        top = draw(st.sampled_from(sorted(labels)))
        labels[top] = draw(st.integers(min_grade, 4))  # at least one relevant at this level: a scored question
        questions.append(Question(id=f"q{n}", question="?", expected=labels))
        hit_lists.append(hits)
    return by, rank_among, min_grade, questions, hit_lists


def report_of(by, rank_among, min_grade, questions, hit_lists):
    """One setup's report, its entry made as a run makes it."""
    rule = Rule(by, rank_among, min_grade)
    entry = {"key": "t.keyword.bm25", "error": None, **judged(questions, hit_lists, rule)}
    entry = with_times(entry, {"times_ms": [1.0], "judged": {name: {} for name in entry if name in
                                                             ("ranks", "ndcg_10", "results", "outcomes")}})
    add_azure_numbers([entry], questions, by, rank_among)
    return {"by": by, "depth": 30, "question_ids": [q.id for q in questions],
            "questions": [{"id": q.id, "expected": list(q.expected), "grades": dict(q.grades)} for q in questions],
            "rules": {"rank_among": rank_among, "min_grade": min_grade}, "setups": [entry]}


def read_files(run_path, qrels_path):
    run, qrels = {}, {}
    for line in run_path.read_text().splitlines():
        qid, _, docno, _, score, _ = line.split()
        run.setdefault(qid, {})[docno] = float(score)
    for line in qrels_path.read_text().splitlines():
        qid, _, docno, grade = line.split()
        qrels.setdefault(qid, {})[docno] = int(grade)
    return run, qrels


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(draw=draws())
def test_the_export_scored_by_every_oracle_gives_the_reports_numbers(tmp_path_factory, draw):
    by, rank_among, level, questions, hit_lists = draw
    report = report_of(by, rank_among, level, questions, hit_lists)
    entry, summary = report["setups"][0], report["setups"][0]["summary"]
    folder = tmp_path_factory.mktemp("export")
    run_path, qrels_path = export_trec(report, folder / "run.trec", folder / "qrels.trec")[:2]
    run, qrels = read_files(run_path, qrels_path)
    ids = [q.id for q in questions]
    n = len(ids)

    # trec_eval's own code, at relevance level `level` (its nDCG gains are the grades whatever the level)
    measures = {"recip_rank", "ndcg_cut.10", "success." + ",".join(map(str, CUTOFFS)),
                "recall." + ",".join(map(str, CUTOFFS))}
    trec = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
    zero = {m: 0.0 for m in ("recip_rank", "ndcg_cut_10", *(f"success_{k}" for k in CUTOFFS),
                             *(f"recall_{k}" for k in CUTOFFS))}
    per_q = {qid: trec.get(qid, zero) for qid in ids}  # a question with no results scores 0, as in the report
    for qid in ids:
        rank = entry["ranks"][qid]
        assert (1 / rank if rank else 0.0) == pytest.approx(per_q[qid]["recip_rank"], abs=1e-12), qid
        assert entry["ndcg_10"][qid] == pytest.approx(per_q[qid]["ndcg_cut_10"], abs=1e-6), qid
    assert summary["mrr"] == pytest.approx(sum(v["recip_rank"] for v in per_q.values()) / n, abs=ROUNDED)
    assert summary["ndcg_10"] == pytest.approx(sum(v["ndcg_cut_10"] for v in per_q.values()) / n, abs=ROUNDED)
    for k in CUTOFFS:
        assert summary["counts"][str(k)] == sum(v[f"success_{k}"] for v in per_q.values())
        assert summary["recall"][str(k)] == pytest.approx(
            sum(v[f"recall_{k}"] for v in per_q.values()) / n, abs=ROUNDED
        )

    # ir_measures (its own Judged@10; the rest through trec_eval's code again, by its names)
    found = {RR(rel=level): "mrr", nDCG @ 10: "ndcg_10"}
    asked = [*found, *(Success(rel=level) @ k for k in CUTOFFS), *(R(rel=level) @ k for k in CUTOFFS), Judged @ 10]
    scores: dict = {}
    for metric in ir_measures.iter_calc(asked, qrels, run):
        scores.setdefault(metric.measure, {})[metric.query_id] = metric.value
    mean = {m: sum(scores.get(m, {}).get(qid, 0.0) for qid in ids) / n for m in asked}
    for measure, key in found.items():
        assert summary[key] == pytest.approx(mean[measure], abs=ROUNDED)
    for k in CUTOFFS:
        assert summary["counts"][str(k)] == pytest.approx(mean[Success(rel=level) @ k] * n, abs=1e-9)
        assert summary["recall"][str(k)] == pytest.approx(mean[R(rel=level) @ k], abs=ROUNDED)
    if rank_among == "documents":  # among results a unit's later chunks are judged here, and unjudged docnos there
        assert summary["judged_10"] == pytest.approx(mean[Judged @ 10], abs=ROUNDED)

    # ranx: relevance level as its "-l<level>" suffix on the binary measures; its nDCG without one
    # (with one, ranx drops the lower grades from the gains, which trec_eval does not)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx_qrels = ranx.Qrels({qid: docs for qid, docs in qrels.items()})
        ranx_run = ranx.Run({qid: run.get(qid) or {"__none__": 0.0} for qid in qrels})
        metrics = ["ndcg@10", f"mrr-l{level}", *(f"hit_rate@{k}-l{level}" for k in CUTOFFS),
                   *(f"recall@{k}-l{level}" for k in CUTOFFS)]
        by_ranx = ranx.evaluate(ranx_qrels, ranx_run, metrics, make_comparable=True)
    assert summary["ndcg_10"] == pytest.approx(float(by_ranx["ndcg@10"]), abs=ROUNDED)
    assert summary["mrr"] == pytest.approx(float(by_ranx[f"mrr-l{level}"]), abs=ROUNDED)
    for k in CUTOFFS:
        assert summary["found"][str(k)] == pytest.approx(float(by_ranx[f"hit_rate@{k}-l{level}"]), abs=ROUNDED)
        assert summary["recall"][str(k)] == pytest.approx(float(by_ranx[f"recall@{k}-l{level}"]), abs=ROUNDED)

    # our own `score` on the exported run: the report's numbers at full precision
    golden = Golden(source="g.jsonl", sha256="0" * 64, raw=b"", questions=tuple(questions),
                    problems=(), format="jsonl")
    ours = score_run(golden, read_trec_run(run_path), by, min_grade=level).get("t.keyword.bm25")
    if ours is None:  # the setup found nothing for any question: no line to read back
        assert all(not run.get(qid) for qid in ids)
        return
    for key in ("mrr", "ndcg_10"):
        assert ours[key] == pytest.approx(summary[key], abs=ROUNDED)
    assert ours["counts"] == summary["counts"]
    for k in CUTOFFS:
        assert ours["recall"][str(k)] == pytest.approx(summary["recall"][str(k)], abs=ROUNDED)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(draw=draws())
def test_the_azure_rows_scored_by_azures_evaluator_and_read_back_give_the_reports_numbers(tmp_path_factory, draw):
    evaluator = evaluator_class()()  # the label range every draw's grades fit: Azure's default, 0-4
    by, rank_among, level, questions, hit_lists = draw
    report = report_of(by, rank_among, level, questions, hit_lists)
    summary = report["setups"][0]["summary"]
    assert summary["azure"]["label_range"] == "0-4" and summary["azure"]["rank_among"] == rank_among
    rows = report_evaluator_rows(report, "t.keyword.bm25")  # what `runs export --format azure` writes
    path = write_evaluator_rows(rows, tmp_path_factory.mktemp("azure") / "rows.jsonl")
    assert {row["rank_among"] for row in rows} == {rank_among}

    # Azure's own evaluator, row by row: the report's exact numbers are their means (NaN left out, as its pandas does)
    answers = [evaluator(retrieval_ground_truth=row[GROUND_TRUTH], retrieved_documents=row[RETRIEVED])
               ["document_retrieval_properties"] for row in rows]
    for name in KEYS:
        values = [a[name] for a in answers if not (isinstance(a[name], float) and math.isnan(a[name]))]
        mine = summary["azure"]["exact"][name]
        assert (mine is None) if not values else mine == pytest.approx(sum(values) / len(values), abs=ROUNDED), name

    # the corrected nDCG@3 is trec_eval's ndcg_cut_3 with the evaluator's gains, 2**g - 1, on the same rows
    qrels = {row["query_id"]: {d["document_id"]: d["query_relevance_label"] for d in row[GROUND_TRUTH]}
             for row in rows}
    run = {row["query_id"]: {d["document_id"]: d["relevance_score"] for d in row[RETRIEVED]} or {"__none__": 0.0}
           for row in rows}
    exponential = nDCG(gains={g: 2 ** g - 1 for g in range(5)}) @ 3
    per_q = {m.query_id: m.value for m in ir_measures.iter_calc([exponential], qrels, run)}
    mean = sum(per_q.get(qid, 0.0) for qid in qrels) / len(qrels)
    assert summary["azure"]["corrected"]["ndcg@3"] == pytest.approx(mean, abs=ROUNDED)

    # read back and scored by `score --azure-rows`: the report's own numbers, in its reading
    scored = score_evaluator_rows(read_evaluator_rows(path), min_grade=level)
    assert scored["rank_among"] == rank_among and scored["azure"] == summary["azure"]
    assert scored["questions"] == summary["questions"] and scored["counts"] == summary["counts"]
    for key in ("mrr", "ndcg_10"):
        assert scored[key] == pytest.approx(summary[key], abs=ROUNDED), key
    for k in CUTOFFS:
        assert scored["recall"][str(k)] == pytest.approx(summary["recall"][str(k)], abs=ROUNDED), k
    assert scored["judged_10"] == pytest.approx(summary["judged_10"], abs=ROUNDED)  # a repeat is judged in both

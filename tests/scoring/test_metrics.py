"""Metrics against an external oracle (ir_measures and pytrec_eval) and by hand on edge cases."""
import math
import random

import ir_measures
import pytest
import pytrec_eval
from ir_measures import R, RR, Success, nDCG

from evaluation.golden import Question
from evaluation.scoring.judging import judge
from evaluation.scoring.metrics import CUTOFFS, Outcome, landed_bucket, summarise
from evaluation.target import Hit


def outcome_from(ranking, relevant, qid="q"):
    positions = tuple(i for i, doc in enumerate(ranking, start=1) if doc in relevant)
    return Outcome(qid, positions, len(relevant))


def random_case(rng, questions=200, corpus=60):
    qrels, run, outcomes = {}, {}, []
    for n in range(questions):
        qid = f"q{n}"
        relevant = set(rng.sample(range(corpus), rng.randint(1, 4)))
        ranking = rng.sample(range(corpus), rng.randint(0, 30))  # distinct docs: no ties, some empty
        qrels[qid] = {f"d{d}": 1 for d in relevant}
        # Strictly decreasing scores: trec_eval's own sort keeps this order exactly.
        run[qid] = {f"d{d}": float(100 - i) for i, d in enumerate(ranking)}
        outcomes.append(outcome_from(ranking, relevant, qid))
    return qrels, run, outcomes


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_equal_the_oracle_on_runs_without_ties(seed):
    qrels, run, outcomes = random_case(random.Random(seed))
    # ir_measures leaves out questions with no results; score them as 0 like we do by giving the
    # oracle an entry per question (an empty ranking counts 0 in every measure).
    measures = [RR, nDCG @ 10, *(Success @ k for k in CUTOFFS), *(R @ k for k in CUTOFFS)]
    oracle = ir_measures.calc_aggregate(measures, qrels, {q: r or {"none": 0.0} for q, r in run.items()})
    ours = summarise(outcomes)
    assert ours["mrr"] == pytest.approx(round(oracle[RR], 4), abs=1e-4)
    assert ours["ndcg_10"] == pytest.approx(round(oracle[nDCG @ 10], 4), abs=1e-4)
    for k in CUTOFFS:
        assert ours["found"][str(k)] == pytest.approx(oracle[Success @ k], abs=1e-4)
        assert ours["recall"][str(k)] == pytest.approx(oracle[R @ k], abs=1e-4)


def test_ndcg_by_hand_two_relevant_found_at_1_and_3():
    # DCG = 1/log2(2) + 1/log2(4) = 1 + 0.5; ideal for 2 relevant = 1 + 1/log2(3)
    summary = summarise([Outcome("q", (1, 3), 2)])
    assert summary["ndcg_10"] == round((1 + 0.5) / (1 + 1 / math.log2(3)), 4)
    assert summary["mrr"] == 1.0


def test_relevant_results_past_10_do_not_count_for_ndcg_but_do_for_mrr():
    summary = summarise([Outcome("q", (11,), 1)])
    assert summary["ndcg_10"] == 0.0
    assert summary["mrr"] == round(1 / 11, 4)
    assert summary["counts"] == {"1": 0, "3": 0, "5": 0, "10": 0, "20": 1}


def test_a_question_with_no_results_scores_zero_and_lands_nowhere():
    summary = summarise([Outcome("q", (), 3)])
    assert summary["mrr"] == 0 and summary["ndcg_10"] == 0
    assert summary["counts"]["20"] == 0
    assert summary["landed"]["not in top 20"] == 1


def test_empty_and_partial_inputs_never_fail():
    # Every combination of: no questions, no times, some found, none found.
    for outcomes in ([], [Outcome("a", (), 1)], [Outcome("a", (2,), 1), Outcome("b", (), 2)]):
        for times in ([], [5.0], [1.0, 2.0, 3.0]):
            summary = summarise(outcomes, times)
            assert summary["questions"] == len(outcomes)
            assert summary["timed"] == len(times)
            assert sum(summary["landed"].values()) == len(outcomes)
            assert (summary["median_ms"] is None) == (not times)


def test_counts_shares_and_landed_on_four_questions():
    outcomes = [Outcome("a", (1,), 1), Outcome("b", (2,), 1), Outcome("c", (7,), 1), Outcome("d", (), 1)]
    summary = summarise(outcomes, [10.0, 20.0, 30.0, 40.0])
    assert summary["counts"] == {"1": 1, "3": 2, "5": 2, "10": 3, "20": 3}
    assert summary["found"]["10"] == 3 / 4
    assert summary["mrr"] == round((1 + 1 / 2 + 1 / 7 + 0) / 4, 4)
    assert summary["landed"] == {"first": 1, "2-3": 1, "4-5": 0, "6-10": 1, "11-20": 0, "not in top 20": 1}
    assert summary["median_ms"] == 25.0  # (20 + 30) / 2
    assert summary["p95_ms"] == pytest.approx(30 + 0.85 * 10)  # rank 0.95 * 3 = 2.85, between 30 and 40


@pytest.mark.parametrize("first,bucket", [(1, "first"), (2, "2-3"), (3, "2-3"), (5, "4-5"), (6, "6-10"),
                                          (10, "6-10"), (11, "11-20"), (20, "11-20"), (21, "not in top 20"),
                                          (None, "not in top 20")])
def test_landed_buckets_edges(first, bucket):
    assert landed_bucket(first) == bucket


# -- several chunks of one document, ties, more than ten relevant -----------------------------------

PER_QUESTION = {"recip_rank", "ndcg_cut_10", *(f"success_{k}" for k in CUTOFFS), *(f"recall_{k}" for k in CUTOFFS)}
PYTREC_MEASURES = {"recip_rank", "ndcg_cut.10", "success." + ",".join(map(str, CUTOFFS)),
                   "recall." + ",".join(map(str, CUTOFFS))}


def chunk_results(rng, documents: int, pages: dict[str, int]) -> list[Hit]:
    """A target's result list: chunks of a few documents each (so a document comes back several times),
    scores drawn from three values (so they tie), in the order the target returned them."""
    hits = []
    for n in range(rng.randint(0, 40)):
        doc = f"d{rng.randrange(documents)}"
        page = rng.randint(1, pages[doc]) if doc in pages else None
        hits.append(Hit(id=f"{doc}:{n}", doc_id=doc, page=page, score=rng.choice([0.5, 0.7, 0.9])))
    return hits


def as_trec(question: Question, hits: list[Hit]) -> dict[str, float]:
    """The run trec_eval would need to see what the report sees: at each position, the expected unit
    first found there as its docno, any other result under its chunk id (not relevant); scores strictly
    decreasing in the order the results came back, so trec_eval keeps that order."""
    wanted = [(e, e.partition("#page=")) for e in question.expected]
    seen, run = set(), {}
    for position, hit in enumerate(hits, start=1):
        docno = hit.id
        for unit, (doc, _, page) in wanted:
            if unit not in seen and hit.doc_id == doc and (not page or hit.page == int(page)):
                seen.add(unit)
                docno = unit
                break
        run[docno] = float(1000 - position)
    return run


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_doc_grain_equals_pytrec_eval_with_several_chunks_per_document_ties_and_15_relevant(seed):
    rng = random.Random(seed)
    documents = 60
    pages = {f"d{n}": rng.randint(2, 6) for n in range(0, documents, 4)}  # every fourth document has pages
    questions, results = [], []
    for n in range(150):
        relevant = rng.sample(range(documents), 15 if n % 2 == 0 else rng.randint(1, 15))
        # a document with pages is expected as one of its pages (never as itself and a page: one
        # result would then hold two units, the case where we differ from trec_eval on purpose)
        expected = tuple(f"d{d}#page={rng.randint(1, pages[f'd{d}'])}" if f"d{d}" in pages else f"d{d}"
                         for d in relevant)
        questions.append(Question(id=f"q{n}", question="?", expected=expected))
        results.append(chunk_results(rng, documents, pages))
    outcomes = [judge(q, hits, "doc") for q, hits in zip(questions, results, strict=True)]
    assert any(len({h.doc_id for h in hits}) < len(hits) for hits in results)  # a document several times
    assert any(len({h.score for h in hits}) < len(hits) for hits in results)  # tied scores
    qrels = {q.id: {unit: 1 for unit in q.expected} for q in questions}
    run = {q.id: as_trec(q, hits) or {"none": 0.0} for q, hits in zip(questions, results, strict=True)}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    ours = summarise(outcomes)
    n = len(questions)
    assert ours["mrr"] == pytest.approx(round(sum(v["recip_rank"] for v in oracle.values()) / n, 4), abs=1e-4)
    assert ours["ndcg_10"] == pytest.approx(round(sum(v["ndcg_cut_10"] for v in oracle.values()) / n, 4), abs=1e-4)
    for k in CUTOFFS:
        assert ours["counts"][str(k)] == sum(v[f"success_{k}"] for v in oracle.values())
        assert ours["recall"][str(k)] == pytest.approx(round(sum(v[f"recall_{k}"] for v in oracle.values()) / n, 4),
                                                       abs=1e-4)
    from evaluation.scoring.metrics import outcome_arrays, score_matrix

    per_question = score_matrix(*outcome_arrays(outcomes))
    for i, question in enumerate(questions):  # and question by question, at full precision
        assert per_question["ndcg_10"][i] == pytest.approx(oracle[question.id]["ndcg_cut_10"], abs=1e-12)
        assert per_question["rr"][i] == pytest.approx(oracle[question.id]["recip_rank"], abs=1e-12)


# -- the ideal: what a perfect ranking scores ------------------------------------------------------

def perfect(outcome_positions, relevant):
    return summarise([Outcome("q", outcome_positions, relevant)])


def test_a_perfect_ranking_scores_one_when_one_result_holds_two_units():
    # evidence: two quotes in the chunk at position 1. The result counts once in the DCG, so the ideal
    # counts it once too: 1 / 1. (trec_eval's ideal would count two results: 1 / (1 + 1/log2(3)) = 0.613.)
    summary = perfect((1, 1), 2)
    assert summary["ndcg_10"] == 1.0 and summary["mrr"] == 1.0 and summary["recall"]["1"] == 1.0


def test_a_unit_not_found_still_needs_a_result_of_its_own_in_the_ideal():
    # two quotes at position 1, a third never found: needed = 1 + 1, DCG = 1, ideal = 1 + 1/log2(3)
    assert perfect((1, 1), 3)["ndcg_10"] == round(1 / (1 + 1 / math.log2(3)), 4)
    assert perfect((1, 1), 3)["recall"]["20"] == round(2 / 3, 4)


def test_units_found_together_lower_down_score_as_one_result_there():
    # two quotes in the chunk at position 3: DCG = 1/log2(4) = 0.5, ideal = 1 (one result needed)
    assert perfect((3, 3), 2)["ndcg_10"] == 0.5


def test_with_more_than_ten_units_the_ideal_is_ten_results():
    # 15 documents expected, found at 1..15: the top ten hold ten of them, as many as fit: nDCG 1
    summary = perfect(tuple(range(1, 16)), 15)
    assert summary["ndcg_10"] == 1.0
    assert summary["recall"]["10"] == round(10 / 15, 4) and summary["recall"]["20"] == 1.0


@pytest.mark.parametrize("by", ["doc", "chunk", "evidence"])
def test_a_perfect_ranking_scores_one_at_every_grain(by):
    """Random questions and a ranking that puts, for each, results holding every unit on top."""
    rng = random.Random(5)
    outcomes = []
    for n in range(200):
        docs = [f"d{d}" for d in rng.sample(range(30), rng.randint(1, 14))]
        if by == "chunk":
            expected = tuple(f"{d}:{rng.randint(0, 3)}" for d in docs)
            hits = [Hit(id=e, doc_id=e.split(":")[0], page=None, score=1.0) for e in expected]
            question = Question(id=f"q{n}", question="?", expected=expected)
        elif by == "doc":
            # a document and one of its pages both expected: a chunk of that page is the page, and
            # a chunk of another page the document, so a perfect ranking holds both
            docs = docs[:10]  # at most 20 results, so recall@20 can reach 1
            paged = docs[: rng.randint(0, len(docs))]
            expected = tuple(docs) + tuple(f"{d}#page=2" for d in paged)
            hits = [Hit(id=f"{d}:0", doc_id=d, page=3, score=1.0) for d in docs]
            hits += [Hit(id=f"{d}:1", doc_id=d, page=2, score=1.0) for d in paged]
            question = Question(id=f"q{n}", question="?", expected=expected)
        else:
            # quotes spread over chunks, several in one chunk
            quotes = [f"quote number {n} {q} here" for q in range(rng.randint(1, 12))]
            cuts = sorted(rng.sample(range(1, len(quotes)), rng.randint(0, len(quotes) - 1))) if len(quotes) > 1 else []
            groups = [quotes[a:b] for a, b in zip([0, *cuts], [*cuts, len(quotes)], strict=True)]
            hits = [Hit(id=f"c{i}", doc_id=f"d{i}", page=None, score=1.0, text=" ... ".join(g))
                    for i, g in enumerate(groups)]
            question = Question(id=f"q{n}", question="?", expected=("d0",), evidence=tuple(quotes))
        rng.shuffle(hits)
        hits += [Hit(id="other:0", doc_id="other", page=None, score=0.0, text="nothing")]
        outcomes.append(judge(question, hits, by))
    summary = summarise(outcomes)
    assert summary["found"]["1"] == 1.0 and summary["mrr"] == 1.0 and summary["ndcg_10"] == 1.0
    assert summary["recall"]["20"] == 1.0


@pytest.mark.parametrize("seed", [0, 1])
def test_evidence_grain_equals_pytrec_eval_where_each_chunk_holds_at_most_one_quote(seed):
    rng = random.Random(seed)
    qrels, run, outcomes = {}, {}, []
    for n in range(120):
        quotes = [f"quote {n} number {q} here" for q in range(rng.randint(1, 15))]
        hits, docnos = [], {}
        for position in range(1, rng.randint(0, 30) + 1):
            held = rng.choice([None, *quotes])  # a chunk holds one quote, or none; repeats are allowed
            hits.append(Hit(id=f"c{position}", doc_id="d", page=None, score=1.0, text=f"text {held or 'nothing'} text"))
            unit = held if held and held not in docnos.values() else f"c{position}"
            docnos[position] = unit
        question = Question(id=f"q{n}", question="?", expected=("d",), evidence=tuple(quotes))
        outcomes.append(judge(question, hits, "evidence"))
        qrels[question.id] = {q: 1 for q in quotes}
        run[question.id] = {unit: float(1000 - p) for p, unit in docnos.items()} or {"none": 0.0}
    oracle = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    ours, n = summarise(outcomes), len(outcomes)
    assert ours["mrr"] == pytest.approx(round(sum(v["recip_rank"] for v in oracle.values()) / n, 4), abs=1e-4)
    assert ours["ndcg_10"] == pytest.approx(round(sum(v["ndcg_cut_10"] for v in oracle.values()) / n, 4), abs=1e-4)
    for k in CUTOFFS:
        assert ours["counts"][str(k)] == sum(v[f"success_{k}"] for v in oracle.values())
        assert ours["recall"][str(k)] == pytest.approx(round(sum(v[f"recall_{k}"] for v in oracle.values()) / n, 4),
                                                       abs=1e-4)


def test_judged_and_holes_at_10_are_means_over_the_questions_that_counted_them():
    # at the evidence grain a question with quotes is judged by them: no judged@10 and no holes (quotes are
    # not units anyone labels); one without quotes falls back to its documents and counts both. The means
    # are over the one that counted: 2 holes, not 2 holes over 2 questions
    with_quotes = Question(id="e", question="?", expected=("a.md",), evidence=("signing keys are rotated",))
    without = Question(id="d", question="?", expected=("a.md",))
    hits = [Hit("x.md:0", "x.md", None, 1.0, text="Lunch at noon."), Hit("y.md:0", "y.md", None, 0.9, text="Soup."),
            Hit("a.md:0", "a.md", None, 0.8, text="Signing keys are rotated yearly.")]
    outcomes = [judge(with_quotes, hits, "evidence"), judge(without, hits, "evidence")]
    assert outcomes[0].holes is None and outcomes[1].holes == ("x.md", "y.md")
    summary = summarise(outcomes)
    assert summary["holes_10"] == 2 / 1
    assert summary["judged_10"] == round((1 / 3) / 1, 4)  # a.md of the three positions, over the one question
    assert summarise(outcomes[:1])["holes_10"] is None  # nothing counted: no number, not 0

"""answer_cutoff: the cut-off on the top result's score, its separation, and refusal with too few examples."""
from __future__ import annotations

import json
import re

import pytest

from evaluation.answers.cutoff import answer_cutoff, find_cutoff, read_unanswerable
from evaluation.errors import UsageError
from evaluation.golden import Question
from evaluation.target import Hit, Setup

from conftest import SAMPLES, run_cli


def test_fewer_than_five_answers_or_near_misses_gives_no_cut_off_and_says_what_to_add():
    found = find_cutoff("s", answers=[0.9, 0.8, 0.7, 0.6], near_misses=[0.1, 0.2, 0.3, 0.4, 0.5, 0.55])
    assert found.cutoff is None and found.trades == () and found.separation is None
    assert found.reason == ("only 4 answers (top results that were the answer); at least 5 of each are needed: add "
                            "questions, or unanswerable ones (questions the collection cannot answer) for near misses")
    both = find_cutoff("s", answers=[0.9] * 2, near_misses=[0.1])
    assert (
        "only 2 answers (top results that were the answer) and 1 near miss (top results that were not)" in both.reason
    )
    assert find_cutoff("s", answers=[0.9] * 5, near_misses=[0.1] * 5).cutoff is not None  # five of each: enough


def test_a_separable_case_is_cut_halfway_between_the_lowest_answer_and_the_highest_near_miss():
    found = find_cutoff("s", answers=[0.9, 0.7, 0.95, 0.8, 0.85], near_misses=[0.3, 0.1, 0.5, 0.2, 0.4])
    assert found.cutoff == pytest.approx((0.5 + 0.7) / 2)
    assert found.separation == 1.0  # every answer outscores every near miss: 25 of 25 pairs
    best = found.best
    assert (best.answers_kept, best.near_misses_declined, best.balance) == (5, 5, 2.0)
    assert found.worth_acting_on and found.advice.startswith("Separation 1.00: Decline to answer when the top result "
                                                             "of s scores under 0.6")
    # candidates: the 9 midpoints between the 10 distinct scores
    assert [round(t.cutoff, 3) for t in found.trades] == [0.15, 0.25, 0.35, 0.45, 0.6, 0.75, 0.825, 0.875, 0.925]


def test_an_overlapping_case_says_the_cut_off_is_not_worth_acting_on_and_breaks_ties_to_the_lowest():
    answers, near = [0.3, 0.6, 0.7, 0.8, 0.9], [0.1, 0.2, 0.4, 0.65, 0.95]
    found = find_cutoff("s", answers, near)
    # pairs an answer wins: 0.3 beats 2, 0.6 beats 3, 0.7, 0.8 and 0.9 beat 4 each: (2 + 3 + 4 + 4 + 4) / 25
    assert found.separation == pytest.approx(17 / 25)
    # 5/5 + 2/5 at 0.25, 4/5 + 3/5 at 0.5 and 3/5 + 4/5 at 0.675 all make 7/5: the lowest keeps the most answers
    assert [t.cutoff for t in found.trades if t.answers_kept + t.near_misses_declined == 7] == \
        pytest.approx([0.25, 0.5, 0.675])
    assert found.cutoff == pytest.approx(0.25)
    assert not found.worth_acting_on
    assert found.advice.startswith("Separation 0.68: an answer outscores a near miss only 68% of the time (0.5 is a "
                                   "coin), under 0.75, so a cut-off is not worth acting on")


def test_equal_balances_are_compared_exactly_not_as_floats():
    found = find_cutoff("s", [0.8, 1.4, 1.9, 1.9, 2.9], [0.1, 1.1, 2.2, 3.0, 3.0])
    # at 0.45: 5 kept + 1 declined; at 1.25: 4 kept + 2 declined. Both 6/5, though in floats
    # 5/5 + 1/5 = 1.2 and 4/5 + 2/5 = 1.2000000000000002: the tie goes to the lower cut-off
    assert [(t.answers_kept, t.near_misses_declined) for t in found.trades][:3] == [(5, 1), (4, 1), (4, 2)]
    assert [t.cutoff for t in found.trades][:3] == pytest.approx([0.45, 0.95, 1.25])
    assert found.cutoff == pytest.approx(0.45)


def test_equal_scores_count_a_half_and_one_score_everywhere_cannot_be_cut():
    found = find_cutoff("s", [0.5] * 5, [0.5] * 5)
    assert found.separation == 0.5 and found.cutoff is None
    assert found.reason == "every top result has the same score, so no cut-off can separate them"
    assert find_cutoff("s", [0.5, 0.6, 0.6, 0.7, 0.8], [0.1, 0.6, 0.2, 0.3, 0.4]).separation == \
        pytest.approx((4 + 4.5 + 4.5 + 5 + 5) / 25)  # 0.6 ties the near miss at 0.6: a half each


class ScoredTarget:
    """One setup whose top result for each question is given: (document, score)."""

    name = "t"

    def __init__(self, tops):
        self.tops = tops

    def setups(self):
        return [Setup("t", "test", "keyword"), Setup("t", "test", "dense", ("m",))]

    def search_batch(self, setup, questions, depth):
        return [[Hit(f"{d}:0", d, None, s)] if (d, s) != (None, None) else [] for d, s in map(self.tops.get, questions)]


def test_answer_cutoff_judges_each_top_result_and_counts_unanswerable_questions_as_near_misses():
    questions = [Question(id=f"a{i}", question=f"answered {i}", expected=(f"d{i}",)) for i in range(6)]
    questions += [Question(id="wrong", question="wrong top", expected=("d0",)),
                  Question(id="nothing", question="no result", expected=("d0",))]
    tops = {f"answered {i}": (f"d{i}", 0.8 + i / 100) for i in range(6)}
    # an unanswerable question's top result is a near miss even on a document a golden question expects
    tops |= {"wrong top": ("d5", 0.45), "no result": (None, None), **{f"off {i}": ("d0", 0.1 * i) for i in range(4)}}
    found = answer_cutoff(ScoredTarget(tops), questions, [f"off {i}" for i in range(4)], setup="t.dense.m")
    assert found.setup == "t.dense.m" and found.no_result == 1
    assert found.answers == pytest.approx((0.8, 0.81, 0.82, 0.83, 0.84, 0.85))
    assert found.near_misses == pytest.approx((0.0, 0.1, 0.2, 0.3, 0.45))  # 4 unanswerable + 1 wrong top
    assert found.cutoff == pytest.approx((0.45 + 0.8) / 2) and found.separation == 1.0


def test_answer_cutoff_takes_questions_written_without_ids_as_vectrixdbs_guide_writes_them():
    questions = [Question(f"answered {i}", [f"d{i}"]) for i in range(5)]
    tops = {f"answered {i}": (f"d{i}", 0.8) for i in range(5)} | {f"off {i}": ("d0", 0.1 * i) for i in range(5)}
    found = answer_cutoff(ScoredTarget(tops), questions, [f"off {i}" for i in range(5)], setup="t.dense.m")
    assert found.answers == pytest.approx((0.8,) * 5) and found.cutoff == pytest.approx((0.4 + 0.8) / 2)


def test_answer_cutoff_refuses_under_five_near_misses_and_a_setup_it_does_not_have():
    questions = [Question(id=f"a{i}", question=f"answered {i}", expected=(f"d{i}",)) for i in range(6)]
    target = ScoredTarget({f"answered {i}": (f"d{i}", 0.9) for i in range(6)} | {"off": ("d1", 0.2)})
    found = answer_cutoff(target, questions, ["off"])
    assert found.setup == "t.dense.m"  # the default prefers a dense score to BM25's
    assert found.cutoff is None and found.reason.startswith("only 1 near miss (top results that were not)")
    with pytest.raises(UsageError, match='"t.dense.n" is not a setup of t. Did you mean "t.dense.m"?'):
        answer_cutoff(target, questions, setup="t.dense.n")


def test_unanswerable_questions_are_read_one_a_line_or_from_json_rows(tmp_path):
    path = tmp_path / "off.txt"
    path.write_text('What is the capital of Mars?\n\n{"question": "Who won in 1066?"}\n', encoding="utf-8")
    assert read_unanswerable(path) == ["What is the capital of Mars?", "Who won in 1066?"]
    path.write_text('{"questoin": "x"}\n', encoding="utf-8")
    with pytest.raises(UsageError, match='line 1: a JSON row needs "question" as text'):
        read_unanswerable(path)


UNANSWERABLE = ["What is the boiling point of liquid nitrogen?", "Who painted the Sistine Chapel ceiling?",
                "How many moons does Jupiter have?", "What is the best sourdough hydration?",
                "When did the Roman Empire fall?", "Which river is the longest in Africa?"]


def test_golden_cutoff_on_the_shipped_sample_prints_the_cut_off_and_its_trade_offs(sample_index, tmp_path, capsys):
    off = tmp_path / "unanswerable.txt"
    off.write_text("\n".join(UNANSWERABLE) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "golden", "cutoff", str(SAMPLES / "golden.jsonl"), "--index", str(sample_index),
                             "--unanswerable", str(off), "--setup", "local.dense.bge-small", "--json", "--quiet")
    assert code == 0, err
    found = json.loads(out)
    assert found["answers"] + found["near_misses"] == 36 + 6 and found["near_misses"] >= 6
    assert found["cutoff"] is not None and 0.5 < found["separation"] <= 1
    assert found["trades"] and found["advice"].startswith(f"Separation {found['separation']:.2f}")


class RerankedTarget(ScoredTarget):
    """ScoredTarget with a reranked hybrid whose hits carry a reranker score, and cosines it can give."""

    def setups(self):
        return super().setups() + [Setup("t", "test", "hybrid", ("m",), "cross-encoder"),
                                   Setup("t", "test", "hybrid", ("m", "n"), "cross-encoder"),
                                   Setup("t", "test", "hybrid", ("m",))]

    def search_batch(self, setup, questions, depth):
        found = super().search_batch(setup, questions, depth)
        return [[Hit(h.id, h.doc_id, h.page, 0.016, reranker_score=h.score * 10) for h in hits] for hits in found]

    def similarities(self, model, questions, chunk_ids):
        self.asked = getattr(self, "asked", []) + [model]
        return [self.tops[q][1] + (0.02 if model == "n" else 0) for q in questions]


def separable(target_class):
    questions = [Question(id=f"a{i}", question=f"answered {i}", expected=(f"d{i}",)) for i in range(5)]
    tops = {f"answered {i}": (f"d{i}", 0.8 + i / 100) for i in range(5)} | {
        f"off {i}": ("d0", 0.1 * i) for i in range(5)
    }
    return target_class(tops), questions, [f"off {i}" for i in range(5)]


def test_measure_relevance_reads_the_rerankers_score_and_similarity_the_mean_cosine_of_the_setups_models():
    target, questions, off = separable(RerankedTarget)
    relevance = answer_cutoff(target, questions, off, mode="hybrid", rerank=True, vectors="m", measure="relevance")
    assert relevance.setup == "t.hybrid_reranked.m" and relevance.measure == "relevance"
    assert relevance.cutoff == pytest.approx((0.4 * 10 + 0.8 * 10) / 2)  # the reranker's scale, not 0.016
    similarity = answer_cutoff(target, questions, off, mode="hybrid", rerank=True)  # vectors left out: the most
    assert similarity.setup == "t.hybrid_reranked.m+n" and target.asked == ["m", "n"]
    assert similarity.cutoff == pytest.approx(((0.4 + 0.42) / 2 + (0.8 + 0.82) / 2) / 2)  # means of m and m + 0.02
    assert "has a similarity under" in similarity.advice


def test_the_reply_reads_as_theirs_does_with_table_and_at_cutoff():
    target, questions, off = separable(ScoredTarget)
    found = answer_cutoff(target, questions, unanswerable=off, setup="t.dense.m")
    assert found["cutoff"] == found.cutoff == pytest.approx((0.4 + 0.8) / 2)
    assert found["at_cutoff"] == found.at_cutoff == {"cutoff": found.cutoff, "answers_kept": 5,
                                                     "near_misses_declined": 5, "kept": 1.0, "declined": 1.0,
                                                     "balance": 2.0}
    assert [row["cutoff"] for row in found["table"]] == [t.cutoff for t in found.trades] and len(found.table) == 9
    with pytest.raises(KeyError, match="'cut' is not in a cut-off's result"):
        found["cut"]


def test_similarity_on_a_target_that_cannot_give_it_says_to_measure_relevance():
    target, questions, off = separable(ScoredTarget)
    with pytest.raises(UsageError,
                       match='cannot give the similarity of what t.keyword.bm25 finds; use measure="relevance"'):
        answer_cutoff(target, questions, off, mode="keyword")
    assert answer_cutoff(target, questions, off, mode="keyword", measure="relevance").cutoff is not None


@pytest.mark.parametrize("search, says", [
    ({"mode": "hybrid", "rerank": "semantic"}, "t has no setup that searches with mode='hybrid', rerank='semantic'"),
    ({"mode": "dense", "vectors": "x"}, "t has no setup that searches with mode='dense', vectors='x'"),
    ({"moed": "dense"}, '"moed" is not a search keyword here. Did you mean "mode"?'),
    ({"mode": "hybrid", "rerank": "maybe"}, "rerank='maybe' is not a reranker"),
    ({"measure": "cosine"}, "measure='cosine' is not one of similarity, relevance"),
])
def test_search_keywords_that_name_no_setup_are_sentences(search, says):
    target, questions, off = separable(RerankedTarget)
    with pytest.raises(UsageError, match=re.escape(says)):
        answer_cutoff(target, questions, off, **search)


def test_on_the_embedded_engine_a_chunks_similarity_is_the_cosine_its_dense_setup_scores(sample_index):
    from evaluation.engine.target import EmbeddedTarget

    target = EmbeddedTarget(sample_index, cache=False, cross_encoder=False)
    dense = next(s for s in target.setups() if s.key == "local.dense.bge-small")
    texts = ["How do I rotate a key?", "Which regions are supported?"]
    tops = [hits[0] for hits in target.search_batch(dense, texts, 5)]
    assert target.similarities("bge-small", texts, [t.id for t in tops]) == pytest.approx([t.score for t in tops],
                                                                                         abs=1e-5)

"""A setup's results judged into the per-question maps an entry keeps (``run.judged``): from the hits a
search gave, or from the rows an earlier report kept of them (``run.reuse``), alike."""
from __future__ import annotations

import json

import pytest

from evaluation.golden import Question
from evaluation.run.judged import judged, judged_rows, row_again
from evaluation.target import Hit

QUESTIONS = [Question(id="q1", question="?", expected=("a.md",)),
             Question(id="q2", question="?", expected=("r.pdf#page=2", "b.md")),
             Question(id="q3", question="?", expected=("gone.md",))]
HITS = [[Hit("b.md:0", "b.md", None, 0.5), Hit("a.md:1", "a.md", None, 1 / 3)],
        [Hit("r.pdf:3", "r.pdf", 2, 12.0, reranker_score=2.123456789), Hit("b.md:2", "b.md", None, 7)],
        []]


@pytest.mark.parametrize("by", ["doc", "chunk"])
def test_rows_read_back_from_a_report_judge_into_the_maps_their_hits_give(by):
    kept = json.loads(json.dumps(judged(QUESTIONS, HITS, by)["results"]))  # as a report holds them

    again = judged_rows(QUESTIONS, [kept[q.id] for q in QUESTIONS], by)

    assert again == judged(QUESTIONS, HITS, by)
    assert json.dumps(again) == json.dumps(judged(QUESTIONS, HITS, by))  # the same bytes: 12.0 stays a float


def test_a_row_is_written_again_as_its_hit_would_write_it():
    assert row_again(["c", "d", None, 1]) == Hit("c", "d", None, 1).to_row() == ["c", "d", None, 1.0]
    assert isinstance(row_again(["c", "d", None, 1])[3], float)
    assert row_again(["c", "d", 4, 0.12345678, None]) == ["c", "d", 4, 0.123457]  # no reranker score: no fifth
    assert row_again(["c", "d", 4, 0.5, 3.14159265]) == Hit("c", "d", 4, 0.5, reranker_score=3.14159265).to_row()


def test_as_many_result_lists_as_questions_or_nothing_is_judged():
    with pytest.raises(RuntimeError, match="2 result lists for 3 questions"):
        judged_rows(QUESTIONS, [[], []], "doc")

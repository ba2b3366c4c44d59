"""Holes judged: the results nobody labelled, graded by a chat model the team brings, after the model is
measured against the team's own labels; its grades kept apart from the people's and every number they
touch marked ``+judged``.

- ``judge_holes`` (judging.py): the steps, from a finished report to its ``judged`` block, in one process;
  ``steps.py`` the same steps as plain JSON for the Function App's activities; ``with_judged`` puts the
  block in a copy of the report; ``HoleSettings`` (settings.py) how it judges;
- ``HoleGrader`` (grader.py): the chat model asked for grades, over the library's one chat route;
- ``agreement.py``: Cohen's kappa (plain, weighted) with its interval, Kendall's tau-b;
- ``calibration.py``: the labels set aside, the bias check; ``filled.py``: the numbers on human + judged
  labels; ``family.py``: a judge of a model family under test; ``prices.py``: tokens, prices, the cap;
  ``texts.py``: the text of a unit, from the corpus or the index;
- ``accept.py``: judged grades a person accepts, written into a new golden file for review.

The names load on first use, so importing the package loads no HTTP client.
"""
from __future__ import annotations

from ..lazy import lazy_attributes

_PUBLIC = {
    "judge_holes": ".judging", "with_judged": ".steps", "HoleSettings": ".settings", "JUDGED_MARK": ".steps",
    "HoleJudge": ".judging", "texts_of_targets": ".judging",
    "HoleGrader": ".grader", "Scale": ".grader",
    "kappa": ".agreement", "kendall_tau_b": ".agreement", "confusion": ".agreement",
    "read_prices": ".prices", "PriceTable": ".prices", "CostMeter": ".prices",
    "index_texts": ".texts", "corpus_texts": ".texts", "accepted_questions": ".accept",
}
__all__ = sorted(_PUBLIC)
__getattr__ = lazy_attributes(__name__, _PUBLIC)

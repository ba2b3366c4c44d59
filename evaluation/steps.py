"""One run as three steps, each taking and giving plain JSON data, so a local run and a Durable run
go through the same code:

1. ``plan_run``: read the golden file, choose the setups, sample the timed questions, look up the
   expected documents on every target. The plan is everything the other two steps need.
2. ``run_setup``: one setup's searches on one target (a Durable activity each), as the report's entry.
3. ``assemble_report``: rank the entries, name the picks, the frontier and each setup's neighbours,
   compare every setup with the top on the same questions (``versus_top``) and say which faster
   setups are tied with each pick within noise (``ties``; see ``scoring.comparison``).

``evaluate`` is the three in a loop. A setup's key (``<target>.<method>.<models>``) is how a plan names
a setup, so an activity given a key finds the setup again on the target it opens.
"""
from __future__ import annotations

import copy
import fnmatch
import hashlib
import logging
import random
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .answers.stale import stale_warnings
from .errors import GoldenFileError, UsageError, did_you_mean
from .golden import Golden, Question, read_golden
from .scoring.comparison import SignificanceSettings, compare_with_top, pick_ties
from .scoring.judging import GRAINS, judge
from .scoring.metrics import outcome_arrays, score_matrix, summarise
from .scoring.picks import choose_picks, frontier, neighbours, rank_setups
from .store.runs import REPORT_FORMAT, new_run_id
from .target import COUNTERS, Counted, Setup, Target

log = logging.getLogger(__name__)

PLAN_FORMAT = 1
DEFAULT_TIMED = 50
Progress = Callable[[int, int, str], None]  # (done, total, what is running)
Clock = Callable[[], float]  # seconds, monotonic; time.perf_counter unless a test fixes it


@dataclass(frozen=True)
class EvaluationSettings:
    balance: float = 4
    time_points: float = 8
    by: str = "doc"
    depth: int = 20
    timed: int = DEFAULT_TIMED  # questions timed one by one per setup (a seeded sample when more)
    seed: int = 0  # the timed sample's and the significance tests' resampling
    alpha: float = 0.05  # a difference with a Holm-adjusted p-value at or under this is significant
    resamples: int = 10_000  # bootstrap resamples and random sign flips per comparison

    def __post_init__(self) -> None:
        if self.by not in GRAINS:
            raise UsageError(f'"{self.by}" is not a grain; use one of {", ".join(GRAINS)}.{did_you_mean(self.by, GRAINS)}')
        if self.depth < 20:
            raise UsageError(f"depth {self.depth} is too shallow: found@20 needs at least 20 results")
        if self.timed < 0 or self.balance < 0 or self.time_points < 0:
            raise UsageError("timed questions, balance and time points must be zero or more")
        self.significance  # checks alpha and resamples

    @property
    def significance(self) -> SignificanceSettings:
        return SignificanceSettings(alpha=self.alpha, resamples=self.resamples, seed=self.seed)


# -- step 1: the plan ---------------------------------------------------------------------------------

def plan_run(targets: Target | Sequence[Target], golden: Golden | str | Path, *,
             only: Iterable[str] | None = None, skip: Iterable[str] = (), balance: float = 4,
             time_points: float = 8, by: str = "doc", depth: int = 20, timed: int = DEFAULT_TIMED,
             seed: int = 0, created_at: datetime | str | None = None, run_id: str | None = None,
             warn: Callable[[str], None] | None = None, alpha: float = 0.05,
             resamples: int = 10_000) -> dict[str, Any]:
    """Everything a run needs before its first search, as plain JSON data (see the module docstring).

    Raises ``GoldenFileError`` when no question is labelled and ``UsageError`` for settings or setup
    patterns that do not fit. Expected documents a target does not hold are warned and kept under
    ``missing``; their questions stay in. At ``by="evidence"``, evidence quotes that no chunk of their
    expected documents holds are warned about too (on targets that can give their chunk texts).
    """
    settings = EvaluationSettings(balance=balance, time_points=time_points, by=by, depth=depth,
                                  timed=timed, seed=seed, alpha=alpha, resamples=resamples)
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
    if settings.by == "evidence":  # a quote no chunk holds would score 0 without a word
        for target in targets:
            for sentence in stale_warnings(target, golden.source, questions):
                warn(sentence)
    chosen = select_setups(targets, only=only, skip=skip)
    moment = _utc(created_at)
    return {
        "format": PLAN_FORMAT,
        "run_id": run_id or new_run_id(moment),
        "created_at": moment.isoformat().replace("+00:00", "Z"),
        "settings": asdict(settings),
        "golden": {"source": golden.source, "sha256": golden.sha256, "format": golden.format,
                   "questions": len(golden.questions), "labelled": len(questions),
                   "unfilled": len(golden.unfilled), "drafts": len(golden.drafts),
                   "problems": [{"line": p.line, "message": p.message} for p in golden.problems]},
        "questions": [_question_row(q) for q in questions],
        "timed_question_ids": [q.id for q in _timed_sample(questions, settings)],
        "setups": [setup.to_dict() for _, setup in chosen],
        "targets": {t.name: t.describe() for t in targets},
        "missing": missing,
    }


def _utc(moment: datetime | str | None) -> datetime:
    if moment is None:
        return datetime.now(timezone.utc)
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _question_row(question: Question) -> dict[str, Any]:
    return {"id": question.id, "question": question.question, "expected": list(question.expected),
            "evidence": list(question.evidence)}


def _plan_questions(plan: dict[str, Any]) -> list[Question]:
    return [Question(id=row["id"], question=row["question"], expected=tuple(row["expected"]),
                     evidence=tuple(row.get("evidence") or ())) for row in plan["questions"]]


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
    (``hybrid`` also selects ``hybrid_reranked``)."""
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


# -- step 2: one setup --------------------------------------------------------------------------------

def setup_steps(plan: dict[str, Any]) -> int:
    """How many progress steps one setup's run reports: warm-up, the batch's questions, the timed ones."""
    return 1 + len(plan["questions"]) + len(plan["timed_question_ids"])


def planned_setup(plan: dict[str, Any], setup_key: str) -> dict[str, Any]:
    """The plan's description of ``setup_key``; a ``UsageError`` naming the closest key otherwise."""
    for described in plan["setups"]:
        if described["key"] == setup_key:
            return described
    keys = [s["key"] for s in plan["setups"]]
    raise UsageError(f'"{setup_key}" is not a setup of this plan.{did_you_mean(setup_key, keys)}')


def failed_entry(plan: dict[str, Any], setup_key: str, error: str, *,
                 counts: dict[str, int] | None = None) -> dict[str, Any]:
    """The report entry of a setup that could not run: its error, no rank, never picked. ``counts``
    (requests, retries) are kept when the target counted them."""
    return {**copy.deepcopy(planned_setup(plan, setup_key)), "ranks": {}, "ndcg_10": {}, "results": {},
            "times_ms": [], "error": error, "summary": None, "rank": None, "neighbours": [], "versus_top": None,
            **(counts or {})}


def _counters(target: Target, setup_key: str) -> dict[str, int] | None:
    """The target's running counts for the setup, when it keeps any (see ``target.Counted``)."""
    if not isinstance(target, Counted):
        return None
    given = target.counters(setup_key)
    return {name: int(given.get(name, 0)) for name in COUNTERS}


def _counted_since(target: Target, setup_key: str, before: dict[str, int] | None) -> dict[str, int] | None:
    after = _counters(target, setup_key)
    if before is None or after is None:
        return None
    return {name: after[name] - before[name] for name in COUNTERS}


def run_setup(target: Target, plan: dict[str, Any], setup_key: str, *, progress: Progress | None = None,
              clock: Clock = time.perf_counter) -> dict[str, Any]:
    """One setup's run, as the report's entry. Failures become ``error``, never exceptions.

    One untimed warm-up search, every question in one batch (the ranks), then the plan's timed
    questions one at a time as a caller would (the times, retries after throttling included).
    ``progress`` gets (done, total, key). Per question the entry keeps ``ranks`` (position of the first
    relevant result, None when none), ``ndcg_10`` (the question's nDCG@10, which paired comparisons
    need) and ``results``. A target that counts its requests (``target.Counted``) has this setup's
    ``requests`` and ``retries`` put in the entry.
    """
    planned_setup(plan, setup_key)
    settings = EvaluationSettings(**plan["settings"])
    questions = _plan_questions(plan)
    timed_ids = set(plan["timed_question_ids"])
    timed_questions = [q for q in questions if q.id in timed_ids]
    total, done = setup_steps(plan), 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total, setup_key)

    before = None
    try:
        before = _counters(target, setup_key)
        setup = next((s for s in target.setups() if s.key == setup_key), None)
        if setup is None:
            raise LookupError(f"target {target.name} offers no setup {setup_key} any more")
        target.search(setup, questions[0].question, settings.depth)  # warm-up, untimed
        advance(1)
        batches = target.search_batch(setup, [q.question for q in questions], settings.depth)
        if len(batches) != len(questions):  # a silent zip would score the wrong results
            raise RuntimeError(f"the batch search gave {len(batches)} result lists for {len(questions)} questions")
        advance(len(questions))
        times = []
        for question in timed_questions:
            started = clock()
            target.search(setup, question.question, settings.depth)
            times.append(round((clock() - started) * 1000, 3))
            advance(1)
    except Exception as err:  # noqa: BLE001 - any failure of one setup is that setup's result
        log.warning("setup %s failed: %s", setup_key, err)
        advance(total - done)  # the bar still reaches the end
        return failed_entry(plan, setup_key, f"{type(err).__name__}: {err}",
                            counts=_safe_counted_since(target, setup_key, before))
    entry = {**setup.to_dict(), "ranks": {}, "ndcg_10": {}, "results": {}, "times_ms": times, "error": None,
             "summary": None, "rank": None, "neighbours": [], "versus_top": None,
             **(_counted_since(target, setup_key, before) or {})}
    outcomes = []
    for question, hits in zip(questions, batches):
        outcome = judge(question, hits, settings.by)
        outcomes.append(outcome)
        entry["ranks"][question.id] = outcome.first
        entry["results"][question.id] = [hit.to_row() for hit in hits]
    ndcg = score_matrix(*outcome_arrays(outcomes))["ndcg_10"]
    entry["ndcg_10"] = {q.id: round(float(value), 6) for q, value in zip(questions, ndcg)}
    entry["summary"] = summarise(outcomes, times)
    return entry


def _safe_counted_since(target: Target, setup_key: str, before: dict[str, int] | None) -> dict[str, int] | None:
    try:
        return _counted_since(target, setup_key, before)
    except Exception:  # noqa: BLE001 - the setup's own error is the one to report
        return None


# -- step 3: the report -------------------------------------------------------------------------------

def assemble_report(plan: dict[str, Any], entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The report from the plan and one entry per planned setup (any order; the inputs are not changed).

    A planned setup with no entry is an error: the caller turns a step that never finished into
    ``failed_entry`` so the report says why.
    """
    planned = [s["key"] for s in plan["setups"]]
    given = [e["key"] for e in entries]
    if sorted(given) != sorted(planned):
        extra, absent = sorted(set(given) - set(planned)), sorted(set(planned) - set(given))
        twice = sorted({k for k in given if given.count(k) > 1})
        raise UsageError(f"the entries do not match the plan: not planned {extra}, missing {absent}, "
                         f"given twice {twice}")
    settings = plan["settings"]
    results = [copy.deepcopy(e) for e in entries]
    ranked = rank_setups(results)
    for result in results:
        result["neighbours"] = neighbours(result, results)
        result["versus_top"] = None
    questions = plan["questions"]
    question_ids = [q["id"] for q in questions]
    significance = EvaluationSettings(**settings).significance  # plans made before alpha get the defaults
    picks = choose_picks(ranked, balance=settings["balance"], time_points=settings["time_points"])
    compare_with_top(ranked, question_ids, significance)
    return {
        "format": REPORT_FORMAT,
        "id": plan["run_id"],
        "created_at": plan["created_at"],
        "golden": copy.deepcopy(plan["golden"]),
        "collections": sorted({d["collection"] for d in plan["targets"].values()}),
        "depth": settings["depth"],
        "by": settings["by"],
        "question_ids": question_ids,
        # the question's text stays out of a report: its sha256 lets two runs find the questions they share
        "questions": [{"id": q["id"], "expected": list(q["expected"]), "sha256": question_sha256(q["question"])}
                      for q in questions],
        "timed_question_ids": list(plan["timed_question_ids"]),
        "rules": {"balance_points": settings["balance"], "time_points": settings["time_points"],
                  "rank_by": ["found@10", "found@1", "median_ms", "key"], "timed": settings["timed"],
                  "seed": settings["seed"]},
        "targets": copy.deepcopy(plan["targets"]),
        "missing": copy.deepcopy(plan["missing"]),
        "picks": picks,
        "significance": significance.describe(),
        "ties": pick_ties(picks, ranked, question_ids, significance),
        "frontier": frontier(ranked),
        "setups": sorted(results, key=lambda s: (s["rank"] is None, s["rank"] or 0, s["key"])),
    }


def question_sha256(text: str) -> str:
    """The hex sha256 of a question's text in UTF-8 (a lone surrogate read from an escape kept as is)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

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
import inspect
import logging
import math
import random
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from difflib import get_close_matches
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .answers.stale import stale_warnings
from .errors import GoldenFileError, UsageError, did_you_mean
from .golden import Golden, GoldenCheck, Question, explain_problems, question_sha256, read_golden, run_problems
from .scoring.comparison import SignificanceSettings, compare_with_top, pick_ties
from .report.notes import missing_note
from .scoring.judging import GRAINS, judge
from .scoring.metrics import Outcome, median_margin, outcome_arrays, score_matrix, summarise
from .scoring.picks import choose_picks, frontier, neighbours, rank_setups
from .store.runs import REPORT_FORMAT, new_run_id
from .target import COUNTERS, Counted, Hit, Setup, Target

log = logging.getLogger(__name__)

PLAN_FORMAT = 1
DEFAULT_TIMED = 50
DEFAULT_TIME_MARGIN = 0.10
DEFAULT_TIME_FLOOR = 10
# Seconds of timed searches per setup after which timing stops, the floor reached, whatever the margin:
# a reranked search's time varies with its passages' lengths, so its median may need 36+ searches of
# 2-6 s each to reach +/-10%, and no pick hangs on that precision. The report keeps the margin reached.
DEFAULT_TIME_BUDGET = 20.0
# The fewest timed searches whose median has a distribution-free 95% interval (order statistics 1 and
# 6 of 6: 1 - 2 * 0.5**6 = 0.969); a setup too slow to reach the floor within the budget stops here.
FEWEST_TIMED = 6
Progress = Callable[[int, int, str], None]  # (done, total, what is running)
Clock = Callable[[], float]  # seconds, monotonic; time.perf_counter unless a test fixes it


@dataclass(frozen=True)
class EvaluationSettings:
    balance: float = 4
    time_points: float = 8
    by: str = "doc"
    depth: int = 20
    timed: int = DEFAULT_TIMED  # at most this many questions timed one by one per setup (a seeded sample)
    seed: int = 0  # the timed sample's and the significance tests' resampling
    # Timing stops once the median is known this precisely (the 95% interval's wider side over the
    # median, see scoring.metrics.median_margin), after at least ``time_floor`` searches; at most ``timed``.
    time_margin: float = DEFAULT_TIME_MARGIN
    time_floor: int = DEFAULT_TIME_FLOOR
    time_budget: float = DEFAULT_TIME_BUDGET  # seconds; 0: no budget
    alpha: float = 0.05  # a difference with a Holm-adjusted p-value at or under this is significant
    resamples: int = 10_000  # bootstrap resamples and random sign flips per comparison

    def __post_init__(self) -> None:
        """Refuse any setting a run could not finish with, before the first search."""
        if not isinstance(self.by, str) or self.by not in GRAINS:
            raise UsageError(f'"{self.by}" is not a grain; use one of {", ".join(GRAINS)}.'
                             f'{did_you_mean(str(self.by), GRAINS)}')
        for name, value in (("balance", self.balance), ("time points", self.time_points)):
            # nan passes every comparison, and the picks would fail on it after every setup had run
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise UsageError(f"{name} must be a finite number of percentage points, not {value!r}")
            if value < 0:
                raise UsageError(f"{name} must be zero or more percentage points, not {value!r}")
        if isinstance(self.time_margin, bool) or not isinstance(self.time_margin, (int, float)) \
                or not 0 <= self.time_margin < 1:  # nan fails this too
            raise UsageError(f"the time margin must be a share from 0 (time every sampled question) to under 1, "
                             f"not {self.time_margin!r}")
        if isinstance(self.time_budget, bool) or not isinstance(self.time_budget, (int, float)) \
                or not math.isfinite(self.time_budget) or self.time_budget < 0:
            raise UsageError(f"the time budget must be zero (none) or more seconds, not {self.time_budget!r}")
        for name, value in (("depth", self.depth), ("timed questions", self.timed), ("seed", self.seed),
                            ("time floor", self.time_floor)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"{name} must be a whole number, not {value!r}")
        if self.depth < 20:
            raise UsageError(f"depth {self.depth} is too shallow: found@20 needs at least 20 results")
        if self.timed < 0:
            raise UsageError(f"timed questions must be zero or more, not {self.timed}")
        if self.time_floor < 6:
            raise UsageError(f"the time floor must be 6 or more (fewer times give no 95% interval for the "
                             f"median), not {self.time_floor}")
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
             resamples: int = 10_000, time_margin: float = DEFAULT_TIME_MARGIN,
             time_floor: int = DEFAULT_TIME_FLOOR, time_budget: float = DEFAULT_TIME_BUDGET,
             held_before: Mapping[str, Iterable[str]] | None = None) -> dict[str, Any]:
    """Everything a run needs before its first search, as plain JSON data (see the module docstring).

    Raises ``GoldenFileError`` when the golden file has any error (every one listed by line, as
    ``golden check`` lists them: ``check_golden(...).ok`` is False exactly when this refuses), and
    ``UsageError`` for settings or setup patterns that do not fit, all before any search. Expected
    documents a target does not hold are warned and kept under ``missing``; their questions stay in.
    At ``by="evidence"``, evidence quotes that no chunk of their expected documents holds are warned
    about too (on targets that can give their chunk texts). ``held_before`` (target name -> ids an
    earlier run found there, see ``evaluate.held_in_latest_run``) tells "no longer holds" from "does
    not hold".
    """
    settings = EvaluationSettings(balance=balance, time_points=time_points, by=by, depth=depth,
                                  timed=timed, seed=seed, alpha=alpha, resamples=resamples,
                                  time_margin=time_margin, time_floor=time_floor, time_budget=time_budget)
    targets = [targets] if isinstance(targets, Target) else list(targets)
    names = [t.name for t in targets]
    if len(set(names)) != len(names):
        raise UsageError(f"two targets share a name ({', '.join(names)}); setup keys start with the "
                         "target's name, so give each target its own")
    golden = golden if isinstance(golden, Golden) else read_golden(golden)
    warn = warn or log.warning
    problems = run_problems(golden)
    if problems:
        raise GoldenFileError(explain_problems(golden.source, problems))
    questions = list(golden.labelled)

    missing = find_missing(targets, questions, settings.by, held_before=held_before)
    for target_name, gone in missing.items():
        warn(missing_note(target_name, gone))
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
                   "unfilled": len(golden.unfilled), "drafts": len(golden.drafts)},
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
    """A question as the plan carries it to the searches: with its text and quotes. The report keeps
    only ``id``, ``expected`` and ``sha256`` (see ``assemble_report``)."""
    return {"id": question.id, "question": question.question, "expected": list(question.expected),
            "evidence": list(question.evidence), "sha256": question_sha256(question.question)}


def _plan_questions(plan: dict[str, Any]) -> list[Question]:
    return [Question(id=row["id"], question=row["question"], expected=tuple(row["expected"]),
                     evidence=tuple(row.get("evidence") or ())) for row in plan["questions"]]


def find_missing(targets: Sequence[Target], questions: Sequence[Question], by: str = "doc", *,
                 held_before: Mapping[str, Iterable[str]] | None = None) -> dict[str, dict]:
    """Per target, the expected items it does not hold, like with like, and the questions they touch.

    At ``chunk`` the expected chunk ids are looked up among the target's chunks (``holds_chunks``; a
    target without it is not checked); at every other grain the documents of the expected items
    (``r.pdf#page=4`` is ``r.pdf``). ``{"unit": "chunk" | "document", "documents": [absent ids],
    "questions": {id: [its absent ids]}`` for questions none of whose expected items is held (lost),
    ``"partly": {id: [its absent ids]}`` for questions that still hold some}``; targets missing
    nothing are left out. Beside them, ``"nearest": {absent id: up to 3 ids the target holds}`` when
    the target can list its ids (a typo gets the id meant), and ``"was_held"``: the absent ids that
    ``held_before`` says an earlier run found on that target (the only ones it "no longer holds").
    """
    by_chunk = by == "chunk"
    units = {q.id: list(dict.fromkeys(q.expected if by_chunk else (i.doc_id for i in q.expected_items)))
             for q in questions}
    wanted = sorted({u for found in units.values() for u in found})
    missing = {}
    for target in targets:
        if by_chunk:
            holds_chunks = getattr(target, "holds_chunks", None)
            if holds_chunks is None:
                log.info("target %s cannot say which chunks it holds; expected chunks are not checked", target.name)
                continue
            held = set(holds_chunks(wanted))
        else:
            held = set(target.holds(wanted))
        absent = [u for u in wanted if u not in held]
        if not absent:
            continue
        lost, partly = {}, {}
        for q in questions:
            gone = [u for u in units[q.id] if u not in held]
            if gone:
                (lost if len(gone) == len(units[q.id]) else partly)[q.id] = gone
        missing[target.name] = {"unit": "chunk" if by_chunk else "document", "documents": absent,
                                "questions": lost, "partly": partly}
        known = _listed_ids(target, by_chunk)
        if known:
            close = {u: get_close_matches(u, known, n=3, cutoff=0.6) for u in absent}
            missing[target.name]["nearest"] = {u: found for u, found in close.items() if found}
        before = set((held_before or {}).get(target.name) or ())
        if before & set(absent):
            missing[target.name]["was_held"] = [u for u in absent if u in before]
    return missing


def _listed_ids(target: Target, by_chunk: bool) -> list[str]:
    """Every id a target holds, when it can list them without a search (the embedded index), else []."""
    index = getattr(target, "index", None)
    try:
        if by_chunk:
            return sorted(c.id for c in getattr(index, "chunks", ()) or ())
        return sorted(getattr(index, "doc_ids", ()) or ())
    except TypeError:
        return []


def select_setups(targets: Sequence[Target], *, only: Iterable[str] | None, skip: Iterable[str]) -> list[tuple[Target, Setup]]:
    """Every setup of every target, filtered: a pattern is a glob on the key (``local.hybrid*``), or
    whole parts of it in a row (``hybrid``, ``bm25``, ``hybrid.bge-small``), or a retrieval method
    (``hybrid`` also selects ``hybrid_reranked`` and ``hybrid_colbert``)."""
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
    """Up to ``timed`` questions in a seeded random order: the order they are timed in, so a timed pass
    that stops early (its median known precisely enough) has timed a random sample, not the file's first
    questions."""
    picked = random.Random(settings.seed).sample(range(len(questions)), min(settings.timed, len(questions)))
    return [questions[i] for i in picked]


# -- step 2: one setup --------------------------------------------------------------------------------

def setup_steps(plan: dict[str, Any]) -> int:
    """How many progress steps one setup's run reports: the warm-up, then each question once (searched
    alone and timed, or in the batch)."""
    return 1 + len(plan["questions"])


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


def _cache_counts(target: Target, setup_key: str) -> dict[str, int] | None:
    """Where the target's batches got their query vectors and pair scores for the setup, when it keeps
    such counts (the embedded engine's ``cache_counts``)."""
    counts = getattr(target, "cache_counts", None)
    return None if counts is None else {name: int(n) for name, n in counts(setup_key).items()}


def _cache_since(target: Target, setup_key: str, before: dict[str, int] | None) -> dict[str, Any]:
    """``{"cache": counts since before}`` for the entry, or nothing for a target without counts."""
    after = _cache_counts(target, setup_key)
    if before is None or after is None:
        return {}
    return {"cache": {name: after[name] - before.get(name, 0) for name in after}}


def run_setup(target: Target, plan: dict[str, Any], setup_key: str, *, progress: Progress | None = None,
              clock: Clock = time.perf_counter) -> dict[str, Any]:
    """One setup's run, as the report's entry. Failures become ``error``, never exceptions.

    Each question is searched once: the plan's timed questions one at a time as a caller would (after
    one untimed warm-up; nothing cached; their results are their ranks too), until the median time is
    known within the plan's ``time_margin`` (see ``time_setup``); every other question in one batch.
    ``progress`` gets (done, total, "<key>: <what it is doing>") for every question. Per question the
    entry keeps ``ranks`` (position of the first relevant result, None when none), ``ndcg_10`` (the
    question's nDCG@10, which paired comparisons need) and ``results``. A target that counts its
    requests (``target.Counted``) has this setup's ``requests`` and ``retries`` put in the entry.

    The same work as ``time_setup`` and ``rank_setup`` joined by ``with_times``, which the Function App
    runs apart (timed passes one after another, batches in parallel) for the same entry.
    """
    planned_setup(plan, setup_key)
    counter = _Counter(setup_steps(plan), setup_key, progress)
    before = None
    try:
        before, cached_before = _counters(target, setup_key), _cache_counts(target, setup_key)
        setup = _find_setup(target, setup_key)
        timed = _timed_pass(target, setup, plan, clock, counter)
        entry = _ranked_entry(target, setup, plan, counter)
        entry.update(_cache_since(target, setup_key, cached_before))
    except Exception as err:  # noqa: BLE001 - any failure of one setup is that setup's result
        log.warning("setup %s failed: %s", setup_key, err)
        counter.finish()
        return failed_entry(plan, setup_key, f"{type(err).__name__}: {err}",
                            counts=_safe_counted_since(target, setup_key, before))
    entry.update(_counted_since(target, setup_key, before) or {})
    return with_times(entry, timed, question_ids=[q["id"] for q in plan["questions"]])


def rank_setup(target: Target, plan: dict[str, Any], setup_key: str, *,
               progress: Progress | None = None) -> dict[str, Any]:
    """The batch part of a setup's run: every question the plan does not time, in one batch, judged.

    The entry lacks the timed questions, its times and its summary until ``with_times`` adds what
    ``time_setup`` gave. Failures become the entry's ``error`` (as in ``run_setup``). A counted target's
    ``requests`` and ``retries`` are the batch's. ``progress`` gets (done, questions in the batch, label).
    """
    planned_setup(plan, setup_key)
    untimed = len(plan["questions"]) - len(plan["timed_question_ids"])
    counter = _Counter(untimed, setup_key, progress)
    before = None
    try:
        before, cached_before = _counters(target, setup_key), _cache_counts(target, setup_key)
        entry = _ranked_entry(target, _find_setup(target, setup_key), plan, counter)
        entry.update(_cache_since(target, setup_key, cached_before))
    except Exception as err:  # noqa: BLE001 - any failure of one setup is that setup's result
        log.warning("setup %s failed: %s", setup_key, err)
        return failed_entry(plan, setup_key, f"{type(err).__name__}: {err}",
                            counts=_safe_counted_since(target, setup_key, before))
    entry.update(_counted_since(target, setup_key, before) or {})
    return entry


def time_setup(target: Target, plan: dict[str, Any], setup_key: str, *, progress: Progress | None = None,
               clock: Clock = time.perf_counter) -> dict[str, Any]:
    """The timed part of a setup's run: ``{"times_ms": [...], "judged": {...}}``.

    One untimed warm-up, then the plan's timed questions in the plan's (seeded, random) order, each
    searched alone as a caller would (query embedding and reranking included, nothing cached) and
    timed, until at least ``time_floor`` are timed and either the median is known within ``time_margin``
    (``scoring.metrics.median_margin``) or the timed searches have taken ``time_budget`` seconds, or
    all are timed. Those searches' results are the questions' ranks;
    the timed questions left over are searched in one untimed batch. ``judged`` holds every timed
    question's ranks, nDCG@10, results and outcome, for ``with_times``.

    Raises what the search raises: the caller decides what a failed timed pass means (``run_setup``
    and the Function App make it the setup's error). ``progress`` gets (done, 1 + timed questions, label).
    Times are only comparable when nothing else searches on the same cores meanwhile: the caller
    runs timed passes one after another.
    """
    planned_setup(plan, setup_key)
    counter = _Counter(1 + len(plan["timed_question_ids"]), setup_key, progress)
    return _timed_pass(target, _find_setup(target, setup_key), plan, clock, counter)


def with_times(entry: dict[str, Any], timed: Mapping[str, Any], counts: Mapping[str, int] | None = None, *,
               question_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """``entry`` from ``rank_setup`` joined with what ``time_setup`` gave (``timed``): the timed
    questions' ranks and results, ``times_ms``, and the summary over every question (a copy).
    ``counts`` (the timed pass's requests and retries) are added to the entry's; ``question_ids`` orders
    the per-question maps (the plan's order)."""
    if entry.get("error") is not None or "outcomes" not in entry:
        raise UsageError(f"setup {entry.get('key')} has no ranks to add times to (it failed: {entry.get('error')})")
    done = copy.deepcopy(entry)
    judged = timed["judged"]
    for name in _PER_QUESTION:
        merged = {**done[name], **judged[name]}
        order = question_ids if question_ids is not None else list(merged)
        done[name] = {qid: merged[qid] for qid in order if qid in merged}
    outcomes = [Outcome(qid, tuple(positions), relevant) for qid, (positions, relevant) in done.pop("outcomes").items()]
    done["times_ms"] = list(timed["times_ms"])
    done["summary"] = summarise(outcomes, done["times_ms"])
    if "cache" in timed:  # the sample's rest, batched once timing stopped
        done["cache"] = {name: done.get("cache", {}).get(name, 0) + n for name, n in timed["cache"].items()}
    return _add_counts(done, counts)


def _add_counts(entry: dict[str, Any], counts: Mapping[str, int] | None) -> dict[str, Any]:
    for name, value in (counts or {}).items():
        entry[name] = entry.get(name, 0) + value
    return entry


def time_setups(targets: Mapping[str, Target], plan: dict[str, Any], setup_keys: Sequence[str], *,
                clock: Clock = time.perf_counter) -> dict[str, dict[str, Any]]:
    """Every setup's timed pass (``time_setup``), strictly one after another (``targets`` by name).

    ``{key: {"times_ms": [...], "judged": {...}}}``, or ``{key: {"error": "..."}}`` for a setup whose
    warm-up or searches failed (that setup's failure, as in ``run_setup``; the others go on). A counted
    target's ``requests`` and ``retries`` during the pass are given beside either.
    """
    found: dict[str, dict[str, Any]] = {}
    for key in setup_keys:
        target = targets[planned_setup(plan, key)["target"]]
        before = None
        try:
            before, cached_before = _counters(target, key), _cache_counts(target, key)
            found[key] = time_setup(target, plan, key, clock=clock)
            found[key].update(_counted_since(target, key, before) or {})
            found[key].update(_cache_since(target, key, cached_before))
        except Exception as err:  # noqa: BLE001 - any failure of one setup is that setup's result
            log.warning("timing setup %s failed: %s", key, err)
            found[key] = {"error": f"{type(err).__name__}: {err}", **(_safe_counted_since(target, key, before) or {})}
    return found


def finish_entries(plan: dict[str, Any], ranked: Mapping[str, dict[str, Any]], times: Mapping[str, dict[str, Any]],
                   failures: Mapping[str, str] = {}) -> list[dict[str, Any]]:
    """One entry per planned setup, for ``assemble_report``, from the parts a split run made.

    ``ranked``: ``rank_setup`` entries by key; ``times``: what ``time_setups`` gave; ``failures``: why
    a setup's step never finished (a retried activity that still failed). A setup with no entry, an
    entry with an error, or no times, is a ``failed_entry`` saying which.
    """
    question_ids = [q["id"] for q in plan["questions"]]
    entries = []
    for planned in plan["setups"]:
        key = planned["key"]
        entry, timed = ranked.get(key), times.get(key)
        if key in failures:
            entries.append(failed_entry(plan, key, failures[key]))
        elif entry is None:
            entries.append(failed_entry(plan, key, "no ranks were kept for this setup"))
        elif entry.get("error") is not None:
            entries.append(copy.deepcopy(entry))
        elif timed is None or "times_ms" not in timed:
            why = (timed or {}).get("error") or "its timed pass never ran"
            counts = {name: entry[name] + (timed or {}).get(name, 0) for name in COUNTERS if name in entry}
            entries.append(failed_entry(plan, key, why, counts=counts or None))
        else:
            entries.append(with_times(entry, timed, {n: timed[n] for n in COUNTERS if n in timed},
                                      question_ids=question_ids))
    return entries


def _find_setup(target: Target, setup_key: str) -> Setup:
    setup = next((s for s in target.setups() if s.key == setup_key), None)
    if setup is None:
        raise LookupError(f"target {target.name} offers no setup {setup_key} any more")
    return setup


# What a setup's searches give per question id; ``outcomes`` ([positions, units expected]) is kept
# until ``with_times`` has every question for the summary, then dropped.
_PER_QUESTION = ("ranks", "ndcg_10", "results", "outcomes")


def _judged(questions: Sequence[Question], hit_lists: Sequence[Sequence[Hit]], by: str) -> dict[str, dict]:
    """Each question's outcome for its hits, as the per-question maps of ``_PER_QUESTION``."""
    if len(hit_lists) != len(questions):  # a silent zip would score the wrong results
        raise RuntimeError(f"the search gave {len(hit_lists)} result lists for {len(questions)} questions")
    outcomes = [judge(question, hits, by) for question, hits in zip(questions, hit_lists)]
    ndcg = score_matrix(*outcome_arrays(outcomes))["ndcg_10"] if outcomes else []
    return {
        "ranks": {o.question_id: o.first for o in outcomes},
        "ndcg_10": {o.question_id: round(float(value), 6) for o, value in zip(outcomes, ndcg)},
        "results": {q.id: [hit.to_row() for hit in hits] for q, hits in zip(questions, hit_lists)},
        "outcomes": {o.question_id: [list(o.positions), o.relevant] for o in outcomes},
    }


def _ranked_entry(target: Target, setup: Setup, plan: dict[str, Any], counter: _Counter) -> dict[str, Any]:
    """The entry with every untimed question's results, searched in one batch (none: no search)."""
    timed_ids = set(plan["timed_question_ids"])
    questions = [q for q in _plan_questions(plan) if q.id not in timed_ids]
    counter.stage("searching the other questions in a batch")
    hits = _batch(target, setup, questions, plan["settings"]["depth"], counter) if questions else []
    return {**setup.to_dict(), **_judged(questions, hits, plan["settings"]["by"]), "times_ms": [], "error": None,
            "summary": None, "rank": None, "neighbours": [], "versus_top": None}


def _batch(target: Target, setup: Setup, questions: Sequence[Question], depth: int,
           counter: _Counter) -> list[list[Hit]]:
    """``search_batch``, with progress per question from a target whose ``search_batch`` takes a
    ``progress`` callback (given how many more questions are done), all at once from any other."""
    texts = [q.question for q in questions]
    reported = 0
    lock = threading.Lock()  # a target may report from its worker threads

    def advance(n: int) -> None:
        nonlocal reported
        with lock:
            n = max(0, min(n, len(texts) - reported))  # over-reporting cannot push the bar past the batch
            reported += n
            counter.advance(n)

    if "progress" in inspect.signature(target.search_batch).parameters:
        hits = target.search_batch(setup, texts, depth, progress=advance)
    else:
        hits = target.search_batch(setup, texts, depth)
    advance(len(texts) - reported)
    return hits


def _warm_up(target: Target, setup: Setup, plan: dict[str, Any]) -> None:
    """One untimed search, so loading models and first-touch costs never land in a timed search."""
    target.search(setup, plan["questions"][0]["question"], plan["settings"]["depth"])


def _timed_pass(target: Target, setup: Setup, plan: dict[str, Any], clock: Clock, counter: _Counter) -> dict[str, Any]:
    settings = EvaluationSettings(**plan["settings"])
    by_id = {q.id: q for q in _plan_questions(plan)}
    sample = [by_id[qid] for qid in plan["timed_question_ids"]]
    counter.stage("warming up")
    _warm_up(target, setup, plan)
    counter.advance(1)
    floor = min(settings.time_floor, len(sample))
    times, searched, hit_lists = [], [], []
    for question in sample:
        if len(times) >= floor:
            margin = median_margin(times)
            if margin is not None and margin <= settings.time_margin:
                break
            if settings.time_budget and sum(times) >= settings.time_budget * 1000:
                break
        elif len(times) >= FEWEST_TIMED and _floor_overruns_budget(times, floor, settings.time_budget):
            break
        counter.stage(f"timing searches one by one ({len(times) + 1} of at most {len(sample)})")
        started = clock()
        hits = target.search(setup, question.question, settings.depth)
        times.append(round((clock() - started) * 1000, 3))
        searched.append(question)
        hit_lists.append(hits)
        counter.advance(1)
    rest = sample[len(searched):]
    if rest:  # the median is known well enough, or the budget is spent: the rest only needs its ranks
        known = median_margin(times)
        within = "" if known is None else f"median known within {known:.0%}; "
        counter.stage(f"{within}the other sampled questions in a batch")
        searched += rest
        hit_lists += _batch(target, setup, rest, settings.depth, counter)
    return {"times_ms": times, "judged": _judged(searched, hit_lists, settings.by)}


def _floor_overruns_budget(times_ms: Sequence[float], floor: int, budget_s: float) -> bool:
    """Whether reaching the floor at the pace so far would spend the budget: such a setup (a reranked
    one, seconds a search) stops at ``FEWEST_TIMED``, the fewest searches whose median has a 95%
    interval. With the defaults (floor 10, budget 20 s) that is a setup whose searches average 2 s or
    more: on the sample, 3 reranked setups x 4 searches fewer at 2-6 s each, 24-72 s of a first run."""
    return bool(budget_s) and sum(times_ms) / len(times_ms) * floor >= budget_s * 1000


class _Counter:
    """Progress of one setup's steps, reported as (done, total, "<key>: <stage>")."""

    def __init__(self, total: int, key: str, progress: Progress | None) -> None:
        self.total, self.key, self.progress, self.done = total, key, progress, 0
        self.label = key

    def stage(self, words: str) -> None:
        self.label = f"{self.key}: {words}"

    def advance(self, n: int) -> None:
        self.done += n
        if self.progress and n:
            self.progress(self.done, self.total, self.label)

    def finish(self) -> None:
        """The bar still reaches the end when a setup fails."""
        self.advance(self.total - self.done)


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
        # ids, expected ids and a hash, never a question's or a reference's text: who may read runs
        # need not be who may read the golden file (kept apart, as golden_dataset/<sha256>.jsonl), and
        # the hash lets two runs on different golden files find the questions they share
        "questions": [{"id": q["id"], "expected": list(q["expected"]),
                       "sha256": q.get("sha256") or question_sha256(q["question"])} for q in questions],
        "timed_question_ids": list(plan["timed_question_ids"]),
        "rules": {"balance_points": settings["balance"], "time_points": settings["time_points"],
                  "rank_by": ["found@10", "found@1", "median_ms", "key"], "timed": settings["timed"],
                  "seed": settings["seed"],
                  # plans made before precision-sized timing timed every sampled question
                  "time_margin": settings.get("time_margin", 0), "time_floor": settings.get("time_floor", 0),
                  "time_budget": settings.get("time_budget", 0)},
        "targets": copy.deepcopy(plan["targets"]),
        "missing": copy.deepcopy(plan["missing"]),
        "picks": picks,
        "significance": significance.describe(),
        "ties": pick_ties(picks, ranked, question_ids, significance),
        "frontier": frontier(ranked),
        "setups": sorted(results, key=lambda s: (s["rank"] is None, s["rank"] or 0, s["key"])),
        **_cache_total(results),
    }


def _cache_total(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"cache": every setup's counts added up}`` (see ``EmbeddedTarget.cache_counts``): how much of
    the run's batch work came from earlier runs; nothing when no target counted."""
    counted = [e["cache"] for e in entries if isinstance(e.get("cache"), dict)]
    if not counted:
        return {}
    names = list(dict.fromkeys(name for counts in counted for name in counts))
    return {"cache": {name: sum(counts.get(name, 0) for counts in counted) for name in names}}


# -- a run that cannot start --------------------------------------------------------------------------

def refusal_report(reason: str, *, source: str, sha256: str, run_id: str, created_at: datetime | str,
                   check: GoldenCheck | None = None, by: str = "doc", depth: int = 20, balance: float = 4,
                   time_points: float = 8, timed: int = DEFAULT_TIMED, seed: int = 0) -> dict[str, Any]:
    """The report of a run that could not start: no setup ran, nothing is picked, and ``refused``
    says why (``reason``, a sentence) with every error of the golden file by line when ``check`` has
    some. Warnings are left out (they may quote document text); errors name fields, ids and expected
    documents only. Made by ``assemble_report`` from an empty plan, so it has every key a report has.
    """
    settings = EvaluationSettings(balance=balance, time_points=time_points, by=by, depth=depth, timed=timed,
                                  seed=seed)
    errors = [{"line": p.line, "message": p.message} for p in (check.errors if check else ())]
    counts = ({"format": check.format, "questions": check.rows, "labelled": check.ready,
               "unfilled": check.unfilled, "drafts": check.drafts} if check else {})
    plan = {
        "format": PLAN_FORMAT, "run_id": run_id,
        "created_at": _utc(created_at).isoformat().replace("+00:00", "Z"),
        "settings": asdict(settings),
        "golden": {"source": source, "sha256": sha256, **counts, "problems": errors},
        "questions": [], "timed_question_ids": [], "setups": [], "targets": {}, "missing": {},
    }
    report = assemble_report(plan, [])
    report["refused"] = {"reason": reason, "errors": errors}
    return report


def golden_errors_reason(check: GoldenCheck) -> str:
    """Why a run with this golden file is refused, in a sentence."""
    return f"the golden file has {len(check.errors)} error(s); fix them (`python3 -m evaluation golden check`) and save it again"

"""Step 2 of a run: one setup's searches on one target (a Durable activity each), as the report's entry.

``run_setup`` does it all at once; the Function App runs its two halves apart, ``time_setups`` (the
timed passes, one after another so their times are comparable) and ``rank_setup`` (every other
question in one batch, in parallel), and joins them with ``with_times`` / ``finish_entries`` into the
same entry. A setup's failure is its entry's ``error``, never an exception: it does not end the run.
"""
from __future__ import annotations

import inspect
import threading
import time
from typing import Any, Callable, Mapping, Sequence

from ..errors import UsageError
from ..golden import Question
from ..scoring.judging import Rule
from ..scoring.metrics import Outcome, median_margin, summarise
from ..settings import EvaluationSettings
from ..target import COUNTERS, Hit, Setup, Target
from .copying import copied
from .counts import counted
from .judged import (FEWEST_TIMED, PER_QUESTION as _PER_QUESTION, batch_ids, judged as _judged, timed_ids,
                     untimed_ids)
from .plan import plan_questions, planned_setup
from .retime import time_state
from .reuse import rank_state


Progress = Callable[[int, int, str], None]  # (done, total, what is running)
Clock = Callable[[], float]  # seconds, monotonic; time.perf_counter unless a test fixes it


def setup_steps(plan: dict[str, Any]) -> int:
    """How many progress steps one setup's run reports: the warm-up, then each question once (searched
    alone and timed, or in the batch)."""
    return 1 + len(plan["questions"])


def failed_entry(plan: dict[str, Any], setup_key: str, error: str, *,
                 counts: dict[str, int] | None = None) -> dict[str, Any]:
    """The report entry of a setup that could not run: its error, no rank, never picked. ``counts``
    (requests, retries) are kept when the target counted them."""
    return {**copied(planned_setup(plan, setup_key)), "ranks": {}, "ndcg_10": {}, "results": {},
            "times_ms": [], "error": error, "summary": None, "rank": None, "neighbours": [], "versus_top": None,
            **(counts or {})}


def run_setup(target: Target, plan: dict[str, Any], setup_key: str, *, progress: Progress | None = None,
              clock: Clock = time.perf_counter, reused: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One setup's run, as the report's entry. Failures become ``error``, never exceptions.

    Each question is searched once: the plan's timed questions one at a time as a caller would (after
    one untimed warm-up; nothing cached; their results are their ranks too), until the median time is
    known within the plan's ``time_margin`` (see ``time_setup``); every other question in one batch.
    ``progress`` gets (done, total, "<key>: <what it is doing>") for every question. Per question the
    entry keeps ``ranks`` (position of the first relevant result, None when none), ``ndcg_10`` (the
    question's nDCG@10, which paired comparisons need) and ``results``. A target that counts its
    requests (``target.Counted``) has this setup's ``requests`` and ``retries`` put in the entry.

    The same work as ``time_setup`` and ``rank_setup`` joined by ``with_times``, which the Function App
    runs apart (timed passes one after another, batches in parallel) for the same entry. ``reused``
    (``retime.reusable_times``' answer for this setup) takes the times from the run that timed the
    same state live, and searches the sampled questions in a batch instead of timing them.
    """
    planned_setup(plan, setup_key)
    counter = _Counter(setup_steps(plan), setup_key, progress)
    timed: dict[str, Any] = {}

    def work() -> dict[str, Any]:
        setup = _find_setup(target, setup_key)
        timed.update(_reused_pass(target, setup, plan, reused, counter) if reused
                     else _timed_pass(target, setup, plan, clock, counter))
        return _ranked_entry(target, setup, plan, counter, batch_ids(plan, setup_key))

    def failed(error: str, counts: dict[str, int] | None) -> dict[str, Any]:
        counter.finish()
        return failed_entry(plan, setup_key, error, counts=counts)

    entry = counted(target, setup_key, work, failed)
    if entry.get("error") is not None:
        return entry
    return with_times(entry, timed, question_ids=[q["id"] for q in plan["questions"]])


def rank_setup(target: Target, plan: dict[str, Any], setup_key: str, *,
               progress: Progress | None = None, questions: Sequence[str] | None = None) -> dict[str, Any]:
    """The batch part of a setup's run: every question its timed pass does not search (``batch_ids``),
    in one batch, judged.

    The entry lacks the timed questions, its times and its summary until ``with_times`` adds what
    ``time_setup`` gave. Failures become the entry's ``error`` (as in ``run_setup``). A counted target's
    ``requests`` and ``retries`` are the batch's. ``progress`` gets (done, questions in the batch, label).
    ``questions`` (ids of questions of its batch) ranks only those: one shard of it (``run.shards``).
    """
    planned_setup(plan, setup_key)
    batch = batch_ids(plan, setup_key) if questions is None else _only_batch(plan, setup_key, questions)
    counter = _Counter(len(batch), setup_key, progress)
    return counted(target, setup_key,
                   lambda: _ranked_entry(target, _find_setup(target, setup_key), plan, counter, batch),
                   lambda error, counts: failed_entry(plan, setup_key, error, counts=counts))


def _only_batch(plan: dict[str, Any], setup_key: str, question_ids: Sequence[str]) -> list[str]:
    """``question_ids`` in plan order, refused when one is not a question of the setup's batch or is given
    twice (a shard holding a timed question would rank it twice and its ranks would depend on the order)."""
    wanted = list(question_ids)
    batch = batch_ids(plan, setup_key)
    unknown = sorted(set(wanted) - set(batch))
    if unknown or len(set(wanted)) != len(wanted):
        raise UsageError(f"a shard's questions must be questions of {setup_key}'s batch, each once: "
                         f"{', '.join(unknown) or 'some are given twice'}")
    keep = set(wanted)
    return [qid for qid in batch if qid in keep]


def time_setup(target: Target, plan: dict[str, Any], setup_key: str, *, progress: Progress | None = None,
               clock: Clock = time.perf_counter) -> dict[str, Any]:
    """The timed part of a setup's run: ``{"times_ms": [...], "judged": {...}}``.

    One untimed warm-up, then the plan's timed questions in the plan's (seeded, random) order, each
    searched alone as a caller would (query embedding and reranking included, nothing cached) and
    timed, until at least ``time_floor`` are timed and either the median is known within ``time_margin``
    (``scoring.metrics.median_margin``) or the timed searches have taken ``time_budget`` seconds, or
    all are timed. A setup that reranks with a model on every search (``judged.timed_at_fixed_count``)
    times exactly the first ``FEWEST_TIMED`` (``timed_ids``); its other sampled questions are in its
    batch. Those searches' results are the questions' ranks;
    the timed questions left over are searched in one untimed batch. ``judged`` holds every timed
    question's ranks, nDCG@10, results and outcome, for ``with_times``.

    Raises what the search raises: the caller decides what a failed timed pass means (``run_setup``
    and the Function App make it the setup's error). ``progress`` gets (done, 1 + timed questions, label).
    Times are only comparable when nothing else searches on the same cores meanwhile: the caller
    runs timed passes one after another.
    """
    planned_setup(plan, setup_key)
    counter = _Counter(1 + len(timed_ids(plan, setup_key)), setup_key, progress)
    return _timed_pass(target, _find_setup(target, setup_key), plan, clock, counter)


def with_times(entry: dict[str, Any], timed: Mapping[str, Any], counts: Mapping[str, int] | None = None, *,
               question_ids: Sequence[str] | None = None, owned: bool = False) -> dict[str, Any]:
    """``entry`` from ``rank_setup`` joined with what ``time_setup`` gave (``timed``): the timed
    questions' ranks and results, ``times_ms``, and the summary over every question (a copy).
    ``counts`` (the timed pass's requests and retries) are added to the entry's; ``question_ids`` orders
    the per-question maps (the plan's order). ``owned``: ``entry`` is the caller's to give away
    (``join_app_run``'s, made for this report), so it is filled in place instead of copied, and
    ``timed``'s results are copied into it (a copy of a 5,000-question entry: 0.25 s of CPU, issue 28)."""
    if entry.get("error") is not None or "outcomes" not in entry:
        raise UsageError(f"setup {entry.get('key')} has no ranks to add times to (it failed: {entry.get('error')})")
    done = entry if owned else copied(entry)
    judged = copied(timed["judged"]) if owned else timed["judged"]
    for name in _PER_QUESTION:
        merged = {**done[name], **judged[name]}
        order = question_ids if question_ids is not None else list(merged)
        done[name] = {qid: merged[qid] for qid in order if qid in merged}
    outcomes = [Outcome.from_json(qid, value) for qid, value in done.pop("outcomes").items()]
    done["times_ms"] = list(timed["times_ms"])
    done["summary"] = summarise(outcomes, done["times_ms"])
    holes = {o.question_id: list(o.holes) for o in outcomes if o.holes}
    if holes:  # each question's unjudged ids in its top 10: what the golden file should label next
        done["holes"] = holes
    for name in ("time_state", "timed_in"):  # what decided the times; where reused ones were measured
        if timed.get(name):
            done[name] = timed[name]
    ranked_in = {**done.get("ranked_in", {}), **timed.get("ranked_in", {})}  # reused results (run.reuse)
    if ranked_in:
        order = question_ids if question_ids is not None else list(ranked_in)
        done["ranked_in"] = {qid: ranked_in[qid] for qid in order if qid in ranked_in}
    if "cache" in timed:  # the sample's rest, batched once timing stopped
        done["cache"] = {name: done.get("cache", {}).get(name, 0) + n for name, n in timed["cache"].items()}
    return _add_counts(done, counts)


def _add_counts(entry: dict[str, Any], counts: Mapping[str, int] | None) -> dict[str, Any]:
    for name, value in (counts or {}).items():
        entry[name] = entry.get(name, 0) + value
    return entry


def time_setups(targets: Mapping[str, Target], plan: dict[str, Any], setup_keys: Sequence[str], *,
                clock: Clock = time.perf_counter,
                reused: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Every setup's timed pass (``time_setup``), strictly one after another (``targets`` by name);
    a setup in ``reused`` (``retime.reusable_times``) takes those times and only ranks its sample.

    ``{key: {"times_ms": [...], "judged": {...}}}``, or ``{key: {"error": "..."}}`` for a setup whose
    warm-up or searches failed (that setup's failure, as in ``run_setup``; the others go on). A counted
    target's ``requests`` and ``retries`` during the pass are given beside either.
    """
    found: dict[str, dict[str, Any]] = {}
    for key in setup_keys:
        target = targets[planned_setup(plan, key)["target"]]
        again = (reused or {}).get(key)
        found[key] = counted(target, key,
                             lambda target=target, key=key, again=again: (
                                 _reused_pass(target, _find_setup(target, key), plan, again,
                                              _Counter(len(timed_ids(plan, key)), key, None))
                                 if again else time_setup(target, plan, key, clock=clock)),
                             lambda error, counts: {"error": error, **(counts or {})}, what="timing setup")
    return found


def finish_entries(plan: dict[str, Any], ranked: Mapping[str, dict[str, Any]], times: Mapping[str, dict[str, Any]],
                   failures: Mapping[str, str] = {}, *, owned: bool = False) -> list[dict[str, Any]]:
    """One entry per planned setup, for ``assemble_report``, from the parts a split run made.

    ``ranked``: ``rank_setup`` entries by key; ``times``: what ``time_setups`` gave; ``failures``: why
    a setup's step never finished (a retried activity that still failed). A setup with no entry, an
    entry with an error, or no times, is a ``failed_entry`` saying which. ``owned``: the ``ranked``
    entries are the caller's to give away, filled in place (``with_times``).
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
            entries.append(copied(entry))
        elif timed is None or "times_ms" not in timed:
            why = (timed or {}).get("error") or "its timed pass never ran"
            counts = {name: entry[name] + (timed or {}).get(name, 0) for name in COUNTERS if name in entry}
            entries.append(failed_entry(plan, key, why, counts=counts or None))
        else:
            entries.append(with_times(entry, timed, {n: timed[n] for n in COUNTERS if n in timed},
                                      question_ids=question_ids, owned=owned))
    return entries


def _find_setup(target: Target, setup_key: str) -> Setup:
    setup = next((s for s in target.setups() if s.key == setup_key), None)
    if setup is None:
        raise LookupError(f"target {target.name} offers no setup {setup_key} any more")
    return setup


def _ranked_entry(target: Target, setup: Setup, plan: dict[str, Any], counter: _Counter,
                  question_ids: Sequence[str]) -> dict[str, Any]:
    """The entry with the results of ``question_ids`` (untimed), searched in one batch (none: no search)."""
    questions = plan_questions(plan, question_ids)
    counter.stage("searching the other questions in a batch")
    hits = _batch(target, setup, questions, plan["settings"]["depth"], counter) if questions else []
    state = rank_state(plan, setup.key)  # what decided these results, so a later run may take them (run.reuse)
    return {**setup.to_dict(), **_judged(questions, hits, Rule.of(plan["settings"])), "times_ms": [], "error": None,
            "summary": None, "rank": None, "neighbours": [], "versus_top": None,
            **({"rank_state": state} if state else {})}


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
    settings = EvaluationSettings.from_json(plan["settings"])
    ids = timed_ids(plan, setup.key)
    by_id = {q.id: q for q in plan_questions(plan, ids)}
    sample = [by_id[qid] for qid in ids]
    counter.stage("warming up")
    _warm_up(target, setup, plan)
    counter.advance(1)
    floor = min(settings.time_floor, len(sample))  # a setup timed at a fixed count: all of its (<= 6)
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
    return {"times_ms": times, "judged": _judged(searched, hit_lists, Rule.of(plan["settings"])),
            "time_state": time_state(plan, setup.key)}


def _reused_pass(target: Target, setup: Setup, plan: dict[str, Any], reused: Mapping[str, Any],
                 counter: _Counter) -> dict[str, Any]:
    """The timed pass's result with times reused (``retime``): the sample searched in one batch for its
    ranks, the times and where they were measured from ``reused``."""
    ids = timed_ids(plan, setup.key)
    by_id = {q.id: q for q in plan_questions(plan, ids)}
    sample = [by_id[qid] for qid in ids]
    counter.stage(f"times from run {reused['timed_in']} (same index state); the sampled questions in a batch")
    hits = _batch(target, setup, sample, plan["settings"]["depth"], counter) if sample else []
    return {"times_ms": list(reused["times_ms"]), "judged": _judged(sample, hits, Rule.of(plan["settings"])),
            "time_state": reused["time_state"], "timed_in": reused["timed_in"]}


def _floor_overruns_budget(times_ms: Sequence[float], floor: int, budget_s: float) -> bool:
    """Whether reaching the floor at the pace so far would spend the budget: such a setup (seconds a
    search, e.g. a remote service under load) stops at ``FEWEST_TIMED``, the fewest searches whose median
    has a 95% interval. With the defaults (floor 10, budget 20 s) that is a setup whose searches average
    2 s or more. A setup reranked by a model never gets here: it is timed at a fixed count
    (``judged.timed_at_fixed_count``)."""
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

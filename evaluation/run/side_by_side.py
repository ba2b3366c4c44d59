"""The timed pass of every setup at once: the timed sample searched side by side, in a rotating order.

Why: timed one setup after another, load that came and went between passes landed on some setups and
not others (issue 39: the same setup's median moved from 17.6 to 29.6 ms between runs on a busy
machine, and the fastest setup changed from run to run). Here every setup is warmed up (one untimed
search each, or the target's ``warm_up``, so loading models never lands in a timed search), then
the sampled questions are searched in rounds: round r searches question r on every setup still
timing, one at a time as a caller would (nothing cached), in the setups' order rotated by r (A, B,
C; then B, C, A; then C, A, B), and reversed every other cycle (C, B, A; ...), so each pair of
setups searches the same question at nearly the same moment and each goes first as often as the
other. ``scoring.time_pairs`` compares them on those searches.

Each setup stops as it did alone (``stops``): once at least ``time_floor`` searches are timed and the
median is known within ``time_margin`` or its timed searches have taken ``time_budget`` seconds; a
setup reranked by a model at ``FEWEST_TIMED`` (``judged.timed_ids``). So the pass costs the searches
the setups' own passes cost. Once every setup has stopped, each setup's sampled questions it did not
time are searched in one untimed batch for their ranks, after all timing (a batch beside a timed
search would slow it).

The pass is plain JSON state (``start_pass``), so a caller can time it in parts (``time_rounds`` with
``seconds``: the Function App's activities, none running long) and finish it once (``finish_pass``).
Entries timed in one pass share its ``time_pass``: a pair is compared side by side only then.
"""
from __future__ import annotations

import hashlib
import logging
import time
from typing import Any, Mapping, Sequence

from ..scoring.metrics import median_margin
from ..settings import EvaluationSettings
from ..target import Setup, Target
from .copying import copied
from .counts import Tally
from .judged import FEWEST_TIMED, PER_QUESTION, judged, timed_ids
from .planned import Plan
from .retime import time_state
from .searching import Clock, Counter, batch_search, find_setup

log = logging.getLogger(__name__)


def time_pass_id(plan: Plan, keys: Sequence[str]) -> str:
    """The name of one side-by-side pass: the run's id and a digest of the setups timed in it, so two
    passes of one run (a setup timed on its own, ``run_setup``) never pass for one."""
    digest = hashlib.sha256("\n".join(keys).encode("utf-8")).hexdigest()[:12]
    return f"{plan.run_id}/{digest}"


def start_pass(plan: Plan, keys: Sequence[str]) -> dict[str, Any]:
    """A pass over ``keys`` (plan setups, in the order the rotation starts from) that has timed nothing."""
    for key in keys:
        plan.setup(key)  # a key the plan does not hold is a sentence naming the closest, before any search
    return {"pass": time_pass_id(plan, keys), "round": 0, "keys": list(keys), "done": not keys,
            "setups": {key: {"times_ms": [], "judged": {name: {} for name in PER_QUESTION}, "stopped": False,
                             "error": None, "counts": {}} for key in keys}}


def round_order(keys: Sequence[str], round_number: int) -> list[str]:
    """The order round ``round_number`` (from 0) searches ``keys`` in: rotated by the round, reversed
    every other cycle of ``len(keys)`` rounds (see the module docstring)."""
    if not keys:
        return []
    shift = round_number % len(keys)
    order = list(keys[shift:]) + list(keys[:shift])
    return order[::-1] if (round_number // len(keys)) % 2 else order


def stops(times_ms: Sequence[float], sample: int, settings: EvaluationSettings) -> bool:
    """Whether a setup that has timed ``times_ms`` of its ``sample`` sampled questions is done timing
    (see the module docstring; ``floor_overruns_budget`` for a setup of seconds a search)."""
    floor = min(settings.time_floor, sample)  # a setup timed at a fixed count: all of its (<= 6)
    if len(times_ms) >= sample:
        return True
    if len(times_ms) >= floor:
        margin = median_margin(times_ms)
        if margin is not None and margin <= settings.time_margin:
            return True
        return bool(settings.time_budget) and sum(times_ms) >= settings.time_budget * 1000
    return len(times_ms) >= FEWEST_TIMED and floor_overruns_budget(times_ms, floor, settings.time_budget)


def floor_overruns_budget(times_ms: Sequence[float], floor: int, budget_s: float) -> bool:
    """Whether reaching the floor at the pace so far would spend the budget: such a setup (seconds a
    search, e.g. a remote service under load) stops at ``FEWEST_TIMED``, the fewest searches whose median
    has a 95% interval. With the defaults (floor 10, budget 20 s) that is a setup whose searches average
    2 s or more. A setup reranked by a model never gets here: it is timed at a fixed count
    (``judged.timed_at_fixed_count``)."""
    return bool(budget_s) and sum(times_ms) / len(times_ms) * floor >= budget_s * 1000


def time_rounds(targets: Mapping[str, Target], plan: Plan, given: Mapping[str, Any], *,
                clock: Clock = time.perf_counter, seconds: float = 0,
                counters: Mapping[str, Counter] | None = None) -> dict[str, Any]:
    """``given`` (a pass's state) timed on: every setup still timing warmed up, then rounds until every
    setup has stopped (the state's ``done``) or, with ``seconds`` (> 0), until the first round that would
    start that many seconds after this call began, whichever comes first. A new state: the given one is
    not changed.

    A setup whose warm-up or search raises is failed with that error (``error``) and the others go on.
    ``counters`` (by key) hear of each search. A counted target's requests and retries during this call
    are added to each setup's ``counts``."""
    settings, rule = plan.settings, plan.rule
    state: dict[str, Any] = copied(dict(given))
    keys, setups = state["keys"], state["setups"]
    samples = {key: [plan.question(qid) for qid in timed_ids(plan, key)] for key in keys}  # in timing order
    tallies = {key: Tally(targets[plan.setup(key).target], key).start() for key in keys}
    began = clock() if seconds else 0.0  # a timed search reads the clock twice, and nothing else does

    def timing(key: str) -> bool:
        mine = setups[key]
        return not mine["error"] and not mine["stopped"]

    def fail(key: str, err: Exception) -> None:
        log.warning("timing setup %s failed: %s", key, err)
        setups[key]["error"] = f"{type(err).__name__}: {err}"
        counts = tallies[key].requests_since_failure()
        tallies[key] = None  # type: ignore[assignment]
        _add(setups[key]["counts"], counts or {})

    for key in keys:  # stop what is known already (a state from an earlier part), then warm the rest up
        if timing(key) and stops(setups[key]["times_ms"], len(samples[key]), settings):
            setups[key]["stopped"] = True
    found: dict[str, Setup] = {}
    for key in keys:
        if not timing(key):
            continue
        target = targets[plan.setup(key).target]
        if counters:
            counters[key].stage("warming up")
        try:
            found[key] = find_setup(target, key)
            warm_up = getattr(target, "warm_up", None) or target.search  # see Target: the optional warm_up
            warm_up(found[key], plan.questions[0].question, settings.depth)
        except Exception as err:  # noqa: BLE001 - one setup's failure is that setup's result
            fail(key, err)
        if counters:
            counters[key].advance(1)
    while any(timing(key) for key in keys):
        if seconds and clock() - began >= seconds:
            break
        r = state["round"]
        for key in round_order(keys, r):
            mine = setups[key]
            if not timing(key):
                continue
            if stops(mine["times_ms"], len(samples[key]), settings):
                mine["stopped"] = True
                continue
            question = samples[key][len(mine["times_ms"])]
            target = targets[plan.setup(key).target]
            if counters:
                counters[key].stage(f"timing searches side by side ({len(mine['times_ms']) + 1} of at most "
                                    f"{len(samples[key])})")
            try:
                started = clock()
                hits = target.search(found[key], question.question, settings.depth)
                took = round((clock() - started) * 1000, 3)
                _merge(mine["judged"],
                       judged([question], [hits], rule))
            except Exception as err:  # noqa: BLE001
                fail(key, err)
                continue
            mine["times_ms"].append(took)
            if counters:
                counters[key].advance(1)
        state["round"] = r + 1
        for key in keys:
            if timing(key) and stops(setups[key]["times_ms"], len(samples[key]), settings):
                setups[key]["stopped"] = True
    for key, tally in tallies.items():
        if tally is not None:
            _add(setups[key]["counts"], tally.requests_since())
    state["done"] = not any(timing(key) for key in keys)
    return state


def finish_pass(targets: Mapping[str, Target], plan: Plan, state: Mapping[str, Any], *,
                counters: Mapping[str, Counter] | None = None) -> dict[str, dict[str, Any]]:
    """What ``time_setups`` gives, from a pass that is ``done``: per key ``{"times_ms", "judged",
    "time_state", "time_pass"}`` (every sampled question judged: the ones it did not time searched now
    in one untimed batch), or ``{"error": ...}``; a counted target's requests and retries beside either,
    and the batch's cache counts."""
    if not state["done"]:
        raise ValueError("the side-by-side pass has setups still timing; time its rounds first")
    settings = plan.settings
    found: dict[str, dict[str, Any]] = {}
    for key in state["keys"]:
        mine = state["setups"][key]
        counts = dict(mine["counts"])
        if mine["error"]:
            found[key] = {"error": mine["error"], **counts}
            continue
        target = targets[plan.setup(key).target]
        ids = timed_ids(plan, key)
        rest = plan.questions_for(ids[len(mine["times_ms"]):])
        tally = Tally(target, key).start()
        result = {"times_ms": list(mine["times_ms"]), "judged": copied(mine["judged"]),
                  "time_state": time_state(plan, key), "time_pass": state["pass"]}
        if rest:  # the median is known well enough, or the budget is spent: the rest only needs its ranks
            known = median_margin(mine["times_ms"])
            within = "" if known is None else f"median known within {known:.0%}; "
            counter = counters[key] if counters else Counter(len(rest), key, None)
            counter.stage(f"{within}the other sampled questions in a batch")
            try:
                hits = batch_search(target, find_setup(target, key), rest, settings.depth, counter)
            except Exception as err:  # noqa: BLE001
                log.warning("timing setup %s failed: %s", key, err)
                found[key] = {"error": f"{type(err).__name__}: {err}",
                              **_added(counts, tally.requests_since_failure() or {})}
                continue
            _merge(result["judged"], judged(rest, hits, plan.rule))
            result.update(tally.cache_since())
        found[key] = {**result, **_added(counts, tally.requests_since())}
    return found


def _merge(into: dict[str, dict], more: Mapping[str, Mapping]) -> None:
    for name, values in more.items():
        into[name].update(values)


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, 0) + value


def _added(counts: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    total = dict(counts)
    _add(total, more)
    return total

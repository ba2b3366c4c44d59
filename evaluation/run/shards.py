"""Shards: a setup's batch split so that no activity runs long, and merged back into the one entry.

Why: measured on this machine the cross-encoder scores 8-9 (question, passage) pairs a second, so a
reranked setup rescoring 30 candidates spends about 3.5 s a question: 1,000 questions held one
activity for about an hour, and a Flex Consumption instance recycled in that hour (scale-in grace,
platform upgrades) threw it all away. ``plan_shards`` cuts each setup's untimed questions into
shards of at most ``shard_seconds`` of work each (default 180 s: a few minutes on one instance, so a
recycle costs minutes), in plan order; a cheap setup (BM25: about a millisecond a question; dense:
one query embedding, about 6 ms) stays one shard, since each shard opens the index and loads its
models again (seconds) and that would cost more than it saves.

A question's cost is the setup's median timed search in the collection's newest run when the caller
has one (``measured_ms``: what a timed search of that setup took, embedding and reranking included,
nothing cached), else ``estimated_seconds`` from what the setup does.

``merge_shards`` joins the entries ``rank_setup(..., questions=shard)`` gave into exactly the entry one
``rank_setup`` over the whole batch gives: the per-question maps in plan order, the counts added up.
Every question is searched alone in a batch (query vectors and pair scores are per question), so
which shard a question is in cannot change its results.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from ..errors import UsageError, shown
from .copying import copied
from .judged import batch_ids
from .kept_times import times_problem
from .one_setup import _PER_QUESTION, failed_entry
from .planned import Plan, PlannedSetup
from .reuse import reused_ids, reused_part

DEFAULT_SHARD_SECONDS = 180.0  # a few minutes of one instance's work per shard (see the module docstring)

# Seconds a question costs a batch, by what the setup does, measured on this machine (2 cores, no VNNI;
# platform-notes: bge-small 174 texts/s, the cross-encoder 8-9 pairs/s on passages of a real corpus,
# bench/bench_scale.py), used when no earlier run measured the setup.
PAIR_SECONDS = 1 / 8.5          # one (question, passage) pair through the cross-encoder
VECTOR_SECONDS = 1 / 174        # one query through an embedding model
KEYWORD_SECONDS = 0.001         # one BM25 query
COLBERT_SECONDS = 0.05          # one query's token vectors and MaxSim over its candidates
REMOTE_SECONDS = 0.3            # one request to Azure AI Search (semantic ranking included)
DEFAULT_CANDIDATES = 30         # rerank_candidates when a setup does not say


def estimated_seconds(setup: PlannedSetup | Mapping[str, Any]) -> float:
    """What one question costs ``setup`` (a plan's setup, or its JSON: ``Setup.to_dict``), from what it does."""
    if isinstance(setup, PlannedSetup):
        setup = {"key": setup.key, "engine": setup.engine, "models": setup.models, "ranker": setup.ranker,
                 "options": setup.options}
    if not isinstance(setup, Mapping):
        raise UsageError(f"a plan's setup is an object (Setup.to_dict), not {shown(setup)}")
    if setup.get("engine") != "embedded":
        return REMOTE_SECONDS
    options, models = setup.get("options") or {}, setup.get("models") or ()
    if not isinstance(options, Mapping) or isinstance(models, (str, bytes)) or not isinstance(models, Sequence):
        raise UsageError(f"setup {shown(setup.get('key'))}: its options must be an object and its models a list "
                         f"(Setup.to_dict), not {shown(options)} and {shown(models)}")
    seconds = KEYWORD_SECONDS + VECTOR_SECONDS * len(models)
    if setup.get("ranker") == "cross-encoder":
        candidates = options.get("rerank_candidates") or DEFAULT_CANDIDATES
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
            raise UsageError(f"setup {shown(setup.get('key'))}: rerank_candidates is {shown(candidates)}, not a "
                             "whole number of candidates from 1")
        seconds += PAIR_SECONDS * candidates
    elif setup.get("ranker") == "colbert":
        seconds += COLBERT_SECONDS
    return seconds


def check_shard_bounds(shard_seconds: float, most_questions: int) -> None:
    """``UsageError`` for a shard size no plan can be cut with: ``plan_shards``' rule, which a run in parts'
    settings (``AppRunSettings``) check when built, before the golden file is read."""
    if not (isinstance(shard_seconds, (int, float)) and math.isfinite(shard_seconds) and shard_seconds > 0):
        raise UsageError(f"a shard's seconds must be a number over 0, not {shard_seconds!r}")
    if isinstance(most_questions, bool) or not isinstance(most_questions, int) or most_questions < 0:
        raise UsageError(f"the most questions a shard holds must be a whole number of 0 (no bound) or more, "
                         f"not {most_questions!r}")


def plan_shards(plan: Plan, *, measured_ms: Mapping[str, float | None] | None = None,
                shard_seconds: float = DEFAULT_SHARD_SECONDS, most_questions: int = 0,
                reused: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, list[list[str]]]:
    """Per setup key, its shards: lists of the ids of its batch's questions (``judged.batch_ids``: the
    untimed ones, and for a setup timed at a fixed count the sample's rest), in plan order, together the
    whole batch but for the questions whose results ``reused`` (``reuse.reusable_ranks``) holds.

    A setup whose batch costs ``c`` seconds a question over ``n`` questions gets
    ``ceil(n * c / shard_seconds)`` shards of near-equal size (sizes differ by at most one), and none
    holds more than ``most_questions`` (0: no bound; the end-to-end test makes shards of 2). A setup
    with no untimed question has one empty shard, so every setup has an entry to merge; one whose every
    untimed question is reused has none (nothing to search: ``merge_shards`` makes its entry from
    ``reused`` alone). A setup the plan's race races (``race.plan_race``) is cut batch by batch, each
    batch of the race's looks (``race.look_questions``) into its own shards in look order, so a round of
    shards searches one batch (``shard_rounds`` says which round each shard is in); a batch with nothing
    left to search has none.
    """
    check_shard_bounds(shard_seconds, most_questions)
    _check_mapping(measured_ms, "measured_ms", "setup key -> a median search in ms (measured_times)")
    _check_mapping(reused, "reused", "setup key -> its reusable ranks (reuse.reusable_ranks)")
    for key, value in (measured_ms or {}).items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise UsageError(f"measured_ms[{shown(key)}] is {shown(value)}: a setup's median search in ms is a "
                             "number (or None: not measured)")
    looks = len(plan.race.looks) if plan.race is not None else 0
    shards: dict[str, list[list[str]]] = {}
    for setup in plan.setups:
        key = setup.key
        _check_reused((reused or {}).get(key), key)
        taken = set(reused_ids(plan, key, (reused or {}).get(key)))
        measured = (measured_ms or {}).get(key)
        seconds = (measured / 1000 if isinstance(measured, (int, float)) and math.isfinite(measured) and measured > 0
                   else estimated_seconds(setup))  # a time that is no measurement (0, inf, NaN): the estimate
        if key in plan.raced_keys:
            shards[key] = [shard for look in range(1, looks + 1)
                           for shard in _cut([qid for qid in look_questions(plan, key, look) if qid not in taken],
                                             seconds, shard_seconds, most_questions) if shard]
            continue
        batch = [qid for qid in batch_ids(plan, key) if qid not in taken]
        if taken and not batch:
            shards[key] = []
            continue
        shards[key] = _cut(batch, seconds, shard_seconds, most_questions)
    return shards


def _cut(batch: Sequence[str], seconds: float, shard_seconds: float, most_questions: int) -> list[list[str]]:
    """``batch`` in shards of at most ``shard_seconds`` of work and ``most_questions`` questions (see
    ``plan_shards``); one empty shard for an empty batch."""
    count = max(1, math.ceil(len(batch) * seconds / shard_seconds - 1e-9))
    if most_questions:
        count = max(count, math.ceil(len(batch) / most_questions))
    return _split(batch, min(count, max(1, len(batch))))


def look_questions(plan: Plan, setup_key: str, look: int) -> list[str]:
    """The questions ``setup_key`` searches in the race's batch before look ``look`` (1-based): those of
    its batch (``judged.batch_ids``: not searched by its timed pass) at positions ``looks[look - 2]`` to
    ``looks[look - 1]`` of the race's order (``race.race_order``), in plan order."""
    race = plan.race
    if race is None:
        raise UsageError(f"the plan of run {plan.run_id} races no setup, so it has no looks")
    start = race.looks[look - 2] if look > 1 else 0
    wanted = set(race.order[start:race.looks[look - 1]])
    return [qid for qid in batch_ids(plan, setup_key) if qid in wanted]


def shard_rounds(plan: Plan, shards: Mapping[str, Sequence[Sequence[str]]]) -> dict[str, list[int]]:
    """Per setup key, the round (from 1) each of its shards is searched in: a raced setup's shard in the
    round of the race's look its questions are drawn by, every other shard in round 1."""
    raced = plan.raced_keys
    looks = plan.race.looks if plan.race is not None else ()
    position = {qid: n for n, qid in enumerate(plan.race.order if plan.race is not None else ())}
    rounds = {}
    for key, parts in shards.items():
        if key not in raced:
            rounds[key] = [1] * len(parts)
            continue
        rounds[key] = [next(n for n, drawn in enumerate(looks, start=1) if position[part[0]] < drawn) if part else 1
                       for part in parts]
    return rounds


def _split(ids: Sequence[str], count: int) -> list[list[str]]:
    """``ids`` in ``count`` runs in order, the first ``len % count`` one longer."""
    size, longer = divmod(len(ids), count)
    out, start = [], 0
    for n in range(count):
        end = start + size + (1 if n < longer else 0)
        out.append(list(ids[start:end]))
        start = end
    return out


def measured_times(report: Mapping[str, Any] | None) -> dict[str, float]:
    """Per setup key, the median timed search (ms) in ``report`` (a collection's newest run): what
    ``plan_shards`` sizes shards from. Setups that failed, were never timed, or whose times cannot be
    believed (``kept_times.times_problem``) are left out."""
    found = {}
    for setup in (report or {}).get("setups") or []:
        if not isinstance(setup, dict) or setup.get("error") or times_problem(setup) is not None:
            continue  # times that are no measurement (kept_times) would size shards from nothing
        value = setup["summary"]["median_ms"]
        if value > 0:
            found[str(setup.get("key"))] = float(value)
    return found


def merge_shards(plan: Plan, setup_key: str, parts: Sequence[Mapping[str, Any]],
                 reused: Mapping[str, Any] | None = None, *, owned: bool = False,
                 through: Sequence[str] | None = None) -> dict[str, Any]:
    """One ``rank_setup`` entry from its shards' entries (``parts``, in shard order or any order), and
    from ``reused`` (the setup's ``reuse.reusable_ranks``, as given to ``plan_shards``) for the
    questions no shard searched: their results judged again, named in ``ranked_in``.

    Exactly what one ``rank_setup`` over the whole batch gives when every shard ranked: the
    per-question maps in plan order, ``cache``, ``requests`` and ``retries`` added up. A shard whose
    search failed makes the setup failed with that error (the first, in shard order) and the counts of
    every shard. Shards that do not cover the batch exactly once are an error: a question ranked
    twice or never would change the setup's numbers without a word. ``owned``: ``parts`` and ``reused``
    are the caller's to give away (decoded from working files for this call), so the entry takes their
    per-question values as they are instead of copies (a warm save's 36,000 reused results at 5,000
    questions: ``bench/bench_app_scale.py``). ``through``: the part of the batch the shards cover, when a
    race stopped the setup before its last batch (``race.raced_through``): only those are merged and checked.
    """
    if not isinstance(setup_key, str):
        raise UsageError(f"a setup key is text, as the plan's setups name them, not {shown(setup_key)}")
    plan.setup(setup_key)
    if parts is None:
        parts = []
    if isinstance(parts, (str, bytes, Mapping)) or not isinstance(parts, Sequence):
        raise UsageError(f"the shards of {setup_key} are a list of rank_setup entries, not {shown(parts)}")
    for number, part in enumerate(parts, start=1):
        problem = _part_problem(part)
        if problem is not None:
            raise UsageError(f"shard {number} of {len(parts)} of {setup_key} is not an entry rank_setup gives "
                             f"({problem}); rank that shard again")
    _check_reused(reused, setup_key)
    batch = batch_ids(plan, setup_key)
    if through is not None:
        kept = set(through)
        batch = [qid for qid in batch if qid in kept]
    in_batch = set(batch)
    taken = [qid for qid in reused_ids(plan, setup_key, reused) if qid in in_batch]
    if taken:
        assert reused is not None, "reused_ids takes ids only from reused results"
        parts = [*parts, reused_part(plan, setup_key, reused, taken)]
    if not parts:
        raise UsageError(f"setup {setup_key} has no shards to merge")
    counts = _added(parts, ("requests", "retries"))
    failed = next((p for p in parts if p.get("error") is not None), None)
    if failed is not None:
        return failed_entry(plan, setup_key, failed["error"], counts=counts or None)
    seen = [qid for p in parts for qid in p["ranks"]]
    if sorted(seen) != sorted(batch):
        twice = sorted({q for q in seen if seen.count(q) > 1})
        never = sorted(set(batch) - set(seen))
        raise UsageError(f"the shards of {setup_key} do not cover its questions once each: "
                         f"twice {twice}, never {never}, not in its batch {sorted(set(seen) - set(batch))}")
    keep = (lambda value: value) if owned else copied
    entry = keep({k: v for k, v in parts[0].items() if k not in _PER_QUESTION})
    for name in _PER_QUESTION:
        merged = {qid: value for p in parts for qid, value in p[name].items()}
        entry[name] = keep({qid: merged[qid] for qid in batch})
    ranked_in = {qid: run for p in parts for qid, run in (p.get("ranked_in") or {}).items()}
    entry.pop("ranked_in", None)
    if ranked_in:
        entry["ranked_in"] = {qid: ranked_in[qid] for qid in batch if qid in ranked_in}
    cache = _added([p["cache"] for p in parts if isinstance(p.get("cache"), dict)], None)
    if cache:
        entry["cache"] = cache
    entry.update(counts)
    return entry


# -- what is read, checked first: a damaged working file is a sentence, never a KeyError -------------------

_COUNTS = ("requests", "retries")


def _check_mapping(value: Any, name: str, holds: str) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise UsageError(f"{name} is an object ({holds}), not {shown(value)}")


def _check_reused(reused: Any, setup_key: str) -> None:
    """``reused`` is None or one setup's ``reuse.reusable_ranks``: its results and the run each came from."""
    if reused is None:
        return
    problem = None
    if (not isinstance(reused, Mapping) or not isinstance(reused.get("results"), Mapping)
            or not isinstance(reused.get("ranked_in"), Mapping) or "rank_state" not in reused):
        problem = f'not an object with "rank_state", and "results" and "ranked_in" by question id, but {shown(reused)}'
    else:
        unnamed = sorted(map(str, set(reused["results"]) - set(reused["ranked_in"])))
        odd = next((qid for qid, rows in reused["results"].items() if not _result_rows(rows)), None)
        if unnamed:
            problem = f'"ranked_in" names no run for {", ".join(unnamed[:5])}'
        elif odd is not None:
            problem = (f"the results of {shown(odd)} are not result rows ([id, document id, page, score], as a "
                       "report keeps them)")
    if problem is not None:
        raise UsageError(f"the reused results of {setup_key} are not what reuse.reusable_ranks gives ({problem}); "
                         "plan the run again")


def _result_rows(rows: Any) -> bool:
    """Whether ``rows`` are a question's results as a report keeps them (``Hit.to_row``)."""
    return isinstance(rows, list) and all(
        isinstance(row, list) and len(row) >= 4 and isinstance(row[0], str) and isinstance(row[1], str)
        and (row[2] is None or (isinstance(row[2], int) and not isinstance(row[2], bool)))
        and isinstance(row[3], (int, float)) and not isinstance(row[3], bool) and math.isfinite(row[3])
        for row in rows)


def _part_problem(part: Any) -> str | None:
    """What is wrong with a shard's entry, in a few words; None when merging can read it."""
    if not isinstance(part, Mapping):
        return f"it is {shown(part)}"
    for name in _COUNTS:
        if name in part and (isinstance(part[name], bool) or not isinstance(part[name], int) or part[name] < 0):
            return f'its "{name}" is {shown(part[name])}, not a count'
    cache = part.get("cache")
    if cache is not None and not (isinstance(cache, Mapping) and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in cache.values())):
        return f'its "cache" is {shown(cache)}, not counts by name'
    if part.get("error") is not None:
        return None if isinstance(part["error"], str) else f'its "error" is {shown(part["error"])}, not a sentence'
    ranks = part.get("ranks")
    if not isinstance(ranks, Mapping):
        return f'its "ranks" is {shown(ranks)}, not an object of question ids'
    for name in _PER_QUESTION:
        held = part.get(name)
        if not isinstance(held, Mapping):
            return f'its "{name}" is {shown(held)}, not an object of question ids'
        if set(held) != set(ranks):
            odd = sorted(map(str, set(held) ^ set(ranks)))
            return f'its "{name}" and "ranks" name other questions ({", ".join(odd[:5])})'
    ranked_in = part.get("ranked_in")
    if ranked_in is not None and not isinstance(ranked_in, Mapping):
        return f'its "ranked_in" is {shown(ranked_in)}, not an object of question ids'
    return None


def _added(parts: Sequence[Mapping[str, Any]], names: Sequence[str] | None) -> dict[str, int]:
    """Each count summed over the parts that have it (``names``: only those), in first-seen order."""
    keys = list(dict.fromkeys(k for p in parts for k in p if names is None or k in names))
    return {k: sum(int(p.get(k, 0)) for p in parts if k in p) for k in keys}

"""Ranks per index state: when a save changes a few questions, the others' results may come from the
run that ranked them, instead of searching them again.

Why (``bench/bench_app_scale.py``, profiled by step): with times reused, a warm save still searched
every question of every setup again, from cached vectors and pair scores: BM25, the dense matmul,
fusion, the hits and their judging, per question, per setup. That is work in proportion to the
golden file, not to what changed, and it kept a warm save at 0.31-0.45 of the cold run's
activity-seconds. A question's results depend only on its text and on what ``rank_state`` hashes:
the target as the plan describes it (an embedded index's fingerprint, which covers the corpus
bytes, the chunking, the models and their files; the cross-encoder and the candidate counts), the
setup, the software that ranks (``ranking_software``: the tokenising and scoring packages' versions,
numpy's, and the sha256 of the engine's own source, so a change to a tie rule is a new state) and the
depth. So a question whose text (its sha256) the newest run ranked under the same ``rank_state``
takes that run's results, and is judged again against its current ``expected`` (an edited label is
honoured; judging is microseconds a question).

Only embedded targets: an Azure AI Search index's state (its definition's ETag and a document count)
does not change when a document's text does, so its results are always searched live. Not at the
``evidence`` grain: judging there reads each hit's text, which a report never keeps. Every entry
ranked live keeps ``rank_state``; a reused question is named in the entry's ``ranked_in`` (question
id -> the run that searched it live: reuse of reuse keeps the first run's id, since the state is the
same), which the page and the text show as "ranked in run <id>, same index state".
``EVALUATION_RETIME=always`` (the app) searches and times everything live.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..golden import Question, question_sha256
from .judged import PER_QUESTION, batch_ids, judged_rows, timed_ids
from .planned import Plan

REUSED_ENGINES = ("embedded",)  # engines whose target description pins every byte a result depends on


@functools.lru_cache(maxsize=1)
def ranking_software() -> dict[str, Any]:
    """The versions of what turns a question into results: the engine's packages, numpy, and the
    sha256 of the engine's own Python source (``evaluation/engine``, ``evaluation/target.py``)."""
    import importlib.metadata

    from ..engine.identity import software_versions

    here = Path(__file__).resolve().parent.parent
    files = sorted((here / "engine").glob("*.py")) + [here / "target.py"]
    code = hashlib.sha256()
    for path in files:
        code.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return {**software_versions(), "numpy": importlib.metadata.version("numpy"), "engine_code": code.hexdigest()}


def rank_state(plan: Plan, setup_key: str) -> str | None:
    """The sha256 of what decides ``setup_key``'s results in this plan (see the module docstring);
    None for a setup whose results are never reused (not an embedded target's)."""
    setup = plan.setup(setup_key)
    if setup.engine not in REUSED_ENGINES:
        return None
    depth = plan.settings.depth
    described = {"target": plan.targets.get(setup.target), "setup": setup.to_json(), "software": ranking_software(),
                 "depth": int(depth) if isinstance(depth, (int, float)) and not isinstance(depth, bool) else depth}
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def reusable_ranks(plan: Plan, earlier: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Per setup key of ``plan``, the results ``earlier`` (a report) has for this plan's questions under
    the same ``rank_state``: ``{"rank_state", "results": {question id: rows}, "ranked_in": {question id:
    run id}}``, the questions matched by the sha256 of their text. Setups with none are left out."""
    if not isinstance(earlier, Mapping) or plan.settings.by == "evidence":
        return {}
    earlier_id = str(earlier.get("id"))
    by_sha: dict[str, str] = {}
    for row in earlier.get("questions") or []:
        if isinstance(row, Mapping) and isinstance(row.get("sha256"), str):
            by_sha.setdefault(row["sha256"], str(row.get("id")))
    by_key = {s.get("key"): s for s in earlier.get("setups") or [] if isinstance(s, Mapping)}
    found = {}
    shas = [(question.id, question_sha256(question.question)) for question in plan.questions]
    for setup in plan.setups:
        entry = by_key.get(setup.key)
        state = rank_state(plan, setup.key)
        if (state is None or not entry or entry.get("error") is not None or entry.get("rank_state") != state
                or not isinstance(entry.get("results"), Mapping)):
            continue
        results, origin = entry["results"], entry.get("ranked_in") or {}
        reused: dict[str, Any] = {}
        ranked_in: dict[str, str] = {}
        for qid, sha in shas:
            then = by_sha.get(sha)
            if qid is not None and then is not None and isinstance(results.get(then), list):
                reused[qid] = results[then]
                ranked_in[qid] = str(origin.get(then) or earlier_id)
        if reused:
            found[setup.key] = {"rank_state": state, "results": reused, "ranked_in": ranked_in}
    return found


def reused_ids(plan: Plan, setup_key: str, reused: Mapping[str, Any] | None) -> list[str]:
    """The questions of ``setup_key``'s batch (``judged.batch_ids``, plan order) whose results ``reused``
    (the setup's ``reusable_ranks``) holds: the ones ``plan_shards`` leaves out of the setup's shards and
    ``merge_shards`` takes from here."""
    held = (reused or {}).get("results") or {}
    return [qid for qid in batch_ids(plan, setup_key) if qid in held]


def reused_part(plan: Plan, setup_key: str, reused: Mapping[str, Any],
                question_ids: Sequence[str]) -> dict[str, Any]:
    """What ``rank_setup(plan, setup_key, questions=question_ids)`` gives, from ``reused``
    (``reusable_ranks``' answer for the setup) without a search: the results judged again against each
    question's current expected ids, and ``ranked_in`` naming the run that searched each one."""
    setup = plan.setup(setup_key)
    wanted = set(question_ids)
    questions: list[Question] = plan.questions_for(wanted)
    absent = sorted(wanted - set(reused["results"]))
    if absent or len(questions) != len(wanted):
        raise ValueError(f"setup {setup_key} has no reused results for {', '.join(absent) or 'some questions'}")
    rows = [reused["results"][q.id] for q in questions]
    return {**setup.to_json(), **judged_rows(questions, rows, plan.rule), "times_ms": [],
            "error": None, "summary": None, "rank": None, "neighbours": [], "versus_top": None,
            "rank_state": reused["rank_state"], "ranked_in": {q.id: reused["ranked_in"][q.id] for q in questions}}


def reused_timing(plan: Plan, setup_key: str, times: Mapping[str, Any] | None,
                  ranks: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What ``time_setups`` gives for a setup whose times are reused (``times``: ``reusable_times``'
    answer for it) and whose every sampled question's results are reused too (``ranks``), with nothing
    searched, so the setup needs no timed pass at all; None when either is missing."""
    sample = timed_ids(plan, setup_key)
    if not times or not ranks or any(qid not in ranks["results"] for qid in sample):
        return None
    part = reused_part(plan, setup_key, ranks, sample)
    found = {"times_ms": list(times["times_ms"]), "judged": {name: part[name] for name in PER_QUESTION},
             "time_state": times["time_state"], "timed_in": times["timed_in"], "ranked_in": part["ranked_in"]}
    if times.get("time_pass"):  # setups reused from one side-by-side pass still compare in pairs
        found["time_pass"] = times["time_pass"]
    return found

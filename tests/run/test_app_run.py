"""A run done in parts (``run.app_run``): ``plan_app_run`` decides what a save reuses from the newest
report and what is left to search, and ``join_app_run`` joins what the parts kept into the report.

The real engine on the shipped sample, indexed with the ``hash`` embedder (no model runs, no Azure):
a keyword, a dense and a hybrid setup, each shard ranked and each unsettled setup timed the way the
Function App's activities do it, between the two calls.
"""
from __future__ import annotations

import copy
import itertools
import json

import pytest

from evaluation.engine.index import IndexSettings, build_index, open_index
from evaluation.engine.target import EmbeddedTarget
from evaluation.errors import UsageError
from evaluation.run import AppPlan, join_app_run, plan_app_run, rank_setup, time_setups
from conftest import SAMPLES
from fakes import through_json, write_golden
from evaluation.run.plan import PlanContext

KEYS = ["local.keyword.bm25", "local.dense.hash", "local.hybrid.hash"]  # plan order
ROWS = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()][:10]
COLD_AT, WARM_AT = "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hash-index") / "index"
    build_index(SAMPLES / "corpus.jsonl", folder, IndexSettings(models=("hash",)))
    return EmbeddedTarget(open_index(folder), cross_encoder=False, cache=False)


def planned(target, folder, rows=ROWS, *, run_id="run-warm", created_at=WARM_AT, **options) -> AppPlan:
    """``plan_app_run`` as the planning activity calls it: 3 timed questions, shards of at most 3."""
    options = {"most_questions": 3, **options}
    return plan_app_run(target, write_golden(folder, rows), only=KEYS, timed=3,
                        context=PlanContext(run_id=run_id, created_at=created_at), **options)


def ranked(target, app: AppPlan) -> dict[str, list[dict]]:
    """Every shard of every setup ranked, as ``rank_shard`` keeps each one (through JSON)."""
    plan = through_json(app.plan)
    return {key: [through_json(rank_setup(target, plan, key, questions=ids)) for ids in shards]
            for key, shards in app.shards.items()}


def timed(target, app: AppPlan) -> dict[str, dict]:
    """Every setup's timed pass but the settled ones', side by side as ``time_side_by_side`` keeps them (same
    ticks each run)."""
    ticks = itertools.count()
    keys = [key for key in app.shards if key not in app.settled]
    return through_json(time_setups({target.name: target}, through_json(app.plan), keys,
                                    reused=app.reused_times, clock=lambda: next(ticks) * 0.001))


def joined(target, app: AppPlan, **given):
    """``join_app_run`` of everything the parts kept, as ``save_report`` passes it (``given`` over it)."""
    parts = {"shard_entries": ranked(target, app), "times": timed(target, app),
             "reused_ranks": through_json(app.reused_ranks), "reused_times": through_json(app.reused_times),
             "settled": list(app.settled), **given}
    return join_app_run(through_json(app.plan), **parts)


@pytest.fixture(scope="module")
def cold(target, tmp_path_factory):
    """The collection's newest report: a run with nothing before it."""
    app = planned(target, tmp_path_factory.mktemp("cold"), newest=None, run_id="run-cold", created_at=COLD_AT)
    return through_json(joined(target, app))


def untimed(report) -> list[str]:
    return [r["id"] for r in ROWS if r["id"] not in report["timed_question_ids"]]


def by_key(report) -> dict[str, dict]:
    return {s["key"]: s for s in report["setups"]}


# -- plan_app_run: what a save reuses ---------------------------------------------------------------

def test_the_same_save_again_reuses_every_time_and_result_and_searches_nothing(target, cold, tmp_path):
    app = planned(target, tmp_path, newest=cold)

    assert sorted(app.reused_times) == sorted(app.reused_ranks) == sorted(KEYS)
    assert app.settled == KEYS and app.shards == {key: [] for key in KEYS}  # every question reused


def test_retime_always_reuses_no_time_and_no_result_and_settles_nothing(target, cold, tmp_path):
    app = planned(target, tmp_path, newest=cold, retime="always")

    assert app.reused_times == {} and app.reused_ranks == {} and app.settled == []
    left = untimed(cold)  # 10 questions, 3 timed: 7 searched in shards of at most 3, so 3 + 2 + 2
    assert app.shards == {key: [left[:3], left[3:5], left[5:]] for key in KEYS}


def test_times_older_than_retime_max_days_are_not_reused_and_their_setups_not_settled(target, cold, tmp_path):
    eight_days_on = "2026-12-09T10:00:00Z"

    old = planned(target, tmp_path, newest=cold, created_at=eight_days_on, retime_max_days=7)
    kept = planned(target, tmp_path, newest=cold, created_at=eight_days_on, retime_max_days=9)

    assert old.reused_times == {} and old.settled == []
    assert sorted(old.reused_ranks) == sorted(KEYS)  # results do not age: the same state ranks the same
    assert sorted(kept.reused_times) == sorted(KEYS) and kept.settled == KEYS


def test_settled_lists_only_setups_whose_times_and_every_sampled_questions_results_are_reused(
        target, cold, tmp_path):
    newest = copy.deepcopy(cold)
    sampled = cold["timed_question_ids"][0]
    del by_key(newest)[KEYS[1]]["results"][sampled]  # dense: one sampled question's results not kept
    del by_key(newest)[KEYS[2]]["time_state"]  # hybrid: its times say no state, so are not reused

    app = planned(target, tmp_path, newest=newest)

    assert sorted(app.reused_times) == sorted(KEYS[:2]) and sorted(app.reused_ranks) == sorted(KEYS)
    assert app.settled == [KEYS[0]]  # keyword alone has both its times and its whole sample reused


def test_a_retime_that_is_no_choice_or_a_negative_age_is_refused_naming_what_fits(target, tmp_path):
    with pytest.raises(UsageError, match="retime must be one of when-changed, always, not 'sometimes'"):
        planned(target, tmp_path, newest=None, retime="sometimes")
    with pytest.raises(UsageError, match="retime_max_days must be a number of days, 0 or more, not -1"):
        planned(target, tmp_path, newest=None, retime_max_days=-1)


# -- join_app_run: the parts into the report --------------------------------------------------------

def test_a_joined_warm_save_takes_the_settled_setups_times_and_results_without_a_timed_pass(target, cold, tmp_path):
    changed = untimed(cold)[0]
    rows = [({**r, "question": r["question"] + " (asked again)"} if r["id"] == changed else r) for r in ROWS]
    app = planned(target, tmp_path, rows, newest=cold)
    assert app.settled == KEYS and app.shards == {key: [[changed]] for key in KEYS}

    kept = {"shard_entries": ranked(target, app), "times": {}, "reused_ranks": through_json(app.reused_ranks),
            "reused_times": through_json(app.reused_times), "settled": list(app.settled)}  # settled: no timed pass
    given = copy.deepcopy(kept)
    warm = join_app_run(through_json(app.plan), **kept)
    assert kept == given  # the parts' files are read once and joined, never changed
    live = joined(target, planned(target, tmp_path, rows, newest=cold, retime="always"))

    before, fresh = by_key(cold), by_key(live)
    for setup in warm["setups"]:
        assert setup["error"] is None and setup["timed_in"] == cold["id"]
        assert setup["times_ms"] == before[setup["key"]]["times_ms"]
        assert setup["time_pass"] == before[setup["key"]]["time_pass"]  # one pass of the cold run: still paired
        assert setup["ranked_in"] == {r["id"]: cold["id"] for r in ROWS if r["id"] != changed}
        for name in ("ranks", "results", "ndcg_10"):  # what searching every question again gives
            assert setup[name] == fresh[setup["key"]][name], (setup["key"], name)


def test_a_failed_setup_is_reported_failed_with_its_reason_and_never_picked(target, tmp_path):
    app = planned(target, tmp_path, newest=None)
    shard_entries, times = ranked(target, app), timed(target, app)
    best = joined(target, app, shard_entries=shard_entries, times=times)["picks"]["finds_the_most"]
    why = "the timed pass failed: the instance was recycled"
    kept = {**shard_entries, best: shard_entries[best][:1]}  # its other shards' activities never kept theirs

    report = join_app_run(through_json(app.plan), shard_entries=kept, times=times, failures={best: why})

    failed = by_key(report)[best]
    assert failed["error"] == why and failed["rank"] is None
    assert best not in report["picks"].values() and report["picks"]["finds_the_most"] is not None
    assert sorted(s["key"] for s in report["setups"] if s["error"] is None) == sorted(set(KEYS) - {best})


def test_a_setup_whose_timed_pass_never_ran_is_failed_saying_so(target, tmp_path):
    app = planned(target, tmp_path, newest=None)
    times = timed(target, app)

    report = join_app_run(through_json(app.plan), shard_entries=ranked(target, app),
                          times={**times, KEYS[0]: None})

    assert by_key(report)[KEYS[0]]["error"] == "its timed pass never ran"
    assert KEYS[0] not in report["picks"].values()


def test_joined_shards_give_the_report_one_unsharded_entry_per_setup_gives(target, tmp_path):
    app = planned(target, tmp_path, newest=None, most_questions=2)
    assert all(len(shards) == 4 for shards in app.shards.values())  # 7 untimed questions: 2 + 2 + 2 + 1
    plan, times = through_json(app.plan), timed(target, app)

    sharded = join_app_run(plan, shard_entries={key: parts[::-1] for key, parts in ranked(target, app).items()},
                           times=times)  # shards finish in any order
    whole = join_app_run(plan, shard_entries={key: [through_json(rank_setup(target, plan, key))] for key in KEYS},
                         times=times)

    assert [s["error"] for s in whole["setups"]] == [None] * 3
    assert json.dumps(sharded, sort_keys=True) == json.dumps(whole, sort_keys=True)


@pytest.mark.parametrize("save", ["cold", "warm", "warm, a sampled question changed"])
def test_the_save_joins_the_bytes_its_plain_steps_give(target, cold, tmp_path, monkeypatch, save):
    """The save's quick steps give, byte for byte, the report their plain forms give, which is what
    the save gave before they were made quick (issue 28): copies by ``copy.deepcopy``, every entry
    copied again when finished and assembled, reused rows judged as the hits they were made from, one
    bootstrap drawn per pair."""
    import evaluation.run.assemble as assemble
    import evaluation.run.one_setup as one_setup
    import evaluation.run.reuse as reuse
    import evaluation.run.shards as shards
    import evaluation.scoring.comparison as comparison
    from evaluation.run.judged import judged
    from evaluation.store.runs import report_bytes
    from evaluation.target import Hit

    changed = untimed(cold)[:2] + (cold["timed_question_ids"][:1] if "sampled" in save else [])
    rows = [({**r, "question": r["question"] + " (asked again)"} if r["id"] in changed else r) for r in ROWS]
    app = planned(target, tmp_path, rows, newest=None if save == "cold" else cold)
    assert bool(app.reused_ranks) == (save != "cold") and app.settled == (KEYS if save == "warm" else [])
    kept = {"shard_entries": ranked(target, app), "times": timed(target, app),
            "reused_ranks": through_json(app.reused_ranks), "reused_times": through_json(app.reused_times),
            "settled": list(app.settled)}
    given = copy.deepcopy(kept)
    quick = report_bytes(join_app_run(through_json(app.plan), **kept))
    assert kept == given  # finished and assembled in place, yet what the parts kept is not changed
    # what save_report does with the working files it decoded: the same bytes, nothing copied
    assert report_bytes(join_app_run(through_json(app.plan), **copy.deepcopy(kept), owned=True)) == quick

    for module in (assemble, one_setup, shards):  # reuse's entries start from the setup's own fresh copy
        monkeypatch.setattr(module, "copied", copy.deepcopy)
    import evaluation.run.app_run as app_run  # every entry copied again, as before
    monkeypatch.setattr(app_run, "finish_entries", lambda *args, owned: one_setup.finish_entries(*args))
    monkeypatch.setattr(app_run, "assemble_report", lambda plan, entries,
                        owned: assemble.assemble_report(plan, entries))
    monkeypatch.setattr(reuse, "judged_rows", lambda questions, row_lists, by: judged(questions, [
        [Hit(id=r[0], doc_id=r[1], page=r[2], score=r[3], reranker_score=r[4] if len(r) > 4 else None) for r in found]
        for found in row_lists], by))
    monkeypatch.setattr(comparison, "versus", lambda reference, others, ids, settings: comparison.correct_for_many(
        {o["key"]: comparison.paired(reference, o, ids, settings) for o in others if o["key"] != reference["key"]},
        settings))
    plain = report_bytes(join_app_run(through_json(app.plan), **copy.deepcopy(kept)))

    assert quick == plain

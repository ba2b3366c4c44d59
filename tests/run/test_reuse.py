"""Ranks per index state (``run.reuse``): a warm save takes the results of its unchanged questions from
the run that searched them on the same ranking state, judges them again, and says so; any ingredient
of the state changed, and they are searched live.

The real engine on the shipped sample (keyword setups: no model runs), driven the way the Function App
drives it: plan, shards of what is left, merge with what is reused.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

import evaluation.run.reuse as reuse
from evaluation.store.report_parts import SetupResult
from evaluation.engine.target import EmbeddedTarget
from evaluation.report.notes import ranked_in_note
from evaluation.report.text import render_picks
from evaluation.golden import question_sha256
from evaluation.run import (Plan, join_app_run, merge_shards, plan_app_run, plan_run, plan_shards, rank_setup,
                            rank_state, ranking_software, reusable_ranks, reusable_times, reused_timing,
                            time_setups)
from conftest import SAMPLES
from fakes import ANSWERS, ListTarget, through_json, write_golden
from evaluation.run.plan import PlanContext

KEYWORD = ["local.keyword.bm25", "local.keyword_documents.bm25"]
ROWS = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()][:10]


def app_run(target, folder: Path, rows, *, earlier=None, live=False, **settings):
    """One run the app's way, through the calls its activities make: (report, plan, shards). The plan
    (``plan_app_run``: what ``earlier`` lets it reuse, the shards, the settled setups), each shard
    ranked, each unsettled setup timed, joined (``join_app_run``); every part through JSON, as the
    working files carry it. ``live``: as EVALUATION_RETIME=always."""
    golden = write_golden(folder, rows)
    planned = plan_app_run(target, golden, newest=through_json(earlier) if earlier else None,
                           retime="always" if live else "when-changed", most_questions=3, only=KEYWORD, timed=3,
                           context=PlanContext(run_id=f"run-{folder.name}", created_at="2026-12-01T10:00:00Z"),
                           **settings)
    plan = through_json(planned.plan)
    parts = {key: [through_json(rank_setup(target, plan, key, questions=ids)) for ids in found]
             for key, found in planned.shards.items()}
    timed = through_json(time_setups({target.name: target}, plan, [k for k in parts if k not in planned.settled],
                                     reused=through_json(planned.reused_times)))
    report = join_app_run(plan, shard_entries=parts, times=timed, reused_ranks=through_json(planned.reused_ranks),
                          reused_times=through_json(planned.reused_times), settled=planned.settled)
    return report, plan, planned.shards


@pytest.fixture
def target(sample_index):
    return EmbeddedTarget(sample_index, cache=False)


def folder(tmp_path, name):
    path = tmp_path / name
    path.mkdir()
    return path


def reworded(rows, n):
    return [({**r, "question": r["question"] + " (asked again)"} if i == n else r) for i, r in enumerate(rows)]


def outside_sample(report):
    return next(i for i, r in enumerate(ROWS) if r["id"] not in report["timed_question_ids"])


def test_a_warm_run_searches_only_the_changed_question_and_takes_the_others_results(target, tmp_path):
    cold, _, _ = app_run(target, folder(tmp_path, "a"), ROWS)
    n = outside_sample(cold)
    rows = reworded(ROWS, n)
    warm, plan, shards = app_run(target, folder(tmp_path, "b"), rows, earlier=cold)
    live, _, _ = app_run(target, folder(tmp_path, "c"), rows, earlier=cold, live=True)

    changed = ROWS[n]["id"]
    assert all(ids == [[changed]] for ids in shards.values())  # one shard of the one changed question
    before, fresh = {s["key"]: s for s in cold["setups"]}, {s["key"]: s for s in live["setups"]}
    for setup in warm["setups"]:
        others = [r["id"] for r in ROWS if r["id"] != changed]
        assert setup["ranked_in"] == {q: cold["id"] for q in others}  # 9 of 10, each named by run
        assert setup["timed_in"] == cold["id"]  # settled: times and the sample's results reused
        for name in ("ranks", "ndcg_10", "results"):  # the same as searching every question again
            assert setup[name] == fresh[setup["key"]][name]
        assert setup["times_ms"] == before[setup["key"]]["times_ms"]
        assert "ranked_in" not in fresh[setup["key"]] and "timed_in" not in fresh[setup["key"]]
    # the pick by what is found is the same; the two by time may differ, as live times do from run to run
    assert warm["picks"]["finds_the_most"] == live["picks"]["finds_the_most"]


def test_a_reused_question_is_judged_against_its_expected_ids_now(target, tmp_path):
    cold, _, _ = app_run(target, folder(tmp_path, "a"), ROWS)
    key = KEYWORD[0]
    entry = next(s for s in cold["setups"] if s["key"] == key)
    n = outside_sample(cold)
    qid = ROWS[n]["id"]
    documents = [row[1] for row in entry["results"][qid]]
    other = next(d for d in documents if d not in ROWS[n]["expected"])  # now the only one expected
    relabelled = [({**r, "expected": [other]} if i == n else r) for i, r in enumerate(ROWS)]

    warm, _, shards = app_run(target, folder(tmp_path, "b"), relabelled, earlier=cold)

    assert shards[key] == []  # same text: nothing to search
    setup = next(s for s in warm["setups"] if s["key"] == key)
    assert setup["ranked_in"][qid] == cold["id"] and setup["results"][qid] == entry["results"][qid]
    assert setup["ranks"][qid] == documents.index(other) + 1 != entry["ranks"][qid]  # judged again, not copied


def test_reuse_of_reuse_names_the_run_that_searched_live(target, tmp_path):
    first, _, _ = app_run(target, folder(tmp_path, "a"), ROWS)
    second, _, _ = app_run(target, folder(tmp_path, "b"), reworded(ROWS, outside_sample(first)), earlier=first)
    third, _, _ = app_run(target, folder(tmp_path, "c"), ROWS, earlier=second)

    changed = ROWS[outside_sample(first)]["id"]
    for setup in third["setups"]:
        # the others: searched in first, reused in second, so named first; the reworded question went
        # back to its first words, which second never searched: searched live again; and second's
        # times were reused, which are never reused again, so the sample was timed (searched) live
        assert "timed_in" not in setup
        assert setup["ranked_in"] == {r["id"]: first["id"] for r in ROWS
                                      if r["id"] != changed and r["id"] not in third["timed_question_ids"]}


# -- the state: every ingredient --------------------------------------------------------------------

@pytest.fixture
def cold_and_plan(target, tmp_path):
    cold, plan, _ = app_run(target, folder(tmp_path, "a"), ROWS)
    return cold, plan


def test_the_same_state_reuses_every_question(cold_and_plan):
    cold, plan = cold_and_plan
    found = reusable_ranks(plan, cold)
    assert sorted(found) == KEYWORD and all(len(f["results"]) == len(ROWS) for f in found.values())


@pytest.mark.parametrize("change", [
    "depth", "fingerprint", "chunking", "setup options", "software version", "engine code", "numpy"])
def test_a_changed_ingredient_of_the_state_reuses_nothing(cold_and_plan, monkeypatch, change):
    cold, plan = cold_and_plan
    kept = plan.to_json()  # changed as its working file would be
    if change == "depth":
        kept["settings"]["depth"] = 30
    elif change == "fingerprint":
        kept["targets"]["local"]["fingerprint"] = "0" * 64
    elif change == "chunking":
        kept["targets"]["local"]["chunking"] = {**kept["targets"]["local"]["chunking"], "size": 1}
    elif change == "setup options":
        for setup in kept["setups"]:
            setup["options"] = {**setup["options"], "rrf_k": 61}
    else:
        software = dict(ranking_software())
        name = {"software version": "bm25s", "engine code": "engine_code", "numpy": "numpy"}[change]
        assert name in software
        software[name] = "changed"
        monkeypatch.setattr(reuse, "ranking_software", lambda: software)

    plan = Plan.from_json(kept)
    assert reusable_ranks(plan, cold) == {}
    for entry in cold["setups"]:
        assert rank_state(plan, entry["key"]) != entry["rank_state"]


def test_each_package_that_ranks_is_part_of_the_state(cold_and_plan, monkeypatch):
    cold, plan = cold_and_plan
    for name in ("bm25s", "PyStemmer", "tokenizers", "onnxruntime", "numpy", "engine_code"):
        software = {**ranking_software(), name: "other"}
        monkeypatch.setattr(reuse, "ranking_software", lambda software=software: software)
        assert reusable_ranks(plan, cold) == {}, name


def test_the_engine_code_in_the_state_is_the_sha256_of_the_engines_source():
    package = Path(reuse.__file__).resolve().parent.parent
    files = sorted((package / "engine").glob("*.py")) + [package / "target.py"]
    expected = hashlib.sha256(b"".join(p.name.encode() + b"\0" + p.read_bytes() + b"\0" for p in files)).hexdigest()
    assert len(files) > 10 and ranking_software()["engine_code"] == expected


def test_a_question_asked_in_other_words_is_not_reused_and_the_others_are(cold_and_plan):
    cold, plan = cold_and_plan
    kept = plan.to_json()
    kept["questions"][4]["question"] += " (asked again)"  # its text changed, so its sha256
    plan = Plan.from_json(kept)
    found = reusable_ranks(plan, cold)
    assert all(plan.questions[4].id not in f["results"] and len(f["results"]) == len(ROWS) - 1
               for f in found.values())


def test_questions_are_matched_by_their_text_not_their_id(cold_and_plan):
    cold, plan = cold_and_plan
    kept = plan.to_json()
    kept["questions"] = list(reversed(kept["questions"]))
    for n, question in enumerate(kept["questions"]):
        question["id"] = f"renumbered-{n}"  # ids given by line, after a line was inserted at the top
    kept["timed_question_ids"] = []
    plan = Plan.from_json(kept)
    found = reusable_ranks(plan, cold)
    by_sha = {q["sha256"]: q["id"] for q in cold["questions"]}
    for key, f in found.items():
        entry = next(s for s in cold["setups"] if s["key"] == key)
        assert {q.id: f["results"][q.id] for q in plan.questions} == {
            q.id: entry["results"][by_sha[question_sha256(q.question)]] for q in plan.questions}


def test_nothing_is_reused_at_the_evidence_grain_which_reads_the_hits_text(cold_and_plan):
    cold, plan = cold_and_plan
    assert reusable_ranks(replace(plan, settings=replace(plan.settings, by="evidence")), cold) == {}


def test_an_earlier_entry_that_failed_or_predates_the_state_is_not_reused(cold_and_plan):
    cold, plan = cold_and_plan
    failed, older = through_json(cold), through_json(cold)
    failed["setups"][0]["error"] = "the index went away"
    del older["setups"][0]["rank_state"]
    assert sorted(reusable_ranks(plan, failed)) == sorted(reusable_ranks(plan, older)) == [
        s["key"] for s in cold["setups"][1:]]


def test_a_target_of_another_engine_is_always_searched_live(tmp_path):
    """An Azure AI Search index's state does not change when a document's text does."""
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    rows = [{"id": "a", "question": "where is alpha", "expected": ["alpha"]}]
    plan = through_json(plan_run(target, write_golden(tmp_path, rows),
                                 context=PlanContext(created_at="2026-12-01T10:00:00Z")))
    entry = rank_setup(target, plan, plan.setups[0].key)
    assert rank_state(plan, plan.setups[0].key) is None and "rank_state" not in entry
    kept = plan.to_json()
    report = {"id": "r0", "questions": kept["questions"],
              "setups": [{**s, "rank_state": None, "error": None, "results": {"a": []}} for s in kept["setups"]]}
    assert reusable_ranks(plan, report) == {}


# -- shards and timing ------------------------------------------------------------------------------

def test_shards_leave_out_the_reused_questions_and_a_setup_with_none_left_has_no_shard(cold_and_plan):
    cold, plan = cold_and_plan
    found = reusable_ranks(plan, cold)
    untimed = [q.id for q in plan.questions if q.id not in plan.timed_question_ids]
    partly = {KEYWORD[0]: {**found[KEYWORD[0]], "results": {q: r for q, r in found[KEYWORD[0]]["results"].items()
                                                              if q != untimed[2]}}}
    shards = plan_shards(plan, reused={**found, **partly}, most_questions=3)
    assert shards == {KEYWORD[0]: [[untimed[2]]], KEYWORD[1]: []}
    # nothing reused: 10 questions, 3 timed, 7 in shards of at most 3: 3 + 2 + 2
    assert plan_shards(plan, most_questions=3)[KEYWORD[1]] == [untimed[:3], untimed[3:5], untimed[5:]]


def test_a_settled_setup_needs_no_timed_pass_unless_a_sampled_question_changed(cold_and_plan):
    cold, plan = cold_and_plan
    times, ranks = reusable_times(plan, cold, max_age_days=7), reusable_ranks(plan, cold)
    key = KEYWORD[0]
    timing = reused_timing(plan, key, times[key], ranks[key])
    entry = next(s for s in cold["setups"] if s["key"] == key)
    assert timing["times_ms"] == entry["times_ms"] and timing["timed_in"] == cold["id"]
    assert timing["judged"]["results"] == {q: entry["results"][q] for q in plan.timed_question_ids}
    sampled = plan.timed_question_ids[0]
    without = {**ranks[key], "results": {q: r for q, r in ranks[key]["results"].items() if q != sampled}}
    assert reused_timing(plan, key, times[key], without) is None
    assert reused_timing(plan, key, None, ranks[key]) is None


def test_merged_with_reuse_equals_merged_from_searches_but_for_saying_so(target, cold_and_plan):
    cold, plan = cold_and_plan
    key = KEYWORD[1]
    found = reusable_ranks(plan, cold)[key]
    live = merge_shards(plan, key, [through_json(rank_setup(target, plan, key))])
    reused = merge_shards(plan, key, [], found)
    assert set(reused.pop("ranked_in").values()) == {cold["id"]}
    assert set(live.pop("cache").values()) == {0}  # what batches read or computed: nothing was batched
    assert json.dumps(reused, sort_keys=True) == json.dumps(live, sort_keys=True)  # bit for bit


def test_the_report_text_and_page_say_where_the_results_were_ranked(target, tmp_path):
    cold, _, _ = app_run(target, folder(tmp_path, "a"), ROWS)
    warm, _, _ = app_run(target, folder(tmp_path, "b"), reworded(ROWS, outside_sample(cold)), earlier=cold)
    from evaluation.report.html import render_html

    said = f"ranked in run {cold['id']}, same index state: 9 of 10 questions (the other 1 searched in this run)"
    assert all(ranked_in_note(SetupResult.from_json(s)) == said for s in warm["setups"])
    assert said in " ".join(render_picks(warm).split()) and said in render_html(warm)  # the text wraps at 100
    assert ranked_in_note(SetupResult.from_json(cold["setups"][0])) is None


def test_the_note_counts_each_run_when_results_come_from_several():
    setup = SetupResult.from_json({"key": "s", "ranks": dict.fromkeys("abcd", 1),
                                   "ranked_in": {"a": "r1", "b": "r1", "c": "r2"}})
    assert ranked_in_note(setup) == ("ranked in run r1 (2 of 4), run r2 (1 of 4), same index state: 3 of 4 "
                                     "questions (the other 1 searched in this run)")

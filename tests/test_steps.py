"""The three steps of a run (plan_run, run_setup, assemble_report), each crossing a JSON boundary as a
Durable activity's input and output do, give the report evaluate() gives."""
from __future__ import annotations

import hashlib
import itertools
import math
import json
from datetime import datetime, timezone

import pytest

from evaluation import assemble_report, evaluate, plan_run, run_setup
from evaluation.errors import UsageError
from evaluation.steps import failed_entry

from fakes import ANSWERS, ListTarget, write_golden

MOMENT = datetime(2026, 11, 30, 1, 2, 3, 456000, tzinfo=timezone.utc)


def ticking_clock(step_s: float = 0.001):
    """A clock that moves ``step_s`` a call, so two runs measure exactly the same times."""
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


def through_json(value):
    return json.loads(json.dumps(value))


def steps_report(targets, golden, **options):
    by_name = {t.name: t for t in targets}
    plan = through_json(plan_run(targets, golden, created_at=MOMENT, run_id="run-1", **options))
    entries = [through_json(run_setup(by_name[s["target"]], plan, s["key"], clock=ticking_clock()))
               for s in through_json(plan)["setups"]]
    return through_json(assemble_report(through_json(plan), entries))


@pytest.fixture
def golden(tmp_path):
    return write_golden(tmp_path, [
        {"id": "a", "question": "where is alpha", "expected": ["alpha"]},
        {"id": "b", "question": "where is beta", "expected": ["beta"], "evidence": ["beta lives here"]},
        {"id": "c", "question": "where is gamma", "expected": ["gamma"]},
    ])


def test_the_steps_apart_give_the_report_evaluate_gives(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta"}, broken={"hybrid"})
    whole = evaluate(target, golden, created_at=MOMENT, run_id="run-1", timed=2, clock=ticking_clock())
    apart = steps_report([target], golden, timed=2)  # each search takes one tick in both: times agree
    assert through_json(whole) == apart


def test_the_plan_is_plain_json_and_names_every_chosen_setup_with_its_target(golden):
    plan = plan_run(ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}), golden, only=["keyword", "dense"],
                    created_at=MOMENT, timed=1, seed=3)
    assert through_json(plan) == plan
    assert [(s["key"], s["target"]) for s in plan["setups"]] == [("t.keyword.bm25", "t"), ("t.dense.m", "t")]
    assert plan["created_at"] == "2026-11-30T01:02:03.456000Z" and plan["run_id"].startswith("20261130T010203456Z-")
    assert plan["golden"]["labelled"] == 3 and len(plan["timed_question_ids"]) == 1
    assert plan["questions"][1] == {"id": "b", "question": "where is beta", "expected": ["beta"],
                                    "evidence": ["beta lives here"],
                                    "sha256": hashlib.sha256("where is beta".encode()).hexdigest()}


def test_a_setup_key_not_in_the_plan_is_refused_with_the_closest_key(golden):
    target = ListTarget("t", ANSWERS, held=set())
    plan = plan_run(target, golden, created_at=MOMENT)
    with pytest.raises(UsageError, match='Did you mean "t.hybrid.m"'):
        run_setup(target, plan, "t.hybird.m")


def test_a_setup_the_target_no_longer_offers_is_that_setups_error(golden):
    plan = plan_run(ListTarget("t", ANSWERS, held=set()), golden, created_at=MOMENT)

    class Fewer(ListTarget):
        def setups(self):
            return super().setups()[:1]

    entry = run_setup(Fewer("t", ANSWERS, held=set()), plan, "t.hybrid.m")
    assert entry["error"] == "LookupError: target t offers no setup t.hybrid.m any more"
    assert entry["summary"] is None and entry["rank"] is None


def test_assemble_needs_one_entry_per_planned_setup_and_leaves_its_inputs_alone(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = plan_run(target, golden, created_at=MOMENT)
    entries = [run_setup(target, plan, s["key"]) for s in plan["setups"]]
    with pytest.raises(UsageError, match=r"missing \['t.hybrid.m'\]"):
        assemble_report(plan, entries[:2])
    with pytest.raises(UsageError, match=r"given twice \['t.keyword.bm25'\]"):
        assemble_report(plan, entries + entries[:1])
    before = through_json(entries)
    report = assemble_report(plan, list(reversed(entries)))
    assert through_json(entries) == before  # ranks and neighbours are set on copies
    assert [s["rank"] for s in report["setups"]] == [1, 2, 3]


def test_a_failed_entry_from_the_plan_is_never_picked(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = plan_run(target, golden, created_at=MOMENT)
    entries = [run_setup(target, plan, s["key"]) for s in plan["setups"] if s["key"] != "t.hybrid.m"]
    entries.append(failed_entry(plan, "t.hybrid.m", "ActivityFailed: retries exhausted"))
    report = assemble_report(plan, entries)
    failed = next(s for s in report["setups"] if s["key"] == "t.hybrid.m")
    assert failed["error"] == "ActivityFailed: retries exhausted" and failed["method_label"]
    assert "t.hybrid.m" not in report["picks"].values()


@pytest.mark.slow
def test_on_the_shipped_sample_the_steps_apart_equal_evaluate(sample_index):
    from evaluation import EmbeddedTarget, open_index
    from conftest import SAMPLES

    target = EmbeddedTarget(open_index(sample_index), cross_encoder=False)
    options = dict(only=["local.keyword.bm25", "local.dense.minilm-l6"], timed=3)
    whole = evaluate(target, SAMPLES / "golden.jsonl", created_at=MOMENT, run_id="run-1", clock=ticking_clock(),
                     **options)
    apart = steps_report([target], SAMPLES / "golden.jsonl", **options)
    assert sorted(s["key"] for s in apart["setups"]) == ["local.dense.minilm-l6", "local.keyword.bm25"]
    assert apart["setups"][0]["summary"]["questions"] == 36
    assert through_json(whole) == apart


def test_evaluate_times_as_many_questions_by_default_as_a_plan_does():
    import importlib

    whole, steps = importlib.import_module("evaluation.evaluate"), importlib.import_module("evaluation.steps")

    assert whole.DEFAULT_TIMED == steps.DEFAULT_TIMED == 50


# -- a run split as the Function App runs it: ranks in parallel, timed passes one after another --------

def test_ranks_then_times_apart_give_the_entry_run_setup_gives(golden):
    from evaluation.steps import rank_setup, time_setup, with_times

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = through_json(plan_run(target, golden, created_at=MOMENT, run_id="run-1", timed=2))
    for key in [s["key"] for s in plan["setups"]]:
        whole = run_setup(target, plan, key, clock=ticking_clock())
        ranked = through_json(rank_setup(target, plan, key))
        assert ranked["times_ms"] == [] and ranked["summary"]["median_ms"] is None
        apart = with_times(ranked, time_setup(target, plan, key, clock=ticking_clock()))
        assert through_json(apart) == through_json(whole)
        assert apart["summary"]["timed"] == 2 and apart["times_ms"] == [1.0, 1.0]  # one 1 ms tick per search


def test_timed_passes_run_one_setup_after_another_each_after_its_warm_up(golden):
    from evaluation.steps import time_setups

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = plan_run(target, golden, created_at=MOMENT, timed=2)
    keys = [s["key"] for s in plan["setups"]]

    times = time_setups({"t": target}, plan, keys, clock=ticking_clock())

    assert times == {key: {"times_ms": [1.0, 1.0]} for key in keys}
    searched = [(kind, key) for kind, key, _ in target.calls]
    assert searched == [("search", key) for key in keys for _ in range(1 + 2)]  # warm-up, then 2 timed, in turn


def test_a_timed_pass_that_fails_is_that_setups_error_and_the_others_are_timed(golden):
    from evaluation.steps import time_setups

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}, broken={"dense"})
    plan = plan_run(target, golden, created_at=MOMENT, timed=1)

    times = time_setups({"t": target}, plan, [s["key"] for s in plan["setups"]], clock=ticking_clock())

    assert times["t.dense.m"] == {"error": "RuntimeError: the service said no"}
    assert times["t.keyword.bm25"] == {"times_ms": [1.0]} and times["t.hybrid.m"] == {"times_ms": [1.0]}


def test_a_rank_that_fails_is_the_entrys_error_and_has_no_times_to_add(golden):
    from evaluation.steps import rank_setup, with_times

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}, broken={"hybrid"})
    plan = plan_run(target, golden, created_at=MOMENT)

    entry = rank_setup(target, plan, "t.hybrid.m")

    assert entry["error"] == "RuntimeError: the service said no" and entry["summary"] is None
    with pytest.raises(UsageError, match="has no ranks to add times to"):
        with_times(entry, [1.0])


def test_finish_entries_keeps_each_setups_part_or_says_which_is_missing(golden):
    from evaluation.steps import finish_entries, rank_setup

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}, broken={"hybrid"})
    plan = plan_run(target, golden, created_at=MOMENT, timed=1)
    ranked = {k: rank_setup(target, plan, k) for k in ("t.keyword.bm25", "t.dense.m", "t.hybrid.m")}

    def errors(times, failures, ranked=ranked):
        return {e["key"]: e["error"] for e in finish_entries(plan, ranked, times, failures)}

    ok = {"t.keyword.bm25": {"times_ms": [2.0]}, "t.dense.m": {"times_ms": [3.0]}}
    assert errors(ok, {}) == {"t.keyword.bm25": None, "t.dense.m": None, "t.hybrid.m": "RuntimeError: the service said no"}
    assert errors(ok, {"t.dense.m": "the setup's activity failed after 3 attempts: boom"})["t.dense.m"] == \
        "the setup's activity failed after 3 attempts: boom"
    assert errors({"t.keyword.bm25": {"times_ms": [2.0]}}, {})["t.dense.m"] == "its timed pass never ran"
    assert errors({**ok, "t.dense.m": {"error": "TimeoutError: slow"}}, {})["t.dense.m"] == "TimeoutError: slow"
    assert errors(ok, {}, ranked={})["t.keyword.bm25"] == "no ranks were kept for this setup"
    done = finish_entries(plan, ranked, ok)
    assert [e["summary"]["median_ms"] for e in done if e["summary"]] == [2.0, 3.0]
    assert assemble_report(plan, done)["picks"]["finds_the_most"] in {"t.keyword.bm25", "t.dense.m"}


def test_a_refused_run_is_a_report_with_no_setups_and_every_golden_error(tmp_path):
    from evaluation.golden import check_golden_bytes
    from evaluation.steps import golden_errors_reason, refusal_report
    from evaluation.store import LocalStore

    raw = (b'{"question": "Where?", "expeted": ["a"]}\n{"question": "Where else?", "expected": "b"}\n'
           b'{"question": "Where now?", "expected": ["c"], "evidence": ["secret words"]}\n')
    check = check_golden_bytes(raw, "docs/golden.jsonl")
    assert any("secret words" in w.message for w in check.warnings)
    report = refusal_report(golden_errors_reason(check), source="docs/golden.jsonl",
                            sha256=hashlib.sha256(raw).hexdigest(),
                            run_id="run-9", created_at=MOMENT, check=check)

    target = ListTarget("t", ANSWERS, held={"alpha"})
    plan = plan_run(target, write_golden(tmp_path, [{"question": "q", "expected": ["alpha"]}]), created_at=MOMENT)
    normal = assemble_report(plan, [run_setup(target, plan, s["key"]) for s in plan["setups"]])
    assert set(report) == set(normal) | {"refused"}  # every key a report has, whatever the report becomes
    assert report["setups"] == [] and set(report["picks"].values()) == {None}
    assert [e["line"] for e in report["refused"]["errors"]] == [1, 2]
    assert report["refused"]["reason"].startswith("the golden file has 2 error(s)")
    assert "secret words" not in json.dumps(report) and "Where" not in json.dumps(report)  # no warnings, no text
    store = LocalStore(tmp_path / "store")
    store.save(report, raw)
    assert store.history()[0]["refused"] == report["refused"]["reason"]


class CountingTarget(ListTarget):
    """A target that counts its requests per setup (``target.Counted``): one per question searched."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sent = {}

    def counters(self, setup_key):
        return {"requests": self.sent.get(setup_key, 0), "retries": 0}

    def search(self, setup, question, depth):
        self.sent[setup.key] = self.sent.get(setup.key, 0) + 1
        return super().search(setup, question, depth)

    def search_batch(self, setup, questions, depth):
        self.sent[setup.key] = self.sent.get(setup.key, 0) + len(questions)
        return super().search_batch(setup, questions, depth)


def test_request_counts_add_up_the_same_whether_a_setup_runs_whole_or_split(golden):
    from evaluation.steps import finish_entries, rank_setup, time_setups

    plan = through_json(plan_run(ListTarget("t", ANSWERS, held={"alpha"}), golden, created_at=MOMENT, timed=2))
    keys = [s["key"] for s in plan["setups"]]
    whole = [run_setup(CountingTarget("t", ANSWERS, held={"alpha"}), plan, k, clock=ticking_clock()) for k in keys]
    target = CountingTarget("t", ANSWERS, held={"alpha"})
    ranked = {k: rank_setup(target, plan, k) for k in keys}
    split = finish_entries(plan, ranked, time_setups({"t": target}, plan, keys, clock=ticking_clock()))

    assert [e["requests"] for e in whole] == [1 + 3 + 2] * 3  # warm-up, the batch's 3 questions, 2 timed
    assert through_json(split) == through_json(whole)


def test_the_report_keeps_each_questions_text_hash_and_never_its_text(golden):
    import hashlib

    report = steps_report([ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})], golden)
    assert report["questions"][1] == {"id": "b", "expected": ["beta"],
                                      "sha256": hashlib.sha256("where is beta".encode("utf-8")).hexdigest()}
    assert "where is" not in json.dumps({k: v for k, v in report.items() if k != "setups"})


def test_the_report_compares_every_setup_with_the_top_and_says_which_faster_setups_are_tied(golden):
    report = steps_report([ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})], golden, seed=4)
    top, *rest = report["setups"]
    assert top["key"] == report["picks"]["finds_the_most"] == "t.hybrid.m" and top["versus_top"] is None
    keyword = next(s for s in rest if s["key"] == "t.keyword.bm25")
    # keyword misses gamma, which hybrid finds: 0 better, 1 worse, exact p = 2 / 2 = 1
    assert keyword["versus_top"]["found@10"] | {"interval": None} == {
        "difference": round(-1 / 3, 6), "interval": None, "better": 0, "worse": 1, "p": 1.0, "p_holm": 1.0}
    assert keyword["ndcg_10"] == {"a": 1.0, "b": round(1 / math.log2(3), 6), "c": 0.0}  # beta second: 1/log2(2+1)
    assert report["significance"]["seed"] == 4 and report["significance"]["alpha"] == 0.05
    assert set(report["ties"]) == set(report["picks"])
    assert report["ties"]["finds_the_most"]["pick"] == "t.hybrid.m"

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
from evaluation.run import failed_entry

from evaluation.target import Hit
from fakes import ANSWERS, ListTarget, through_json, write_golden
from evaluation.run.plan import PlanContext

MOMENT = datetime(2026, 11, 30, 1, 2, 3, 456000, tzinfo=timezone.utc)


def ticking_clock(step_s: float = 0.001):
    """A clock that moves ``step_s`` a call, so two runs measure exactly the same times."""
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


def steps_report(targets, golden, **options):
    """The report made step by step, as the Function App makes it: every setup timed side by side, each
    ranked apart, joined (``finish_entries``) and assembled, every part through JSON."""
    from evaluation.run import finish_entries, rank_setup, time_setups

    by_name = {t.name: t for t in targets}
    plan = through_json(plan_run(targets, golden, context=PlanContext(run_id="run-1", created_at=MOMENT), **options))
    keys = plan.setup_keys
    times = through_json(time_setups(by_name, plan, keys, clock=ticking_clock()))
    ranked = {s.key: through_json(rank_setup(by_name[s.target], plan, s.key)) for s in plan.setups}
    return through_json(assemble_report(through_json(plan), finish_entries(plan, ranked, times)))


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
                    timed=1, seed=3, context=PlanContext(created_at=MOMENT))
    kept = plan.to_json()
    assert json.loads(json.dumps(kept)) == kept and through_json(plan) == plan
    assert [(s.key, s.target) for s in plan.setups] == [("t.keyword.bm25", "t"), ("t.dense.m", "t")]
    assert plan.created_at == "2026-11-30T01:02:03.456000Z" and plan.run_id.startswith("20261130T010203456Z-")
    assert plan.golden["labelled"] == 3 and len(plan.timed_question_ids) == 1
    assert kept["questions"][1] == {"id": "b", "question": "where is beta", "expected": ["beta"],
                                    "evidence": ["beta lives here"],
                                    "sha256": hashlib.sha256("where is beta".encode()).hexdigest()}


def test_a_setup_key_not_in_the_plan_is_refused_with_the_closest_key(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = plan_run(target, golden, context=PlanContext(created_at=MOMENT))
    with pytest.raises(UsageError, match='Did you mean "t.hybrid.m"'):
        run_setup(target, plan, "t.hybird.m")


def test_a_setup_the_target_no_longer_offers_is_that_setups_error(golden):
    plan = plan_run(ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}), golden,
                    context=PlanContext(created_at=MOMENT))

    class Fewer(ListTarget):
        def setups(self):
            return super().setups()[:1]

    entry = run_setup(Fewer("t", ANSWERS, held=set()), plan, "t.hybrid.m")
    assert entry["error"] == "LookupError: target t offers no setup t.hybrid.m any more"
    assert entry["summary"] is None and entry["rank"] is None


def test_assemble_needs_one_entry_per_planned_setup_and_leaves_its_inputs_alone(golden):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = plan_run(target, golden, context=PlanContext(created_at=MOMENT))
    entries = [run_setup(target, plan, s.key) for s in plan.setups]
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
    plan = plan_run(target, golden, context=PlanContext(created_at=MOMENT))
    entries = [run_setup(target, plan, s.key) for s in plan.setups if s.key != "t.hybrid.m"]
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
    # the second run on the same target finds the vectors in its memory: where they came from differs
    for report in (whole, apart):
        assert report.pop("cache") and all(setup.pop("cache") is not None for setup in report["setups"])
    assert through_json(whole) == apart


def test_evaluate_times_as_many_questions_by_default_as_a_plan_does():
    import importlib

    whole, steps = importlib.import_module("evaluation.evaluate"), importlib.import_module("evaluation.run")

    assert whole.DEFAULT_TIMED == steps.DEFAULT_TIMED == 50
    assert (
        whole.DEFAULT_TIME_MARGIN == steps.DEFAULT_TIME_MARGIN and whole.DEFAULT_TIME_FLOOR == steps.DEFAULT_TIME_FLOOR
    )
    assert whole.DEFAULT_TIME_BUDGET == steps.DEFAULT_TIME_BUDGET


# -- a run split as the Function App runs it: ranks in parallel, timed passes one after another --------

def test_ranks_then_times_apart_give_the_entry_run_setup_gives(golden):
    from evaluation.run import rank_setup, time_setup, with_times

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = through_json(plan_run(target, golden, timed=2, context=PlanContext(run_id="run-1", created_at=MOMENT)))
    for key in plan.setup_keys:
        whole = run_setup(target, plan, key, clock=ticking_clock())
        ranked = through_json(rank_setup(target, plan, key))
        assert ranked["times_ms"] == [] and ranked["summary"] is None and len(ranked["ranks"]) == 1
        apart = with_times(ranked, through_json(time_setup(target, plan, key, clock=ticking_clock())),
                           question_ids=["a", "b", "c"])
        assert through_json(apart) == through_json(whole)
        assert apart["summary"]["timed"] == 2 and apart["times_ms"] == [1.0, 1.0]  # one 1 ms tick per search


def test_timed_passes_run_side_by_side_after_every_warm_up_in_a_rotating_order(golden):
    from evaluation.run import time_setups

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = plan_run(target, golden, timed=3, context=PlanContext(created_at=MOMENT))
    keys = plan.setup_keys
    k, d, h = keys  # keyword, dense, hybrid

    times = time_setups({"t": target}, plan, keys, clock=ticking_clock())

    assert {key: t["times_ms"] for key, t in times.items()} == {key: [1.0, 1.0, 1.0] for key in keys}
    assert all(sorted(t["judged"]["ranks"]) == sorted(plan.timed_question_ids) for t in times.values())
    assert len({t["time_pass"] for t in times.values()}) == 1  # one pass: their times compare in pairs
    warm = plan.questions[0].question
    first, second, third = (plan.question(i).question for i in plan.timed_question_ids)
    assert target.calls == [("search", k, warm), ("search", d, warm), ("search", h, warm),  # every warm-up first
                            ("search", k, first), ("search", d, first), ("search", h, first),  # A, B, C
                            ("search", d, second), ("search", h, second), ("search", k, second),  # B, C, A
                            ("search", h, third), ("search", k, third), ("search", d, third)]  # C, A, B


def test_the_rotation_reverses_every_other_cycle_so_each_of_a_pair_goes_first_as_often():
    from evaluation.run.side_by_side import round_order

    keys = ["a", "b", "c"]
    orders = [round_order(keys, r) for r in range(6)]
    assert orders == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"],
                      ["c", "b", "a"], ["a", "c", "b"], ["b", "a", "c"]]
    for x, y in [("a", "b"), ("a", "c"), ("b", "c")]:
        assert sum(o.index(x) < o.index(y) for o in orders) == 3  # first in 3 of 6 rounds, for every pair


def test_a_timed_pass_that_fails_is_that_setups_error_and_the_others_are_timed(golden):
    from evaluation.run import time_setups

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}, broken={"dense"})
    plan = plan_run(target, golden, timed=1, context=PlanContext(created_at=MOMENT))

    times = time_setups({"t": target}, plan, plan.setup_keys, clock=ticking_clock())

    assert times["t.dense.m"] == {"error": "RuntimeError: the service said no"}
    assert times["t.keyword.bm25"]["times_ms"] == [1.0] and times["t.hybrid.m"]["times_ms"] == [1.0]


def test_a_rank_that_fails_is_the_entrys_error_and_has_no_times_to_add(golden):
    from evaluation.run import rank_setup, with_times

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}, broken={"hybrid"})
    plan = plan_run(target, golden, timed=1, context=PlanContext(created_at=MOMENT))  # two questions left for the batch

    entry = rank_setup(target, plan, "t.hybrid.m")

    assert entry["error"] == "RuntimeError: the service said no" and entry["summary"] is None
    with pytest.raises(UsageError, match="has no ranks to add times to"):
        with_times(entry, {"times_ms": [1.0], "judged": {}})


def test_finish_entries_keeps_each_setups_part_or_says_which_is_missing(golden):
    from evaluation.run import finish_entries, rank_setup, time_setup

    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"}, broken={"hybrid"})
    plan = plan_run(target, golden, timed=1, context=PlanContext(created_at=MOMENT))
    ranked = {k: rank_setup(target, plan, k) for k in ("t.keyword.bm25", "t.dense.m", "t.hybrid.m")}

    def errors(times, failures, ranked=ranked):
        return {e["key"]: e["error"] for e in finish_entries(plan, ranked, times, failures)}

    def timed(key, ms):
        return {**time_setup(target, plan, key), "times_ms": [ms]}

    ok = {"t.keyword.bm25": timed("t.keyword.bm25", 2.0), "t.dense.m": timed("t.dense.m", 3.0)}
    assert errors(ok, {}) == {"t.keyword.bm25": None, "t.dense.m": None,
                              "t.hybrid.m": "RuntimeError: the service said no"}
    assert errors(ok, {"t.dense.m": "the setup's activity failed after 3 attempts: boom"})["t.dense.m"] == \
        "the setup's activity failed after 3 attempts: boom"
    assert errors({"t.keyword.bm25": ok["t.keyword.bm25"]}, {})["t.dense.m"] == "its timed pass never ran"
    assert errors({**ok, "t.dense.m": {"error": "TimeoutError: slow"}}, {})["t.dense.m"] == "TimeoutError: slow"
    assert errors(ok, {}, ranked={})["t.keyword.bm25"] == "no ranks were kept for this setup"
    done = finish_entries(plan, ranked, ok)
    assert [e["summary"]["median_ms"] for e in done if e["summary"]] == [2.0, 3.0]
    assert assemble_report(plan, done)["picks"]["finds_the_most"] in {"t.keyword.bm25", "t.dense.m"}


def test_a_refused_run_is_a_report_with_no_setups_and_every_golden_error(tmp_path):
    from evaluation.golden import check_golden_bytes
    from evaluation.run import golden_errors_reason, refusal_report
    from evaluation.store import LocalStore

    raw = (b'{"question": "Where?", "expeted": ["a"]}\n{"question": "Where else?", "expected": "b"}\n'
           b'{"question": "Where now?", "expected": ["c"], "evidence": ["secret words"]}\n')
    check = check_golden_bytes(raw, "docs/golden.jsonl")
    assert any("secret words" in w.message for w in check.warnings)
    report = refusal_report(golden_errors_reason(check), source="docs/golden.jsonl",
                            sha256=hashlib.sha256(raw).hexdigest(),
                            run_id="run-9", created_at=MOMENT, check=check)

    target = ListTarget("t", ANSWERS, held={"alpha"})
    plan = plan_run(target, write_golden(tmp_path, [{"question": "where is alpha", "expected": ["alpha"]}]),
                    context=PlanContext(created_at=MOMENT))
    normal = assemble_report(plan, [run_setup(target, plan, s.key) for s in plan.setups])
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
    from evaluation.run import finish_entries, rank_setup, time_setups

    plan = through_json(plan_run(ListTarget("t", ANSWERS, held={"alpha"}), golden, timed=2,
                                 context=PlanContext(created_at=MOMENT)))
    keys = plan.setup_keys
    whole = [run_setup(CountingTarget("t", ANSWERS, held={"alpha"}), plan, k, clock=ticking_clock()) for k in keys]
    target = CountingTarget("t", ANSWERS, held={"alpha"})
    ranked = {k: rank_setup(target, plan, k) for k in keys}
    split = finish_entries(plan, ranked, time_setups({"t": target}, plan, keys, clock=ticking_clock()))

    assert [e["requests"] for e in whole] == [1 + 2 + 1] * 3  # warm-up, 2 timed, the batch's other question
    for entry in whole + split:  # timed alone or side by side: the passes differ, nothing else does
        entry.pop("time_pass")
    assert through_json(split) == through_json(whole)


def test_a_setup_that_fails_midway_keeps_the_requests_it_sent_in_every_step(golden):
    from evaluation.run import rank_setup, time_setups

    class FailingBatch(CountingTarget):
        def search_batch(self, setup, questions, depth):
            super().search_batch(setup, questions, depth)  # sent, counted, then the answer is lost
            raise RuntimeError("the connection dropped")

    plan = through_json(plan_run(ListTarget("t", ANSWERS, held={"alpha"}), golden, timed=2, only=["keyword"],
                                 context=PlanContext(created_at=MOMENT)))
    key = plan.setups[0].key
    whole = run_setup(FailingBatch("t", ANSWERS, held={"alpha"}), plan, key, clock=ticking_clock())
    ranked = rank_setup(FailingBatch("t", ANSWERS, held={"alpha"}), plan, key)
    assert whole["error"] == ranked["error"] == "RuntimeError: the connection dropped"
    assert whole["requests"] == 1 + 2 + 1 and ranked["requests"] == 1  # warm-up, 2 timed, the batch; the batch
    never_warm = CountingTarget("t", ANSWERS, held={"alpha"}, broken={"keyword"})
    timed = time_setups({"t": never_warm}, plan, [key], clock=ticking_clock())[key]
    assert timed == {"error": "RuntimeError: the service said no", "requests": 1, "retries": 0}  # the warm-up


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
    # keyword misses gamma, which hybrid finds: 0 better, 1 worse, exact p = 2 / 2 = 1; the test tells at
    # 6 worse and none better (2 / 64), and round(N / 3) = 6 first at N = 17 (5.5 * 3 = 16.5)
    assert keyword["versus_top"]["found@10"] | {"interval": None} == {
        "difference": round(-1 / 3, 6), "interval": None, "better": 0, "worse": 1, "p": 1.0, "p_holm": 1.0,
        "questions_to_tell": 17}
    assert keyword["ndcg_10"] == {"a": 1.0, "b": round(1 / math.log2(3), 6), "c": 0.0}  # beta second: 1/log2(2+1)
    assert report["significance"]["seed"] == 4 and report["significance"]["alpha"] == 0.05
    assert set(report["ties"]) == set(report["picks"])
    assert report["ties"]["finds_the_most"]["pick"] == "t.hybrid.m"


# -- each question searched once; timing sized by precision; progress per question -----------------

class SingleDiffersTarget(ListTarget):
    """Answers a single search with gamma first and a batch with the plain lists, so an entry shows which
    of the two gave each question's ranks."""

    def search(self, setup, question, depth):
        self.calls.append(("search", setup.key, question))
        return [Hit(id="gamma:0", doc_id="gamma", page=None, score=9.0)] + self._results(setup, question)[:depth - 1]


def test_a_timed_questions_single_search_gives_its_ranks_and_the_batch_gets_only_the_others(golden):
    target = SingleDiffersTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    plan = plan_run(target, golden, only=["keyword"], timed=2, context=PlanContext(created_at=MOMENT))
    timed = set(plan.timed_question_ids)

    entry = run_setup(target, plan, "t.keyword.bm25", clock=ticking_clock())

    batches = [questions for kind, _, questions in target.calls if kind == "batch"]
    untimed = [q.question for q in plan.questions if q.id not in timed]
    assert batches == [tuple(untimed)]
    singles = [q for kind, _, q in target.calls if kind == "search"]
    assert len(singles) == 1 + 2  # the warm-up, then each timed question once
    for question in plan.questions:
        first_doc = entry["results"][question.id][0][1]
        assert first_doc == ("gamma" if question.id in timed else ANSWERS["keyword"][question.question][0]
                             if ANSWERS["keyword"][question.question] else first_doc)
    assert list(entry["ranks"]) == ["a", "b", "c"]  # the plan's order, whichever search gave them


def many_questions(tmp_path, n):
    return write_golden(tmp_path, [{"id": f"q{i}", "question": f"where is alpha, take {i}", "expected": ["alpha"]}
                                   for i in range(n)])


def test_timing_stops_at_the_floor_once_the_median_is_known_within_the_margin(tmp_path):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta"})
    plan = plan_run(target, many_questions(tmp_path, 30), only=["keyword"], timed=20, time_floor=8, time_margin=0.1,
                    context=PlanContext(created_at=MOMENT))

    entry = run_setup(target, plan, "t.keyword.bm25", clock=ticking_clock())  # every search 1 ms: margin 0

    assert entry["times_ms"] == [1.0] * 8 and entry["summary"]["timed"] == 8
    assert entry["summary"]["median_margin"] == 0.0 and entry["summary"]["questions"] == 30
    singles = [q for kind, _, q in target.calls if kind == "search"]
    batched = [q for kind, _, qs in target.calls if kind == "batch" for q in qs]
    assert len(singles) == 1 + 8 and len(batched) == 30 - 8  # each question searched once, the warm-up aside
    assert len(entry["ranks"]) == 30


def uneven_clock(durations_ms):
    """A clock whose timed searches last ``durations_ms`` in turn (start and stop read it once each)."""
    ticks, now = itertools.cycle(durations_ms), [0.0]
    reads = itertools.count()

    def clock():
        if next(reads) % 2:
            now[0] += next(ticks) / 1000
        return now[0]
    return clock


def test_timing_goes_on_to_the_cap_while_the_median_is_not_known_within_the_margin(tmp_path):
    target = ListTarget("t", ANSWERS, held={"alpha", "beta"})
    plan = plan_run(target, many_questions(tmp_path, 30), only=["keyword"], timed=20, time_floor=8, time_margin=0.1,
                    context=PlanContext(created_at=MOMENT))

    entry = run_setup(target, plan, "t.keyword.bm25", clock=uneven_clock([1, 3]))  # half 1 ms, half 3 ms

    assert len(entry["times_ms"]) == 20 and sorted(set(entry["times_ms"])) == [1.0, 3.0]
    assert entry["summary"]["median_margin"] > 0.1


def test_timing_stops_as_soon_as_the_margin_is_reached_past_the_floor(tmp_path):
    from evaluation.scoring.metrics import median_margin

    durations = [10, 12, 11, 30, 10, 11, 12, 10, 11, 11, 12, 10, 11, 10, 12, 11, 10, 11, 12, 11]
    target = ListTarget("t", ANSWERS, held={"alpha", "beta"})
    plan = plan_run(target, many_questions(tmp_path, 30), only=["keyword"], timed=20, time_floor=6, time_margin=0.1,
                    context=PlanContext(created_at=MOMENT))

    entry = run_setup(target, plan, "t.keyword.bm25", clock=uneven_clock(durations))

    n = len(entry["times_ms"])
    assert entry["times_ms"] == [float(d) for d in durations[:n]]
    assert median_margin(entry["times_ms"]) <= 0.1 < median_margin(entry["times_ms"][:-1])
    assert 6 < n < 20


ALTERNATING_S = [1000, 3000]  # a median never known within 10%: only the budget or the cap stops timing


def budgeted_run(tmp_path, *, floor, budget):
    """30 questions, 20 of them timed at most, searches alternately 1 and 3 s: (target, plan, entry)."""
    target = ListTarget("t", ANSWERS, held={"alpha", "beta"})
    plan = plan_run(target, many_questions(tmp_path, 30), only=["keyword"], timed=20, time_floor=floor,
                    time_margin=0.1, time_budget=budget, context=PlanContext(created_at=MOMENT))
    return target, plan, run_setup(target, plan, "t.keyword.bm25", clock=uneven_clock(ALTERNATING_S))


def test_timing_stops_once_the_timed_searches_have_taken_the_budget_past_the_floor(tmp_path):
    target, plan, entry = budgeted_run(tmp_path, floor=6, budget=16)

    # 6 searches take 12 s (the floor), the 7th 13 s, the 8th 16 s: exactly the budget, so it stops there
    assert entry["times_ms"] == [1000.0, 3000.0] * 4
    assert entry["summary"]["median_margin"] > 0.1  # the margin reached is what the report keeps
    batched = [q for kind, _, qs in target.calls if kind == "batch" for q in qs]
    assert len(batched) == 30 - 8 and len(entry["ranks"]) == 30  # the sample's rest still gets its ranks
    assert assemble_report(plan, [entry])["rules"]["time_budget"] == 16


def test_the_budget_never_cuts_timing_below_six_searches_the_fewest_with_an_interval(tmp_path):
    _, _, entry = budgeted_run(tmp_path, floor=8, budget=1)

    assert len(entry["times_ms"]) == 6


def test_a_setup_that_would_spend_the_budget_before_the_floor_stops_at_six(tmp_path):
    # after 6 searches: 12 s, 2 s a search; 10 searches would take 10 x 2 = 20 s >= the 20 s budget
    _, _, slow = budgeted_run(tmp_path, floor=10, budget=20)
    # with a 21 s budget the floor fits (20 < 21): timing passes the floor (10 searches, 20 s) and the
    # 11th (1 s more: 21 s) spends the budget
    (tmp_path / "fits").mkdir()
    _, _, fits = budgeted_run(tmp_path / "fits", floor=10, budget=21)

    assert slow["times_ms"] == [1000.0, 3000.0] * 3
    assert slow["summary"]["median_margin"] is not None  # 6 times: the median has its interval
    assert len(fits["times_ms"]) == 11


def test_a_budget_of_zero_times_until_the_margin_or_the_cap(tmp_path):
    _, _, entry = budgeted_run(tmp_path, floor=6, budget=0)

    assert len(entry["times_ms"]) == 20


def test_a_time_budget_that_cannot_work_is_refused(golden):
    target = ListTarget("t", ANSWERS, held={"alpha"})
    for bad in (-1, float("nan"), float("inf"), True, "20"):
        with pytest.raises(UsageError, match="time budget"):
            plan_run(target, golden, time_budget=bad, context=PlanContext(created_at=MOMENT))


@pytest.mark.parametrize("n, expected", [(5, None), (6, (1, 6)), (10, (2, 9)), (20, (6, 15)), (50, (18, 33))])
def test_the_medians_interval_is_the_binomial_order_statistics(n, expected):
    from evaluation.scoring.metrics import median_interval

    assert median_interval(list(range(n, 0, -1))) == (None if expected is None else tuple(map(float, expected)))


def test_a_time_margin_or_floor_that_cannot_work_is_refused(golden):
    target = ListTarget("t", ANSWERS, held={"alpha"})
    for bad in (dict(time_margin=1.0), dict(time_margin=-0.1), dict(time_margin=float("nan")), dict(time_floor=5)):
        with pytest.raises(UsageError, match="time (margin|floor)"):
            plan_run(target, golden, context=PlanContext(created_at=MOMENT), **bad)


class ProgressTarget(ListTarget):
    """A batch that says when each question is done, as the embedded engine and Azure AI Search do."""

    def search_batch(self, setup, questions, depth, *, progress=None):
        found = []
        for question in questions:
            found += super().search_batch(setup, [question], depth)
            if progress:
                progress(1)
        return found


def test_progress_moves_for_every_question_inside_a_batch_and_says_the_setup_and_the_stage(tmp_path):
    seen = []
    target = ProgressTarget("t", ANSWERS, held={"alpha", "beta"})
    evaluate(target, many_questions(tmp_path, 12), created_at=MOMENT, only=["keyword", "dense"], timed=4,
             clock=ticking_clock(), progress=lambda done, total, label: seen.append((done, total, label)),
             exhaustive=True)  # each setup's batch whole (a race's batches: tests/run/test_race.py)

    assert [done for done, _, _ in seen] == list(range(1, 2 * 13 + 1))  # one step at a time, never stalled
    assert {total for _, total, _ in seen} == {2 * 13}
    labels = [label for _, _, label in seen]
    # each label starts with which setup of how many it is (issue 23: the bar says where the run is), or,
    # while every setup is warmed up and timed side by side, how many setups that stage runs
    assert labels[0] == "[2 setups] warming up"
    assert labels[2:2 + 2 * 4] == ["[2 setups] timing searches side by side"] * 8
    assert labels.count("[2/2] t.dense.m: searching the other questions in a batch") == 8


def test_the_report_keeps_the_setups_each_pick_was_chosen_among_as_ties_on_time(golden):
    # every search takes one tick (1 ms), so every setup's interval is the point 1 ms: all tied on time.
    # hybrid and dense find 3 of 3 in the top 10, keyword 2: 4 and 8 points of 3 questions allow none
    # fewer (0.12 and 0.24 of a question), so both faster picks are chosen among hybrid and dense, and
    # hybrid wins on found@1 (3 to 2); finds_the_most's tier holds only setups with its found@10 and found@1
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})
    report = steps_report([target], golden, timed=3)
    assert [s["times_ms"] for s in report["setups"]] == [[1.0, 1.0, 1.0]] * 3
    assert report["picks"] == dict.fromkeys(("finds_the_most", "best_for_balance", "best_for_time"), "t.hybrid.m")
    assert report["ties_on_time"] == {"finds_the_most": ["t.hybrid.m"], "best_for_balance": ["t.hybrid.m", "t.dense.m"],
                                      "best_for_time": ["t.hybrid.m", "t.dense.m"]}
    assert report["rules"]["rank_by"] == ["found@10", "found@1", "time tier", "key"]
    assert "trimmed t-test" in report["rules"]["time_ties"] and report["rules"]["equally_fast_ms"] == 5.0


def test_a_side_by_side_pass_timed_in_parts_gives_what_one_pass_gives_and_warms_up_again_each_part(tmp_path):
    from evaluation.run import time_setups, time_setups_part

    target = ListTarget("t", ANSWERS, held={"alpha", "beta"})
    plan = through_json(plan_run(target, many_questions(tmp_path, 12), only=["keyword", "dense"], timed=8,
                                 time_margin=0,
                                 context=PlanContext(created_at=MOMENT)))  # margin 0: every sampled question is timed
    keys = plan.setup_keys
    whole = time_setups({"t": target}, plan, keys, clock=ticking_clock())
    whole_calls, target.calls = list(target.calls), []

    clock, state, parts = ticking_clock(), None, 0
    while True:  # a part stops at the first round starting 5 ms (ticks) after it began
        state, found = time_setups_part({"t": target}, plan, keys, state=through_json(state) if state else None,
                                        seconds=0.005, clock=clock)
        parts += 1
        if found is not None:
            break
        assert state["round"] < 8 and not state["done"]

    assert parts > 1 and through_json(found) == through_json(whole)
    first = plan.questions[0]  # the warm-up's question; timed too when it is in the sample
    also_timed = 2 if first.id in plan.timed_question_ids else 0
    searched_first = [c for c in target.calls if c[0] == "search" and c[2] == first.question]
    assert len(searched_first) == parts * 2 + also_timed  # each part warms both setups up again
    assert len(target.calls) == len(whole_calls) + (parts - 1) * 2


def test_one_setups_timed_pass_alone_raises_its_failure_for_the_caller_to_decide(golden):
    from evaluation.run import time_setup

    target = ListTarget("t", ANSWERS, held={"alpha"}, broken={"dense"})
    plan = plan_run(target, golden, timed=1, context=PlanContext(created_at=MOMENT))
    with pytest.raises(RuntimeError, match="RuntimeError: the service said no"):
        time_setup(target, plan, "t.dense.m", clock=ticking_clock())
    timed = time_setup(target, plan, "t.keyword.bm25", clock=ticking_clock())
    assert timed["times_ms"] == [1.0] and timed["time_pass"].startswith(plan.run_id + "/")

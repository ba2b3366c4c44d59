"""The timed pass judges as the rest of the run does, and names itself so that only setups timed in it are
compared in pairs."""
from __future__ import annotations

import itertools

from evaluation import assemble_report, evaluate, plan_run, run_setup

from fakes import ListTarget, write_golden
from evaluation.run.plan import PlanContext


def ticking_clock(step_s: float = 0.001):
    ticks = itertools.count()
    return lambda: next(ticks) * step_s


# Every question's first result is its grade-1 document and its grade-2 document comes third: at
# --min-grade 2 the grade-1 document is not relevant, so each question's first relevant result is 3rd.
QUESTIONS = [f"where is thing {n}" for n in range(12)]
ANSWERS = {method: {q: [f"low{n}", "noise", f"high{n}"] for n, q in enumerate(QUESTIONS)}
           for method in ("keyword", "dense", "hybrid")}
HELD = {"noise", *(f"low{n}" for n in range(12)), *(f"high{n}" for n in range(12))}


def graded_golden(tmp_path):
    return write_golden(tmp_path, [{"id": f"q{n}", "question": q, "expected": {f"low{n}": 1, f"high{n}": 2}}
                                   for n, q in enumerate(QUESTIONS)])


def test_the_timed_pass_judges_at_the_runs_min_grade_both_its_timed_searches_and_the_samples_rest(tmp_path):
    target = ListTarget("t", ANSWERS, held=HELD)
    # every question is in the timed sample: some are timed one by one, the rest of the sample is searched
    # in the pass's batch once timing stops (the floor of 6 is met and the clock's steady ticks agree)
    report = evaluate(target, graded_golden(tmp_path), only=["t.keyword.bm25"], timed=12, min_grade=2,
                      clock=ticking_clock())
    [entry] = report["setups"]
    assert 6 <= entry["summary"]["timed"] < 12  # both paths of the pass were taken
    assert entry["ranks"] == {f"q{n}": 3 for n in range(12)}  # the grade-2 document, third: not the grade-1 first
    assert entry["summary"]["counts"]["1"] == 0 and entry["summary"]["counts"]["3"] == 12


def test_setups_timed_in_passes_of_their_own_are_not_compared_in_pairs(tmp_path):
    # run_setup times each setup alone: two such passes of one run must not pass for one, or their times
    # would be paired question by question though they were measured apart
    target = ListTarget("t", ANSWERS, held=HELD)
    plan = plan_run(target, graded_golden(tmp_path), timed=6, context=PlanContext(run_id="run-1"))
    entries = [run_setup(target, plan, s.key, clock=ticking_clock()) for s in plan.setups]
    passes = [entry["time_pass"] for entry in entries]
    assert len(set(passes)) == len(passes) and all(p.startswith("run-1/") for p in passes)
    report = assemble_report(plan, entries)
    assert report["time_pairs"] and all(pair["questions"] == 0 and pair["ratio"] is None
                                        for pair in report["time_pairs"])

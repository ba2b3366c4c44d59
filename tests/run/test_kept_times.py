"""Times kept in an earlier report are reused only when they can be believed (``run.kept_times``): each one a
measurement, their summary what they give, and the run that measured them dated no later than this one.
Anything else is timed live again and named, so an edited report is never printed, picked from, or kept
again as "timed in run <id>" (issue 37)."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from test_retime import MOMENT, ROWS, Indexed, run

from evaluation import evaluate
from evaluation.run.kept_times import LONGEST_SEARCH_MS, times_problem
from evaluation.run.shards import measured_times
from evaluation.scoring.metrics import timing_summary
from evaluation.run import plan_run, reusable_times
from fakes import write_golden
from evaluation.run.plan import PlanContext


def edit_kept(tmp_path, report: dict, change) -> dict:
    """Change the stored report.json of ``report`` as anyone with write access to the store could."""
    path = tmp_path / "runs" / "retrieval" / "runs" / report["id"] / "report.json"
    kept = json.loads(path.read_text(encoding="utf-8"))
    for setup in kept["setups"]:
        change(setup)
    path.write_text(json.dumps(kept), encoding="utf-8")
    return kept


def times(value):
    def change(setup):
        setup["times_ms"] = [value] * len(setup["times_ms"])
        setup["summary"].update({k: v for k, v in timing_summary(setup["times_ms"]).items() if k != "median_margin"})
    return change


def summary(**fields):
    return lambda setup: setup["summary"].update(fields)


EDITS = {  # what was edited -> what the warning says
    # a negative time is refused by the store itself (the report is unreadable): one warning for the run
    "every time -5 ms, the summary made to agree": (times(-5.0), "median_ms is -5.0, not a time"),
    "every time 1e300 ms, the summary made to agree": (times(1e300), "times_ms[0] is 1e+300 ms, not a search time"),
    "the median alone": (summary(median_ms=-5.0), "summary.median_ms is -5.0, not a time"),
    "the p95 alone": (summary(p95_ms=1e300), "summary.p95_ms is 1e+300, but the times it summarises give"),
    "how many were timed": (summary(timed=99), "summary.timed is 99, but times_ms holds 2 times"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_edited_times_are_timed_again_and_named_never_reused_or_kept_as_timed_in(tmp_path, edit):
    change, says = EDITS[edit]
    first = run(tmp_path, ROWS)
    edit_kept(tmp_path, first, change)
    warned = []

    second = evaluate(Indexed(), write_golden(tmp_path, ROWS), save_to=tmp_path / "runs", timed=2,
                      created_at=MOMENT + timedelta(hours=1), reuse_times=True, warn=warned.append)

    assert all("timed_in" not in s for s in second["setups"])  # timed live: nothing edited is taken
    assert all(0 <= t < 1e4 for s in second["setups"] for t in s["times_ms"])
    if "not a time" in says:  # the store refuses the report whole: named once, as unreadable
        assert len(warned) == 1 and "newest run could not be read" in warned[0] and first["id"] in warned[0]
        assert says in warned[0], warned[0]
    else:
        assert len(warned) == len(second["setups"]) == 3
        assert all(f"the times run {first['id']} kept for setup" in w and says in w for w in warned), warned[0]
    third = run(tmp_path, ROWS, at=MOMENT + timedelta(hours=2), name="c.jsonl")
    assert {s["timed_in"] for s in third["setups"]} == {second["id"]}  # the live times are taken next


def test_times_from_a_run_dated_after_this_plan_are_not_reused(tmp_path):
    """Clock skew: the earlier run's created_at is later than this plan's. Its times would look fresh for
    as long as the clock is behind, so they are timed again."""
    ahead = run(tmp_path, ROWS, at=MOMENT + timedelta(hours=3))
    plan = plan_run(Indexed(), write_golden(tmp_path, ROWS), timed=2, context=PlanContext(created_at=MOMENT))
    warned = []

    assert reusable_times(plan, ahead, max_age_days=7, warn=warned.append) == {}
    assert len(warned) == 3 and "it is dated after this run" in warned[0]
    later = plan_run(Indexed(), write_golden(tmp_path, ROWS), timed=2,
                     context=PlanContext(created_at=MOMENT + timedelta(hours=4)))
    assert len(reusable_times(later, ahead, max_age_days=7)) == 3  # the same report, from a plan after it


def test_a_report_whose_times_are_sound_is_believed_exactly():
    entry = {"times_ms": [3.25, 4.5, 1.0], "summary": timing_summary([3.25, 4.5, 1.0])}
    assert times_problem(entry) is None
    assert times_problem({**entry, "times_ms": [3.25, 4.5, LONGEST_SEARCH_MS + 1]}) is not None
    assert times_problem({**entry, "times_ms": [3.25, 4.5, 0.0], "summary": timing_summary([3.25, 4.5, 0.0])}) is None


def test_shards_are_sized_only_from_times_that_can_be_believed():
    sound = timing_summary([40.0, 60.0])
    report = {"setups": [
        {"key": "a", "times_ms": [40.0, 60.0], "summary": sound},
        {"key": "b", "times_ms": [40.0, 60.0], "summary": {**sound, "median_ms": 1e300}},
        {"key": "c", "times_ms": [1e300, 1e300], "summary": timing_summary([1e300, 1e300])},
    ]}
    assert measured_times(report) == {"a": 50.0}

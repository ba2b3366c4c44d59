"""Times per index state (``run.retime``): a run takes a setup's times from the newest run that timed it
live on the same target state, software and timed sample, and says so; anything changed, times live."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from conftest import run_cli
from evaluation import evaluate
from evaluation.report.html import render_html
from evaluation.report.text import render_report
from evaluation.run import plan_run, reusable_times, time_state
from fakes import ANSWERS, ListTarget, through_json, write_golden
from evaluation.run.plan import PlanContext

MOMENT = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
ROWS = [{"id": f"q{n}", "question": text, "expected": [text.split()[2]]} for n, text in enumerate(
    ["where is alpha", "where is beta", "where is gamma", "where is alpha now", "where is beta now"], start=1)]


class Indexed(ListTarget):
    """ListTarget with an index state of its own in ``describe`` (as an index's fingerprint is)."""

    def __init__(self, fingerprint="f1"):
        super().__init__("t", ANSWERS, held={"alpha", "beta", "gamma"})
        self.fingerprint = fingerprint

    def describe(self):
        return {**super().describe(), "fingerprint": self.fingerprint}


def run(tmp_path, rows, *, target=None, at=MOMENT, reuse=True, name="golden.jsonl"):
    folder = tmp_path / name.replace(".jsonl", "")
    folder.mkdir(exist_ok=True)
    return evaluate(target or Indexed(), write_golden(folder, rows), save_to=tmp_path / "runs", timed=2,
                    created_at=at, reuse_times=reuse)


def changed_outside_the_sample(report):
    """ROWS with one question outside the timed sample asked in other words (same id, same count)."""
    outside = next(r for r in ROWS if r["id"] not in report["timed_question_ids"])
    return [({**r, "question": r["question"] + " please"} if r is outside else r) for r in ROWS]


def test_a_save_that_changes_only_unsampled_questions_takes_the_earlier_runs_times(tmp_path):
    first = run(tmp_path, ROWS)
    second = run(tmp_path, changed_outside_the_sample(first), at=MOMENT + timedelta(hours=1), name="g2.jsonl")

    earlier = {s["key"]: s for s in first["setups"]}
    assert second["timed_question_ids"] == first["timed_question_ids"]
    for setup in second["setups"]:
        assert setup["timed_in"] == first["id"] and setup["times_ms"] == earlier[setup["key"]]["times_ms"]
        assert setup["time_state"] == earlier[setup["key"]]["time_state"]
        assert set(setup["ranks"]) == {r["id"] for r in ROWS}  # the sample's ranks were still searched
        assert setup["time_pass"] == earlier[setup["key"]]["time_pass"]  # timed side by side in the first run
    assert all("timed_in" not in s for s in first["setups"])  # the first timed live
    # so their pairs still compare side by side, on the first run's searches
    assert [p["questions"] for p in second["time_pairs"]] == [2] * len(second["time_pairs"])


def test_another_index_state_an_old_run_retime_or_a_changed_sample_times_live(tmp_path):
    first = run(tmp_path, ROWS)
    later = MOMENT + timedelta(hours=1)
    moved = run(tmp_path, ROWS, target=Indexed("f2"), at=later, name="a.jsonl")
    assert all("timed_in" not in s for s in moved["setups"])  # the index changed: timed live

    run(tmp_path, ROWS, at=later + timedelta(hours=1), name="b.jsonl")  # back on f1, newest is f2's: live
    old = run(tmp_path, ROWS, at=later + timedelta(days=8), name="c.jsonl", reuse=False)
    assert all("timed_in" not in s for s in old["setups"])

    plan = plan_run(Indexed(), write_golden(tmp_path, ROWS), timed=2,
                    context=PlanContext(created_at=MOMENT + timedelta(days=8)))
    assert reusable_times(plan, first, max_age_days=7) == {}  # 8 days old
    assert len(reusable_times(plan, first, max_age_days=9)) == 3
    sampled = next(r for r in ROWS if r["id"] in first["timed_question_ids"])
    asked_otherwise = [({**r, "question": r["question"] + " please"} if r is sampled else r) for r in ROWS]
    plan = plan_run(Indexed(), write_golden(tmp_path, asked_otherwise), timed=2, context=PlanContext(created_at=MOMENT))
    assert reusable_times(plan, first, max_age_days=7) == {}  # a sampled question changed


def test_reused_times_are_never_reused_again(tmp_path):
    first = run(tmp_path, ROWS)
    second = run(tmp_path, ROWS, at=MOMENT + timedelta(hours=1), name="b.jsonl")
    third = run(tmp_path, ROWS, at=MOMENT + timedelta(hours=2), name="c.jsonl")

    assert {s["timed_in"] for s in second["setups"]} == {first["id"]}
    assert all("timed_in" not in s for s in third["setups"])  # the newest had reused times: timed live


def test_the_state_covers_the_target_the_sample_and_the_timing_settings(tmp_path):
    golden = write_golden(tmp_path, ROWS)
    plan = plan_run(Indexed(), golden, timed=2, context=PlanContext(created_at=MOMENT))
    key = plan.setups[0].key

    assert time_state(plan, key) == time_state(through_json(plan), key)
    assert time_state(plan_run(Indexed("f2"), golden, timed=2,
                               context=PlanContext(created_at=MOMENT)), key) != time_state(plan, key)
    assert time_state(plan_run(Indexed(), golden, timed=3,
                               context=PlanContext(created_at=MOMENT)), key) != time_state(plan, key)
    budget = plan_run(Indexed(), golden, timed=2, time_budget=5, context=PlanContext(created_at=MOMENT))
    assert time_state(budget, key) != time_state(plan, key)
    assert time_state(plan, plan.setups[1].key) != time_state(plan, key)


def test_the_page_and_the_text_say_where_reused_times_were_measured(tmp_path):
    first = run(tmp_path, ROWS)
    second = run(tmp_path, ROWS, at=MOMENT + timedelta(hours=1), name="b.jsonl")

    page = render_html(second)
    assert f"<dt>timed in</dt><dd>run {first['id']}, same index state</dd>" in page
    assert f"(timed in run {first['id']}, same index state)" in " ".join(render_report(second).split())
    assert "timed in" not in render_html(first)


def test_the_command_line_times_live_unless_asked(capsys, tmp_path, sample_index):
    def cli(*more):
        code, out, _ = run_cli(capsys, "evaluate", "--index", str(sample_index), "--golden",
                               str(sample_index.parent.parent / "samples" / "golden.jsonl"), "--only", "keyword.bm25",
                               "--timed", "6", "--save-to", str(tmp_path / "runs"), "--json", "--quiet", *more)
        assert code == 0
        return json.loads(out)

    cli()  # a first run, whose times the later ones could reuse
    live, reused = cli(), cli("--reuse-times")

    assert [s.get("timed_in") for s in live["setups"]] == [None]
    assert [s.get("timed_in") for s in reused["setups"]] == [live["id"]]

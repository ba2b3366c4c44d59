"""The AWS flow end to end with no AWS: S3 notifications go to the trigger, which starts executions of the
template's state machine on moto's Step Functions (127.0.0.1); the local executor (tests/step_functions.py)
runs each execution's states in order through the Lambda handlers, against moto's S3 and the embedded
engine (the shipped sample's index, published to S3 first).

The same guarantees as the Function App's (tests/app/test_app_end_to_end.py): one save -> one report,
equal to ``python3 -m evaluation evaluate`` on the same files; the same event twice, or the same bytes
saved twice -> one execution; three saves inside the debounce -> one report, for the last bytes; a save
while the setups run -> no report for the replaced bytes; a setup that fails after its retries is
reported with its error and never picked, and the run is saved; a golden file with errors -> a refused run.
"""
from __future__ import annotations

import hashlib
import json

import pytest

from conftest import SAMPLES, run_cli
from step_functions import START
from test_app_end_to_end import fixed_clock  # noqa: F401  (the fixture: every timed search 1 ms, flow and CLI alike)

pytestmark = [pytest.mark.slow]

ROWS = (SAMPLES / "golden.jsonl").read_bytes().splitlines(keepends=True)
ONLY = ("keyword", "dense")  # four setups: BM25, each model alone, both fused (no cross-encoder: it is slow)
TIMED = 3
TIME_BUDGET = 7  # not the default: the flow's setting must reach the plan as the CLI's flag does
SHARD_QUESTIONS = 2  # 8 questions, 3 timed: each setup's batch of 5 in shards of 2, 2 and 1
DEBOUNCE = 60


def golden(first: int, count: int) -> bytes:
    return b"".join(ROWS[first:first + count])


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def sample_flow(aws_flow, sample_index, monkeypatch):
    from aws_fixtures import clear_caches
    from evaluation.engine.published import publish_index

    publish_index(sample_index, aws_flow.index_address())
    monkeypatch.setenv("EVALUATION_ONLY", ",".join(ONLY))
    monkeypatch.setenv("EVALUATION_TIMED", str(TIMED))
    monkeypatch.setenv("EVALUATION_TIME_BUDGET", str(TIME_BUDGET))
    monkeypatch.setenv("EVALUATION_SHARD_QUESTIONS", str(SHARD_QUESTIONS))
    monkeypatch.setenv("EVALUATION_DEBOUNCE_SECONDS", str(DEBOUNCE))
    clear_caches()
    return aws_flow


def test_one_save_gives_one_report_beside_the_golden_copy_equal_to_the_cli(
        sample_flow, fixed_clock, capsys, tmp_path):  # noqa: F811 - the fixture imported above
    flow = sample_flow
    data = golden(0, 8)
    sha = flow.save_and_deliver(data)

    flow.host.run()

    [report] = flow.reports()
    assert flow.names("docs/") == sorted([
        "docs/golden.jsonl", f"docs/golden_dataset/{sha}.jsonl", f"docs/retrieval/runs/{report['id']}/report.html",
        f"docs/retrieval/runs/{report['id']}/report.json"])  # the working files are gone too
    assert flow.read(f"docs/golden_dataset/{sha}.jsonl") == data
    assert report["golden"]["sha256"] == sha and report["golden"]["labelled"] == 8
    assert report["rules"]["time_budget"] == TIME_BUDGET
    [run] = flow.host.runs.values()
    assert run.output == {"collection": "docs", "sha256": sha, "outcome": "saved", "run_id": report["id"],
                          "report": f"docs/retrieval/runs/{report['id']}/report.json"}
    ranked = [job for _, name, job in flow.host.runner.calls if name == "rank_shard"]
    assert sorted((job["key"], job["shard"]) for job in ranked) == sorted(
        (setup["key"], shard) for setup in report["setups"] for shard in range(3))  # ceil(5 / 2) = 3 each
    assert [s["key"] for s in report["setups"] if s["error"]] == []
    assert sorted(s["key"] for s in report["setups"]) == [
        "local.dense.bge-small", "local.dense.bge-small+minilm-l6", "local.dense.minilm-l6", "local.keyword.bm25"]
    # the run waited out the debounce before it read the golden file again
    [(hashed_at, _, _)] = [call for call in flow.host.runner.calls if call[1] == "golden_hash"]
    assert (hashed_at - START).total_seconds() == DEBOUNCE  # the execution started at START

    code, out, err = run_cli(capsys, "evaluate", "--index", flow.index_address(),
                           "--golden", f"s3://{flow.bucket}/docs/golden.jsonl", "--only", ONLY[0], "--only", ONLY[1],
                           "--timed", str(TIMED), "--time-budget", str(TIME_BUDGET), "--index-cache",
                           str(tmp_path / "cli-cache"), "--json", "--quiet")
    assert code == 0, err
    cli = json.loads(out)
    aside = ("id", "created_at", "cache")  # when it ran, and where the batches' vectors came from
    for made in (report, cli):
        assert all(isinstance(setup.pop("cache"), dict) for setup in made["setups"])
        passes = {setup.pop("time_pass") for setup in made["setups"]}  # every setup timed in the run's one pass
        assert len(passes) == 1 and passes.pop().startswith(made["id"] + "/")
    assert {k: v for k, v in report.items() if k not in aside} == {k: v for k, v in cli.items() if k not in aside}
    print(f"largest state payload: {flow.host.runner.largest_payload} bytes")
    assert flow.host.runner.largest_payload < 4_000  # keys, paths and hashes: far under the 256 KB limit


def test_the_same_event_twice_and_the_same_bytes_saved_twice_start_one_execution(sample_flow):
    flow = sample_flow
    flow.save_and_deliver(golden(0, 4))
    flow.deliver()  # the same event again, while the run waits
    flow.save_and_deliver(golden(0, 4))  # the same bytes saved again
    flow.host.run()
    flow.deliver()  # delivered again, hours later: the execution ended, its report is for these bytes

    assert len(flow.executions()) == 1 and len(flow.reports()) == 1
    assert flow.deliver()["started"][0]["outcome"] == "ran"


def test_three_saves_inside_the_debounce_give_one_report_for_the_last_bytes(sample_flow):
    flow = sample_flow
    flow.save_and_deliver(golden(0, 4))
    flow.host.advance(20)
    flow.save_and_deliver(golden(4, 4))
    flow.host.advance(20)
    last = flow.save_and_deliver(golden(8, 4))

    flow.host.run()

    [report] = flow.reports()
    assert report["golden"]["sha256"] == last
    assert flow.outcomes() == ["saved", "superseded", "superseded"]
    assert flow.ran("golden_hash") == 3 and flow.ran("plan_evaluation") == 1  # the first two stop at the hash


def test_a_save_while_the_setups_run_gets_no_report_for_the_replaced_bytes(sample_flow):
    flow = sample_flow
    first = flow.save_and_deliver(golden(0, 4))
    newer = {}

    def save_mid_run(name, job):
        if name == "rank_shard" and not newer:
            newer["sha"] = flow.save_and_deliver(golden(4, 4))

    flow.host.runner.before_task = save_mid_run
    flow.host.run()

    assert [r["golden"]["sha256"] for r in flow.reports()] == [newer["sha"]]  # none for `first`
    replaced = next(run for run in flow.host.runs.values() if run.output["sha256"] == first)
    assert replaced.output["outcome"] == "superseded" and replaced.output["by"] == newer["sha"]
    assert flow.names("docs/golden_dataset/runs_in_progress/") == []  # its working files discarded


def test_saving_a_then_b_then_a_again_reports_on_a_under_the_next_name(sample_flow):
    """Each of the first two saves is superseded by the next; the third's name is the first's, ended,
    with no report for its bytes: it starts again as ``-r2`` and reports on what the file holds."""
    flow = sample_flow
    a = flow.save_and_deliver(golden(0, 4))
    flow.host.advance(20)
    flow.save_and_deliver(golden(4, 4))
    flow.host.run()  # A's run stops at the hash (B replaced it); B's run reports
    assert [r["golden"]["sha256"] for r in flow.reports()] == [sha256_of(golden(4, 4))]

    flow.save_and_deliver(golden(0, 4))  # A again: its first execution ended superseded
    flow.host.run()

    newest = max(flow.reports(), key=lambda r: r["id"])
    assert newest["golden"]["sha256"] == a
    names = sorted(e["name"] for e in flow.executions())
    assert len(names) == 3 and sum(name.endswith("-r2") for name in names) == 1


def test_a_setup_failing_after_its_retries_is_reported_with_its_error_never_picked_and_the_run_is_saved(
        sample_flow, monkeypatch):
    from evaluation.run import app_searches

    flow = sample_flow
    real = app_searches.rank_shard
    tries = []

    def broken_for_one_setup(folder, run_id, key, shard, **kwargs):
        if key == "local.keyword.bm25":
            tries.append(shard)
            raise OSError("the index file could not be read (injected)")
        return real(folder, run_id, key, shard, **kwargs)

    monkeypatch.setattr(app_searches, "rank_shard", broken_for_one_setup)
    flow.save_and_deliver(golden(0, 8))
    flow.host.run()

    [report] = flow.reports()
    failed = {s["key"]: s["error"] for s in report["setups"] if s["error"]}
    assert failed == {"local.keyword.bm25": "shard 1 of 3 failed after 3 attempts: "
                                            "the index file could not be read (injected)"}
    assert "local.keyword.bm25" not in report["picks"].values() and report["picks"]["finds_the_most"] is not None
    assert sorted(tries) == [0, 0, 0, 1, 1, 1, 2, 2, 2]  # every shard tried three times (two retries)
    timed = [job["keys"] for _, name, job in flow.host.runner.calls if name == "time_side_by_side"]
    assert timed and all("local.keyword.bm25" not in keys for keys in timed)  # a failed setup is never timed
    assert flow.outcomes() == ["saved"]


def test_a_timed_pass_failing_after_its_retries_fails_every_setup_it_timed_and_the_run_is_saved(
        sample_flow, monkeypatch):
    from evaluation.run import app_searches

    def broken(*args, **kwargs):
        raise OSError("the timed pass was cut short (injected)")

    monkeypatch.setattr(app_searches, "time_side_by_side", broken)
    sample_flow.save_and_deliver(golden(0, 4))
    sample_flow.host.run()

    [report] = sample_flow.reports()
    assert {s["error"] for s in report["setups"]} == {"the timed pass failed: the timed pass was cut short (injected)"}
    assert set(report["picks"].values()) == {None}
    assert sample_flow.ran("time_side_by_side") == 3 and sample_flow.outcomes() == ["saved"]


def test_a_golden_file_with_errors_is_a_refused_run(sample_flow):
    broken = golden(0, 2) + b'{"id": "q9", "question": "Where?", "expeted": ["x"]}\n'
    sample_flow.save_and_deliver(broken)

    sample_flow.host.run()

    [report] = sample_flow.reports()
    assert report["setups"] == [] and report["picks"]["finds_the_most"] is None
    assert report["refused"]["errors"][0]["line"] == 3 and "expeted" in report["refused"]["errors"][0]["message"]
    assert sample_flow.outcomes() == ["refused"] and sample_flow.ran("plan_evaluation") == 0


def test_the_flow_never_races_every_setup_searches_every_question(monkeypatch):
    """The state machine has no rounds with a look between them, so its plan is exhaustive whatever
    EVALUATION_EXHAUSTIVE says (docs/aws.md): a raced plan's later shards would be ranked and then
    left out of the report."""
    from app import steps
    from app.settings import AppSettings
    from aws import handlers

    given = []
    racing = AppSettings.from_environ({"EVALUATION_EXHAUSTIVE": "false"})  # what a team set: ignored here
    monkeypatch.setattr(handlers, "folder_of", lambda event: (racing, object()))
    monkeypatch.setattr(handlers, "collection_targets", lambda settings, folder: [])
    monkeypatch.setattr(handlers, "current_settings", lambda: None)
    monkeypatch.setattr(steps, "plan_evaluation",
                        lambda settings, folder, event, specs: given.append(settings) or {"refused": "none"})
    handlers.plan_evaluation({"collection": "docs"})
    assert [settings.exhaustive for settings in given] == [True]

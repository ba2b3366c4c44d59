"""``aws.trigger.golden_saved`` against moto's S3 and Step Functions on 127.0.0.1 (no model runs here): which
S3 records start a run, the execution names, and the dedupe Step Functions' name rule gives."""
from __future__ import annotations

import hashlib
import json
import re

import pytest

GOLDEN = b'{"id": "q1", "question": "Where is alpha?", "expected": ["alpha"]}\n'
OTHER = b'{"id": "q1", "question": "Where is beta?", "expected": ["beta"]}\n'


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- execution names ------------------------------------------------------------------------------------

@pytest.mark.parametrize("collection", ["docs", "team a docs", "x" * 512, "политика", "a/b"[0], "ÅÄÖ-ü_ß!"])
def test_an_execution_name_is_step_functions_shaped_whatever_the_collection(collection):
    from aws.trigger import execution_name

    for generation in (1, 2, 50):
        name = execution_name("golden", collection, "f" * 64, generation=generation)
        assert len(name) <= 80 and re.fullmatch(r"[A-Za-z0-9_-]+", name), name


def test_an_execution_name_holds_the_hash_and_tells_collections_with_one_slug_apart():
    from aws.trigger import execution_name

    one = execution_name("golden", "team a", sha(GOLDEN))
    assert one == execution_name("golden", "team a", sha(GOLDEN))  # the same save twice: one name
    assert sha(GOLDEN)[:12] in one and one.startswith("golden-team-a-")
    assert one != execution_name("golden", "team-a", sha(GOLDEN))  # one slug, two collections
    assert one != execution_name("golden", "team a", sha(OTHER))
    assert one != execution_name("now", "team a", sha(GOLDEN))
    assert execution_name("now", "docs", sha(GOLDEN), {"local": "1" * 64}) != \
        execution_name("now", "docs", sha(GOLDEN), {"local": "2" * 64})  # a changed index: a run now
    assert execution_name("golden", "docs", sha(GOLDEN), generation=2).endswith("-r2")


# -- which records start a run --------------------------------------------------------------------------

def test_a_save_starts_one_execution_whose_input_carries_the_hash_and_the_debounce(aws_flow, monkeypatch):
    from aws_fixtures import clear_caches

    monkeypatch.setenv("EVALUATION_DEBOUNCE_SECONDS", "45")
    clear_caches()
    aws_flow.save("docs/golden.jsonl", GOLDEN)

    done = aws_flow.deliver()

    [started] = done["started"]
    assert started["outcome"] == "started" and started["sha256"] == sha(GOLDEN)
    [execution] = aws_flow.executions()
    assert execution["name"] == started["execution"]
    described = aws_flow.stepfunctions.describe_execution(executionArn=execution["executionArn"])
    assert json.loads(described["input"]) == {"collection": "docs", "sha256": sha(GOLDEN), "debounce_seconds": 45,
                                              "trigger": "golden_saved", "state": None}


def test_a_key_s3_sent_url_encoded_names_its_collection(aws_flow):
    aws_flow.save("team a docs/golden.jsonl", GOLDEN)

    [started] = aws_flow.deliver("team a docs/golden.jsonl")["started"]  # sent as team+a+docs/golden.jsonl

    assert started["collection"] == "team a docs"


@pytest.mark.parametrize("path, kwargs, why", [
    ("docs/golden.jsonl", {"name": "ObjectRemoved:Delete"}, "is not an S3 ObjectCreated:*"),
    ("docs/golden.jsonl", {"bucket": "someone-elses"}, "outside the bucket"),
    ("golden.jsonl", {}, "not a collection's golden.jsonl"),
    ("docs/sub/golden.jsonl", {}, "not a collection's golden.jsonl"),
    ("docs/golden.jsonl.bak", {}, "not a collection's golden.jsonl"),
])
def test_a_record_that_is_not_a_collections_golden_file_is_acknowledged_and_starts_nothing(aws_flow, path, kwargs,
                                                                                         why):
    aws_flow.save(path, GOLDEN)

    done = aws_flow.deliver(path, **kwargs)

    assert done["started"] == [] and why in done["ignored"][0] and aws_flow.executions() == []


def test_a_golden_file_over_the_limit_or_gone_is_acknowledged_with_the_reason(aws_flow, monkeypatch):
    from aws_fixtures import clear_caches

    monkeypatch.setenv("EVALUATION_GOLDEN_MAX_BYTES", "10")
    clear_caches()
    aws_flow.save("docs/golden.jsonl", GOLDEN)
    [said] = aws_flow.deliver()["ignored"]
    assert f"s3://{aws_flow.bucket}/docs/golden.jsonl is {len(GOLDEN)} bytes, more than the 10 that " \
           "EVALUATION_GOLDEN_MAX_BYTES allows" in said

    aws_flow.delete("docs/golden.jsonl")
    [said] = aws_flow.deliver()["ignored"]
    assert said.endswith("docs/golden.jsonl is gone already; nothing to run")
    assert aws_flow.executions() == []


def test_the_trigger_without_its_state_machine_says_which_setting(aws_flow, monkeypatch):
    from app.settings import SettingsError
    from aws_fixtures import clear_caches

    monkeypatch.delenv("EVALUATION_STATE_MACHINE_ARN")
    clear_caches()
    with pytest.raises(SettingsError, match="EVALUATION_STATE_MACHINE_ARN is not set on the trigger"):
        aws_flow.deliver()


# -- dedupe: Step Functions' names ----------------------------------------------------------------------

def finish(flow, reported: bytes | None) -> None:
    """End every running execution, as the state machine would, leaving the newest report made from the
    golden bytes ``reported`` (a refused run's report is a real one, and small), or none."""
    for execution in flow.executions():
        if execution["status"] == "RUNNING":
            flow.stepfunctions.stop_execution(executionArn=execution["executionArn"])
    if reported is not None:
        from datetime import datetime, timezone

        from evaluation.run.assemble import refused_run_report
        from evaluation.store.runs import S3Store, new_run_id

        run_id = new_run_id(datetime.now(timezone.utc))
        report = refused_run_report(reported, source="docs/golden.jsonl", reason="a stand-in", run_id=run_id,
                                    created_at="2026-12-01T00:00:00+00:00", by="doc", timed=3)
        S3Store(flow.s3.client(), flow.bucket, "docs").save(report, reported)


def test_a_second_delivery_while_the_run_runs_is_the_same_execution(aws_flow):
    aws_flow.save("docs/golden.jsonl", GOLDEN)
    first = aws_flow.deliver()["started"][0]["execution"]

    again = aws_flow.deliver()["started"][0]  # Step Functions answers a start with the same name and input

    assert again["execution"] == first and len(aws_flow.executions()) == 1


def test_a_run_that_ended_with_a_report_for_these_bytes_ran(aws_flow):
    aws_flow.save("docs/golden.jsonl", GOLDEN)
    aws_flow.deliver()
    finish(aws_flow, GOLDEN)

    again = aws_flow.deliver()["started"][0]

    assert again["outcome"] == "ran" and len(aws_flow.executions()) == 1


def test_a_run_that_ended_without_a_report_for_these_bytes_starts_again_under_the_next_name(aws_flow):
    """A, then B, then A again: A's first run was superseded and the newest report is B's."""
    aws_flow.save("docs/golden.jsonl", GOLDEN)
    first = aws_flow.deliver()["started"][0]["execution"]
    finish(aws_flow, OTHER)

    again = aws_flow.deliver()["started"][0]
    once_more = aws_flow.deliver()["started"][0]  # a duplicate of that delivery, while the new run runs

    assert (again["outcome"], again["execution"]) == ("restarted", f"{first}-r2")
    assert once_more["execution"] == f"{first}-r2" and len(aws_flow.executions()) == 2
    finish(aws_flow, None)  # ended again with no report (it failed, say): the chain goes on
    assert aws_flow.deliver()["started"][0]["execution"] == f"{first}-r3"


def test_a_running_execution_of_the_name_with_another_input_covers_the_save(aws_flow, monkeypatch):
    from aws_fixtures import clear_caches

    aws_flow.save("docs/golden.jsonl", GOLDEN)
    aws_flow.deliver()
    monkeypatch.setenv("EVALUATION_DEBOUNCE_SECONDS", "5")  # the trigger's settings changed meanwhile
    clear_caches()

    again = aws_flow.deliver()["started"][0]

    assert again["outcome"] == "running" and len(aws_flow.executions()) == 1


# -- a run now --------------------------------------------------------------------------------------------

def test_a_run_now_has_no_debounce_and_is_named_by_the_targets_state_and_any_nonce(aws_flow, tmp_path):
    from aws.trigger import golden_saved
    from aws_fixtures import publish_fake_index

    publish_fake_index(aws_flow, tmp_path / "v1", "docs", "1" * 64)
    aws_flow.save("docs/golden.jsonl", GOLDEN)

    first = golden_saved({"collection": "docs"})["started"][0]
    same = golden_saved({"collection": "docs"})["started"][0]
    forced = golden_saved({"collection": "docs", "force": "build-42"})["started"][0]
    publish_fake_index(aws_flow, tmp_path / "v2", "docs", "2" * 64)  # the index rebuilt
    rebuilt = golden_saved({"collection": "docs"})["started"][0]

    assert first["execution"].startswith("now-docs-") and same["execution"] == first["execution"]
    assert len({first["execution"], forced["execution"], rebuilt["execution"]}) == 3
    described = aws_flow.stepfunctions.describe_execution(
        executionArn=aws_flow.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + rebuilt["execution"])
    job = json.loads(described["input"])
    assert job["debounce_seconds"] == 0 and job["state"] == {"local": "2" * 64} and job["trigger"] == "evaluate_now"

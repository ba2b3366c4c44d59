"""``refused_run_report``: the report the Function App keeps for a run refused before its plan, made
from the golden file's bytes alone (no Azure: the activity only reads the kept copy and saves this)."""
from __future__ import annotations

import hashlib

from evaluation.run import refused_run_report

BROKEN = (
    b'{"id": "q1", "question": "Where is alpha?", "expeted": ["alpha"]}\n'  # a typo: line 1, then no question ready
)
CLEAN = b'{"id": "q1", "question": "Where is alpha?", "expected": ["alpha"]}\n'
RUN = {"source": "docs/golden.jsonl", "run_id": "20261201T090000000Z-abcdef", "created_at": "2026-12-01T09:00:00Z"}


def test_without_a_reason_the_refusal_is_for_the_golden_files_errors_listed_by_line():
    report = refused_run_report(BROKEN, **RUN)

    refused = report["refused"]
    assert refused["reason"] == ("the golden file has 2 error(s); fix them (`python3 -m evaluation golden check`) "
                                 "and save it again")
    assert [e["line"] for e in refused["errors"]] == [1, None]  # the file's own error names no line
    assert refused["errors"][0]["message"] == '"expeted" is not a field. Did you mean "expected"?'
    assert report["golden"]["sha256"] == hashlib.sha256(BROKEN).hexdigest() and report["golden"]["questions"] == 1
    assert report["setups"] == [] and set(report["picks"].values()) == {None}


def test_a_reason_is_kept_and_a_clean_golden_files_report_keeps_its_counts_and_reads_back():
    """Without golden.questions and labelled a store cannot read the report: a run refused for its
    configuration would be missing from every list and never the newest (found with the AWS flow)."""
    from evaluation.store.shape import report_problem

    why = "no targets are configured for collection 'docs'; add docs/targets.json"

    report = refused_run_report(CLEAN, reason=why, **RUN)

    assert report["refused"] == {"reason": why, "errors": []}
    assert report["golden"] == {"source": "docs/golden.jsonl", "sha256": hashlib.sha256(CLEAN).hexdigest(),
                                "format": "jsonl", "questions": 1, "labelled": 1, "unfilled": 0, "drafts": 0,
                                "problems": []}
    assert report_problem(report) is None


def test_the_apps_settings_are_recorded_as_the_run_would_have_made_it():
    report = refused_run_report(CLEAN, reason="refused", by="chunk", timed=5, **RUN)

    assert report["by"] == "chunk" and report["rules"]["timed"] == 5

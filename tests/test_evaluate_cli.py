"""``python -m evaluation evaluate`` end to end on the shipped sample with the real engine."""
from __future__ import annotations

import json
from pathlib import Path

from evaluation.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
FAST = ["--only", "keyword", "--only", "hybrid.bge-small", "--timed", "3", "--quiet"]


def test_the_main_job_prints_the_ranked_table_and_the_three_picks_and_saves_the_run(sample_index, tmp_path, capsys):
    store = tmp_path / "runs"
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
                 "--save-to", str(store), *FAST])
    out = capsys.readouterr().out
    assert code == 0
    assert "local.keyword.bm25" in out and "local.hybrid.bge-small" in out
    for label in ("Finds the most:", "Best for balance:", "Best for time:"):
        assert label in out
    assert "Within noise (found@10, paired exact test, Holm-corrected, alpha 0.05):" in out
    run_id = out.strip().splitlines()[-1].split("run ")[1].split(" in ")[0]
    report = json.loads((store / "retrieval" / "runs" / run_id / "report.json").read_text(encoding="utf-8"))
    assert report["golden"]["labelled"] == 36
    assert (store / "golden_dataset" / f"{report['golden']['sha256']}.jsonl").read_bytes() == \
        (SAMPLES / "golden.jsonl").read_bytes()
    assert main(["runs", "show", "latest", "--store", str(store)]) == 0
    assert "Finds the most:" in capsys.readouterr().out


def test_json_output_is_the_report(sample_index, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"), "--json", *FAST])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["format"] == 1
    assert [s["key"] for s in report["setups"] if s["rank"]] and report["picks"]["finds_the_most"]


def test_fail_under_exits_1_and_says_which_threshold_was_missed(sample_index, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
                 "--fail-under", "found@1=1", "--fail-under", "found@20=0", *FAST])
    err = capsys.readouterr().err
    assert code == 1
    assert "fail-under: found@1 of" in err and "under 1\n" in err
    assert "found@20" not in err


def test_a_bad_fail_under_rule_is_a_usage_error(sample_index, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
                 "--fail-under", "found@7=0.5", *FAST])
    assert code == 2
    assert "is not METRIC=VALUE" in capsys.readouterr().err


def test_a_missing_golden_file_is_a_sentence_not_a_traceback(sample_index, tmp_path, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(tmp_path / "nope.jsonl"), *FAST])
    err = capsys.readouterr().err
    assert code == 1
    assert "no such golden file" in err and "Traceback" not in err

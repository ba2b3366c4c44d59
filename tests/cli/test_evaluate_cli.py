"""``python3 -m evaluation evaluate`` end to end on the shipped sample with the real engine."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.cli import main

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"
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
    # the answer last: what the run found and the picks, each with why; the statistics behind --details
    assert out.index("Picks (nothing is switched") > out.index("#  setup")
    assert "why: it finds the most questions in its top 10" in out
    assert "Faster setups the paired test cannot tell" not in out and "--details" in out
    assert "within noise" not in out.lower() and "loses nothing" not in out
    lines = out.strip().splitlines()
    page, link, data = lines[-3:]
    run_id = out.split("Saved as run ")[1].split(" in")[0]
    folder = store / "retrieval" / "runs" / run_id
    # the end says where to look: the page (and its file:// link on a line of its own) and the report
    assert page == f"  page:   {folder / 'report.html'}"
    assert link == f"          {(folder / 'report.html').resolve().as_uri()}"
    assert data == f"  report: {folder / 'report.json'}" and (folder / "report.html").is_file()
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["golden"]["labelled"] == 36
    assert (store / "golden_dataset" / f"{report['golden']['sha256']}.jsonl").read_bytes() == \
        (SAMPLES / "golden.jsonl").read_bytes()
    assert main(["runs", "show", "latest", "--store", str(store), "--details"]) == 0
    shown = capsys.readouterr().out
    assert "Finds the most:" in shown
    assert ("Faster setups the paired test cannot tell from each pick (found@10, exact test, Holm-corrected, alpha "
            "0.05):") in shown


def test_a_saved_report_holds_no_question_reference_or_evidence_text_from_the_golden_file(sample_index, tmp_path,
                                                                                         capsys):
    store = tmp_path / "runs"
    assert main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
                 "--save-to", str(store), "--by", "evidence", *FAST]) == 0
    capsys.readouterr()
    [saved] = (store / "retrieval" / "runs").glob("*/report.json")
    raw = saved.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = [t for row in rows for t in [row["question"], row.get("reference"), *row.get("evidence", [])] if t]
    assert len(texts) > 36 * 2
    leaked = [t for t in texts if t in raw or json.dumps(t)[1:-1] in raw]
    assert leaked == []
    assert [q["id"] for q in json.loads(raw)["questions"]] == [row["id"] for row in rows]


def test_questions_lists_each_question_with_its_text(sample_index, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"), "--questions",
                 *FAST])
    out = capsys.readouterr().out
    assert code == 0
    assert "identity-managed-identity" in out and "Which Azure hosting services can my Python" in out


def test_a_golden_file_with_errors_exits_1_naming_every_problem_before_any_search(sample_index, tmp_path, capsys):
    golden = tmp_path / "golden.jsonl"
    good = (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()[0]
    golden.write_text(good + '\n{"question": "Which?", "expected": []}\n{"question": "Why?"}\n', encoding="utf-8")
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(golden), *FAST])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "2 errors in the golden file, so no run starts" in err
    assert "line 2: \"expected\" is empty" in err and "line 3: needs \"expected\"" in err


def test_a_balance_that_is_not_a_number_is_refused_before_any_search(sample_index, capsys):
    # the command line refuses it as a flag; the library refuses it too (tests/run/test_evaluate.py)
    with pytest.raises(SystemExit) as caught:
        main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
              "--balance", "nan", *FAST])
    out, err = capsys.readouterr()
    assert caught.value.code == 2 and out == ""
    assert "nan is not a number of points" in err


def test_json_output_is_the_report(sample_index, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"), "--json", *FAST])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["format"] == 1
    assert [s["key"] for s in report["setups"] if s["rank"]] and report["picks"]["finds_the_most"]


def test_equally_fast_ms_is_the_reports_floor_and_a_negative_one_is_refused(sample_index, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"), "--json",
                 "--equally-fast-ms", "0.5", *FAST])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["rules"]["equally_fast_ms"] == 0.5
    assert {(p["faster"], p["slower"]) for p in report["time_pairs"]} in (
        {("local.keyword.bm25", "local.hybrid.bge-small")}, {("local.hybrid.bge-small", "local.keyword.bm25")})
    with pytest.raises(SystemExit) as caught:
        main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
              "--equally-fast-ms", "-1", *FAST])
    assert caught.value.code == 2 and "-1 is not a number of milliseconds" in capsys.readouterr().err


def test_fail_under_exits_1_and_says_which_threshold_was_missed(sample_index, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
                 "--fail-under", "found@1=1", "--fail-under", "found@20=0", *FAST])
    err = capsys.readouterr().err
    assert code == 1
    assert "fail-under: found@1 of" in err and "under 1 by " in err  # and by how much: 1 - found@1
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


def test_evaluate_warns_before_searching_about_every_label_that_can_never_score(sample_index, tmp_path, capsys,
                                                                                monkeypatch):
    """``doc#page=2`` on a document without pages scores 0 on every setup: said once, with the line and
    the same fix as ``golden check --index``, before the first search."""
    doc = "azure-identity/managed-identity-support"
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "paged", "question": "Which services support managed identity?",
                                  "expected": [f"{doc}#page=2"]}) + "\n"
                      + json.dumps({"id": "fine", "question": "Which credential does managed identity use?",
                                    "expected": [doc]}) + "\n"
                      + json.dumps({"id": "gone", "question": "Where is the lost page?",
                                    "expected": ["no-such-doc"]}) + "\n", encoding="utf-8")
    from evaluation.run import time_setups

    said_before_search = []

    def first_search(*args, **kwargs):  # the timed pass, side by side: a run's first searches
        said_before_search.append(capsys.readouterr().err)
        monkeypatch.setattr("evaluation.run.time_setups", time_setups)
        return time_setups(*args, **kwargs)

    monkeypatch.setattr("evaluation.run.time_setups", first_search)
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(golden), "--only", "keyword", "--quiet",
                 "--timed", "0"])
    assert code == 0, capsys.readouterr().err
    checked = main(["golden", "check", str(golden), "--index", str(sample_index)])
    out = capsys.readouterr().out
    assert checked == 0

    words = (f'line 1: "{doc}#page=2" names a page of "{doc}", which has no pages (no form feed in its text), '
             f'so it is never found as written; name "{doc}" alone')
    assert len(said_before_search) == 1 and f"warning: {golden}: {words}" in said_before_search[0]
    assert said_before_search[0].count("line ") == 1  # line 2 is fine; line 3's missing document is said
    assert "no-such-doc" in said_before_search[0]  # by the run's own note on missing documents, once
    assert "check the id, or add the document" not in said_before_search[0]
    assert words in out  # golden check says the same words


def test_the_ci_jobs_baseline_latest_on_an_empty_store_is_a_note_and_the_second_build_compares(sample_index, tmp_path,
                                                                                              capsys):
    # the README's CI job: its first build finds no run in the store it keeps runs in (not even the folder)
    store = tmp_path / "evaluations"
    gate = ["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"), "--save-to",
            str(store), *FAST, "--fail-under", "found@10=0.8", "--baseline", "latest", "--fail-on-regression"]
    assert main(gate) == 0
    first = capsys.readouterr()
    assert f"note: no baseline yet: {store} holds no run" in first.err and "error" not in first.err
    assert main(gate) == 0  # the second build compares with the first, and nothing regressed
    second = capsys.readouterr()
    assert "no baseline yet" not in second.err and "local.keyword.bm25" in second.out.split("Saved as run")[-1]
    # a --baseline-store that is not there is a mistake, not a first build: the gate is not turned off
    code = main([*gate, "--baseline-store", str(tmp_path / "typo")])
    err = capsys.readouterr().err
    assert code == 1 and "no baseline yet" not in err
    assert "check --baseline-store" in err and "--store" not in err.replace("--baseline-store", "")  # its own flag

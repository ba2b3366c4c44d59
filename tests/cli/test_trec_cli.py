"""``python3 -m evaluation score``: exit codes, the table and the JSON."""
from __future__ import annotations

import json

import pytest

from evaluation.cli import main

from conftest import GOLDEN_RAW, run_cli as run


@pytest.fixture
def files(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(GOLDEN_RAW)  # q1 -> doc-a, q2 -> report.pdf#page=4, q3 -> doc-c
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 doc-a 1 3.0 bm25\n"
                   "q2 Q0 report.pdf 1 3.0 bm25\n"
                   "q2 Q0 report.pdf#page=4 2 2.0 bm25\n"
                   "q1 Q0 doc-b 1 3.0 dense\n"
                   "q1 Q0 doc-a 2 2.0 dense\n")
    return str(golden), str(run)


def test_score_json_gives_each_run_tag_its_summary(capsys, files):
    golden, trec = files

    code, out, _ = run(capsys, "score", "--golden", golden, "--run", trec, "--json")

    assert code == 0
    scored = json.loads(out)
    assert set(scored) == {"bm25", "dense"}
    # bm25: q1 at 1, q2 at 2, q3 absent. dense: q1 at 2 only.
    assert scored["bm25"]["counts"] == {"1": 1, "3": 2, "5": 2, "10": 2, "20": 2}
    assert scored["bm25"]["mrr"] == pytest.approx((1 + 1 / 2 + 0) / 3, abs=1e-12)
    assert scored["dense"]["counts"]["10"] == 1
    assert scored["dense"]["mrr"] == pytest.approx((1 / 2) / 3, abs=1e-12)


def test_score_prints_a_table_with_one_row_per_run_tag(capsys, files):
    golden, trec = files

    code, out, _ = run(capsys, "score", "--golden", golden, "--run", trec)

    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["run", "found@1", "found@3", "found@5", "found@10", "found@20", "MRR", "nDCG@10"]
    # found@k a percent with its count, the means to three places: as every view writes them
    assert lines[2].split() == ["bm25", "33%", "(1/3)", *["67%", "(2/3)"] * 4, f"{(1 + 1 / 2) / 3:.3f}",
                                f"{(1 + 1 / 1.5849625007211563) / 3:.3f}"]  # 1/log2(3) for position 2


def test_score_of_a_bad_run_line_is_one_sentence_and_exit_1(capsys, files, tmp_path):
    golden, _ = files
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 doc-a 1\n")

    code, out, err = run(capsys, "score", "--golden", golden, "--run", str(bad))

    assert code == 1
    assert out == ""
    assert err.strip() == f"error: {bad}: line 1: 4 fields; a TREC run line is `qid Q0 docno rank score tag`"


def test_score_of_a_missing_run_file_exits_1(capsys, files, tmp_path):
    golden, _ = files

    code, _, err = run(capsys, "score", "--golden", golden, "--run", str(tmp_path / "absent.trec"))

    assert code == 1
    assert "no such run file" in err


def test_score_by_evidence_exits_1_with_the_reason(capsys, files):
    golden, trec = files

    code, _, err = run(capsys, "score", "--golden", golden, "--run", trec, "--by", "evidence")

    assert code == 1
    assert "no text" in err


def test_score_with_an_unknown_grain_exits_2(capsys, files):
    golden, trec = files

    with pytest.raises(SystemExit) as caught:
        main(["score", "--golden", golden, "--run", trec, "--by", "sentence"])

    assert caught.value.code == 2


def test_score_orders_ties_like_trec_eval_unless_told_to_follow_the_rank_column(capsys, files, tmp_path):
    golden, _ = files
    tied = tmp_path / "tied.trec"
    # doc-a and doc-z tie at 1.0; the file ranks doc-a first, trec_eval puts doc-z ("z" > "a") first
    tied.write_text("q1 Q0 doc-a 1 1.0 t\nq1 Q0 doc-z 2 1.0 t\n")

    _, out, _ = run(capsys, "score", "--golden", golden, "--run", str(tied), "--json")
    _, by_rank, _ = run(capsys, "score", "--golden", golden, "--run", str(tied), "--json", "--order", "rank")

    assert json.loads(out)["t"]["per_question"]["q1"]["first"] == 2
    assert json.loads(by_rank)["t"]["per_question"]["q1"]["first"] == 1

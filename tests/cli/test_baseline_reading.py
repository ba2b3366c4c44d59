"""``evaluate --baseline RUN`` of a run read another way (its --by, --rank-among or --min-grade) is refused
before the first search: the comparison after the run would refuse it anyway (``report.compare``), once the
run had been searched and saved (issue 46's probe pass)."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from conftest import run_cli

core = importlib.import_module("evaluation.evaluate")  # the module: the package's `evaluate` is the function

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "readmes.jsonl"
GOLDEN = ('{"id": "q1", "question": "How do I install tokenizers?", "expected": {"tokenizers": 2}}\n'
          '{"id": "q2", "question": "Which library splits text into tokens?", "expected": ["tokenizers"]}\n')


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    from evaluation.cli import main

    folder = tmp_path_factory.mktemp("baseline") / "idx"
    assert main(["index", str(CORPUS), "--out", str(folder), "--models", "hash", "--quiet"]) == 0
    return folder


@pytest.fixture
def kept(index, tmp_path, capsys):
    """A store holding one run, judged by doc among documents from grade 1; the golden file it read."""
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    store = tmp_path / "store"
    code, _, err = run_cli(capsys, "evaluate", "--index", str(index), "--mode", "keyword", "--golden", str(golden),
                           "--rank-among", "documents", "--save-to", str(store), "--quiet")
    assert code == 0, err
    return ["evaluate", "--index", str(index), "--mode", "keyword", "--golden", str(golden), "--no-save", "--quiet",
            "--baseline", "latest", "--baseline-store", str(store)]


def never_searched(*args, **keywords):
    raise AssertionError("the run started")


@pytest.mark.parametrize("flags, made, would", [
    ([], "--rank-among documents", "--rank-among results"),
    (["--rank-among", "documents", "--min-grade", "2"], "--min-grade 1", "--min-grade 2"),
    (["--min-grade", "2"], "--rank-among documents, --min-grade 1", "--rank-among results, --min-grade 2"),
    (["--by", "chunk", "--rank-among", "documents"], "--by doc", "--by chunk"),
    (["--by", "chunk"], "--by doc, --rank-among documents", "--by chunk, --rank-among results"),
])
def test_a_baseline_read_another_way_is_refused_before_the_first_search(kept, capsys, monkeypatch, flags, made,
                                                                         would):
    monkeypatch.setattr(core, "run_evaluation", never_searched)
    code, out, err = run_cli(capsys, *kept, *flags)
    assert code == 2 and out == "" and "the run started" not in err
    assert f"was made with {made}, and this run would be made with {would}, so their ranks mean different" in err
    assert f"give {made.replace(',', '')} to compare with it" in err and "(nothing was searched)" in err


def test_a_baseline_read_the_same_way_is_compared_after_the_run(kept, capsys):
    code, out, err = run_cli(capsys, *kept, "--rank-among", "documents")
    assert code == 0, err
    assert "Regressions (found@10 significantly lower): none" in out


def test_at_the_chunk_grain_both_ways_of_ranking_are_one_as_the_comparison_reads_them():
    from argparse import Namespace

    from evaluation.cli.evaluate_cmd import refuse_other_reading
    from evaluation.errors import UsageError
    from evaluation.store.run_report import RunReport

    baseline = RunReport.from_json({"id": "r1", "by": "chunk", "rules": {"rank_among": "documents", "min_grade": 1}})
    refuse_other_reading(baseline, Namespace(baseline="r1", by="chunk", rank_among="results", min_grade=1))
    with pytest.raises(UsageError, match="was made with --by chunk, --rank-among documents, and this run would be "
                                         "made with --by doc, --rank-among results"):
        refuse_other_reading(baseline, Namespace(baseline="r1", by="doc", rank_among="results", min_grade=1))
    old = RunReport.from_json({"id": "r0", "by": "doc"})  # from before the rules were kept: among results, grade 1
    refuse_other_reading(old, Namespace(baseline="r0", by="doc", rank_among="results", min_grade=1))


READINGS = [(by, among, grade) for by in ("doc", "chunk", "page") for among in ("results", "documents")
            for grade in (1, 2)]


@pytest.mark.parametrize("before", READINGS)
def test_evaluate_refuses_before_the_run_exactly_the_baselines_the_comparison_refuses_after_it(before):
    """One rule (``report.compare.differing_readings``), read by both: a run evaluate --baseline lets start is
    one the comparison then takes, and one it refuses is one the comparison would refuse, over every pair of
    grains, rank readings and grades."""
    from argparse import Namespace

    from evaluation.cli.evaluate_cmd import refuse_other_reading
    from evaluation.errors import UsageError
    from evaluation.report.compare import refuse_other_rules
    from evaluation.store.run_report import RunReport

    def report(run_id: str, reading: tuple[str, str, int]) -> RunReport:
        by, among, grade = reading
        return RunReport.from_json({"id": run_id, "by": by, "rules": {"rank_among": among, "min_grade": grade}})

    def refused(call, *args) -> bool:
        try:
            call(*args)
        except UsageError:
            return True
        return False

    baseline = report("r1", before)
    for after in READINGS:
        by, among, grade = after
        at_start = refused(refuse_other_reading, baseline,
                           Namespace(baseline="r1", by=by, rank_among=among, min_grade=grade))
        after_run = refused(refuse_other_rules, baseline, report("r2", after))
        assert at_start == after_run, (before, after)
        # the rule itself: the same reading always compares; another grain or grade never does; the rank
        # reading counts except when both runs judged chunks
        assert after_run == (before[0] != by or before[2] != grade
                             or (before[1] != among and not before[0] == by == "chunk")), (before, after)

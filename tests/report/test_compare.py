"""Two runs compared: per-question moves, the paired test per setup, the regression gate, shared questions."""
from __future__ import annotations

import json

import pytest

from evaluation import evaluate
from evaluation.errors import UsageError
from evaluation.report.compare import compare_reports, regressions, render_comparison
from evaluation.store import open_store

from conftest import run_cli
from fakes import ListTarget, write_golden

N = 36
ROWS = [{"id": f"q{i}", "question": f"where is d{i}", "expected": [f"d{i}"]} for i in range(N)]


def answers(keyword_lost=(), dense_lost=(), hybrid_lost=(), keyword_at=None):
    """Every setup finds d<i> first for every question, except the questions it has lost; ``keyword_at``
    puts keyword's answer at another position ({question number: position})."""
    def lists(lost, at=None):
        at = at or {}
        return {row["question"]: ([] if i in lost else ["other"] * (at.get(i, 1) - 1) + [row["expected"][0]])
                for i, row in enumerate(ROWS)}
    return {"keyword": lists(keyword_lost, keyword_at), "dense": lists(dense_lost), "hybrid": lists(hybrid_lost)}


def run(tmp_path, run_id, rows=ROWS, **lost):
    folder = tmp_path / run_id
    folder.mkdir()
    target = ListTarget("t", answers(**lost), held={f"d{i}" for i in range(N)})
    # every setup on every question: these runs are about comparing whole runs (a fake target's setups
    # cost a remote search each, so they would race)
    return evaluate(target, write_golden(folder, rows), run_id=run_id, timed=0, resamples=1000, exhaustive=True)


def test_a_planted_regression_is_significant_and_named_with_the_questions_it_lost(tmp_path):
    baseline = run(tmp_path, "a")
    current = run(tmp_path, "b", keyword_lost=range(10), dense_lost={3})
    comparison = compare_reports(baseline, current, resamples=1000)
    keyword, dense = comparison["setups"]["t.keyword.bm25"], comparison["setups"]["t.dense.m"]
    # keyword lost 10 and gained none: p = 2 / 2**10; Holm over 3 setups: * 3 = 0.005859375
    assert keyword["found@10"]["p_holm"] == pytest.approx(3 * 2 / 2 ** 10)
    assert (
        keyword["regressed"] is True and keyword["baseline"]["found@10"] == 36 and keyword["current"]["found@10"] == 26
    )
    assert [m["id"] for m in keyword["worse"]] == [f"q{i}" for i in range(10)] and keyword["better"] == []
    assert keyword["worse"][0] == {"id": "q0", "before": 1, "after": None}
    assert dense["regressed"] is False and dense["found@10"]["p"] == 1.0  # one lost: 2 / 2**1 = 1
    assert [sentence.split(":")[0] for sentence in regressions(comparison)] == ["t.keyword.bm25"]
    assert comparison["questions"]["matched_by"] == "id and text hash" and comparison["questions"]["shared"] == 36


def test_questions_whose_first_relevant_result_moved_are_listed_worse_or_better(tmp_path):
    comparison = compare_reports(run(tmp_path, "a", keyword_at={0: 1, 1: 4}),
                                 run(tmp_path, "b", keyword_at={0: 3, 1: 2}))
    keyword = comparison["setups"]["t.keyword.bm25"]
    assert keyword["worse"] == [{"id": "q0", "before": 1, "after": 3}]
    assert keyword["better"] == [{"id": "q1", "before": 4, "after": 2}]
    assert keyword["found@10"]["better"] == keyword["found@10"]["worse"] == 0  # both stay in the top 10


def test_a_loss_significant_alone_but_not_after_holm_across_setups_is_no_regression(tmp_path):
    comparison = compare_reports(run(tmp_path, "a"), run(tmp_path, "b", keyword_lost=range(6)))
    keyword = comparison["setups"]["t.keyword.bm25"]["found@10"]
    assert keyword["p"] == pytest.approx(2 / 2 ** 6)  # 0.03125: under 0.05 alone
    assert keyword["p_holm"] == pytest.approx(3 * 2 / 2 ** 6)  # 0.09375 across the 3 setups compared
    assert regressions(comparison) == []


def test_identical_runs_show_no_move_and_no_regression(tmp_path):
    comparison = compare_reports(run(tmp_path, "a", dense_lost={1, 2}), run(tmp_path, "b", dense_lost={1, 2}))
    assert all(s["worse"] == s["better"] == [] and s["found@10"]["p"] == 1.0 for s in comparison["setups"].values())
    assert regressions(comparison) == [] and "Regressions (found@10 significantly lower): none" in render_comparison(
        comparison
    )


def test_runs_on_different_golden_files_are_compared_on_the_questions_they_share(tmp_path):
    reworded = [dict(r, question=r["question"] + "?") if i < 6 else r for i, r in enumerate(ROWS)]
    current_rows = reworded[:32] + [{"id": "new", "question": "where is d1 now", "expected": ["d1"]}]
    comparison = compare_reports(run(tmp_path, "a"), run(tmp_path, "b", rows=current_rows))
    questions = comparison["questions"]
    # 36 before; 6 reworded and 4 dropped leave 26 shared; the current run adds 6 reworded + 1 new
    assert (questions["shared"], questions["only_in_baseline"], questions["only_in_current"]) == (26, 10, 7)
    assert questions["reworded"] == [f"q{i}" for i in range(6)]
    assert comparison["setups"]["t.keyword.bm25"]["questions"] == 26
    text = render_comparison(comparison)
    assert "26 shared question(s), matched by id and text hash" in text and "The golden files differ" in text


def test_no_shared_question_is_a_sentence_not_a_crash(tmp_path):
    other = [dict(r, id=f"x{i}") for i, r in enumerate(ROWS)]
    comparison = compare_reports(run(tmp_path, "a"), run(tmp_path, "b", rows=other))
    assert comparison["questions"]["shared"] == 0 and comparison["setups"] == {}
    assert set(comparison["not_compared"].values()) == {"no shared question"}
    assert "No question is shared, so nothing can be compared" in render_comparison(comparison)
    assert regressions(comparison) == []


def test_reports_that_kept_question_text_are_hashed_and_those_with_neither_match_by_id(tmp_path, make_report):
    older = make_report(with_text=True)  # questions kept as text, as reports did before the hash
    same = make_report(run_id="20261130T012433123Z-000002", with_text=True)
    assert compare_reports(older, same)["questions"]["matched_by"] == "id and text hash"
    for row in same["questions"]:
        row["question"] += " (reworded)"
    assert compare_reports(older, same)["questions"]["shared"] == 0
    for row in same["questions"]:
        del row["question"]
    by_id = compare_reports(older, same)
    assert by_id["questions"]["matched_by"] == "id only" and by_id["questions"]["shared"] == 3
    assert "questions with the same id are taken as the same" in render_comparison(by_id)
    assert by_id["setups"]["local.keyword.bm25"]["ndcg_10"] is None  # older entries kept no per-question nDCG
    assert by_id["not_compared"] == {"local.hybrid.bge-small": "failed in the baseline and current run"}


def test_runs_judged_at_different_grains_are_refused(tmp_path, make_report):
    with pytest.raises(UsageError, match="judged by doc .* by chunk"):
        compare_reports(make_report(), make_report(by="chunk"))


def test_runs_that_read_ranks_differently_are_refused_not_called_better(make_report):
    # the same results read among results and among documents: a document's later chunks take places in
    # one and not the other, so every setup would seem to improve. A sentence says why and what to run
    results = {"q1": ["a", "a", "b"], "q2": ["c", "c", "c", "d"]}
    questions = {"q1": ["b"], "q2": ["d"]}
    among_results = make_report("20261130T012433123Z-000001", questions=questions, setups={"t.keyword.x": results})
    among_documents = make_report("20261201T012433123Z-000002", questions=questions, setups={"t.keyword.x": results})
    among_results["rules"]["rank_among"], among_documents["rules"]["rank_among"] = "results", "documents"
    with pytest.raises(UsageError) as refused:
        compare_reports(among_results, among_documents)
    assert str(refused.value).startswith("run 20261130T012433123Z-000001 and run 20261201T012433123Z-000002 read "
                                         "ranks differently (among results, among documents)")
    assert "--rank-among results, then compare" in str(refused.value)
    among_results.pop("rules")  # a report from before readings read among results: still refused
    with pytest.raises(UsageError, match=r"among results, among documents"):
        compare_reports(among_results, among_documents)
    # at the chunk grain the two readings are one
    chunks = [make_report(run_id, by="chunk", questions=questions, setups={"t.keyword.x": results})
              for run_id in ("20261130T012433123Z-000001", "20261201T012433123Z-000002")]
    chunks[0]["rules"]["rank_among"], chunks[1]["rules"]["rank_among"] = "results", "documents"
    assert compare_reports(*chunks, resamples=100)["setups"]


def test_runs_that_count_relevance_from_different_grades_are_refused(make_report):
    one, two = make_report(), make_report("20261201T012433123Z-000002")
    two["rules"]["min_grade"] = 2
    with pytest.raises(UsageError, match=r"count relevance from different grades \(1 and 2\).*--min-grade 1"):
        compare_reports(one, two)


# -- the command line -------------------------------------------------------------------------------

@pytest.fixture
def store(tmp_path):
    kept = open_store(str(tmp_path / "runs"))
    kept.save(run(tmp_path, "20261201T000000000Z-aaaaaa"))
    kept.save(run(tmp_path, "20261202T000000000Z-bbbbbb", keyword_lost={5}))  # noise
    kept.save(run(tmp_path, "20261203T000000000Z-cccccc", keyword_lost=range(8)))  # regression
    return tmp_path / "runs"


def test_the_gate_exits_1_on_a_planted_regression_and_0_on_noise(store, capsys):
    code, out, err = run_cli(capsys, "compare", "20261201T000000000Z-aaaaaa", "latest", "--store", str(store),
                             "--fail-on-regression", "--resamples", "500")
    assert code == 1
    assert "regression: t.keyword.bm25: found@10 36 -> 28 of 36 shared questions (8 lost, 0 gained" in err
    assert "t.keyword.bm25 worse: q0 (1 -> not found)" in out
    code, out, err = run_cli(capsys, "compare", "20261201T000000000Z-aaaaaa", "20261202T000000000Z-bbbbbb",
                             "--store", str(store), "--fail-on-regression", "--resamples", "500")
    assert code == 0 and err == "" and "t.keyword.bm25 worse: q5 (1 -> not found)" in out


def test_without_the_flag_a_regression_is_shown_but_does_not_fail(store, capsys):
    code, out, _ = run_cli(capsys, "compare", "20261201T000000000Z-aaaaaa", "latest", "--store", str(store), "--json")
    assert code == 0 and json.loads(out)["setups"]["t.keyword.bm25"]["regressed"] is True


def test_an_unknown_run_or_a_bad_alpha_is_a_sentence(store, capsys):
    code, _, err = run_cli(capsys, "compare", "nope", "latest", "--store", str(store))
    assert code == 1 and "no run 'nope'" in err
    with pytest.raises(SystemExit) as refused:  # refused by the flag's type, before the store is read
        run_cli(capsys, "compare", "latest", "latest", "--store", str(store), "--alpha", "5")
    assert refused.value.code == 2 and "--alpha: 5 is not a probability" in capsys.readouterr().err


@pytest.mark.slow
def test_evaluate_against_a_baseline_fails_only_on_a_real_regression(sample_index, tmp_path, capsys):
    from conftest import SAMPLES

    store = str(tmp_path / "runs")
    fast = ["evaluate", "--index", str(sample_index), "--only", "keyword", "--timed", "2", "--quiet",
            "--resamples", "500", "--save-to", store]
    assert run_cli(capsys, *fast, "--golden", str(SAMPLES / "golden.jsonl"))[0] == 0
    code, out, _ = run_cli(capsys, *fast, "--golden", str(SAMPLES / "golden.jsonl"), "--baseline", "latest",
                           "--fail-on-regression")
    assert code == 0 and "36 shared question(s), matched by id and text hash" in out
    # Plant a regression: ten questions now expect a document that answers another question.
    rows = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()]
    for i in range(10):
        rows[i]["expected"] = rows[-1 - i]["expected"]
    planted = write_golden(tmp_path, rows)
    code, out, err = run_cli(capsys, *fast, "--golden", str(planted), "--baseline", "latest", "--fail-on-regression")
    assert code == 1 and "regression: local.keyword.bm25: found@10" in err
    assert "Expected documents changed for: " + rows[0]["id"] in out


def test_fail_on_regression_without_a_baseline_or_a_baseline_without_a_store_is_a_usage_error(tmp_path, capsys):
    code, _, err = run_cli(capsys, "evaluate", "--index", str(tmp_path), "--golden", "g.jsonl", "--fail-on-regression")
    assert code == 2 and "needs a run to compare with" in err
    code, _, err = run_cli(capsys, "evaluate", "--index", str(tmp_path), "--golden", "g.jsonl", "--baseline", "latest",
                           "--no-save")
    assert code == 2 and "--baseline-store STORE" in err


@pytest.mark.parametrize("store_state", ["missing", "empty"])
def test_a_baseline_in_a_store_with_no_run_yet_says_to_leave_it_out_on_a_first_run(tmp_path, capsys, store_state):
    store = tmp_path / "runs"
    if store_state == "empty":
        store.mkdir()
    run_id = "20261203T000000000Z-cccccc"

    # a named run the store cannot hold: was "check --store" (a flag evaluate does not have) or "save one with
    # `evaluate`" (what was being run); --baseline latest there is the first build's note (test_evaluate_cli)
    code, _, err = run_cli(capsys, "evaluate", "--index", str(tmp_path), "--golden", "g.jsonl", "--save-to", str(store),
                           "--baseline", run_id)
    assert code == 1 and err.startswith(f"error: --baseline {run_id}: ") and "check --store" not in err
    assert "(read from the store this run is kept in); on the first run into a store there is no run to compare " \
           "with: leave --baseline out until the store holds one" in err
    code, _, err = run_cli(capsys, "evaluate", "--index", str(tmp_path), "--golden", "g.jsonl", "--save-to", str(store),
                           "--baseline", "latest")
    assert err.startswith("note: no baseline yet: ") and "error: --baseline" not in err
    if store_state == "empty":
        code, _, err = run_cli(capsys, "evaluate", "--index", str(tmp_path), "--golden", "g.jsonl", "--save-to",
                               str(store), "--baseline", run_id, "--baseline-store", str(store))
        assert code == 1 and "(read from --baseline-store)" in err


def test_a_run_compared_with_itself_says_so_whether_named_latest_or_by_id(store, capsys):
    code, out, _ = run_cli(capsys, "compare", "latest", "latest", "--store", str(store))
    same_id = run_cli(capsys, "compare", "20261203T000000000Z-cccccc", "latest", "--store", str(store), "--json")
    other = run_cli(capsys, "compare", "20261201T000000000Z-aaaaaa", "latest", "--store", str(store), "--json")

    assert code == 0 and out.startswith("Run 20261203T000000000Z-cccccc is compared with itself, so nothing can differ")
    assert len(out.splitlines()) == 1
    assert json.loads(same_id[1])["same_run"] is True and json.loads(other[1])["same_run"] is False

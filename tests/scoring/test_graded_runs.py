"""Graded judgements through a whole run: the golden file's grades, the report's numbers, its exports read by
Azure AI Foundry's evaluator and by us, and a run that cannot find anything said as a sentence."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from evaluation import EmbeddedTarget, evaluate
from evaluation.engine.index import open_index
from evaluation.errors import GoldenFileError
from evaluation.golden import Question, read_golden
from evaluation.report.azure_rows import (
    read_evaluator_rows,
    report_evaluator_rows,
    score_evaluator_rows,
    write_evaluator_rows,
)
from evaluation.report.html import render_html
from evaluation.report.text import render_report

from conftest import SAMPLES, run_cli

ONLY = ["local.keyword.bm25", "local.dense.bge-small"]


def graded_sample(folder: Path, seed: int = 0) -> Path:
    """The sample's questions with grades 1-4 on their expected documents and two documents graded 0 each."""
    rng = random.Random(seed)
    rows = [
        json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    corpus = [json.loads(line)["id"] for line in (SAMPLES / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        grades = {doc: rng.randint(1, 4) for doc in row["expected"]}
        grades.update({doc: 0 for doc in rng.sample([d for d in corpus if d not in grades], 2)})
        row["expected"] = grades
    path = folder / "graded.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def graded_report(sample_index, tmp_path_factory):
    folder = tmp_path_factory.mktemp("graded")
    golden = graded_sample(folder)
    target = EmbeddedTarget(open_index(sample_index), cross_encoder=False, cache=False)
    return evaluate(target, golden, only=ONLY, rank_among="documents", timed=6, time_floor=6), golden


def test_a_graded_golden_file_keeps_its_grades_in_the_report_and_never_its_text(graded_report):
    report, golden = graded_report
    read = read_golden(golden)

    kept = {q["id"]: q for q in report["questions"]}
    for question in read.labelled:
        assert dict(kept[question.id].get("grades") or {}) == dict(question.grades)  # grades other than 1, zeros too
        assert "question" not in kept[question.id]
    assert report["rules"]["rank_among"] == "documents" and report["rules"]["min_grade"] == 1


def test_the_azure_numbers_in_the_report_are_the_evaluators_on_the_rows_it_exports(graded_report, tmp_path):
    evaluation_sdk = pytest.importorskip("azure.ai.evaluation")
    report, _ = graded_report
    evaluator = evaluation_sdk.DocumentRetrievalEvaluator()
    for setup in report["setups"]:
        rows = report_evaluator_rows(report, setup["key"])
        answers = [
            evaluator(retrieval_ground_truth=r["retrieval_ground_truth"], retrieved_documents=r["retrieved_documents"])[
                "document_retrieval_properties"
            ]
            for r in rows
        ]
        for name, mine in setup["summary"]["azure"]["exact"].items():
            values = [a[name] for a in answers if not (isinstance(a[name], float) and math.isnan(a[name]))]
            assert mine == pytest.approx(sum(values) / len(values), abs=5e-5 + 1e-9), (setup["key"], name)


def test_a_run_exported_as_evaluator_rows_and_read_back_gives_the_reports_numbers(graded_report, tmp_path):
    report, _ = graded_report
    for setup in report["setups"]:
        path = write_evaluator_rows(report_evaluator_rows(report, setup["key"]), tmp_path / "rows.jsonl")
        again = score_evaluator_rows(read_evaluator_rows(path))
        summary = setup["summary"]
        assert again["azure"] == summary["azure"]
        # ranked among documents, the rows' order is the report's: every number is the same
        assert again["counts"] == summary["counts"]
        for key in ("mrr", "ndcg_10"):
            assert again[key] == summary[key]


def test_graded_ndcg_is_not_the_binary_number(graded_report, sample_index, tmp_path):
    report, golden = graded_report
    binary = tmp_path / "binary.jsonl"
    binary.write_text("".join(json.dumps({"id": q.id, "question": q.question, "expected": list(q.expected)}) + "\n"
                              for q in read_golden(golden).labelled), encoding="utf-8")
    target = EmbeddedTarget(open_index(sample_index), cross_encoder=False, cache=False)
    plain = evaluate(target, binary, only=ONLY, rank_among="documents", timed=6, time_floor=6)

    graded_ndcg = {s["key"]: s["summary"]["ndcg_10"] for s in report["setups"]}
    plain_ndcg = {s["key"]: s["summary"]["ndcg_10"] for s in plain["setups"]}
    # the same results and the same relevant documents: found@k agree, nDCG weighs the grades
    assert {s["key"]: s["summary"]["counts"] for s in report["setups"]} == {
        s["key"]: s["summary"]["counts"] for s in plain["setups"]
    }
    assert graded_ndcg != plain_ndcg


def test_min_grade_makes_the_low_grades_not_relevant_for_found_and_leaves_ndcg(sample_index, tmp_path):
    golden = graded_sample(tmp_path)
    target = EmbeddedTarget(open_index(sample_index), cross_encoder=False, cache=False)
    one = evaluate(target, golden, only=ONLY[:1], timed=6, time_floor=6)
    three = evaluate(target, golden, only=ONLY[:1], timed=6, time_floor=6, min_grade=3)

    questions = read_golden(golden).labelled
    assert one["golden"]["labelled"] == len(questions)
    assert len(three["question_ids"]) == sum(1 for q in questions if q.relevant(3)) < len(questions)
    assert three["rules"]["min_grade"] == 3


# -- no silent zero ----------------------------------------------------------------------------------

def _folder_corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in {"keys.md": "Signing keys are rotated every ninety days by the vault service.",
                       "backup.md": "Backups run nightly and are kept for thirty days in another region.",
                       "access.md": "Access reviews happen each quarter for every production account."}.items():
        (docs / name).write_text(f"# {name}\n\n{text}\n", encoding="utf-8")
    return docs


def test_ids_without_their_extension_are_refused_by_golden_check_naming_the_ids_meant(tmp_path, capsys):
    docs = _folder_corpus(tmp_path)
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"question": "How often are keys rotated?", "expected": ["keys"]}\n'
                      '{"question": "How long are backups kept?", "expected": ["backup"]}\n', encoding="utf-8")

    code, out, _ = run_cli(capsys, "golden", "check", str(golden), "--corpus", str(docs))

    assert code == 1 and "Not ready to run." in out
    assert ('no question can be scored: none of the 2 questions names a document the corpus holds ("keys" (nearest: '
            '"keys.md")') in out


def test_ids_none_of_which_the_corpus_holds_end_evaluate_with_a_sentence_before_any_index_is_built(tmp_path, capsys):
    docs = _folder_corpus(tmp_path)
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"question": "How often are keys rotated?", "expected": ["keys"]}\n', encoding="utf-8")

    code, out, err = run_cli(capsys, "evaluate", "--corpus", str(docs), "--golden", str(golden), "--no-save",
                             "--index-dir", str(tmp_path / "index"))

    assert code != 0 and not out
    assert '"keys" (nearest: "keys.md")' in err and "every setup would find nothing" in err
    assert not (tmp_path / "index").exists()


def test_a_target_holding_none_of_the_ids_is_refused_by_the_library_too(sample_index):
    target = EmbeddedTarget(open_index(sample_index), cross_encoder=False, cache=False)
    questions = [Question("Where is it?", expected=["no-such-document"]), Question("And this?", expected=["nor-this"])]

    with pytest.raises(GoldenFileError, match="no question can be scored: none of the 2 questions names a document"):
        evaluate(target, questions, only=ONLY[:1])


def test_more_than_the_share_of_questions_found_nowhere_is_said_in_the_text_the_page_and_the_json(
    sample_index, tmp_path
):
    rows = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()[:10]]
    for row in rows[:3]:  # 3 of 10 (30%, more than 20%) name only a document no target holds
        row["expected"] = [row["expected"][0].rsplit(".", 1)[0] + "-gone"]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    said = []
    target = EmbeddedTarget(open_index(sample_index), cross_encoder=False, cache=False)

    report = evaluate(target, golden, only=ONLY[:1], timed=6, time_floor=6, warn=said.append)

    assert report["unfound"]["questions"] == 3 and report["unfound"]["of"] == 10 and report["unfound"]["limit"] == 0.2
    assert report["unfound"]["ids"] == [r["id"] for r in rows[:3]]
    assert any("3 of 10 questions (30%, more than 20%) name no document" in s for s in said)
    assert "WARNING: 3 of 10 questions (30%, more than 20%)" in render_report(report)
    assert 'id="unfound"' in render_html(report) and "3 of 10 questions (30%, more than 20%)" in render_html(report)
    assert report["picks"]["finds_the_most"] is not None  # the others still find: the run is an answer

    quiet = evaluate(target, golden, only=ONLY[:1], timed=6, time_floor=6, unfound_share=0.5)
    assert "unfound" not in quiet  # 30% is under a 50% share


def test_no_pick_is_named_from_a_run_in_which_no_setup_finds_anything(make_report):
    from evaluation.run.assemble import picks_withheld

    report = make_report(questions={"q1": ["doc-a"]}, setups={"t.keyword.bm25": {"q1": ["doc-b"]},
                                                               "t.dense.x": {"q1": ["doc-c"]}})
    ranked = [s for s in report["setups"] if s["summary"]]
    assert "no setup found an expected document of any question in its top 20" in picks_withheld(ranked)
    report["setups"][0]["results"]["q1"].append(["doc-a:9", "doc-a", None, 0.1])
    report["setups"][0]["summary"]["counts"]["20"] = 1
    assert picks_withheld(ranked) is None


def test_the_loud_share_is_more_than_the_setting_and_every_target_must_miss_a_question(sample_index):
    from evaluation.run.plan import found_nowhere
    from evaluation.settings import EvaluationSettings

    target = EmbeddedTarget(open_index(sample_index), cross_encoder=False, cache=False)
    questions = [Question(f"q{n}?", expected=[f"d{n}"], id=f"q{n}") for n in range(10)]
    lost = lambda n: {"documents": [f"d{i}" for i in range(n)], "questions": {f"q{i}": [f"d{i}"] for i in range(n)}}  # noqa: E731
    settings = EvaluationSettings()

    assert found_nowhere([target], questions, {"local": lost(2)}, settings) is None  # 20%: not more than 20%
    assert found_nowhere([target], questions, {"local": lost(3)}, settings)["questions"] == 3
    assert found_nowhere([target, target], questions, {"local": lost(3)}, settings) is None  # another target holds them
    assert found_nowhere([target], questions, {"local": lost(10)}, settings)["sentence"].startswith("no question can "
                                                                                                    "be scored")


def test_a_question_is_found_nowhere_only_when_every_target_misses_it_not_when_any_does():
    # two targets missing different documents: q0-q4 lost in one, q3-q7 in the other. Only q3 and q4 are
    # lost in both (2 of 10, 20%: not more than the share), though 8 of 10 are lost in one or the other
    from evaluation.run.plan import found_nowhere
    from evaluation.settings import EvaluationSettings
    from fakes import ANSWERS, ListTarget

    targets = [ListTarget("a", ANSWERS, held=()), ListTarget("b", ANSWERS, held=())]
    questions = [Question(f"q{n}?", expected=[f"d{n}"], id=f"q{n}") for n in range(10)]

    def lost(ids):
        return {"documents": [f"d{i}" for i in ids], "questions": {f"q{i}": [f"d{i}"] for i in ids}}

    settings = EvaluationSettings()
    assert found_nowhere(targets, questions, {"a": lost(range(5)), "b": lost(range(3, 8))}, settings) is None
    loud = found_nowhere(targets, questions, {"a": lost(range(6)), "b": lost(range(3, 9))}, settings)
    assert loud["questions"] == 3 and loud["ids"] == ["q3", "q4", "q5"]  # 30%: said, and only those three


def test_min_grade_2_is_2_in_the_run_its_timed_pass_its_trec_score_and_its_azure_rows(tmp_path, capsys):
    # a question whose best grade is exactly 2 is scored at --min-grade 2, and only its grade-2 document is
    # relevant; one whose best grade is 1 is not scored. Every check that reads the level reads 2, not 3
    from fakes import ListTarget, write_golden

    asked = {"where is two": ["a", "b", "c"], "where is one": ["a", "b"], "where is three": ["a", "b", "c"]}
    target = ListTarget("t", {m: asked for m in ("keyword", "dense", "hybrid")}, held={"a", "b", "c"})
    golden = write_golden(tmp_path, [{"id": "q-two", "question": "where is two", "expected": {"a": 1, "b": 2}},
                                     {"id": "q-one", "question": "where is one", "expected": {"a": 1}},
                                     {"id": "q-three", "question": "where is three", "expected": {"c": 3, "a": 2}}])
    store = tmp_path / "store"
    report = evaluate(target, golden, only=["t.keyword.bm25"], min_grade=2, timed=2, save_to=str(store))
    [entry] = report["setups"]
    assert report["question_ids"] == ["q-two", "q-three"]
    assert entry["ranks"] == {"q-two": 2, "q-three": 1}  # b (grade 2) second; a (grade 2) first
    summary = entry["summary"]
    assert summary["counts"]["1"] == 1 and summary["mrr"] == round((1 / 2 + 1) / 2, 4)

    out = tmp_path / "out"
    assert run_cli(capsys, "runs", "export", "latest", "--store", str(store), "--out", str(out))[0] == 0
    code, printed, _ = run_cli(capsys, "score", "--golden", str(golden), "--run", str(out / f"{report['id']}.run.trec"),
                               "--min-grade", "2", "--json")
    scored = json.loads(printed)["t.keyword.bm25"]
    assert (scored["questions"], scored["counts"], round(scored["mrr"], 4)) == (2, summary["counts"], summary["mrr"])
    [rows] = out.glob("*.azure.jsonl")
    code, printed, _ = run_cli(capsys, "score", "--azure-rows", str(rows), "--min-grade", "2", "--json")
    scored = json.loads(printed)
    assert (scored["questions"], scored["counts"], scored["mrr"]) == (2, summary["counts"], summary["mrr"])

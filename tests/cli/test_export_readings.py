"""``runs export`` and ``score --azure-rows`` read ranks as the run did: the TREC files and the Azure evaluator
rows follow the report's ``--rank-among`` unless told otherwise, say which reading they hold, and give back
the report's own numbers; a flag that would change nothing is refused, not ignored."""
from __future__ import annotations

import json

import pytest

from evaluation import evaluate
from evaluation.target import Hit

from conftest import run_cli
from fakes import ListTarget, write_golden

# Each question's results, best first: a document's later chunks come back before the expected one, so
# among results it lands lower than among documents. The grades make nDCG differ from the binary one.
RESULTS = {
    "where is alpha": ["x", "x", "x", "alpha"],
    "where is beta": ["beta", "beta", "y", "z", "gamma"],
    "where is gamma": ["y", "y", "gamma", "x", "gamma"],
}
ROWS = [{"id": "q-alpha", "question": "where is alpha", "expected": {"alpha": 2, "x": 0}},
        {"id": "q-beta", "question": "where is beta", "expected": {"beta": 1, "gamma": 3}},
        {"id": "q-gamma", "question": "where is gamma", "expected": ["gamma"]}]


class ChunkyTarget(ListTarget):
    """``ListTarget`` whose results are chunks of their documents: the n-th result is chunk n."""

    def _results(self, setup, question):
        docs = self.answers[setup.method].get(question, [])
        return [Hit(id=f"{d}:{n}", doc_id=d, page=None, score=1.0 / (n + 1)) for n, d in enumerate(docs)]


def kept_run(tmp_path, rank_among):
    target = ChunkyTarget("local", {"keyword": RESULTS, "dense": RESULTS, "hybrid": RESULTS},
                          held={"alpha", "beta", "gamma", "x", "y", "z"})
    golden = write_golden(tmp_path, ROWS)
    store = tmp_path / "store"
    report = evaluate(target, golden, only=["local.keyword"], save_to=str(store), rank_among=rank_among,
                      timed=1)
    return report, store


@pytest.mark.parametrize("rank_among", ["results", "documents"])
def test_an_export_with_no_reading_given_reads_as_the_report_did_and_says_so(tmp_path, capsys, rank_among):
    report, store = kept_run(tmp_path, rank_among)
    [entry] = report["setups"]
    out = tmp_path / "out"

    code, printed, said = run_cli(capsys, "runs", "export", "latest", "--store", str(store), "--out", str(out))

    assert code == 0
    assert f"TREC files ranked among {rank_among}, relevance from grade 1" in said
    assert f"Azure evaluator rows ranked among {rank_among}, each row saying so" in said
    assert "not the report's reading" not in said
    run_lines = (out / f"{report['id']}.run.trec").read_text().splitlines()
    alpha = [line.split()[2] for line in run_lines if line.startswith("q-alpha ")]
    # among documents x once, then alpha second; among results x's later chunks keep their places
    assert alpha == (["x", "alpha"] if rank_among == "documents" else ["x", "x:1", "x:2", "alpha"])
    [rows_file] = out.glob("*.azure.jsonl")
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert {row["rank_among"] for row in rows} == {rank_among}

    # the rows scored again: the report's found@k, MRR and nDCG@10, and its Azure numbers, in its reading
    code, printed, _ = run_cli(capsys, "score", "--azure-rows", str(rows_file), "--json")
    scored = json.loads(printed)
    summary = entry["summary"]
    assert scored["rank_among"] == rank_among
    assert (scored["counts"], scored["mrr"], scored["ndcg_10"]) == (summary["counts"], summary["mrr"],
                                                                    summary["ndcg_10"])
    assert scored["azure"] == summary["azure"] and summary["azure"]["rank_among"] == rank_among

    code, printed, _ = run_cli(capsys, "score", "--azure-rows", str(rows_file))
    assert code == 0 and printed.splitlines()[0].startswith(f"{rows_file}: ranked among {rank_among}, as the rows say")


def test_a_default_run_and_its_azure_rows_give_one_mrr_and_ndcg(tmp_path, capsys):
    # the case: rows written among documents from a run ranked among results gave another MRR and
    # nDCG@10 than the report
    report, store = kept_run(tmp_path, "results")
    summary = report["setups"][0]["summary"]
    alpha_rank = 4  # behind three chunks of x
    assert report["setups"][0]["ranks"]["q-alpha"] == alpha_rank
    code, _, _ = run_cli(capsys, "runs", "export", "latest", "--store", str(store), "--out", str(tmp_path / "out"),
                         "--format", "azure")
    [rows_file] = (tmp_path / "out").glob("*.azure.jsonl")
    code, printed, _ = run_cli(capsys, "score", "--azure-rows", str(rows_file), "--json")
    scored = json.loads(printed)
    assert scored["mrr"] == summary["mrr"] == round((1 / alpha_rank + 1 / 1 + 1 / 3) / 3, 4)
    assert scored["ndcg_10"] == summary["ndcg_10"]


def test_another_reading_asked_of_an_export_is_followed_by_the_azure_rows_and_said(tmp_path, capsys):
    report, store = kept_run(tmp_path, "results")
    out = tmp_path / "out"

    code, _, said = run_cli(capsys, "runs", "export", "latest", "--store", str(store), "--out", str(out),
                            "--format", "azure", "--rank-among", "documents")

    assert code == 0
    assert ("Azure evaluator rows ranked among documents (not the report's reading: it ranked among results), each "
            "row saying so: Azure's evaluator gives its numbers for that reading") in said
    [rows_file] = out.glob("*.azure.jsonl")
    rows = {json.loads(line)["query_id"]: json.loads(line) for line in rows_file.read_text().splitlines()}
    assert rows["q-alpha"]["rank_among"] == "documents"
    assert [d["document_id"] for d in rows["q-alpha"]["retrieved_documents"]] == ["x", "alpha"]


def test_a_reading_or_a_grain_beside_the_csv_tables_alone_is_refused_not_ignored(tmp_path, capsys):
    _, store = kept_run(tmp_path, "results")
    for flags in (["--rank-among", "documents"], ["--by", "chunk"]):
        code, _, said = run_cli(capsys, "runs", "export", "latest", "--store", str(store), "--out",
                                str(tmp_path / "out"), "--format", "csv", *flags)
        assert code == 2
        assert f"{flags[0]} say how the TREC run and the evaluator rows read ranks" in said
        assert not (tmp_path / "out").exists()


def test_azure_rows_of_an_evidence_report_are_refused_with_a_sentence_not_skipped(tmp_path, capsys, make_report):
    from evaluation.store import LocalStore

    LocalStore(tmp_path / "store").save(make_report(by="evidence"))
    code, printed, said = run_cli(capsys, "runs", "export", "latest", "--store", str(tmp_path / "store"), "--out",
                                  str(tmp_path / "out"), "--format", "azure")
    assert code == 1 and not printed
    assert "quotes are not documents Azure's evaluator ranks" in said and "--by doc" in said


def test_rows_that_say_no_reading_are_said_to_be_read_as_the_evaluator_reads_them(tmp_path, capsys):
    rows = tmp_path / "foundry.jsonl"
    rows.write_text(json.dumps({"query_id": "q1", "retrieval_ground_truth": [{"document_id": "a",
                                                                              "query_relevance_label": 2}],
                                "retrieved_documents": [{"document_id": "a", "relevance_score": 1.0}]}) + "\n",
                    encoding="utf-8")
    code, printed, _ = run_cli(capsys, "score", "--azure-rows", str(rows))
    assert code == 0
    assert printed.splitlines()[0] == (f"{rows}: the rows do not say how they rank (no rank_among), so they are read "
                                       "as Azure's evaluator reads them: each document once, at its best score "
                                       "(among documents)")


def test_a_run_kept_before_its_azure_numbers_followed_its_reading_is_said_to_hold_them_among_documents(tmp_path,
                                                                                                       capsys):
    from evaluation.store import LocalStore

    report, _ = kept_run(tmp_path, "results")
    for setup in report["setups"]:
        setup["summary"]["azure"].pop("rank_among")  # as every report made before kept them
    report["id"] = report["id"][:-6] + "999999"
    LocalStore(tmp_path / "old").save(report)
    code, _, said = run_cli(capsys, "runs", "export", "latest", "--store", str(tmp_path / "old"), "--out",
                            str(tmp_path / "out"), "--format", "azure")
    assert code == 0
    assert ("this run kept its Azure numbers read among documents (a run kept before they followed its reading), "
            "so score the rows to get them among results") in said

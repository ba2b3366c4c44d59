"""``sweep``: every build asked every question with each method, rows ranked by nDCG@10, then MRR, then
time; scratch folders removed; labels that name chunks refused with the reason; the Markdown table."""
from __future__ import annotations

import json

import pytest

from chunking_cut import engine_cutter, small_sample
from evaluation import sweep, sweep_markdown
from evaluation.errors import GoldenFileError, UsageError
from evaluation.golden import read_golden

BUILDS = ["markdown-1000-h", "fixed-500-n"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    corpus, golden = small_sample(folder, questions=6, others=3)
    work = folder / "work"
    work.mkdir()
    report = sweep(corpus, golden, builds=BUILDS, methods=("dense", "hybrid"), timed=3, workdir=work)
    return report, work, golden


def test_every_build_is_asked_with_every_method_and_ranked_by_ndcg_then_mrr_then_time(swept):
    report, _, _ = swept
    assert sorted((r["build"], r["method"]) for r in report["rows"]) == sorted(
        (b, m) for b in BUILDS for m in ("dense", "hybrid"))
    order = [(-r["ndcg_10"], -r["mrr"], r["median_ms"]) for r in report["rows"]]
    assert order == sorted(order)
    assert [r["rank"] for r in report["rows"]] == [1, 2, 3, 4] and report["best"] == report["rows"][0]["key"]


def test_each_row_holds_recall_and_found_at_each_k_chunks_build_seconds_and_median_ms(swept):
    report, _, _ = swept
    for row in report["rows"]:
        assert set(row["recall"]) == set(row["found"]) == set(row["counts"]) == {"1", "3", "5", "10"}
        assert row["found"]["10"] == round(row["counts"]["10"] / row["questions"], 4)
        assert row["counts"]["1"] <= row["counts"]["3"] <= row["counts"]["5"] <= row["counts"]["10"] <= 6
        assert row["chunks"] > 0 and row["build_seconds"] > 0 and row["median_ms"] > 0 and row["timed"] == 3
    same_build = [r for r in report["rows"] if r["build"] == "fixed-500-n"]
    assert same_build[0]["chunks"] == same_build[1]["chunks"]  # one build, two methods


def test_scratch_folders_are_removed_after(swept):
    _, work, _ = swept
    assert list(work.iterdir()) == []


def test_the_report_holds_no_question_or_passage_text(swept):
    report, _, golden = swept
    text = json.dumps(report)
    for question in read_golden(golden).questions:
        assert question.question not in text and (question.reference or "\0") not in text


def test_the_markdown_table_lists_every_row_best_first(swept):
    report, _, _ = swept
    table = sweep_markdown(report).splitlines()
    rows = [line for line in table if line.startswith("| ") and not line.startswith("| #")]
    assert len(rows) == 4 and rows[0].startswith(f"| 1 | `{report['rows'][0]['build']}` | "
                                                 f"{report['rows'][0]['method']} |")
    assert "nDCG@10" in table[0] and "found@10" in table[0]


def test_a_golden_file_of_chunk_ids_is_refused_with_the_reason(tmp_path):
    corpus, golden = small_sample(tmp_path, questions=2, others=0)
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    rows[1]["expected"] = [rows[1]["expected"][0] + ":3"]
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(GoldenFileError, match=r'line 2: expected ".+:3" is chunk 3 of ".+"; chunk ids change with the '
                                              r"chunker.*write \""):
        sweep(corpus, golden, builds=["fixed-500-n"], cutter=engine_cutter)


def test_a_grain_other_than_doc_and_an_unknown_method_are_refused(tmp_path):
    corpus, golden = small_sample(tmp_path, questions=1, others=0)
    with pytest.raises(UsageError, match='by="chunk": a chunking run judges by document only'):
        sweep(corpus, golden, by="chunk")
    with pytest.raises(UsageError, match='"hybird" is not a method.*Did you mean "hybrid"'):
        sweep(corpus, golden, methods=("hybird",))


def test_an_unknown_build_key_is_refused_with_what_a_key_is(tmp_path):
    corpus, golden = small_sample(tmp_path, questions=1, others=0)
    with pytest.raises(UsageError, match="A build key is <technique>-<size>-<letter>"):
        sweep(corpus, golden, builds=["markdwn-1000-h"])


def test_a_build_that_fails_is_reported_and_the_others_still_run(tmp_path):
    corpus, golden = small_sample(tmp_path, questions=2, others=0)

    def cutter(key, corpus):
        if key.startswith("structure"):
            raise RuntimeError("this cutter broke")
        return engine_cutter(key, corpus)

    report = sweep(corpus, golden, builds=["structure-200-h", "fixed-200-n"], methods=("keyword",), timed=0,
                   cutter=cutter)
    assert report["failed"] == [{"build": "structure-200-h", "error": "RuntimeError: this cutter broke"}]
    assert [r["build"] for r in report["rows"]] == ["fixed-200-n"]

"""run_matrix and ``python3 -m evaluation matrix``: ElectriPy's documented example, ids, the trap, the gate.

Every run here uses the ``hash`` embedder (no model loaded) on a corpus written below, so each test
takes about a second; ``bench/`` and the closing note carry the run with the bundled models.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.errors import UsageError
from evaluation.builds import ChunkVariant, parse_thresholds, run_matrix
from evaluation.builds.grid import Experiment
from evaluation.builds.variants import cut_corpus
from evaluation.engine.corpus import read_corpus

ROOT = Path(__file__).parent.parent.parent
KEYS = "Signing keys are rotated every 90 days by the platform team. "
LUNCH = "The cafeteria serves lunch at noon on weekdays, soup on Fridays. "
BACKUP = "Backups run nightly and are kept for thirty days in another region. "
OFFICE = "The office opens at eight and closes at six, except on public holidays. "
CORPUS = [  # doc-1 is long: its chunk numbers name other text at 100 characters than at 300
    {"id": "doc-1", "text": LUNCH + BACKUP + OFFICE + KEYS, "source_uri": "memory://", "metadata": {"topic": "mixed"}},
    {"id": "doc-2", "text": "Hello world. A greeting to everyone who reads this.", "metadata": {"topic": "greeting"}},
    {"id": "doc-3", "text": "Passwords must hold twelve characters and be changed yearly."},
]
QUERIES = [
    {"id": "q1", "query": "hello", "relevant_ids": ["doc-2:0"]},
    {"id": "q2", "query": "how often are signing keys rotated", "relevant_ids": ["doc-1:2"]},  # made at 100 chars
    {"id": "q3", "query": "password length", "relevant_ids": ["doc-3"], "metadata": {"kind": "document label"}},
]


def write(tmp_path: Path) -> tuple[Path, Path]:
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("# ElectriPy's corpus format\n" + "".join(json.dumps(r) + "\n" for r in CORPUS), encoding="utf-8")
    queries.write_text("\n".join(json.dumps(r) for r in QUERIES) + "\n\n", encoding="utf-8")
    return corpus, queries


def matrix(tmp_path, **options):
    corpus, queries = write(tmp_path)
    options = {"top_k": (1, 3, 5), "embedders": ("hash",), "methods": ("keyword", "dense"), **options}
    return run_matrix(corpus, queries, **options)


def stable(report: dict) -> dict:
    """The report without what a second run may change: wall time."""
    out = json.loads(json.dumps(report))
    out.pop("seconds")
    for x in out["experiments"]:
        x.pop("ms_per_query", None)
    return out


def test_the_trap_is_real_here_doc_1_2_is_keys_at_100_characters_and_no_chunk_at_300(tmp_path):
    corpus = read_corpus(write(tmp_path)[0])
    at_100 = {c.id: c.text for c in cut_corpus(ChunkVariant("fixed", 100, 0), corpus)}
    at_300 = {c.id: c.text for c in cut_corpus(ChunkVariant("fixed", 300, 0), corpus)}
    assert "Signing keys" in at_100["doc-1:2"] and "doc-1:2" not in at_300
    assert at_100["doc-1:0"] != at_300["doc-1:0"]


def test_experiments_are_variants_times_embedders_times_methods_in_the_order_given(tmp_path):
    variants = [ChunkVariant("fixed", 300, 0), ChunkVariant("fixed", 100, 0)]
    report = matrix(tmp_path, variants=variants, embedders=("hash", "bge-small"), methods=("dense", "keyword"),
                    top_k=(3,))
    order = [(x["chunking"], x["method"], x["embedder"]) for x in report["experiments"]]
    # keyword reads no embedder: one per variant, where its first embedder puts it
    assert order == [("fixed-300-0", "dense", "hash"), ("fixed-300-0", "keyword", None),
                     ("fixed-300-0", "dense", "bge-small"),
                     ("fixed-100-0", "dense", "hash"), ("fixed-100-0", "keyword", None),
                     ("fixed-100-0", "dense", "bge-small")]


def test_an_experiment_id_is_the_sha256_of_its_canonical_configuration():
    x = Experiment(ChunkVariant("fixed", 500, 100), "hash", "dense", (3, 5, 10), "doc", "abc")
    canonical = ('{"by":"doc","chunking":{"overlap":100,"size":500,"technique":"fixed"},"embedder":"hash",'
                 '"format":1,"method":"dense","model":"abc","top_k":[3,5,10]}')
    assert x.id == hashlib.sha256(canonical.encode()).hexdigest()
    other = Experiment(ChunkVariant("fixed", 500, 100), "hash", "dense", (3, 5), "doc", "abc")
    assert other.id != x.id


def test_a_second_run_gives_identical_ids_and_metrics(tmp_path):
    variants = [ChunkVariant("fixed", 100, 20), ChunkVariant("fixed", 300, 20)]
    first = matrix(tmp_path, variants=variants, per_query=True)
    second = matrix(tmp_path, variants=variants, per_query=True)
    assert stable(first) == stable(second)
    assert len({x["id"] for x in first["experiments"]}) == len(first["experiments"]) == 4


def test_chunk_labels_are_judged_by_their_document_by_default_and_the_report_says_so(tmp_path):
    report = matrix(tmp_path, variants=[ChunkVariant("fixed", 100, 0), ChunkVariant("fixed", 300, 0)],
                    methods=("keyword",))
    assert report["labels"]["chunk_labels"] == 2 and report["labels"]["judged_by"] == "doc"
    assert "other text under another chunking" in report["labels"]["said"]
    for x in report["experiments"]:
        assert x["judged_by"] == "doc"
        assert x["metrics"]["5"]["hit_rate"] == 3 / 3  # each of the 3 documents found within 5 of 9 chunks or fewer


def test_by_chunk_judges_labels_only_in_the_variant_they_were_made_with(tmp_path):
    made_with, other = ChunkVariant("fixed", 100, 0), ChunkVariant("fixed", 300, 0)
    report = matrix(tmp_path, variants=[other, made_with], by="chunk", labels_from=made_with, methods=("keyword",),
                    per_query=True)
    assert report["labels"]["labels_from"] == "fixed-100-0"
    grains = {x["chunking"]: x["judged_by"] for x in report["experiments"]}
    assert grains == {"fixed-300-0": "doc", "fixed-100-0": "chunk"}
    at_chunk = next(x for x in report["experiments"] if x["judged_by"] == "chunk")
    q2 = next(row for row in at_chunk["per_query"] if row["id"] == "q2")
    assert q2["relevant"] == 1 and q2["first"] is not None  # doc-1:2, the keys sentence, is found as a chunk
    q3 = next(row for row in at_chunk["per_query"] if row["id"] == "q3")
    assert q3["first"] is None and "doc-3" in report["labels"]["absent_in_labels_from"]  # a document is no chunk


def test_by_chunk_over_several_variants_asks_which_one_the_labels_were_made_with(tmp_path):
    with pytest.raises(UsageError, match="--labels-from"):
        matrix(tmp_path, variants=[ChunkVariant("fixed", 100, 0), ChunkVariant("fixed", 300, 0)], by="chunk")


def test_a_variant_that_fails_is_reported_with_its_error_and_the_others_run(tmp_path, monkeypatch):
    import evaluation.builds.matrix as run_module

    real = run_module.cut_corpus

    def cut(variant, corpus):
        if variant.size == 300:
            raise RuntimeError("cutter broke")
        return real(variant, corpus)

    monkeypatch.setattr(run_module, "cut_corpus", cut)
    report = matrix(tmp_path, variants=[ChunkVariant("fixed", 300, 0), ChunkVariant("fixed", 100, 0)],
                    methods=("keyword",), fail_under=parse_thresholds(["hit_rate@5=0.5"]))
    failed, ran = report["experiments"]
    assert failed["metrics"] is None and failed["error"] == "RuntimeError: cutter broke"
    assert ran["metrics"]["5"]["hit_rate"] == 1.0
    assert [m["experiment"] for m in report["gate"]["missed"]] == [failed["id"]]  # a failed experiment never passes


def test_the_chunker_config_takes_precedence_over_chunk_size(tmp_path):
    config = tmp_path / "chunker.json"
    config.write_text(json.dumps({"variants": [{"technique": "recursive", "chunk_size": 120, "chunk_overlap": 10},
                                               {"chunk_size": 200}]}), encoding="utf-8")
    corpus, queries = write(tmp_path)
    out = tmp_path / "out.json"
    done = cli(["--corpus", str(corpus), "--queries", str(queries), "--chunk-size", "500", "--chunker-config",
                str(config), "--embedder", "hash", "--methods", "keyword", "--report-json", str(out)])
    assert done.returncode == 0, done.stderr
    assert [x["chunking"] for x in json.loads(out.read_text())["experiments"]] == ["recursive-120-10", "fixed-200-40"]


def cli(arguments: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evaluation", "matrix", "--quiet", *arguments], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_their_documented_example_runs_end_to_end_with_json_and_csv_reports(tmp_path):
    corpus, queries = write(tmp_path)
    out_json, out_csv = tmp_path / "out.json", tmp_path / "out.csv"
    arguments = ["--corpus", str(corpus), "--queries", str(queries), "--top-k", "3,5,10", "--chunk-size", "100,300",
                 "--chunk-overlap", "20", "--embedder", "hash", "--report-json", str(out_json),
                 "--report-csv", str(out_csv)]
    done = cli(arguments)
    assert done.returncode == 0, done.stderr
    report = json.loads(out_json.read_text(encoding="utf-8"))
    assert report["queries"]["format"] == "queries" and report["embedders"][0]["real_model"] is False
    assert "not a real model" in done.stdout
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text(encoding="utf-8"))))
    assert len(rows) == 2 * 1 * 2 * 3  # variants x embedders x methods (dense, hybrid) x k
    first = report["experiments"][0]
    assert [float(rows[i]["precision"]) for i in range(3)] == [
        first["metrics"][k]["precision"] for k in ("3", "5", "10")
    ]
    assert "Signing keys" not in out_json.read_text() and "hello" not in out_csv.read_text()  # ids and scores only
    again = tmp_path / "again.json"
    assert cli([*arguments[:-4], "--report-json", str(again)]).returncode == 0
    assert stable(json.loads(again.read_text())) == stable(report)


def test_the_gate_exits_1_naming_each_threshold_missed_and_by_how_much_and_0_when_met(tmp_path):
    corpus, queries = write(tmp_path)
    base = ["--corpus", str(corpus), "--queries", str(queries), "--top-k", "1,5", "--chunk-size", "300",
            "--embedder", "hash", "--methods", "keyword"]
    # keyword at 300 characters finds each query's one document first: hit_rate@5 = 1, and of the top 5
    # (3 chunks come back) one is relevant, so precision@5 = 1/5 = 0.2 for every query.
    met = cli([*base, "--fail-under", "hit_rate@5=0.85", "--fail-under", "found@1=1", "--fail-under",
               "precision@5=0.2"])
    assert met.returncode == 0, met.stderr
    assert "fail-under" not in met.stderr
    missed = cli([*base, "--fail-under", "hit_rate@5=0.85", "--fail-under", "precision@5=0.3",
                  "--fail-under", "precision@5=0.45"])
    assert missed.returncode == 1
    lines = [line for line in missed.stderr.splitlines() if line.startswith("fail-under:")]
    assert len(lines) == 2 and all("precision@5 of experiment" in line and "is 0.2, under" in line for line in lines)
    assert "under 0.3 by 0.1" in lines[0] and "under 0.45 by 0.25" in lines[1]  # 0.3 - 0.2 and 0.45 - 0.2


def test_a_matrix_whose_every_experiment_failed_exits_1(tmp_path):
    """Nothing measured is no pass for a CI step (issue 46's second probe pass: it exited 0)."""
    corpus, queries = write(tmp_path)
    done = subprocess.run([sys.executable, "-m", "evaluation", "matrix", "--quiet", "--corpus", str(corpus),
                           "--queries", str(queries), "--chunk-size", "300", "--methods", "dense", "--embedder",
                           "openai:dep", "--openai-endpoint", "http://127.0.0.1:9/v1", "--openai-auth", "none",
                           "--openai-dimensions", "8"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))  # port 9: nothing listens, so every experiment fails
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "every experiment failed" in done.stderr and "this is a bug" not in done.stderr


def test_a_threshold_at_a_k_not_in_top_k_is_refused_before_any_work(tmp_path):
    corpus, queries = write(tmp_path)
    done = cli(["--corpus", str(corpus), "--queries", str(queries), "--top-k", "3", "--embedder", "hash",
                "--fail-under", "hit_rate@5=0.8"])
    assert done.returncode == 2 and "add 5 to --top-k" in done.stderr


def test_a_method_that_is_not_one_is_refused_with_the_closest(tmp_path):
    with pytest.raises(UsageError, match='--methods hybird: a matrix searches with .* Did you mean "hybrid"'):
        matrix(tmp_path, methods=("dense", "hybird"))


def test_electripys_openai_embedder_is_answered_with_ours_per_deployment(tmp_path):
    with pytest.raises(UsageError, match="--embedder openai is ElectriPy's name; here it is openai:<deployment>"):
        matrix(tmp_path, embedders=("openai",))


def test_electripys_fake_embedder_is_the_hash_embedder_under_its_own_name(tmp_path):
    assert stable(matrix(tmp_path, embedders=("fake",))) == stable(matrix(tmp_path, embedders=("hash",)))


def test_the_html_page_has_a_row_per_experiment_marks_hash_and_escapes_what_it_shows(tmp_path):
    from evaluation.report.builds.matrix_page import render_matrix_html

    report = matrix(tmp_path, variants=[ChunkVariant("fixed", 100, 0), ChunkVariant("fixed", 300, 0)])
    report["experiments"][0] = {**report["experiments"][0], "metrics": None, "error": "<script>alert(1)</script>"}
    page = render_matrix_html(report)
    assert page.count("<tr") == 1 + len(report["experiments"])  # the header, then one per experiment
    assert page.count("(not a real model)") == 1  # said once, in bold, not again inside the model text
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "http://" not in page and "https://" not in page  # nothing fetched


def test_the_page_and_the_lines_name_each_measure_as_measures_prints_it_with_its_value(tmp_path):
    from evaluation.measures import at_k
    from evaluation.report.builds.matrix_page import render_matrix_html
    from evaluation.report.builds.text import matrix_text

    report = matrix(tmp_path)
    page, lines = render_matrix_html(report), matrix_text(report)
    assert re.findall(r'<th class="num">([^<]+)</th>', page) == [str(m) for k in (1, 3, 5) for m in at_k(k)]
    x = report["experiments"][0]
    row = page[page.index(f"<code>{x['id'][:12]}</code>"):]
    shown = re.findall(r'<td class="num">([^<]+)</td>', row[:row.index("</tr>")])
    # hit_rate@k (found@k) a percent, the means to three places: as every view writes each measure
    assert shown == [f"{x['metrics'][str(k)][key] * 100:.0f}%" if key == "hit_rate"
                     else f"{x['metrics'][str(k)][key]:.3f}"
                     for k in (1, 3, 5) for key in ("hit_rate", "precision", "recall", "mrr", "ndcg")]
    assert (f"precision@3 {x['metrics']['3']['precision']:.3f} recall@3 {x['metrics']['3']['recall']:.3f} "
            f"MRR@3 {x['metrics']['3']['mrr']:.3f}") in lines
    # the lines name the pick first, in the page's words, and say what hit_rate@k is
    from evaluation.report.builds.matrix_page import best_experiment, matrix_pick

    key, why, aside = matrix_pick(report)
    assert lines.splitlines()[0] == f"Pick: {best_experiment(report)} ({aside}). {why}."
    assert f"Pick: <code>{best_experiment(report)}</code> ({aside}). {why}." in page
    assert "(hit_rate@k is found@k: the share of queries with an expected document in the top k)" in lines


def test_ndcg_at_10_is_one_number_in_the_retrieval_report_the_matrix_and_the_sweep(tmp_path):
    # the case: a grade-1 document first, a grade-3 one second. The retrieval report gains the grades
    # (0.797); a matrix that counted every relevant id as 1 called the same ranking perfect (1.000)
    import math

    from evaluation import EmbeddedTarget, evaluate, sweep
    from evaluation.engine.index import IndexSettings

    rows = [{"id": "low.md", "text": "Signing keys rotate. Signing keys rotate every ninety days."},
            {"id": "high.md", "text": "The vault service rotates signing keys on a schedule set by the platform team."},
            {"id": "other.md", "text": "Lunch is served at noon on weekdays."}]
    corpus, golden = tmp_path / "corpus.jsonl", tmp_path / "golden.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    golden.write_text(json.dumps({"id": "q1", "question": "how often do signing keys rotate",
                                  "expected": {"low.md": 1, "high.md": 3}}) + "\n", encoding="utf-8")
    graded = round((1 / math.log2(2) + 3 / math.log2(3)) / (3 / math.log2(2) + 1 / math.log2(3)), 4)  # 0.7967

    target = EmbeddedTarget.from_documents(rows, settings=IndexSettings(models=("hash",)))
    try:
        report = evaluate(target, golden, only=["local.keyword.bm25"], timed=1)
    finally:
        target.close()
    [setup] = [s for s in report["setups"] if s["summary"]]
    assert [r[1] for r in setup["results"]["q1"]][:2] == ["low.md", "high.md"]  # the ranking the case needs
    assert setup["summary"]["ndcg_10"] == graded

    [x] = run_matrix(corpus, golden, top_k=(10,), embedders=("hash",), methods=("keyword",))["experiments"]
    assert x["metrics"]["10"]["ndcg"] == graded

    [row] = sweep(corpus, golden, builds=["fixed-500-n"], methods=("keyword",), timed=0, models=("hash",))["rows"]
    assert row["ndcg_10"] == graded

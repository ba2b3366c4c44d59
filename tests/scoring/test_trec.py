"""CSV and TREC export of a report, reading TREC runs back, and scoring them (pytrec_eval as the oracle)."""
from __future__ import annotations

import csv
import random
import unicodedata

import pytest
import pytrec_eval

from evaluation.errors import EvaluationError
from evaluation.golden import Golden, Question, read_golden
from evaluation.target import Hit
from evaluation.report.trec import export_csv, export_questions_csv, export_trec, read_trec_run, score_run

from conftest import GOLDEN_RAW

ORACLE_MEASURES = {"recip_rank", "ndcg_cut_10", "success_1", "success_10", "recall_1", "recall_10"}


def golden_of(questions: dict[str, list[str]]) -> Golden:
    """A Golden holding ``{qid: expected}`` as labelled questions."""
    rows = tuple(Question(id=qid, question=f"Question {qid}?", expected=tuple(e)) for qid, e in questions.items())
    return Golden(source="golden.jsonl", sha256="0" * 64, raw=b"", questions=rows,
                  problems=(), format="jsonl")


def export(report, tmp_path, **options):
    run_path, qrels_path = export_trec(report, tmp_path / "run.trec", tmp_path / "qrels.trec", **options)[:2]
    return run_path.read_text().splitlines(), qrels_path.read_text().splitlines()


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# -- CSV ------------------------------------------------------------------------------------------

def test_export_csv_writes_one_row_per_setup_in_rank_order_with_failures_last(tmp_path, make_report):
    rows = read_csv(export_csv(make_report(), tmp_path / "setups.csv"))

    assert list(rows[0]) == ["rank", "key", "method_label", "questions", "found@1", "found@3", "found@5",
                             "found@10", "found@20", "recall@1", "recall@3", "recall@5", "recall@10", "recall@20",
                             "mrr", "ndcg_10", "median_ms", "p95_ms", "timed", "error", "stopped"]
    assert [r["key"] for r in rows] == ["local.dense.bge-small", "local.keyword.bm25", "local.hybrid.bge-small"]
    vector = rows[0]
    # first relevant at 3, 1, 1: MRR = (1/3 + 1 + 1) / 3
    assert (vector["rank"], vector["found@1"], vector["found@10"], vector["mrr"]) == (
        "1", str(round(2 / 3, 4)), "1.0", str(round((1 / 3 + 1 + 1) / 3, 4)))
    assert (vector["median_ms"], vector["timed"], vector["error"]) == ("6.0", "3", "")
    # one expected document per question: recall@k is found@k
    assert (vector["recall@1"], vector["recall@10"]) == (vector["found@1"], "1.0")
    assert (rows[2]["rank"], rows[2]["found@10"], rows[2]["error"]) == ("", "", "RuntimeError: the index is gone")


def test_export_questions_csv_writes_each_setup_and_question_with_its_first_relevant_position(tmp_path, make_report):
    rows = read_csv(export_questions_csv(make_report(), tmp_path / "questions.csv"))

    assert [tuple(r.values()) for r in rows] == [
        ("local.keyword.bm25", "q1", "1"), ("local.keyword.bm25", "q2", "2"), ("local.keyword.bm25", "q3", ""),
        ("local.dense.bge-small", "q1", "3"), ("local.dense.bge-small", "q2", "1"),
        ("local.dense.bge-small", "q3", "1"),
        ("local.hybrid.bge-small", "q1", ""), ("local.hybrid.bge-small", "q2", ""),
                                                 ("local.hybrid.bge-small", "q3", ""),
    ]


# -- TREC export ----------------------------------------------------------------------------------

def test_export_trec_by_doc_writes_documents_and_expected_pages(tmp_path, make_report):
    run_lines, qrels = export(make_report(), tmp_path)

    bm25 = [line for line in run_lines if line.endswith(" local.keyword.bm25")]
    assert bm25 == [  # depth 20: scores 20, 19, ...; page 2 is not expected, so it is the document
        "q1 Q0 doc-a 1 20 local.keyword.bm25",
        "q1 Q0 doc-b 2 19 local.keyword.bm25",
        "q2 Q0 report.pdf 1 20 local.keyword.bm25",
        "q2 Q0 report.pdf#page=4 2 19 local.keyword.bm25",
        "q3 Q0 doc-b 1 20 local.keyword.bm25",
    ]
    assert not any("local.hybrid" in line for line in run_lines)  # failed: no results to write
    assert qrels == ["q1 0 doc-a 1", "q2 0 report.pdf#page=4 1", "q3 0 doc-c 1"]


def test_export_trec_reads_a_rank_as_the_report_does(tmp_path, make_report):
    report = make_report(questions={"q1": ["doc-a"]}, setups={"t.keyword.bm25": {"q1": ["doc-b", "doc-b", "doc-a"]}})

    run_lines, _ = export(report, tmp_path)

    # among results (the report's default): doc-a is 3rd, so doc-b's second chunk keeps its place under its
    # chunk id, which no question judges
    assert report["rules"].get("rank_among", "results") == "results" and report["setups"][0]["ranks"] == {"q1": 3}
    assert run_lines == ["q1 Q0 doc-b 1 20 t.keyword.bm25", "q1 Q0 doc-b:1 2 19 t.keyword.bm25",
                         "q1 Q0 doc-a 3 18 t.keyword.bm25"]


def test_export_trec_among_documents_keeps_each_document_once_at_its_first_chunk(tmp_path, make_report):
    report = make_report(questions={"q1": ["doc-a"]}, setups={"t.keyword.bm25": {"q1": ["doc-b", "doc-b", "doc-a"]}})

    run_lines, _ = export(report, tmp_path, rank_among="documents")

    assert run_lines == ["q1 Q0 doc-b 1 20 t.keyword.bm25", "q1 Q0 doc-a 2 19 t.keyword.bm25"]


def test_export_trec_by_chunk_writes_chunk_ids(tmp_path, make_report):
    report = make_report(questions={"q1": ["doc-a:1"]}, setups={"t.keyword.bm25": {"q1": ["doc-a", "doc-a"]}},
                         by="chunk")

    run_lines, qrels = export(report, tmp_path)

    assert run_lines == ["q1 Q0 doc-a:0 1 20 t.keyword.bm25", "q1 Q0 doc-a:1 2 19 t.keyword.bm25"]
    assert qrels == ["q1 0 doc-a:1 1"]


def test_export_trec_refuses_the_page_grain_which_doc_covers(tmp_path, make_report):
    with pytest.raises(EvaluationError, match="unknown grain 'page'.*doc#page=N at doc"):
        export(make_report(), tmp_path, by="page")


def test_export_trec_refuses_evidence_and_writes_nothing(tmp_path, make_report):
    with pytest.raises(EvaluationError, match="quotes are not TREC units"):
        export(make_report(by="evidence"), tmp_path)

    assert list(tmp_path.iterdir()) == []


def test_ids_with_spaces_survive_the_trec_round_trip(tmp_path, make_report):
    report = make_report(questions={"q 1": ["My Report.pdf"]},
                         setups={"t.keyword.bm25": {"q 1": ["100% sure.md", "My Report.pdf"]}})

    run_lines, qrels = export(report, tmp_path)
    run = read_trec_run(tmp_path / "run.trec")

    assert run_lines[0] == "q%201 Q0 100%25%20sure.md 1 20 t.keyword.bm25"
    assert qrels == ["q%201 0 My%20Report.pdf 1"]
    assert [h.doc_id for h in run["t.keyword.bm25"]["q 1"]] == ["100% sure.md", "My Report.pdf"]


def test_trec_files_never_carry_raw_control_characters_and_read_them_back(tmp_path, make_report):
    qid, doc = "q\x00\x1b[31m", "doc\x07\x7f\x9b.md"  # NUL, ESC, BEL, DEL, CSI: a terminal would run them
    report = make_report(questions={qid: [doc]}, setups={"t.keyword.bm25": {qid: [doc]}})

    export(report, tmp_path)
    written = (tmp_path / "run.trec").read_text(encoding="utf-8") + (tmp_path / "qrels.trec").read_text(
        encoding="utf-8"
    )
    run = read_trec_run(tmp_path / "run.trec")

    assert not [ch for ch in written if ch != "\n" and unicodedata.category(ch) == "Cc"]
    assert "q%00%1B[31m Q0 doc%07%7F%C2%9B.md 1 20 t.keyword.bm25" in written
    assert [h.doc_id for h in run["t.keyword.bm25"][qid]] == [doc]


FORMULAS = ["=HYPERLINK(\"http://evil.test\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]


def test_csv_cells_a_spreadsheet_would_run_are_written_as_text(tmp_path, make_report):
    """OWASP's CSV injection advice: a cell starting with = + - @ tab or CR gets a leading ' (read as text)."""
    questions = {f"{formula}-{n}": ["doc-a"] for n, formula in enumerate(FORMULAS)}
    setups = {f"{FORMULAS[0]}.keyword.bm25": {qid: ["doc-a"] for qid in questions}}
    report = make_report(questions=questions, setups=setups)
    report["setups"][0]["method_label"] = "@cmd"
    report["setups"][0]["error"] = "-error"

    cells = []
    for written in (export_csv(report, tmp_path / "setups.csv"), export_questions_csv(report, tmp_path / "q.csv")):
        with written.open(encoding="utf-8", newline="") as handle:
            cells += [cell for row in csv.reader(handle) for cell in row]

    assert cells and not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert {f"'{qid}" for qid in questions} <= set(cells)  # the id is kept, after the quote
    assert f"'{FORMULAS[0]}.keyword.bm25" in cells and "'@cmd" in cells and "'-error" in cells
    assert "1" in cells  # numbers are numbers: a rank or position is never quoted


# -- reading runs ---------------------------------------------------------------------------------

def test_read_trec_run_orders_ties_as_trec_eval_does_by_score_then_docno_descending(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 c 3 0.5 bm25\n"
                    "q1 Q0 a 1 0.9 bm25\n"
                    "\n"
                    "q1 Q0 b 2 0.9 bm25\n"
                    "q1 Q0 x.pdf#page=3 1 2.0 dense\n")

    run = read_trec_run(path)

    assert [h.id for h in run["bm25"]["q1"]] == ["b", "a", "c"]  # a and b tie at 0.9: "b" > "a"; ranks ignored
    # a docno is taken literally, as trec_eval matches it: x.pdf#page=3 is that page's unit, not x.pdf's
    assert run["dense"]["q1"] == [Hit(id="x.pdf#page=3", doc_id="x.pdf#page=3", page=None, score=2.0)]
    assert run["bm25"]["q1"][2] == Hit(id="c", doc_id="c", page=None, score=0.5)


def test_trec_eval_compares_docnos_as_written_in_the_file(tmp_path):
    # "a b" is written "a%20b"; "%" (0x25) sorts after "!" (0x21), so trec_eval puts it first among ties
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a! 1 1.0 t\nq1 Q0 a%20b 2 1.0 t\n")

    assert [h.id for h in read_trec_run(path)["t"]["q1"]] == ["a b", "a!"]


def test_read_trec_run_can_follow_the_rank_column_instead(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 c 3 0.5 bm25\nq1 Q0 a 1 0.9 bm25\nq1 Q0 b 2 0.9 bm25\nq1 Q0 d 2 0.1 bm25\n")

    run = read_trec_run(path, order="rank")

    assert [h.id for h in run["bm25"]["q1"]] == ["a", "b", "d", "c"]  # rank 2 twice: line order


def test_an_unknown_order_is_refused_with_the_closest_one(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 1.0 t\n")
    with pytest.raises(EvaluationError, match='Did you mean "rank"'):
        read_trec_run(path, order="ranks")


@pytest.mark.parametrize("line, fix", [
    ("q1 Q0 a 1 0.9", "5 fields"),
    ("q1 Q0 a first 0.9 bm25", "whole number"),
    ("q1 Q0 a 1 high bm25", "a number"),
    ("q1 Q0 a 1 nan bm25", "not a finite number"),
])
def test_a_bad_run_line_names_the_file_and_the_line(tmp_path, line, fix):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 b 1 1.0 bm25\n" + line + "\n")

    with pytest.raises(EvaluationError, match=fix) as caught:
        read_trec_run(path)

    assert f"{path}: line 2" in str(caught.value)


def test_a_docno_ranked_twice_for_one_question_is_refused(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 1.0 bm25\nq1 Q0 a 2 0.5 bm25\n")

    with pytest.raises(EvaluationError, match="line 2: a is already ranked for q1 by bm25 \\(line 1\\)"):
        read_trec_run(path)


def test_a_missing_run_file_is_a_sentence(tmp_path):
    with pytest.raises(EvaluationError, match="no such run file"):
        read_trec_run(tmp_path / "absent.trec")


# -- scoring --------------------------------------------------------------------------------------

def test_score_run_counts_a_question_absent_from_the_run_as_nothing_found():
    golden = golden_of({"q1": ["a"], "q2": ["b"]})
    run = {"bm25": {"q1": [Hit("x", "x", None, 2.0), Hit("a", "a", None, 1.0)]}}

    summary = score_run(golden, run)["bm25"]

    assert summary["questions"] == 2
    assert summary["counts"] == {"1": 0, "3": 1, "5": 1, "10": 1, "20": 1}
    assert summary["mrr"] == (1 / 2 + 0) / 2
    assert summary["per_question"]["q2"] == {"first": None, "rr": 0.0, "ndcg_10": 0.0, "recall_10": 0.0}
    assert summary["recall"]["3"] == (1 + 0) / 2


def test_score_run_leaves_out_questions_without_expected_documents():
    golden = golden_of({"q1": ["a"], "q2": []})
    run = {"bm25": {"q1": [Hit("a", "a", None, 1.0)], "q2": [Hit("b", "b", None, 1.0)]}}

    assert score_run(golden, run)["bm25"]["questions"] == 1


def test_score_run_refuses_evidence():
    with pytest.raises(EvaluationError, match="no text"):
        score_run(golden_of({"q1": ["a"]}), {}, by="evidence")


def test_export_then_score_gives_the_reports_found_counts(tmp_path, make_report):
    report = make_report()
    (tmp_path / "golden.jsonl").write_bytes(GOLDEN_RAW)
    export_trec(report, tmp_path / "run.trec", tmp_path / "qrels.trec")

    scored = score_run(read_golden(tmp_path / "golden.jsonl"), read_trec_run(tmp_path / "run.trec"))

    ran = {s["key"]: s["summary"] for s in report["setups"] if s["summary"]}
    assert set(scored) == set(ran)
    for key, summary in ran.items():
        assert scored[key]["counts"] == summary["counts"], key
        assert scored[key]["mrr"] == pytest.approx(summary["mrr"], abs=5e-5)  # the report rounds to 4 places


def random_report(make_report, seed: int, questions: int = 40, corpus: int = 60):
    """Setups whose result lists hold each document at most once (so document and chunk positions agree)."""
    rng = random.Random(seed)
    expected = {f"q{n}": [f"d{d}" for d in rng.sample(range(corpus), rng.randint(1, 4))] for n in range(questions)}
    setups = {f"t.m{s}.x": {qid: [f"d{d}" for d in rng.sample(range(corpus), rng.randint(1, 20))] for qid in expected}
              for s in range(3)}
    return make_report(questions=expected, setups=setups)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_export_then_score_round_trips_random_reports(tmp_path, make_report, seed):
    report = random_report(make_report, seed)
    export_trec(report, tmp_path / "run.trec", tmp_path / "qrels.trec")

    scored = score_run(golden_of({q["id"]: q["expected"] for q in report["questions"]}),
                       read_trec_run(tmp_path / "run.trec"))

    for setup in report["setups"]:
        assert scored[setup["key"]]["counts"] == setup["summary"]["counts"]
        assert {q: v["first"] for q, v in scored[setup["key"]]["per_question"].items()} == setup["ranks"]


def oracle_scores(run_path, qrels_path) -> dict[str, dict[str, dict[str, float]]]:
    """pytrec_eval on the exported files, read here with a plain split (not with read_trec_run)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_path.read_text().splitlines():
        qid, _, docno, relevance = line.split()
        qrels.setdefault(qid, {})[docno] = int(relevance)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for line in run_path.read_text().splitlines():
        qid, _, docno, _, score, tag = line.split()
        runs.setdefault(tag, {}).setdefault(qid, {})[docno] = float(score)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, ORACLE_MEASURES)
    zero = dict.fromkeys(ORACLE_MEASURES, 0.0)
    # pytrec_eval leaves out questions with no results; they score 0, as in score_run.
    return {tag: {qid: evaluator.evaluate(run).get(qid, zero) for qid in qrels} for tag, run in runs.items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_score_run_equals_pytrec_eval_on_exported_runs_without_ties(tmp_path, make_report, seed):
    report = random_report(make_report, seed)
    run_path, qrels_path = export_trec(report, tmp_path / "run.trec", tmp_path / "qrels.trec")

    ours = score_run(golden_of({q["id"]: q["expected"] for q in report["questions"]}), read_trec_run(run_path))
    oracle = oracle_scores(run_path, qrels_path)

    assert set(ours) == set(oracle)
    for tag, per_question in oracle.items():
        n = len(per_question)
        assert ours[tag]["mrr"] == pytest.approx(sum(v["recip_rank"] for v in per_question.values()) / n, abs=1e-9)
        assert ours[tag]["ndcg_10"] == pytest.approx(sum(v["ndcg_cut_10"] for v in per_question.values()) / n,
                                                     abs=1e-9)
        assert ours[tag]["counts"]["1"] == sum(v["success_1"] for v in per_question.values())
        assert ours[tag]["counts"]["10"] == sum(v["success_10"] for v in per_question.values())
        for qid, values in per_question.items():
            assert ours[tag]["per_question"][qid]["rr"] == pytest.approx(values["recip_rank"], abs=1e-9)
            assert ours[tag]["per_question"][qid]["ndcg_10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-9)


def test_score_run_equals_pytrec_eval_on_the_hand_made_report_with_pages(tmp_path, make_report):
    run_path, qrels_path = export_trec(make_report(), tmp_path / "run.trec", tmp_path / "qrels.trec")
    (tmp_path / "golden.jsonl").write_bytes(GOLDEN_RAW)

    ours = score_run(read_golden(tmp_path / "golden.jsonl"), read_trec_run(run_path))
    oracle = oracle_scores(run_path, qrels_path)

    for tag, per_question in oracle.items():
        for qid, values in per_question.items():
            assert ours[tag]["per_question"][qid]["rr"] == pytest.approx(values["recip_rank"], abs=1e-9)
            assert ours[tag]["per_question"][qid]["ndcg_10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-9)


def random_run_with_ties(path, seed: int, questions: int = 60, corpus: int = 80) -> dict[str, list[str]]:
    """A TREC run whose scores come from four values (many ties, the rank column shuffled so it
    disagrees), two tags, and 15 expected documents for every other question; the golden ``expected``."""
    rng = random.Random(seed)
    expected = {f"q{n}": [f"doc{d}" for d in rng.sample(range(corpus), 15 if n % 2 else rng.randint(1, 15))]
                for n in range(questions)}
    lines = []
    for tag in ("bm25", "dense"):
        for qid in expected:
            docs = rng.sample(range(corpus), rng.randint(0, 40))
            ranks = list(range(1, len(docs) + 1))
            rng.shuffle(ranks)
            lines += [
                f"{qid} Q0 doc{d} {rank} {rng.choice([1, 2, 2.5, 3])} {tag}"
                for d, rank in zip(docs, ranks, strict=True)
            ]
    rng.shuffle(lines)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return expected


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_score_run_equals_pytrec_eval_on_random_runs_with_ties_and_15_relevant(tmp_path, seed):
    run_path = tmp_path / "run.trec"
    expected = random_run_with_ties(run_path, seed)
    qrels_path = tmp_path / "qrels.trec"
    qrels_path.write_text("".join(f"{qid} 0 {d} 1\n" for qid, docs in expected.items() for d in docs))

    ours = score_run(golden_of(expected), read_trec_run(run_path))
    oracle = oracle_scores(run_path, qrels_path)

    assert set(ours) == set(oracle) == {"bm25", "dense"}
    for tag, per_question in oracle.items():
        n = len(per_question)
        for measure, key in (("recip_rank", "mrr"), ("ndcg_cut_10", "ndcg_10")):
            assert ours[tag][key] == pytest.approx(sum(v[measure] for v in per_question.values()) / n, abs=1e-12)
        for k in (1, 10):
            assert ours[tag]["counts"][str(k)] == sum(v[f"success_{k}"] for v in per_question.values())
            assert ours[tag]["recall"][str(k)] == pytest.approx(
                sum(v[f"recall_{k}"] for v in per_question.values()) / n, abs=1e-12)
        for qid, values in per_question.items():
            assert ours[tag]["per_question"][qid]["rr"] == pytest.approx(values["recip_rank"], abs=1e-12)
            assert ours[tag]["per_question"][qid]["ndcg_10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)
            assert ours[tag]["per_question"][qid]["recall_10"] == pytest.approx(values["recall_10"], abs=1e-12)


def test_score_counts_a_page_docno_for_its_expected_document():
    golden = golden_of({"q1": ["x.pdf"]})
    run = {"t": {"q1": [Hit("y", "y", None, 2.0), Hit("x.pdf#page=3", "x.pdf", 3, 1.0)]}}

    assert score_run(golden, run)["t"]["per_question"]["q1"]["first"] == 2


def test_at_chunk_grain_the_reports_numbers_are_trec_evals_on_its_export(tmp_path):
    from evaluation import evaluate
    from fakes import ListTarget, write_golden

    rng = random.Random(11)
    rows, answers = [], {"keyword": {}, "dense": {}, "hybrid": {}}
    for n in range(40):
        question = f"question {n}"
        expected = [f"d{d}:0" for d in rng.sample(range(60), rng.randint(1, 15))]
        rows.append({"id": f"q{n}", "question": question, "expected": expected})
        for method in answers:  # ListTarget returns chunk "<doc>:0" for each document it lists
            answers[method][question] = [f"d{d}" for d in rng.sample(range(60), rng.randint(0, 30))]
    report = evaluate(ListTarget("t", answers, held={f"d{d}" for d in range(60)}), write_golden(tmp_path, rows),
                      by="chunk")
    run_path, qrels_path = export_trec(report, tmp_path / "run.trec", tmp_path / "qrels.trec")

    oracle = oracle_scores(run_path, qrels_path)
    for setup in report["setups"]:
        per_question = {qid: oracle[setup["key"]].get(qid) for qid in report["question_ids"]}
        n = len(per_question)
        summary = setup["summary"]
        assert summary["mrr"] == round(sum(v["recip_rank"] for v in per_question.values()) / n, 4)
        assert summary["ndcg_10"] == round(sum(v["ndcg_cut_10"] for v in per_question.values()) / n, 4)
        assert summary["counts"]["10"] == sum(v["success_10"] for v in per_question.values())
        assert summary["recall"]["10"] == round(sum(v["recall_10"] for v in per_question.values()) / n, 4)


def test_score_run_says_when_rows_of_the_golden_file_are_left_out(caplog):
    from evaluation.golden import GoldenProblem

    golden = Golden(source="golden.jsonl", sha256="0" * 64, raw=b"",
                    questions=(Question(id="q1", question="?", expected=("a",)),),
                    problems=(GoldenProblem(2, "not valid JSON"),), format="jsonl")

    score_run(golden, {"t": {"q1": [Hit("a", "a", None, 1.0)]}})

    assert "1 row(s) with errors are left out of the scores" in caplog.text

"""Nothing believed that should not be (issue 37), on the command line's side: an input that is a named
pipe is refused at once (it was waited on for ever), JSON nested without end is a sentence wherever a
person or a model hands the tool JSON, a flag given an empty list is refused instead of meaning "the
default", and a cut-off of 0 or less is a sentence wherever a k is read."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from test_matrix import write as write_corpus_and_queries

from evaluation.errors import UsageError
from evaluation.jsonl import MAX_DEPTH, JsonLineError, parse_json
from evaluation.scoring.metrics import Outcome

ROOT = Path(__file__).resolve().parent.parent.parent


def exit_code(capsys, *argv: str) -> tuple[int, str, str]:
    """``run_cli``, with argparse's own exit (a refused flag) read as its code."""
    try:
        return run_cli(capsys, *argv)
    except SystemExit as done:
        out, err = capsys.readouterr()
        return int(done.code or 0), out, err


# -- named pipes --------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, says", [
    (["matrix", "--embedder", "hash", "--corpus", "{pipe}", "--queries", "{queries}"],
     "{pipe}: cannot read the corpus (a named pipe, not a file)"),
    (["matrix", "--embedder", "hash", "--corpus", "{corpus}", "--queries", "{pipe}"],
     "{pipe}: cannot read the golden file (a named pipe, not a file)"),
    (["matrix", "--embedder", "hash", "--corpus", "{corpus}", "--queries", "{queries}", "--chunker-config", "{pipe}"],
     "{pipe}: cannot read the chunker config (a named pipe, not a file)"),
    (["golden", "template", "--corpus", "{pipe}", "--out", "{folder}/golden.jsonl"],
     "{pipe}: cannot read the corpus (a named pipe, not a file)"),
    (["golden", "write", "--corpus", "{corpus}", "--out", "{folder}/golden.jsonl", "--examples", "{pipe}",
      "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--auth", "none"],
     "--examples {pipe}: cannot read it (a named pipe, not a file)"),
    (["score", "--golden", "{queries}", "--run", "{pipe}"],
     "{pipe}: cannot read the run file (a named pipe, not a file)"),
    (["answers", "score", "--golden", "{queries}", "--answers", "{pipe}", "--endpoint", "http://127.0.0.1:9/v1",
      "--model", "m", "--auth", "none"], "{pipe}: cannot read the answers file (a named pipe, not a file)"),
    (["runs", "list", "--store", "{folder}", "--env-file", "{pipe}"],
     "{pipe}: cannot read the settings file (a named pipe, not a file)"),
], ids=["matrix --corpus", "matrix --queries", "matrix --chunker-config", "golden template --corpus",
        "golden write --examples", "score --run", "answers score --answers", "--env-file"])
def test_a_named_pipe_given_as_an_input_is_refused_at_once_with_a_sentence(tmp_path, argv, says):
    """Run apart, with a time limit: opening a pipe nobody writes to waited for ever."""
    corpus, queries = write_corpus_and_queries(tmp_path)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    names = {"pipe": pipe, "corpus": corpus, "queries": queries, "folder": tmp_path}

    done = subprocess.run([sys.executable, "-m", "evaluation", *(a.format(**names) for a in argv)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)

    assert done.returncode in (1, 2) and says.format(**names) in done.stderr + done.stdout
    assert "this is a bug" not in done.stderr


# -- JSON nested without end --------------------------------------------------------------------------

def test_json_nested_past_the_bound_is_refused_before_it_is_parsed_and_at_the_bound_is_read():
    at_bound = "[" + "[], " * MAX_DEPTH + "[" * (MAX_DEPTH - 1) + "]" * MAX_DEPTH  # 100 deep, 200 brackets
    parsed = parse_json(at_bound)
    assert parsed == parse_json(at_bound, strict=False) and parsed[:MAX_DEPTH] == [[]] * MAX_DEPTH
    for deeper in ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), '{"a": ' * 100_000 + "1" + "}" * 100_000):
        with pytest.raises(JsonLineError, match="nested too deeply to read"):
            parse_json(deeper, strict=False)
    # brackets inside strings are text, not nesting
    assert parse_json(json.dumps({"text": "[" * 5000 + '\\"{'})) == {"text": "[" * 5000 + '\\"{'}


@pytest.mark.parametrize("depth", [100_000, 900], ids=["past the parser", "just under the parser"])
def test_a_chunker_config_nested_without_end_is_a_sentence(capsys, tmp_path, depth):
    corpus, queries = write_corpus_and_queries(tmp_path)
    config = tmp_path / "chunker.json"
    config.write_text('{"chunk_size": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")

    code, _, err = exit_code(capsys, "matrix", "--quiet", "--embedder", "hash", "--corpus", str(corpus), "--queries",
                             str(queries), "--chunker-config", str(config))

    assert code == 2 and f"{config}: not a chunker config (nested too deeply to read: {depth + 1:,} levels" in err
    assert "this is a bug" not in err and len(err) < 1000


def test_a_judge_verdict_or_a_list_of_topic_starts_nested_without_end_is_no_verdict():
    from evaluation.answers.judge import parse_score
    from evaluation.builds.judged import _verdict

    deep = '{"score": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert parse_score(deep) is None and _verdict(deep) is None


# -- empty lists --------------------------------------------------------------------------------------

@pytest.fixture
def nothing_runs(monkeypatch):
    """Fail the test if a chunking command gets as far as cutting anything."""
    import evaluation.builds.compare as compare
    import evaluation.builds.sweeps as sweeps

    # the command line calls the core, not the keyword forms users call
    monkeypatch.setattr(sweeps, "sweep_builds", lambda *a, **k: pytest.fail("the run started"))
    monkeypatch.setattr(compare, "compare_builds", lambda *a, **k: pytest.fail("the run started"))


@pytest.mark.parametrize("action, flag", [("compare", "--sizes"), ("compare", "--child-sizes"),
                                          ("compare", "--techniques"), ("sweep", "--sizes"), ("sweep", "--builds"),
                                          ("sweep", "--methods"), ("compare", "--sizes=,")])
def test_a_chunking_list_flag_given_nothing_is_refused_not_read_as_the_default(capsys, tmp_path, nothing_runs, action,
                                                                              flag):
    corpus, queries = write_corpus_and_queries(tmp_path)
    given = [flag] if "=" in flag else [flag, ""]

    code, _, err = exit_code(capsys, "chunking", action, "--corpus", str(corpus), "--golden", str(queries), *given,
                             "--no-cache", "--quiet")

    # argparse names a flag with its other name first (--chunk-chars/--sizes: ...)
    assert code == 2 and "argument " in err and f"{flag.split('=')[0]}: '{flag.partition('=')[2]}'" in err


def test_the_library_refuses_an_empty_list_of_sizes_too():
    from evaluation.builds.plan import plan_builds, sweep_keys

    for call in (lambda: plan_builds(sizes=()), lambda: plan_builds(child_sizes=[]), lambda: sweep_keys(sizes=[])):
        with pytest.raises(UsageError, match="no chunk size given"):
            call()
    assert sweep_keys(sizes=None) == sweep_keys()  # left out: the default sizes


# -- cut-offs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, -1])
def test_a_cut_off_below_1_is_a_sentence_wherever_a_k_is_read(capsys, tmp_path, k):
    from evaluation.builds import run_matrix
    from evaluation.scoring.at_k import per_question_at, question_at, summarise_at

    outcome = Outcome(question_id="q1", positions=(1,), relevant=1)
    for call in (lambda: question_at(outcome, k), lambda: summarise_at([outcome], [k]),
                 lambda: per_question_at([outcome], [3, k])):
        with pytest.raises(UsageError, match=f"a cut-off is a whole number of results from 1 to 1,000, not {k}"):
            call()
    corpus, queries = write_corpus_and_queries(tmp_path)
    with pytest.raises(UsageError, match=f"--top-k: a cut-off is a whole number of results from 1 to 1,000, not {k}"):
        run_matrix(corpus, queries, top_k=(k,), embedders=("hash",), methods=("keyword",))
    matrix = ("matrix", "--quiet", "--embedder", "hash", "--corpus", str(corpus), "--queries", str(queries))
    code, _, err = exit_code(capsys, *matrix, f"--top-k={k}")
    assert code == 2 and "--top-k" in err
    code, _, err = exit_code(capsys, *matrix, "--top-k", "5", "--fail-under", f"hit_rate@{k}=0.5")
    assert code == 2 and f'"hit_rate@{k}" is not a measure at a cut-off' in err


# -- a grade on the command line, read as a file's grade is -------------------------------------------

@pytest.mark.parametrize("command", [["evaluate", "--index", "idx", "--golden", "g.jsonl"],
                                     ["score", "--golden", "g.jsonl", "--run", "r.trec"]])
@pytest.mark.parametrize("given, read", [("2", 2), ("2.0", 2), ("1e3", 1000)])
def test_min_grade_written_as_a_whole_valued_number_is_that_grade(command, given, read):
    from evaluation.cli import build_parser

    assert build_parser().parse_args([*command, "--min-grade", given]).min_grade == read


@pytest.mark.parametrize("given, says", [
    ("2.5", '"2.5" is not a whole grade: grades are whole numbers (2.0 is read as 2), so give 2 or 3'),
    ("0", '"0" is not a grade from 1 to 1000: give a whole number, such as 2'),
    ("1000.5", '"1000.5" is not a grade from 1 to 1000'),
    ("nan", '"nan" is not a grade from 1 to 1000'),
    ("two", '"two" is not a grade: give a whole number from 1 to 1000, such as 2'),
])
def test_min_grade_that_is_no_whole_grade_is_a_sentence(capsys, given, says):
    code, _, err = exit_code(capsys, "score", "--golden", "g.jsonl", "--run", "r.trec", "--min-grade", given)
    assert code == 2 and f"argument --min-grade: {says}" in err


def test_score_at_min_grade_2_0_scores_as_at_2(capsys, tmp_path):
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "q1", "question": "where", "expected": {"a": 1, "b": 2}}\n', encoding="utf-8")
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n", encoding="utf-8")
    scored = {}
    for given in ("2", "2.0"):
        code, out, err = run_cli(capsys, "score", "--golden", str(golden), "--run", str(run), "--min-grade", given,
                                 "--json")
        assert code == 0, err
        scored[given] = json.loads(out)
    assert scored["2.0"] == scored["2"] and scored["2"]["t"]["mrr"] == 1 / 2  # b, the grade-2 document, second


# -- a list of models that names none ----------------------------------------------------------------

@pytest.mark.parametrize("command", [["index", "{corpus}", "--out", "{out}"],
                                     ["evaluate", "--corpus", "{corpus}", "--index-dir", "{out}", "--golden",
                                      "{golden}", "--no-save", "--quiet"]])
@pytest.mark.parametrize("given", [",", " , ", ",,"])
def test_models_naming_no_model_is_refused_naming_the_flag_and_the_models_not_read_as_none(capsys, tmp_path,
                                                                                          command, given):
    from evaluation.engine.model_catalog import EMBEDDER_NAMES, HASH_NAME

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "where the alpha release notes are kept"}\n', encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "q1", "question": "alpha release notes", "expected": ["a"]}\n', encoding="utf-8")
    paths = {"corpus": str(corpus), "out": str(tmp_path / "idx"), "golden": str(golden)}
    code, out, err = exit_code(capsys, *(word.format(**paths) for word in command), "--models", given)
    assert code == 2 and not (tmp_path / "idx").exists() and "local.keyword" not in out
    assert f"error: --models {json.dumps(given)} names no model;" in err
    assert all(name in err for name in (*EMBEDDER_NAMES, HASH_NAME))


# -- an argument of 120 KB comes back as a bounded echo ------------------------------------------------

LONG_ARGUMENT = 120_000


@pytest.mark.parametrize("argv, says", [
    (["runs", "list", "--" + "z" * LONG_ARGUMENT], 'error: unrecognized arguments: "--zzz'),
    (["evaluate", "--index", "idx", "--golden", "g.jsonl", "--mode", "A" * LONG_ARGUMENT],
     'error: argument --mode: invalid choice: "AAA'),
    (["evaluate", "--index", "idx", "--golden", "g.jsonl", "--mode=" + "A'\\" * (LONG_ARGUMENT // 2)],
     "error: argument --mode: invalid choice: \"A'\\\\"),  # its repr (in double quotes, backslashes doubled)
    (["score", "--golden", "g.jsonl", "--run", "r.trec", "--min-grade", "9" * LONG_ARGUMENT],
     'error: argument --min-grade: "999'),
    (["index", "corpus.jsonl", "--out", "idx", "--models", "hsah," + "m" * LONG_ARGUMENT],
     'error: --models: unknown model(s) "hsah", "mmm'),
])
def test_an_argument_of_120_kb_is_echoed_cut_to_its_start_and_its_length(capsys, tmp_path, monkeypatch, argv, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.jsonl").write_text('{"id": "a", "text": "alpha release notes"}\n', encoding="utf-8")
    code, out, err = exit_code(capsys, *argv)
    assert code == 2 and says in err and "characters)" in err
    assert len(out) + len(err) < 1_000, (len(out), len(err))


def test_golden_check_of_a_file_name_of_120_kb_says_it_cut_on_every_line(capsys):
    from evaluation.errors import TEXT_LIMIT

    code, out, err = exit_code(capsys, "golden", "check", "A" * LONG_ARGUMENT)
    assert code == 1 and "cannot read the golden file" in out
    lines = (out + err).splitlines()
    assert all(len(line) < TEXT_LIMIT + 200 for line in lines), [len(line) for line in lines]
    assert sum("(120,000 characters)" in line for line in lines) == 2  # the summary's first line, and the error

"""One vocabulary (issue 42): every command's help is plain text, one default store for every command that
keeps or reads runs, one name per unit for chunk sizes, one spelling per idea; old spellings still work."""
from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from evaluation.cli import build_parser


def every_parser(parser: argparse.ArgumentParser | None = None,
                 words: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The top parser and every command and subcommand under it, by the words that reach it."""
    parser = parser or build_parser()
    yield " ".join(words) or "(top)", parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from every_parser(child, (*words, name))


def test_no_help_shows_backticks():
    """Help built from docstrings has its reStructuredText markup stripped, and written help has none."""
    shown = [f"{words}: {line.strip()}" for words, parser in every_parser()
             for line in parser.format_help().splitlines() if "`" in line]
    assert shown == []


def test_golden_template_suggests_a_check_against_the_corpus_it_was_drawn_from(tmp_path, capsys):
    """The suggested ``golden check`` names the corpus, so a label naming no document is caught when it runs."""
    import json
    import shlex

    from conftest import SAMPLES, run_cli

    golden = tmp_path / "golden.jsonl"
    code, out, _ = run_cli(capsys, "golden", "template", "--corpus", str(SAMPLES / "corpus.jsonl"),
                           "--out", str(golden), "-n", "2")
    assert code == 0
    suggested = shlex.split(out.split("then run: ", 1)[1])
    assert suggested[:3] == ["python3", "-m", "evaluation"]
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    rows = [{**row, "question": f"question {n}?"} for n, row in enumerate(rows)]
    rows[1]["expected"] = ["no-such-document"]
    golden.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, _ = run_cli(capsys, *suggested[3:])
    assert "no-such-document" in out


def store_flags() -> list[tuple[str, argparse.Action]]:
    """Every ``--store`` and ``--save-to`` of every command, by the command's words."""
    return [(words, action) for words, parser in every_parser() for action in parser._actions
            if {"--store", "--save-to"} & set(action.option_strings)]


def test_every_store_flag_is_optional_and_names_the_one_default_store():
    from evaluation.cli.common import DEFAULT_STORE, STORE_VARIABLE, VECTRIXDB_STORE_VARIABLE

    found = store_flags()
    assert {words for words, _ in found} >= {"evaluate", "runs list", "runs show", "runs export", "runs import",
                                             "report", "compare", "chunking compare", "chunking sweep",
                                             "chunking runs list", "chunking runs show", "matrix"}
    named = f"${STORE_VARIABLE}, else ${VECTRIXDB_STORE_VARIABLE}, else ./{DEFAULT_STORE}"
    wrong = [f"{words} {action.option_strings[0]}" for words, action in found
             if action.required or named not in " ".join((action.help or "").split())]
    assert wrong == []


def test_a_matrix_saved_with_a_bare_save_to_is_listed_by_chunking_runs_list_with_no_store(
        tmp_path, monkeypatch, capsys):
    """The commands that keep and read chunking runs meet in the default store without naming it."""
    import json

    from conftest import run_cli

    monkeypatch.delenv("EVALUATION_STORE")
    monkeypatch.chdir(tmp_path)
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{n}", "text": f"alpha beta {word} gamma"}) + "\n"
                              for n, word in enumerate(("north", "south", "east"))), encoding="utf-8")
    queries.write_text(json.dumps({"id": "q1", "query": "south", "relevant_ids": ["d1"]}) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "matrix", "--corpus", str(corpus), "--queries", str(queries), "--embedder",
                             "hash", "--methods", "keyword", "--chunk-chars", "100", "--quiet", "--save-to")
    assert code == 0, err
    assert "in evaluations (" in out
    code, listed, err = run_cli(capsys, "chunking", "runs", "list", "--json")
    assert code == 0, err
    assert [row["kind"] for row in json.loads(listed)] == ["matrix"]
    assert (tmp_path / "evaluations" / "chunking" / "runs").is_dir()


UNITS = {"-words": "words", "-chars": "characters"}


def test_every_chunk_size_flag_names_its_unit_and_its_help_says_it():
    """evaluate and index count words, matrix and chunking characters: the flag's name and help say which."""
    sized = [(words, action) for words, parser in every_parser() for action in parser._actions
             if any(part in option for option in action.option_strings for part in ("size", "overlap", "-chars",
                                                                                      "-words"))]
    assert {words for words, _ in sized} >= {"evaluate", "index", "matrix", "chunking compare", "chunking sweep"}
    unnamed = [f"{words} {action.option_strings}" for words, action in sized
               if not any(action.option_strings[0].endswith(suffix) and unit in action.help
                          for suffix, unit in UNITS.items())]
    assert unnamed == []


@pytest.mark.parametrize("words, old, new, value", [
    (("evaluate", "--golden", "g", "--index", "i"), "--chunk-size", "--chunk-words", "120"),
    (("index", "c", "--out", "o"), "--chunk-overlap", "--overlap-words", "7"),
    (("matrix", "--corpus", "c", "--queries", "q"), "--chunk-size", "--chunk-chars", "300,500"),
    (("matrix", "--corpus", "c", "--queries", "q"), "--chunk-overlap", "--overlap-chars", "30"),
    (("chunking", "compare", "--corpus", "c", "--golden", "g"), "--sizes", "--chunk-chars", "500,1000"),
    (("chunking", "sweep", "--corpus", "c", "--golden", "g"), "--child-sizes", "--child-chars", "200")])
def test_the_old_chunk_flags_still_mean_what_they_meant(words, old, new, value):
    parser = build_parser()
    assert vars(parser.parse_args([*words, old, value])) == vars(parser.parse_args([*words, new, value]))


def test_every_way_of_signing_in_is_spelled_managed_identity_and_the_other_spelling_is_read_as_it():
    ways = [(words, action) for words, parser in every_parser() for action in parser._actions
            if action.choices and any("identity" in str(choice) for choice in action.choices)]
    assert {words for words, _ in ways} >= {"answers score", "golden write", "chunking compare", "matrix"}
    parser = build_parser()
    for words, action in ways:
        assert "managed_identity" in action.choices and "managed-identity" not in action.choices, words
    asked = parser.parse_args(["answers", "score", "--golden", "g", "--answers", "a", "--auth", "managed-identity"])
    assert asked.auth == "managed_identity"
    matrix = parser.parse_args(["matrix", "--corpus", "c", "--queries", "q", "--openai-auth", "managed-identity"])
    assert matrix.openai_auth == "managed_identity"


CACHES = {"--vector-cache": "vector", "--reply-cache": "reply", "--judge-reply-cache": "reply",
          "--index-cache": "index", "--no-cache": "cache"}


def test_every_cache_flag_is_named_for_what_it_keeps_and_the_old_cache_still_works():
    """``--cache`` kept vectors in matrix and chunking and model replies in golden write: each now has a name
    of its own (its help says what it keeps), and ``--cache`` stays where it was, meaning what it meant."""
    caches = [(words, action) for words, parser in every_parser() for action in parser._actions
              if any("cache" in option for option in action.option_strings)]
    assert {words for words, _ in caches} >= {"matrix", "chunking compare", "chunking sweep", "golden write"}
    wrong = [f"{words} {action.option_strings[0]}" for words, action in caches
             if CACHES.get(action.option_strings[0], "?") not in (action.help or "")]
    assert wrong == []
    parser = build_parser()
    for words, new in ((["matrix", "--corpus", "c", "--queries", "q"], "--vector-cache"),
                       (["chunking", "compare", "--corpus", "c", "--golden", "g"], "--vector-cache"),
                       (["golden", "write", "--corpus", "c", "--out", "o"], "--reply-cache")):
        assert parser.parse_args([*words, "--cache", "f"]).cache == parser.parse_args([*words, new, "f"]).cache == "f"


def test_every_readme_command_that_keeps_or_reads_runs_uses_the_default_store(capsys):
    """The README's first run saved to runs/ while the next command read ./evaluations: a newcomer's second
    command failed. Every command the README shows that parses names no store of its own."""
    import re
    import shlex
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text(encoding="utf-8")
    parser, checked, named = build_parser(), [], []
    for block in re.findall(r"```[a-z]*\n(.*?)```", readme, flags=re.DOTALL):
        for line in block.splitlines():
            command = line.split(" # ", 1)[0].split("&&")[-1].strip()
            for program in ("python3 -m evaluation ", "retrieval-eval "):
                if command.startswith(program):
                    try:
                        args = parser.parse_args(shlex.split(command[len(program):]))
                    except (SystemExit, ValueError):  # a synopsis with placeholders, not a command to paste
                        continue
                    checked.append(command)
                    if getattr(args, "store", None) or getattr(args, "save_to", None):
                        named.append(command)
    capsys.readouterr()
    assert len(checked) >= 5 and named == []


def test_found_at_k_is_a_percent_and_the_means_three_places_in_every_table():
    """One metric was printed as 90%, 0.900 and 9/10: found@k (hit_rate@k) is a percent, with its count where
    one is shown, and MRR, nDCG and recall are to three places, in the score table, the sweep's text and
    Markdown, and the matrix's text and page, as in the run's own table (``Measure.shown``)."""
    import re

    from evaluation.cli.score_cmd import render_scores
    from evaluation.measures import CUTOFFS
    from evaluation.report.builds.matrix_page import matrix_section
    from evaluation.report.builds.sweep_page import sweep_section
    from evaluation.report.builds.text import matrix_text, sweep_markdown, sweep_text

    summary = {"questions": 10, "found": {str(k): 0.9 for k in CUTOFFS}, "counts": {str(k): 9 for k in CUTOFFS},
               "recall": {str(k): 0.6 for k in CUTOFFS}, "mrr": 0.6, "ndcg_10": 0.6}
    sweep = {"k": [10], "questions": 10, "best": None, "rule": "ranked by nDCG@10", "seconds": 1.0, "vectors": {},
             "rows": [{"rank": 1, "build": "fixed-1000-h", "method": "keyword", **summary, "chunks": 3,
                       "build_seconds": 1.0, "median_ms": 1.0}]}
    matrix = {"kind": "matrix",
              "experiments": [{"id": "a" * 64, "chunking": "fixed-500-100", "method": "keyword", "embedder": "hash",
                               "judged_by": "doc", "metrics": {"10": {"hit_rate": 0.9, "precision": 0.6,
                                                                       "recall": 0.6, "mrr": 0.6, "ndcg": 0.6}}}],
              "queries": {"questions": 10, "format": "queries"}, "by": "doc", "labels": {"said": "by document"},
              "embedders": [], "gate": {"thresholds": [], "passed": True, "missed": []}, "top_k": [10]}
    counted = {"score": render_scores({"run": summary}), "sweep text": sweep_text(sweep),
               "sweep markdown": sweep_markdown(sweep), "sweep page": sweep_section({"kind": "sweep", **sweep})}
    bare = {"matrix text": matrix_text(matrix), "matrix page": matrix_section(matrix)}
    for view, text in {**counted, **bare}.items():
        assert "90%" in text and "0.600" in text, view
        assert not re.search(r"0\.90|0\.6000|(?<!\()9/10", text), view
    for view, text in counted.items():
        assert "90% (9/10)" in text, view


def test_cutting_at_headings_is_read_under_either_word_in_either_command():
    """evaluate calls it structure (a word inside every index's fingerprint), chunking markdown (VectrixDB's
    build keys): each command takes the other's word for the same cut, and the help says so."""
    from evaluation.cli import build_parser
    from evaluation.engine.chunking import ChunkSettings

    assert ChunkSettings(strategy="markdown") == ChunkSettings(strategy="structure")
    assert ChunkSettings(strategy="markdown").to_dict()["strategy"] == "structure"  # the fingerprint unchanged
    args = build_parser().parse_args(["chunking", "compare", "--corpus", ".", "--golden", "g.jsonl",
                                      "--techniques", "structure,fixed"])
    assert args.techniques == ["markdown", "fixed"]
    helps = {(words, action.option_strings[0]): action.help for words, parser in every_parser()
             for action in parser._actions if action.option_strings}
    assert "markdown" in helps[("evaluate", "--chunking")] and "markdown" in helps[("index", "--chunking")]
    assert "structure" in helps[("chunking compare", "--techniques")]

"""``chunking compare | sweep | runs list | runs show`` on the shipped sample's documents: the tables, the
store, a progress bar that names the build and the stage, and refusals as sentences."""
from __future__ import annotations

import json

from chunking_cut import small_sample
from conftest import run_cli


def chunking(capsys, action: str, corpus, golden, *rest: str) -> tuple[int, str, str]:
    return run_cli(capsys, "chunking", action, "--corpus", str(corpus), "--golden", str(golden), *rest)


def test_compare_prints_the_techniques_saves_the_run_and_runs_list_and_show_read_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus, golden = small_sample(tmp_path, questions=4, others=1)
    code, out, err = chunking(capsys, "compare", corpus, golden, "--techniques", "markdown,fixed", "--sizes", "1000",
                              "--headings", "yes", "--no-late", "--save-to", "runs")
    assert code == 0, err
    assert "Structure-aware" in out and "Fixed-size" in out and "Pick: " in out
    assert "of vectors came from the cache" in out and "Saved as chunking run" in out
    assert "[1/2] markdown-1000-h: " in err and "[2/2] fixed-1000-h: " in err  # the bar names build and stage
    assert (tmp_path / ".index" / "chunking.cache.sqlite").is_file()
    code, listed, _ = run_cli(capsys, "chunking", "runs", "list", "--store", "runs", "--json")
    rows = json.loads(listed)
    assert code == 0 and [r["kind"] for r in rows] == ["chunking"] and rows[0]["builds"] == 2
    code, shown, _ = run_cli(capsys, "chunking", "runs", "show", "latest", "--store", "runs", "--markdown")
    assert code == 0 and (
        "| Structure-aware | `markdown-1000-h` |" in shown or "| Fixed-size | `fixed-1000-h` |" in shown
    )


def test_sweep_prints_markdown_for_a_pull_request(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus, golden = small_sample(tmp_path, questions=3, others=0)
    code, out, err = chunking(capsys, "sweep", corpus, golden, "--builds", "fixed-1000-h", "--methods", "keyword",
                              "--timed", "2", "--markdown", "--no-cache", "--quiet")
    assert code == 0, err
    assert out.splitlines()[0].startswith("| # | build | method | nDCG@10 |")
    assert "| 1 | `fixed-1000-h` | keyword |" in out


def test_an_unknown_key_and_an_unknown_technique_are_one_sentence(capsys, tmp_path):
    corpus, golden = small_sample(tmp_path, questions=1, others=0)
    code, _, err = chunking(capsys, "sweep", corpus, golden, "--builds", "fixed-1000", "--quiet")
    assert code == 2 and err.startswith('error: "fixed-1000" is not a build key.') and "Traceback" not in err
    code, _, err = chunking(capsys, "compare", corpus, golden, "--techniques", "markdwn", "--quiet")
    assert code == 2 and 'Did you mean "markdown"?' in err


def test_the_chunking_commands_in_the_readme_parse():
    import shlex
    from pathlib import Path

    from evaluation.cli import build_parser

    text = (Path(__file__).resolve().parent.parent.parent / "docs" / "reference.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("retrieval-eval chunking ")]
    assert len(lines) == 3
    for line in lines:
        args = build_parser().parse_args(shlex.split(line)[1:])
        assert args.handler is not None


def test_compare_and_sweep_without_the_chunking_extra_say_so_before_the_first_build(capsys, tmp_path, monkeypatch):
    import sys

    import evaluation.builds.compare as compare
    import evaluation.builds.sweeps as sweeps

    monkeypatch.chdir(tmp_path)
    corpus, golden = small_sample(tmp_path, questions=4, others=1)
    monkeypatch.setitem(sys.modules, "semantic_text_splitter", None)  # as a plain install leaves it: not there
    # the command line calls the core (compare_builds, sweep_builds), not the keyword forms users call
    monkeypatch.setattr(compare, "compare_builds", lambda *a, **k: (_ for _ in ()).throw(AssertionError("built")))
    monkeypatch.setattr(sweeps, "sweep_builds", lambda *a, **k: (_ for _ in ()).throw(AssertionError("built")))
    for action in ("compare", "sweep"):
        code, out, err = chunking(capsys, action, corpus, golden)
        assert code == 2 and out == ""
        assert "needs the semantic_text_splitter package" in err and "[chunking]" in err
    # a technique that needs no library gets as far as its build without it (the stand-in above says "built")
    code, out, err = chunking(capsys, "compare", corpus, golden, "--techniques", "fixed", "--sizes", "1000",
                              "--headings", "no", "--no-late")
    assert "needs the semantic_text_splitter package" not in err and "AssertionError: built" in err


def test_compare_with_a_current_build_it_does_not_make_is_refused_before_the_first_build(capsys, tmp_path,
                                                                                         monkeypatch):
    import evaluation.builds.compare as compare

    monkeypatch.chdir(tmp_path)
    corpus, golden = small_sample(tmp_path, questions=2, others=0)
    monkeypatch.setattr(compare, "run_builds", lambda *a, **k: (_ for _ in ()).throw(AssertionError("built")))
    code, out, err = chunking(capsys, "compare", corpus, golden, "--current", "fixed-200-h", "--techniques", "fixed",
                              "--sizes", "1000,2000", "--headings", "yes", "--no-late", "--quiet")
    assert code == 2 and out == "" and "built" not in err
    assert err.startswith('error: current "fixed-200-h", the build in use, is not one of the builds this run compares, '
                          "so it could not be compared with them; name one of fixed-1000-h, fixed-2000-h, or add its "
                          'technique, size and headings to the ones compared. Did you mean "fixed-2000-h"?')
    code, _, err = chunking(capsys, "compare", corpus, golden, "--current", "llm-1000-h", "--sizes", "1000",
                            "--headings", "yes", "--no-late", "--quiet")
    assert code == 2 and "(LLM-based needs a chat model to say where each topic starts, and none was given)" in err
    # one of the builds compared is taken: the run gets as far as its builds (the stand-in above says "built")
    code, _, err = chunking(capsys, "compare", corpus, golden, "--current", "fixed-1000-h", "--techniques", "fixed",
                            "--sizes", "1000,2000", "--headings", "yes", "--no-late", "--quiet")
    assert "AssertionError: built" in err

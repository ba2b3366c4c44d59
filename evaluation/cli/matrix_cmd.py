"""``python3 -m evaluation matrix``: ElectriPy's ``rag eval`` experiment matrix, with the same flags.

    python3 -m evaluation matrix --corpus C --queries Q --top-k 3,5,10 --chunk-size 500,1000 \\
        --chunk-overlap 100 --embedder bge-small,minilm-l6 [--chunker-config F] [--methods dense,hybrid] \\
        --report-json out.json --report-csv out.csv [--per-query] [--fail-under hit_rate@5=0.85 ...] [--by chunk] \\
        [--save-to STORE]

Prints one line per experiment; exit 1 when any ``--fail-under`` threshold is missed (each named, with
by how much), 0 otherwise. ``--embedder hash`` runs with no model (feature hashing, not a real model).
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable

from ..chat import AUTHS
from ..errors import UsageError, named
from ..files import Output, check_outputs, write_whole
from .common import ProgressBar, add_save_option, auth_way, local_path, path_or_address, save_address, whole


def _numbers(flag: str):
    def parse(text: str) -> list[int]:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts or not all(p.isdigit() for p in parts):
            raise argparse.ArgumentTypeError(f"{flag} takes whole numbers separated by commas, such as 3,5,10")
        return [int(p) for p in parts]
    return parse


def _names(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def register(subparsers) -> None:
    from ..builds import settings as the

    def listed(values) -> str:
        return ",".join(map(str, values))

    parser = subparsers.add_parser(
        "matrix", help="ElectriPy's experiment matrix: chunk variants x embedders x methods, metrics at each k",
        description="Cut the corpus each way the chunk flags say, index each cut with every embedder, ask every "
                    "query with each method, and report hit rate, precision, recall, MRR@k and nDCG@k at each "
                    "--top-k, each experiment named by the sha256 of its configuration.")
    parser.add_argument("--corpus", required=True, type=local_path,
                        help="corpus JSONL (id, text, source_uri?, metadata?)")
    parser.add_argument("--queries", required=True, type=path_or_address,
                        help="queries JSONL (id, query, relevant_ids, metadata?) or a golden file")
    parser.add_argument("--top-k", type=_numbers("--top-k"), help=f"cut-offs (default {listed(the.MATRIX_TOP_K)})")
    # Characters, as ElectriPy's flags count them (evaluate and index count words): the names say the unit,
    # and ElectriPy's own names stay, meaning characters here as they do there.
    parser.add_argument("--chunk-chars", "--chunk-size", dest="chunk_size", type=_numbers("--chunk-chars"),
                        metavar="CHARS", help="chunk sizes in characters, comma-separated (default "
                                              f"{listed(v.size for v in the.MATRIX_VARIANTS)}; --chunk-size, "
                                              "ElectriPy's name, counts characters here)")
    parser.add_argument("--overlap-chars", "--chunk-overlap", dest="chunk_overlap", type=whole(0), default=None,
                        metavar="CHARS", help="characters repeated between chunks (default a fifth of each size; "
                                              "--chunk-overlap, ElectriPy's name, counts characters here)")
    parser.add_argument("--chunker-config", type=local_path,
                        help="a JSON file of chunk variants (sizes in characters); takes precedence over "
                             "--chunk-chars/--overlap-chars")
    parser.add_argument("--embedder", type=_names, action="append", default=None,
                        help="embedders, comma-separated or repeated: bge-small, minilm-l6, hash (not a real model), "
                             f"openai:<deployment> (default {listed(the.MATRIX_EMBEDDERS)})")
    parser.add_argument("--methods", type=_names,
                        help=f"{', '.join(the.METHODS)} (default {listed(the.MATRIX_METHODS)})")
    parser.add_argument("--by", choices=("doc", "chunk"),
                        help="judge relevant ids by document (default) or as chunk ids of --labels-from")
    parser.add_argument("--labels-from", metavar="VARIANT",
                        help="with --by chunk: the variant the labels' chunk ids were made with, "
                             "<technique>-<size>-<overlap> such as fixed-500-100")
    parser.add_argument("--report-json", type=local_path, help="write the report as JSON here")
    parser.add_argument("--report-csv", type=local_path, help="write one row per experiment and k here")
    parser.add_argument("--report-html", type=local_path, help="write the report as a self-contained HTML page here")
    add_save_option(parser, "chunking/runs/ (ids and scores, no text), where chunking runs list and the run "
                            "page's Chunking tab find it")
    parser.add_argument("--per-query", action="store_true", help="keep each query's metrics in the JSON report")
    parser.add_argument("--fail-under", action="append", default=[], metavar="METRIC=VALUE",
                        help="exit 1 when an experiment scores below, e.g. hit_rate@5=0.85 or found@5=0.85; repeatable")
    openai = parser.add_argument_group("openai:<deployment> embedders (any OpenAI-compatible /embeddings endpoint)")
    openai.add_argument("--openai-endpoint", metavar="URL",
                        help="https://<resource>.openai.azure.com (Azure OpenAI), or an OpenAI-compatible base URL "
                             "such as http://127.0.0.1:8080/v1")
    openai.add_argument("--openai-api", choices=("auto", "azure", "openai"), default="auto",
                        help="auto decides by the host name (default)")
    openai.add_argument("--openai-auth", type=auth_way, choices=AUTHS, default="key",
                        help="key (default, read from --openai-key-env), managed_identity (Azure only; "
                             "managed-identity is read as it), or none")
    openai.add_argument("--openai-key-env", metavar="VAR", default="OPENAI_API_KEY",
                        help="the environment variable holding the key (default OPENAI_API_KEY)")
    openai.add_argument("--openai-client-id", metavar="ID", help="a user-assigned managed identity's client id")
    openai.add_argument("--openai-api-version", default="2024-10-21", help="Azure OpenAI only (default 2024-10-21)")
    openai.add_argument("--openai-dimensions", type=whole(1, 65536),
                        help="the vectors' size (default: asked of the endpoint once)")
    parser.add_argument("--vector-cache", "--cache", dest="cache", type=local_path, metavar="FILE",
                        help="a vector cache file kept across runs (--cache is its old name)")
    parser.add_argument("--threads", type=whole(1), default=None, help="threads for the embedding models")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--exhaustive", action="store_true",
                        help="run every experiment on every query; by default the cross-encoder's experiments race "
                             "(not with --fail-under, which gates every experiment on every query): each stopped once "
                             "an anytime-valid paired test shows its nDCG at the largest k is below the best's")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..builds import MatrixSettings, missed_sentences, run_matrix

    settings = MatrixSettings.from_args(args)
    reports = _reports(args)
    check_outputs([output for output, _ in reports], _inputs(args))  # before any work: nothing of the user's replaced
    if settings.cache:
        from ..engine.cache import VECTOR_CACHE

        check_outputs([Output(settings.cache, VECTOR_CACHE, "--vector-cache", "the vectors")],
                      [*_inputs(args), *((f"the {o.flag} file", o.path) for o, _ in reports)],
                      make_folders=True)
    store = None
    if save_address(args) is not None:
        from .common import open_run_store

        store = open_run_store(args.save_to, check=True)
    opened = [_open_openai(args, name) for name in settings.embedders if name.startswith("openai:")]
    bar = ProgressBar(args.quiet)
    try:
        report = run_matrix(args.corpus, args.queries, settings=settings, progress=bar, save_to=store)
    finally:
        bar.close()
        for embedder in opened:
            embedder.close()
    for output, text in reports:  # each whole or not at all; a failure names its path
        write_whole(output.path, text(report), what=output.what)
    from ..report.builds.text import matrix_text

    print(matrix_text(report))
    if store is not None:
        from ..store.builds import chunking_store

        print(f"Saved as matrix run {report['id']} in {named(args.save_to)} "
              f"({named(chunking_store(store).run_file(report['id']))})")
    for line in missed_sentences(report):
        print(f"fail-under: {line}", file=sys.stderr)
    from ..report.builds.matrix_page import best_experiment

    if best_experiment(report) is None:  # nothing measured: a CI step must not read that as a pass
        print("error: every experiment failed (each one's error is in the report above); nothing was measured",
              file=sys.stderr)
        return 1
    return 0 if report["gate"]["passed"] else 1


def _reports(args: argparse.Namespace) -> list[tuple[Output, Callable[[dict], str]]]:
    """The report files the flags ask for, each with what writes its text from the report."""
    from ..report.builds.export import MATRIX_CSV, MATRIX_JSON, matrix_csv, matrix_json
    from ..report.style import HTML_PAGE

    def page(report: dict) -> str:
        from ..report.builds.matrix_page import render_matrix_html

        return render_matrix_html(report)

    wanted = [("--report-json", args.report_json, MATRIX_JSON, "the JSON report", matrix_json),
              ("--report-csv", args.report_csv, MATRIX_CSV, "the CSV report", matrix_csv),
              ("--report-html", args.report_html, HTML_PAGE, "the page", page)]
    return [(Output(path, kind, flag, what), text) for flag, path, kind, what, text in wanted if path is not None]


def _inputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    return [("the --corpus file", args.corpus), ("the --queries file", args.queries),
            ("the --chunker-config file", args.chunker_config)]


def _open_openai(args: argparse.Namespace, name: str):
    """The ``openai:<deployment>`` embedder the flags describe, registered with the engine; the key is
    read here, at the edge, from the variable --openai-key-env names."""
    import os

    from ..answers.embeddings import EmbeddingSettings, openai_embedder

    if not args.openai_endpoint:
        raise UsageError(f"--embedder {name} needs --openai-endpoint, the service's address")
    key = os.environ.get(args.openai_key_env) if args.openai_auth == "key" else None
    if args.openai_auth == "key" and not key:
        raise UsageError(f"--embedder {name} signs in with a key, and ${args.openai_key_env} is not set; set it, name "
                         "another variable with --openai-key-env, or use --openai-auth managed_identity")
    settings = EmbeddingSettings(endpoint=args.openai_endpoint, model=name.removeprefix("openai:"), api=args.openai_api,
                                 api_version=args.openai_api_version, auth=args.openai_auth, api_key=key,
                                 managed_identity_client_id=args.openai_client_id, dimensions=args.openai_dimensions)
    return openai_embedder(settings)

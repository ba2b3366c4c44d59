"""``python -m evaluation index CORPUS --out DIR``: build the embedded index once."""
from __future__ import annotations

import argparse
import sys
import time

from .common import ProgressBar, add_chunking_options, index_settings


def register(subparsers) -> None:
    parser = subparsers.add_parser("index", help="build the embedded index of a corpus into a folder",
                                   description="Build the embedded index (BM25 + bundled embedding models) "
                                               "of a corpus. Does nothing when the folder already holds the "
                                               "same index (same corpus bytes, settings, models and the software "
                                               "that tokenises and embeds).")
    parser.add_argument("corpus", help="a JSONL file of {id, text} rows or a folder of .md/.txt files")
    parser.add_argument("--out", required=True, help="the index folder")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_chunking_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..engine.index import build_index

    bar = ProgressBar(args.quiet)
    started = time.perf_counter()
    try:
        manifest = build_index(args.corpus, args.out, index_settings(args), progress=bar.stage(),
                               threads=args.threads)
    finally:
        bar.close()
    if manifest["reused"]:
        print(f"{args.out} already holds this index ({manifest['chunks']} chunks, fingerprint "
              f"{manifest['fingerprint'][:12]}); nothing to do")
    else:
        models = ", ".join(m["name"] for m in manifest["models"]) or "none"
        print(f"indexed {manifest['corpus']['documents']} documents as {manifest['chunks']} chunks "
              f"(models: {models}) into {args.out} in {time.perf_counter() - started:.1f} s", file=sys.stdout)
    return 0

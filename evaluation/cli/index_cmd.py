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
                                               "same index (same corpus bytes and settings), intact; replaces "
                                               "only a folder this tool wrote.")
    parser.add_argument("corpus", help="a JSONL file of {id, text} rows or a folder of .md/.txt files")
    parser.add_argument("--out", required=True, help="the index folder")
    parser.add_argument("--force", action="store_true", help="build again even when the index is current")
    parser.add_argument("--verify", action="store_true",
                        help="check every file of a current index against its sha256 (sizes are always checked)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_chunking_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..engine.index import build_index

    bar = ProgressBar(args.quiet)
    started = time.perf_counter()
    try:
        manifest = build_index(args.corpus, args.out, index_settings(args), progress=bar.stage(),
                               threads=args.threads, force=args.force, verify=args.verify)
    finally:
        bar.close()
    if manifest["reused"]:
        checked = "every file's sha256 checked" if args.verify else "sizes checked; --verify checks every byte"
        print(f"{args.out} already holds this index ({manifest['chunks']} chunks, fingerprint "
              f"{manifest['fingerprint'][:12]}, {checked}); nothing to do (--force builds it again)")
    else:
        models = ", ".join(m["name"] for m in manifest["models"]) or "none"
        why = f" again ({manifest['rebuilt_because']})" if manifest.get("rebuilt_because") else ""
        print(f"indexed {manifest['corpus']['documents']} documents as {manifest['chunks']} chunks "
              f"(models: {models}) into {args.out}{why} in {time.perf_counter() - started:.1f} s", file=sys.stdout)
    return 0

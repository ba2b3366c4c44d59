"""``python3 -m evaluation index CORPUS --out DIR|ADDRESS``: build the embedded index once, and publish it
to Blob storage when ``--out`` is a Blob address (the Function App's embedded targets read it there), or
to S3 when it is ``s3://<bucket>/<folder>`` (the AWS flow's; boto3's default credentials).

For a Blob address the index is built in ``--index-dir`` (default ``.index/<corpus name>-<8 hex digits of its path>``),
then uploaded; the connection string comes from ``AZURE_STORAGE_CONNECTION_STRING`` when it is set (read
here, at the edge), else Azure sign-in is used (Azurite: the development account).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from ..errors import named
from .common import ProgressBar, add_chunking_options, index_settings, local_path, path_or_address


def register(subparsers) -> None:
    parser = subparsers.add_parser("index", help="build the embedded index of a corpus into a folder",
                                   description="Build the embedded index (BM25 + bundled embedding models, and "
                                               "ColBERT token vectors with --colbert) "
                                               "of a corpus. Does nothing when the folder already holds the "
                                               "same index (same corpus bytes, settings, models and the software "
                                               "that tokenises and embeds), intact; replaces only a folder this "
                                               "tool wrote.")
    parser.add_argument("corpus", type=local_path, help="a JSONL file of {id, text} rows or a folder of .md/.txt files")
    parser.add_argument("--out", required=True, type=path_or_address,
                        help="the index folder, or a Blob or S3 address to publish it to "
                             "(https://<account>.blob.core.windows.net/<container>/<folder>, s3://<bucket>/<folder>)")
    parser.add_argument("--index-dir", type=local_path, help="where to build an index published to Blob or S3 "
                                            "(default .index/<corpus name>-<8 hex digits of its path>)")
    parser.add_argument("--force", action="store_true", help="build again even when the index is current")
    parser.add_argument("--verify", action="store_true",
                        help="check every file of a current index against its sha256 (sizes are always checked)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_chunking_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..engine.index import build_index
    from ..store.sources import is_blob_address
    from .common import default_index_dir

    publish_to = args.out if is_blob_address(args.out) else None
    if publish_to:
        from ..store.blob import parse_address
        from ..store.s3 import is_s3_address, parse_s3_address

        # a malformed address is refused before minutes of indexing
        parse_s3_address(publish_to) if is_s3_address(publish_to) else parse_address(publish_to)
    folder = (args.index_dir or default_index_dir(args.corpus)) if publish_to else args.out
    bar = ProgressBar(args.quiet)
    started = time.perf_counter()
    try:
        manifest = build_index(args.corpus, folder, index_settings(args), progress=bar.stage(),
                               threads=args.threads, force=args.force, verify=args.verify)
    finally:
        bar.close()
    if manifest["reused"]:
        checked = "every file's sha256 checked" if args.verify else ("opened as evaluate opens it; --verify checks "
                                                                     "every byte")
        print(f"{named(folder)} already holds this index ({manifest['chunks']} chunks, fingerprint "
              f"{manifest['fingerprint'][:12]}, {checked}); nothing to build (--force builds it again)")
    else:
        models = ", ".join(m["name"] for m in manifest["models"]) or "none"
        if manifest.get("colbert"):
            models += f"; ColBERT token vectors: {manifest['colbert']['tokens']}"
        why = f" again ({manifest['rebuilt_because']})" if manifest.get("rebuilt_because") else ""
        print(f"indexed {manifest['corpus']['documents']} documents as {manifest['chunks']} chunks "
              f"(models: {models}) into {named(folder)}{why} in {time.perf_counter() - started:.1f} s", file=sys.stdout)
    if publish_to:
        from ..engine.published import publish_index

        published = publish_index(folder, publish_to,
                                  connection_string=os.environ.get("AZURE_STORAGE_CONNECTION_STRING") or None)
        what = "already there; made current" if published["reused"] else \
            f"uploaded {published['files']} files, {published['bytes'] / 1e6:.1f} MB"
        print(f"published index {published['fingerprint'][:12]} to {named(publish_to)} ({what})")
    return 0

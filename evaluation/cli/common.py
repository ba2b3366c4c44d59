"""Pieces the subcommands share: engine options, building the embedded target, a progress bar."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from ..errors import UsageError, did_you_mean


def add_chunking_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("chunking and models (the index fingerprint includes these)")
    group.add_argument("--chunking", default="structure", help="structure (default), fixed or recursive")
    group.add_argument("--chunk-size", type=int, default=200, help="words per chunk at most (default 200)")
    group.add_argument("--chunk-overlap", type=int, default=40, help="words carried over (default 40)")
    group.add_argument("--models", help="embedding models, comma-separated (default: every bundled one)")
    group.add_argument("--threads", type=int, default=None, help="CPU threads for the models")


def index_settings(args: argparse.Namespace):
    from ..engine.chunking import ChunkSettings
    from ..engine.index import IndexSettings

    models = tuple(m.strip() for m in args.models.split(",") if m.strip()) if args.models else None
    if models is not None:
        from ..engine.models import EMBEDDER_NAMES

        unknown = [m for m in models if m not in EMBEDDER_NAMES]
        if unknown:
            raise UsageError(f"unknown model(s) {', '.join(unknown)}.{did_you_mean(unknown[0], EMBEDDER_NAMES)} "
                             f"Bundled: {', '.join(EMBEDDER_NAMES)}")
    return IndexSettings(chunking=ChunkSettings(strategy=args.chunking, size=args.chunk_size,
                                                overlap=args.chunk_overlap), models=models)


def default_index_dir(corpus: str) -> Path:
    return Path(".index") / Path(corpus).stem


class ProgressBar:
    """A tqdm bar on stderr that any stage can drive with (done, total, label); silent when quiet."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet or not sys.stderr
        self._bar = None
        self._stage = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        if self._bar is None or self._bar.total != total:
            self.close()
            self._bar = tqdm(total=total, file=sys.stderr, unit="step", leave=False, dynamic_ncols=True)
        self._bar.set_description_str(label[:48], refresh=False)
        self._bar.update(done - self._bar.n)

    def stage(self) -> Callable[[str, int, int], None]:
        """Adapter for index building, whose callbacks are (stage, done, total)."""
        return lambda stage, done, total: self(done, total, stage)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


STORE_CONNECTION_STRING = "AZURE_STORAGE_CONNECTION_STRING"  # read here, at the edge; runs_cmd reads the same


def open_run_store(address: str):
    """The run store at ``address`` (a folder, a Blob or an Azurite address), signed in as ``runs`` does."""
    import os

    from ..store import open_store

    return open_store(address, connection_string=os.environ.get(STORE_CONNECTION_STRING) or None)


def add_significance_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="a difference with a Holm-adjusted p-value at or under this is significant (default 0.05)")
    parser.add_argument("--resamples", type=int, default=10_000,
                        help="bootstrap resamples and random sign flips per comparison (default 10000)")


INDEX_HELP = ("an index folder built by `python -m evaluation index`, or the Blob address it was published to "
              "(fetched once into --index-cache)")


def add_index_cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--index-cache", help="where a published index is fetched to "
                                              "(default <tempdir>/retrieval-eval-indexes)")


def add_target_options(parser: argparse.ArgumentParser) -> None:
    """``--corpus`` or ``--index`` (one is required), as ``evaluate`` takes them, with the engine options."""
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--corpus", help="a corpus to index (once; reused while unchanged) and search")
    where.add_argument("--index", help=INDEX_HELP)
    add_index_cache_option(parser)
    parser.add_argument("--index-dir", help="where --corpus keeps its index (default .index/<corpus name>)")
    parser.add_argument("--rerank-candidates", type=int, default=30,
                        help="hybrid results the cross-encoder rescores (default 30)")
    add_chunking_options(parser)


def open_embedded_target(args: argparse.Namespace, bar: ProgressBar):
    """The embedded engine over ``--index`` (a folder, or a published index's Blob address, fetched once
    into ``--index-cache`` and described by its address), or over ``--corpus`` indexed first."""
    import os
    import tempfile

    from ..engine.index import build_index, open_index
    from ..engine.target import EmbeddedTarget
    from ..store.sources import is_blob_address

    described = None
    if args.corpus:
        folder = args.index_dir or default_index_dir(args.corpus)
        build_index(args.corpus, folder, index_settings(args), progress=bar.stage(), threads=args.threads)
    elif is_blob_address(args.index):
        from ..engine.published import fetch_index

        cache = getattr(args, "index_cache", None) or os.path.join(tempfile.gettempdir(), "retrieval-eval-indexes")
        folder = fetch_index(args.index, cache, connection_string=os.environ.get(STORE_CONNECTION_STRING) or None)
        described = args.index.rstrip("/")
    else:
        folder = args.index
    return EmbeddedTarget(open_index(folder), rerank_candidates=args.rerank_candidates, threads=args.threads,
                          described_index=described)

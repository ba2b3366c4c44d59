"""Pieces the subcommands share: engine options, argument types that refuse bad values, a progress bar."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Callable

from ..errors import UsageError, did_you_mean

MAX_THREADS = 256  # more only makes the model runtime start thousands of idle threads


def add_chunking_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("chunking and models (the index fingerprint includes these)")
    group.add_argument("--chunking", default="structure", help="structure (default), fixed or recursive")
    group.add_argument("--chunk-size", type=int, default=200, help="words per chunk at most (default 200)")
    group.add_argument("--chunk-overlap", type=int, default=40, help="words carried over (default 40)")
    group.add_argument("--models", help="embedding models, comma-separated (default: every bundled one)")
    group.add_argument("--threads", type=whole(1, MAX_THREADS), default=None,
                       help=f"CPU threads for the models (1 to {MAX_THREADS})")


def whole(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``minimum`` (to ``maximum``), else a sentence (exit 2)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text} is too small: give a whole number of at least {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{text} is too large: give a whole number of at most {maximum}")
        return value

    parse.__name__ = "whole number"
    return parse


def points(text: str) -> float:
    """An argparse type: a finite number of points, 0 or more (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of points") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of points: give a finite number, 0 or more "
                                         "(points of found@10, e.g. 4)")
    return value


def setup_pattern(text: str) -> str:
    """An argparse type for --only / --skip: at least one non-empty pattern (comma-separated)."""
    if not any(part.strip() for part in text.split(",")):
        raise argparse.ArgumentTypeError(f"{text!r} names no setup; give a pattern such as hybrid, bm25, "
                                         "bge-small or local.dense.*")
    return text


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
    """``.index/<corpus name>``: named from the resolved path, so ``.`` is never ``.index`` itself."""
    return Path(".index") / (Path(corpus).resolve().stem.lstrip(".") or "corpus")


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

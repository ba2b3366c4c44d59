"""Builds one after another, each in a scratch folder removed after: what ``sweep`` and
``compare_chunking`` share.

One after another on purpose: a build's seconds then compare with the others' (two builds at once
would share the cores and slow each other by whatever the other did). One ``TextVectors`` serves
every build of a run, so a passage two builds share is embedded once, and one cache file serves
every build's questions, so each question is embedded once per model for the run: the file given
(kept across runs), or one in the scratch folder (this run only).
"""
from __future__ import annotations

import logging
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..engine.corpus import Corpus
from ..errors import UsageError
from ..engine.scratch import VECTOR_COUNTS, TextVectors
from ..engine.target import EmbeddedTarget
from ..processes import scratch_folder
from .cut import Cutter, Indexed, index_cut
from .settings import DEFAULT_MODEL, BuildPlace

log = logging.getLogger(__name__)

TARGET = "local"
SCRATCH_PREFIX = "chunking-run-"  # then this host and process (``processes.scratch_folder``)
Progress = Callable[[int, int, str], None]  # (done, total, label), as the command line's bar takes it


def progress_of(progress: Progress | bool | None) -> tuple[Progress | None, Callable[[], None]]:
    """A callable for ``progress`` (True: the command line's bar on stderr) and what closes it."""
    if progress is True:
        from ..progress import ProgressBar

        bar = ProgressBar()
        return bar, bar.close
    return (progress or None), (lambda: None)


@dataclass
class Scratch:
    """Where a run's builds live while they are searched, and the vectors they share."""

    workdir: Path
    text_vectors: TextVectors
    query_cache: Path
    threads: int | None = None
    queries: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VECTOR_COUNTS, 0))
    failed: list[dict[str, str]] = field(default_factory=list)  # {"build", "error"}: the report's ``failed``

    @property
    def vector_counts(self) -> dict[str, int]:
        return dict(self.text_vectors.counts)

    def count_queries(self, target: EmbeddedTarget, setup: Any) -> None:
        """Add the question vectors ``target`` took from the cache, shared or computed for ``setup``."""
        for name, value in target.cache_counts(setup.key).items():
            if name in self.queries:
                self.queries[name] += value

    def vectors(self) -> dict[str, Any]:
        """The report's ``vectors``: passages' and questions' vectors by where they came from, and the share
        the cache (the file, or another build of the run) gave."""
        passages = self.vector_counts
        counts = {name: passages[name] + self.queries[name] for name in passages}
        return {**counts, "share_from_cache": cache_share(counts)}


@contextmanager
def scratch(place: BuildPlace) -> Iterator[Scratch]:
    """A scratch folder (in ``place.workdir``, or a new temporary one) removed at the end with everything in
    it; its vectors kept in ``place.cache`` when given. One a killed run left there is removed when this
    one is made (``processes.scratch_folder``)."""
    try:
        base = scratch_folder(SCRATCH_PREFIX, place.workdir)  # named for this process: a killed run's is removed later
    except OSError as err:  # a workdir that is not there, not a folder, or not ours to write in
        what = ("does not exist" if isinstance(err, FileNotFoundError) else "is not a folder"
                if isinstance(err, NotADirectoryError) else f"cannot take a scratch folder ({err.strerror or err})")
        raise UsageError(f"workdir {place.workdir} {what}; make the folder first, or leave workdir out to build in "
                         "the system's temporary folder") from err
    vectors_file = Path(place.cache) if place.cache is not None else base / "run.cache.sqlite"
    text_vectors = TextVectors(cache=vectors_file, threads=place.threads)
    try:
        yield Scratch(workdir=base, text_vectors=text_vectors, query_cache=vectors_file, threads=place.threads)
    finally:
        text_vectors.close()
        shutil.rmtree(base, ignore_errors=True)


def each_build(keys: Sequence[str], corpus: Corpus, cutter: Cutter, where: Scratch, *,
               models: tuple[str, ...] = (DEFAULT_MODEL,), cross_encoder: bool = False,
               progress: Progress | None = None) -> Iterator[Made]:
    """For each key in turn: cut, index, and yield a ``Made``: the build and a target searching it. A build
    that fails is put in ``where.failed`` with its error (reported, never picked: it does not sink the run),
    but a chat model that refuses or goes quiet (``AnswerError``) stops the run. The build's folder is
    removed when the caller asks for the next one."""
    from ..errors import AnswerError

    for number, key in enumerate(keys, start=1):
        def tell(stage: str, done: int, total: int, number: int = number, key: str = key) -> None:
            if progress is not None:
                progress(done, total, f"[{number}/{len(keys)}] {key}: {stage}")

        folder = where.workdir / f"build-{number}"
        try:
            try:
                tell("cutting the documents", 0, len(corpus))
                cut = cutter(key, corpus)
                tell("cutting the documents", len(corpus), len(corpus))
                built = index_cut(cut, folder, text_vectors=where.text_vectors, models=models, progress=tell)
                target = EmbeddedTarget(built.index, name=TARGET, cache=where.query_cache,
                                        cross_encoder=cross_encoder, threads=where.threads)
            except (AnswerError, KeyboardInterrupt, MemoryError):
                raise
            except Exception as err:  # noqa: BLE001 - one build's failure is that build's result
                log.warning("build %s failed: %s", key, err)
                where.failed.append({"build": key, "error": f"{type(err).__name__}: {err}"})
                continue
            yield Made(key=key, built=built, target=target, tell=tell)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Made:
    """One build made: its cut and index, the target that searches it, and what tells the progress bar."""

    key: str
    built: Indexed
    target: EmbeddedTarget
    tell: Callable[[str, int, int], None]


def setup_for(target: EmbeddedTarget, method: str, models: tuple[str, ...]):
    """The target's setup for ``method`` over ``models`` (keyword reads none)."""
    wanted = "bm25" if method == "keyword" else "+".join(sorted(models))
    key = f"{target.name}.{method}.{wanted}"
    for setup in target.setups():
        if setup.key == key:
            return setup
    raise ValueError(f"{key} is not a setup of the scratch index")


def cache_share(counts: dict[str, int]) -> float:
    total = sum(counts[k] for k in VECTOR_COUNTS)
    return round((counts["vectors_cached"] + counts["vectors_shared"]) / total, 4) if total else 0.0

"""The embedded index: built once into a folder, opened read-only by runs.

Folder layout (``format`` 3)::

    .retrieval-eval-index  the marker: {"tool", "format", "fingerprint"}; only a folder holding it is
                         ever replaced or deleted, so `--out` given a folder of anything else is refused
    manifest.json        what was built from what: corpus, chunking, models, fingerprint, and every
                         file below with its size and sha256
    chunks.jsonl         one chunk a line: id, doc_id, n, page, headings, title, text
    bm25/                bm25s index of the chunks (BM25, Lucene variant, k1=1.2, b=0.75 like Azure AI
                         Search; English Snowball stemmer, English stopwords), over ``Chunk.indexed_text``
    bm25_documents/      bm25s index of the whole documents (``document_text``: title, then the text with
                         its headings), one row per document in the order of their first chunk; the same
                         settings but b=0, no length normalisation (why: ``DOCUMENT_BM25_SETTINGS``); only the
                         ``keyword_documents`` setup reads it (``keyword`` is the chunk BM25 alone)
    vectors/<model>.npy  float32 (chunks, dimensions), unit rows, in chunk order
    colbert/             only when built with ``colbert``: every chunk's token vectors (``colbert`` says how)

The fingerprint hashes everything that changes the index's bytes or a query's vector (``identity``
lists it: corpus bytes, chunking, the indexed text, BM25 settings, each model's files and settings,
the versions of bm25s, PyStemmer, tokenizers and onnxruntime): ``build_index`` does nothing when the
folder already holds an intact index with the same fingerprint and the installed models, intact being
whatever ``open_index`` accepts (so ``index`` rebuilds every damage ``evaluate`` refuses). A rebuild
replaces the whole folder, so one holding files the index did not write (``foreign_files``: a user's
notes beside the index) is refused, whatever ``force`` says, and left as it was.
``open_index`` refuses an index built with other models or software than are installed (naming the
rebuild command), and can say when the corpus changed since. A build writes into a temporary sibling
folder (``.<name>.building-<pid>-...``) and swaps it in at the end, so a stopped build never leaves
half an index; the next build removes the staging folders of builds whose process is gone.
``open_index`` checks every file's size (and, with ``verify``, its sha256) against the manifest, and
that vectors are unit rows, so a damaged index is refused rather than searched.

Where an index may go (``check_destination``): never over or around the corpus it is built from,
never inside another index, never a folder named ``.index`` (the folder that keeps one index each).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .chunking import RULES_VERSION, Chunk, ChunkSettings, chunk_corpus
from . import corpus as _corpus
from .corpus import Corpus, Document, document_text, read_corpus  # noqa: F401  document_text: the engine's name for it
from .identity import differences, fingerprint_payload, rebuild_command, software_versions
from ..errors import CorpusError, SearchIndexError
from ..files import sha256_file
from ..processes import process_alive

if TYPE_CHECKING:
    from .colbert import TokenVectors

log = logging.getLogger(__name__)

INDEX_FORMAT = 3  # 3: bm25_documents/ (issue 15); an index of format 2 is refused with the rebuild command
BM25_SETTINGS = {"method": "lucene", "k1": 1.2, "b": 0.75, "stemmer": "english", "stopwords": "en"}
# The document BM25 the keyword_documents setup fuses with the chunks' (engine/target.py). b=0: a long document
# is not scored down for its length. Measured with bench/bench_keyword.py (found@10 at doc grain, BM25
# alone / fused with the chunk ranks): with b=0.75 the document list lost on Python's docs (whole
# documents 19/60 against chunks' 29/60; fused 20/60), because the reference sections their questions
# need run to 11,000 words; with b=0 it found 40/60 alone, 34/60 fused, and on the sample 36/36 fused.
DOCUMENT_BM25_SETTINGS = {**BM25_SETTINGS, "b": 0.0}
MANIFEST = "manifest.json"
MARKER = ".retrieval-eval-index"
TOOL = "retrieval-evaluation"
INDEXES_FOLDER = ".index"  # where the command line keeps one index per corpus: never an index itself
_UNIT_TOLERANCE = 1e-2  # rows are written with norm 1 (float32); anything further off is damage

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class IndexSettings:
    chunking: ChunkSettings = ChunkSettings()
    models: tuple[str, ...] | None = None  # None: every embedder whose package is installed
    colbert: bool = False  # store ColBERT token vectors too (evaluation/engine/colbert.py)

    def resolved_models(self) -> tuple[str, ...]:
        from .model_catalog import available_embedders

        return tuple(sorted(self.models if self.models is not None else available_embedders()))


def fingerprint(corpus_sha256: str, settings: IndexSettings) -> str:
    """sha256 of everything that changes the index's bytes or a query's vector (see ``identity``)."""
    payload = fingerprint_payload(index_format=INDEX_FORMAT, corpus_sha256=corpus_sha256,
                                  chunking=settings.chunking.to_dict(), chunking_rules=RULES_VERSION,
                                  bm25=BM25_SETTINGS, bm25_documents=DOCUMENT_BM25_SETTINGS,
                                  models=settings.resolved_models())
    if settings.colbert:  # only then: an index without it keeps the fingerprint it always had
        from .colbert import identity as colbert_identity

        payload["colbert"] = colbert_identity()
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def read_manifest(folder: str | Path) -> dict | None:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def read_marker(folder: str | Path) -> dict | None:
    """The folder's marker when this tool wrote it (``{"tool", "format", "fingerprint"}``), else None."""
    try:
        marker = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) and marker.get("tool") == TOOL else None


def build_index(corpus: Corpus | str | Path, folder: str | Path, settings: IndexSettings = IndexSettings(),
                *, progress: Progress | bool | None = None, threads: int | None = None, force: bool = False,
                verify: bool = False, more_models_do: bool = False) -> dict:
    """Build the index of ``corpus`` into ``folder`` unless it already holds the same one, intact.

    Returns the manifest; ``manifest["reused"]`` says whether the existing index was kept, and
    ``manifest["rebuilt_because"]`` why an index with the same fingerprint was not (damage found by
    the size check, or the sha256 check with ``verify``). ``force`` rebuilds regardless. Only a
    folder holding this tool's marker is ever replaced (see ``check_destination``).
    ``more_models_do``: ``settings.models`` are the models the caller needs, so an index built the same
    way with those and more is kept as it is (a run that needs bge-small alone does not throw away an
    index of both models); a new one embeds only ``settings.models``.
    """
    if progress is True:  # the command line's bar on stderr, for a library caller who asks
        from ..progress import ProgressBar

        bar = ProgressBar()
        try:
            return build_index(corpus, folder, settings, progress=bar.stage(), threads=threads, force=force,
                               verify=verify, more_models_do=more_models_do)
        finally:
            bar.close()
    progress = progress or None  # False: no bar, as None
    folder = Path(folder)
    check_destination(folder, corpus.source if isinstance(corpus, Corpus) else corpus)
    given_read = isinstance(corpus, Corpus)
    corpus = corpus if isinstance(corpus, Corpus) else read_corpus(corpus)
    wanted = fingerprint(corpus.sha256, settings)
    marker = read_marker(folder)
    damage = None
    kept = wanted  # the fingerprint of an index kept as it is: this one, or one with more models
    if more_models_do and marker is not None and marker.get("fingerprint") != wanted:
        held = _with_more_models(folder, settings)
        kept = fingerprint(corpus.sha256, held) if held is not None else wanted
    if marker is not None and marker.get("fingerprint") == kept and not force:
        existing = read_manifest(folder)
        damage = index_damage(folder, existing, hashes=verify)
        if damage is None:
            assert existing is not None, "a folder without a manifest is damaged"
            changed = differences(existing)  # same fingerprint, other models in the manifest: never reuse
            if changed:
                damage = f"built with other models or software ({'; '.join(changed[:4])})"
            else:
                damage = _refused_on_open(folder)  # whatever evaluate would refuse, rebuilt here
            if damage is None:
                log.info("index in %s is current (fingerprint %s)", folder, kept[:12])
                return {**existing, "reused": True}
            log.warning("%s: %s; building it again", folder, damage)
        else:
            log.warning("%s: the index is damaged (%s); building it again", folder, damage)
    _refuse_foreign_files(folder)  # before minutes of embedding: a rebuild replaces the whole folder

    names = settings.resolved_models()
    prepare = _Preparing(progress, steps=3 + len(names))
    prepare("chunking the corpus")
    chunks = chunk_corpus(corpus, settings.chunking)
    where = folder.resolve()  # staging and swapping work beside the folder, whatever path named it
    _clean_stale_staging(where)
    staging = _make_staging(where)
    try:
        _write_marker(staging, wanted)  # first: a staging folder left by a killed build is known as ours
        _write_chunks(staging / "chunks.jsonl", chunks)
        prepare(f"keyword index of {len(chunks)} chunks")
        _build_bm25(staging / "bm25", [c.indexed_text for c in chunks])
        documents = _indexed_documents(corpus, chunks)
        prepare(f"keyword index of {len(documents)} documents")
        _build_bm25(staging / "bm25_documents", [_corpus.document_text(d) for d in documents], DOCUMENT_BM25_SETTINGS)
        model_infos = []
        for name, (vectors, info) in zip(names, _embed_chunks(names, chunks, progress=progress, threads=threads,
                                                              loading=prepare), strict=True):
            (staging / "vectors").mkdir(exist_ok=True)
            np.save(staging / "vectors" / f"{name}.npy", vectors)
            model_infos.append(info)
        late = {}
        if settings.colbert:
            from . import colbert

            late["colbert"] = colbert.write(staging, [c.indexed_text for c in chunks], progress=progress,
                                            threads=threads)
        manifest = {
            "format": INDEX_FORMAT,
            "fingerprint": wanted,
            "corpus": {"source": corpus.source, "sha256": corpus.sha256, "documents": len(corpus),
                       "path": _read_from(corpus, given_read)},
            "chunking": settings.chunking.to_dict(),
            "bm25": BM25_SETTINGS,
            "bm25_documents": {**DOCUMENT_BM25_SETTINGS, "documents": len(documents)},
            "models": model_infos,
            "software": software_versions(),
            "chunks": len(chunks),
            **late,
            "files": _describe_files(staging),
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        _swap_in(staging, where)
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        raise SearchIndexError(f"{folder}: cannot write the index ({err.strerror or err}); "
                               "give a folder you may write to") from err
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {**manifest, "reused": False, "rebuilt_because": "--force" if force and marker else damage}


def _with_more_models(folder: Path, settings: IndexSettings) -> IndexSettings | None:
    """``settings`` with the models of the index in ``folder`` when it holds every model of ``settings``
    and more, else None (whether it was built the same way otherwise is its fingerprint's to say)."""
    manifest = read_manifest(folder)
    try:
        held = tuple(str(m["name"]) for m in (manifest or {}).get("models") or [])
    except (TypeError, KeyError):
        return None
    if not set(settings.resolved_models()) < set(held):
        return None
    return IndexSettings(chunking=settings.chunking, models=held, colbert=settings.colbert)


def check_destination(folder: str | Path, corpus: str | Path | None = None) -> None:
    """Refuse, with a sentence, an index folder that building there would make lose something.

    Refused: a file; a folder named ``.index`` (it keeps one index per corpus); a folder inside
    another index; the corpus itself or a folder holding it; a folder that exists, is not empty and
    has no marker of this tool (a web app's folder with its own ``manifest.json``, say).
    """
    folder = Path(folder)
    where = folder.resolve()
    if folder.exists() and not folder.is_dir():
        raise SearchIndexError(f"{folder}: a file, not a folder; give a new folder for the index, "
                               f"for example {INDEXES_FOLDER}/<name>")
    if where == Path.cwd().resolve() or where in Path.cwd().resolve().parents:
        raise SearchIndexError(f"{folder}: the current folder (or one holding it); an index replaces its folder "
                               f"when rebuilt, so give a new folder, for example {INDEXES_FOLDER}/<name>")
    if where.name == INDEXES_FOLDER:
        raise SearchIndexError(f"{folder}: {INDEXES_FOLDER} keeps one index per corpus in its own folder; "
                               f"give {folder}/<name>")
    for parent in where.parents:
        if parent.is_file():
            raise SearchIndexError(f"{folder}: {parent} is a file, so no folder can be made under it; "
                                   "give another folder for the index")
        if read_marker(parent) is not None:
            raise SearchIndexError(f"{folder}: inside the index {parent}; an index folder holds one index, "
                                   "so give a folder outside it")
    if corpus is not None and not str(corpus).startswith(("http://", "https://")):
        source = Path(corpus).resolve()
        if source == where or where in source.parents:
            raise SearchIndexError(f"{folder}: the corpus {corpus} is "
                                   f"{'this folder' if source == where else 'inside it'}, "
                                   "and building an index there would replace it; give another folder")
    if folder.is_dir() and read_marker(folder) is None and any(folder.iterdir()):
        manifest = read_manifest(folder)
        if manifest is not None and manifest.get("format") == 1 and "fingerprint" in manifest:
            raise SearchIndexError(f"{folder}: an index built by an older version of this tool, which left no "
                                   f"marker to know it by; delete the folder yourself, then build again")
        raise SearchIndexError(f"{folder}: the folder is not empty and holds no index; this tool replaces only "
                               f"index folders it wrote (marked by {MARKER}), so give an empty or new folder for --out")


def built_name(corpus: str | Path) -> str:
    """``<corpus name>-<8 hex digits>``: the folder ``evaluate --corpus`` keeps a corpus's index in, under
    ``.index/``. The digits (sha256 of the corpus's resolved path) keep ``a/corpus.jsonl`` and
    ``b/corpus.jsonl``, or ``--corpus .`` from two folders of one name, from sharing an index and rebuilding
    over each other; ``.`` is never ``.index`` itself."""
    resolved = Path(corpus).resolve()
    digits = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{resolved.stem.lstrip('.') or 'corpus'}-{digits}"


def _read_from(corpus: Corpus, given_read: bool) -> str | None:
    """The resolved path of the file or folder ``corpus`` was read from (``corpus_now`` finds it by it later,
    whatever folder the index is opened from); None for one made in memory, or given already read and no
    longer what its source holds (a ``Corpus`` named after a file it was not read from)."""
    source = corpus.source
    if not source or "://" in source or not Path(source).exists():
        return None
    if given_read:
        try:
            if _corpus.corpus_sha256(source) != corpus.sha256:
                return None
        except (OSError, CorpusError):
            return None
    return str(Path(source).resolve())


def corpus_now(folder: str | Path, manifest: dict) -> Path | None:
    """Where the corpus the index in ``folder`` was built from is now, when that can be told: the path its
    build recorded; for an index built before paths were recorded, its source when absolute, or, for an
    index ``evaluate --corpus`` keeps under ``.index/``, its source from the folder holding ``.index``, where
    the command ran (the folder's name carries that path's digits: ``built_name``). None when it is not
    found: an index copied, fetched or published without its corpus is what it is."""
    recorded = manifest.get("corpus") or {}
    if "path" in recorded:  # None: not read from a file, nothing to compare with
        path = Path(recorded["path"]) if recorded["path"] else None
        return path if path is not None and path.exists() else None
    source = recorded.get("source")
    if not isinstance(source, str) or not source or "://" in source:
        return None
    if Path(source).is_absolute():
        return Path(source) if Path(source).exists() else None
    folder = Path(folder).resolve()
    if folder.parent.name != INDEXES_FOLDER:
        return None
    candidate = folder.parent.parent / source
    return candidate if candidate.exists() and built_name(candidate) == folder.name else None


def changed_corpus(folder: str | Path, manifest: dict) -> str | None:
    """The sentence refusing the index in ``folder`` when the corpus it was built from (``corpus_now``) holds
    other bytes now, with the command that builds it again; None when it is unchanged, or cannot be found
    or read (nothing to compare). Searching it would answer from text the corpus no longer holds."""
    path = corpus_now(folder, manifest)
    if path is None:
        return None
    try:
        now = _corpus.corpus_sha256(path)
    except (OSError, CorpusError):
        return None
    if now == (manifest.get("corpus") or {}).get("sha256"):
        return None
    shown = _relative(path)
    command = rebuild_command({**manifest, "corpus": {**manifest["corpus"], "source": shown}}, _relative(Path(folder)))
    return (f"{folder}: the corpus it was built from, {shown}, has changed since, so the index holds text the corpus "
            f"no longer does; build it again with `{command}`")


def _relative(path: Path) -> str:
    """``path`` as a person in the current folder would type it: relative when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return str(path)


def _refused_on_open(folder: Path) -> str | None:
    """Why ``open_index`` (what ``evaluate`` calls) refuses ``folder``, or None when it opens: so ``build_index``
    never calls "current" an index a run refuses (vectors garbled at the same size, a chunks file that
    no longer reads, a document BM25 of another length). The reason is the sentence without the folder
    and the rebuild command, which ``build_index`` is about to carry out."""
    try:
        open_index(folder, check_corpus=False)  # build_index has just compared the corpus it was given
    except SearchIndexError as err:
        reason = str(err).removeprefix(f"{folder}: ")
        return re.split(r"; rebuild", reason, maxsplit=1)[0]
    return None


# What a build writes at the top of its folder: the files a folder without a readable manifest may hold.
_WRITTEN = frozenset({MANIFEST, MARKER, "chunks.jsonl", "bm25", "bm25_documents", "vectors", "colbert"})


def foreign_files(folder: str | Path) -> list[str]:
    """The files under ``folder`` that no build of this tool wrote there (paths inside it, sorted): those
    its manifest does not list, besides the manifest and the marker (without a readable manifest, those
    outside the folders a build writes)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    manifest = read_manifest(folder)
    listed = manifest.get("files") if isinstance(manifest, dict) else None
    foreign = []
    for path in sorted(folder.rglob("*")):
        if path.is_dir():
            continue
        name = path.relative_to(folder).as_posix()
        ours = name in (MANIFEST, MARKER) or (name in listed if isinstance(listed, dict)
                                               else name.split("/", 1)[0] in _WRITTEN)
        if not ours:
            foreign.append(name)
    return foreign


def _refuse_foreign_files(folder: Path) -> None:
    foreign = foreign_files(folder)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise SearchIndexError(f"{folder}: holds files the index did not write ({shown}); building the index again "
                               "replaces the whole folder, so move them out first (or give another folder for --out); "
                               "nothing was changed")


def index_damage(folder: str | Path, manifest: dict | None, *, hashes: bool = False) -> str | None:
    """What is wrong with the files of the index in ``folder``, or None when every file the manifest
    lists is there with its size (and, with ``hashes``, its sha256)."""
    folder = Path(folder)
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not files:
        return f"{MANIFEST} lists no files"
    for name, expected in sorted(files.items()):
        path = folder / name
        if (not isinstance(expected, dict) or Path(name).is_absolute() or ".." in Path(name).parts
                or not path.is_file()):  # a manifest names files inside its own folder only
            return f"{name} is missing"
        size = path.stat().st_size
        if size != expected.get("bytes"):
            return f"{name} holds {size} bytes, not the {expected.get('bytes')} it was written with"
        if hashes and sha256_file(path) != expected.get("sha256"):
            return f"{name} does not hash to the sha256 it was written with"
    return None


def _describe_files(folder: Path) -> dict[str, dict]:
    return {p.relative_to(folder).as_posix(): {"bytes": p.stat().st_size, "sha256": sha256_file(p)}
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in (MANIFEST, MARKER)}


def _write_marker(folder: Path, fingerprint_: str) -> None:
    (folder / MARKER).write_text(json.dumps({"tool": TOOL, "format": INDEX_FORMAT, "fingerprint": fingerprint_}),
                                 encoding="utf-8")


def _make_staging(folder: Path) -> Path:
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{folder.name}.building-{os.getpid()}-", dir=folder.parent))
    except OSError as err:
        raise SearchIndexError(f"{folder}: cannot make the index folder ({err.strerror or err}); "
                               "give a folder you may write to") from err


def _clean_stale_staging(folder: Path) -> None:
    """Remove the staging (and swapped-out) folders of earlier builds of ``folder`` whose process is gone.

    Only folders named as ``build_index`` names them, holding this tool's marker (or nothing, when
    the build died before writing it), are removed: nothing else is ever deleted.
    """
    if not folder.parent.is_dir():
        return
    pattern = re.compile(re.escape(f".{folder.name}.") + r"(building|old)-(\d+)-")
    for entry in folder.parent.iterdir():
        found = pattern.match(entry.name)
        if not found or not entry.is_dir() or process_alive(int(found.group(2))):
            continue
        # a staging folder holds the marker itself; a swapped-out one holds the old index under its name
        inside = entry if found.group(1) == "building" else entry / folder.name
        if read_marker(inside) is not None or not any(entry.iterdir()):
            log.info("removing %s, left by a build that stopped", entry)
            shutil.rmtree(entry, ignore_errors=True)


def _write_chunks(path: Path, chunks: Sequence[Chunk]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for c in chunks:
            handle.write(json.dumps({"id": c.id, "doc_id": c.doc_id, "n": c.n, "page": c.page,
                                     "headings": list(c.headings), "title": c.title, "text": c.text},
                                    ensure_ascii=False) + "\n")


def bm25_tokenize(texts: Sequence[str]) -> list[list[str]]:
    """The one tokenizer for documents and queries, so both sides stem and drop stopwords alike."""
    import bm25s

    return bm25s.tokenize(list(texts), stopwords=BM25_SETTINGS["stopwords"], stemmer=_stemmer(),
                          return_ids=False, show_progress=False)


_per_thread = threading.local()


def _stemmer():
    """This thread's stemmer: PyStemmer's ``Stemmer`` "has internal state, so must not be called
    concurrently" (its docstring), and the activities of a Function App instance tokenize questions
    in threads of one process at once (``opened``). Made once per thread (about 0.1 ms), each with its
    own word cache."""
    stemmer = getattr(_per_thread, "stemmer", None)
    if stemmer is None:
        import Stemmer

        stemmer = _per_thread.stemmer = Stemmer.Stemmer(BM25_SETTINGS["stemmer"])
    return stemmer


def _indexed_documents(corpus: Corpus, chunks: Sequence[Chunk]) -> list[Document]:
    """The documents that have chunks, in the order of their first chunk (``document_positions``)."""
    by_id = {d.id: d for d in corpus}
    return [by_id[doc_id] for doc_id in dict.fromkeys(c.doc_id for c in chunks)]


def document_positions(chunks: Sequence[Chunk]) -> np.ndarray:
    """Each chunk's document as its row in ``bm25_documents``: documents numbered in order of first chunk."""
    rows: dict[str, int] = {}
    return np.fromiter((rows.setdefault(c.doc_id, len(rows)) for c in chunks), dtype=np.int64, count=len(chunks))


def _build_bm25(folder: Path, texts: Sequence[str], settings: dict = BM25_SETTINGS) -> None:
    import bm25s

    tokens = bm25_tokenize(texts)
    if not any(tokens):  # bm25s cannot build over an empty vocabulary (it raises max() of an empty sequence)
        raise CorpusError("the corpus holds no word the keyword index can read: every text is empty, stopwords "
                          "or one-character words (such as \"x y\"); add documents with words to it")
    retriever = bm25s.BM25(method=settings["method"], k1=settings["k1"], b=settings["b"])
    retriever.index(tokens, show_progress=False)
    retriever.save(str(folder), show_progress=False)


class _Preparing:
    """The steps of a build before its embedding bar, said as each begins: one bar, "preparing the index
    (<step>)", whose label names the step running. Without it the first run said nothing for 3 s (issue
    23) while the corpus was chunked, BM25 built and the models loaded (measured: see ``bench/README.md``)."""

    def __init__(self, progress: Progress | None, *, steps: int) -> None:
        self.progress, self.steps, self.done = progress, steps, 0

    def __call__(self, step: str) -> None:
        if self.progress:
            self.progress(f"preparing the index ({step})", self.done, self.steps)
        self.done += 1


def _embed_chunks(names: Sequence[str], chunks: Sequence[Chunk], *, progress: Progress | None,
                  threads: int | None, loading: Callable[[str], None] | None = None) -> list[tuple[np.ndarray, dict]]:
    """Every model's vectors for ``chunks`` (and its info), in the order of ``names``: all the models at
    once, each in its own thread with ``threads`` (default: the cores, up to 4) shared among them.

    The vectors are bit for bit those of one model after the other (the thread count changes no row).
    Measured on 2 busy cores (bench/bench_indexing.py, load 6-8): 1 intra-op thread per model at once
    took 42-133 s of CPU where one model after the other with 2 threads each took 49-147 s: a one-row
    call barely uses a second thread. A thread whose model is done helps the other one finish
    (``embed_documents_together``); a shared queue of both models' calls from the start cost more CPU
    and memory.
    """
    from .embed_together import embed_documents_together, text_work
    from .graphs import resolve_threads
    from .models import load_embedder

    each = max(1, resolve_threads(threads) // max(1, len(names)))
    embedders = []
    for name in names:
        if loading:
            loading(f"loading {name}")
        embedders.append(load_embedder(name, threads=each))
    texts = [c.indexed_text for c in chunks]
    weights = [text_work(text) for text in texts]  # counted in characters, so the ETA follows the work
    done, total = 0, sum(weights) * len(embedders)
    stage = f"embedding with {' + '.join(names)}" + (" at once" if len(names) > 1 else "")

    def advance(k: int) -> None:
        nonlocal done
        done += k
        if progress:
            progress(stage, done, total)

    if progress:  # the bar from its first frame: one batch of 32 can take seconds on busy cores
        progress(stage, 0, total)
    outs = embed_documents_together(embedders, texts, progress=advance, weights=weights)
    return [(np.ascontiguousarray(vectors, dtype=np.float32), embedder.info.to_dict())
            for vectors, embedder in zip(outs, embedders, strict=True)]


def _swap_in(staging: Path, folder: Path) -> None:
    if folder.exists():
        if (read_marker(folder) is None and any(folder.iterdir())) or foreign_files(folder):  # checked before the
            # build too; never delete others' files
            raise SearchIndexError(f"{folder}: files appeared there during the build; it was left as it was")
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-{os.getpid()}-", dir=folder.parent))
        os.replace(folder, old / folder.name)
        os.replace(staging, folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, folder)


@dataclass(frozen=True)
class OpenedIndex:
    """An index opened read-only: nothing under its folder is written while it is open, and nothing in
    it is written by searching (arrays read-only, chunks frozen), so the threads of one process may
    share one (``opened.OpenedIndexes`` says why that is safe)."""

    folder: Path
    manifest: dict
    chunks: tuple[Chunk, ...]
    bm25: Any  # a bm25s.BM25 (bm25s ships no types)
    vectors: dict[str, np.ndarray]
    colbert: TokenVectors | None = None  # the stored ColBERT token vectors, when built with them
    bm25_documents: Any = None  # the document BM25 (``DOCUMENT_BM25_SETTINGS``), one row per document
    chunk_documents: np.ndarray | None = None  # each chunk's row in ``bm25_documents`` (``document_positions``)

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(sorted(self.vectors))

    @property
    def doc_ids(self) -> frozenset[str]:
        return frozenset(c.doc_id for c in self.chunks)

    @property
    def chunk_ids(self) -> frozenset[str]:
        return frozenset(c.id for c in self.chunks)


def open_index(folder: str | Path, *, corpus: str | Path | None = None, verify: bool = False,
               check_corpus: bool = True) -> OpenedIndex:
    """Open a built index read-only. Given ``corpus``, refuse when it changed since the build; without it,
    and with ``check_corpus``, refuse when the corpus it was built from is where it was and holds other
    bytes now (``changed_corpus``): an index opened by name is never searched stale. ``check_corpus=False``
    for an index just built or checked, or fetched as a published version (its corpus stayed behind).

    Every file's size is checked against the manifest, and every vector row's length; ``verify``
    also checks each file's sha256 (it reads every byte once).
    """
    import bm25s

    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest is None:
        raise SearchIndexError(f"{folder}: no index here; build one with "
                               f"`python3 -m evaluation index CORPUS --out {folder}`")
    if manifest.get("format") != INDEX_FORMAT:
        if read_marker(folder) is not None:  # ours: building again replaces it in place
            raise SearchIndexError(
                f"{folder}: index format {manifest.get('format')} is not {INDEX_FORMAT} (this "
                f"version "
                f"also keeps a document BM25); rebuild it with `{rebuild_command(manifest, folder)}`"
            )
        raise SearchIndexError(f"{folder}: index format {manifest.get('format')} is not {INDEX_FORMAT}; rebuild it "
                               f"(delete the folder, then `python3 -m evaluation index CORPUS --out {folder}`)")
    changed = differences(manifest)  # the questions must meet the chunks' own models, tokenizers and stemmer
    if changed:
        shown = "; ".join(changed[:4]) + (f"; and {len(changed) - 4} more" if len(changed) > 4 else "")
        raise SearchIndexError(f"{folder}: built with other models or software than are installed now "
                               f"({shown}); rebuild it with `{rebuild_command(manifest, folder)}`")
    damage = index_damage(folder, manifest, hashes=verify)
    if damage is not None:
        raise SearchIndexError(f"{folder}: the index is damaged ({damage}); rebuild it with "
                               f"`python3 -m evaluation index CORPUS --out {folder} --force`")
    if corpus is not None:
        current = read_corpus(corpus)
        if current.sha256 != manifest["corpus"]["sha256"]:
            raise SearchIndexError(f"{folder}: the corpus {corpus} changed since this index was built; "
                                   f"rebuild with `python3 -m evaluation index {corpus} --out {folder}`")
    elif check_corpus:
        corpus_change = changed_corpus(folder, manifest)
        if corpus_change is not None:
            raise SearchIndexError(corpus_change)
    try:
        chunks = tuple(_read_chunks(folder / "chunks.jsonl"))
        bm25 = bm25s.BM25.load(str(folder / "bm25"), mmap=True, show_progress=False)
        bm25_documents = bm25s.BM25.load(str(folder / "bm25_documents"), mmap=True, show_progress=False)
        chunk_documents = document_positions(chunks)
        chunk_documents.setflags(write=False)  # shared by every target of the process (engine.opened)
        held = int(chunk_documents.max()) + 1 if len(chunks) else 0
        if int(bm25_documents.scores["num_docs"]) != held:
            raise SearchIndexError(f"{folder}: bm25_documents holds {bm25_documents.scores['num_docs']} documents "
                                   f"for the {held} of chunks.jsonl; rebuild it with `python3 -m evaluation index "
                                   f"CORPUS --out {folder} --force`")
        vectors = {}
        for info in manifest["models"]:
            array = np.load(folder / "vectors" / f"{info['name']}.npy", mmap_mode="r")
            if array.ndim != 2 or array.shape[0] != len(chunks):
                raise SearchIndexError(f"{folder}: vectors/{info['name']}.npy has shape {array.shape} "
                                       f"for {len(chunks)} chunks; rebuild the index")
            if len(chunks) and not _unit_rows(array):
                raise SearchIndexError(f"{folder}: vectors/{info['name']}.npy holds rows that are not unit "
                                       f"length (damaged); rebuild it with `python3 -m evaluation index CORPUS "
                                       f"--out {folder} --force`")
            vectors[info["name"]] = array
        from .colbert import read as read_token_vectors

        token_vectors = read_token_vectors(folder, manifest, len(chunks))
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as err:
        raise SearchIndexError(f"{folder}: the index is damaged ({err}); rebuild it") from err
    return OpenedIndex(folder=folder, manifest=manifest, chunks=chunks, bm25=bm25, vectors=vectors,
                       colbert=token_vectors, bm25_documents=bm25_documents, chunk_documents=chunk_documents)


def _unit_rows(array: np.ndarray) -> bool:
    norms = np.linalg.norm(np.asarray(array, dtype=np.float32), axis=1)
    return bool(np.isfinite(norms).all() and np.abs(norms - 1).max() <= _UNIT_TOLERANCE)


def _read_chunks(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            yield Chunk(id=row["id"], doc_id=row["doc_id"], n=row["n"], text=row["text"],
                        headings=tuple(row["headings"]), page=row["page"], title=row.get("title"))

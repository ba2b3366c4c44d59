"""What makes an embedded index what it is: everything that changes its bytes or a query's vector.

The index fingerprint hashes, besides the index format and the corpus bytes:

- the chunking settings and rules version, and the text that is indexed and embedded, as
  ``Chunk.indexed_text`` makes it of a probe chunk (the "Title — H1 > H2" line included), so a
  change to that line changes the fingerprint without a version to remember to bump;
- the BM25 settings of the chunk index and of the document index, and the text the document index
  holds, as ``corpus.document_text`` makes it of a probe document;
- each embedding model as ``model_catalog.model_info`` describes it: the .onnx and tokenizer sha256,
  dimensions, pooling, max_tokens, query prefix, rows per call (loading refuses files with other
  checksums, so these are the loaded model's), and how texts are batched;
- the versions of the software that turns text into tokens, scores and vectors, on both the index
  side and the query side: bm25s, PyStemmer, tokenizers, onnxruntime.

``differences`` compares an index's manifest with what is installed now; ``open_index`` refuses any
difference, with the command that rebuilds the index, so a question is never embedded by another
model, or tokenised by another tokenizer or stemmer, than the chunks it is compared with.
"""
from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any, Sequence

SOFTWARE = ("bm25s", "PyStemmer", "tokenizers", "onnxruntime")
_NOT_COMPARED = ("source",)  # where a model file came from; its sha256 says what it is


def software_versions() -> dict[str, str | None]:
    """The installed version of each package in ``SOFTWARE`` (None when it is not installed)."""
    found: dict[str, str | None] = {}
    for name in SOFTWARE:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def indexed_text_probe() -> str:
    """What ``Chunk.indexed_text`` makes of a chunk with a title and headings."""
    from .chunking import Chunk

    return Chunk(id="probe.md:0", doc_id="probe.md", n=0, text="Body of the probe.", headings=("Guide", "Install"),
                 page=None, title="Probe title").indexed_text


def document_text_probe() -> str:
    """What ``corpus.document_text`` makes of a document with a title and a heading."""
    from .corpus import Document, document_text

    return document_text(Document(id="probe.md", text="# Install\n\nBody of the probe.", title="Probe title"))


def model_identity(info: dict[str, Any]) -> dict[str, Any]:
    """A model's description without the fields that do not change its output."""
    return {key: value for key, value in info.items() if key not in _NOT_COMPARED}


def fingerprint_payload(*, index_format: int, corpus_sha256: str, chunking: dict, chunking_rules: int,
                        bm25: dict, bm25_documents: dict, models: Sequence[str]) -> dict[str, Any]:
    """Everything the fingerprint hashes (see the module docstring), as plain JSON data."""
    from .graphs import batching
    from .model_catalog import model_info

    return {"format": index_format, "corpus": corpus_sha256, "chunking": chunking, "chunking_rules": chunking_rules,
            "indexed_text": indexed_text_probe(), "bm25": bm25,
            "bm25_documents": bm25_documents, "document_text": document_text_probe(),
            "models": {name: model_identity(model_info(name).to_dict()) for name in models},
            "batching": batching(), "software": software_versions()}


def differences(manifest: dict[str, Any]) -> list[str]:
    """How the models and software installed now differ from those that built the index, one
    sentence each (empty when nothing differs)."""
    from ..errors import UsageError
    from .model_catalog import model_info

    found = []
    for built in manifest.get("models") or []:
        name = built.get("name")
        try:
            now = model_identity(model_info(name).to_dict())
        except UsageError:
            found.append(f"model {name!r} is not one this version knows")
            continue
        for key, value in now.items():
            if built.get(key) != value:
                found.append(f"{name} {key}: the index was built with {built.get(key)!r}, the installed model has "
                             f"{value!r}")
    if manifest.get("colbert"):
        from .colbert import differences as colbert_differences

        found += colbert_differences(manifest["colbert"])
    built_software = manifest.get("software") or {}
    for name, version in software_versions().items():
        if built_software.get(name) != version:
            found.append(f"{name}: the index was built with {built_software.get(name) or 'an unrecorded version'}, "
                         f"{version or 'none'} is installed")
    return found


def rebuild_command(manifest: dict[str, Any], folder: str | Path) -> str:
    """The command that builds this index again with what is installed now (same corpus and settings)."""
    from .chunking import ChunkSettings

    corpus = (manifest.get("corpus") or {}).get("source") or "CORPUS"
    words = ["python3 -m evaluation index", _quoted(corpus), "--out", _quoted(str(folder))]
    chunking, default = manifest.get("chunking") or {}, ChunkSettings().to_dict()
    for key, flag in (("strategy", "--chunking"), ("size", "--chunk-words"), ("overlap", "--overlap-words")):
        if key in chunking and chunking[key] != default[key]:
            words += [flag, str(chunking[key])]
    models = [m.get("name") for m in manifest.get("models") or []]
    from .model_catalog import available_embedders

    if models and sorted(models) != sorted(available_embedders()):
        words += ["--models", ",".join(models)]
    if manifest.get("colbert"):
        words.append("--colbert")
    return " ".join(words)


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)

"""Rebuild samples/corpus.jsonl from the README (long description) of installed PyPI packages.

The shipped sample is real documentation, not made-up sentences. Each document is one top-level
section (a second-level heading and everything under it) of one package's README, as its wheel's
METADATA carries it, so a question has to find the right section among a few hundred rather than
the right package among twenty. Ids are ``<package>/<section slug>``.

Run it again only to refresh the sample; then relabel samples/golden.jsonl with
``samples/relabel_golden.py`` (it finds each question's sections by its evidence quotes).
"""
from __future__ import annotations

import json
import re
import sys
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.engine.chunking import ChunkSettings, chunk_document
from evaluation.engine.corpus import Document

# Markdown READMEs under permissive licences, chosen for a mix of overlapping topics
# (Azure SDK auth and storage, search and tokenisation, CLI tooling, encodings and URLs).
PACKAGES = (
    "azure-identity", "azure-core", "azure-storage-blob", "azure-functions", "msal",
    "bm25s", "tokenizers", "ir_measures", "huggingface_hub", "numpy",
    "rich", "typer", "python-dotenv", "charset-normalizer", "idna", "urllib3", "furl",
    "xmltodict", "attrs", "cloudpickle", "fsspec",
)
MIN_SECTION_WORDS = 80  # shorter sections join the one before, as a reader would skim them together
_WHOLE_SECTIONS = ChunkSettings(size=1_000_000, overlap=0)  # one piece per heading, nothing cut


def readme(name: str) -> tuple[str, dict]:
    dist = metadata.distribution(name)
    meta = dist.metadata
    body = (meta.get_payload() or meta.get("Description") or "").strip() + "\n"
    return body, {"package": meta["Name"], "version": dist.version, "summary": meta.get("Summary"),
                  "license": meta.get("License-Expression") or meta.get("License") or "",
                  "source_uri": f"https://pypi.org/project/{meta['Name']}/{dist.version}/"}


def slug(text: str) -> str:
    text = re.sub(r"<[^>]*>", " ", text)                      # HTML in a heading (badges, logos)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)    # [words](link) -> words
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "section"


def sections(package: str, body: str) -> list[tuple[str, str]]:
    """(heading, text) for each top-level section, short ones joined to the one before."""
    groups: list[list] = []
    for piece in chunk_document(Document(id=package, text=body), _WHOLE_SECTIONS):
        key = piece.headings[:2]
        lines = [f"{'#' * (depth + 1)} {h}" for depth, h in enumerate(piece.headings) if depth >= len(key) - 1]
        text = "\n\n".join([*lines[-1:], piece.text]) if piece.headings else piece.text
        if groups and (groups[-1][0] == key or len(" ".join(groups[-1][1]).split()) < MIN_SECTION_WORDS):
            groups[-1][1].append(text)
        else:
            groups.append([key, [text]])
    return [(_plain(key[-1]) if key else "Overview", "\n\n".join(texts)) for key, texts in groups]


def _plain(heading: str) -> str:
    words = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", re.sub(r"<[^>]*>", " ", heading)).split()
    return " ".join(words) or "Overview"


def main(out: Path) -> None:
    rows, seen = [], set()
    for name in PACKAGES:
        body, meta = readme(name)
        package = meta["package"].lower()
        for heading, text in sections(package, body):
            doc_id = f"{package}/{slug(heading)}"
            n = 2
            while doc_id in seen:
                doc_id, n = f"{package}/{slug(heading)}-{n}", n + 1
            seen.add(doc_id)
            rows.append({"id": doc_id, "title": f"{meta['package']}: {heading}", "text": text,
                         "source_uri": meta["source_uri"],
                         "metadata": {k: meta[k] for k in ("package", "version", "license")}})
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} documents from {len(PACKAGES)} READMEs, "
          f"{sum(len(r['text'].split()) for r in rows)} words, to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("corpus.jsonl")))

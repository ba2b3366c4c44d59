"""Rebuild samples/corpus.jsonl from the README (long description) of installed PyPI packages.

The shipped sample is real documentation, not made-up sentences: each document is one package's
README as its wheel's METADATA carries it. Run it again only to refresh the sample; the golden file
beside it was labelled against the shipped text, so check its questions after a refresh.
"""
from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

# Markdown READMEs under permissive licences, chosen for a mix of overlapping topics
# (Azure SDK auth and storage, search and tokenisation, CLI tooling, encodings and URLs).
PACKAGES = (
    "azure-identity", "azure-core", "azure-storage-blob", "azure-functions", "msal",
    "bm25s", "tokenizers", "ir_measures", "huggingface_hub", "numpy",
    "rich", "typer", "python-dotenv", "charset-normalizer", "idna", "urllib3", "furl",
    "xmltodict", "attrs", "cloudpickle", "fsspec",
)


def main(out: Path) -> None:
    rows = []
    for name in PACKAGES:
        dist = metadata.distribution(name)
        meta = dist.metadata
        body = meta.get_payload() or meta.get("Description") or ""
        rows.append({
            "id": meta["Name"].lower(),
            "title": meta.get("Summary"),
            "text": body.strip() + "\n",
            "source_uri": f"https://pypi.org/project/{meta['Name']}/{dist.version}/",
            "metadata": {"package": meta["Name"], "version": dist.version,
                         "license": meta.get("License-Expression") or meta.get("License") or ""},
        })
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} documents, {sum(len(r['text'].split()) for r in rows)} words to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("corpus.jsonl")))

"""Point each golden question's ``expected`` at the corpus documents that hold its evidence.

The golden file was first labelled by package (``azure-identity``); the corpus splits each package's
README into sections (``azure-identity/managed-identity-support``). A question's expected documents
become the sections, within its labelled packages, that contain one of its evidence quotes
(whitespace folded). A question whose quotes are found nowhere is an error: fix the quote.

    python samples/relabel_golden.py samples/corpus.jsonl samples/golden.jsonl
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.whitespace import fold_whitespace as fold  # the rule chunks are matched by


def main(corpus_path: Path, golden_path: Path) -> None:
    documents = [json.loads(line) for line in corpus_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [json.loads(line) for line in golden_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    problems = []
    for row in rows:
        packages = {e.split("/", 1)[0] for e in row["expected"]}
        sections = []
        for quote in row.get("evidence", []):
            holders = [d["id"] for d in documents
                       if d["id"].split("/", 1)[0] in packages and fold(quote) in fold(d["text"])]
            if not holders:
                problems.append(f"{row['id']}: quote not found in {sorted(packages)}: {quote!r}")
            sections += [h for h in holders if h not in sections]
        if sections:
            row["expected"] = sections
    if problems:
        sys.exit("\n".join(problems))
    golden_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"relabelled {len(rows)} questions; expected documents per question: "
          f"{sum(len(r['expected']) for r in rows) / len(rows):.2f} on average")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))

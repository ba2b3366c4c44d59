"""The golden writer's two wording rules on questions people wrote, on six collections of different shapes.

A drafted question is turned down when it copies its passage (``copied_share`` over ``COPY_SHARE``) or
is a near-duplicate of an earlier question (cosine at ``similarity`` or more, by one of the index's
models). The baseline is each collection's own golden file: questions people (or the documentation's
authors) wrote, none of them a copy and none a repeat, so every one a rule turns down is a cost the
rule would put on good drafts. Printed per collection: the share of those questions turned down by
the copy rule (against the expected documents' whole text, which only makes it stricter than against
one passage), and by the near-duplicate rule at 0.5 / 0.6 / 0.7 / 0.8 for each bundled model, with
the questions' nearest-neighbour cosine (median, p90) and a pair of hand-made paraphrases for scale.

Collections: the shipped sample (36 questions, all about Azure's Python SDK: one narrow topic), and
``bench_shapes.py``'s five under its cache (short-no-headings, long-pages, api-reference, mixed,
python-faq), when they have been built (``python bench/bench_shapes.py`` builds them).

    python bench/bench_golden_checks.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _machine import describe_machine  # noqa: E402

from evaluation.engine.models import available_embedders, load_embedder  # noqa: E402
from evaluation.golden.writing.checks import COPY_SHARE, copied_share  # noqa: E402

SHAPES = Path.home() / ".cache" / "retrieval-eval-bench" / "shapes"
LEVELS = (0.5, 0.6, 0.7, 0.8)
PARAPHRASES = [("How often are the signing keys rotated?", "What is the rotation interval for signing keys?"),
               ("How do I give my function app a managed identity?",
                "What are the steps to enable a managed identity for a function app?")]


def collections() -> list[tuple[str, Path, Path]]:
    found = [("sample", ROOT / "samples" / "corpus.jsonl", ROOT / "samples" / "golden.jsonl")]
    for name in ("short-no-headings", "long-pages", "api-reference", "mixed", "python-faq"):
        if (SHAPES / name / "golden.jsonl").exists():
            found.append((name, SHAPES / name / "corpus.jsonl", SHAPES / name / "golden.jsonl"))
    return found


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    print(describe_machine())
    print(f"baseline: each collection's own questions (none a copy, none a repeat); copy rule share > {COPY_SHARE}")
    models = {name: load_embedder(name, threads=2) for name in available_embedders()}
    for name, model in models.items():
        vectors = [model.embed_documents(list(pair)) for pair in PARAPHRASES]
        print(
            f"  {name}: hand-made paraphrase pairs at cosine " + ", ".join(f"{float(v[0] @ v[1]):.2f}" for v in vectors)
        )
    for name, corpus_path, golden_path in collections():
        texts = {row["id"]: row["text"] for row in read_jsonl(corpus_path)}
        rows = [row for row in read_jsonl(golden_path) if row.get("question")]
        questions = [row["question"] for row in rows]
        shares = [copied_share(row["question"], "\n".join(texts.get(d.split("#")[0], "") for d in row["expected"]))
                  for row in rows]
        copied = sum(share > COPY_SHARE for share in shares)
        print(f"{name}: {len(rows)} questions; copy rule turns down {copied}/{len(rows)} "
              f"({copied / len(rows):.2f} of baseline); word-pair share median {np.median(shares):.2f}, "
              f"max {max(shares):.2f}")
        for model_name, model in models.items():
            vectors = model.embed_documents(questions)
            cosines = vectors @ vectors.T
            np.fill_diagonal(cosines, -1.0)
            # as the writer meets them: each question against the ones before it
            earlier = [float(cosines[i, :i].max()) if i else -1.0 for i in range(len(questions))]
            nearest = cosines.max(axis=1)
            turned = ", ".join(f"{level}: {sum(c >= level for c in earlier) / len(questions):.2f}" for level in LEVELS)
            print(f"  {model_name}: nearest-neighbour cosine median {np.median(nearest):.2f}, p90 "
                  f"{np.quantile(nearest, 0.9):.2f}; share turned down as near-duplicates at {turned}")


if __name__ == "__main__":
    main()

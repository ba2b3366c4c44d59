"""The chunking libraries, side by side on the shipped sample: which cutter the package uses for each
technique, against the alternative it was chosen over (the named baseline), on speed and boundaries.

For every technique at 500 and 1000 characters, over the sample's 270 Markdown documents:
- time to cut them all (median of 3, after a warm-up), and the ratio baseline / shipped;
- chunks made, the longest chunk, and what each technique promises about its boundaries:
  ``split words`` (a chunk ends inside a word), ``at a stop`` (a chunk ends at ``.!?:`` or a line end),
  ``across a heading`` (a chunk holds text of two sections: body text, then a heading line).

``--semantic N``: semantic too, on the first N documents (bundled minilm-l6) against chonkie's
``SemanticChunker`` given the same embedder, and on 20 joins of two documents' first 700 characters
of body text: how often a chunk starts exactly at the join. Slow (minutes): chonkie embeds windows too.

    python bench/bench_chunkers.py [--semantic 20]
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import describe_machine
from evaluation.chunking import cut
from evaluation.chunking.cutters import fixed, recursive, sentence, sections
from evaluation.chunking.outline import Outline

SAMPLE = Path(__file__).resolve().parent.parent / "evaluation" / "sample" / "corpus.jsonl"


def load() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def timed(run, docs) -> tuple[float, list[list[tuple[int, int]]]]:
    run(docs[:5])
    times, out = [], None
    for _ in range(3):
        start = time.perf_counter()
        out = run(docs)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def quality(docs, spans_per_doc) -> dict:
    ends = split = stops = across = count = longest = 0
    for doc, spans in zip(docs, spans_per_doc, strict=True):
        text = doc["text"]
        starts = [s.start for s in Outline.of(text).sections]
        for a, b in spans:
            count += 1
            longest = max(longest, b - a)
            if b < len(text):
                ends += 1
                split += not text[b - 1].isspace() and not text[b].isspace()
                stops += text[b - 1] in ".!?:" or text[b:].lstrip(" \t").startswith("\n")
            body_before = [s for s in starts if a < s < b and text[a:s].strip()
                           and not all(line.lstrip().startswith("#") for line in text[a:s].strip().splitlines())]
            across += bool(body_before)
    return {"chunks": count, "longest": longest, "split words": f"{split / max(ends, 1):.0%}",
            "at a stop": f"{stops / max(ends, 1):.0%}", "across a heading": f"{across / max(count, 1):.0%}"}


def chonkie_spans(chunker, docs):
    return [[(c.start_index, c.end_index) for c in chunker.chunk(d["text"])] for d in docs]


def splitter_spans(splitter, docs):
    return [[(i, i + len(piece)) for i, piece in splitter.chunk_indices(d["text"])] for d in docs]


def candidates(size: int):
    from chonkie import RecursiveChunker, TokenChunker
    from semantic_text_splitter import MarkdownSplitter, TextSplitter

    overlap = size // 5
    token = TokenChunker(tokenizer="character", chunk_size=size, chunk_overlap=overlap)
    chonkie_recursive = RecursiveChunker(tokenizer="character", chunk_size=size)
    markdown_alone = MarkdownSplitter(size, overlap)
    text_splitter = TextSplitter(size, overlap)
    return {
        "fixed": (
            ("shipped: by hand, at spaces", lambda ds: [fixed(d["text"], size, overlap) for d in ds]),
            ("chonkie TokenChunker (characters)", lambda ds: chonkie_spans(token, ds)),
        ),
        "recursive": (
            (
                "shipped: semantic-text-splitter TextSplitter",
                lambda ds: [recursive(d["text"], size, overlap) for d in ds],
            ),
            ("chonkie RecursiveChunker (no overlap)", lambda ds: chonkie_spans(chonkie_recursive, ds)),
        ),
        "markdown": (
            (
                "shipped: sections, long ones by MarkdownSplitter",
                lambda ds: [[s for s, _ in sections(d["text"], Outline.of(d["text"]), size, overlap)] for d in ds],
            ),
            ("MarkdownSplitter alone", lambda ds: splitter_spans(markdown_alone, ds)),
        ),
        "sentence": (
            ("shipped: chonkie SentenceChunker", lambda ds: [sentence(d["text"], size, overlap) for d in ds]),
            ("semantic-text-splitter TextSplitter", lambda ds: splitter_spans(text_splitter, ds)),
        ),
    }


def semantic_side(docs, n: int) -> None:
    import numpy as np
    from chonkie import SemanticChunker
    from chonkie.embeddings import BaseEmbeddings
    from chonkie.tokenizer import CharacterTokenizer

    from evaluation.engine.models import load_embedder

    embedder = load_embedder("minilm-l6")

    class Ours(BaseEmbeddings):
        def embed(self, text):
            return embedder.embed_documents([text])[0]

        def embed_batch(self, texts):
            return list(embedder.embed_documents(list(texts)))

        @property
        def dimension(self):
            return embedder.dimensions

        def get_tokenizer(self):
            return CharacterTokenizer()

        def similarity(self, u, v):
            return np.float32(np.dot(u, v))

    theirs = SemanticChunker(embedding_model=Ours(), chunk_size=1000)
    rng = random.Random(7)
    pairs = [tuple(rng.sample(range(len(docs)), 2)) for _ in range(20)]

    def body(text):
        return "\n".join(line for line in text.splitlines()
                         if line.strip() and not line.startswith(("#", "```", "|", "[")))

    joined = [(body(docs[a]["text"])[:700], body(docs[b]["text"])[:700]) for a, b in pairs]
    for name, run in (("shipped: drift of 3-sentence means, cut at mean + 1 sd", None),
                      ("chonkie SemanticChunker", theirs)):
        start = time.perf_counter()
        if run is None:
            made = [len(cut("semantic-1000-n", d["id"], d["text"], embedder=embedder)) for d in docs[:n]]
            hits = sum(any(c.start == len(a) + 1 for c in cut("semantic-2000-n", "j", f"{a}\n{b}", embedder=embedder))
                       for a, b in joined)
        else:
            made = [len(run.chunk(d["text"])) for d in docs[:n]]
            chonkie2000 = SemanticChunker(embedding_model=Ours(), chunk_size=2000)
            hits = sum(any(c.start_index == len(a) + 1 for c in chonkie2000.chunk(f"{a}\n{b}")) for a, b in joined)
        print(f"  semantic  {name:58s} {time.perf_counter() - start:7.1f} s for {n} documents and 20 joins, "
              f"{sum(made)} chunks; a chunk starts at the join in {hits} of 20")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--semantic", type=int, default=0, metavar="N")
    args = parser.parse_args()
    docs = load()
    print(describe_machine())
    with open("/proc/loadavg", encoding="utf-8") as handle:
        print(f"load at start: {handle.read().split()[:3]}")
    print(f"corpus: {SAMPLE.name}, {len(docs)} documents, {sum(len(d['text']) for d in docs):,} characters")
    for size in (500, 1000):
        print(f"\nsize {size} characters, overlap {size // 5}")
        for technique, ((ours_name, ours), (base_name, base)) in candidates(size).items():
            ours_s, ours_spans = timed(ours, docs)
            base_s, base_spans = timed(base, docs)
            print(f"  {technique:9s} {ours_name:52s} {ours_s * 1000:7.0f} ms  {quality(docs, ours_spans)}")
            print(f"  {'':9s} {'baseline: ' + base_name:52s} {base_s * 1000:7.0f} ms  {quality(docs, base_spans)}"
                  f"  (baseline / shipped time: {base_s / ours_s:.2f})")
    if args.semantic:
        print()
        semantic_side(docs, args.semantic)
    with open("/proc/loadavg", encoding="utf-8") as handle:
        print(f"\nload at end: {handle.read().split()[:3]}")


if __name__ == "__main__":
    main()

"""build_index embeds every chunk with both models at once (each model in its own thread): its vectors
must be the ones each model gives alone, one model after the other."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evaluation.engine import models
from evaluation.engine.index import IndexSettings, build_index, open_index

SAMPLE = Path(__file__).resolve().parent.parent.parent / "samples" / "corpus.jsonl"
SETTINGS = IndexSettings(models=("bge-small", "minilm-l6"))


def test_an_index_built_with_both_models_at_once_holds_each_models_own_sequential_vectors(tmp_path, monkeypatch):
    calls = []  # every graph call of the build, whichever thread ran it
    rows = models.Embedder._rows
    monkeypatch.setattr(models.Embedder, "_rows", lambda self,
                        encodings: calls.append(self.name) or rows(self, encodings))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:12]), encoding="utf-8")
    stages: list[tuple[str, int, int]] = []
    build_index(corpus, tmp_path / "index", SETTINGS, threads=2, progress=lambda *s: stages.append(s))
    index = open_index(tmp_path / "index")
    texts = [c.indexed_text for c in index.chunks]
    assert len(texts) >= 30  # a few dozen chunks, of many lengths
    for name in SETTINGS.models:
        # today's way before the shared queue: this model alone, 2 intra-op threads
        alone = models.load_embedder(name, threads=2).embed_documents(texts)
        assert np.array_equal(np.asarray(index.vectors[name]), alone), name
    # each step before the embedding said as it began, then the embedding bar from its first frame
    embedding = [s for s in stages if s[0] == "embedding with bge-small + minilm-l6 at once"]
    documents = len({c.doc_id for c in index.chunks})
    assert stages[:5] == [("preparing the index (chunking the corpus)", 0, 5),
                          (f"preparing the index (keyword index of {len(texts)} chunks)", 1, 5),
                          (f"preparing the index (keyword index of {documents} documents)", 2, 5),
                          ("preparing the index (loading bge-small)", 3, 5),
                          ("preparing the index (loading minilm-l6)", 4, 5)]
    assert stages[5:] == embedding and embedding[0][1] == 0
    # progress kept moving, named both models, and ended at every chunk once per model
    assert [done for _, done, _ in embedding] == sorted({done for _, done, _ in embedding})
    work = sum(models.text_work(text) for text in texts)  # the bar counts characters, once per model
    assert embedding[-1][1:] == (2 * work, 2 * work)
    assert calls.count("bge-small") == len(texts)  # one row per call
    assert len(embedding) == 1 + len(calls)  # the first frame, then one after each graph call


def test_the_embedding_bar_over_texts_of_very_different_lengths_reads_as_far_as_the_work_is(tmp_path, monkeypatch):
    """A window runs its shortest texts first. Counting texts, 200 short ones (4 tokens each) done before
    20 long ones (about 220 tokens) read 200 / 220 = 91% done at 800 / 5,180 = 15% of the work, and an
    ETA of a tenth of the time left. The bar counts characters, so it reads within 10 points of
    the work all along. The model's time is a clock that moves by the tokens each call reads (rows times
    its padded length, what a transformer's time grows with), so the test times nothing real."""
    clock = [0]

    def timed_vectors(self, graph, ids, mask, types):
        clock[0] += ids.shape[0] * ids.shape[1]
        return np.zeros((ids.shape[0], self.dimensions), dtype=np.float32)

    monkeypatch.setattr(models.Embedder, "_vectors", timed_vectors)
    long_text = " ".join(f"word{i} of a long passage" for i in range(36))  # about 180 words, one chunk
    rows = ([{"id": f"s{i}", "text": f"alpha {i}"} for i in range(200)]
            + [{"id": f"l{i}", "text": f"{long_text} {i}"} for i in range(20)])
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    stages: list[tuple[str, int, int, int]] = []  # (stage, done, total, the work done so far) at each frame
    build_index(corpus, tmp_path / "index", IndexSettings(models=("bge-small",)), threads=1,
                progress=lambda stage, done, total: stages.append((stage, done, total, clock[0])))

    work = clock[0]
    # before any work, a label for each step, then the embedding bar at 0
    assert [s[:3] for s in stages[:5]] == [("preparing the index (chunking the corpus)", 0, 4),
                                           ("preparing the index (keyword index of 220 chunks)", 1, 4),
                                           ("preparing the index (keyword index of 220 documents)", 2, 4),
                                           ("preparing the index (loading bge-small)", 3, 4),
                                           ("embedding with bge-small", 0, stages[-1][2])]
    seen = [(spent, done, total) for stage, done, total, spent in stages if stage.startswith("embedding")]
    assert len(seen) == 1 + 220 and seen[-1][1] == seen[-1][2]  # a frame per call (one row each), ending full
    assert all(abs(done / total - spent / work) < 0.10 for spent, done, total in seen)
    # the ETA a bar shows then (time spent x what is left / what is done) against the time really left
    spent, done, total = seen[len(seen) // 2]
    eta, left = spent * (total - done) / done, work - spent
    assert 0.7 * left < eta < 1.3 * left, (eta, left)

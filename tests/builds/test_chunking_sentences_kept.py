"""``semantic``'s sentence vectors go through the cross-run cache file: a rerun (a new process: nothing
in memory) embeds no sentence it embedded before, and cuts exactly the same chunks."""
from __future__ import annotations

import json
from pathlib import Path

from evaluation.chunking import semantic
from evaluation.builds.cutters import chunking_cutter
from evaluation.engine.corpus import Corpus, Document
from evaluation.engine.scratch import TextVectors

SAMPLE = Path(__file__).resolve().parents[2] / "evaluation" / "sample" / "corpus.jsonl"
ROW = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
CORPUS = Corpus(source="one", documents=(Document(id=ROW["id"], text=ROW["text"], title=ROW["title"]),),
                sha256="0" * 64)


def test_a_rerun_takes_every_sentence_vector_from_the_cache_file_and_cuts_the_same(tmp_path):
    cache = tmp_path / "chunking.cache.sqlite"
    sentences = len(semantic.sentences(ROW["text"]))
    semantic._kept.clear()
    first = TextVectors(cache=cache)
    cut = chunking_cutter(sentences=first)("semantic-500-n", CORPUS)
    first.close()
    assert first.counts["vectors_computed"] == sentences > 5
    semantic._kept.clear()                        # a new process: the in-memory copy is gone
    again = TextVectors(cache=cache)
    recut = chunking_cutter(sentences=again)("semantic-500-n", CORPUS)
    again.close()
    assert again.counts == {"vectors_cached": sentences, "vectors_shared": 0, "vectors_computed": 0}
    assert [(c.id, c.text) for c in recut.chunks] == [(c.id, c.text) for c in cut.chunks]
    semantic._kept.clear()
    plain = chunking_cutter()("semantic-500-n", CORPUS)   # no cache: the model itself, the same cut
    assert [(c.id, c.text) for c in plain.chunks] == [(c.id, c.text) for c in cut.chunks]

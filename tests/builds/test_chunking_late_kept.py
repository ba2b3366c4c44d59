"""Late chunking's token states are computed once per (model, document) and reused by every late build of
any size or technique: the cutter asks the model for a document's states the first time only."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from evaluation.chunking import cut, late_vectors
from evaluation.chunking import late
from evaluation.builds.cutters import chunking_cutter
from evaluation.engine import models
from evaluation.engine.corpus import Corpus, Document

TEXT = ("# Retries\n\nThe client retries three times. Each wait doubles. "
        "After the last try it raises the error it saw.\n\n## Timeouts\n\nA call gives up after thirty seconds. "
        "The limit is per try, not per call, so four tries can take two minutes.\n")


@dataclass(frozen=True)
class Info:
    name: str
    sha256: str
    tokenizer_sha256: str = "t"
    max_tokens: int = 512


class CountingEmbedder:
    """One state per word, made from the word's characters; counts the documents it was run over."""

    def __init__(self, sha256: str = "a") -> None:
        self.info = Info(name="counting", sha256=sha256)
        self.runs: list[str] = []

    def token_states(self, text: str):
        self.runs.append(text)
        offsets, start = [], None
        for i, ch in enumerate(text + " "):
            if not ch.isspace() and start is None:
                start = i
            elif ch.isspace() and start is not None:
                offsets.append((start, i))
                start = None
        states = np.array([[len(text[a:b]), sum(map(ord, text[a:b])) % 7 + 1.0, 1.0] for a, b in offsets],
                          dtype=np.float32)
        return states, offsets


@pytest.fixture(autouse=True)
def clean():
    late.forget_states()
    yield
    late.forget_states()


def test_a_document_is_run_once_for_late_builds_of_every_size():
    embedder = CountingEmbedder()
    small = cut("fixed-200-l", "d", TEXT)
    large = cut("fixed-400-l", "d", TEXT)
    first = late_vectors(embedder, TEXT, small)
    second = late_vectors(embedder, TEXT, large)
    assert embedder.runs == [TEXT]                      # two builds, one run over the document
    fresh = CountingEmbedder()
    late.forget_states()
    assert np.array_equal(second, late_vectors(fresh, TEXT, large))  # kept states give the same rows
    assert np.array_equal(first, late_vectors(fresh, TEXT, small))
    assert first.shape == (len(small), 3) and np.allclose(np.linalg.norm(first, axis=1), 1.0)


def test_another_document_or_another_model_is_run_again():
    embedder = CountingEmbedder()
    other_text = TEXT.replace("thirty", "sixty")
    late_vectors(embedder, TEXT, cut("fixed-200-l", "d", TEXT))
    late_vectors(embedder, other_text, cut("fixed-200-l", "d", other_text))
    assert embedder.runs == [TEXT, other_text]
    other_model = CountingEmbedder(sha256="b")          # same name, another model file
    late_vectors(other_model, TEXT, cut("fixed-200-l", "d", TEXT))
    assert other_model.runs == [TEXT]


def test_an_embedder_that_does_not_say_what_it_is_is_never_kept():
    embedder = CountingEmbedder()
    embedder.info = None
    late_vectors(embedder, TEXT, cut("fixed-200-l", "d", TEXT))
    late_vectors(embedder, TEXT, cut("fixed-200-l", "d", TEXT))
    assert embedder.runs == [TEXT, TEXT]


def test_kept_states_are_read_only_and_dropped_oldest_first_past_the_bound(monkeypatch):
    embedder = CountingEmbedder()
    states, _, _ = late.kept_states(embedder, TEXT)
    with pytest.raises(ValueError):
        states[0, 0] = 9.0
    # room for exactly one document's states: a second document pushes the first out
    monkeypatch.setattr(late, "KEPT_BYTES", states.nbytes)
    other = TEXT.replace("three", "seven")            # as many tokens: as many bytes of states
    late.kept_states(embedder, other)
    late.kept_states(embedder, other)
    late.kept_states(embedder, TEXT)
    assert embedder.runs == [TEXT, other, TEXT]


def test_the_cutter_runs_each_document_once_across_late_builds_of_two_techniques(monkeypatch):
    embedder = CountingEmbedder()
    monkeypatch.setattr(models, "load_embedder", lambda name, threads=None: embedder)
    corpus = Corpus(source="two",
                    documents=(Document(id="a", text=TEXT), Document(id="b", text=TEXT.replace("three", "five"))),
                    sha256="0" * 64)
    cutter = chunking_cutter()
    builds = [cutter(key, corpus) for key in ("fixed-500-l", "fixed-1000-l", "recursive-1000-l")]
    assert sorted(embedder.runs) == sorted(d.text for d in corpus)   # 3 builds x 2 documents: 2 runs
    assert all(b.late["bge-small"].shape == (len(b.chunks), 3) for b in builds)

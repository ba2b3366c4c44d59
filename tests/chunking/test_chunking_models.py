"""``semantic`` and the ``l`` letter, with the bundled ONNX embedders: semantic chunks start where the
neighbouring sentences drift apart; late vectors are unit length, differ from plain ones and are the
same every time."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from evaluation.chunking import cut, late_vectors
from evaluation.chunking.semantic import boundaries, drifts, sentences
from evaluation.engine import model_catalog, models

SAMPLE = Path(__file__).resolve().parents[2] / "evaluation" / "sample" / "corpus.jsonl"
ROWS = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
BY_ID = {row["id"]: row for row in ROWS}
LONGEST = max(ROWS, key=lambda r: len(r["text"]))   # 10,551 characters: past both models' windows


@pytest.fixture(scope="module")
def minilm() -> models.Embedder:
    return models.load_embedder("minilm-l6")


@pytest.fixture(scope="module", params=models.EMBEDDER_NAMES)
def embedder(request) -> models.Embedder:
    return models.load_embedder(request.param)


class TopicEmbedder:
    """Sentences naming "storage" point one way, all others another: the drift is 1 exactly at a switch."""

    def embed_documents(self, texts):
        return np.array([[1.0, 0.0] if "storage" in t else [0.0, 1.0] for t in texts], dtype=np.float32)


def test_sentences_end_at_stops_and_line_ends_but_not_after_an_abbreviation():
    text = "# Title\n\nOne sentence. Two? Three!\nA line\n\n- an item, e.g. this one\n  goes on.  "
    assert [text[a:b] for a, b in sentences(text)] == [
        "# Title", "One sentence.", "Two?", "Three!", "A line", "- an item, e.g. this one", "goes on."]


def test_a_semantic_chunk_starts_exactly_where_the_topic_changes():
    about_keys = " ".join(f"Keys rotate every {n} days." for n in range(1, 5))
    about_storage = " ".join(f"The storage account {n} keeps blobs." for n in range(1, 5))
    text = f"{about_keys} {about_storage} {about_keys}"
    chunks = cut("semantic-2000-n", "d", text, embedder=TopicEmbedder())
    # three runs of four sentences; the whole text fits in 2000 characters, so only the drifts cut
    assert [c.text for c in chunks] == [about_keys, about_storage, about_keys]


def test_a_piece_longer_than_the_size_is_cut_at_its_largest_drift():
    # drifts between 4 sentences: 0.1, 0.9, 0.2 -> one standout (0.9 > mean 0.4 + sd 0.36): topics from 0 and 2
    spans = [(0, 100), (101, 200), (201, 300), (301, 400)]
    assert boundaries([0.1, 0.9, 0.2], spans, size=1000) == [[0], [2]]
    # equal drifts stand out nowhere; at size 250 the largest, the earliest of ties, cuts until all fit
    assert boundaries([0.5, 0.5, 0.5], spans, size=1000) == [[0]]
    # sentences 0-3 span 400 > 250: cut after 0 (earliest tie); 1-3 span 101..400 = 299: cut after 1; 2-3 fit
    assert boundaries([0.5, 0.5, 0.5], spans, size=250) == [[0, 1, 2]]
    # 0.4 stands out (mean 0.3 + sd 0.08 = 0.38): cut before 3; then 0-2 (300) is cut at its largest, 0.3
    assert boundaries([0.3, 0.2, 0.4], spans, size=250) == [[0, 1], [3]]


def test_drift_compares_the_mean_of_three_sentences_each_side():
    vectors = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]], dtype=np.float32)
    found = drifts(vectors)
    assert len(found) == 5
    assert found[2] == pytest.approx(1.0)                       # three [1,0] against three [0,1]
    # one boundary to the left: left [1,0]+[1,0], right [1,0]+[0,1]+[0,1] = [1,2]: cos = 1/sqrt(5)
    assert found[1] == pytest.approx(1 - 1 / 5 ** 0.5, abs=1e-6)
    # after sentence 3: left [1,0]+[1,0]+[0,1] = [2,1] (three, not four), right [0,1]+[0,1] = [0,2]
    assert found[3] == pytest.approx(1 - 2 / (5 ** 0.5 * 2), abs=1e-6)


def test_semantic_cuts_the_sample_within_the_size_with_a_bundled_model_and_the_same_every_time(minilm):
    for row in ROWS[::27] + [LONGEST]:
        chunks = cut("semantic-500-h", row["id"], row["text"], row["title"], embedder=minilm)
        assert chunks and all(len(c.text) <= 500 and c.text == row["text"][c.start:c.end] for c in chunks)
        assert [c.start for c in chunks] == sorted(c.start for c in chunks)
        assert chunks == cut("semantic-500-h", row["id"], row["text"], row["title"], embedder=minilm)


def test_two_unrelated_documents_joined_are_cut_at_the_join(minilm):
    def body(text):
        return "\n".join(line for line in text.splitlines() if line.strip() and not line.startswith(("#",
                                                                                                     "```", "|", "[")))

    first = body(BY_ID["azure-identity/cloud-configuration"]["text"])[:700]
    second = body(BY_ID["azure-core/1-6-0-2020-06-03"]["text"])[:700]
    text = f"{first}\n{second}"
    chunks = cut("semantic-2000-n", "joined", text, embedder=minilm)
    assert len(first) + 1 in {c.start for c in chunks}


def test_late_vectors_are_unit_length_and_differ_from_each_chunk_embedded_alone(embedder):
    for row in (ROWS[0], LONGEST if embedder.name == "minilm-l6" else ROWS[6]):   # 10,551 and 8,249 characters
        chunks = cut("markdown-500-l", row["id"], row["text"], row["title"])
        assert all(c.embed_text is None and c.late for c in chunks)
        late = late_vectors(embedder, row["text"], chunks)
        plain = embedder.embed_documents([c.text for c in chunks])
        assert late.shape == plain.shape == (len(chunks), 384) and late.dtype == np.float32
        assert np.allclose(np.linalg.norm(late, axis=1), 1.0, atol=1e-5)
        cosines = np.einsum("ij,ij->i", late, plain)
        assert (cosines < 0.99).all()          # late: each differs from the chunk alone...
        assert (cosines > 0.3).all()           # ...but is still about the same text
        assert np.array_equal(late, late_vectors(embedder, row["text"], chunks))
        # pooled from its own tokens: no two chunks share a vector, and on average a late vector is closer
        # to its own chunk embedded alone than to the others (measured: bge 0.758 against 0.741 and 0.699
        # against 0.637; minilm 0.847 against 0.726 and 0.870 against 0.411)
        between = late @ late.T
        assert between[~np.eye(len(chunks), dtype=bool)].max() < 0.999
        pairs = late @ plain.T
        assert np.diag(pairs).mean() > (pairs.sum() - np.trace(pairs)) / (pairs.size - len(chunks))


def test_a_late_chunk_leans_toward_its_document():
    bge = models.load_embedder("bge-small")
    row = BY_ID["azure-identity/cloud-configuration"]
    chunks = cut("fixed-250-l", row["id"], row["text"], row["title"])
    whole = bge.embed_documents([row["text"]])[0]
    late = late_vectors(bge, row["text"], chunks) @ whole
    plain = bge.embed_documents([c.text for c in chunks]) @ whole
    assert late.mean() > plain.mean()


def test_token_states_cover_every_token_and_one_window_is_one_plain_run(embedder):
    text = ROWS[0]["text"][:600]   # 600 characters: within both models' windows
    states, offsets = embedder.token_states(text)
    assert len(states) == len(offsets) and (np.abs(states).sum(axis=1) > 0).all()
    assert all(text[a:b].strip() for a, b in offsets)
    tokenizer = embedder._whole_tokenizer
    ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)   # with [CLS] and [SEP]
    assert ids.shape[1] <= embedder._spec.max_tokens
    direct = embedder._graph.run(ids, np.ones_like(ids), np.zeros_like(ids))[0, 1:-1]
    assert np.allclose(states, direct, atol=1e-5)


def test_a_text_past_the_window_runs_in_overlapping_windows_and_every_token_gets_a_state():
    spec = replace(model_catalog._SPECS["minilm-l6"], max_tokens=34)   # windows of 32 tokens, stepping 16
    small = models.Embedder(spec, threads=1)
    text = ROWS[0]["text"]
    states, offsets = small.token_states(text)
    assert len(offsets) > 100 and (np.abs(states).sum(axis=1) > 0).all()
    # the first 8 tokens (a quarter window) are from the first window, run alone
    ids = small._whole_tokenizer.encode(text, add_special_tokens=False).ids
    cls_id, sep_id = small._whole_tokenizer.token_to_id("[CLS]"), small._whole_tokenizer.token_to_id("[SEP]")
    row = np.array([[cls_id, *ids[:32], sep_id]], dtype=np.int64)
    first = small._graph.run(row, np.ones_like(row), np.zeros_like(row))[0, 1:-1]
    assert np.allclose(states[:8], first[:8], atol=1e-5)
    # token 48 is in the windows at 32 (16 from its start, 15 from its end) and 48 (at its start):
    # it keeps the state of the window at 32, run alone
    row = np.array([[cls_id, *ids[32:64], sep_id]], dtype=np.int64)
    window = small._graph.run(row, np.ones_like(row), np.zeros_like(row))[0, 1:-1]
    assert np.allclose(states[48], window[16], atol=1e-5)   # token 48: the middle of the window at 32


def test_late_vectors_refuse_a_chunk_from_another_text(minilm):
    chunks = cut("fixed-500-l", "d", ROWS[6]["text"])
    with pytest.raises(ValueError, match="outside the document"):
        late_vectors(minilm, ROWS[0]["text"][:300], chunks)


def test_a_documents_sentences_are_embedded_once_for_every_size_and_letter():
    class Counting(TopicEmbedder):
        name = "counting"
        texts: list[str] = []

        def embed_documents(self, texts):
            self.texts.extend(texts)
            return super().embed_documents(texts)

    counting = Counting()
    text = "Keys rotate daily. Keys are kept. The storage account keeps blobs. The storage tier is hot."
    runs = [cut(f"semantic-{size}-{letter}", "d", text, embedder=counting) for size in (50, 100) for letter in "hn"]
    assert len(counting.texts) == 4                       # four sentences, embedded once
    assert [c.text for c in runs[0]] == [c.text for c in runs[1]]   # h and n cut alike
    cut("semantic-50-n", "d", text + " One more.", embedder=counting)
    assert len(counting.texts) == 4 + 5                   # another text is embedded afresh

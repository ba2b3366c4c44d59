"""The text a judge reads for a unit: a document whole (its chunks' overlap said once), one page, one chunk;
the corpus's own text first when it is given."""
from __future__ import annotations

from evaluation.engine.chunking import Chunk
from evaluation.engine.corpus import Document
from evaluation.holes.texts import corpus_texts, index_texts, joined

CHUNKS = [Chunk("d:0", "d", 0, "one two three four", page=1, title="Guide", headings=("Setup",)),
          Chunk("d:1", "d", 1, "three four five six", page=1, title="Guide"),
          Chunk("d:2", "d", 2, "seven eight", page=2, title="Guide")]


def test_a_documents_chunks_are_joined_without_repeating_their_overlap():
    assert joined(CHUNKS[:2]) == "one two three four five six"
    assert joined(list(reversed(CHUNKS))) == "one two three four five six seven eight"  # in chunk order


def test_a_unit_is_a_document_a_page_or_a_chunk():
    texts = index_texts(CHUNKS)(["d", "d#page=2", "d:0", "absent", "d#page=9"])
    assert texts == {"d": "Guide\none two three four five six seven eight", "d#page=2": "seven eight",
                     "d:0": "Guide > Setup\none two three four"}


def test_the_corpus_text_is_read_first_and_its_pages_by_form_feed():
    corpus = [Document("d", "first page\fsecond page", title="Guide")]
    assert index_texts(CHUNKS, corpus)(["d", "d#page=2"]) == {"d": "Guide\nfirst page\fsecond page",
                                                              "d#page=2": "second page"}
    assert corpus_texts(corpus)(["d:0", "d"]) == {"d": "Guide\nfirst page\fsecond page"}

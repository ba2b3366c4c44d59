"""A declared space: what each method reads multiplies it, keys and order are stable, and bad input is a
sentence naming the file, the line and the fix."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.errors import UsageError
from evaluation.space import read_space, space_from_flags, space_of


def test_an_axis_a_method_does_not_read_does_not_multiply_it():
    space = space_of({"techniques": ["fixed", "sentence"], "sizes": [300, 600], "overlaps": [0],
                      "models": ["hash", "bge-small"], "methods": ["keyword", "dense", "hybrid", "hybrid_reranked"],
                      "depths": [20, 50], "rrf_k": [10, 30, 60]})
    setups = space.setups()
    chunkings = 2 * 2 * 1
    per_chunking = 1 + 2 * (1 + 2 * 3 + 1)  # keyword; per model: dense, hybrid at each depth x k, reranked
    assert len(setups) == chunkings * per_chunking == 68
    assert sum(s.method == "keyword" for s in setups) == chunkings
    assert sum(s.method == "dense" for s in setups) == chunkings * 2
    assert sum(s.method == "hybrid" for s in setups) == chunkings * 2 * 2 * 3
    assert len(space.builds()) == chunkings * 2  # one index per chunking x model, keyword riding on it


def test_keys_and_order_are_stable_and_repeats_are_dropped():
    space = space_of({"sizes": [300, 300], "overlaps": [0], "models": ["hash"], "methods": ["hybrid", "keyword"],
                      "depths": [20], "rrf_k": [60, 10]})
    assert [s.key for s in space.setups()] == ["fixed-300-0.keyword", "fixed-300-0.hash.hybrid.d20.k60",
                                               "fixed-300-0.hash.hybrid.d20.k10"]
    assert [s.key for s in space.setups()] == [s.key for s in space_of(space.to_dict()).setups()]


def test_an_overlap_at_or_over_the_size_is_left_out_and_said():
    space = space_of({"sizes": [100, 400], "overlaps": [0, 200], "methods": ["keyword"]})
    assert [str(c) for c in space.chunkings()] == ["fixed-100-0", "fixed-400-0", "fixed-400-200"]
    assert space.left_out() == 1
    assert "1 technique x size x overlap left out" in space.describe()


def test_a_keyword_only_space_builds_one_index_per_chunking():
    space = space_of({"sizes": [300, 600], "overlaps": [0], "methods": ["keyword"]})
    assert len(space.builds()) == 2 and "2 setups over 2 builds" in space.describe()


def test_a_misspelt_axis_names_the_file_line_and_nearest_axis(tmp_path: Path):
    path = tmp_path / "space.toml"
    path.write_text('sizes = [300]\n\nmodel = ["hash"]\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r'space.toml, line 3: "model" is not an axis.*Did you mean "models"'):
        read_space(path)


def test_a_bad_value_names_the_axis_line_and_fix(tmp_path: Path):
    path = tmp_path / "space.toml"
    path.write_text('methods = ["keyword", "hybird"]\ndepths = [5]\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r'line 1, methods: "hybird" is not one of.*Did you mean "hybrid"'):
        read_space(path)
    path.write_text('depths = [5]\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"line 1, depths: 5 is not a whole number of 10 or more.*first 10 results"):
        read_space(path)


def test_toml_and_json_that_do_not_parse_name_the_file(tmp_path: Path):
    bad = tmp_path / "space.toml"
    bad.write_text("sizes = [300\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"space.toml: not TOML \(.*line"):
        read_space(bad)
    bad_json = tmp_path / "space.json"
    bad_json.write_text('{"sizes": [300,\n]}', encoding="utf-8")
    with pytest.raises(UsageError, match=r"space.json, line 2: not JSON"):
        read_space(bad_json)
    with pytest.raises(UsageError, match="no such space file"):
        read_space(tmp_path / "missing.toml")


def test_json_file_and_flags_declare_the_same_space(tmp_path: Path):
    path = tmp_path / "space.json"
    axes = {"sizes": [300, 600], "models": ["hash"], "rrf_k": [10, 60]}
    path.write_text(json.dumps(axes), encoding="utf-8")
    assert [s.key for s in read_space(path).setups()] == [s.key for s in space_from_flags(**axes).setups()]


def test_an_unknown_model_is_refused_by_the_space():
    with pytest.raises(UsageError, match="models"):
        space_of({"models": ["no-such-model"]})

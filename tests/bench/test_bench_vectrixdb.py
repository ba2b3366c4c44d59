"""bench/bench_vectrixdb.py's arithmetic: what the cross-encoder's pairs alone allow the same four setups'
speed-up to be, printed under the floor, from the numbers of the 2026-12-05 quiet run (bench/README.md)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
import bench_vectrixdb as bench

# The quiet run of 2026-12-05 16:26: ours 1,080 batch pairs + 6 timed searches of 20 candidates, 93 ms a pair;
# VectrixDB 3,660 pairs in 309.8 s.
FOUR = {"cache": {"pairs_computed": 1080},
        "setups": [{"ranker": "cross-encoder", "times_ms": [2000.0] * 6, "options": {"rerank_candidates": 20}},
                   {"ranker": None, "times_ms": [13.0] * 50, "options": {}}]}
THEIRS = {"cross_encoder": {"pairs": 3660, "seconds": 309.8}}


def test_the_pairs_speed_up_is_their_pair_seconds_over_ours():
    assert bench.pairs_of(FOUR) == (1080, 120)
    assert bench.pairs_speed_up((1200, 0.093), (3660, 309.8 / 3660)) == pytest.approx(309.8 / (1200 * 0.093))
    # at an equal cost a pair it is the ratio of pairs: 3.05x, the ceiling the closing note argues from
    assert bench.pairs_speed_up((1200, 0.085), (3660, 0.085)) == pytest.approx(3.05)
    # more of our pairs, or dearer ones, lower it; the direction a flipped ratio would get wrong
    assert bench.pairs_speed_up((2400, 0.085), (3660, 0.085)) < bench.pairs_speed_up((1200, 0.085), (3660, 0.085))
    with pytest.raises(ValueError, match="must be above 0"):
        bench.pairs_speed_up((0, 0.09), (3660, 0.085))


def test_the_floor_says_what_the_pairs_alone_allow(capsys):
    stage = bench.Stage("ours evaluate, the same four", 116.7, 513.0, json.dumps(FOUR), "", "")
    floor = {"timing sample": 13.5, "cross-encoder: 1080 pairs x 93 ms": 100.9, "query vectors: 54 x 10.1 ms": 0.5}
    bench.print_floor(stage, floor, 0.093, FOUR, THEIRS)
    out = capsys.readouterr().out
    assert "  evaluate (its own process, models loaded)       116.7 s   1.02x the floor" in out
    assert ("the pairs alone: VectrixDB 3660 x 85 ms, ours 1200 x 93 ms: 2.78x (the same four's speed-up if "
            "each evaluate were its pairs alone)") in out
    bench.print_floor(stage, floor, None, FOUR, THEIRS)  # no pair measured: no line, no error
    assert "the pairs alone" not in capsys.readouterr().out

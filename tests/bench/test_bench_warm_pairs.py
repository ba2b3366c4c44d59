"""bench/bench_warm_pairs.py: the pairs it counts are the ones the reranked setup's runs send the
cross-encoder, cold and warm, and it leaves the real cross-encoder in place after."""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

from conftest import SAMPLES


def test_the_warm_run_sends_only_the_changed_questions_pairs_and_the_real_scores_come_back(sample_index, capsys):
    import bench_warm_pairs
    from evaluation.engine import models

    real = models.CrossEncoder.score_pairs
    assert bench_warm_pairs.main(["--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
                                  "--questions", "80"]) == 0
    out = capsys.readouterr().out

    assert models.CrossEncoder.score_pairs is real
    counts = {name: (int(pairs), int(tokens)) for name, pairs, tokens in
              re.findall(r"^(cold|warm): (\d+) pairs; .*; (\d+) tokens in all$", out, flags=re.M)}
    candidates = 20  # the embedded engine's rerank depth: each search sends its 20 candidates
    # warm: the 8 changed questions (10% of 80, none in the timed sample), nothing timed (settled)
    assert counts["warm"][0] == 8 * candidates
    # cold: the batch (80 less the 6 timed one by one) and the timed six; the timed pass's warm-up ranks the
    # first question (of the batch) through the batch's path, so its pairs are the batch's, sent once
    assert counts["cold"][0] == (80 - 6 + 6) * candidates
    share = counts["warm"][1] / counts["cold"][1]
    assert f"warm / cold tokens: {share:.3f}" in out and 0.05 < share < 0.2

"""Which paired test tells setups' times apart on a busy machine: the rates behind ``scoring/time_pairs.py``.

The issue's collection (``busy_machine.ISSUE_SETUPS``: 17 questions, 8 setups) is timed side by side by
the library's own pass on the simulated busy machine (a slow drift of up to 1.9x, bursts of 1.5-3x, a
scheduler's slice now and then), ``--draws`` times. In each draw the balance pick's question is asked
of each test: is ``dense.bge-small`` (the tier's anchor, 18 ms) faster by more than the 5 ms floor than
``hybrid.bge-small`` (0.6 ms slower: it is not), ``dense.bge-small+minilm-l6`` and
``hybrid.bge-small+minilm-l6`` (2x slower: they are)? Each test is one-sided on the per-question log
ratios less ``log(1 + floor / anchor's median)``, Holm-corrected over the three pairs at 0.05, on the
first 6 (a reranked setup's count), 10 (the time floor) and all 17 searches. The baseline, named
``sign``: the exact sign test; ``wilcoxon``: the exact signed-rank test (sign flips of the ranks,
``significance.sign_flip_p``); ``t``: Student's t on the means; ``trimmed``: the 20% trimmed t-test
``time_pairs`` uses. Printed: per test and n, the share of draws in which both 2x pairs were told apart,
and in which the equal pair was (wrongly).

    python bench/bench_time_tests.py [--draws 400]
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import describe_machine
from busy_machine import ISSUE_SETUPS, QUESTIONS, BusyMachine, SimulatedTarget
from evaluation.run.plan import PlanContext

FLOOR_MS, ALPHA = 5.0, 0.05
ANCHOR = "sim.dense.bge-small"
EQUAL, TWICE = "sim.hybrid.bge-small", ("sim.dense.bge-small+minilm-l6", "sim.hybrid.bge-small+minilm-l6")


def one_sided(two_sided: float, right_way: bool) -> float:
    return two_sided / 2 if right_way else 1 - two_sided / 2


def tests():
    from evaluation.scoring.significance import (exact_binary_p, sign_flip_p, t_two_sided_p, trimmed_mean_test)

    def sign(d):
        more, less = int((d > 0).sum()), int((d < 0).sum())
        return one_sided(exact_binary_p(more, less), more > less)

    def wilcoxon(d):
        d = d[d != 0]
        if not len(d):
            return 1.0
        order = np.abs(d).argsort().argsort() + 1.0  # ranks of |d| (ties: rare with float times)
        signed = order * np.sign(d)
        return one_sided(sign_flip_p(signed, rng=np.random.default_rng(0), resamples=20_000), signed.sum() > 0)

    def student(d):
        spread = d.std(ddof=1)
        if spread == 0:
            return 0.0 if d.mean() > 0 else 1.0
        t = d.mean() / (spread / math.sqrt(len(d)))
        return one_sided(t_two_sided_p(t, len(d) - 1), t > 0)

    def trimmed(d):
        estimate, _, _, p = trimmed_mean_test(d)
        return one_sided(p, estimate > 0)

    return {"sign": sign, "wilcoxon": wilcoxon, "t": student, "trimmed": trimmed}


def main(argv: list[str] | None = None) -> int:
    from evaluation.run import plan_run, time_setups
    from evaluation.scoring.significance import holm

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=400)
    args = parser.parse_args(argv)
    print(describe_machine(), flush=True)
    import tempfile

    questions = [f"question {n} about the api" for n in range(QUESTIONS)]
    golden = Path(tempfile.mkdtemp()) / "golden.jsonl"
    golden.write_text("".join(json.dumps({"id": f"q{n}", "question": q, "expected": [f"d{n}"]}) + "\n"
                              for n, q in enumerate(questions)), encoding="utf-8")
    target = SimulatedTarget(ISSUE_SETUPS, questions)
    # every question timed: the first n are read for each n
    plan = plan_run(target, golden, time_margin=0,
                    context=PlanContext(run_id="busy", created_at=datetime(2026, 12, 3, tzinfo=timezone.utc)))
    keys = plan.setup_keys
    found = {(name, n): {"twice": 0, "equal": 0} for name in tests() for n in (6, 10, QUESTIONS)}
    for seed in range(args.draws):
        rng = np.random.default_rng(seed)
        target.factors = {q: float(np.exp(rng.normal(0, 0.25))) for q in questions}
        target.machine = BusyMachine(rng, run_ms=sum(b for b, _, _ in ISSUE_SETUPS.values()) * QUESTIONS * 1.5)
        times = time_setups({"sim": target}, plan, keys, clock=target.machine.clock)
        for n in (6, 10, QUESTIONS):
            anchor = np.array(times[ANCHOR]["times_ms"][:n])
            shift = math.log1p(FLOOR_MS / float(np.median(anchor)))
            others = (EQUAL, *TWICE)
            ratios = [np.log(np.array(times[k]["times_ms"][:n]) / anchor) - shift for k in others]
            for name, test in tests().items():
                adjusted = holm([test(d) for d in ratios])
                apart = dict(zip(others, (p is not None and p <= ALPHA for p in adjusted), strict=True))
                found[name, n]["twice"] += all(apart[k] for k in TWICE)
                found[name, n]["equal"] += apart[EQUAL]
    print(f"\n{args.draws} draws; Holm over 3 pairs at {ALPHA}; floor {FLOOR_MS:g} ms; baseline: sign\n")
    print("| test | n | both 2x pairs told apart | equal pair told apart (wrong) |\n|---|---|---|---|")
    for (name, n), counts in found.items():
        print(f"| {name} | {n} | {counts['twice'] / args.draws:.1%} | {counts['equal'] / args.draws:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

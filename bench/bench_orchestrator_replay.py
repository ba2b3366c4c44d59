"""How long one replay of evaluate_golden takes once N shard activities have completed (issue stop 30).

The rank fan-in loops ``task_any`` over the pending shards; every replay walks the whole history, so the
cost of one replay grows with shards x shards if the loop is quadratic. Baseline: 200 shards; the bench
prints each size's best of 3 replays and its ratio to the baseline (5x the shards: linear 5, quadratic 25).
Measured 2026-12-01 under the bench lock, load 7.2 before, 9.9 after: 200 shards 0.159 s, 1,000 shards
3.659 s (x23.0). 2026-12-02, quiet, one after the other on one machine: the per-completion task_any loop
(1d0a15d) 0.146 s and 1.621 s (x11.1); the fan-in in at most 32 groups (``FAN_IN_GROUPS``) 0.091 s and
0.398 s (x4.4, under linear), most of it now the SDK parsing 2,048 event timestamps.
Usage: python3 bench/bench_orchestrator_replay.py [200 1000]
"""
from __future__ import annotations
import json
import sys
import time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import durable_host
from durable_host import DurableHost, replay, registered
from orchestrators.evaluate_golden import evaluate_golden

ORCH = registered(evaluate_golden)
SHA = "a" * 64


class Batched(DurableHost):
    """Runs every queued activity before the next episode, and gives an episode every waiting event."""
    def step(self):
        with self.lock:
            job = next((w for w in self.work if w.kind == "activity"), None)
            if job is not None:
                self.work.remove(job)
        if job is not None:
            self._run_activity(job)
            return True
        with self.lock:
            waiting = next((i for i in self.instances.values() if i.inbox), None)
            if waiting is not None:
                self._episode(waiting)
                return True
        return super().step()

    def _episode(self, inst):
        if len(inst.inbox) > 1:
            first, rest = inst.inbox[0], inst.inbox[1:]
            inst.inbox[:] = [first]
            # deliver all: append them after the first as part of the same episode
            orig = durable_host.orchestration_context
            def ctx(events, iid, inp):
                return orig(events + rest, iid, inp)
            durable_host.orchestration_context = ctx
            try:
                super()._episode(inst)
            finally:
                durable_host.orchestration_context = orig
            inst.history += rest
            return
        super()._episode(inst)


def run(n):
    keys = [f"local.s{i}" for i in range(5)]
    shards = {k: n // 5 for k in keys}
    acts = {
        "golden_hash": lambda job: {"sha256": SHA}, "keep_golden": lambda job: {"kept": True},
        "check_golden_copy": lambda job: {"ok": True, "errors": 0},
        "plan_evaluation": lambda job: {"setups": keys, "shards": shards},
        "rank_shard": lambda job: {"key": job["key"], "shard": job["shard"], "ok": True},
        "time_setup": lambda job: {"key": job["key"], "ok": True},
        "save_report": lambda job: {"saved": True, "report": "r"},
        "discard_run_files": lambda job: {"discarded": 1}, "refuse_run": lambda job: {"report": "r"},
    }
    host = Batched({"evaluate_golden": ORCH}, acts)
    job = {"collection": "docs", "sha256": SHA, "debounce_seconds": 0, "trigger": "evaluate_now", "state": None}
    host.start_new("evaluate_golden", "i1", json.dumps(job))
    host.run()
    inst = host.instances["i1"]
    assert inst.status == "Completed", (inst.status, inst.error)
    ranked = sum(1 for _, name, _ in host.activity_log if name == "rank_shard")
    # the episode right after all shards completed: its history holds every shard's schedule and completion
    biggest = max(inst.episodes, key=lambda e: len(e[0]))[0]
    times = []
    for _ in range(3):
        t = time.perf_counter()
        replay(ORCH, biggest)
        times.append(time.perf_counter() - t)
    return ranked, biggest, times


def show(n, baseline):
    ranked, biggest, times = run(n)
    ratio = f" (x{min(times) / baseline:.1f} of the baseline)" if baseline else " (the baseline)"
    print(f"{ranked} shard activities, {len(json.loads(biggest)['history'])} history events, "
          f"{len(biggest)/1e6:.2f} MB context; one replay of the final history: min {min(times):.3f} s, "
          f"runs {', '.join(f'{x:.3f}' for x in times)}{ratio}")
    return min(times)


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [200, 1000]
    base = None
    for size in sizes:
        best = show(size, base)
        base = base or best

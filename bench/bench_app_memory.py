"""Peak memory of one Function App instance running two ranking activities at once on a large index.

On Flex Consumption the Python worker runs an instance's two activities (host.json: 2 at once) as two
threads of one process, so the instance's peak is one process's. Measured the same way: one process
that has imported what the worker imports (``function_app``: the Durable and Blob SDKs and the
activities), then two ``rank_shard``-equivalent calls in two threads at once, each opening its own
target on the index as the activity does: its opened index (the chunks parsed, the vectors and BM25
mapped) from the process's ``engine.opened.OpenedIndexes`` as ``app.storage.opened_indexes`` keeps them
(``--opened-indexes``, the app's EVALUATION_OPENED_INDEXES: 2 by default, so the two share one open;
0: each activity opens its own, as the app did before), each ranking the first shard ``plan_shards``
gives its setup (the app's rules, no earlier run). Peak RSS is the kernel's: ``VmHWM`` of
``/proc/self/status`` (file-backed pages of the mapped vectors and BM25 included, as the instance's memory limit counts
them), with ``ru_maxrss`` beside it, not Python's own tracing. Baseline: the largest Flex instance the app's Bicep
allows, 2048 MB (the issue's goal: under it).

``--build-standin`` builds an index with the real chunker and the real BM25 (both keyword indexes),
and vectors of the real shape (each model's dimension, float32, one unit row per chunk) drawn from a
seeded normal distribution instead of the models' output, under the real models' names and infos in
the manifest, so the target loads the real embedders and cross-encoder for the questions. Why: the
real models embed 100k chunks of 200 words in over an hour on these 2 shared cores. Memory does not
depend on the vectors' values: every array is dense and read whole (a search multiplies the question
by every row), so the bytes held are rows x dimension x 4 whatever the numbers are; what the values
change is which chunks become candidates, and so which passages the cross-encoder reads (at most
512 tokens each, 30 a question either way). ``--compare REAL STANDIN`` checks that claim on a smaller
index built both ways.

    python bench/bench_app_memory.py --build-standin --corpus DIR/corpus.jsonl --out INDEX
    python bench/bench_app_memory.py --index INDEX --golden DIR/golden.jsonl --questions 1000 \\
        [--setups local.hybrid.bge-small+minilm-l6,local.hybrid_reranked.bge-small+minilm-l6] [--opened-indexes 0]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

GOAL_MB = 2048  # the Flex Consumption instance size the app's Bicep sets (infra/), the bound
DEFAULT_SETUPS = "local.hybrid.bge-small+minilm-l6,local.hybrid_reranked.bge-small+minilm-l6"
STANDIN_SEED = 28


def kernel_memory() -> dict[str, float]:
    """This process's VmRSS and VmHWM (peak resident) from /proc/self/status, and ru_maxrss, in MB."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            found[name] = int(value.split()[0]) / 1024
    found["ru_maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return found


def build_standin(corpus: Path, out: Path, seed: int = STANDIN_SEED) -> dict:
    """``build_index`` with its embedding step replaced by seeded unit rows of each model's dimension
    (the real models' infos kept, so a target opens it as a real index and embeds questions for real)."""
    import numpy as np

    from evaluation.engine import index as index_module
    from evaluation.engine.models import load_embedder

    def standin(names, chunks, *, progress=None, threads=None, loading=None):
        rng = np.random.default_rng(seed)
        out_ = []
        for name in names:
            embedder = load_embedder(name, threads=1)  # its info: name, dimension, file sha256
            info = embedder.info.to_dict()
            rows = rng.standard_normal((len(chunks), int(info["dimensions"])), dtype=np.float32)
            rows /= np.linalg.norm(rows, axis=1, keepdims=True)
            out_.append((np.ascontiguousarray(rows, dtype=np.float32), info))
        return out_

    real = index_module._embed_chunks
    index_module._embed_chunks = standin
    try:
        return index_module.build_index(corpus, out)
    finally:
        index_module._embed_chunks = real


def measure(index: Path, golden: Path, questions: int, setup_keys: Sequence[str], shard_seconds: float,
            most: int, opened_indexes: int = 2) -> dict:
    """Two rank_shard-equivalent calls of ``setup_keys`` in two threads at once, in this process, their
    opened index from one ``OpenedIndexes(opened_indexes)`` as the app's process holds it."""
    try:
        import function_app  # noqa: F401  # what the worker has imported before its first activity
        imported = "function_app"
    except Exception as err:  # noqa: BLE001  # measured without it, and said
        imported = f"not function_app ({type(err).__name__}: {err})"
    from bench_app_scale import questions_of
    from evaluation.engine.index import open_index
    from evaluation.engine.opened import OpenedIndexes
    from evaluation.engine.target import EmbeddedTarget
    from evaluation.run import Plan, plan_run, plan_shards, rank_setup

    work = Path(tempfile.mkdtemp(prefix="app-memory-"))
    rows = questions_of(golden, questions)
    golden_file = work / "golden.jsonl"
    golden_file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cache = work / "cache.sqlite"  # the Blob cache's stand-in, empty: a cold run
    planner = EmbeddedTarget(open_index(index), cache=cache)
    plan = Plan.from_json(json.loads(json.dumps(plan_run(planner, golden_file, only=list(setup_keys)).to_json())))
    shards = plan_shards(plan, shard_seconds=shard_seconds)
    del planner
    start = kernel_memory()
    samples: list[float] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            samples.append(kernel_memory()["VmRSS"])
            time.sleep(0.2)

    results: dict[str, dict] = {}
    fingerprint = json.loads((index / "manifest.json").read_text(encoding="utf-8"))["fingerprint"]
    opened = OpenedIndexes(opened_indexes)  # app.storage.opened_indexes: one per worker process

    def activity(key: str) -> None:
        began = time.perf_counter()
        shard = shards[key][0][:most] if most and len(shards[key]) > 1 else shards[key][0]
        target = EmbeddedTarget(opened.open(str(index), fingerprint, index), cache=cache)
        entry = rank_setup(target, plan, key, questions=shard)
        results[key] = {"questions": len(shard), "shards": len(shards[key]), "seconds": time.perf_counter() - began,
                        "error": entry["error"]}

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    threads = [threading.Thread(target=activity, args=(key,)) for key in setup_keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    watcher.join()
    end = kernel_memory()
    manifest = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
    return {"index": str(index), "chunks": manifest["chunks"], "models": [m["name"] for m in manifest["models"]],
            "imported": imported, "before_activities": start, "after": end, "results": results,
            "opened_indexes": opened_indexes, "opens": opened.opens,
            "largest_sampled_rss_mb": max(samples, default=end["VmRSS"])}


def report(found: dict) -> None:
    peak = found["after"]["VmHWM"]
    print(f"index {found['index']}: {found['chunks']} chunks, models {', '.join(found['models'])}; imported "
          f"{found['imported']}")
    print(f"  opened indexes kept (EVALUATION_OPENED_INDEXES) {found['opened_indexes']}: the two activities "
          f"opened the index {found['opens']} time(s)")
    print(f"  before the activities: VmRSS {found['before_activities']['VmRSS']:.0f} MB "
          f"(VmHWM so far {found['before_activities']['VmHWM']:.0f} MB, the plan included)")
    for key, result in found["results"].items():
        print(f"  {key}: shard 1 of {result['shards']}, {result['questions']} questions, {result['seconds']:.1f} s, "
              f"error {result['error']}")
    after = found["after"]
    print(f"  peak RSS (VmHWM) {peak:.0f} MB, ru_maxrss {after['ru_maxrss']:.0f} MB, largest sampled VmRSS "
          f"{found['largest_sampled_rss_mb']:.0f} MB (anon {after.get('RssAnon', 0):.0f} MB + file "
          f"{after.get('RssFile', 0):.0f} MB at the end)")
    print(f"  peak / goal: {peak:.0f} / {GOAL_MB} MB = {peak / GOAL_MB:.2f} (goal < 1)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-standin", action="store_true", help="build --out from --corpus, stand-in vectors")
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--index", type=Path, action="append", help="an index to measure (again: one process each)")
    parser.add_argument("--golden", type=Path)
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--setups", default=DEFAULT_SETUPS, help=f"two setup keys, comma-separated ({DEFAULT_SETUPS})")
    parser.add_argument("--shard-seconds", type=float, default=180.0)
    parser.add_argument("--most", type=int, default=0,
                        help="rank at most this many questions of the first shard of a setup that has several (the "
                             "reranked ones: a question's 30 pairs are scored and let go, so the peak comes early); "
                             "a one-shard setup ranks its whole batch. 0: every question")
    parser.add_argument("--opened-indexes", type=int, default=2,
                        help="opened indexes the process keeps, as the app's EVALUATION_OPENED_INDEXES (default 2: "
                             "the two activities share one open); 0: each activity opens its own, as before")
    parser.add_argument("--json", action="store_true", help="print one measurement as JSON (used per --index)")
    args = parser.parse_args(argv)
    if args.build_standin:
        manifest = build_standin(args.corpus, args.out)
        print(f"{args.out}: {manifest['chunks']} chunks, stand-in vectors for "
              f"{', '.join(m['name'] for m in manifest['models'])} (seed {STANDIN_SEED})")
        return 0
    keys = [k for k in args.setups.split(",") if k]
    if args.json:
        print(json.dumps(measure(args.index[0], args.golden, args.questions, keys, args.shard_seconds, args.most,
                                 args.opened_indexes)))
        return 0
    from _machine import describe_machine

    print(describe_machine())
    for index in args.index:  # each in a fresh process: a peak is a process's whole life
        load = os.getloadavg()[0]
        done = subprocess.run([sys.executable, __file__, "--json", "--index", str(index), "--golden", str(args.golden),
                               "--questions", str(args.questions), "--setups", args.setups, "--shard-seconds",
                               str(args.shard_seconds), "--most", str(args.most),
                               "--opened-indexes", str(args.opened_indexes)],
                              capture_output=True, text=True, check=True)
        print(f"\n{args.questions} questions, load {load:.1f} before, {os.getloadavg()[0]:.1f} after")
        report(json.loads(done.stdout.strip().splitlines()[-1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

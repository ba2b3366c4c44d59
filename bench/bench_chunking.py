"""compare_chunking, this project against VectrixDB 2.2, on the same corpus and golden file.

Baseline: VectrixDB 2.2's ``vectrixdb.evaluation.compare_chunking`` in its own virtualenv
(bench/vectrixdb_chunking_side.py). Ours: ``python -m evaluation chunking compare --json`` with a cache
file of its own that starts empty (a cold run: every vector it reuses it made in this run). Each side
is its own process; they run one after the other, ours first unless ``--theirs-first``, and the load
is printed before and after each. The same builds on both sides: the techniques given, at the sizes
given, headings embedded and not, no chat model (so both count what was found within 6000 characters)
and late chunking left out unless ``--late``. Printed: wall time per side and ours/theirs, each side's
pick (the best technique's best build), whether they agree or ours is tied with theirs, and our
ranked table, ties and share of vectors from the cache.

    python bench/bench_chunking.py [--corpus samples/corpus.jsonl] [--golden samples/golden.jsonl]
        [--techniques markdown,parent,recursive,sentence,fixed] [--sizes 1000] [--child-sizes 500]
        [--headings both] [--vectrixdb-python ~/.cache/vectrixdb-2.2-venv/bin/python]

Goal (issue 25): the same builds in at most half VectrixDB's wall time, and the same pick or a tie.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))

from _machine import describe_machine  # noqa: E402

VECTRIXDB_PYTHON = Path.home() / ".cache" / "vectrixdb-2.2-venv" / "bin" / "python"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(argv: list[str], env: dict | None = None) -> tuple[float, str, str, str]:
    before = load()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done.stdout, before, load()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT / "samples" / "corpus.jsonl"))
    parser.add_argument("--golden", default=str(ROOT / "samples" / "golden.jsonl"))
    parser.add_argument("--techniques", default="markdown,parent,recursive,sentence,fixed")
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--child-sizes", default="500")
    parser.add_argument("--headings", choices=("both", "yes", "no"), default="both")
    parser.add_argument("--late", action="store_true")
    parser.add_argument("--theirs-first", action="store_true")
    parser.add_argument("--vectrixdb-python", default=str(VECTRIXDB_PYTHON))
    args = parser.parse_args()
    print(describe_machine())
    print(f"corpus {args.corpus}, golden {args.golden}; techniques {args.techniques}; sizes {args.sizes} "
          f"(parent-child {args.child_sizes}); headings {args.headings}; late {'on' if args.late else 'off'}")
    with tempfile.TemporaryDirectory(prefix="bench-chunking-") as work:
        ours_argv = [sys.executable, "-m", "evaluation", "chunking", "compare", "--corpus", args.corpus,
                     "--golden", args.golden, "--techniques", args.techniques, "--sizes", args.sizes,
                     "--child-sizes", args.child_sizes, "--headings", args.headings, "--json", "--quiet",
                     "--cache", str(Path(work) / "cold.cache.sqlite")] + ([] if args.late else ["--no-late"])
        theirs_argv = [args.vectrixdb_python, str(HERE / "vectrixdb_chunking_side.py"), args.corpus, args.golden,
                       "--techniques", args.techniques, "--sizes", args.sizes, "--child-sizes", args.child_sizes,
                       "--headings", args.headings] + (["--late"] if args.late else [])
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        runs = {}
        for side in (("theirs", "ours") if args.theirs_first else ("ours", "theirs")):
            argv = ours_argv if side == "ours" else theirs_argv
            runs[side] = timed(argv, env if side == "ours" else None)
            print(f"{side}: {runs[side][0]:.1f} s wall (load before {runs[side][2]}, after {runs[side][3]})", flush=True)
    ours, theirs = json.loads(runs["ours"][1]), json.loads(runs["theirs"][1])
    ours_s, theirs_s = runs["ours"][0], runs["theirs"][0]
    ours_pick, theirs_pick = ours["pick"]["pick"], theirs["pick"]
    ours_ties = [t["build"] for t in ours["techniques"] if t.get("tie")]
    agree = ("the same pick" if ours_pick == theirs_pick else
             "a tie (their pick is one of our tied techniques' best builds)" if theirs_pick in ours_ties else
             "different picks")
    print()
    print(f"{'':8} {'wall s':>8} {'builds':>6}  pick")
    print(f"{'ours':8} {ours_s:8.1f} {len(ours['builds']):6}  {ours_pick}")
    print(f"{'theirs':8} {theirs_s:8.1f} {len(theirs['builds']):6}  {theirs_pick}")
    print(f"ours/theirs wall time: {ours_s / theirs_s:.2f} (goal: at most 0.50); picks: {agree}")
    vectors = ours["vectors"]
    print(f"ours: {vectors['share_from_cache']:.0%} of vectors from the cache ({vectors['vectors_shared']} shared in "
          f"the run, {vectors['vectors_cached']} from the file, {vectors['vectors_computed']} computed); "
          f"ties with our best: {', '.join(ours['ties']) or 'none'}; theirs: {', '.join(theirs['ties']) or 'none'}")
    print()
    print(f"{'technique':10} {'ours: best build':18} {'found':>6} {'chunks':>6} {'tie':>4}   "
          f"{'theirs: best build':20} {'found':>6} {'chunks':>6} {'tie':>4}")
    their_by = {t["technique"]: t for t in theirs["techniques"]}
    for t in ours["techniques"]:
        o = their_by.get(t["technique"], {})
        print(f"{t['technique']:10} {t['build']:18} {t['right']:>3}/{t['questions']:<2} {t['chunks']:6} "
              f"{'best' if t['best'] else 'yes' if t['tie'] else 'no':>4}   {str(o.get('build')):20} "
              f"{o.get('right', '-'):>3}/{o.get('questions', '-'):<2} {str(o.get('chunks', '-')):>6} "
              f"{'yes' if o.get('tie') else 'no':>4}")
    for failed in ours.get("failed") or []:
        print(f"ours failed: {failed['build']}: {failed['error']}")
    for b in theirs["builds"]:
        if b.get("error"):
            print(f"theirs failed: {b['key']}: {b['error']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
        [--headings both] [--documents N] [--vectrixdb-python ~/.cache/vectrixdb-2.2-venv/bin/python]
        [--only ours|theirs] [--theirs-json PATH] [--ours-json PATH]

``--only ours`` runs our side alone (their side may be running already, elsewhere, niced); with
``--theirs-json PATH`` their side is read from the JSON file ``vectrixdb_chunking_side.py`` printed
(the wall time is ``theirs.log``'s ``wall <seconds>`` beside it, the whole process as ours is timed, else
the JSON's ``seconds``; ``PATH`` with ``.json`` changed to ``.err``, when it holds
``/usr/bin/time -v``'s output, gives their CPU seconds) and the side-by-side table is printed when the
file holds a report. CPU seconds (user + sys of the side's process and its children, from
``resource.getrusage(RUSAGE_CHILDREN)``) are printed beside wall time for each side, since the two
cores are shared and wall time alone says as much about the neighbours as about the code.

Goal (issue 25): the same builds in at most half VectrixDB's wall time, and the same pick or a tie.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
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


def children_cpu() -> float:
    """User + sys seconds of every child process waited for so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(argv: list[str], env: dict | None = None) -> tuple[float, str, str, str, float]:
    """(wall seconds, stdout, load before, load after, CPU seconds) of one side run as its own process."""
    before = load()
    cpu = children_cpu()
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds, done.stdout, before, load(), children_cpu() - cpu


def time_v_cpu(path: Path) -> float | None:
    """User + sys seconds from ``/usr/bin/time -v``'s output in ``path``; None when it holds none."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    found = [re.search(rf"{name} time \(seconds\): ([0-9.]+)", text) for name in ("User", "System")]
    return sum(float(m.group(1)) for m in found) if all(found) else None


def read_theirs(path: Path) -> tuple[float, str, str, str, float | None] | None:
    """Their side as ``timed`` gives it, from the JSON file their side printed (None while it is empty):
    wall seconds from the file, load from ``theirs.log`` beside it when there is one."""
    text = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    if not text:
        return None
    report = json.loads(text)
    log = path.with_suffix(".log")
    loads = re.findall(r"load (?:before|after)[: ]+([0-9. ]+?\d)(?: \d+/\d+|$)", log.read_text(encoding="utf-8"),
                       flags=re.M) if log.is_file() else []
    before = loads[0] if loads else "not recorded"
    after = loads[-1] if len(loads) > 1 else "not recorded"
    # the process's wall time from the log (``wall <seconds>``), as ours is timed; else compare_chunking's own
    wall = re.search(r"^wall ([0-9.]+)", log.read_text(encoding="utf-8"), flags=re.M) if log.is_file() else None
    seconds = float(wall.group(1)) if wall else float(report["seconds"])
    return seconds, text, before, after, time_v_cpu(path.with_suffix(".err"))


def cut_down(corpus: Path, golden: Path, most: int, out: Path) -> str:
    """A corpus of the documents ``golden`` expects, then the first others, ``most`` in all (at least the expected)."""
    wanted = {item.partition("#")[0] for line in golden.read_text(encoding="utf-8").splitlines() if line.strip()
              for item in json.loads(line).get("expected") or []}
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = [r for r in rows if r["id"] in wanted]
    kept += [r for r in rows if r["id"] not in wanted][:max(0, most - len(kept))]
    out.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    return str(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(ROOT / "samples" / "corpus.jsonl"))
    parser.add_argument("--golden", default=str(ROOT / "samples" / "golden.jsonl"))
    parser.add_argument("--techniques", default="markdown,parent,recursive,sentence,fixed")
    parser.add_argument("--sizes", default="1000")
    parser.add_argument("--child-sizes", default="500")
    parser.add_argument("--headings", choices=("both", "yes", "no"), default="both")
    parser.add_argument("--late", action="store_true")
    parser.add_argument("--documents", type=int, default=0,
                        help="keep only the documents the golden file expects, and others up to this many in all "
                             "(0: every document); both sides read the same cut-down corpus")
    parser.add_argument("--theirs-first", action="store_true")
    parser.add_argument("--only", choices=("ours", "theirs"), help="run one side only")
    parser.add_argument("--theirs-json", type=Path, help="read their side from this JSON file instead of running it")
    parser.add_argument("--ours-json", type=Path, help="also write our side (its report, wall and CPU seconds, load) "
                        "to this file")
    parser.add_argument("--ours-from", type=Path, help="read our side from a file --ours-json wrote instead of running "
                        "it (with --theirs-json: the side-by-side table from two files, nothing run)")
    parser.add_argument(
        "--cache",
        type=Path,
        help="our vector cache file, which must not exist yet (the run stays "
        "cold) and is kept after, for later runs to reuse; default: a new one in a folder removed after",
    )
    parser.add_argument("--vectrixdb-python", default=str(VECTRIXDB_PYTHON))
    args = parser.parse_args()
    print(describe_machine())
    print(f"corpus {args.corpus}, golden {args.golden}; techniques {args.techniques}; sizes {args.sizes} "
          f"(parent-child {args.child_sizes}); headings {args.headings}; late {'on' if args.late else 'off'}")
    if args.cache is not None and args.cache.exists():
        raise SystemExit(f"--cache {args.cache}: the file exists; give a new path, so our side starts cold")
    with tempfile.TemporaryDirectory(prefix="bench-chunking-") as work:
        cold = args.cache if args.cache is not None else Path(work) / "cold.cache.sqlite"
        if args.documents:
            args.corpus = cut_down(Path(args.corpus), Path(args.golden), args.documents, Path(work) / "corpus.jsonl")
            print(f"corpus cut down to {sum(1 for _ in open(args.corpus, encoding='utf-8'))} documents: those the "
                  "golden file expects, then the first others")
        ours_argv = [sys.executable, "-m", "evaluation", "chunking", "compare", "--corpus", args.corpus,
                     "--golden", args.golden, "--techniques", args.techniques, "--sizes", args.sizes,
                     "--child-sizes", args.child_sizes, "--headings", args.headings, "--json", "--quiet",
                     "--cache", str(cold)] + ([] if args.late else ["--no-late"])
        theirs_argv = [args.vectrixdb_python, str(HERE / "vectrixdb_chunking_side.py"), args.corpus, args.golden,
                       "--techniques", args.techniques, "--sizes", args.sizes, "--child-sizes", args.child_sizes,
                       "--headings", args.headings] + (["--late"] if args.late else [])
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        runs = {}
        sides = ("theirs", "ours") if args.theirs_first else ("ours", "theirs")
        if args.only:
            sides = (args.only,)
        elif args.theirs_json:
            sides = ("ours",)
        if args.ours_from:
            kept = json.loads(args.ours_from.read_text(encoding="utf-8"))
            runs["ours"] = (kept["wall_s"], json.dumps(kept["report"]), kept["load_before"], kept["load_after"],
                            kept["cpu_s"])
            print(f"ours (from {args.ours_from}): {kept['wall_s']:.1f} s wall, {kept['cpu_s']:.1f} s CPU (user+sys) "
                  f"(load before {kept['load_before']}, after {kept['load_after']})")
            sides = tuple(side for side in sides if side != "ours")
        for side in sides:
            argv = ours_argv if side == "ours" else theirs_argv
            runs[side] = timed(argv, env if side == "ours" else None)
            print(f"{side}: {runs[side][0]:.1f} s wall, {runs[side][4]:.1f} s CPU (user+sys) "
                  f"(load before {runs[side][2]}, after {runs[side][3]})", flush=True)
    if "ours" in runs and args.ours_json:
        wall, out, before, after, cpu = runs["ours"]
        args.ours_json.write_text(json.dumps({"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "load_before": before,
                                              "load_after": after, "report": json.loads(out)}), encoding="utf-8")
    if args.theirs_json and "theirs" not in runs:
        read = read_theirs(args.theirs_json)
        if read is None:
            print(f"theirs: {args.theirs_json} holds no report yet; no side-by-side table")
        else:
            runs["theirs"] = read
            cpu = "not recorded" if read[4] is None else f"{read[4]:.1f} s"
            print(f"theirs (from {args.theirs_json}): {read[0]:.1f} s wall, CPU (user+sys) {cpu} "
                  f"(load before {read[2]}, after {read[3]})")
    if "ours" in runs and "theirs" not in runs:
        ours_only(json.loads(runs["ours"][1]))
        return 0
    if "theirs" in runs and "ours" not in runs:
        print(runs["theirs"][1])
        return 0
    side_by_side(runs)
    return 0


def ours_only(ours: dict) -> None:
    """Our pick, ties, cache share and table, when their side is not (yet) there."""
    vectors = ours["vectors"]
    print(f"ours: pick {ours['pick']['pick']}; ties with our best: {', '.join(ours['ties']) or 'none'}; "
          f"{vectors['share_from_cache']:.0%} of vectors from the cache ({vectors['vectors_shared']} shared in "
          f"the run, {vectors['vectors_cached']} from the file, {vectors['vectors_computed']} computed)")
    for t in ours["techniques"]:
        print(f"{t['technique']:10} {t['build']:18} {t['right']:>3}/{t['questions']:<2} {t['chunks']:6} "
              f"{'best' if t['best'] else 'yes' if t['tie'] else 'no':>4}")


def side_by_side(runs: dict) -> None:
    ours, theirs = json.loads(runs["ours"][1]), json.loads(runs["theirs"][1])
    ours_s, theirs_s = runs["ours"][0], runs["theirs"][0]
    ours_pick, theirs_pick = ours["pick"]["pick"], theirs["pick"]
    ours_ties = [t["build"] for t in ours["techniques"] if t.get("tie")]
    agree = ("the same pick" if ours_pick == theirs_pick else
             "a tie (their pick is one of our tied techniques' best builds)" if theirs_pick in ours_ties else
             "different picks")
    print()
    def cpu(run) -> str:
        return "-" if run[4] is None else f"{run[4]:.1f}"

    print(f"{'':8} {'wall s':>8} {'CPU s':>8} {'builds':>6}  {'load before':16} {'load after':16} pick")
    print(f"{'ours':8} {ours_s:8.1f} {cpu(runs['ours']):>8} {len(ours['builds']):6}  {runs['ours'][2]:16} "
          f"{runs['ours'][3]:16} {ours_pick}")
    print(f"{'theirs':8} {theirs_s:8.1f} {cpu(runs['theirs']):>8} {len(theirs['builds']):6}  {runs['theirs'][2]:16} "
          f"{runs['theirs'][3]:16} {theirs_pick}")
    cpu_ratio = (f"; CPU: {runs['ours'][4] / runs['theirs'][4]:.2f}" if runs["ours"][4] and runs["theirs"][4] else "")
    print(f"ours/theirs wall time: {ours_s / theirs_s:.2f} (goal: at most 0.50){cpu_ratio}; picks: {agree}")
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


if __name__ == "__main__":
    sys.exit(main())

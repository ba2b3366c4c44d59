"""The README's first command, timed from a fresh clone, and where its time goes.

A new user clones the repository, installs, and runs the first command the README gives::

    python3 -m pip install . && retrieval-eval evaluate --corpus samples/corpus.jsonl --golden samples/golden.jsonl

(the run kept in the default store, ./evaluations; ``retrieval-eval`` is ``python3 -m evaluation``)

This benchmark does the same: ``git clone`` of a repository (default: the one this file is in, its
committed HEAD) into a temporary folder, ``pip install -r requirements.txt`` there unless every
requirement is already installed (the install is not what is measured; its time is printed apart),
then the command, in the clone, with no index and no cache file, as on a first run. It reads the
command's progress bar as it is drawn and charges each moment to the label on screen, so it shows
where the time goes without changing the code it measures: building the index (embedding and the
rest), each group of setups (by method), and inside the setups the timed searches, the warm-ups and
the batches. Silence (no frame for more than 2 s) is counted too: a first run should have none.

Baseline: the whole command's wall time (the goal, issue 23: under 180 s on a quiet 2-core machine).
The machine's load (``/proc/loadavg``) is printed before and after, since a shared machine's load
moves every number here.

    python3 bench/bench_first_run.py [--repo PATH] [--commit REV] [--keep]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

COMMAND = ["-m", "evaluation", "evaluate", "--corpus", "samples/corpus.jsonl", "--golden",
           "samples/golden.jsonl"]
GOAL_SECONDS = 180.0
SILENCE_SECONDS = 2.0
# A setup key reads <target>.<method>.<models>; the label after it is its stage.
_SETUP_LABEL = re.compile(r"^(?:\[\d+/\d+\] )?(?P<key>[\w-]+\.(?P<method>[a-z_]+)(?:\.[\w.+-]+)?): (?P<stage>.*)$")


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
    """(group, stage) a progress label is charged to: the index build's stages, or a setup's method and
    what it was doing (timed searches, warm-up, batch)."""
    label = label.strip()
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
        piece = b""
        while True:
            byte = self._stream.read(1)
            if not byte:
                break
            if byte in (b"\r", b"\n"):
                text = piece.decode("utf-8", "replace")
                if text.strip():
                    self.frames.append((time.perf_counter() - self._started, text))
                    if byte == b"\n":
                        self.lines.append(text)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent),
                        help="the repository to clone (default: this one)")
    parser.add_argument("--commit", help="check this revision out in the clone (default: HEAD)")
    parser.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    args = parser.parse_args()

    from _machine import describe_machine

    print(describe_machine())
    where = Path(tempfile.mkdtemp(prefix="first-run-"))
    clone = where / "clone"
    try:
        t0 = time.perf_counter()
        subprocess.run(["git", "clone", "--quiet", args.repo, str(clone)], check=True)
        if args.commit:
            subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", args.commit], check=True)
        head = subprocess.run(["git", "-C", str(clone), "log", "-1", "--format=%h %s"], check=True,
                              capture_output=True, text=True).stdout.strip()
        print(f"clone: {clone} at {head[:100]} ({time.perf_counter() - t0:.1f} s)")
        missing = missing_requirements(clone / "requirements.txt")
        if missing:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-r", "requirements.txt"],
                           cwd=clone, check=True)
            print(f"install: {len(missing)} requirement(s) missing, pip install took {time.perf_counter() - t0:.1f} s "
                  "(not part of the command's time)")
        else:
            print("install: skipped, every line of requirements.txt is installed")
        load_before = load()
        print(f"command: python3 {' '.join(COMMAND)}   (load before: {load_before})")
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "160"}
        env.pop("PYTHONPATH", None)
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, *COMMAND], cwd=clone, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        frames = Frames(process.stdout, started)
        code = process.wait()
        total = time.perf_counter() - started
        frames.join()
        load_after = load()
    except BaseException:
        if not args.keep:
            shutil.rmtree(where, ignore_errors=True)
        raise
    spent, silences = where_time_went(frames.frames, total)
    print(f"\nexit code {code}; the command took {total:.1f} s (goal {GOAL_SECONDS:.0f} s on a quiet machine: "
          f"{total / GOAL_SECONDS:.2f} x the goal); load before {load_before}, after {load_after}\n")
    groups: dict[str, float] = defaultdict(float)
    for (group, _), seconds in spent.items():
        groups[group] += seconds
    print(f"{'where the time went':<58} {'seconds':>8} {'share':>6}")
    for group in sorted(groups, key=lambda g: -groups[g]):
        print(f"{group:<58} {groups[group]:8.1f} {groups[group] / total:6.1%}")
        for (g, stage), seconds in sorted(spent.items(), key=lambda item: -item[1]):
            if g == group and seconds >= 0.5:
                print(f"  {stage:<56} {seconds:8.1f} {seconds / total:6.1%}")
    print(f"\nsilences over {SILENCE_SECONDS:g} s with nothing new on screen: {len(silences)}")
    for at, gap, frame in silences:
        print(f"  at {at:6.1f} s for {gap:5.1f} s after: {frame}")
    print("\nthe command's last lines:")
    for line in frames.lines[-14:]:
        print(f"  {line}")
    if args.keep:
        print(f"\nkept: {clone}")
    else:
        shutil.rmtree(where, ignore_errors=True)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

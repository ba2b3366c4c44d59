"""A progress bar on stderr for a person at a terminal: the command line's, and the library's when a
caller asks for it (``evaluate(..., progress=True)``, ``build_index(..., progress=True)``).

What it promises (issues 23 and 42): every bar is labelled from its first frame (the label is given
when the bar is made, not after); a new stage gets a new bar; the count is in words (searches,
characters); ``say`` prints a line above the bar (what will happen, where the page is). The time left
is the whole run's when the caller knows its work (``estimate``, with ``RunWork``: every stage's work
from the plan, so three minutes of cross-encoder work after the fast setups is three minutes, not the
fast stage's "2 s left"), else the stage's own rate. When the stream is not a terminal (a CI log, a
file) it writes plain lines, one when a stage starts or ends and at most one every ``PLAIN_SECONDS``
in between, never the frames a terminal redraws in place. tqdm is imported only when a bar is first
drawn, so ``import evaluation`` stays light.
"""
from __future__ import annotations

import io
import sys
import threading
import time
from typing import Any, Callable, Mapping, TextIO

from .errors import printable, printable_lines

HEARTBEAT_SECONDS = 1.0  # a bar is redrawn at least this often, so its clock moves during a long batch
PLAIN_SECONDS = 15.0  # without a terminal: a line at most this often within a stage (a log stays short)
# What a stage counts, in words, by what its label says it is doing (the first match wins).
UNITS = (("embedding chunks", "chunks"), ("embedding", "characters"), ("preparing the index", "steps"))
DEFAULT_UNIT = "steps"
LABEL_LIMIT = 120  # characters of a bar's label


def duration(seconds: float) -> str:
    """``2:34``, ``1:02:03``: a time left as a person reads a clock."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class RunWork:
    """The time a run has left, from the work left in every part and phase.

    Each part (a setup) has ``steps``, the first ``timed_steps`` of them searched one by one (the timed
    pass: no batching, no cache) and the rest in a batch; one step weighs what it is expected to cost
    (``weights``, seconds from the plan: a question through a cross-encoder weighs hundreds of BM25
    queries); parts of one ``kinds`` (the same ranker) run alike. The time between two reports is the
    reporting part's (but a part's first step, which loads its models), so each (phase, kind) learns its
    own pace, seconds per unit of weight: left = the weight left in each phase and kind x that pace, else
    the kind's pace in the other phase, else the phase's over every kind, else the run's.
    So three minutes of cross-encoder work after the fast setups is three minutes, and batches answered
    from the cache (a second run) are seen to be fast as soon as they start.
    """

    def __init__(self, weights: Mapping[str, float], steps: Mapping[str, int], *,
                 timed_steps: Mapping[str, int] | None = None, kinds: Mapping[str, str] | None = None,
                 batch_weights: Mapping[str, float] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.weights, self.steps, self.clock = dict(weights), dict(steps), clock
        self.batch_weights = {p: (batch_weights or {}).get(p, w) for p, w in self.weights.items()}  # a batch step's
        self.timed = {p: min(self.steps[p], (timed_steps or {}).get(p, 0)) for p in self.weights}
        self.kinds = {p: (kinds or {}).get(p, p) for p in self.weights}
        self.done = dict.fromkeys(self.weights, 0)
        self.done_timed = dict.fromkeys(self.weights, 0)
        self.spent: dict[tuple[str, str], list[float]] = {}  # (phase, kind) -> [seconds, weight]
        self.last: float | None = None

    def advance(self, part: str, done: int, *, timed: bool = False) -> None:
        """``part`` has done ``done`` of its steps (a count, not an increment), the latest ones in its timed
        pass when ``timed``; the time since the last report is this part's."""
        now = self.clock()
        done = min(done, self.steps[part])
        new = done - self.done[part]
        if new > 0 and self.last is not None and self.done[part] > 0:  # a part's first step loads its models: no pace
            phase = "timed" if timed else "batch"
            seconds_weight = self.spent.setdefault((phase, self.kinds[part]), [0.0, 0.0])
            seconds_weight[0] += now - self.last
            seconds_weight[1] += new * (self.weights if timed else self.batch_weights)[part]
        if timed:
            self.done_timed[part] = min(self.timed[part], self.done_timed[part] + max(new, 0))
        self.done[part] = max(self.done[part], done)
        self.last = now

    def _pace(self, phase: str, kind: str) -> float | None:
        other = "batch" if phase == "timed" else "timed"
        for keys in ([(phase, kind)], [(other, kind)], [k for k in self.spent if k[0] == phase], list(self.spent)):
            seconds = sum(self.spent[k][0] for k in keys if k in self.spent)
            weight = sum(self.spent[k][1] for k in keys if k in self.spent)
            if weight > 0 and seconds > 0:
                return seconds / weight
        return None

    def left(self) -> float | None:
        """Seconds left, or None until some weighted work has taken time."""
        total = 0.0
        for part in self.weights:
            timed_left = max(0, self.timed[part] - self.done_timed[part])
            batch_left = max(0, self.steps[part] - self.done[part] - timed_left)
            for phase, count, weight in (("timed", timed_left, self.weights[part]),
                                         ("batch", batch_left, self.batch_weights[part])):
                if count:
                    pace = self._pace(phase, self.kinds[part])
                    if pace is None:
                        return None
                    total += count * weight * pace
        return total


class ProgressBar:
    """Drive with ``(done, total, label)``; ``label`` is ``"<setup key>: <stage>"`` or an index stage.

    A bar is replaced when its total changes or its label's stage changes (the part before ``": "`` is
    the setup, the part after what it is doing), so each ETA is the rate of the stage on screen.
    """

    def __init__(self, quiet: bool = False, stream: TextIO | None = None,
                 heartbeat: float | None = HEARTBEAT_SECONDS, *, plain: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        # tqdm redraws in place with CR and cursor moves, which the command line's printable stream would
        # escape: frames go to the stream under it, with the label and lines made printable here.
        self._terminal = getattr(self.stream, "unescaped", self.stream)
        self.quiet = quiet or self.stream is None
        # plain lines unless the stream is a terminal (``plain`` forces either way, for tests)
        self.plain = (not _is_terminal(self.stream)) if plain is None else plain
        self._bar: Any = None  # the tqdm bar being drawn (tqdm ships no types)
        self._label: str | None = None
        self._lock = threading.Lock()
        self._heartbeat = heartbeat
        self._beating: threading.Event | None = None
        self._left: Callable[[], float | None] | None = None
        self._unit: str | None = None
        self._clock = clock
        self._last_line = -float("inf")
        self._line_stage: str | None = None

    def estimate(self, left: Callable[[], float | None], unit: str) -> None:
        """From now on the time left is ``left()`` (the run's, ``RunWork.left``) and the count is in ``unit``."""
        self._left, self._unit = left, unit

    def unit(self, label: str) -> str:
        """What the count of ``label``'s stage is, in words."""
        if self._unit:
            return self._unit
        return next((unit for words, unit in UNITS if words in label), DEFAULT_UNIT)

    def _time_left(self) -> str:
        left = self._left() if self._left else None
        return "estimating the time left" if left is None else f"about {duration(left)} left"

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.quiet:
            return
        # "[8/10] local.hybrid_reranked.bge-small+minilm-l6: <stage>" fits whole; a label names setups and
        # files, so it is made printable (the bar is drawn to the terminal itself)
        label = printable(label, LABEL_LIMIT)
        if self.plain:
            self._line(done, total, label)
            return
        from tqdm import tqdm

        with self._lock:
            columns = _columns(self.stream)
            tail = (f" {self.unit(label)} [12:34, {self._time_left()}]" if self._left  # frame_format's
                    else f" [12:34<12:34, 9999.99 {self.unit(label)}/s]")  # tqdm's own: its elapsed, left and rate
            shown = label if columns is None else fitted(label, total, columns, tail)
            if self._bar is None or self._bar.total != total or _stage(label) != _stage(self._label):
                self._close()
                unit = " " + self.unit(label)
                fmt = frame_format(unit) if self._left else None
                self._bar = tqdm(total=total, initial=done, desc=shown, file=self._terminal, unit=unit, leave=False,
                                 dynamic_ncols=True, bar_format=fmt,
                                 postfix=self._time_left() if self._left else None)
                self._start_heartbeat()
            elif label != self._label:
                self._bar.set_description_str(shown, refresh=False)
            self._label = label
            if self._left:
                self._bar.set_postfix_str(self._time_left(), refresh=False)
            self._bar.update(done - self._bar.n)

    def _line(self, done: int, total: int, label: str) -> None:
        """A plain line: when a stage starts or ends, else at most one every ``PLAIN_SECONDS``."""
        now, stage = self._clock(), _stage(label)
        with self._lock:
            if stage == self._line_stage and done < total and now - self._last_line < PLAIN_SECONDS:
                return
            self._line_stage, self._last_line = stage, now
            left = f", {self._time_left()}" if self._left else ""
            print(f"{label}: {done}/{total} {self.unit(label)}{left}", file=self.stream, flush=True)

    def _start_heartbeat(self) -> None:
        """Redraw the bar every ``heartbeat`` seconds while it is open: one batch of the cross-encoder or
        of the embedding can take 5-10 s on busy cores, and a frozen bar reads as a hung run (issue 23:
        80 silences over 2 s in one first run). Elapsed time and ETA move; the count does not lie."""
        if not self._heartbeat or self._beating is not None:
            return
        stop = self._beating = threading.Event()

        def beat() -> None:
            while not stop.wait(self._heartbeat):
                with self._lock:
                    if self._bar is not None:
                        if self._left:
                            self._bar.set_postfix_str(self._time_left(), refresh=False)
                        self._bar.refresh()

        threading.Thread(target=beat, name="progress-heartbeat", daemon=True).start()

    def stage(self) -> Callable[[str, int, int], None]:
        """Adapter for index building, whose callbacks are (stage, done, total)."""
        return lambda stage, done, total: self(done, total, stage)

    def say(self, line: str) -> None:
        """A line above the bar (or alone when there is none), never mixed into a frame; on a terminal, cut
        into lines of its width at spaces, so no row wraps mid-word."""
        if self.quiet:
            return
        line = printable_lines(line)  # lines name files and setups, and go to the terminal itself
        columns = None if self.plain else _columns(self.stream)
        if columns is not None and len(line) > columns:
            import textwrap

            line = "\n".join(textwrap.wrap(line, width=columns, subsequent_indent="  ", break_long_words=False,
                                            break_on_hyphens=False))
        with self._lock:
            if self._bar is not None:
                self._bar.write(line, file=self._terminal)
            else:
                print(line, file=self.stream, flush=True)

    def close(self) -> None:
        with self._lock:
            self._close()
            if self._beating is not None:
                self._beating.set()
                self._beating = None

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            self._label = None


MIN_BAR = 5  # the bar's own characters a frame keeps however long its label


def frame_format(unit: str) -> str:
    """A frame with the run's time left in the postfix, not this stage's rate (tqdm writes a postfix after
    ", ", so none is written here)."""
    return "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}" + unit + " [{elapsed}{postfix}]"


def fitted(label: str, total: int, columns: int, tail: str) -> str:
    """``label`` cut in the middle ("[9/11] local.hybrid_re…in a batch") so that a frame of a ``columns``-wide
    terminal keeps its counts and its ``tail`` (what follows the counts: the unit and the time left, or the
    rate): tqdm cuts a frame too wide at its end, where they are. The rest of a frame: ": 100%|", a bar of at
    least ``MIN_BAR``, "| " and "<done>/<total>"."""
    rest = len(": 100%|") + MIN_BAR + len("| ") + 2 * len(str(total)) + 1 + len(tail)
    room = max(columns - rest - 1, 12)
    if len(label) <= room:
        return label
    tail_room = (room - 1) // 2
    return label[:room - 1 - tail_room] + "…" + label[len(label) - tail_room:]


def _columns(stream: TextIO | None) -> int | None:
    """The width of the terminal ``stream`` writes to; None when it has none to read (a file, a test's)."""
    import os

    try:
        return os.get_terminal_size(stream.fileno()).columns if stream is not None else None
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return None


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # a closed or odd stream: no terminal to redraw in place
        return False


def _stage(label: str | None) -> str | None:
    """What a label says is running, without its counts: ``"k: timing searches one by one (3 of 50)"``
    -> ``"k: timing searches one by one"``, so a count moving on does not restart the bar's rate."""
    if label is None:
        return None
    return label.split(" (", 1)[0]

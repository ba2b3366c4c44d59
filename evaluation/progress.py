"""A progress bar on stderr for a person at a terminal: the command line's, and the library's when a
caller asks for it (``evaluate(..., progress=True)``, ``build_index(..., progress=True)``).

What it promises (issue 23): every bar is labelled from its first frame (the label is given when the
bar is made, not after); a new stage gets a new bar, so an ETA comes from that stage's own rate, not
from the embedding's or the previous setup's; ``say`` prints a line above the bar (what will happen,
where the page is). tqdm is imported only when a bar is first drawn, so ``import evaluation`` stays light.
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, TextIO

HEARTBEAT_SECONDS = 1.0  # a bar is redrawn at least this often, so its clock moves during a long batch


class ProgressBar:
    """Drive with ``(done, total, label)``; ``label`` is ``"<setup key>: <stage>"`` or an index stage.

    A bar is replaced when its total changes or its label's stage changes (the part before ``": "`` is
    the setup, the part after what it is doing), so each ETA is the rate of the stage on screen.
    """

    def __init__(self, quiet: bool = False, stream: TextIO | None = None,
                 heartbeat: float | None = HEARTBEAT_SECONDS) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet or self.stream is None
        self._bar = None
        self._label: str | None = None
        self._lock = threading.Lock()
        self._heartbeat = heartbeat
        self._beating: threading.Event | None = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        label = label[:120]  # "[8/10] local.hybrid_reranked.bge-small+minilm-l6: <stage>" fits whole
        with self._lock:
            if self._bar is None or self._bar.total != total or _stage(label) != _stage(self._label):
                self._close()
                self._bar = tqdm(total=total, initial=done, desc=label, file=self.stream, unit="step", leave=False,
                                 dynamic_ncols=True)
                self._start_heartbeat()
            elif label != self._label:
                self._bar.set_description_str(label, refresh=False)
            self._label = label
            self._bar.update(done - self._bar.n)

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
                        self._bar.refresh()

        threading.Thread(target=beat, name="progress-heartbeat", daemon=True).start()

    def stage(self) -> Callable[[str, int, int], None]:
        """Adapter for index building, whose callbacks are (stage, done, total)."""
        return lambda stage, done, total: self(done, total, stage)

    def say(self, line: str) -> None:
        """A line above the bar (or alone when there is none), never mixed into a frame."""
        if self.quiet:
            return
        with self._lock:
            if self._bar is not None:
                self._bar.write(line, file=self.stream)
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


def _stage(label: str | None) -> str | None:
    """What a label says is running, without its counts: ``"k: timing searches one by one (3 of 50)"``
    -> ``"k: timing searches one by one"``, so a count moving on does not restart the bar's rate."""
    if label is None:
        return None
    return label.split(" (", 1)[0]

"""A progress bar on stderr for a person at a terminal: the command line's, and the library's when a
caller asks for it (``evaluate(..., progress=True)``, ``build_index(..., progress=True)``).

What it promises (issue 23): every bar is labelled from its first frame (the label is given when the
bar is made, not after); a new stage gets a new bar, so an ETA comes from that stage's own rate, not
from the embedding's or the previous setup's; ``say`` prints a line above the bar (what will happen,
where the page is). tqdm is imported only when a bar is first drawn, so ``import evaluation`` stays light.
"""
from __future__ import annotations

import sys
from typing import Callable, TextIO


class ProgressBar:
    """Drive with ``(done, total, label)``; ``label`` is ``"<setup key>: <stage>"`` or an index stage.

    A bar is replaced when its total changes or its label's stage changes (the part before ``": "`` is
    the setup, the part after what it is doing), so each ETA is the rate of the stage on screen.
    """

    def __init__(self, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet or self.stream is None
        self._bar = None
        self._label: str | None = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.quiet:
            return
        from tqdm import tqdm

        label = label[:96]
        if self._bar is None or self._bar.total != total or _stage(label) != _stage(self._label):
            self.close()
            self._bar = tqdm(total=total, initial=done, desc=label, file=self.stream, unit="step", leave=False,
                             dynamic_ncols=True)
        elif label != self._label:
            self._bar.set_description_str(label, refresh=False)
        self._label = label
        self._bar.update(done - self._bar.n)

    def stage(self) -> Callable[[str, int, int], None]:
        """Adapter for index building, whose callbacks are (stage, done, total)."""
        return lambda stage, done, total: self(done, total, stage)

    def say(self, line: str) -> None:
        """A line above the bar (or alone when there is none), never mixed into a frame."""
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
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

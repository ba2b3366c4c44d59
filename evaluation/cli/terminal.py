"""What the command line writes reaches the terminal printable: no text from an input, a store or a service
sets the title, clears the screen, overwrites a line with "all good" or reorders what is read.

Two layers, each where it can do what the other cannot:

- Where a text from outside enters a sentence, it is made ``errors.printable`` (or ``shown``): there it
  is known which characters are the text's, so its own line feeds are escaped too (a question cannot
  forge a line of the table it sits in) and its length is bounded (a service's 10 MB error message comes
  back as its first thousand characters and its length). The entries are few kinds: a view of a kept
  report (``errors.printable_texts`` at ``report.text``, ``report.compare``, ``report.builds.text``, the
  run lists), a service's message (``chat``, ``errors.first_line``, ``azure_search.service``), a question's
  text (``render_questions``), a value a file gives (``errors.shown``: a TREC rank, a grade), a file's or a
  store's name in the tool's own lines (``errors.named``), a log record (``PrintableFormatter`` below).
  Sentences of errors that name a path a person typed still print it as typed: its ESC is escaped
  below, a line feed in it starts a line.
- ``printable_output`` writes everything the command prints through ``errors.printable_lines``: every
  character a terminal acts on but the line feed is escaped. It is the net under the entries: a print
  added tomorrow, a library's log line, argparse echoing an argument, a page written to stdout, JSON (whose
  bidi controls and C1 characters ``json.dumps`` leaves as they are: the escape it writes is the same JSON
  value) are printable without anyone remembering. It cannot bound an echo or tell a text's line feed from
  the tool's, which is why the entries exist.

The progress bar is the one writer that needs the terminal itself (tqdm redraws with CR and cursor
moves): it writes to the stream under the net (``unescaped``) and makes its label and lines printable
itself (``progress.ProgressBar``).
"""
from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any, Iterable, Iterator, TextIO

from ..errors import TEXT_LIMIT, printable, printable_lines


class PrintableStream:
    """A text stream that writes ``printable_lines`` of what it is given to ``unescaped``; anything else
    (``isatty``, ``fileno``, ``encoding``, ``buffer``) is ``unescaped``'s."""

    def __init__(self, unescaped: TextIO) -> None:
        self.unescaped = unescaped

    def write(self, text: str) -> int:
        self.unescaped.write(printable_lines(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.unescaped.flush()

    def isatty(self) -> bool:
        return self.unescaped.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unescaped, name)


@contextlib.contextmanager
def printable_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as ``PrintableStream``s while the block runs (once: a command run
    inside another is not escaped twice), the streams they were after it."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (s if isinstance(s, PrintableStream) or s is None else PrintableStream(s)
                              for s in saved)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def printable_log(level: int) -> Iterator[None]:
    """The log records of the command running in the block on its stderr, at ``level``, each said by
    ``PrintableFormatter``; the root logger as it was after. A handler per command, not
    ``logging.basicConfig``'s one per process: that one is not installed when the root logger has a handler
    already (a host's, a test runner's), and keeps the first command's level and stream for every later one."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)  # inside ``printable_output``: the printable stream
    # The level sits on the handler too: bm25s sets its own logger to DEBUG when it is imported.
    handler.setLevel(level)
    handler.setFormatter(PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    before = root.level
    root.addHandler(handler)
    root.setLevel(min(level, root.getEffectiveLevel()))  # lower, never higher: a caller's INFO stays
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(before)


class PrintableFormatter(logging.Formatter):
    """A log record's message as an echo of what it quotes: ``printable`` and at most ``TEXT_LIMIT``
    characters (a setup that failed on a service's 10 MB message logs its first thousand characters)."""

    def format(self, record: logging.LogRecord) -> str:
        said = logging.makeLogRecord(record.__dict__)  # a copy: the record stays as it was for anyone else
        said.msg, said.args = printable(record.getMessage(), TEXT_LIMIT), None
        return super().format(said)

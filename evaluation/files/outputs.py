"""Which files a command may write: every command that writes a file says so before any work, through
``check_outputs``. An output is never one of the command's inputs, never another of its outputs, never a
folder, a pipe or a device, and a file already there is replaced only when it is the command's own kind of
output, told by its first bytes (an ``OutputKind``: a page this tool wrote, a matrix report, a reply cache).
Then ``disk.write_whole`` writes it whole.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Literal, Sequence

from ..errors import EvaluationError, UsageError
from .disk import same_file, special_kind, try_writing_in

HEAD_BYTES = 64 * 1024  # what is read of a file already at an output's path to tell whose it is

Replace = Literal["own", "force", "never"]


@dataclass(frozen=True)
class OutputKind:
    """A kind of file the tool writes. ``own(head)`` tells, from the first ``HEAD_BYTES`` of a file
    already at the path, whether it is one of these; ``replace`` says when such a file may be replaced:
    ``"own"`` whenever (a report written again), ``"force"`` only on purpose (``--force``), ``"never"``.
    ``holds`` is what such a file may hold, said when it is kept ("may hold checked questions");
    ``example`` a file name for the sentence about a folder; ``changes`` what writing does to a file
    ("written over", or "appended to" for a cache)."""

    name: str  # "golden file", "HTML page": the sentences put "a" or "an" in front (``article``)
    own: Callable[[bytes], bool]
    replace: Replace = "own"
    holds: str = ""
    example: str = "out"
    article: str = "a"
    changes: str = "written over"

    @property
    def a_name(self) -> str:
        return f"{self.article} {self.name}"


@dataclass(frozen=True)
class Output:
    """One file a command is about to write: its path and kind, the flag the command names it by
    (``--report-json``; empty from the library), and what the sentences call what goes there."""

    path: str | Path
    kind: OutputKind
    flag: str = ""
    what: str = "the file"

    @property
    def named(self) -> str:
        return f"{self.flag} {self.path}" if self.flag else str(self.path)


Input = tuple[str, "str | Path | None"]  # how a sentence names an input ("the --corpus file"), and its path


def check_outputs(outputs: Sequence[Output], inputs: Iterable[Input] = (), *, force: bool = False,
                  error: type[EvaluationError] = UsageError, make_folders: bool = False) -> None:
    """Refuse, before any work, an output the command must not write: the first problem, raised as
    ``error`` with the sentence saying the fix; nothing is written or made.

    ``inputs``: (how a sentence names it, path) for each input, ``("the --corpus file", "c.jsonl")``; a
    None path is skipped. An output is refused when it is a folder, a named pipe or a device; one of ``inputs``;
    another of ``outputs``; a file holding anything that is not ``kind.own`` (it may be an input of some
    other command: it is never written over), or one that is but whose kind keeps it (``"never"``, or
    ``"force"`` without ``force``). An empty file holds nothing to lose and is never refused for what it
    holds. The folder must exist (``make_folders``: the nearest folder that does must) and take a new file,
    which is tried with a file made and removed again.
    """
    given = [(label, path) for label, path in inputs if path is not None]
    for number, output in enumerate(outputs):
        path = Path(output.path)
        for label, source in given:
            if same_file(path, source):
                raise error(f"{output.named} is {label}; write {output.what} to another file")
        for earlier in outputs[:number]:
            if same_file(path, earlier.path):
                raise error(f"{output.named} is also where {earlier.what} goes ({earlier.named}); give each its "
                            "own file")
        _check_existing(output, path, force, error)
        _check_folder(output, path, error, make_folders)


def _check_existing(output: Output, path: Path, force: bool, error: type[EvaluationError]) -> None:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as err:  # a parent that is a file: said by _check_folder
        if err.errno == errno.ENOTDIR:
            return
        raise error(f"{output.named}: cannot look at it ({err.strerror or err}); give a file you may write") from None
    kind = output.kind
    if stat.S_ISDIR(mode):
        raise error(f"{output.named} is a folder; give the path of the {kind.name} to write, for example "
                    f"{path / kind.example}")
    if not stat.S_ISREG(mode):
        raise error(f"{output.named} is {special_kind(mode)}, not a file; give the path of the {kind.name} to write")
    head = _head(path)
    if not head:
        return
    if not kind.own(head):
        raise error(f"{output.named} already exists and is not {kind.a_name} this tool wrote; it may be an input "
                    f"(a golden file, a corpus), so it is never {kind.changes}: write {output.what} to another file")
    if kind.replace == "never":
        raise error(f"{output.named} already exists and {kind.holds}; it is never written over: choose another file")
    if kind.replace == "force" and not force:
        raise error(f"{output.named} already exists and {kind.holds}; choose another file, or replace it on "
                    "purpose (--force on the command line)")


def _head(path: Path) -> bytes:
    try:  # opened without waiting: whatever is there, looking at it never blocks
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(handle, "rb") as opened:
            return opened.read(HEAD_BYTES) or b""  # None: a pipe with nothing in it yet
    except OSError:
        return b"\0"  # unreadable: not told as ours, so it is kept


def _check_folder(output: Output, path: Path, error: type[EvaluationError], make_folders: bool) -> None:
    folder = path.absolute().parent
    if not folder.exists() and not make_folders:
        raise error(f"{output.named}: the folder {path.parent} does not exist; make it first, or write "
                    f"{output.what} elsewhere")
    nearest = folder
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        raise error(f"{output.named}: cannot write {output.what} there ({nearest} is a file, not a folder); give "
                    "a file in a folder you may write to")
    try:
        try_writing_in(nearest)
    except OSError as err:
        raise error(f"{output.named}: cannot write {output.what} there ({err.strerror or err} in {nearest}); give "
                    "a file in a folder you may write to") from None

"""The golden writer's reply cache: every model reply kept as it comes, keyed by its prompt's sha256.

One JSON line a reply, ``{"sha256": ..., "reply": ...}``, appended and flushed before the reply is
used, so a run stopped halfway (Ctrl-C, a model that went quiet) keeps every reply it got, and the
next run with the same seed asks only for what is missing; a whole run again asks for nothing. The
key is the sha256 of the model's name and the messages (``prompt_key``), so another model, or a prompt
that changed, is asked again.

Only a reply cache is ever appended to (``REPLY_CACHE``: a file whose first line is such a row, or an
empty one): a golden file or a corpus given as the cache is refused before any model call. A line that
is not a reply row (the last line cut short by a stop, or one damaged by hand) is skipped, and
``skipped`` names it, so the run can say so; the next reply starts on a line of its own.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Mapping, Sequence

from ...errors import JsonLineError, UsageError
from ...files import Output, OutputKind, check_outputs, read_input
from ...jsonl import parse_json, read_lines

log = logging.getLogger(__name__)

_ROW_START = re.compile(rb'\s*\{"sha256": "[0-9a-f]{64}", "reply": ')  # how ``put`` starts every line


def is_reply_cache(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a reply cache: its first non-blank line starts as ``put``
    writes a row."""
    first = next((line for line in head.split(b"\n") if line.strip()), b"")
    return _ROW_START.match(first) is not None


REPLY_CACHE = OutputKind("reply cache", own=is_reply_cache, example="replies.jsonl", changes="appended to")


def prompt_key(model: str, messages: Sequence[Mapping[str, str]]) -> str:
    """The sha256 of the prompt as sent: the model's name and the messages, as canonical JSON."""
    text = json.dumps({"model": model, "messages": [dict(m) for m in messages]}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReplyCache:
    """Replies by prompt key, in memory and, given ``path``, in that file (created when missing).

    ``path`` is refused (``UsageError``, before anything is read or written) when it is a folder, a pipe,
    or a file holding anything that is not a reply cache. ``skipped``: the numbers of the lines that
    were not reply rows, in order.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._replies: dict[str, str] = {}
        self.skipped: tuple[int, ...] = ()
        self._cut = False  # the file ends inside a line: the next row starts on a new one
        if self.path is None:
            return
        check_outputs([Output(self.path, REPLY_CACHE, what="the model's replies")], make_folders=True)
        try:
            raw = read_input(self.path)
        except FileNotFoundError:
            return
        except OSError as err:
            raise UsageError(f"{self.path}: cannot read the reply cache ({err.strerror or err}); give a file you "
                             "may read and write") from None
        skipped = []
        for line in read_lines(raw):
            row = _row(line.text)
            if row is None:
                skipped.append(line.number)
            else:
                self._replies[row[0]] = row[1]
        self.skipped = tuple(skipped)
        self._cut = bool(raw) and not raw.endswith(b"\n")
        if skipped:
            log.warning("%s", self.skipped_sentence())

    def skipped_sentence(self) -> str:
        """What was skipped, for a person: how many lines, and which."""
        count = len(self.skipped)
        shown = ", ".join(map(str, self.skipped[:10])) + (", ..." if count > 10 else "")
        return (f"the reply cache {self.path} has {count} line{'s' if count != 1 else ''} that "
                f"{'are' if count != 1 else 'is'} not a reply (line{'s' if count != 1 else ''} {shown}: cut short "
                "by a stop, or changed by hand); skipped: a reply they held is asked for again")

    def __len__(self) -> int:
        return len(self._replies)

    def get(self, key: str) -> str | None:
        return self._replies.get(key)

    def put(self, key: str, reply: str) -> None:
        self._replies[key] = reply
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8", newline="\n") as out:
                out.write(("\n" if self._cut else "") + json.dumps({"sha256": key, "reply": reply},
                                                                    ensure_ascii=False) + "\n")
            self._cut = False


def _row(text: str | None) -> tuple[str, str] | None:
    """(key, reply) of one cache line, or None when it is not a reply row."""
    if text is None:
        return None
    try:
        row = parse_json(text, strict=False)
    except JsonLineError:
        return None
    if isinstance(row, dict) and isinstance(row.get("sha256"), str) and isinstance(row.get("reply"), str):
        return row["sha256"], row["reply"]
    return None

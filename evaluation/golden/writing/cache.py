"""The golden writer's reply cache: every model reply kept as it comes, keyed by its prompt's sha256.

One JSON line a reply, ``{"sha256": ..., "reply": ...}``, appended and flushed before the reply is
used, so a run stopped halfway (Ctrl-C, a model that went quiet) keeps every reply it got, and the
next run with the same seed asks only for what is missing; a whole run again asks for nothing. The
key is the sha256 of the model's name and the messages (``prompt_key``), so another model, or a prompt
that changed, is asked again. A last line cut short by a stop is skipped on reading.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Mapping, Sequence

from ...errors import UsageError


def prompt_key(model: str, messages: Sequence[Mapping[str, str]]) -> str:
    """The sha256 of the prompt as sent: the model's name and the messages, as canonical JSON."""
    text = json.dumps({"model": model, "messages": [dict(m) for m in messages]}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ReplyCache:
    """Replies by prompt key, in memory and, given ``path``, in that file (created when missing)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._replies: dict[str, str] = {}
        if self.path is not None and self.path.exists():
            if self.path.is_dir():
                raise UsageError(f"{self.path} is a folder; give the cache a file, such as {self.path / 'replies.jsonl'}")
            for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short when a run was stopped
                if isinstance(row, dict) and isinstance(row.get("sha256"), str) and isinstance(row.get("reply"), str):
                    self._replies[row["sha256"]] = row["reply"]

    def __len__(self) -> int:
        return len(self._replies)

    def get(self, key: str) -> str | None:
        return self._replies.get(key)

    def put(self, key: str, reply: str) -> None:
        self._replies[key] = reply
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8", newline="\n") as out:
                out.write(json.dumps({"sha256": key, "reply": reply}, ensure_ascii=False) + "\n")

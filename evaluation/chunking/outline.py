"""Where a Markdown document's sections are: ATX headings (``#`` to ``######``) outside fenced code.

Setext headings (a line underlined with ``===``) are not read: none of the shipped sample's 270
documents has one, while ``---`` under a paragraph line is as often a rule as a heading. The engine's
own cutter (``engine/chunking.py``) reads both for ``index``; this one only has to say which headings a
chunk sits under and where sections start.

A heading with nothing under it before the next heading ("## Install" straight above "### pip") is
no section of its own: its line starts the next section, whose path still names it when it is the
parent. Alone, it would be a chunk of two words that finds nothing.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t\r]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    """``text[start:end]`` runs from its heading line (or the document's start) to the next heading."""

    start: int
    end: int
    headings: tuple[str, ...]   # the heading path in force, outermost first; () before the first heading


@dataclass(frozen=True)
class Outline:
    sections: tuple[Section, ...]

    @classmethod
    def of(cls, text: str) -> Outline:
        heads: list[tuple[int, int, str]] = []   # (line start, level, title)
        fence: str | None = None
        position = 0
        for line in text.splitlines(keepends=True):
            bare = line.rstrip("\r\n")
            opened = _FENCE.match(bare)
            if fence is not None:
                if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                        and not bare.strip().lstrip(fence[0]):
                    fence = None
            elif opened:
                fence = opened.group(1)
            else:
                atx = _ATX.fullmatch(bare)
                if atx and (atx.group(2) or "").strip():
                    heads.append((position, len(atx.group(1)), atx.group(2).strip()))
            position += len(line)
        sections: list[Section] = []
        if not heads or heads[0][0] > 0:
            sections.append(Section(0, heads[0][0] if heads else len(text), ()))
        path: list[tuple[int, str]] = []
        for i, (start, level, title) in enumerate(heads):
            path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, title)]
            end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
            sections.append(Section(start, end, tuple(t for _, t in path)))
        kept: list[Section] = []
        pending: int | None = None   # the start of a heading line with nothing under it
        for section in sections:
            body = text[section.start:section.end]
            if not body.strip():
                continue
            lines = body.strip().split("\n", 1)
            if section.headings and (len(lines) == 1 or not lines[1].strip()):
                pending = section.start if pending is None else pending   # its heading joins the next section
                continue
            kept.append(Section(section.start if pending is None else pending, section.end, section.headings))
            pending = None
        if pending is not None:   # headings with nothing under them end the document: keep them as text
            if kept and kept[-1].end == pending:
                kept[-1] = Section(kept[-1].start, len(text), kept[-1].headings)
            else:
                kept.append(Section(pending, len(text), ()))
        return cls(tuple(kept) or (Section(0, len(text), ()),))

    def headings_at(self, position: int) -> tuple[str, ...]:
        """The heading path in force at a character position."""
        starts = [s.start for s in self.sections]
        i = bisect.bisect_right(starts, position) - 1
        return self.sections[i].headings if i >= 0 else ()

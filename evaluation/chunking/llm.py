"""``llm``: a chat model says where each topic of a document starts.

The document's non-blank lines are numbered and sent (in windows of at most ``WINDOW_CHARS``
characters, numbering running on, each window's first line starting a topic); the model replies
``{"starts": [1, 7, 19]}``. Each topic runs from its line to the next topic's; one longer than the
size is cut further by semantic-text-splitter's ``TextSplitter`` (with the build's overlap), and a
piece of it under a tenth of the size joins a neighbour where both fit. A short topic stays whole on
its own: the model said it is one.

A reply that is not such a list (no JSON, numbers off the page, a refusal, nothing at all) is an
``AnswerError`` naming the document and what came back: the build stops, and no chunk of a
document is made from half an answer.
"""
from __future__ import annotations

import re
from typing import Any

from ..errors import AnswerError, JsonLineError
from ..jsonl import parse_json
from .ask import ask, where
from .cutters import Span, merge_tiny, split_long, trimmed

WINDOW_CHARS = 24_000   # about 6,000 tokens of numbered lines: within any current chat model's window
SYSTEM = ("You divide a document into topics for a search index. A topic is a run of consecutive lines about "
          "one subject; a heading usually starts one. Reply with one JSON object and nothing else: "
          '{"starts": [numbers]}, the numbers of the lines where a topic starts, in increasing order. '
          "The first line always starts one.")


def numbered_lines(text: str) -> list[Span]:
    """The spans of the document's non-blank lines, trimmed, in order (line n is ``[n - 1]``)."""
    spans = []
    position = 0
    for line in text.splitlines(keepends=True):
        span = trimmed(text, position, position + len(line))
        if span is not None:
            spans.append(span)
        position += len(line)
    return spans


def parse_starts(content: str, first: int, last: int, *, what: str, who: str) -> list[int]:
    """The line numbers of a reply, each from ``first`` to ``last``, sorted, ``first`` among them."""
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", content.strip())
    try:
        value = parse_json(body, strict=False)
    except JsonLineError:
        value = None
    starts = value.get("starts") if isinstance(value, dict) else value
    if not isinstance(starts, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in starts):
        raise AnswerError(f'{who} did not say where the topics of {what} start: it must reply '
                          f'{{"starts": [line numbers]}}, and replied {content[:200]!r}')
    off = [n for n in starts if not first <= n <= last]
    if off:
        raise AnswerError(f"{who} named lines {off[:5]} for the topics of {what}, which has "
                          f"lines {first} to {last} only; try a stronger model")
    return sorted({first, *starts})


def topic_spans(text: str, size: int, overlap: int, chat: Any, *, doc_id: str = "") -> list[Span]:
    """The document's chunks as spans, by the model's topics: see the module docstring."""
    lines = numbered_lines(text)
    if not lines:
        return []
    starts: list[int] = []
    window_start = 0
    while window_start < len(lines):
        window_end, used = window_start, 0
        while window_end < len(lines) and (window_end == window_start or used + lines[window_end][1]
                                           - lines[window_end][0] <= WINDOW_CHARS):
            used += lines[window_end][1] - lines[window_end][0] + 8
            window_end += 1
        first, last = window_start + 1, window_end
        what = f'document "{doc_id}"' + (f" (lines {first} to {last})" if first > 1 or last < len(lines) else "")
        numbered = "\n".join(f"{n}: {text[a:b]}" for n, (a, b) in enumerate(lines[window_start:window_end], first))
        reply = ask(chat, SYSTEM, f"Lines {first} to {last} of {what}:\n\n{numbered}", what=f"the topics of {what}",
                    max_tokens=min(4000, 50 + 6 * (last - first + 1)))
        starts += parse_starts(reply, first, last, what=what, who=where(chat))
        window_start = window_end
    ends = starts[1:] + [len(lines) + 1]
    topics = [(lines[a - 1][0], lines[b - 2][1]) for a, b in zip(starts, ends, strict=True)]
    # the model's boundaries all stay; only the pieces of one long topic may join each other
    return [span for topic in topics for span in merge_tiny(split_long(text, [topic], size, overlap), size)]

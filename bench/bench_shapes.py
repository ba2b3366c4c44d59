"""Keyword rules on collections of different shapes: plain chunk BM25 against the document-fused rule,
and hybrid with each, on five collections built from Debian documentation packages.

Collections (each a corpus and a golden file, written under the cache, same bytes for the same packages):

- ``short-no-headings``: Python's library, tutorial, howto and reference sections of 20-150 words
  (``python3.11-doc``), the heading line taken out of the text and no title: short text, nothing but
  the body to match.
- ``long-pages``: CMake's manual, command and module pages (``cmake-doc``) of 300 words or more, one
  document per whole page (every section's text with its heading), up to thousands of words.
- ``api-reference``: scikit-learn's generated API pages (``python-sklearn-doc``), one document per
  section: class and function entries with their parameters.
- ``mixed``: SQLAlchemy's whole documentation (``python-sqlalchemy-doc``): tutorial, narrative and API
  sections of every length, headings kept.
- ``python-faq``: ``python_docs.py``'s collection (human questions: the FAQ's headings, expected the
  sections their answers link to; ``--faq-documents`` sections, the expected ones always in), when
  it can be built.

Questions (all but python-faq) are made from the documentation's own cross-references, not its
headings: a sentence of one section that links to a section of the collection (another section;
for long-pages, another page) is a question, with the link's own words taken out (they are mostly
the target's heading or API name) and the linked section (page) expected. Sentences left with fewer
than 6 words, or over 60, are dropped; one question per expected document; questions and documents
are chosen in sha256 order of their ids. They were written by the documentation's authors to say
why a reader should go there, so they are nearer a person's question than a heading, but they are
not questions a user typed: some read "See  for details on ..." and tell a setup little.

Each collection is indexed by the engine (bge-small, the default chunking) under the cache, and
every question is searched (batch) with: ``keyword`` (chunk BM25, the rule since issue 20),
``keyword_documents`` (chunk and document BM25 fused, the ``keyword`` rule of issue 15),
``dense.bge-small`` (for scale), and ``hybrid.bge-small`` fusing each keyword list. Judged at doc
grain; found@1, found@10, MRR, nDCG@10; the baseline is the issue-15 rule (``keyword_documents``,
and hybrid fusing it).

    python bench/bench_shapes.py [--only NAME ...] [--questions 80]
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from pathlib import Path
from urllib.parse import urldefrag, urljoin
from posixpath import normpath

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import python_docs
import scale_corpus
from _machine import describe_machine

CACHE = python_docs.DEFAULT_OUT / "shapes"
MIN_QUESTION_WORDS, MAX_QUESTION_WORDS = 6, 60
LONG_PAGE_WORDS = 300  # long-pages keeps pages of at least this many words
SHAPES = ("short-no-headings", "long-pages", "api-reference", "mixed", "python-faq")
_START, _MID, _END = "\x00", "\x01", "\x02"  # link markers in a section's text: \x00<n>\x01 text \x02


class _LinkParser(python_docs._PageParser):
    """``python_docs``' sections, with each link's place in its section's text marked, so the sentence
    around a link can be read back without the link's own words."""

    def __init__(self) -> None:
        super().__init__()
        self._links: list[tuple[str, int, str]] = []  # (section anchor, link number, href)
        self._open_links: list[bool] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        before = len(self._open[-1].links) if self._open else None
        super().handle_starttag(tag, attrs)
        if tag != "a":
            return
        marked = bool(self._open) and not self._skip and before is not None and len(self._open[-1].links) > before
        if marked:
            section = self._open[-1]
            n = len(self._links)
            self._links.append((section.anchor, n, section.links[-1]))
            section.parts.append(f"{_START}{n}{_MID}")
        self._open_links.append(marked)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open_links:  # every <a> pushed one entry, marked or not
            if self._open_links.pop() and self._open:
                self._open[-1].parts.append(_END)
        super().handle_endtag(tag)


def _clean(text: str) -> str:
    """Text with every marker taken out and the links' words kept."""
    return re.sub(f"{_START}\\d+{_MID}|{_END}", "", text)


def read_linked(root: Path, path: str) -> tuple[python_docs.Page, list[tuple[str, int, str]]]:
    parser = _LinkParser()
    parser.feed((root / path).read_text(encoding="utf-8"))
    parser.close()
    return python_docs.Page(path=path, sections=tuple(parser.sections), owner=parser.owner), parser._links


def link_sentences(section_text: str) -> dict[int, str]:
    """Link number -> the sentence holding it, the link's own words taken out, other links' kept."""
    found = {}
    for line in section_text.split("\n"):
        if line.lstrip().startswith("#"):
            continue  # the heading line
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z\x00])", line):
            for match in re.finditer(f"{_START}(\\d+){_MID}[^{_END}]*{_END}", sentence):
                n = int(match.group(1))
                words = _clean(sentence[:match.start()] + " " + sentence[match.end():]).split()
                found[n] = " ".join(words)
    return found


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sources() -> dict[str, scale_corpus.Source]:
    wanted = {"python": None, "cmake": ("cmake", "cmake-doc", "cmake-data"),
              "sklearn": ("sklearn", "python-sklearn-doc", "python-sklearn-doc"),
              "sqlalchemy": ("sqlalchemy", "python-sqlalchemy-doc", "python-sqlalchemy-doc")}
    out = {}
    for name, deb in wanted.items():
        if deb is None:
            source = scale_corpus.deb_source("python", "python3.11-doc", "python3.11")
            out[name] = scale_corpus.Source("python", source.root, source.package, source.version,
                                            python_docs.CORPUS_FOLDERS)
        else:
            out[name] = scale_corpus.deb_source(*deb)
    return out


def _pages(source: scale_corpus.Source, folders: tuple[str, ...] | None) -> list[str]:
    pages = scale_corpus.Source(source.name, source.root, source.package, source.version, folders).pages()
    return [p for p in pages if not p.endswith("index.html")]


def collection(shape: str, sources: dict[str, scale_corpus.Source], questions: int,
               documents: int) -> tuple[list[dict], list[dict]]:
    """The corpus rows and golden rows of one shape (see the module docstring)."""
    spec = {"short-no-headings": ("python", None, python_docs.CORPUS_FOLDERS, "section"),
            "long-pages": ("cmake", None, ("manual", "command", "module"), "page"),
            "api-reference": ("sklearn", ("modules", "tutorial"), ("modules/generated",), "section"),
            "mixed": ("sqlalchemy", None, None, "section")}[shape]
    name, question_folders, doc_folders, grain = spec
    source = sources[name]
    doc_pages = _pages(source, doc_folders)
    read = {p: read_linked(source.root, p) for p in sorted(set(doc_pages) | set(_pages(source, question_folders)))}
    docs: dict[str, dict] = {}
    for path in doc_pages:
        page = read[path][0]
        if grain == "page":
            text = "\n\n".join(_clean(s.text()) for s in page.sections if s.text())
            if len(text.split()) >= LONG_PAGE_WORDS:
                docs[python_docs.doc_id(path, "page")] = {"id": python_docs.doc_id(path, "page"), "title": page.title,
                                                          "text": text}
            continue
        for section in page.sections:
            text = _clean(section.text())
            body = [line for line in text.split("\n") if not line.lstrip().startswith("#")]
            words = len(" ".join(body).split())
            if not section.heading or words < python_docs.MIN_WORDS:
                continue
            if shape == "short-no-headings":
                if words > 150:
                    continue
                row = {"id": python_docs.doc_id(path, section.anchor), "text": "\n".join(body).strip()}
            else:
                title = page.title if section is page.sections[0] else f"{page.title}: {section.heading}"
                row = {"id": python_docs.doc_id(path, section.anchor), "title": title, "text": text}
            docs[row["id"]] = row
    candidates: dict[str, list[tuple[str, str]]] = {}  # expected doc -> (question id, text)
    for path, (page, links) in read.items():
        if question_folders is not None and not path.startswith(question_folders):
            continue
        by_anchor = {s.anchor: s for s in page.sections}
        sentences = {a: link_sentences(s.text()) for a, s in by_anchor.items()}
        for anchor, n, href in links:
            if href.startswith(("http:", "https:", "mailto:")):
                continue
            url, fragment = urldefrag(urljoin(path, href))
            target_path = normpath(url) if url else path
            if target_path not in read:
                continue
            target_page = read[target_path][0]
            if grain == "page":
                if target_path == path:
                    continue
                expected = python_docs.doc_id(target_path, "page")
            else:
                owner = target_page.owner.get(fragment) if fragment else (
                    target_page.sections[0].anchor if target_page.sections else None)
                expected = python_docs.doc_id(target_path, owner) if owner else None
                if expected == python_docs.doc_id(path, anchor):
                    continue
            text = sentences[anchor].get(n)
            if expected not in docs or not text or not MIN_QUESTION_WORDS <= len(text.split()) <= MAX_QUESTION_WORDS:
                continue
            candidates.setdefault(expected, []).append((f"{path}#{anchor}@{n}", text))
    golden, seen = [], set()
    for expected in sorted(candidates, key=lambda d: _sha(f"q:{d}")):
        qid, text = min(candidates[expected], key=lambda c: _sha(c[0]))
        if text.casefold() in seen:
            continue
        seen.add(text.casefold())
        golden.append({"id": f"link:{qid}", "question": text, "expected": [expected]})
        if len(golden) == questions:
            break
    needed = {g["expected"][0] for g in golden}
    rest = sorted((d for d in docs if d not in needed), key=_sha)[: max(0, documents - len(needed))]
    keep = needed | set(rest)
    return [docs[d] for d in docs if d in keep], golden


def build_collections(names: list[str], questions: int, documents: int, faq_documents: int = 800,
                      cache: Path = CACHE) -> dict[str, tuple[Path, Path]]:
    """Each collection's corpus and golden file, written under ``cache / shape``: a bench that reads
    them while another bench may rebuild them with other sizes passes a folder of its own."""
    sources = _sources()
    out = {}
    for shape in names:
        folder = cache / shape
        if shape == "python-faq":
            root = sources["python"].root
            if not (root / "faq").is_dir():
                print(f"python-faq: {root} holds no FAQ; skipped")
                continue
            out[shape] = python_docs.build(folder, root=root, n_docs=faq_documents, n_questions=None)
            continue
        docs, golden = collection(shape, sources, questions, documents)
        folder.mkdir(parents=True, exist_ok=True)
        paths = (folder / "corpus.jsonl", folder / "golden.jsonl")
        python_docs.write_jsonl(paths[0], docs)
        python_docs.write_jsonl(paths[1], golden)
        out[shape] = paths
    return out


def measure(shape: str, corpus: Path, golden: Path) -> list[tuple[str, dict]]:
    from evaluation.engine.index import IndexSettings, build_index, open_index
    from evaluation.engine.target import EmbeddedTarget
    from evaluation.golden import read_golden
    from evaluation.scoring.judging import judge
    from evaluation.scoring.metrics import summarise

    started = time.perf_counter()
    manifest = build_index(corpus, corpus.parent / "index", IndexSettings(models=("bge-small",)))
    built = time.perf_counter() - started
    questions = read_golden(golden).labelled
    texts = [q.question for q in questions]
    index = open_index(corpus.parent / "index")
    print(f"{shape}: {manifest['corpus']['documents']} documents, {manifest['chunks']} chunks, {len(questions)} "
          f"questions (index {'reused' if manifest.get('reused') else f'built in {built:.0f} s'})", flush=True)
    rows = []
    for hybrid_keyword in ("keyword", "keyword_documents"):
        target = EmbeddedTarget(index, cross_encoder=False, cache=False, hybrid_keyword=hybrid_keyword)
        by_key = {s.key: s for s in target.setups()}
        wanted = ([("keyword", "local.keyword.bm25"), ("keyword_documents", "local.keyword_documents.bm25"),
                   ("dense.bge-small", "local.dense.bge-small")] if hybrid_keyword == "keyword" else [])
        wanted.append((f"hybrid.bge-small ({hybrid_keyword})", "local.hybrid.bge-small"))
        for label, key in wanted:
            hits = target.search_batch(by_key[key], texts, 20)
            rows.append((label, summarise([judge(q, h, "doc") for q, h in zip(questions, hits, strict=True)])))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=SHAPES, help="these collections only")
    parser.add_argument("--questions", type=int, default=80, help="questions per collection at most (default 80)")
    parser.add_argument("--documents", type=int, default=500, help="documents per collection at most (default 500)")
    parser.add_argument("--faq-documents", type=int, default=800,
                        help="python-faq's documents at most, its questions' expected ones always in (default 800)")
    parser.add_argument("--build-only", action="store_true", help="write the collections, search nothing")
    args = parser.parse_args(argv)
    print(describe_machine(), flush=True)
    built = build_collections(list(args.only or SHAPES), args.questions, args.documents, args.faq_documents)
    for shape, (corpus, golden) in built.items():
        print(f"{shape}: {corpus} ({sum(1 for _ in corpus.open())} documents), {golden} "
              f"({sum(1 for _ in golden.open())} questions)", flush=True)
    if args.build_only:
        return 0
    table = []
    for shape, (corpus, golden) in built.items():
        table += [(shape, label, s) for label, s in measure(shape, corpus, golden)]
        print(f"  load {Path('/proc/loadavg').read_text().split()[0]}", flush=True)
    print("\n| collection | setup | found@1 | found@10 | MRR | nDCG@10 |\n|---|---|---|---|---|---|")
    for shape, label, s in table:
        n = s["questions"]
        print(f"| {shape} | {label} | {s['counts']['1']}/{n} | {s['counts']['10']}/{n} ({s['found']['10']:.3f}) "
              f"| {s['mrr']:.3f} | {s['ndcg_10']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

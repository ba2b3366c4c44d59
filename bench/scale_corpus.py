"""A corpus of about N chunks and known-item questions on it, from Debian documentation packages.

Pool: every section (its own text, at least 20 words, the heading as a Markdown line at the top) of
the Sphinx HTML of ``python3.11-doc`` (library, tutorial, howto and reference pages, as
``python_docs.py``) and of every page of ten more packages (``DEB_SOURCES``: the Linux
kernel's, LLVM's, CMake's, SQLAlchemy's, SciPy's, scikit-learn's, SymPy's, Astropy's, pandas' and
statsmodels' documentation), read by ``python_docs.read_page``; ids
``<source>/<page>/<section>``. A package that is not installed is fetched with ``apt-get download``
and unpacked under the cache (nothing on the system changes). Each section is cut by the project's
own chunker (``chunk_document``, default settings), so its chunk count is the index's.

A size of N chunks takes sections in sha256 order of their ids until their chunks reach N: sizes
nest (the 1k corpus is the start of the 10k one) and spread over every package and page. A question
is a section's heading, asked as written, its section the one expected document (a known-item
question); a heading qualifies when it has at least MIN_QUESTION_WORDS words and no other section of
the whole pool has the same heading (case and spaces folded), so it has one right answer at every
size. Questions are the qualifying sections of the chosen corpus in sha256 order of ``q:<id>``: 100
questions are the first 100 of the 1,000. They are easier than a person's questions (the heading's
words are on the expected chunk's first line, which is indexed and embedded) and harder in one way
(the distractors are sibling sections with near-identical vocabulary).

    python bench/scale_corpus.py --chunks 1000 --questions 100 --out DIR
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import python_docs
from evaluation.engine.chunking import RULES_VERSION, ChunkSettings, chunk_document
from evaluation.engine.corpus import Document

CACHE = python_docs.DEFAULT_OUT
# (id prefix, Debian package, its folder under /usr/share/doc): Sphinx HTML in <folder>/html, every page
# (python-django-doc is not among them: its pages mark sections <div class="section">, which
# python_docs.read_page does not read, so it gave no section at all.)
DEB_SOURCES = (("linux", "linux-doc-6.1", "linux-doc-6.1"), ("llvm", "llvm-15-doc", "llvm-15-doc"),
               ("scipy", "python-scipy-doc", "python-scipy-doc"),
               ("cmake", "cmake-doc", "cmake-data"), ("sqlalchemy", "python-sqlalchemy-doc", "python-sqlalchemy-doc"),
               ("sklearn", "python-sklearn-doc", "python-sklearn-doc"),
               ("sympy", "python-sympy-doc", "python-sympy-doc"),
               ("astropy", "python-astropy-doc", "python-astropy-doc"),
               ("pandas", "python-pandas-doc", "python-pandas-doc"),
               ("statsmodels", "python-statsmodels-doc", "python-statsmodels-doc"))
MIN_QUESTION_WORDS = 3  # "Introduction", "Examples", "struct foo": many sections share them
# Bump when a change here would read the packages into other sections or chunk counts (the pool cache key)
POOL_RULES = 1
_SKIPPED_PAGES = {"genindex.html", "search.html", "py-modindex.html"}


@dataclass(frozen=True)
class Source:
    """One package's Sphinx HTML: the id prefix, its root, the folders read (None: every page)."""

    name: str
    root: Path
    package: str
    version: str
    folders: tuple[str, ...] | None = None

    def pages(self) -> list[str]:
        if self.folders is None:
            found = [p.relative_to(self.root).as_posix() for p in self.root.rglob("*.html")]
            found = [p for p in found if not p.startswith("_") and "/_" not in p]
        else:
            found = [p.relative_to(self.root).as_posix() for folder in self.folders
                     for p in (self.root / folder).glob("*.html")]
        return sorted(p for p in found if p.rsplit("/", 1)[-1] not in _SKIPPED_PAGES
                      and not (self.folders is not None and p.endswith("/index.html")))


def _dpkg_version(package: str) -> str | None:
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", package],
                          capture_output=True, text=True)
    words = done.stdout.split()
    return words[-1] if done.returncode == 0 and "installed" in words else None


def deb_source(name: str, package: str, folder: str, cache: Path = CACHE) -> Source:
    """``package``'s Sphinx HTML (``/usr/share/doc/<folder>/html``): the installed copy, else the .deb
    fetched by ``apt-get download`` and unpacked with ``dpkg-deb -x`` under ``cache`` (nothing on the
    system changes; a .deb already there is used as it is)."""
    installed = Path("/usr/share/doc") / folder / "html"
    version = _dpkg_version(package)
    if version and installed.is_dir():
        return Source(name, installed, package, version)
    debs = cache / "debs"
    found = sorted(debs.glob(f"{package}_*_all.deb"))
    if not found:
        debs.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", package], cwd=debs, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        found = sorted(debs.glob(f"{package}_*_all.deb"))
    deb = found[-1]
    version = unquote(deb.name.split("_")[1])
    unpacked = debs / deb.stem
    if not (unpacked / "done").is_file():
        subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
        (unpacked / "done").write_text(version, encoding="utf-8")
    return Source(name, unpacked / "usr/share/doc" / folder / "html", package, version)


def python_source(cache: Path = CACHE) -> Source:
    """Python's docs (``python_docs.HTML``, the library, tutorial, howto and reference folders): the
    installed copy, else the ``.deb`` fetched and unpacked under ``cache`` as the other packages are."""
    version = _dpkg_version("python3.11-doc")
    if version and python_docs.HTML.is_dir():
        return Source("python", python_docs.HTML, "python3.11-doc", version, python_docs.CORPUS_FOLDERS)
    fetched = deb_source("python", "python3.11-doc", "python3.11", cache=cache)
    return Source("python", fetched.root, fetched.package, fetched.version, python_docs.CORPUS_FOLDERS)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fold(heading: str) -> str:
    return " ".join(heading.casefold().split())


def pool_rows(sources: list[Source], settings: ChunkSettings | None = None) -> list[dict]:
    """Every section of at least python_docs.MIN_WORDS words, in source and page order, with its heading
    and its chunk count (``metadata``)."""
    settings = settings or ChunkSettings()
    rows: list[dict] = []
    for source in sources:
        for path in source.pages():
            page = python_docs.read_page(source.root, path)
            for section in page.sections:
                text = section.text()
                body_words = len(text.split()) - len(section.heading.split()) - 1
                if not section.heading or body_words < python_docs.MIN_WORDS:
                    continue
                doc_id = f"{source.name}/{python_docs.doc_id(path, section.anchor)}"
                title = page.title if section is page.sections[0] else f"{page.title}: {section.heading}"
                chunks = len(chunk_document(Document(id=doc_id, text=text, title=title), settings))
                rows.append({"id": doc_id, "title": title, "text": text,
                             "source_uri": f"file://{source.root / path}#{section.anchor}",
                             "metadata": {"package": f"{source.package}={source.version}",
                                          "heading": section.heading, "chunks": chunks}})
    return rows


def question_headings(pool: list[dict]) -> dict[str, str]:
    """doc id -> its heading, for sections whose heading is long enough and no other section's."""
    counts: dict[str, int] = {}
    for row in pool:
        key = fold(row["metadata"]["heading"])
        counts[key] = counts.get(key, 0) + 1
    return {row["id"]: row["metadata"]["heading"] for row in pool
            if counts[fold(row["metadata"]["heading"])] == 1
            and len(row["metadata"]["heading"].split()) >= MIN_QUESTION_WORDS}


def choose(pool: list[dict], chunks: int, questions: int) -> tuple[list[dict], list[dict]]:
    """Sections in sha256 order of their ids until their chunks reach ``chunks`` (kept in pool order),
    and up to ``questions`` known-item questions on them (sha256 order of ``q:<id>``)."""
    picked: set[str] = set()
    total = 0
    for row in sorted(pool, key=lambda r: _sha(r["id"])):
        if total >= chunks:
            break
        picked.add(row["id"])
        total += row["metadata"]["chunks"]
    docs = [r for r in pool if r["id"] in picked]
    headings = question_headings(pool)
    eligible = sorted((d["id"] for d in docs if d["id"] in headings), key=lambda i: _sha(f"q:{i}"))
    golden = [{"id": f"heading:{doc_id}", "question": headings[doc_id], "expected": [doc_id]}
              for doc_id in eligible[:questions]]
    return docs, golden


def all_sources(cache: Path = CACHE) -> list[Source]:
    return [python_source(cache)] + [deb_source(*source, cache=cache) for source in DEB_SOURCES]


def read_pool(sources: list[Source], cache: Path = CACHE) -> list[dict]:
    """The pool, parsed once and kept under ``cache``, named by the packages' versions and what parses
    and chunks them (python_docs.py's bytes, the chunker's rules, POOL_RULES)."""
    parser = hashlib.sha256(Path(python_docs.__file__).read_bytes()).hexdigest()
    tag = "-".join([f"{s.package}={s.version}" for s in sources] + [parser, f"{RULES_VERSION}", f"{POOL_RULES}"])
    path = cache / f"scale-pool-{_sha(tag)[:12]}.jsonl"
    if path.is_file():
        return [json.loads(line) for line in path.open(encoding="utf-8")]
    pool = pool_rows(sources)
    cache.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    python_docs.write_jsonl(partial, pool)
    partial.replace(path)
    return pool


def write(out: Path, docs: list[dict], golden: list[dict]) -> tuple[Path, Path]:
    """``corpus.jsonl`` (the heading and chunk count left out of ``metadata``) and ``golden.jsonl``."""
    out.mkdir(parents=True, exist_ok=True)
    corpus = [{**d, "metadata": {"package": d["metadata"]["package"]}} for d in docs]
    paths = (out / "corpus.jsonl", out / "golden.jsonl")
    for path, rows in zip(paths, (corpus, golden), strict=True):
        python_docs.write_jsonl(path, rows)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, required=True, help="chunks to reach (sections are whole)")
    parser.add_argument("--questions", type=int, default=1000, help="questions at most (default 1000)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    sources = all_sources()
    pool = read_pool(sources)
    docs, golden = choose(pool, args.chunks, args.questions)
    write(args.out, docs, golden)
    print(f"pool: {len(pool)} sections, {sum(r['metadata']['chunks'] for r in pool)} chunks "
          f"({', '.join(f'{s.package} {s.version}' for s in sources)})")
    print(f"{args.out}: {len(docs)} documents, {sum(d['metadata']['chunks'] for d in docs)} chunks, "
          f"{len(golden)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())

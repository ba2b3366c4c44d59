"""The newest sweep in the Chunking tab (its ranked rows: build keys, methods and counts, never a
question's text), and ``latest_views`` reading one report a kind however many runs the store holds."""
from __future__ import annotations

import json
import re
from pathlib import Path

from test_chunking_page import report as chunking_report
from test_matrix import matrix

from evaluation.builds.sweeps import rank_rows
from evaluation.report.html import render_html
from evaluation.report.builds.sweep_page import render_sweep_html, sweep_section
from evaluation.store import LocalStore
from evaluation.store import builds as kept_runs
from evaluation.store.builds import ChunkingRuns, latest_views

SAVED = Path(__file__).parent.parent / "fixtures" / "page"


def row(build: str, method: str, ndcg: float, mrr: float, found: tuple[int, ...], median: float | None) -> dict:
    technique, size, letter = build.split("-")
    return {"key": f"{build}.{method}", "build": build, "technique": technique, "size": int(size), "letter": letter,
            "method": method, "questions": 12, "counts": {str(k): n for k, n in zip((1, 3, 5, 10), found, strict=True)},
            "found": {str(k): round(n / 12, 4) for k, n in zip((1, 3, 5, 10), found, strict=True)},
            "recall": {str(k): round(n / 12, 4) for k, n in zip((1, 3, 5, 10), found, strict=True)}, "mrr": mrr,
            "ndcg_10": ndcg, "chunks": 40 + len(build), "build_seconds": 3.25,
            "timed": 5, "median_ms": median}


def sweep_report(run_id: str = "20261201T130000000Z-abcdef") -> dict:
    rows = rank_rows([row("fixed-1000-h", "dense", 0.61, 0.55, (5, 8, 9, 11), 4.0),
                      row("markdown-1000-h", "hybrid", 0.72, 0.66, (7, 9, 10, 12), 6.5),
                      row("markdown-1000-h", "dense", 0.72, 0.66, (7, 9, 10, 12), 3.0)])
    return {"format": 1, "kind": "sweep", "id": run_id, "created_at": "2026-12-01T13:00:00Z", "by": "doc",
            "k": [1, 3, 5, 10], "methods": ["dense", "hybrid"], "models": ["bge-small"], "questions": 12,
            "golden": {"sha256": None, "questions": 12}, "corpus": {"documents": 9, "sha256": "0" * 64},
            "rows": rows, "best": rows[0]["key"],
            "failed": [{"build": "semantic-1000-h", "error": "ModelError: no model"}],
            "vectors": {"vectors_cached": 10, "vectors_shared": 15, "vectors_computed": 25, "share_from_cache": 0.5},
            "seconds": 61.0, "rule": "ranked by nDCG@10, then MRR, then median search time, then key"}


def test_the_sweep_view_lists_its_rows_as_ranked_with_found_at_each_k_as_a_percent_with_its_count():
    page = sweep_section(sweep_report())
    found, skipped = r'<td class="num">\d+% \((\d+)/12\)</td>', r'<td class="num">\d+% \(\d+/12\)</td>'
    rows = re.findall(r'<tr><td class="num">(\d+)</td><td><code>([^<]+)</code></td><td>(\w+)</td>'
                      r'<td class="num">([\d.]+)</td><td class="num">[\d.]+</td>' + found + skipped * 2 + found, page)
    # equal nDCG and MRR: the faster median first (3.0 ms dense before 6.5 ms hybrid)
    assert rows == [("1", "markdown-1000-h", "dense", "0.720", "7", "12"),
                    ("2", "markdown-1000-h", "hybrid", "0.720", "7", "12"),
                    ("3", "fixed-1000-h", "dense", "0.610", "5", "11")]
    assert "Best: <code>markdown-1000-h.dense</code>" in page
    assert "semantic-1000-h" in page and "50% of vectors came from the cache" in page
    assert "2 builds in 61 s" in page


def test_the_sweeps_own_page_stands_alone_with_no_script():
    page = render_sweep_html(sweep_report())
    assert page.startswith("<!doctype html>") and "<script" not in page and 'id="sweep"' in page


def test_a_sweep_alone_gives_the_run_page_its_chunking_tab():
    saved = json.loads((SAVED / "report.json").read_text(encoding="utf-8"))
    page = render_html(saved, sweep=sweep_report())
    tab = page.index('<section class="tab" id="tab-chunking"')
    assert tab < page.index('id="sweep"') and 'id="chunking"' not in page and 'id="matrix"' not in page
    both = render_html(saved, chunking=chunking_report(), sweep=sweep_report())
    assert both.index('id="chunking"') < both.index('id="sweep"')   # the comparison first, then the sweep
    assert render_html(saved, sweep={"kind": "chunking"}) == (SAVED / "page.html").read_text(encoding="utf-8")


def _counting_reads(store: LocalStore) -> list[str]:
    reads: list[str] = []
    real = store._read

    def read(path: str) -> bytes:
        reads.append(path)
        return real(path)

    store._read = read
    return reads


def test_latest_views_reads_one_report_a_kind_however_many_runs_the_store_holds(tmp_path):
    store = LocalStore(tmp_path / "store")
    made = {**matrix(tmp_path), "id": "20261201T080000000Z-000000", "format": 1}
    ChunkingRuns(store).save(made)                                  # the oldest run of all
    ChunkingRuns(store).save(sweep_report("20261201T090000000Z-111111"))
    for n in range(30):                                             # 30 newer chunking runs
        ChunkingRuns(store).save({**chunking_report(), "id": f"20261201T1{n:02d}000000Z-{n:06d}"})
    reads = _counting_reads(store)
    views = latest_views(store)
    assert views["chunking"]["id"] == "20261201T129000000Z-000029"
    assert views["sweep"]["id"] == "20261201T090000000Z-111111" and views["matrix"]["id"] == made["id"]
    assert len(reads) == 3                                          # one report a kind, not 32


def test_runs_kept_before_the_kind_markers_are_still_found_and_read_at_most_the_bound(tmp_path, monkeypatch):
    store = LocalStore(tmp_path / "store")
    runs = ChunkingRuns(store)

    def kept_without_marker(report: dict) -> None:
        runs.save(report)
        (store.root / "chunking" / "kinds" / report["kind"] / report["id"]).unlink()

    kept_without_marker(sweep_report("20261201T090000000Z-111111"))
    for n in range(5):
        kept_without_marker({**chunking_report(), "id": f"20261201T1{n:02d}000000Z-{n:06d}"})
    reads = _counting_reads(store)
    views = latest_views(store)                                     # newest first: 5 chunking, then the sweep
    assert views["chunking"]["id"] == "20261201T104000000Z-000004" and views["sweep"]["id"].endswith("111111")
    assert len(reads) == 6
    monkeypatch.setattr(kept_runs, "UNMARKED_READS", 4)
    reads.clear()
    views = latest_views(store)                                     # the bound stops before the sweep
    assert set(views) == {"chunking"} and len(reads) == 4


def test_a_marker_of_a_run_that_cannot_be_read_is_passed_over_for_the_next(tmp_path):
    store = LocalStore(tmp_path / "store")
    runs = ChunkingRuns(store)
    runs.save({**chunking_report(), "id": "20261201T100000000Z-aaaaaa"})
    runs.save({**chunking_report(), "id": "20261201T110000000Z-bbbbbb"})
    (store.root / "chunking" / "runs" / "20261201T110000000Z-bbbbbb" / "report.json").write_text("{not json")
    assert latest_views(store)["chunking"]["id"] == "20261201T100000000Z-aaaaaa"


def test_a_marker_naming_a_run_of_another_kind_shows_that_run_in_no_other_view(tmp_path):
    store = LocalStore(tmp_path / "store")
    ChunkingRuns(store).save({**chunking_report(), "id": "20261201T100000000Z-aaaaaa"})
    wrong = store.root / "chunking" / "kinds" / "sweep" / "20261201T100000000Z-aaaaaa"
    wrong.parent.mkdir(parents=True)
    wrong.write_bytes(b"")                                          # a hand-made marker: the run is no sweep
    assert set(latest_views(store)) == {"chunking"}

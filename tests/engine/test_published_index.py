"""An embedded index published to Blob (Azurite) and fetched once per fingerprint, every file checked."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SAMPLES, run_cli
from evaluation.engine.published import CURRENT, FILES, KEEP_FETCHED, fetch_index, publish_index, published_fingerprint
from evaluation.errors import SearchIndexError

pytestmark = pytest.mark.azurite

FP1, FP2, FP3 = "1" * 64, "2" * 64, "3" * 64


def fake_index(folder: Path, fingerprint: str, words: str = "alpha") -> Path:
    """A folder shaped like an index (what fetching checks), without running any model."""
    (folder / "bm25").mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"format": 1, "fingerprint": fingerprint}))
    (folder / "chunks.jsonl").write_text(json.dumps({"id": "a:0", "text": words}) + "\n")
    (folder / "bm25" / "params.index.json").write_text('{"k1": 1.2}')
    return folder


@pytest.fixture
def where(azurite):
    container = azurite.new_container()
    return azurite, container, azurite.address(container, "indexes/docs")


def blob(azurite, container):
    from azure.storage.blob import BlobServiceClient

    return BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client(container)


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def test_a_published_index_is_fetched_whole_and_read_only(where, tmp_path):
    azurite, container, address = where
    source = fake_index(tmp_path / "built", FP1)

    published = publish_index(source, address, connection_string=azurite.connection_string)
    folder = fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)

    assert published == {"fingerprint": FP1, "files": 3, "bytes": sum(len(b) for b in tree(source).values()),
                         "reused": False}
    assert tree(folder) == tree(source) and folder.name == FP1
    assert all((p.stat().st_mode & 0o222) == 0 for p in folder.rglob("*") if p.is_file() and p.name != ".fetched")
    names = sorted(blob(azurite, container).list_blob_names(name_starts_with="indexes/docs/"))
    assert names == sorted(["indexes/docs/current.json", f"indexes/docs/{FP1}/bm25/params.index.json",
                            f"indexes/docs/{FP1}/chunks.jsonl", f"indexes/docs/{FP1}/files.json",
                            f"indexes/docs/{FP1}/manifest.json"])


def test_a_second_fetch_of_one_fingerprint_downloads_nothing(where, tmp_path):
    azurite, container, address = where
    publish_index(fake_index(tmp_path / "built", FP1), address, connection_string=azurite.connection_string)
    first = fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)
    client = blob(azurite, container)
    for name in list(client.list_blob_names(name_starts_with=f"indexes/docs/{FP1}/")):
        client.delete_blob(name)  # only current.json is left to read

    again = fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)

    assert again == first and tree(again)["chunks.jsonl"]


def test_publishing_the_same_index_again_uploads_nothing_and_a_new_one_becomes_current(where, tmp_path):
    azurite, container, address = where
    publish_index(fake_index(tmp_path / "v1", FP1), address, connection_string=azurite.connection_string)

    again = publish_index(fake_index(tmp_path / "v1", FP1), address, connection_string=azurite.connection_string)
    newer = publish_index(fake_index(tmp_path / "v2", FP2, "beta"), address,
                          connection_string=azurite.connection_string)

    assert again["reused"] is True and newer["reused"] is False
    assert published_fingerprint(address, connection_string=azurite.connection_string) == FP2


def test_a_run_pinned_to_an_older_fingerprint_still_fetches_it_after_a_newer_publish(where, tmp_path):
    azurite, container, address = where
    publish_index(fake_index(tmp_path / "v1", FP1, "alpha"), address, connection_string=azurite.connection_string)
    publish_index(fake_index(tmp_path / "v2", FP2, "beta"), address, connection_string=azurite.connection_string)

    pinned = fetch_index(address, tmp_path / "cache", fingerprint=FP1, connection_string=azurite.connection_string)
    current = fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)

    assert (pinned.name, current.name) == (FP1, FP2)
    assert b"alpha" in (pinned / "chunks.jsonl").read_bytes() and b"beta" in (current / "chunks.jsonl").read_bytes()


def test_a_file_changed_after_publishing_is_refused_and_nothing_is_left_in_the_cache(where, tmp_path):
    azurite, container, address = where
    publish_index(fake_index(tmp_path / "built", FP1), address, connection_string=azurite.connection_string)
    original = (tmp_path / "built" / "chunks.jsonl").read_bytes()
    tampered = original.replace(b"alpha", b"omega")  # same size: only the sha256 tells them apart
    assert len(tampered) == len(original) and tampered != original
    blob(azurite, container).upload_blob(f"indexes/docs/{FP1}/chunks.jsonl", tampered, overwrite=True)

    with pytest.raises(SearchIndexError, match=f"{FP1[:12]}/chunks.jsonl does not match its checksum in files.json; "
                                               "publish the index again"):
        fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)
    home = next((tmp_path / "cache").iterdir())
    assert [p.name for p in home.iterdir() if not p.name.startswith(".lock")] == []


def test_a_manifest_that_names_another_fingerprint_is_refused(where, tmp_path):
    azurite, container, address = where
    built = fake_index(tmp_path / "built", FP1)
    publish_index(built, address, connection_string=azurite.connection_string)
    client = blob(azurite, container)
    manifest = json.dumps({"format": 1, "fingerprint": FP3}).encode()
    client.upload_blob(f"indexes/docs/{FP1}/manifest.json", manifest, overwrite=True)
    listing = json.loads(client.download_blob(f"indexes/docs/{FP1}/{FILES}").readall())
    import hashlib

    for item in listing["files"]:  # a consistent listing: only the fingerprint check can catch it
        if item["path"] == "manifest.json":
            item.update(bytes=len(manifest), sha256=hashlib.sha256(manifest).hexdigest())
    client.upload_blob(f"indexes/docs/{FP1}/{FILES}", json.dumps(listing).encode(), overwrite=True)

    with pytest.raises(SearchIndexError, match=f"holds an index whose manifest says {FP3[:12]}"):
        fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)


@pytest.mark.parametrize("path", ["../outside.txt", "bm25/../../outside.txt", "/etc/passwd", ".fetched"])
def test_a_listing_that_would_write_outside_the_folder_is_refused(where, tmp_path, path):
    azurite, container, address = where
    publish_index(fake_index(tmp_path / "built", FP1), address, connection_string=azurite.connection_string)
    client = blob(azurite, container)
    listing = json.loads(client.download_blob(f"indexes/docs/{FP1}/{FILES}").readall())
    listing["files"].append({"path": path, "bytes": 1, "sha256": "0" * 64})
    client.upload_blob(f"indexes/docs/{FP1}/{FILES}", json.dumps(listing).encode(), overwrite=True)

    with pytest.raises(SearchIndexError, match="is not a listing of this version"):
        fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)
    assert not (tmp_path / "outside.txt").exists()


def test_an_address_with_nothing_published_names_the_command(where, tmp_path):
    azurite, container, address = where

    with pytest.raises(SearchIndexError, match=r"no published index here; publish one with "
                                               r"`python3 -m evaluation index CORPUS --out http://"):
        fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)


def test_the_cache_keeps_the_two_most_recent_versions_of_an_address(where, tmp_path):
    azurite, container, address = where
    for n, fingerprint in enumerate((FP1, FP2, FP3)):
        publish_index(fake_index(tmp_path / f"v{n}", fingerprint), address, connection_string=azurite.connection_string)
        fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)

    home = next((tmp_path / "cache").iterdir())
    assert sorted(p.name for p in home.iterdir() if p.is_dir()) == [FP2, FP3] and KEEP_FETCHED == 2


def test_the_index_command_publishes_to_a_blob_address(where, capsys, monkeypatch, sample_index):
    azurite, container, address = where
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite.connection_string)

    code, out, _ = run_cli(capsys, "index", str(SAMPLES / "corpus.jsonl"), "--out", address,
                           "--index-dir", str(sample_index), "--quiet")

    fingerprint = json.loads((sample_index / "manifest.json").read_text())["fingerprint"]
    assert code == 0 and f"published index {fingerprint[:12]} to {address} (uploaded" in out
    assert published_fingerprint(address, connection_string=azurite.connection_string) == fingerprint
    current = json.loads(blob(azurite, container).download_blob(f"indexes/docs/{CURRENT}").readall())
    assert current == {"format": 1, "fingerprint": fingerprint}


def test_a_publish_that_stops_half_way_leaves_the_current_version_current(where, tmp_path, monkeypatch):
    import evaluation.store.blob as blob_module

    azurite, container, address = where
    publish_index(fake_index(tmp_path / "v1", FP1), address, connection_string=azurite.connection_string)
    real_upload, uploads = blob_module.upload_file, []

    def upload_then_fail(container_client, name, path):
        uploads.append(name)
        if len(uploads) == 2:
            raise OSError("the network went away")
        real_upload(container_client, name, path)

    monkeypatch.setattr(blob_module, "upload_file", upload_then_fail)
    with pytest.raises(OSError):
        publish_index(fake_index(tmp_path / "v2", FP2, "beta"), address, connection_string=azurite.connection_string)

    assert published_fingerprint(address, connection_string=azurite.connection_string) == FP1
    with pytest.raises(SearchIndexError, match="was never published whole"):
        fetch_index(address, tmp_path / "cache", fingerprint=FP2, connection_string=azurite.connection_string)


def test_a_published_index_carries_its_document_bm25_and_the_fetched_copy_ranks_keyword_alike(where, tmp_path):
    from evaluation.engine.index import IndexSettings, build_index, open_index
    from evaluation.engine.target import EmbeddedTarget

    azurite, container, address = where
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "a", "title": "Keys", "text": "# Keys\n\n## Rotation\n\nRotate keys yearly."})
                      + "\n" + json.dumps({"id": "b", "text": "Backups run nightly."}) + "\n", encoding="utf-8")
    build_index(corpus, tmp_path / "built", IndexSettings(models=()))

    publish_index(tmp_path / "built", address, connection_string=azurite.connection_string)
    folder = fetch_index(address, tmp_path / "cache", connection_string=azurite.connection_string)

    assert tree(folder) == tree(tmp_path / "built")
    assert any(name.startswith("bm25_documents/") for name in tree(folder))
    searched = []
    for opened in (open_index(tmp_path / "built"), open_index(folder, verify=True)):
        target = EmbeddedTarget(opened, cross_encoder=False, cache=False)
        keyword = next(s for s in target.setups() if s.method == "keyword_documents")
        searched.append([(h.id, h.score) for h in target.search(keyword, "rotate keys", 20)])
    assert searched[0] == searched[1] == [("a:0", 1 / 61 + 1 / 61)]

"""A store around a client of the user's own (``FilesStore``: read, write, list, maybe exists): nothing it
says is believed that could lose a run (issue 46). A write that keeps nothing, or other bytes, or a file its
list will not name, is never "saved"; a list of anything but str paths is a sentence, never runs hidden; a
client that lists its whole root, has no ``exists``, or reads None for a path it lacks still works."""
from __future__ import annotations

import hashlib

import pytest

from conftest import GOLDEN_RAW, build_report
from evaluation.errors import GoldenNotKeptError, RunNotFoundError, StoreError
from evaluation.store import FilesStore, report_store
from evaluation.store.builds import ChunkingRuns
from test_vectrixdb_stores import Files as UsersFiles

RUN = "20261130T012433123Z-000001"
OLDER = "20261129T012433123Z-000002"


class Files(UsersFiles):
    """A user's client (read, write, exists, list over a dict), over ``data`` when given: two clients of one bucket."""

    def __init__(self, data: dict[str, bytes] | None = None) -> None:
        super().__init__()
        if data is not None:
            self.data = data


def kept_run(data: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """What a good client holds after one run (``RUN``) was saved through it, with its page."""
    data = {} if data is None else data
    FilesStore(Files(data)).save(build_report(RUN), GOLDEN_RAW, html="<!doctype html><p>run</p>")
    return data


# -- a write is checked -----------------------------------------------------------------------------

class KeepsNothing(Files):
    def write(self, path: str, data: bytes) -> None:
        pass  # answers, and keeps nothing: a client pointed at the wrong bucket, a dry-run flag left on


def test_a_write_that_keeps_nothing_is_never_reported_saved():
    files = KeepsNothing()
    with pytest.raises(StoreError, match=r"write\('golden_dataset/[0-9a-f]{64}\.jsonl'\) returned, but read\(.*\) then "
                                         r"found nothing there: the client did not keep the file"):
        FilesStore(files).save(build_report(RUN), GOLDEN_RAW)
    with pytest.raises(StoreError, match=rf"write\('retrieval/runs/{RUN}/report.json'\) returned"):
        FilesStore(files).save(build_report(RUN))  # no golden file: the report's own write is checked


def test_evaluate_through_a_client_that_keeps_nothing_keeps_the_run_in_an_unsaved_file(tmp_path):
    from evaluation import evaluate
    from evaluation.errors import RunNotSavedError
    from fakes import ANSWERS, ListTarget, write_golden

    golden = write_golden(tmp_path, [{"id": "q1", "question": "where is alpha", "expected": ["alpha"]}])
    with pytest.raises(RunNotSavedError, match="did not keep the file") as caught:
        evaluate(ListTarget("t", ANSWERS, held={"alpha"}), golden, save_to=KeepsNothing(),
                 fallback_dirs=[tmp_path])
    assert caught.value.kept is not None and caught.value.kept.exists()  # the finished run is not lost


class Truncates(Files):
    def write(self, path: str, data: bytes) -> None:
        self.data[path] = bytes(data[:10])


def test_a_write_that_keeps_other_bytes_is_a_sentence_naming_both_sizes():
    report = build_report(RUN)
    with pytest.raises(StoreError, match=r"gave other bytes than were written \([0-9]+ written, 10 read back\)"):
        FilesStore(Truncates()).save(report)


class ListsRelative(Files):
    def list(self, prefix: str = "") -> list[str]:
        return sorted(p[len(prefix):] for p in self.data if p.startswith(prefix))  # names under the prefix


def test_a_file_the_clients_list_will_not_name_is_a_sentence_at_save_not_a_run_hidden_later():
    files = ListsRelative()
    with pytest.raises(StoreError, match=rf"'retrieval/runs/{RUN}/report.json' was written and reads back, but "
                                         rf"list\('retrieval/runs/{RUN}/'\) does not name it"):
        FilesStore(files).save(build_report(RUN))


# -- a list is checked ------------------------------------------------------------------------------

class ListsBytes(Files):
    def list(self, prefix: str = "") -> list:
        return [p.encode() for p in super().list(prefix)]


class ListsText(Files):
    def list(self, prefix: str = "") -> str:
        return "\n".join(super().list(prefix))  # one string: iterated, it would be characters


class ListsCount(Files):
    def list(self, prefix: str = "") -> int:
        return len(super().list(prefix))


@pytest.mark.parametrize("client, says", [
    (ListsBytes, r"gave a bytes path, b'retrieval/runs/.*'; the files object's list must give str paths \(bytes: "
                 r"decode them, as UTF-8\), or every run it holds is hidden"),
    (ListsText, r"gave a str, not a list of paths"),
    (ListsCount, r"gave a int, not a list of paths"),
])
def test_a_list_of_anything_but_str_paths_is_a_sentence_never_runs_hidden(client, says):
    store = FilesStore(client(kept_run()))

    for read in (store.ids, store.history, store.latest, lambda: store.get("latest")):
        with pytest.raises(StoreError, match=says):
            read()


# -- the surviving bugs: prefix, a missing exists, None reads ----------------------------------------

class ListsEverything(Files):
    def list(self, prefix: str = "") -> list[str]:
        return sorted(self.data) + ["retrieval/", "chunking/runs/"]  # its whole root, folders too


def test_a_client_that_lists_its_whole_root_shows_only_the_runs_under_each_prefix():
    data = kept_run()
    FilesStore(Files(data)).save(build_report(OLDER))
    ChunkingRuns(FilesStore(Files(data))).save({"kind": "chunking", "format": 1, "id": "20261201T000000000Z-00000c"})
    store = FilesStore(ListsEverything(data))

    assert store.ids() == [RUN, OLDER]  # no id made of a chunking run's path cut at the wrong place
    assert ChunkingRuns(store).ids() == ["20261201T000000000Z-00000c"]
    assert [row["id"] for row in store.history()] == [RUN, OLDER]


class NoExists:
    """A client with read, write and list only: ``exists`` is answered by reading."""

    def __init__(self) -> None:
        self.files = Files()

    def read(self, path: str) -> bytes:
        return self.files.read(path)

    def write(self, path: str, data: bytes) -> None:
        self.files.write(path, data)

    def list(self, prefix: str = "") -> list[str]:
        return self.files.list(prefix)


def test_a_client_without_exists_keeps_a_run_once_and_its_golden_file_once():
    client = NoExists()
    store = report_store(client)
    assert isinstance(store, FilesStore) and not store.has(RUN)

    assert store.save(build_report(RUN), GOLDEN_RAW) == RUN
    assert store.has(RUN) and store.has_golden(hashlib.sha256(GOLDEN_RAW).hexdigest())
    with pytest.raises(StoreError, match=f"run {RUN} is already in the store"):
        store.save(build_report(RUN), GOLDEN_RAW)
    store.save(build_report(OLDER), GOLDEN_RAW)  # the same golden file: kept once, not refused
    assert store.ids() == [RUN, OLDER] and len(client.files.list("golden_dataset/")) == 1


class ReadsNone(NoExists):
    """``read`` gives None for a path it does not hold (as ``dict.get`` does), and has no ``exists``."""

    def read(self, path: str) -> bytes | None:
        return self.files.data.get(path)


def test_a_client_whose_read_gives_none_for_a_missing_path_holds_runs_like_any_other():
    store = report_store(ReadsNone())

    assert not store.has(RUN)
    assert store.save(build_report(RUN), GOLDEN_RAW, html="<!doctype html><p>run</p>") == RUN
    assert store.get(RUN)["id"] == RUN and store.page(RUN) == b"<!doctype html><p>run</p>"
    with pytest.raises(RunNotFoundError, match=f"no run '{OLDER}'"):
        store.get(OLDER)
    with pytest.raises(GoldenNotKeptError):
        store.golden("0" * 64)
    store.save(build_report(OLDER))  # saved without a page: its page is None, not an error
    assert store.page(OLDER) is None

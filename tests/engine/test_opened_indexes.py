"""One opened index per index version and process (``engine.opened``): the key rule, the bound, the
lock, and what makes sharing one opened index between threads safe."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluation.engine.opened import IndexKey, OpenedIndexes
from evaluation.errors import SearchIndexError

ADDRESS = "https://acct.blob.core.windows.net/indexes/docs"
FP1, FP2, FP3 = "1" * 64, "2" * 64, "3" * 64


class CountingOpener:
    """Opens a "folder" into an object whose manifest carries the fingerprint the folder is named for
    (as ``fetch_index`` names them), counting calls; ``hold`` keeps an open waiting until released."""

    def __init__(self, hold: threading.Event | None = None, fail: int = 0) -> None:
        self.calls: list[Path] = []
        self.entered = threading.Event()
        self.hold, self.fail = hold, fail
        self.holds: dict[Path, str] = {}  # a folder rebuilt in place holds another version than its name

    def __call__(self, folder: Path):
        self.calls.append(folder)
        self.entered.set()
        if self.hold is not None:
            assert self.hold.wait(10), "the test never released the open"
        if self.fail:
            self.fail -= 1
            raise SearchIndexError(f"{folder}: the index is damaged (test)")
        return SimpleNamespace(folder=folder, manifest={"fingerprint": self.holds.get(folder, folder.name)})


def folder(tmp_path: Path, fingerprint: str, address: str = "docs") -> Path:
    return tmp_path / address / fingerprint


# -- the key ------------------------------------------------------------------------------------------

def test_the_same_version_asked_twice_is_opened_once_and_the_same_object_handed_out(tmp_path):
    opener = CountingOpener()
    opened = OpenedIndexes(2, opener=opener)

    first = opened.open(ADDRESS, FP1, folder(tmp_path, FP1))
    again = opened.open(ADDRESS + "/", FP1, tmp_path / "x" / ".." / "docs" / FP1)  # the same, written otherwise

    assert again is first and len(opener.calls) == 1 == opened.opens


def test_another_pinned_state_at_the_same_address_is_never_served_the_old_index(tmp_path):
    opener = CountingOpener()
    opened = OpenedIndexes(2, opener=opener)

    old = opened.open(ADDRESS, FP1, folder(tmp_path, FP1))
    new = opened.open(ADDRESS, FP2, folder(tmp_path, FP2))  # a new state published, a run pinned to it

    assert new is not old and new.manifest["fingerprint"] == FP2 and old.manifest["fingerprint"] == FP1
    assert opened.open(ADDRESS, FP1, folder(tmp_path, FP1)) is old  # the old pin: the old object
    assert opened.opens == 2


def test_a_local_folder_rebuilt_in_place_is_opened_anew_for_its_new_fingerprint(tmp_path):
    """The same address and folder (``build_index`` swaps a new version in where the old one was): only
    the fingerprint tells the versions apart, so it must be part of the key."""
    opener = CountingOpener()
    opened = OpenedIndexes(2, opener=opener)
    where = tmp_path / "index"
    opener.holds[where] = FP1
    old = opened.open(str(where), FP1, where)

    opener.holds[where] = FP2  # rebuilt: the folder holds FP2 now
    new = opened.open(str(where), FP2, where)

    assert new is not old and new.manifest["fingerprint"] == FP2 and opened.opens == 2
    assert opened.open(str(where), FP1, where) is old  # a run pinned to FP1 keeps the FP1 it opened, whole


def test_another_address_or_another_folder_is_another_opened_index(tmp_path):
    opener = CountingOpener()
    opened = OpenedIndexes(3, opener=opener)

    one = opened.open(ADDRESS, FP1, folder(tmp_path, FP1))
    elsewhere = opened.open(ADDRESS + "-copy", FP1, folder(tmp_path, FP1))  # the same bytes published twice
    other_cache = opened.open(ADDRESS, FP1, folder(tmp_path, FP1, "other-cache"))

    assert len({id(one), id(elsewhere), id(other_cache)}) == 3 and opened.opens == 3
    assert [k.address for k in opened.keys()] == [ADDRESS, ADDRESS + "-copy", ADDRESS]


def test_a_folder_holding_another_version_than_the_one_asked_for_is_refused_and_not_kept(tmp_path):
    opened = OpenedIndexes(2, opener=CountingOpener())
    holding_fp1 = folder(tmp_path, FP1)

    with pytest.raises(SearchIndexError, match=f"holds index version {FP1[:12]}, not the {FP2[:12]} asked for"):
        opened.open(ADDRESS, FP2, holding_fp1)  # never an old index under a new pin, or the reverse

    assert opened.keys() == []


def test_a_key_needs_the_fingerprint_a_run_pins():
    with pytest.raises(ValueError, match="resolve the current one first"):
        IndexKey.of(ADDRESS, "", "/tmp/x")


# -- the bound ------------------------------------------------------------------------------------------

def test_at_most_most_are_kept_and_the_least_recently_used_is_dropped_first(tmp_path):
    opener = CountingOpener()
    opened = OpenedIndexes(2, opener=opener)
    one, two = opened.open(ADDRESS, FP1, folder(tmp_path, FP1)), opened.open(ADDRESS, FP2, folder(tmp_path, FP2))
    assert opened.open(ADDRESS, FP1, folder(tmp_path, FP1)) is one  # FP1 used last: FP2 is the older now

    opened.open(ADDRESS, FP3, folder(tmp_path, FP3))  # a third: FP2 goes

    assert [k.fingerprint for k in opened.keys()] == [FP1, FP3]
    assert opened.open(ADDRESS, FP1, folder(tmp_path, FP1)) is one and opened.opens == 3
    assert opened.open(ADDRESS, FP2, folder(tmp_path, FP2)) is not two and opened.opens == 3 + 1  # opened again


def test_most_zero_keeps_nothing_and_each_caller_opens_its_own(tmp_path):
    opened = OpenedIndexes(0, opener=CountingOpener())

    first, second = (opened.open(ADDRESS, FP1, folder(tmp_path, FP1)) for _ in range(2))

    assert first is not second and opened.opens == 2 and opened.keys() == []


@pytest.mark.parametrize("most", [-1, 1.5, True, "2"])
def test_most_must_be_a_whole_number_of_0_or_more(most):
    with pytest.raises(ValueError, match="whole number of 0 or more"):
        OpenedIndexes(most)


def test_a_failed_open_is_not_kept_and_the_next_caller_opens_again(tmp_path):
    opener = CountingOpener(fail=1)
    opened = OpenedIndexes(2, opener=opener)

    with pytest.raises(SearchIndexError, match="damaged"):
        opened.open(ADDRESS, FP1, folder(tmp_path, FP1))
    assert opened.keys() == []
    index = opened.open(ADDRESS, FP1, folder(tmp_path, FP1))

    assert index.manifest["fingerprint"] == FP1 and opened.opens == 2 and len(opened.keys()) == 1


# -- the lock -------------------------------------------------------------------------------------------

def test_two_threads_opening_the_same_version_at_once_open_it_once(tmp_path):
    release = threading.Event()
    opener = CountingOpener(hold=release)
    opened = OpenedIndexes(2, opener=opener)
    got: list[object] = []

    def activity() -> None:
        got.append(opened.open(ADDRESS, FP1, folder(tmp_path, FP1)))

    first = threading.Thread(target=activity)
    first.start()
    assert opener.entered.wait(10)  # the first is inside the open
    second = threading.Thread(target=activity)
    second.start()
    time.sleep(0.3)  # time for the second to reach the opener too, were it not waiting for the first
    release.set()
    for thread in (first, second):
        thread.join(10)

    assert len(opener.calls) == 1 and len(got) == 2 and got[0] is got[1]


def test_opening_another_version_does_not_wait_for_one_being_opened(tmp_path):
    release = threading.Event()
    slow = CountingOpener(hold=release)

    def opener(where: Path):
        if where.name == FP1:
            return slow(where)
        return SimpleNamespace(folder=where, manifest={"fingerprint": where.name})

    opened = OpenedIndexes(2, opener=opener)
    first = threading.Thread(target=opened.open, args=(ADDRESS, FP1, folder(tmp_path, FP1)))
    first.start()
    assert slow.entered.wait(10)
    other = threading.Thread(target=opened.open, args=(ADDRESS, FP2, folder(tmp_path, FP2)))
    other.start()
    other.join(5)
    finished_while_the_first_was_opening = not other.is_alive()
    release.set()
    first.join(10)

    assert finished_while_the_first_was_opening
    assert sorted(k.fingerprint for k in opened.keys()) == [FP1, FP2]


# -- what sharing stands on ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def keyword_index(tmp_path_factory):
    """A keyword-only index (no model runs), opened once."""
    from evaluation.engine.index import IndexSettings, build_index, open_index

    where = tmp_path_factory.mktemp("opened")
    corpus = where / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in (
        {"id": "keys.md", "title": "Keys", "text": "Keys are rotated every ninety days by the platform team."},
        {"id": "backups.md", "text": "Backups run nightly in two regions and are kept for thirty days."},
        {"id": "alerts.md", "text": "Alerts page the on-call engineer when backups fail twice."})), encoding="utf-8")
    build_index(corpus, where / "index", IndexSettings(models=()))
    return open_index(where / "index")


def test_describe_hands_each_target_its_own_copy_of_the_shared_manifest(keyword_index):
    from evaluation.engine.target import EmbeddedTarget

    one = EmbeddedTarget(keyword_index, cache=False, cross_encoder=False)
    other = EmbeddedTarget(keyword_index, cache=False, cross_encoder=False)

    described = one.describe()
    described["chunking"]["size"] = -1  # a caller editing what it was given
    described["bm25"].clear()

    assert other.describe()["chunking"]["size"] == keyword_index.manifest["chunking"]["size"] != -1
    assert keyword_index.manifest["bm25"] != {}


def test_the_shared_arrays_of_an_opened_index_cannot_be_written(keyword_index):
    with pytest.raises(ValueError, match="read-only"):
        keyword_index.chunk_documents[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        keyword_index.bm25.scores["data"][0] = 0.0


def test_each_thread_stems_with_its_own_stemmer():
    from evaluation.engine.index import _stemmer

    mine = _stemmer()
    theirs: list[object] = []
    thread = threading.Thread(target=lambda: theirs.append(_stemmer()))
    thread.start()
    thread.join()

    assert _stemmer() is mine and theirs[0] is not mine  # PyStemmer: "must not be called concurrently"


def test_targets_sharing_one_opened_index_in_two_threads_rank_as_each_alone(keyword_index):
    from evaluation.engine.target import EmbeddedTarget

    questions = ["when are keys rotated", "how long are backups kept", "who is paged when backups fail"] * 20
    alone = EmbeddedTarget(keyword_index, cache=False, cross_encoder=False)
    setup = next(s for s in alone.setups() if s.retrieval == "keyword")
    expected = [[h.id for h in hits] for hits in alone.search_batch(setup, questions, 3)]
    found: dict[int, list] = {}

    def activity(n: int) -> None:
        target = EmbeddedTarget(keyword_index, cache=False, cross_encoder=False)
        found[n] = [[h.id for h in hits] for hits in target.search_batch(setup, questions, 3)]

    threads = [threading.Thread(target=activity, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert found[0] == found[1] == expected and expected[0][0] == "keys.md:0"

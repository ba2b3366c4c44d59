"""The activities of one run on one instance open its index once (``app.storage.opened_indexes``), against
Azurite with the shipped sample's index (keyword setups only: no model runs); and the library's rule that
a new published state is a new opened index while the old pin keeps the old one."""
from __future__ import annotations

import json
import threading

import pytest

from test_activities import call, sample_run  # noqa: F401 - the activity caller and the sample's run

pytestmark = pytest.mark.azurite

KEY = "local.keyword.bm25"


@pytest.fixture
def three_shards(sample_run, monkeypatch):  # noqa: F811 - the fixture imported above
    """The sample's run (its index published, three of its questions, keyword only), none timed, one
    question a shard."""
    from app import settings as app_settings

    for name, value in (("EVALUATION_TIMED", "0"), ("EVALUATION_SHARD_QUESTIONS", "1")):
        monkeypatch.setenv(name, value)
    app_settings.current_settings.cache_clear()
    return sample_run


def test_two_rank_shard_calls_of_one_run_at_once_open_its_index_once(app, three_shards):
    from app import settings as app_settings
    from app.storage import collection_folder, opened_indexes

    settings = app_settings.current_settings()
    opened = opened_indexes(settings)
    before = opened.opens
    planned = call("plan_evaluation", {**three_shards, "state": None})
    assert planned["shards"] == {KEY: 3} and opened.opens == before + 1  # the plan opened it
    opened.clear()  # the shards land on an instance that did not plan the run: nothing opened there yet
    start = threading.Barrier(2)
    answers: dict[int, dict] = {}

    def activity(shard: int) -> None:
        start.wait()
        answers[shard] = call("rank_shard", {"collection": "docs", "run_id": three_shards["run_id"], "key": KEY,
                                             "shard": shard})

    threads = [threading.Thread(target=activity, args=(shard,)) for shard in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    call("rank_shard", {"collection": "docs", "run_id": three_shards["run_id"], "key": KEY, "shard": 2})  # later

    assert answers == {n: {"key": KEY, "shard": n, "ok": True} for n in (0, 1)}
    assert opened.opens == before + 1 + 1  # the plan's, then one for all three shards
    pinned = collection_folder(settings, "docs").read_work(three_shards["run_id"], "targets.json")["local"]["state"]
    assert [k.fingerprint for k in opened.keys()] == [pinned]


def test_the_app_keeps_as_many_opened_indexes_as_its_setting_says(monkeypatch):
    from app import settings as app_settings
    from app.storage import opened_indexes

    monkeypatch.setenv("EVALUATION_OPENED_INDEXES", "0")
    app_settings.current_settings.cache_clear()
    try:
        assert opened_indexes(app_settings.current_settings()).most == 0
    finally:
        monkeypatch.delenv("EVALUATION_OPENED_INDEXES")
        app_settings.current_settings.cache_clear()
    assert opened_indexes(app_settings.current_settings()).most == 2


def test_a_new_published_state_is_opened_anew_and_the_old_pin_keeps_the_old_index(azurite, tmp_path):
    from evaluation.engine.index import IndexSettings, build_index
    from evaluation.engine.opened import OpenedIndexes
    from evaluation.engine.published import publish_index
    from evaluation.target_specs import TargetAccess, TargetSpec, open_target

    address = azurite.address(azurite.new_container(), "indexes/docs")
    built = {}
    for version, text in (("v1", "Keys are rotated every ninety days."), ("v2", "Keys are rotated every thirty days.")):
        (tmp_path / version).mkdir()
        (tmp_path / version / "corpus.jsonl").write_text(json.dumps({"id": "keys.md", "text": text}) + "\n",
                                                         encoding="utf-8")
        built[version] = build_index(tmp_path / version / "corpus.jsonl", tmp_path / version / "index",
                                     IndexSettings(models=()))["fingerprint"]
    spec = TargetSpec(name="local", engine="embedded", index=address, source="test")
    opened = OpenedIndexes(2)

    def open_(state):
        return open_target(spec, cache=tmp_path / "cache", state=state,
                           access=TargetAccess(connection_string=azurite.connection_string), opened_indexes=opened)

    publish_index(tmp_path / "v1" / "index", address, connection_string=azurite.connection_string)
    planned = open_(None)  # a run plans on the current version, v1, and pins it
    publish_index(tmp_path / "v2" / "index", address, connection_string=azurite.connection_string)  # mid-run
    new_pin, old_pin, current = open_(built["v2"]), open_(built["v1"]), open_(None)

    assert planned.index.manifest["fingerprint"] == built["v1"] and "ninety" in planned.index.chunks[0].text
    assert new_pin.index is not planned.index
    assert new_pin.index.manifest["fingerprint"] == built["v2"] and "thirty" in new_pin.index.chunks[0].text
    assert old_pin.index is planned.index and current.index is new_pin.index
    assert opened.opens == 2 and old_pin is not planned  # each call its own target around the shared index

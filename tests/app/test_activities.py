"""The activities one by one against Azurite (no model runs here): what each reads, writes and answers,
and the collection folder's rules they stand on."""
from __future__ import annotations

import hashlib
import json
import threading
import time

import pytest

from durable_host import registered
from evaluation.run.plan import PlanContext

pytestmark = pytest.mark.azurite

GOLDEN = b'{"id": "q1", "question": "Where is alpha?", "expected": ["alpha"]}\n'
BROKEN = b'{"id": "q1", "question": "Where is alpha?", "expeted": ["alpha"]}\n'
SHA = hashlib.sha256(GOLDEN).hexdigest()
RUN = {"collection": "docs", "sha256": SHA, "run_id": "20261130T090100000Z-abcdef",
       "created_at": "2026-11-30T09:01:00+00:00"}


def call(name, job):
    from activities import golden, planning, report, searches

    for module in (golden, planning, searches, report):
        if hasattr(module, name):
            return registered(getattr(module, name))(json.loads(json.dumps(job)))
    raise KeyError(name)


# -- the collection folder ----------------------------------------------------------------------------

@pytest.mark.parametrize("blob, collection", [
    ("docs/golden.jsonl", "docs"), ("team a docs/golden.jsonl", "team a docs"), ("golden.jsonl", None),
    ("team-a/docs/golden.jsonl", None),  # collections are top-level folders only
    ("docs/Golden.jsonl", None), ("docs/golden.jsonl/x", None), ("a//b/golden.jsonl", None),
    ("../golden.jsonl", None), ("a/./golden.jsonl", None),
])
def test_only_a_golden_jsonl_inside_a_folder_belongs_to_a_collection(blob, collection):
    from evaluation.store.collections import collection_of

    assert collection_of(blob) == collection


def test_a_kept_golden_copy_is_checked_against_its_name(app):
    from evaluation.errors import StoreError
    from evaluation.store.collections import CollectionFolder

    from app.storage import collections_container

    from app import settings as app_settings

    folder = CollectionFolder(collections_container(app_settings.current_settings()), "docs")
    app.save(f"docs/golden_dataset/{SHA}.jsonl", b"something else")

    with pytest.raises(StoreError, match="does not hash to its name; delete it"):
        folder.kept_golden(SHA)


def test_working_files_are_written_read_and_discarded_beside_the_golden_copies(app):
    from evaluation.errors import StoreError

    from app import settings as app_settings
    from app.storage import collection_folder

    folder = collection_folder(app_settings.current_settings(), "docs")
    folder.write_work("run-1", "plan.json", {"questions": ["text"]})
    folder.write_work("run-1", "entries/local.keyword.bm25.json", {"ranks": {}})

    assert folder.read_work("run-1", "plan.json") == {"questions": ["text"]}
    assert app.names("docs/") == ["docs/golden_dataset/runs_in_progress/run-1/entries/local.keyword.bm25.json",
                                  "docs/golden_dataset/runs_in_progress/run-1/plan.json"]
    assert app.names("docs/retrieval/") == []  # never where runs are read
    assert folder.discard_work("run-1") == 2 and app.names("docs/") == []
    with pytest.raises(StoreError, match="run run-1 has no working file plan.json"):
        folder.read_work("run-1", "plan.json")


# -- the golden file's activities ---------------------------------------------------------------------

def test_golden_hash_gives_the_files_sha256_now_or_none(app):
    assert call("golden_hash", {"collection": "docs"}) == {"sha256": None}
    app.save("docs/golden.jsonl", GOLDEN)
    assert call("golden_hash", {"collection": "docs"}) == {"sha256": SHA}


def test_keep_golden_keeps_the_bytes_once_only_while_the_file_holds_them(app):
    app.save("docs/golden.jsonl", GOLDEN)
    assert call("keep_golden", {"collection": "docs", "sha256": SHA}) == {"kept": True}
    assert app.read(f"docs/golden_dataset/{SHA}.jsonl") == GOLDEN

    app.save("docs/golden.jsonl", BROKEN)
    assert call("keep_golden", {"collection": "docs", "sha256": SHA}) == {
        "kept": False, "sha256": hashlib.sha256(BROKEN).hexdigest()}


def test_a_golden_copy_with_errors_is_refused_and_the_refusal_kept_once(app):
    sha = hashlib.sha256(BROKEN).hexdigest()
    app.save("docs/golden.jsonl", BROKEN)
    call("keep_golden", {"collection": "docs", "sha256": sha})

    assert call("check_golden_copy", {"collection": "docs", "sha256": sha}) == {"ok": False, "errors": 2}
    job = {**RUN, "sha256": sha, "reason": None}
    first, retried = call("refuse_run", job), call("refuse_run", job)  # a retried activity saves nothing twice

    assert first == retried == {"report": f"docs/retrieval/runs/{RUN['run_id']}/report.json"}
    report = json.loads(app.read(first["report"]))
    assert report["refused"]["errors"][0] == {"line": 1, "message": report["refused"]["errors"][0]["message"]}
    assert "expeted" in report["refused"]["errors"][0]["message"]


# -- planning -------------------------------------------------------------------------------------------

def test_a_collection_without_targets_is_refused_with_the_sentence_and_nothing_written(app):
    app.save("manuals/golden.jsonl", GOLDEN)
    call("keep_golden", {"collection": "manuals", "sha256": SHA})

    answer = call("plan_evaluation", {**RUN, "collection": "manuals", "state": None})

    assert 'no targets are configured for collection "manuals"' in answer["refused"]
    assert app.names("manuals/golden_dataset/runs_in_progress/") == []


def test_a_targets_json_pointing_outside_the_apps_account_is_refused_naming_the_file(app):
    app.save("docs/golden.jsonl", GOLDEN)
    app.save("docs/targets.json", json.dumps({"targets": [
        {"name": "local", "engine": "embedded", "index": "https://attacker.blob.core.windows.net/indexes/docs"}]}).encode())
    call("keep_golden", {"collection": "docs", "sha256": SHA})

    answer = call("plan_evaluation", {**RUN, "state": None})

    assert answer["refused"].startswith("docs/targets.json: targets[0]: \"index\" must be in the app's own storage "
                                        "account")


def test_an_index_never_published_is_refused_with_the_command(app):
    app.save("docs/golden.jsonl", GOLDEN)
    call("keep_golden", {"collection": "docs", "sha256": SHA})

    answer = call("plan_evaluation", {**RUN, "state": None})

    assert "no published index here; publish one with `python3 -m evaluation index" in answer["refused"]


def planned_run(app, tmp_path):
    """A run's working files as plan_evaluation and the setup activities leave them (hand-made target)."""
    from app import settings as app_settings
    from app.storage import collection_folder
    from evaluation.run import plan_run, rank_setup, time_setups
    from fakes import ANSWERS, ListTarget

    app.save("docs/golden.jsonl", GOLDEN)
    call("keep_golden", {"collection": "docs", "sha256": SHA})
    (tmp_path / "golden.jsonl").write_bytes(GOLDEN)
    target = ListTarget("t", {m: {"Where is alpha?": ["alpha"]} for m in ANSWERS}, held={"alpha"})
    plan = plan_run(target, tmp_path / "golden.jsonl", timed=1,
                    context=PlanContext(run_id=RUN["run_id"], created_at=RUN["created_at"]))
    folder = collection_folder(app_settings.current_settings(), "docs")
    folder.write_work(RUN["run_id"], "plan.json", plan.to_json())
    folder.write_work(RUN["run_id"], "shards.json", {key: [[]] for key in plan.setup_keys})  # 1 question, timed
    for key in plan.setup_keys:
        folder.write_work(RUN["run_id"], f"entries/{key}/0.json", rank_setup(target, plan, key))
        folder.write_work(RUN["run_id"], f"times/{key}.json", time_setups({"t": target}, plan, [key])[key])
    return folder


def test_save_report_saves_once_even_when_the_activity_is_retried(app, tmp_path):
    planned_run(app, tmp_path)

    first, retried = call("save_report", {**RUN, "failures": {}}), call("save_report", {**RUN, "failures": {}})

    name = f"docs/retrieval/runs/{RUN['run_id']}/report.json"
    assert first == retried == {"saved": True, "report": name}
    assert app.names("docs/retrieval/") == [name.replace(".json", ".html"), name]  # the page beside it
    report = json.loads(app.read(name))
    assert report["golden"]["sha256"] == SHA and report["picks"]["finds_the_most"].startswith("t.")


def test_save_report_on_a_replaced_golden_file_saves_nothing(app, tmp_path):
    planned_run(app, tmp_path)
    app.save("docs/golden.jsonl", BROKEN)

    answer = call("save_report", {**RUN, "failures": {}})

    assert answer == {"saved": False, "sha256": hashlib.sha256(BROKEN).hexdigest()}
    assert app.names("docs/retrieval/") == []


def test_a_save_landing_while_the_report_is_written_leaves_no_report(app, tmp_path, monkeypatch):
    """Issue 22, probe 10: the hash matched, then a save replaced the file before the report was kept.
    The write is conditional on the ETag seen at the hash check, so nothing is left for bytes no longer
    in the file (that save's own run reports on it)."""
    from evaluation.store import blob

    planned_run(app, tmp_path)
    real = blob.write_new_blob

    def save_b_first(container, name, data):
        if name.endswith("/report.json"):
            app.save("docs/golden.jsonl", BROKEN)  # someone saves B just before the report goes in
        return real(container, name, data)

    monkeypatch.setattr(blob, "write_new_blob", save_b_first)
    answer = call("save_report", {**RUN, "failures": {}})

    assert answer == {"saved": False, "sha256": hashlib.sha256(BROKEN).hexdigest()}
    assert [n for n in app.names("docs/retrieval/") if "/runs/" in n] == []


def test_a_retried_save_report_after_a_replacing_save_takes_back_what_the_first_attempt_kept(app, tmp_path):
    planned_run(app, tmp_path)
    assert call("save_report", {**RUN, "failures": {}})["saved"]  # attempt 1 kept it, then its answer was lost
    app.save("docs/golden.jsonl", BROKEN)

    answer = call("save_report", {**RUN, "failures": {}})  # attempt 2, after B landed

    assert answer["saved"] is False and [n for n in app.names("docs/retrieval/") if "/runs/" in n] == []


def test_golden_hash_and_keep_golden_read_nothing_over_the_size_limit(app, monkeypatch):
    from app import settings as app_settings

    monkeypatch.setenv("EVALUATION_GOLDEN_MAX_BYTES", str(len(GOLDEN) - 1))
    app_settings.current_settings.cache_clear()
    app.save("docs/golden.jsonl", GOLDEN)

    assert call("golden_hash", {"collection": "docs"}) == {"sha256": None, "too_large": True}
    assert call("keep_golden", {"collection": "docs", "sha256": SHA}) == {"kept": False, "sha256": None}
    assert app.names("docs/golden_dataset/") == []


# -- the instance's cores ---------------------------------------------------------------------------------

def test_a_timed_pass_waits_for_ranking_to_finish_and_keeps_ranking_out(tmp_path):
    from activities._shared import cores
    from app.settings import AppSettings

    settings = AppSettings.from_environ({"EVALUATION_INDEX_CACHE": str(tmp_path)})
    order = []

    def rank(name, hold):
        with cores(settings, alone=False):
            order.append(f"{name} starts")
            time.sleep(hold)
            order.append(f"{name} ends")

    def timed():
        with cores(settings, alone=True):
            order.append("timing starts")
            time.sleep(0.2)
            order.append("timing ends")

    first = [threading.Thread(target=rank, args=(f"rank{n}", 0.3)) for n in (1, 2)]
    for thread in first:
        thread.start()
    time.sleep(0.1)  # both ranking activities hold the cores (shared)
    timing = threading.Thread(target=timed)
    timing.start()
    while "timing starts" not in order:
        time.sleep(0.01)
    late = threading.Thread(target=rank, args=("rank3", 0))
    late.start()  # asks while the timed pass holds the cores
    for thread in first + [timing, late]:
        thread.join()

    assert sorted(order[:2]) == ["rank1 starts", "rank2 starts"]  # shared: both hold the cores at once
    assert order.index("timing starts") > max(order.index("rank1 ends"), order.index("rank2 ends"))
    assert order.index("rank3 starts") > order.index("timing ends")


# -- with the shipped sample's index (no model runs: keyword only) -------------------------------------

@pytest.fixture
def sample_run(app, sample_index, monkeypatch):
    from app import settings as app_settings
    from evaluation.engine.published import publish_index

    publish_index(sample_index, app.address("indexes/docs"), connection_string=app.azurite.connection_string)
    sample = (sample_index.parent.parent / "samples" / "golden.jsonl").read_bytes().splitlines(keepends=True)
    data = b"".join(sample[:3])
    app.save("docs/golden.jsonl", data)
    sha = hashlib.sha256(data).hexdigest()
    call("keep_golden", {"collection": "docs", "sha256": sha})
    monkeypatch.setenv("EVALUATION_ONLY", "keyword")
    app_settings.current_settings.cache_clear()
    return {**RUN, "sha256": sha}


def test_setup_patterns_that_match_nothing_are_refused_with_the_setups_there_are(app, sample_run, monkeypatch):
    from app import settings as app_settings

    monkeypatch.setenv("EVALUATION_ONLY", "hybird")
    app_settings.current_settings.cache_clear()

    answer = call("plan_evaluation", {**sample_run, "state": None})

    assert answer["refused"].startswith('"hybird" matches no setup. Did you mean "hybrid"?')


def test_a_run_searches_the_index_version_it_planned_with_after_a_newer_one_is_published(app, sample_run, tmp_path):
    from app_fixtures import publish_fake_index

    planned = call("plan_evaluation", {**sample_run, "state": None})
    assert planned == {"setups": ["local.keyword.bm25"], "side_by_side": True, "shards": {"local.keyword.bm25": 1},
                       "reused_times": 0, "reused_ranks": [], "settled": [], "judge": False, "missing": 0}
    publish_fake_index(app, tmp_path / "newer", "indexes/docs", "9" * 64)  # an ingestion pipeline, mid-run

    ranked = call("rank_shard",
                  {"collection": "docs", "run_id": RUN["run_id"], "key": "local.keyword.bm25", "shard": 0})

    assert ranked == {"key": "local.keyword.bm25", "shard": 0, "ok": True}  # the newer "index" holds no chunks to open


def hold_cores(alone: bool, order: list, seconds: float = 1.0) -> threading.Thread:
    """Another activity holding this instance's cores (alone, or shared) for ``seconds``."""
    from app import settings as app_settings
    from activities._shared import cores

    def hold():
        with cores(app_settings.current_settings(), alone=alone):
            order.append("held")
            time.sleep(seconds)
            order.append("released")

    thread = threading.Thread(target=hold)
    thread.start()
    while "held" not in order:
        time.sleep(0.01)
    return thread


def test_ranking_waits_while_a_timed_pass_holds_the_cores(app, sample_run):
    call("plan_evaluation", {**sample_run, "state": None})
    order = []
    timing = hold_cores(True, order)

    call("rank_shard", {"collection": "docs", "run_id": RUN["run_id"], "key": "local.keyword.bm25", "shard": 0})
    order.append("ranked")
    timing.join()

    assert order == ["held", "released", "ranked"]


def test_a_timed_pass_waits_while_ranking_holds_the_cores(app, sample_run):
    call("plan_evaluation", {**sample_run, "state": None})
    call("rank_shard", {"collection": "docs", "run_id": RUN["run_id"], "key": "local.keyword.bm25", "shard": 0})
    order = []
    ranking = hold_cores(False, order)

    answer = call("time_setup", {"collection": "docs", "run_id": RUN["run_id"], "key": "local.keyword.bm25"})
    order.append("timed")
    ranking.join()

    assert order == ["held", "released", "timed"] and answer == {"key": "local.keyword.bm25", "ok": True}


def test_the_side_by_side_timed_pass_waits_for_ranking_and_keeps_each_setups_times_for_the_save(app, sample_run):
    from activities._shared import folder_of
    from evaluation.run import work_files

    call("plan_evaluation", {**sample_run, "state": None})
    call("rank_shard", {"collection": "docs", "run_id": RUN["run_id"], "key": "local.keyword.bm25", "shard": 0})
    order = []
    ranking = hold_cores(False, order)

    answer = call("time_side_by_side", {"collection": "docs", "run_id": RUN["run_id"], "keys": ["local.keyword.bm25"],
                                        "part": 0})
    order.append("timed")
    ranking.join()

    assert order == ["held", "released", "timed"] and answer["done"] is True and answer["part"] == 0
    _, folder = folder_of({"collection": "docs"})
    times = folder.read_work(RUN["run_id"], work_files.times_name("local.keyword.bm25"))
    assert times["time_pass"].startswith(RUN["run_id"] + "/") and len(times["times_ms"]) >= 1
    saved = call("save_report", {**sample_run, "failures": {}, "reused_ranks": [], "settled": []})
    assert saved["saved"] is True


def kept_golden_with_a_gone_document(app, sample_index, *, sample_questions: int) -> str:
    """The sample index published as docs; a golden file of the sample's first questions and one whose
    expected document (gone.md) the index never held, saved and kept: its sha256."""
    from evaluation.engine.published import publish_index

    publish_index(sample_index, app.address("indexes/docs"), connection_string=app.azurite.connection_string)
    sample = (sample_index.parent.parent / "samples" / "golden.jsonl").read_bytes().splitlines(keepends=True)
    data = (b"".join(sample[:sample_questions])
            + b'{"id": "gone-1", "question": "Where did it go?", "expected": ["gone.md"]}\n')
    app.save("docs/golden.jsonl", data)
    sha = hashlib.sha256(data).hexdigest()
    call("keep_golden", {"collection": "docs", "sha256": sha})
    return sha


def test_an_app_run_says_what_its_index_no_longer_holds_and_sizes_shards_from_the_newest_runs_times(
        app, sample_index, monkeypatch, make_report):
    """As the CLI does (``held_in_latest_run``): an expected document the newest run found there and this
    index lacks "no longer" holds; and that run's median search time sizes the shards."""
    from app import settings as app_settings

    sha = kept_golden_with_a_gone_document(app, sample_index, sample_questions=2)
    before = make_report("20261129T090000000Z-000001", questions={"gone-1": ["gone.md"]},
                         setups={"local.keyword.bm25": {"gone-1": ["gone.md"]}})
    from evaluation.scoring.metrics import timing_summary

    before["setups"][0]["times_ms"] = [6000.0, 6000.0, 6000.0]  # 6 s a search, measured by that run
    before["setups"][0]["summary"].update(timing_summary(before["setups"][0]["times_ms"]))
    app.save(f"docs/retrieval/runs/{before['id']}/report.json", json.dumps(before).encode())
    for name, value in (("EVALUATION_ONLY", "keyword.bm25"), ("EVALUATION_TIMED", "0"),
                        ("EVALUATION_SHARD_SECONDS", "10")):
        monkeypatch.setenv(name, value)
    app_settings.current_settings.cache_clear()

    planned = call("plan_evaluation", {**RUN, "sha256": sha, "state": None})

    # 3 questions x 6 s = 18 s of work over 10 s a shard: 2 shards (the estimate, 3 x 1 ms, gives 1)
    assert planned == {"setups": ["local.keyword.bm25"], "side_by_side": True, "shards": {"local.keyword.bm25": 2},
                       "reused_times": 0, "reused_ranks": [], "settled": [], "judge": False,
                       "missing": 1}  # gone.md
    from app.storage import collection_folder

    plan = collection_folder(app_settings.current_settings(), "docs").read_work(RUN["run_id"], "plan.json")
    assert plan["missing"]["local"]["was_held"] == ["gone.md"]
    assert plan["settings"]["timed"] == 0  # EvaluationSettings.from_app: the app's settings reach the plan


def test_an_app_run_logs_a_missing_document_once(app, sample_index, monkeypatch, caplog):
    """``plan_run`` says missing documents to ``warn`` and as a ``MissingDocumentsWarning``; the app passes
    its log as ``warn``, and a worker that logs warnings (``logging.captureWarnings``) would log the same
    sentence twice. One log record, at WARNING, and no warning left to log."""
    import logging
    import warnings

    from app import settings as app_settings

    sha = kept_golden_with_a_gone_document(app, sample_index, sample_questions=1)
    monkeypatch.setenv("EVALUATION_ONLY", "keyword.bm25")
    app_settings.current_settings.cache_clear()

    logging.captureWarnings(True)
    try:
        with caplog.at_level(logging.INFO), warnings.catch_warnings():
            warnings.simplefilter("always")
            call("plan_evaluation", {**RUN, "sha256": sha, "state": None})
    finally:
        logging.captureWarnings(False)

    said = [r for r in caplog.records if "gone.md" in r.getMessage()]
    assert [(r.name, r.levelname) for r in said] == [("app.steps", "WARNING")]  # the step both flows run

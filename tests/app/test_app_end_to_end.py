"""The Function App end to end with no Functions host: Event Grid events go to golden_changed, whose real
Durable client starts instances on ``durable_host``; the host replays evaluate_golden and runs each
activity in process, in the order the orchestrator yields them, against Azurite and the embedded
engine (the shipped sample's index, published to Blob first).

Scenarios: one save -> one report (equal to ``python3 -m evaluation evaluate`` on the same files, with
one fixed clock for both, though the app ranks every setup in shards of 2 questions); the same event twice -> one
report; three saves inside the debounce -> one report, for the last bytes; a save while the setups run -> no report for
the replaced bytes; a golden file with errors -> a refused run the runs list and ``runs show`` explain.
"""
from __future__ import annotations

import hashlib
import itertools
import time
import json

import pytest

from app_fixtures import App
from conftest import SAMPLES, run_cli
from durable_host import call_client_function, event_grid, registered
from triggers.golden_changed import golden_changed

pytestmark = [pytest.mark.azurite, pytest.mark.slow]

ROWS = (SAMPLES / "golden.jsonl").read_bytes().splitlines(keepends=True)
ONLY = ("keyword", "dense")  # four setups: BM25, each model alone, both fused (no cross-encoder: it is slow)
TIMED = 3
TIME_BUDGET = 7  # not the default: the app's setting must reach the plan as the CLI's flag does
SHARD_QUESTIONS = 2  # 8 questions, 3 timed: each setup's batch of 5 in shards of 2, 2 and 1


def golden(first: int, count: int) -> bytes:
    return b"".join(ROWS[first:first + count])


@pytest.fixture
def sample_app(app: App, sample_index, monkeypatch):
    from app import settings as app_settings
    from evaluation.engine.published import publish_index

    publish_index(sample_index, app.address("indexes/docs"), connection_string=app.azurite.connection_string)
    monkeypatch.setenv("EVALUATION_ONLY", ",".join(ONLY))
    monkeypatch.setenv("EVALUATION_TIMED", str(TIMED))
    monkeypatch.setenv("EVALUATION_TIME_BUDGET", str(TIME_BUDGET))
    monkeypatch.setenv("EVALUATION_SHARD_QUESTIONS", str(SHARD_QUESTIONS))
    app_settings.current_settings.cache_clear()
    return app


@pytest.fixture
def fixed_clock(monkeypatch):
    """Every timed search takes 1 ms, in the app and in the CLI alike: the reports can be compared whole."""
    from evaluation import evaluate
    from evaluation.run import time_setups, time_setups_part

    def ticking():
        ticks = itertools.count()
        return lambda: next(ticks) * 0.001

    monkeypatch.setitem(time_setups.__kwdefaults__, "clock", ticking())  # runs planned before side by side
    monkeypatch.setitem(time_setups_part.__kwdefaults__, "clock", ticking())  # time_side_by_side's parts
    monkeypatch.setitem(evaluate.__kwdefaults__, "clock", ticking())
    # the command line calls the core with RunHooks(progress=, warn=): its clock is the field's default
    from evaluation.evaluate import RunHooks
    defaults = dict(zip(["progress", "warn", "clock", "fetcher"], RunHooks.__init__.__defaults__, strict=True))
    assert defaults["clock"] is time.perf_counter  # the order of the fields read above
    monkeypatch.setattr(RunHooks.__init__, "__defaults__", (None, None, ticking(), None))


def save_and_deliver(app: App, data: bytes, event_id: str) -> str:
    app.save("docs/golden.jsonl", data)
    call_client_function(registered(golden_changed), client=app.client,
                         event=event_grid(app.subject("docs/golden.jsonl"), event_id=event_id))
    return hashlib.sha256(data).hexdigest()


def reports(app: App) -> list[dict]:
    return [json.loads(app.read(name)) for name in app.names("docs/retrieval/runs/") if name.endswith(".json")]


def outcomes(app: App) -> list[str]:
    return [inst.output["outcome"] for inst in app.host.instances.values()]


def test_one_save_gives_one_report_beside_the_golden_copy_equal_to_the_cli(sample_app, fixed_clock, capsys,
                                                                          monkeypatch, tmp_path):
    data = golden(0, 8)
    sha = save_and_deliver(sample_app, data, "ev-1")

    sample_app.host.run()

    [report] = reports(sample_app)
    assert sample_app.names("docs/retrieval/cache/parts/")  # the batches' vectors, for the next run's instances
    assert [n for n in sample_app.names("docs/") if not n.startswith("docs/retrieval/cache/")] == sorted([
        "docs/golden.jsonl", f"docs/golden_dataset/{sha}.jsonl", f"docs/retrieval/runs/{report['id']}/report.html",
        f"docs/retrieval/runs/{report['id']}/report.json"])
    assert sample_app.read(f"docs/golden_dataset/{sha}.jsonl") == data  # working files are gone too
    assert report["golden"]["sha256"] == sha and report["golden"]["labelled"] == 8
    assert report["rules"]["time_budget"] == TIME_BUDGET
    ranked = [job for _, name, job in sample_app.host.activity_log if name == "rank_shard"]
    assert sorted((job["key"], job["shard"]) for job in ranked) == sorted(
        (setup["key"], shard) for setup in report["setups"] for shard in range(3))  # ceil(5 / 2) = 3 each
    assert [s["key"] for s in report["setups"] if s["error"]] == []
    assert sorted(s["key"] for s in report["setups"]) == [
        "local.dense.bge-small", "local.dense.bge-small+minilm-l6", "local.dense.minilm-l6", "local.keyword.bm25"]

    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", sample_app.azurite.connection_string)
    code, out, _ = run_cli(capsys, "evaluate", "--index", sample_app.address("indexes/docs"),
                           "--golden", sample_app.address("docs/golden.jsonl"), "--only", ONLY[0], "--only", ONLY[1],
                           "--timed", str(TIMED), "--time-budget", str(TIME_BUDGET), "--index-cache",
                           str(tmp_path / "cli-cache"), "--json", "--quiet")
    assert code == 0
    cli = json.loads(out)
    # when it ran (every time was measured on the same fixed clock), and where the batches' vectors came
    # from: the app's activities each open the index, the CLI one target shares them between setups
    aside = ("id", "created_at", "cache")
    for run in (report, cli):
        assert all(isinstance(setup.pop("cache"), dict) for setup in run["setups"])
        passes = {setup.pop("time_pass") for setup in run["setups"]}  # every setup timed in the run's one pass
        assert len(passes) == 1 and passes.pop().startswith(run["id"] + "/")
    assert {k: v for k, v in report.items() if k not in aside} == {k: v for k, v in cli.items() if k not in aside}
    # the tiers, rank intervals and what to label next, said outright: the app's report is the CLI's
    assert report["tiers"]["groups"] and report["tiers"] == cli["tiers"] and report["label_next"] == cli["label_next"]

    size, what = sample_app.host.largest_payload
    print(f"largest activity payload: {size} bytes ({what})")
    assert size < 2_000  # keys, paths and hashes only: nothing near the 45 KB large-message limit


def test_the_same_event_twice_gives_one_report(sample_app):
    save_and_deliver(sample_app, golden(0, 4), "ev-1")
    call_client_function(registered(golden_changed), client=sample_app.client,
                         event=event_grid(sample_app.subject("docs/golden.jsonl"), event_id="ev-1"))
    sample_app.host.run()
    call_client_function(registered(golden_changed), client=sample_app.client,  # delivered again, hours later
                         event=event_grid(sample_app.subject("docs/golden.jsonl"), event_id="ev-1"))
    sample_app.host.run()

    assert len(reports(sample_app)) == 1 and len(sample_app.host.starts) == 1


def test_three_saves_inside_the_debounce_give_one_report_for_the_last_bytes(sample_app):
    save_and_deliver(sample_app, golden(0, 4), "ev-1")
    sample_app.host.advance(20)
    save_and_deliver(sample_app, golden(4, 4), "ev-2")
    sample_app.host.advance(20)
    last = save_and_deliver(sample_app, golden(8, 4), "ev-3")

    sample_app.host.run()

    [report] = reports(sample_app)
    assert report["golden"]["sha256"] == last
    assert sorted(outcomes(sample_app)) == ["saved", "superseded", "superseded"]
    ran = [name for _, name, _ in sample_app.host.activity_log]
    assert ran.count("golden_hash") == 3 and ran.count("plan_evaluation") == 1  # the first two stop at the hash


def test_a_save_while_the_setups_run_gets_no_report_for_the_replaced_bytes(sample_app):
    first = save_and_deliver(sample_app, golden(0, 4), "ev-1")
    newer = {}

    def save_mid_run(name, job):
        if name == "rank_shard" and not newer:
            newer["sha"] = save_and_deliver(sample_app, golden(4, 4), "ev-2")

    sample_app.host.before_activity = save_mid_run
    sample_app.host.run()

    assert [r["golden"]["sha256"] for r in reports(sample_app)] == [newer["sha"]]  # none for `first`
    replaced = next(i for i in sample_app.host.instances.values() if i.output["sha256"] == first)
    assert replaced.output["outcome"] == "superseded" and replaced.output["by"] == newer["sha"]
    assert sample_app.names("docs/golden_dataset/runs_in_progress/") == []  # its working files discarded


def test_a_golden_file_with_errors_is_a_refused_run_that_runs_list_and_show_explain(sample_app, capsys, monkeypatch):
    broken = golden(0, 2) + b'{"id": "q9", "question": "Where?", "expeted": ["x"]}\n'
    save_and_deliver(sample_app, broken, "ev-1")

    sample_app.host.run()

    [report] = reports(sample_app)
    assert report["setups"] == [] and report["picks"]["finds_the_most"] is None
    assert report["refused"]["errors"][0]["line"] == 3 and "expeted" in report["refused"]["errors"][0]["message"]
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", sample_app.azurite.connection_string)
    store = sample_app.address("docs")
    code, listed, _ = run_cli(capsys, "runs", "list", "--store", store)
    assert code == 0 and "refused: the golden file has 1 error(s)" in listed
    code, shown, _ = run_cli(capsys, "runs", "show", "latest", "--store", store)
    assert code == 0 and "was refused" in shown and 'line 3: "expeted" is not a field' in shown


def warm_save(app: App) -> tuple[dict, dict]:
    """A cold save of 8 questions, then a warm one with question 6 replaced (the timed sample, seeded:
    questions 7, 8 and 4, and the index unchanged): (cold report, warm report)."""
    save_and_deliver(app, golden(0, 8), "ev-1")
    app.host.run()
    save_and_deliver(app, golden(0, 5) + golden(9, 1) + golden(6, 2), "ev-2")
    app.host.run()
    cold, warm = sorted(reports(app), key=lambda r: r["id"])
    return cold, warm


def test_a_warm_save_reuses_the_times_and_the_unchanged_questions_results_and_searches_only_the_changed(sample_app):
    """Every activity opens its own target (on any instance), so only what Blob keeps carries one run's
    work to the next: the second save takes the first run's times (same index state and sample) and
    the results of its 7 unchanged questions (same ranking state); only the changed question is
    searched, its vectors computed once, the others' read from the shared cache in Blob."""
    cold, warm = warm_save(sample_app)

    assert warm["timed_question_ids"] == cold["timed_question_ids"]
    by_key = {s["key"]: s for s in cold["setups"]}
    changed = ROWS[9].decode()
    new_id = json.loads(changed)["id"]
    for setup in warm["setups"]:  # the times of the run that timed the same state live, and it is named
        before = by_key[setup["key"]]
        assert setup["timed_in"] == cold["id"] and setup["times_ms"] == before["times_ms"]
        assert "timed_in" not in before and "ranked_in" not in before
        unchanged = [q for q in warm["question_ids"] if q != new_id]
        assert setup["ranked_in"] == {q: cold["id"] for q in unchanged}  # 7 of 8, named by run
        assert {q: setup["results"][q] for q in unchanged} == {q: before["results"][q] for q in unchanged}
        assert setup["rank_state"] == before["rank_state"]
        assert new_id in setup["results"] and new_id not in setup["ranked_in"]  # searched in this run
    page = sample_app.read(f"docs/retrieval/runs/{warm['id']}/report.html").decode()
    assert f"run {cold['id']}, same index state" in page
    assert f"ranked in run {cold['id']}, same index state: 7 of 8 questions (the other 1 searched in this run)" in page
    # within the cold run, later setups already read the earlier ones' vectors (bge-small+minilm-l6
    # after each model alone): other activities' work, through Blob
    assert cold["cache"]["vectors_computed"] > 0 and cold["cache"]["vectors_cached"] > 0
    # warm: one question through each model, at most once per model (the first activity to need it)
    assert 0 < warm["cache"]["vectors_computed"] <= 2
    assert sample_app.names("docs/retrieval/cache/parts/")  # kept in the app's storage account
    # settled setups (times and the sample reused) had no timed pass; only the changed question's shards ran
    ran = [name for _, name, _ in sample_app.host.activity_log]
    assert ran.count("time_side_by_side") == 1 and "time_setup" not in ran  # the cold run's only: every setup at once
    assert ran.count("rank_shard") == 3 * len(cold["setups"]) + len(warm["setups"])  # shards of 2, 2, 1; then 1


def test_evaluation_retime_always_searches_and_times_a_warm_save_live(sample_app, monkeypatch):
    from app import settings as app_settings

    monkeypatch.setenv("EVALUATION_RETIME", "always")
    app_settings.current_settings.cache_clear()

    cold, warm = warm_save(sample_app)

    assert all("timed_in" not in s and "ranked_in" not in s for s in warm["setups"])
    by_key = {s["key"]: s for s in cold["setups"]}
    assert all(s["rank_state"] == by_key[s["key"]]["rank_state"] for s in warm["setups"])  # it could have

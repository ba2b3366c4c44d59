"""The sections of a kept report the views read beyond the table (ties, significance, each setup against the
top, the rules, a refusal, what a target left out), checked when the report is read: damage there is one
sentence naming the field, never a crash in ``runs show``, ``report``, ``compare`` or the page (issue 37).
Each case was found by damaging reports at random as tests/store/test_kept_files_fuzz.py does; on main ten of them
end a command in "this is a bug" and two are drawn as nonsense (a rank rule or a tie list read letter by
letter)."""
from __future__ import annotations

import json

import pytest
from test_retime import MOMENT, ROWS, Indexed

from conftest import run_cli
from evaluation import evaluate
from evaluation.errors import DamagedFileError
from evaluation.store import LocalStore
from fakes import write_golden


@pytest.fixture
def kept(tmp_path):
    """A store holding one run made by ``evaluate`` (with its ties, significance and comparisons)."""
    store = LocalStore(tmp_path / "store")
    report = evaluate(Indexed(), write_golden(tmp_path, ROWS), save_to=store, timed=2, created_at=MOMENT)
    assert report["ties"] and report["significance"] and report["setups"][1]["versus_top"]
    return store, report["id"]


def edit(store: LocalStore, run_id: str, change) -> None:
    path = store.root / "retrieval" / "runs" / run_id / "report.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    change(report)
    path.write_text(json.dumps(report), encoding="utf-8")


def tie_with_nobody(report):
    """A pick said to be tied with a faster setup, naming none (the faster one written as evaluate writes it)."""
    faster = {"key": "t.keyword.bm25", "median_ms": 0.003, "difference": -0.2, "better": 0, "worse": 1, "p": 1.0,
              "p_holm": 1.0, "tied": True, "questions_to_tell": 28}
    report["ties"]["best_for_balance"].update(tied=True, faster=[faster], **{"with": None})


CASES = {
    "a tie with no setup": (tie_with_nobody, "ties.best_for_balance.with is null, which is none of the faster setups"),
    "ties without significance": (lambda r: r.pop("significance"), "ties is kept without the significance"),
    "significance without alpha": (lambda r: r["significance"].pop("alpha"), "significance.alpha is missing"),
    "an interval of one end": (lambda r: r["setups"][1]["versus_top"]["mrr"].update(interval=[0.1]),
                               "setups[1].versus_top.mrr.interval is a list, not an interval [low, high]"),
    "a comparison without its counts": (lambda r: r["setups"][1]["versus_top"]["found@10"].pop("better"),
                                        "setups[1].versus_top.found@10.better is missing"),
    "per-question nDCG of the wrong kind": (lambda r: r["setups"][0]["ndcg_10"].update(q1={"x": 1}),
                                            "setups[0].ndcg_10.q1 is an object, not a finite number"),
    "a negative seed": (lambda r: r["rules"].update(seed=-1), "rules.seed is -1, not a whole number of 0 or more"),
    "rank_by as text": (lambda r: r["rules"].update(rank_by="found@10"), "rules.rank_by is a string, not a list"),
    "a method that is a list": (lambda r: r["setups"][0].update(method=["dense"]),
                                "setups[0].method is a list, not a string"),
    "ties on time as text": (lambda r: r["ties_on_time"].update(finds_the_most="t.dense.m"),
                             "ties_on_time.finds_the_most is a string, not a list"),
    "a refusal without its errors": (lambda r: r.update(refused={"reason": "x"}), "refused.errors is missing"),
    "what a target left out, as text": (lambda r: r["targets"]["t"].update(left_out=["hybrid"]),
                                        "targets.t.left_out[0] is a string, not an object"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_damaged_section_the_views_read_is_a_sentence_in_every_command(kept, capsys, tmp_path, case):
    store, run_id = kept
    change, says = CASES[case]
    edit(store, run_id, change)

    with pytest.raises(DamagedFileError) as caught:
        store.get(run_id)
    assert says in str(caught.value)
    for argv in (("runs", "show", run_id), ("report", run_id, "--out", str(tmp_path / "page.html")),
                 ("compare", run_id, run_id)):
        code, out, err = run_cli(capsys, *argv, "--store", str(store.root))
        assert code == 1 and says in err and "this is a bug" not in err, (argv, err)


def test_the_sections_as_evaluate_writes_them_read_back_whole(kept):
    store, run_id = kept
    assert store.get(run_id)["id"] == run_id


def test_a_sentence_about_a_kept_file_repeats_its_values_and_keys_cut_short(kept, capsys):
    """A value or a key of 100,000 characters is repeated as ``errors.shown`` repeats anything given: a
    quoted prefix and its length, so the sentence stays one short line."""
    store, run_id = kept
    edit(store, run_id, lambda r: r["setups"][0]["ndcg_10"].update({"q" * 100_000: "x" * 100_000}))

    code, out, err = run_cli(capsys, "runs", "show", run_id, "--store", str(store.root))

    assert code == 1 and len(err) < 600 and "(100,000 characters)" in err and "is a string, not a finite number" in err

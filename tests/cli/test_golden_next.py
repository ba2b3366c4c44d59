"""``golden next``: a kept run's tied top tier, turned into golden rows to fill in from the golden file."""
from __future__ import annotations

import json

import pytest

from evaluation.store.run_report import RunReport
from evaluation import evaluate
from evaluation.golden import Question, read_golden
from evaluation.golden import check_golden
from evaluation.scoring.next_template import next_template
from evaluation.store import LocalStore

from conftest import run_cli
from fakes import write_golden
from test_tier_views import N, ThreeSetups


def rows(tmp_path, *, draft=None):
    out = [{"id": f"q{i}", "question": f"where is {i}", "expected": [f"d{i}"]} for i in range(N)]
    if draft is not None:
        out[draft]["draft"] = True
    return out


@pytest.fixture
def kept(tmp_path, monkeypatch):
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)
    golden = write_golden(tmp_path, rows(tmp_path, draft=33))
    report = evaluate(ThreeSetups(), golden, save_to=LocalStore(tmp_path / "store"), timed=3)
    return report, golden, str(tmp_path / "store")


def test_golden_next_writes_each_result_to_judge_as_a_null_grade_golden_check_refuses(kept, capsys, tmp_path):
    report, golden, store = kept
    out = tmp_path / "next.jsonl"
    code, said, _ = run_cli(capsys, "golden", "next", str(golden), "--store", store, "--run", report["id"],
                            "--out", str(out))
    assert code == 0 and f"to separate t.hybrid.m, t.dense.m (run {report['id']})" in said
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_id = {row["id"]: row for row in written}
    assert by_id["q29"]["question"] == "where is 29"  # the text comes from the golden file
    assert by_id["q29"]["expected"] == {"d29": 1, "x29": None, "dense-29": None}
    assert by_id["q33"]["expected"] == {"d33": 1, "hybrid-33": None, "dense-33": None}
    assert by_id["q33"]["draft"] is True  # its own ask (check the draft) is kept beside the results to judge
    assert len(written) == len(by_id) == 7  # q29-q35, one row each
    assert "label next" in by_id["q29"]["hint"] and "t.hybrid.m and t.dense.m" in by_id["q29"]["hint"]
    checked = check_golden(str(out))
    assert not checked.ok and any("x29" in p.message for p in checked.errors)  # nothing labelled by default


def test_golden_next_refuses_to_write_over_a_file(kept, capsys, tmp_path):
    report, golden, store = kept
    out = tmp_path / "next.jsonl"
    mine = '{"question": "filled in yesterday", "expected": ["d1"]}\n'
    out.write_text(mine, encoding="utf-8")
    code, _, err = run_cli(capsys, "golden", "next", str(golden), "--store", store, "--out", str(out))
    assert code != 0 and out.read_text(encoding="utf-8") == mine and "--force" in err
    code, _, _ = run_cli(capsys, "golden", "next", str(golden), "--store", store, "--out", str(out), "--force")
    assert code == 0 and "x29" in out.read_text(encoding="utf-8")
    out.write_text("not a golden file\n", encoding="utf-8")  # never replaced, even with --force
    code, _, err = run_cli(capsys, "golden", "next", str(golden), "--store", store, "--out", str(out), "--force")
    assert code != 0 and "never written over" in err


def test_questions_without_labels_and_template_rows_are_searched_by_the_tied_setups(kept, tmp_path):
    report, golden, _ = kept
    unlabelled = [Question(id="new-1", question="where is 25"), Question(id="new-2", question="where is 5"),
                  Question(id="new-3", question="where is 31")]
    template = tmp_path / "with-template.jsonl"
    template.write_text(golden.read_text(encoding="utf-8")
                        + json.dumps({"id": "t1", "question": "", "expected": ["d29"], "hint": "about 29"}) + "\n",
                        encoding="utf-8")
    made = next_template(RunReport.from_json(report), read_golden(template), target=ThreeSetups(),
                         unlabelled=unlabelled, n=20)
    proposed = {r["question"]: r for r in made.proposal["questions"]}
    # 25 and 5: both find it, nothing to learn; 31: both miss, each returns its own unjudged document;
    # t1 (the hint "about 29" searched): hybrid finds d29, dense does not: one alone, for sure; q33, the
    # file's draft, is searched in the run already, and neither of the two finds it there
    assert set(proposed) == {"new-3", "t1", "q33"} and proposed["q33"]["kind"] == "draft"
    assert proposed["t1"]["kind"] == "template" and proposed["t1"]["score"] > proposed["new-3"]["score"]
    by_id = {row["id"]: row for row in made.rows}
    assert by_id["new-3"]["expected"] == [] and by_id["new-3"]["question"] == "where is 31"
    assert by_id["t1"]["question"] == "" and by_id["t1"]["expected"] == ["d29"]


def test_a_question_whose_text_changed_since_the_run_is_left_out(kept, tmp_path):
    report, _, _ = kept
    changed = rows(tmp_path)
    changed[29]["question"] = "where is 29 now"
    (tmp_path / "edited").mkdir()
    edited = write_golden(tmp_path / "edited", changed)
    made = next_template(RunReport.from_json(report), read_golden(edited))
    assert made.left_out == ["q29"] and "q29" not in {row["id"] for row in made.rows}


def test_nothing_is_written_when_the_run_separates_its_top(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING", raising=False)
    world = ThreeSetups()
    world.found = {"keyword": range(5), "dense": range(6), "hybrid": range(36)}  # 30 questions ahead of both
    golden = write_golden(tmp_path, rows(tmp_path))
    report = evaluate(world, golden, save_to=LocalStore(tmp_path / "store"), timed=3)
    assert report["tiers"]["groups"][0] == ["t.hybrid.m"] and report["label_next"] is None
    out = tmp_path / "next.jsonl"
    code, said, _ = run_cli(capsys, "golden", "next", str(golden), "--store", str(tmp_path / "store"),
                            "--out", str(out))
    assert code == 0 and "tier 1 holds t.hybrid.m alone" in said and not out.exists()


def test_questions_to_label_need_the_index_to_search_them_with(kept, capsys, tmp_path):
    report, golden, store = kept
    asked = tmp_path / "asked.txt"
    asked.write_text("where is 31\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "golden", "next", str(golden), "--store", store, "--out", str(tmp_path / "o.jsonl"),
                           "--questions", str(asked))
    assert code != 0 and "--index DIR or --corpus CORPUS" in err


@pytest.mark.parametrize("other", ["other ids", "every question reworded"])
def test_a_golden_file_the_run_never_read_is_refused_naming_the_file_it_read(kept, capsys, tmp_path, other):
    report, golden, store = kept
    if other == "other ids":
        changed = [{"id": "z1", "question": "Totally other question?", "expected": ["d1"]}]
    else:
        changed = [{**row, "question": row["question"] + " now"} for row in rows(tmp_path)]
    (tmp_path / "other").mkdir()
    wrong = write_golden(tmp_path / "other", changed)
    out = tmp_path / "next.jsonl"
    code, said, err = run_cli(capsys, "golden", "next", str(wrong), "--store", store, "--out", str(out))
    assert code == 2 and not out.exists() and "nothing to label" not in said
    assert (f"{wrong} is not the golden file run {report['id']} read: its sha256 is "
            f"{read_golden(wrong).sha256[:12]}, the run's {report['golden']['sha256'][:12]}") in err
    assert f"give the golden file the run read ({golden})" in err


def test_a_golden_file_edited_since_the_run_is_still_read_for_the_questions_it_shares(kept, capsys, tmp_path):
    report, _, store = kept
    changed = rows(tmp_path) + [{"id": "added", "question": "where is the new one", "expected": ["d1"]}]
    (tmp_path / "edited").mkdir()
    edited = write_golden(tmp_path / "edited", changed)
    assert read_golden(edited).sha256 != report["golden"]["sha256"]
    code, said, err = run_cli(capsys, "golden", "next", str(edited), "--store", store, "--out",
                              str(tmp_path / "next.jsonl"))
    assert code == 0 and "wrote 7 rows" in said, err


def test_a_run_that_kept_no_question_rows_is_read_for_the_ids_it_shares(kept, tmp_path):
    """A report made before question rows keeps ids alone: a golden file sharing them is the run's as far as
    the report can tell, never refused as another file."""
    report, _, _ = kept
    old = {k: v for k, v in report.items() if k != "questions"}
    changed = rows(tmp_path) + [{"id": "added", "question": "where is the new one", "expected": ["d1"]}]
    (tmp_path / "edited").mkdir()
    edited = read_golden(write_golden(tmp_path / "edited", changed))
    assert edited.sha256 != report["golden"]["sha256"]
    template = next_template(RunReport.from_json(old), edited)
    assert template.rows

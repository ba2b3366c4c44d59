"""``golden write`` end to end on the shipped sample, with a scripted model on 127.0.0.1: the rows it
writes are read by ``read_golden``, pass ``golden check`` as drafts, and, with ``draft`` removed, are
evaluated on the sample like any golden file."""
from __future__ import annotations

import json

import pytest

from evaluation import EmbeddedTarget, evaluate, open_index
from evaluation.golden import check_golden, read_golden

from chat_server import ChatServer
from conftest import run_cli
from scripted_writer import ScriptedWriter, about_any_passage

pytestmark = pytest.mark.slow


def test_golden_write_on_the_shipped_sample_drafts_rows_that_check_and_evaluate(sample_index, tmp_path, capsys):
    out, cache = tmp_path / "golden.jsonl", tmp_path / "replies.jsonl"
    model = ScriptedWriter([], generic=about_any_passage)
    with ChatServer() as server:
        server.respond = model
        argv = ("golden", "write", "--index", str(sample_index), "--out", str(out), "-n", "6", "--mix",
                "factual=1,how-to=1,multi-hop=1", "--endpoint", f"{server.base}/v1", "--model", "writer-model",
                "--auth", "none",
                "--cache", str(cache), "--similarity", "0.9", "--quiet", "--json")
        code, printed, _ = run_cli(capsys, *argv)
        assert code == 0
        done = json.loads(printed)
        assert done["rows"] == 6 and done["kinds"] == {"factual": 2, "howto": 2, "multihop": 2} and done["reused"] == 0
        calls = len(server.seen)
        assert calls == done["asked"] > 0
        # the same command again, to another file: every reply from the cache, the same rows
        again = tmp_path / "again.jsonl"
        code, printed, _ = run_cli(capsys, *argv[:5], str(again), *argv[6:])
        assert code == 0 and len(server.seen) == calls and json.loads(printed)["asked"] == 0
        assert again.read_bytes() == out.read_bytes()
    golden = read_golden(out)
    assert len(golden.questions) == golden.drafts == 6 and not golden.problems
    assert all(q.draft and q.expected and q.reference and q.evidence for q in golden.questions)
    code, printed, _ = run_cli(capsys, "golden", "check", str(out), "--index", str(sample_index))
    assert code == 0 and check_golden(out).drafts == 6
    checked = tmp_path / "checked.jsonl"
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    checked.write_text("".join(json.dumps({k: v for k, v in row.items() if k != "draft"}) + "\n" for row in rows),
                       encoding="utf-8")
    report = evaluate(EmbeddedTarget(open_index(sample_index)), checked, skip=("hybrid_reranked",))
    assert report["golden"]["labelled"] == 6 and all(report["picks"].values())


def test_golden_write_with_a_refusing_service_says_so_in_a_sentence_and_writes_nothing(sample_index, tmp_path, capsys):
    from chat_server import Reply

    out = tmp_path / "golden.jsonl"
    with ChatServer() as server:
        server.answer(Reply(403, {"error": {"message": "Principal does not have access to this deployment."}}))
        code, _, error = run_cli(capsys, "golden", "write", "--index", str(sample_index), "--out", str(out),
                                 "--endpoint", f"{server.base}/v1", "--model", "writer-model", "--auth", "none",
                                 "--quiet")
    assert code == 1 and not out.exists() and len(server.seen) == 1
    assert "the writer at" in error and "refused the request: 403 Forbidden: Principal does not have access" in error
    assert "Traceback" not in error


def test_golden_write_refuses_an_existing_file_before_building_or_asking_anything(tmp_path, capsys):
    out = tmp_path / "golden.jsonl"
    out.write_text("{}\n", encoding="utf-8")
    code, _, error = run_cli(capsys, "golden", "write", "--corpus", str(tmp_path / "nowhere.jsonl"), "--out", str(out),
                             "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--auth", "none", "--quiet")
    assert code == 1 and "already exists" in error and out.read_text(encoding="utf-8") == "{}\n"

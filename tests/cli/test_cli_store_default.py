"""``evaluate`` keeps every run without ``--save-to`` too: in ``$EVALUATION_STORE`` when set, else in
``./evaluations``, with its page beside it, and says where; ``--no-save`` keeps nothing; ``--env-file``
reads settings first, and a bad line is an error naming the file and the line."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import SAMPLES, run_cli
from evaluation.cli.env_file import read_env_file
from evaluation.errors import SettingsFileError

FAST = ["--only", "keyword", "--timed", "2", "--quiet"]


def evaluate(capsys, sample_index: Path, *flags: str) -> tuple[int, str, str]:
    return run_cli(capsys, "evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"),
                   *FAST, *flags)


def kept_runs(store: Path) -> list[str]:
    runs = store / "retrieval" / "runs"
    return sorted(p.name for p in runs.iterdir()) if runs.is_dir() else []


def saved_lines(out: str) -> tuple[str, str, str]:
    """The sentence saying where the run was kept (its wrapped lines joined), the page line, the report line."""
    lines = out.strip().splitlines()
    start = max(n for n, line in enumerate(lines) if line.startswith("Saved as run "))
    page = next(n for n in range(start, len(lines)) if lines[n].startswith("  page:"))
    return " ".join(line.strip() for line in lines[start:page]), lines[page], lines[-1]


def test_without_save_to_or_the_variable_the_run_is_kept_in_evaluations_here_with_its_page(
        sample_index, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("EVALUATION_STORE")
    monkeypatch.chdir(tmp_path)
    code, out, _ = evaluate(capsys, sample_index)
    assert code == 0
    [run_id] = kept_runs(tmp_path / "evaluations")
    saved, page, data = saved_lines(out)
    assert saved == (f"Saved as run {run_id} in evaluations (the default, as EVALUATION_STORE and "
                     "VECTRIXDB_EVALUATIONS are not set; "
                     "--save-to STORE keeps it elsewhere, --no-save keeps nothing)")
    folder = Path("evaluations") / "retrieval" / "runs" / run_id
    assert page == f"  page:   {folder / 'report.html'}"  # its file:// link on the next line
    assert (tmp_path / folder / "report.html").is_file() and data == f"  report: {folder / 'report.json'}"
    # the other commands read the same place when no --store is given
    code, out, _ = run_cli(capsys, "runs", "list", "--json")
    assert code == 0 and [row["id"] for row in json.loads(out)] == [run_id]


def test_evaluation_store_names_where_the_run_is_kept(sample_index, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EVALUATION_STORE", str(tmp_path / "kept"))
    monkeypatch.chdir(tmp_path)
    code, out, _ = evaluate(capsys, sample_index)
    assert code == 0
    [run_id] = kept_runs(tmp_path / "kept")
    assert saved_lines(out)[0].startswith(f"Saved as run {run_id} in {tmp_path / 'kept'} (from EVALUATION_STORE;")
    assert not (tmp_path / "evaluations").exists()
    code, out, _ = run_cli(capsys, "compare", run_id, "latest")  # the same store, unnamed
    assert code == 0 and out.startswith(f"Run {run_id} is compared with itself")


def test_save_to_wins_over_the_variable(sample_index, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EVALUATION_STORE", str(tmp_path / "kept"))
    code, out, _ = evaluate(capsys, sample_index, "--save-to", str(tmp_path / "named"))
    assert code == 0 and len(kept_runs(tmp_path / "named")) == 1 and not (tmp_path / "kept").exists()
    assert "(from EVALUATION_STORE" not in out


@pytest.mark.parametrize("given", [{"EVALUATION_STORE": "~/evals"}, {"VECTRIXDB_EVALUATIONS": "~/evals"},
                                   {"--save-to": "~/evals"}])
def test_a_store_named_from_home_is_kept_in_the_home_folder_never_in_a_folder_named_tilde(
        sample_index, tmp_path, monkeypatch, capsys, given):
    """``~`` reaches us unexpanded from an env file, a CI job's variables, or ``--save-to=~/evals``."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("EVALUATION_STORE")
    monkeypatch.chdir(tmp_path)
    [(name, value)] = given.items()
    if name.startswith("--"):
        code, out, _ = evaluate(capsys, sample_index, f"{name}={value}")
    else:
        monkeypatch.setenv(name, value)
        code, out, _ = evaluate(capsys, sample_index)

    assert code == 0
    [run_id] = kept_runs(tmp_path / "home" / "evals")
    assert f"Saved as run {run_id} in {tmp_path / 'home' / 'evals'}" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]  # no "~" folder here
    code, out, _ = run_cli(capsys, "runs", "list", "--json", "--store", "~/evals")
    assert code == 0 and [row["id"] for row in json.loads(out)] == [run_id]


def test_no_save_keeps_nothing_anywhere_and_says_so(sample_index, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EVALUATION_STORE", str(tmp_path / "kept"))
    monkeypatch.chdir(tmp_path)
    code, out, _ = evaluate(capsys, sample_index, "--no-save")
    assert code == 0 and "Finds the most:" in out
    assert out.strip().splitlines()[-1] == "Not saved (--no-save)."
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_no_save_and_save_to_together_are_refused_before_any_search(tmp_path, capsys):
    with pytest.raises(SystemExit) as caught:
        run_cli(capsys, "evaluate", "--index", str(tmp_path), "--golden", "g.jsonl", "--no-save",
                "--save-to", str(tmp_path / "runs"))
    assert caught.value.code == 2
    assert "argument --save-to: not allowed with argument --no-save" in capsys.readouterr().err


def test_the_env_file_is_read_before_the_run_and_its_values_replace_the_environment(
        sample_index, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EVALUATION_STORE", str(tmp_path / "from-shell"))
    settings = tmp_path / "server.env"
    settings.write_text(f"# the server's settings\nexport EVALUATION_STORE=\"{tmp_path / 'server-runs'}\"\n",
                        encoding="utf-8")
    code, out, _ = evaluate(capsys, sample_index, "--env-file", str(settings))
    assert code == 0 and len(kept_runs(tmp_path / "server-runs")) == 1
    assert not (tmp_path / "from-shell").exists()
    code, out, _ = run_cli(capsys, "runs", "list", "--env-file", str(settings), "--json")
    assert code == 0 and len(json.loads(out)) == 1


def test_a_bad_env_file_line_is_an_error_naming_the_file_and_the_line_and_nothing_runs(tmp_path, monkeypatch,
                                                                                       capsys):
    monkeypatch.setenv("EVALUATION_STORE", str(tmp_path / "kept"))
    settings = tmp_path / "server.env"
    settings.write_text("EVALUATION_STORE=/srv/runs\n\nAZURE_SEARCH_ENDPOINT https://x.search.windows.net\n",
                        encoding="utf-8")
    # the index does not exist: an error about it would mean the run started before the file was read
    code, _, err = run_cli(capsys, "evaluate", "--index", str(tmp_path / "nothing"), "--golden", "g.jsonl",
                           "--env-file", str(settings))
    assert code == 1
    assert err.splitlines()[:2] == [
        f"error: {settings}: 1 line that is not a setting; nothing was read from it:",
        f'  {settings}: line 3: AZURE_SEARCH_ENDPOINT https://x.search.windows.net has no "="; write KEY=VALUE, '
        "as in EVALUATION_STORE=/srv/evaluations"]
    import os

    assert os.environ["EVALUATION_STORE"] == str(tmp_path / "kept")  # line 1 was not applied either


def test_a_missing_env_file_names_the_nearest_one(tmp_path, capsys):
    (tmp_path / "server.env").write_text("A=1\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "evaluate", "--index", str(tmp_path), "--golden", "g.jsonl",
                           "--env-file", str(tmp_path / "server.evn"))
    assert code == 1 and err.strip() == (f'error: {tmp_path / "server.evn"}: no such settings file. '
                                         f'Did you mean "{tmp_path / "server.env"}"?')


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "settings.env"
    path.write_text(text, encoding="utf-8")
    return path


def test_env_file_values_quoted_unquoted_commented_and_exported(tmp_path):
    path = write(tmp_path, "\n".join([
        "  # a comment line",
        "PLAIN=https://acct.blob.core.windows.net/c#frag",
        "SPACED = value with spaces   # a comment after a space and #",
        'DOUBLE="two\\nlines and a \\"quote\\""  # comment',
        "SINGLE='taken as \\n written'",
        "export EXPORTED=yes",
        "EMPTY=",
        'EQUALS=a=b',
    ]) + "\n")
    assert read_env_file(path) == {
        "PLAIN": "https://acct.blob.core.windows.net/c#frag", "SPACED": "value with spaces",
        "DOUBLE": 'two\nlines and a "quote"', "SINGLE": "taken as \\n written", "EXPORTED": "yes", "EMPTY": "",
        "EQUALS": "a=b"}


@pytest.mark.parametrize("line, says", [
    ("JUST_A_NAME", 'has no "="'),
    ("1ST=x", "is not a setting's name"),
    ("MY-KEY=x", "is not a setting's name"),
    ('Q="not closed', "quote is not closed on its line"),
    ('Q="closed" and more', "follows the closing quote"),
    ('Q="\\q"', "is not an escape a settings file takes"),
    ("Q=a\x00b", "holds a NUL character"),
    ("Q='a\x00b'", "holds a NUL character"),
])
def test_every_kind_of_bad_line_is_named_with_its_line(tmp_path, line, says):
    path = write(tmp_path, f"GOOD=1\n{line}\n")
    with pytest.raises(SettingsFileError) as caught:
        read_env_file(path)
    assert f"{path}: line 2: " in str(caught.value) and says in str(caught.value)


def test_an_env_file_holding_a_nul_is_a_sentence_naming_its_line_and_sets_nothing(tmp_path, monkeypatch, capsys):
    path = write(tmp_path, "EVALUATION_STORE=" + str(tmp_path / "other") + "\nQ=st\x00ore\n")
    monkeypatch.setenv("EVALUATION_STORE", str(tmp_path / "store"))

    code, _, err = run_cli(capsys, "runs", "list", "--env-file", str(path))

    # was: "something went wrong that this tool does not expect (ValueError: embedded null byte)"
    assert code == 1 and f"{path}: line 2: Q: its value holds a NUL character" in err and "this is a bug" not in err
    assert os.environ["EVALUATION_STORE"] == str(tmp_path / "store")


def test_a_key_set_twice_is_refused_naming_both_lines_and_every_bad_line_is_listed(tmp_path):
    path = write(tmp_path, "A=1\nnonsense\nA=2\n")
    with pytest.raises(SettingsFileError) as caught:
        read_env_file(path)
    lines = str(caught.value).splitlines()
    assert lines[0] == f"{path}: 2 lines that are not a setting; nothing was read from it:"
    assert lines[2] == f"  {path}: line 3: A is set again (first on line 1); keep one of them"

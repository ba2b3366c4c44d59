from evaluation.engine.fusion import RRF_K, rrf


def test_rrf_scores_are_the_sum_of_reciprocal_ranks_with_k_60():
    fused = dict(rrf([["a", "b", "c"], ["b", "c", "d"]]))
    assert RRF_K == 60
    assert fused["a"] == 1 / (60 + 1)
    assert fused["b"] == 1 / (60 + 2) + 1 / (60 + 1)
    assert fused["c"] == 1 / (60 + 3) + 1 / (60 + 2)
    assert fused["d"] == 1 / (60 + 3)


def test_rrf_orders_by_fused_score_best_first():
    assert [d for d, _ in rrf([["a", "b", "c"], ["b", "c", "d"]])] == ["b", "c", "a", "d"]


def test_rrf_equal_scores_keep_the_order_of_the_first_list_that_holds_them():
    # x is rank 1 in list one, y rank 1 in list two: both score 1/61; x was seen first.
    assert rrf([["x"], ["y"]]) == [("x", 1 / 61), ("y", 1 / 61)]
    assert rrf([["y"], ["x"]]) == [("y", 1 / 61), ("x", 1 / 61)]


def test_rrf_with_another_k():
    assert dict(rrf([["a"], ["a"]], k=1))["a"] == 1 / 2 + 1 / 2


def test_rrf_of_nothing_is_empty():
    assert rrf([]) == [] and rrf([[], []]) == []

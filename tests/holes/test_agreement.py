"""Kappa, its interval and tau-b: equal to the libraries' numbers, and the interval holds the kappa a
noisy judge has by construction (computed from its flip rate) as often as it says."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau
from statsmodels.stats.inter_rater import cohens_kappa

from evaluation.holes.agreement import confusion, kappa, kendall_tau_b


def random_table(rng: np.random.Generator, size: int) -> list[list[int]]:
    agreeing = np.diag(rng.integers(5, 40, size))
    return (agreeing + rng.integers(0, 8, (size, size))).tolist()


@pytest.mark.parametrize("seed", range(8))
def test_plain_kappa_and_its_standard_error_are_statsmodels(seed):
    table = random_table(np.random.default_rng(seed), 2 + seed % 3)
    oracle = cohens_kappa(np.asarray(table), return_results=True)
    ours = kappa(table, "plain")
    assert ours.value == pytest.approx(oracle.kappa, abs=1e-12)
    assert ours.standard_error == pytest.approx(oracle.std_kappa, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_quadratic_weighted_kappa_and_its_standard_error_are_statsmodels(seed):
    size = 3 + seed % 3
    table = random_table(np.random.default_rng(100 + seed), size)
    oracle = cohens_kappa(np.asarray(table), wt="quadratic", return_results=True)
    ours = kappa(table, "quadratic")
    assert ours.value == pytest.approx(oracle.kappa, abs=1e-12)
    assert ours.standard_error == pytest.approx(oracle.std_kappa, abs=1e-12)


def test_chance_agreement_uses_both_raters_margins():
    # people 80 of 100 relevant, the judge 50 of 100: p_e = 0.8 * 0.5 + 0.2 * 0.5 = 0.5, not 0.8^2 + 0.2^2 = 0.68
    table = [[15, 5], [35, 45]]
    result = kappa(table)
    assert result.expected == pytest.approx(0.8 * 0.5 + 0.2 * 0.5)
    assert result.observed == pytest.approx((15 + 45) / 100)
    assert result.value == pytest.approx((0.6 - 0.5) / (1 - 0.5))


def test_the_interval_is_kappa_plus_or_minus_1_96_standard_errors():
    result = kappa([[40, 10], [5, 45]])
    z = 1.959963984540054
    assert (result.low, result.high) == pytest.approx((result.value - z * result.standard_error,
                                                       result.value + z * result.standard_error))


def test_on_a_binary_scale_weighted_kappa_is_plain_kappa():
    table = [[30, 7], [4, 59]]
    assert kappa(table, "quadratic").value == pytest.approx(kappa(table, "plain").value)


def test_weighted_kappa_credits_a_near_miss():
    near = [[10, 0, 0, 0], [0, 0, 10, 0], [0, 0, 10, 0], [0, 0, 0, 10]]   # 1 read as 2
    far = [[10, 0, 0, 0], [0, 0, 0, 10], [0, 0, 10, 0], [0, 0, 0, 10]]    # 1 read as 3
    assert kappa(near, "plain").value == pytest.approx(kappa(far, "plain").value)
    assert kappa(near, "quadratic").value > kappa(far, "quadratic").value


def test_kappa_is_not_defined_when_every_label_is_one_grade():
    assert kappa([[0, 0], [0, 30]]).value is None
    assert kappa([[0, 0], [0, 0]]).value is None


def test_the_confusion_matrix_counts_people_by_row_and_judge_by_column():
    assert confusion([0, 0, 1, 1, 1], [0, 1, 1, 1, 0], (0, 1)) == [[1, 1], [1, 2]]


@pytest.mark.parametrize("seed", range(12))
def test_tau_b_is_scipys(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, 7).tolist()  # ties on purpose
    y = rng.integers(0, 5, 7).tolist()
    expected = kendalltau(x, y).statistic
    ours = kendall_tau_b(x, y)
    if math.isnan(expected):
        assert ours is None
    else:
        assert ours == pytest.approx(expected, abs=1e-12)


def test_tau_b_by_hand():
    # 4 setups: one pair discordant, one pair tied on the second side: (4 - 1) / sqrt(6 * 5)
    assert kendall_tau_b([4, 3, 2, 1], [4, 2, 4, 1]) == pytest.approx((4 - 1) / math.sqrt(6 * 5))


# -- coverage: the interval holds the kappa a noisy judge has by construction -----------------------------

def binary_truth(prevalence: float, p: float) -> float:
    """Kappa of a judge that flips each binary label with probability p, people's share of 1s ``prevalence``."""
    judge_ones = prevalence * (1 - p) + (1 - prevalence) * p
    chance = prevalence * judge_ones + (1 - prevalence) * (1 - judge_ones)
    return ((1 - p) - chance) / (1 - chance)


def graded_truth(margins: list[float], p: float) -> float:
    """Quadratic weighted kappa of a judge that, with probability p, says another grade at random."""
    size = len(margins)
    joint = np.array([[m * ((1 - p) if i == j else p / (size - 1)) for j in range(size)]
                      for i, m in enumerate(margins)])
    steps = np.arange(size)
    w = 1 - (steps[:, None] - steps[None, :]) ** 2 / (size - 1) ** 2
    rows, cols = joint.sum(1), joint.sum(0)
    observed, chance = (w * joint).sum(), (w * np.outer(rows, cols)).sum()
    return (observed - chance) / (1 - chance)


def noisy_labels(rng: np.random.Generator, people: np.ndarray, p: float, grades: int) -> np.ndarray:
    flip = rng.random(len(people)) < p
    other = (people + rng.integers(1, grades, len(people))) % grades  # another grade, each alike
    return np.where(flip, other, people)


@pytest.mark.parametrize("p", [0.1, 0.25])
def test_the_binary_interval_holds_the_true_kappa_in_95_percent_of_slices(p):
    people = np.array([1] * 60 + [0] * 40)
    truth = binary_truth(0.6, p)
    held = 0
    for seed in range(200):
        judge = noisy_labels(np.random.default_rng(seed), people, p, 2)
        result = kappa(confusion(people.tolist(), judge.tolist(), (0, 1)))
        held += result.low <= truth <= result.high
    assert held >= 0.9 * 200, f"held the truth {truth:.3f} in {held} of 200"


def test_the_weighted_interval_holds_the_true_weighted_kappa_in_95_percent_of_slices():
    people = np.array([0] * 40 + [1] * 25 + [2] * 20 + [3] * 15)
    truth = graded_truth([0.4, 0.25, 0.2, 0.15], 0.2)
    held = 0
    for seed in range(200):
        judge = noisy_labels(np.random.default_rng(seed), people, 0.2, 4)
        result = kappa(confusion(people.tolist(), judge.tolist(), (0, 1, 2, 3)), "quadratic")
        held += result.low <= truth <= result.high
    assert held >= 0.9 * 200, f"held the truth {truth:.3f} in {held} of 200"

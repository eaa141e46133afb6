"""pass@k and the bootstrap against values computed by hand."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import pytest

from classforge_bench.benchmark.passk import bootstrap_ci, pass_at_k


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # 1 - C(3,1)/C(5,1) = 1 - 3/5
        (5, 2, 3, 0.9),  # 1 - C(3,3)/C(5,3) = 1 - 1/10
        (5, 2, 5, 1.0),  # n - c < k: every draw holds a correct sample
        (10, 3, 5, 231 / 252),  # 1 - C(7,5)/C(10,5) = 1 - 21/252
        (200, 1, 100, 0.5),  # C(199,100)/C(200,100) = 100/200
        (1, 1, 1, 1.0),
        (1, 0, 1, 0.0),
    ],
)
def test_pass_at_k_hand_values(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_no_correct_sample_is_zero_and_all_correct_is_one(k):
    assert pass_at_k(5, 0, k) == 0.0
    assert pass_at_k(5, 5, k) == 1.0


def test_stable_form_matches_exact_combinatorics_for_large_n():
    for n, c, k in [(100, 7, 10), (300, 150, 50), (1000, 2, 999)]:
        exact = 1 - Fraction(comb(n - c, k), comb(n, k))
        assert pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-9)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (5, 2, 6, "undefined with n=5"),
        (5, 2, 0, "undefined with n=5"),
        (5, 6, 1, "must lie in"),
        (5, -1, 1, "must lie in"),
        (0, 0, 1, "at least one sample"),
    ],
)
def test_pass_at_k_rejects_what_is_undefined(n, c, k, message):
    with pytest.raises(ValueError, match=message):
        pass_at_k(n, c, k)


def test_bootstrap_of_a_constant_is_that_constant():
    assert bootstrap_ci([0.7] * 12, n_resamples=500) == pytest.approx((0.7, 0.7))


def test_bootstrap_two_points_hand_computed():
    # a resample of [0, 1] has mean 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4:
    # the 2.5th percentile is 0 and the 97.5th is 1
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


def test_bootstrap_rare_success_hand_computed():
    # 1 success in 20 tasks: the resampled count X ~ Binomial(20, 1/20).
    # P(X = 0) = 0.358 > 2.5%, so the low end is 0; P(X <= 2) = 0.925 < 97.5% <= P(X <= 3) = 0.984,
    # so the high end is 3/20.
    low, high = bootstrap_ci([0.0] * 19 + [1.0], n_resamples=10_000, seed=0)
    assert (low, high) == (0.0, pytest.approx(0.15))


def test_bootstrap_is_seeded_and_deterministic():
    values = [0.013 * i**2 + 0.007 * i for i in range(15)]
    assert bootstrap_ci(values, n_resamples=300, seed=7) == bootstrap_ci(values, n_resamples=300, seed=7)
    assert bootstrap_ci(values, n_resamples=300, seed=7) != bootstrap_ci(values, n_resamples=300, seed=8)
    low, high = bootstrap_ci(values, seed=7)
    assert low < sum(values) / len(values) < high


def test_bootstrap_with_a_custom_stat_over_groups():
    # method level: tasks are resampled, their methods pooled
    groups = [[1.0, 1.0], [0.0], [1.0, 0.0, 1.0]]

    def pooled(gs):
        flat = [v for g in gs for v in g]
        return sum(flat) / len(flat)

    low, high = bootstrap_ci(groups, pooled, n_resamples=2000, seed=1)
    assert 0.0 <= low <= pooled(groups) <= high <= 1.0
    assert bootstrap_ci(groups, pooled, n_resamples=2000, seed=1) == (low, high)


def test_bootstrap_rejects_bad_arguments():
    with pytest.raises(ValueError):
        bootstrap_ci([])
    with pytest.raises(ValueError):
        bootstrap_ci([1.0], n_resamples=0)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0], confidence=1.0)


def test_the_vectorised_ratio_bootstrap_draws_the_resamples_of_the_generic_one():
    import random

    from classforge_bench.benchmark.passk import bootstrap_ratio_ci

    rng = random.Random(3)
    groups = [[rng.random() for _ in range(rng.randint(1, 6))] for _ in range(40)]
    pooled = lambda gs: sum(sum(g) for g in gs) / sum(len(g) for g in gs)  # noqa: E731
    generic = bootstrap_ci(groups, pooled, n_resamples=2000, seed=5)
    assert bootstrap_ratio_ci(
        [sum(g) for g in groups], [len(g) for g in groups], n_resamples=2000, seed=5
    ) == pytest.approx(generic, abs=1e-12)
    parts = [(0, 0), (2, 3), (0, 0), (1, 4)]  # tasks without any dependency: a resample of only those counts 0
    ratio = lambda ps: sum(h for h, _ in ps) / sum(t for _, t in ps) if sum(t for _, t in ps) else 0.0  # noqa: E731
    assert bootstrap_ratio_ci([h for h, _ in parts], [t for _, t in parts], n_resamples=500, seed=2) == pytest.approx(
        bootstrap_ci(parts, ratio, n_resamples=500, seed=2), abs=1e-12
    )
    with pytest.raises(ValueError, match="different lengths"):
        bootstrap_ratio_ci([1.0], [1.0, 2.0])

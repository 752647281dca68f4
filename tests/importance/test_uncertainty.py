"""Intervals of F_j (Wilson score, continuity-corrected), of ranks and of a region's r."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

import flex_core as fc
from flex_core._uncertainty import frequency_intervals, pearson_interval, rank_intervals, wilson_interval
from flex_core.importance import bootstrap_counts, bootstrap_means

Z = 1.959963984540054  # the 97.5th percentile of the standard normal


def local_frequencies(n_rows: int, seed: int = 0) -> np.ndarray:
    """f_j(i) of n_rows factuals for three features of clearly different typical size, 10 counterfactuals each."""
    rng = np.random.default_rng(seed)
    return rng.binomial(10, [0.6, 0.3, 0.1], size=(n_rows, 3)) / 10


# -- F_j: worked by hand -----------------------------------------------------------------------
def test_five_factuals_that_never_change_a_feature_by_hand():
    # Plain Wilson at p̂ = 0: [0, z²/(n + z²)].
    plain = Z**2 / (5 + Z**2)
    np.testing.assert_allclose(wilson_interval(0.0, 5, continuity=0), [0.0, plain])
    assert plain == pytest.approx(0.4345, abs=5e-5)
    # With the continuity correction (Newcombe 1998's closed form at p̂ = 0): (z² + 1 + z·sqrt(z² + 2 - 1/n)) / (2(n + z²)).
    corrected = (Z**2 + 1 + Z * np.sqrt(Z**2 + 2 - 1 / 5)) / (2 * (5 + Z**2))
    np.testing.assert_allclose(wilson_interval(0.0, 5), [0.0, corrected])
    assert corrected == pytest.approx(0.5371, abs=5e-5)
    # The same through frequency_intervals: five factuals that never changed it, no collapse to [0, 0].
    ci, _ = frequency_intervals(np.zeros((5, 2)))
    np.testing.assert_allclose(ci, [[0.0, corrected], [0.0, corrected]])
    # All five changed it: the mirror image.
    np.testing.assert_allclose(frequency_intervals(np.ones((5, 1)))[0], [[1 - corrected, 1.0]])


def test_newcombes_published_examples():
    # Newcombe (1998), Stat. Med. 17:857, Table II: score (Wilson) and continuity-corrected score intervals.
    cases = {
        (81, 263): ([0.2553, 0.3662], [0.2535, 0.3682]),
        (15, 148): ([0.0624, 0.1605], [0.0598, 0.1644]),
        (0, 20): ([0.0, 0.1611], [0.0, 0.2005]),
        (1, 29): ([0.0061, 0.1718], [0.0018, 0.1963]),
    }
    for (x, n), (plain, corrected) in cases.items():
        np.testing.assert_allclose(wilson_interval(x / n, n, continuity=0), plain, atol=5e-5)
        np.testing.assert_allclose(wilson_interval(x / n, n), corrected, atol=5e-5)


def test_an_immutable_feature_that_never_changed_is_zero_by_construction():
    local = np.column_stack([np.ones(5), np.zeros(5), np.zeros(5)])
    ci, ranks = frequency_intervals(local, fixed=np.array([False, False, True]))
    np.testing.assert_array_equal(ci[2], [0.0, 0.0])
    assert ci[1, 1] > 0.5  # a mutable feature that happened not to change is not
    np.testing.assert_array_equal(ranks[2], [2, 3])  # it cannot beat the first; it may tie with the second


# -- F_j: properties -------------------------------------------------------------------------
def _random_locals(rng, count=300):
    for _ in range(count):
        n = int(rng.integers(1, 60))
        n_cf = int(rng.integers(1, 12))
        shape = (n, int(rng.integers(1, 8)))
        kind = rng.integers(0, 3)
        if kind == 0:
            yield rng.binomial(n_cf, rng.uniform(0, 1, shape[1]), size=shape) / n_cf
        elif kind == 1:
            yield (rng.random(shape) < rng.choice([0.0, 0.02, 0.98, 1.0])).astype(float)  # mostly all 0 or all 1
        else:
            yield rng.random(shape)


def test_interval_holds_the_estimate_stays_in_0_1_and_ignores_the_order_of_factuals():
    rng = np.random.default_rng(7)
    for local in _random_locals(rng):
        ci, ranks = frequency_intervals(local)
        estimate = local.mean(axis=0)
        assert np.all(ci[:, 0] <= estimate) and np.all(estimate <= ci[:, 1])
        assert np.all(ci >= 0) and np.all(ci <= 1) and np.all(ci[:, 0] <= ci[:, 1])
        shuffled = frequency_intervals(local[rng.permutation(len(local))])
        np.testing.assert_allclose(shuffled[0], ci, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(shuffled[1], ranks)
        point = rankdata(-estimate, method="min")  # FlexResult.rank's rule
        assert np.all(ranks[:, 0] <= point) and np.all(point <= ranks[:, 1])


def test_intervals_shrink_as_factuals_grow_and_widen_with_the_level():
    small, _ = frequency_intervals(local_frequencies(30))
    large, _ = frequency_intervals(local_frequencies(600))
    assert np.all(large[:, 1] - large[:, 0] < 0.5 * (small[:, 1] - small[:, 0]))
    wide, _ = frequency_intervals(local_frequencies(30), level=0.99)
    assert np.all(wide[:, 0] <= small[:, 0]) and np.all(wide[:, 1] >= small[:, 1])


def test_factuals_without_counterfactuals_are_left_out():
    local = local_frequencies(40)
    with_empty = np.vstack([local, np.full((3, 3), np.nan)])
    np.testing.assert_array_equal(frequency_intervals(with_empty)[0], frequency_intervals(local)[0])
    empty_ci, empty_ranks = frequency_intervals(np.full((2, 3), np.nan))
    assert np.isnan(empty_ci).all() and np.isnan(empty_ranks).all()


def test_coverage_on_a_planted_bernoulli_mixture_at_five_factuals():
    # Factuals of two kinds: a feature is changed by most counterfactuals of one kind and by few of the
    # other, so f_j(i) is mostly 0 or 1 and five factuals are often all 0 or all 1. Truth: the mixture's mean.
    rng = np.random.default_rng(0)
    n, n_cf, runs = 5, 4, 2000
    share = np.array([0.9, 0.5, 0.1, 0.03, 0.6])  # of factuals of the first kind, per feature
    q_first, q_second = np.array([1.0, 0.9, 0.8, 1.0, 0.3]), np.array([0.0, 0.1, 0.0, 0.0, 0.05])
    truth = share * q_first + (1 - share) * q_second
    first = rng.random((runs, n, len(share))) < share
    local = rng.binomial(n_cf, np.where(first, q_first, q_second)) / n_cf
    mean = local.mean(axis=1)
    ci = wilson_interval(mean, n)
    coverage = ((ci[..., 0] <= truth) & (truth <= ci[..., 1])).mean(axis=0)
    assert np.all(coverage >= 0.9), coverage


# -- ranks ---------------------------------------------------------------------------------------
def test_rank_intervals_from_f_intervals_by_hand():
    ci = np.array([[0.6, 0.9], [0.5, 0.7], [0.1, 0.3], [0.0, 0.0], [np.nan, np.nan]])
    np.testing.assert_array_equal(
        rank_intervals(ci), [[1, 2], [1, 2], [3, 3], [4, 4], [np.nan, np.nan]]
    )
    # Touching bounds may tie, and ties share the best rank: no feature is pushed below the other.
    np.testing.assert_array_equal(rank_intervals(np.array([[0.5, 0.8], [0.2, 0.5]])), [[1, 1], [1, 2]])


def test_well_separated_features_get_single_ranks_and_close_ones_share():
    _, ranks = frequency_intervals(local_frequencies(200))
    np.testing.assert_array_equal(ranks, [[1, 1], [2, 2], [3, 3]])
    rng = np.random.default_rng(1)
    local = rng.binomial(10, [0.50, 0.49, 0.1], size=(40, 3)) / 10
    _, ranks = frequency_intervals(local)
    np.testing.assert_array_equal(ranks[:2], [[1, 2], [1, 2]])  # indistinguishable: each is 1st or 2nd
    np.testing.assert_array_equal(ranks[2], [3, 3])


# -- a region's Pearson r ------------------------------------------------------------------------
def test_r_interval_holds_r_and_matches_its_formula():
    regional, global_ = np.array([0.8, 0.2, 0.4, 0.0]), np.array([0.7, 0.1, 0.2, 0.3])
    include = np.ones(4, bool)
    r, _, _ = fc.importance.compare_with_global(regional, global_, include)
    low, high = pearson_interval(regional, 12, global_, include)
    assert -1 <= low < r < high <= 1
    # By hand: the gradient of r, finite differences; its positive part bounds the error's spread.
    eps, grad = 1e-6, np.zeros(4)
    for j in range(4):
        bumped = regional.copy()
        bumped[j] += eps
        grad[j] = (fc.importance.compare_with_global(bumped, global_, include)[0] - r) / eps
    assert abs(grad.sum()) < 1e-4  # r ignores a shift of the regional F
    half = Z * grad[grad > 0].sum() / np.sqrt(12)
    assert (low, high) == pytest.approx((r - half, 1.0), abs=1e-5)  # cut at 1
    half = Z * grad[grad > 0].sum() / np.sqrt(200)
    assert pearson_interval(regional, 200, global_, include) == pytest.approx((r - half, r + half), abs=1e-5)
    # More factuals, a narrower interval.
    low40, high40 = pearson_interval(regional, 40, global_, include)
    assert high40 - low40 < high - low


def test_no_honest_r_interval_is_nan():
    global_ = np.array([0.7, 0.1, 0.2, 0.3])
    include = np.ones(4, bool)
    assert all(np.isnan(pearson_interval(np.full(4, 0.5), 5, global_, include)))  # constant regional F: r undefined
    assert all(np.isnan(pearson_interval(np.array([0.8, 0.2, 0.4, 0.0]), 1, global_, include)))  # one factual
    assert all(np.isnan(pearson_interval(np.array([0.8, 0.2, 0.4, 0.0]), 5, global_, np.array([1, 1, 0, 0], bool))))


def test_r_interval_coverage_on_a_planted_mixture():
    rng = np.random.default_rng(3)
    n, runs, n_cf = 5, 400, 4
    kinds = np.array([[0.9, 0.1, 0.6, 0.0, 0.2, 0.05], [0.2, 0.8, 0.1, 0.3, 0.0, 0.1]])  # per-kind change rates
    weight = 0.7
    truth = weight * kinds[0] + (1 - weight) * kinds[1]
    global_ = np.array([0.6, 0.5, 0.1, 0.2, 0.3, 0.0])
    include = np.ones(6, bool)
    true_r = fc.importance.compare_with_global(truth, global_, include)[0]
    covered = 0
    for _ in range(runs):
        kind = (rng.random(n) >= weight).astype(int)
        regional = (rng.binomial(n_cf, kinds[kind]) / n_cf).mean(axis=0)
        low, high = pearson_interval(regional, n, global_, include)
        covered += bool(low <= true_r <= high) if not np.isnan(low) else False
    assert covered / runs >= 0.9


# -- results carry them ------------------------------------------------------------------------
def test_resample_means_by_hand():  # the FLEX-SHAP agreement's bootstrap
    local = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    counts = np.array([[3, 0, 0], [1, 1, 1], [0, 2, 1]], dtype=float)
    np.testing.assert_allclose(bootstrap_means(local, counts), [[1.0, 0.0], [0.5, 0.5], [0.5 / 3, 2.5 / 3]])
    draws = bootstrap_counts(7, n_boot=50, seed=3)
    assert draws.shape == (50, 7) and np.all(draws.sum(axis=1) == 7)


def test_flex_result_carries_intervals_and_their_settings(toy_task, toy_model):
    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.make_generator("batch"), n_cf=4, seed=0)
    result = fc.importance.run_global(store, n_factuals=20)
    again = fc.importance.run_global(store, n_factuals=20)
    np.testing.assert_array_equal(result.frequency_ci, again.frequency_ci)
    assert result.config["intervals"]["method"] == "wilson-cc" and result.config["intervals"]["level"] == 0.95
    assert "bootstrap" not in result.config
    inside = (result.frequency_ci[:, 0] <= result.frequency_mean) & (result.frequency_mean <= result.frequency_ci[:, 1])
    assert inside.all()
    frame = result.to_frame()
    assert {"frequency_ci_low", "frequency_ci_high", "rank_best", "rank_worst", "necessary_frequency"} <= set(frame)
    record = result.to_dict()["features"][0]
    assert len(record["frequency_ci"]) == 2 and all(isinstance(v, int) for v in record["rank_interval"])
    cfset = store.ensure(result.query_index)
    assert fc.importance.flex_importance(cfset, toy_task, intervals=False).frequency_ci is None


def test_only_necessary_redraws_its_own_intervals(toy_task, toy_model):
    store = fc.counterfactuals.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.make_generator("batch"), n_cf=4, seed=0)
    result = fc.importance.run_global(store, n_factuals=20)
    only = result.only_necessary()
    lo, hi = only.frequency_ci[:, 0], only.frequency_ci[:, 1]
    assert np.all(lo <= only.frequency_mean) and np.all(only.frequency_mean <= hi)
    np.testing.assert_array_equal(only.frequency_ci, frequency_intervals(result.local_necessary)[0])

"""Bootstrap intervals of F_j and of ranks over the factuals."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

import flex_core as fc
from flex_core.importance import bootstrap_counts, bootstrap_means, frequency_intervals


def local_frequencies(n_rows: int, seed: int = 0) -> np.ndarray:
    """f_j(i) of n_rows factuals for three features of clearly different typical size, 10 counterfactuals each."""
    rng = np.random.default_rng(seed)
    return rng.binomial(10, [0.6, 0.3, 0.1], size=(n_rows, 3)) / 10


def test_resample_means_by_hand():
    local = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    counts = np.array([[3, 0, 0], [1, 1, 1], [0, 2, 1]], dtype=float)
    np.testing.assert_allclose(bootstrap_means(local, counts), [[1.0, 0.0], [0.5, 0.5], [0.5 / 3, 2.5 / 3]])
    draws = bootstrap_counts(7, n_boot=50, seed=3)
    assert draws.shape == (50, 7) and np.all(draws.sum(axis=1) == 7)


def test_intervals_contain_the_estimate_and_the_rank():
    local = local_frequencies(60)
    ci, ranks = frequency_intervals(local, seed=0)
    estimate = local.mean(axis=0)
    assert np.all(ci[:, 0] <= estimate) and np.all(estimate <= ci[:, 1])
    np.testing.assert_array_equal(ranks, [[1, 1], [2, 2], [3, 3]])  # well separated: always the same ranks


def test_intervals_shrink_as_factuals_grow():
    small, _ = frequency_intervals(local_frequencies(30), seed=0)
    large, _ = frequency_intervals(local_frequencies(600), seed=0)
    assert np.all(large[:, 1] - large[:, 0] < 0.5 * (small[:, 1] - small[:, 0]))


def test_close_features_get_overlapping_rank_intervals_that_contain_their_rank():
    rng = np.random.default_rng(1)
    local = rng.binomial(10, [0.50, 0.49, 0.1], size=(40, 3)) / 10
    ci, ranks = frequency_intervals(local, seed=0)
    point = rankdata(-local.mean(axis=0), method="min")  # FlexResult.rank's rule
    assert np.all(ranks[:, 0] <= point) and np.all(point <= ranks[:, 1])
    np.testing.assert_array_equal(ranks[:2], [[1, 2], [1, 2]])  # indistinguishable: each is 1st or 2nd
    np.testing.assert_array_equal(ranks[2], [3, 3])


def test_seeded_and_factuals_without_counterfactuals_left_out():
    local = local_frequencies(40)
    a = frequency_intervals(local, seed=5)
    b = frequency_intervals(local, seed=5)
    c = frequency_intervals(local, seed=6)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    with_empty = np.vstack([local, np.full((1, 3), np.nan)])
    ci, _ = frequency_intervals(with_empty, seed=5)
    assert not np.isnan(ci).any()
    empty_ci, empty_ranks = frequency_intervals(np.full((2, 3), np.nan))
    assert np.isnan(empty_ci).all() and np.isnan(empty_ranks).all()


def test_flex_result_carries_intervals_and_their_settings(toy_task, toy_model):
    store = fc.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.make_generator("batch"), n_cf=4, seed=0)
    result = fc.run_global(store, n_factuals=20)
    again = fc.run_global(store, n_factuals=20)
    np.testing.assert_array_equal(result.frequency_ci, again.frequency_ci)
    assert result.config["bootstrap"] == {"n_boot": 1000, "level": 0.95, "seed": 0, "over": "factuals"}
    inside = (result.frequency_ci[:, 0] <= result.frequency_mean + 1e-12) & (result.frequency_mean <= result.frequency_ci[:, 1] + 1e-12)
    assert inside.all()
    frame = result.to_frame()
    assert {"frequency_ci_low", "frequency_ci_high", "rank_best", "rank_worst", "necessary_frequency"} <= set(frame)
    record = result.to_dict()["features"][0]
    assert len(record["frequency_ci"]) == 2 and all(isinstance(v, int) for v in record["rank_interval"])
    assert fc.flex_importance(store.ensure(result.query_index), toy_task, n_boot=0).frequency_ci is None


def test_only_necessary_redraws_its_own_intervals(toy_task, toy_model):
    store = fc.CounterfactualStore(toy_task, toy_model, fc.counterfactuals.make_generator("batch"), n_cf=4, seed=0)
    result = fc.run_global(store, n_factuals=20)
    only = result.only_necessary()
    lo, hi = only.frequency_ci[:, 0], only.frequency_ci[:, 1]
    assert np.all(lo <= only.frequency_mean + 1e-12) and np.all(only.frequency_mean <= hi + 1e-12)

"""Counterfactual quality measures against a hand-computed example."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals._quality import diversity, feature_mad, mixed_distances, plausibility, proximity, sparsity

NAN = np.nan


@pytest.fixture(scope="module")
def task():
    frame = pd.DataFrame(
        {"x": [1.0, 2.0, 3.0, 4.0, 100.0, 5.0], "c": ["a", "b", "c", "a", "b", "c"], "y": ["bad", "good"] * 3}
    )
    return fc.make_task(frame, target="y", undesirable="bad", name="quality-example")


@pytest.fixture(scope="module")
def cfset(task):
    """Two queries, n_cf = 2; the second query's second slot is empty. Codes: x value, c level index."""
    assert task.feature_names == ["x", "c"] and task.feature("c").categories == ("a", "b", "c")
    factuals = np.array([[1.0, 0.0], [5.0, 1.0]])
    cfs = np.array(
        [
            [[3.0, 0.0], [1.0, 2.0]],  # x +2 only; c a->c only
            [[2.0, 0.0], [NAN, NAN]],  # x -3 and c b->a; empty slot
        ]
    )
    found = np.array([[True, True], [True, False]])
    return fc.counterfactuals.CounterfactualSet(("x", "c"), np.array([10, 11]), factuals, cfs, found, found.copy(), "hand", 0.0)


MAD = np.array([2.0, 1.0])


def test_feature_mad_is_the_median_absolute_deviation(task):
    codes = np.array([[1.0, 0], [2.0, 1], [3.0, 2], [4.0, 0], [100.0, 1]])
    # x: median 3, deviations 2, 1, 0, 1, 97 -> median 1. Categorical features get 1.
    np.testing.assert_allclose(feature_mad(task, codes), [1.0, 1.0])
    # A constant column has MAD 0, which would divide by zero: it falls back to 1.
    np.testing.assert_allclose(feature_mad(task, np.array([[7.0, 0], [7.0, 1], [7.0, 2]])), [1.0, 1.0])
    np.testing.assert_allclose(feature_mad(task, np.array([[0.0, 0], [4.0, 0], [10.0, 0]])), [4.0, 1.0])


def test_mixed_distance(task):
    # |3 - 1| / 2 + (0 != 2) = 1 + 1
    assert mixed_distances(np.array([3.0, 0.0]), np.array([1.0, 2.0]), task, mad=MAD) == pytest.approx(2.0)


def test_sparsity_counts_changed_features_of_valid_counterfactuals(task, cfset):
    assert sparsity(cfset, task) == pytest.approx((1 + 1 + 2) / 3)


def test_proximity_is_the_mean_distance_to_the_factual(task, cfset):
    # 2/2 = 1; one mismatch = 1; 3/2 + 1 = 2.5
    assert proximity(cfset, task, mad=MAD) == pytest.approx((1 + 1 + 2.5) / 3)


def test_diversity_uses_queries_with_two_or_more_counterfactuals(task, cfset):
    # Only query 0 has two: |3 - 1| / 2 + 1 = 2.
    assert diversity(cfset, task, mad=MAD) == pytest.approx(2.0)


def test_plausibility_is_the_distance_to_the_nearest_reference_row(task, cfset):
    reference = np.array([[3.0, 0.0], [0.0, 2.0]])
    # [3,a] is a reference row: 0. [1,c] -> [0,c]: 0.5. [2,a] -> [3,a]: 0.5.
    assert plausibility(cfset, task, reference, mad=MAD) == pytest.approx((0 + 0.5 + 0.5) / 3)


def test_invalid_counterfactuals_are_left_out_and_none_gives_nan(task, cfset):
    only_first = fc.counterfactuals.CounterfactualSet(
        cfset.feature_names, cfset.query_index, cfset.factuals, cfset.counterfactuals,
        cfset.found, np.array([[True, False], [False, False]]), "hand", 0.0,
    )
    assert sparsity(only_first, task) == pytest.approx(1.0)
    assert proximity(only_first, task, mad=MAD) == pytest.approx(1.0)
    assert math.isnan(diversity(only_first, task, mad=MAD))
    none = fc.counterfactuals.CounterfactualSet(
        cfset.feature_names, cfset.query_index, cfset.factuals, cfset.counterfactuals,
        cfset.found, np.zeros((2, 2), bool), "hand", 0.0,
    )
    assert math.isnan(sparsity(none, task)) and math.isnan(proximity(none, task, mad=MAD))
    assert math.isnan(plausibility(none, task, np.array([[0.0, 0.0]]), mad=MAD))


def test_counterfactual_quality_on_a_real_run(synthetic_task, synthetic_model):
    rows = fc.counterfactuals.factual_rows(synthetic_task, synthetic_model)[:8]
    result = fc.counterfactuals.BatchGenerator().generate(synthetic_model, synthetic_task, synthetic_task.frame.loc[rows], n_cf=3, seed=0)
    quality = fc.counterfactuals.counterfactual_quality(result, synthetic_task, synthetic_model)
    assert quality["validity"] == 1.0 and 0 <= quality["coverage"] <= 1
    assert quality["sparsity"] >= 1 and quality["proximity"] > 0 and quality["plausibility"] >= 0

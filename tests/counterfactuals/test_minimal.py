"""Distinct, minimal, passenger-free counterfactuals, checked on planted models whose answers follow from their rules.

Each model is a hand-written rule (P(undesirable) is 0 or 1), so what a minimal counterfactual is
can be written down: which features it changes and to which values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals._revert import revert_single_features
from flex_core.counterfactuals._set import copy_tolerance
from tests.factories import planted

DICE = ["dice-random", "dice-genetic", "dice-kdtree"]


def model_ranges(task):
    return task.frame[task.feature_names].apply(lambda c: c.max() - c.min() if c.dtype.kind in "if" else np.nan).to_numpy(float)


def flex(task, model, generator="batch", *, n_factuals=40, n_cf=6, refine=None, **settings):
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator(generator, **settings), n_cf=n_cf,
                                   seed=0, refine=refine)
    rows = store.factual_rows[:n_factuals]
    cfset = store.ensure(rows)
    result = fc.importance.flex_importance(cfset, task, tau=0.0, ranges=store.ranges, intervals=False)
    return cfset, dict(zip(task.feature_names, result.frequency_mean))


@pytest.fixture(scope="module")
def and_model():
    """Undesirable = (x1 > 50) AND (x2 = "yes"); x3 (categorical) and x4 (number) play no part."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({
        "x1": rng.uniform(0, 100, n).round(2),
        "x2": rng.choice(["yes", "no"], n),
        "x3": rng.choice(["red", "green", "blue"], n),
        "x4": rng.uniform(0, 10, n).round(3),
    })
    return planted(frame, lambda X: (X["x1"].astype(float) > 50) & (X["x2"] == "yes"))


def test_ignored_features_never_change_with_the_default_generator(and_model):
    task, model = and_model
    cfset, frequency = flex(task, model)
    assert frequency["x3"] == 0.0 and frequency["x4"] == 0.0
    # Each factual has exactly two minimal counterfactuals: x1 down to 50 alone, or x2 to "no" alone.
    assert (cfset.counts == 2).all()
    assert frequency["x1"] == pytest.approx(0.5) and frequency["x2"] == pytest.approx(0.5)
    frame = cfset.to_frame(task).query("cf >= 0")
    # x1 stops at the first point of its grid (steps of range / 1000 from the factual) at or below the robust
    # boundary: 50 less the default radius (1% of x1's range), so that x1 one radius nearer the factual still flips.
    step = copy_tolerance(task, model_ranges(task))[0]
    boundary = 50 - 0.01 * model_ranges(task)[0]
    lowered = frame.loc[frame.x2 == "yes", "x1"]
    assert len(lowered) == cfset.n_queries and ((lowered <= boundary) & (lowered > boundary - step)).all()


@pytest.mark.slow
@pytest.mark.parametrize("generator", DICE)
def test_ignored_features_never_change_with_dice_under_minimal_refinement(and_model, generator):
    task, model = and_model
    cfset, frequency = flex(task, model, generator, n_factuals=12, n_cf=4, refine="minimal")
    assert cfset.valid.any()
    assert frequency["x3"] <= 0.02 and frequency["x4"] <= 0.02
    assert cfset.coverage()["queries_with_copies"] == cfset.coverage()["queries_with_copies"]  # counted, an int
    assert (cfset.counts <= 2).all()  # at most the two minimal counterfactuals, copies merged


@pytest.fixture(scope="module")
def or_model():
    """Desirable when x1 > 60 or x2 = 1 (continuous x1, binary x2); x3 and x4 play no part."""
    rng = np.random.default_rng(1)
    n = 400
    frame = pd.DataFrame({
        "x1": rng.uniform(0, 100, n).round(2),
        "x2": rng.choice(["0", "1"], n),
        "x3": rng.choice(["a", "b", "c"], n),
        "x4": rng.uniform(0, 1, n).round(3),
    })
    return planted(frame, lambda X: (X["x1"].astype(float) <= 60) & (X["x2"] == "0"))


def test_both_single_feature_counterfactuals_are_found_for_every_factual(or_model):
    task, model = or_model
    cfset, frequency = flex(task, model, n_factuals=60)
    frame = cfset.to_frame(task)
    for row, group in frame.groupby("row"):
        factual, cfs = group[group.cf == -1].iloc[0], group[group.cf >= 0]
        changed = [tuple(name for name in task.feature_names if cf[name] != factual[name]) for _, cf in cfs.iterrows()]
        assert ("x1",) in changed and ("x2",) in changed, row
        # Exactly these two: x1 and x2 together is not minimal, x3 and x4 are passengers.
        assert sorted(changed) == [("x1",), ("x2",)]
    assert frequency["x3"] == frequency["x4"] == 0.0


def test_dice_without_refinement_lets_passengers_count_and_refinement_removes_them(or_model):
    """The paper's setting counts whatever DiCE changed; refine="minimal" reverts what the rule ignores."""
    task, model = or_model
    _, raw = flex(task, model, "dice-random", n_factuals=10, n_cf=4, refine="none")
    _, refined = flex(task, model, "dice-random", n_factuals=10, n_cf=4, refine="minimal")
    assert raw["x4"] >= 0.1  # DiCE random redraws the ignored number freely
    assert refined["x3"] == refined["x4"] == 0.0


@pytest.fixture(scope="module")
def staircase():
    """Desirable when x1 + x2 > 100 (integers): every (a, 101 - a) with a >= x1, 101 - a >= x2 is minimal."""
    rng = np.random.default_rng(2)
    n = 500
    frame = pd.DataFrame({"x1": rng.integers(0, 101, n), "x2": rng.integers(0, 101, n), "x3": rng.choice(["u", "v"], n)})
    return planted(frame, lambda X: X["x1"].astype(float) + X["x2"].astype(float) <= 100)


@pytest.mark.parametrize("radius", [0.0, 0.01])
def test_the_generator_finds_n_cf_points_of_a_staircase_of_minimal_counterfactuals(staircase, radius):
    """Paper's validity (radius 0): on the staircase x1 + x2 = 101. Robust (radius 1% of the range of 100 = 1 unit):
    every changed number pulled back by one must still flip, so x1 + x2 = 101 + the number of features changed."""
    task, model = staircase
    n_cf = 8
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch", radius=radius), n_cf=n_cf, seed=0)
    facts = task.frame.loc[store.factual_rows, ["x1", "x2"]]
    # Factuals with room for at least 2 * n_cf staircase points (102 - x1 - x2 of them), and a few more: under the
    # robust rule the points one unit from a single change are no other way out (tests/counterfactuals/test_robust.py).
    rows = facts.index[(102 - facts.x1 - facts.x2) >= 2 * n_cf + 4][:30]
    cfset = store.ensure(rows)
    frame = cfset.to_frame(task)
    for row, group in frame.groupby("row"):
        factual, cfs = group[group.cf == -1].iloc[0], group[group.cf >= 0]
        assert len(cfs) == n_cf, row
        changed = (cfs.x1 != factual.x1).astype(int) + (cfs.x2 != factual.x2).astype(int)
        assert (cfs.x1 + cfs.x2 == 101 + round(radius * 100) * changed).all()  # neither change can shrink by one
        assert (cfs.x1 >= factual.x1).all() and (cfs.x2 >= factual.x2).all()
        assert (cfs.x3 == factual.x3).all()
        assert cfs[["x1", "x2"]].drop_duplicates().shape[0] == n_cf


def test_no_returned_counterfactual_holds_a_change_that_can_be_reverted_alone(synthetic_task, synthetic_model):
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=5,
                                   seed=0)
    rows = fc.importance.sample_factuals(store.factual_rows, 40, seed=0)
    cfset = store.ensure(rows)
    with np.errstate(invalid="ignore"):
        changed = (cfset.counterfactuals != cfset.factuals[:, None, :]) & cfset.valid[:, :, None]
    assert changed.any()
    reverted_ok = revert_single_features(synthetic_task, synthetic_model, cfset.factuals, cfset.counterfactuals, changed)
    assert not reverted_ok.any()


@pytest.mark.parametrize("generator", ["dice-random", "batch-plausible"])
def test_minimal_refinement_leaves_no_revertible_change_for_other_generators(synthetic_task, synthetic_model, generator):
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator(generator), n_cf=4,
                                   seed=0, refine="minimal")
    rows = fc.importance.sample_factuals(store.factual_rows, 10, seed=1)
    cfset = store.ensure(rows)
    with np.errstate(invalid="ignore"):
        changed = (cfset.counterfactuals != cfset.factuals[:, None, :]) & cfset.valid[:, :, None]
    assert changed.any()
    assert not revert_single_features(synthetic_task, synthetic_model, cfset.factuals, cfset.counterfactuals, changed).any()


def test_copies_are_merged_and_counted():
    factuals = np.array([[0.0, 0.0]])
    cfs = np.array([[[50.04, 1.0], [50.01, 1.0], [70.0, 0.0], [np.nan, np.nan]]])
    found = np.array([[True, True, True, False]])
    merged = fc.counterfactuals._set.merge_copies(factuals, cfs, found, found.copy(), np.array([0.1, 1.0]))
    # 50.04 and 50.01 are both 500 steps of 0.1 from the factual: one counterfactual.
    assert merged.copies.tolist() == [1]
    np.testing.assert_array_equal(merged.valid, [[True, True, False, False]])
    np.testing.assert_array_equal(merged.counterfactuals[0, :2], [[50.04, 1.0], [70.0, 0.0]])


@pytest.mark.parametrize("generator", ["batch", "batch-plausible"])
def test_two_seeded_runs_give_identical_counterfactuals(synthetic_task, synthetic_model, generator):
    rows = fc.importance.sample_factuals(fc.counterfactuals.factual_rows(synthetic_task, synthetic_model), 20, seed=2)
    queries = synthetic_task.frame.loc[rows, synthetic_task.feature_names]
    runs = [fc.counterfactuals.make_generator(generator).generate(synthetic_model, synthetic_task, queries, n_cf=5, seed=7)
            for _ in range(2)]
    np.testing.assert_array_equal(runs[0].counterfactuals, runs[1].counterfactuals)

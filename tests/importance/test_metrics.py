"""FLEX's formulas against hand-computed examples, a literal Algorithm 1/2, and their properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.importance._flex import resolve_tau
from tests.factories import make_set


@pytest.fixture(scope="module")
def tiny_task():
    # size spans 0..10, so range(size) = 10; colour levels sort to blue=0, green=1, red=2.
    frame = pd.DataFrame(
        {"colour": ["red", "blue", "green"], "size": [0.0, 10.0, 5.0], "outcome": ["bad", "good", "bad"]}
    )
    return fc.make_task(frame, target="outcome", undesirable="bad")


@pytest.fixture(scope="module")
def hand_set(tiny_task):
    return make_set(
        tiny_task,
        [0, 2],
        [
            # factual row 0 = (red, 0)
            [("blue", 0.0), ("red", 5.0), ("blue", 2.0), ("red", 0.5)],
            # factual row 2 = (green, 5): only two counterfactuals found
            [("green", 10.0), ("red", 5.0)],
        ],
        n_cf=4,
    )


def test_local_frequency_and_magnitude_by_hand(tiny_task, hand_set):
    result = fc.importance.flex_importance(hand_set, tiny_task, tau=0.1)
    colour, size = 0, 1
    # Query 0: colour differs in 2 of 4; |Δsize|/10 = 0, .5, .2, .05 -> 2 of 4 above τ = 0.1.
    # Query 1: computed over the 2 counterfactuals it has: colour 1 of 2, size .5 and 0 -> 1 of 2.
    np.testing.assert_allclose(result.local_frequencies, [[0.5, 0.5], [0.5, 0.5]])
    np.testing.assert_allclose(result.local_magnitudes[:, size], [(0 + 0.5 + 0.2 + 0.05) / 4, (0.5 + 0) / 2])
    assert np.isnan(result.local_magnitudes[:, colour]).all()
    np.testing.assert_allclose(result.frequency_mean, [0.5, 0.5])
    np.testing.assert_allclose(result.frequency_std, [0.0, 0.0])
    np.testing.assert_allclose(result.magnitude_mean[size], (0.1875 + 0.25) / 2)
    assert np.isnan(result.magnitude_mean[colour])
    np.testing.assert_array_equal(result.counts, [4, 2])


def test_global_mean_and_std_by_hand(tiny_task, hand_set):
    result = fc.importance.flex_importance(hand_set, tiny_task, tau=0.3)
    # size: query 0 has one change above .3 (0.5) of 4 -> .25; query 1 has .5 of 2 -> .5.
    np.testing.assert_allclose(result.local_frequencies[:, 1], [0.25, 0.5])
    np.testing.assert_allclose(result.frequency_mean[1], 0.375)
    np.testing.assert_allclose(result.frequency_std[1], 0.125)  # population std of (.25, .5)


def test_dice_algorithm_2_by_hand(tiny_task, hand_set):
    result = fc.importance.flex_importance(hand_set, tiny_task, tau=0.9)
    # Pooled over all 6 counterfactuals: colour changes 2 + 1 = 3; size changes (> ε) 3 + 1 = 4.
    np.testing.assert_allclose(result.dice_frequency, [3 / 6, 4 / 6])


def test_per_feature_tau_mapping(tiny_task, hand_set):
    result = fc.importance.flex_importance(hand_set, tiny_task, tau={"size": 0.3})
    assert result.tau[1] == 0.3 and np.isnan(result.tau[0])
    with pytest.raises(fc.ConfigError, match="unknown feature"):
        fc.importance.flex_importance(hand_set, tiny_task, tau={"weight": 0.3})
    with pytest.raises(fc.ConfigError, match="continuous features only"):
        fc.importance.flex_importance(hand_set, tiny_task, tau={"colour": 0.3})
    with pytest.raises(fc.ConfigError, match=">= 0"):
        fc.importance.flex_importance(hand_set, tiny_task, tau=-0.1)


def test_rank_ties_share_best_rank(tiny_task, hand_set):
    result = fc.importance.flex_importance(hand_set, tiny_task, tau=0.1)
    np.testing.assert_array_equal(result.rank, [1, 1])


# -- a literal transcription of the paper's algorithms, as the reference --------------------
def algorithm_1(factuals, cfs, valid, continuous, ranges, tau):
    """Algorithm 1 loop by loop (over the counterfactuals each query has)."""
    n_q, _, d = cfs.shape
    phi, mu = [[] for _ in range(d)], [[] for _ in range(d)]
    for q in range(n_q):
        have = [k for k in range(cfs.shape[1]) if valid[q, k]]
        if not have:
            continue
        for j in range(d):
            c = m = 0.0
            for k in have:
                if not continuous[j]:
                    c += cfs[q, k, j] != factuals[q, j]
                else:
                    delta = abs(cfs[q, k, j] - factuals[q, j])
                    m += delta / ranges[j]
                    c += delta / ranges[j] > tau[j]
            phi[j].append(c / len(have))
            if continuous[j]:
                mu[j].append(m / len(have))
    return np.array([np.mean(p) for p in phi]), np.array([np.mean(m) if m else np.nan for m in mu])


def algorithm_2(factuals, cfs, valid, continuous, eps=1e-6):
    counts, total = np.zeros(cfs.shape[2]), 0
    for q in range(cfs.shape[0]):
        for k in range(cfs.shape[1]):
            if not valid[q, k]:
                continue
            total += 1
            for j in range(cfs.shape[2]):
                if continuous[j]:
                    counts[j] += abs(cfs[q, k, j] - factuals[q, j]) > eps
                else:
                    counts[j] += cfs[q, k, j] != factuals[q, j]
    return counts / total if total else counts


@pytest.fixture(scope="module")
def random_problem():
    """A random task (3 categorical, 4 continuous features) and a random counterfactual set over it."""
    rng = np.random.default_rng(7)
    n_rows, n_q, n_cf = 60, 25, 8
    frame = pd.DataFrame(
        {
            **{f"c{j}": rng.choice(list("abcd"), n_rows) for j in range(3)},
            **{f"x{j}": rng.uniform(0, 10 * (j + 1), n_rows).round(2) for j in range(4)},
            "y": rng.choice(["bad", "good"], n_rows),
        }
    )
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={f"c{j}": "categorical" for j in range(3)})
    rows = np.arange(n_q)
    factuals = fc.counterfactuals.encode_rows(task, task.frame.loc[rows])
    cfs = np.repeat(factuals[:, None, :], n_cf, axis=1)
    # Each counterfactual changes a random subset of features to random values from the data.
    source = fc.counterfactuals.encode_rows(task, task.frame)
    for q in range(n_q):
        for k in range(n_cf):
            changed = rng.random(len(task.features)) < 0.4
            cfs[q, k, changed] = source[rng.integers(n_rows), changed]
    valid = rng.random((n_q, n_cf)) < 0.85
    valid[0] = False  # a query with no counterfactual at all
    cfs[~valid] = np.nan
    cfset = fc.counterfactuals.CounterfactualSet(tuple(task.feature_names), rows, factuals, cfs, valid, valid.copy(), "random", 0.0)
    return task, cfset


@pytest.mark.parametrize("tau", [0.0, 0.05, 0.3, {"x0": 0.5, "x3": 0.01, "*": 0.2}])
def test_vectorised_equals_algorithm_1(random_problem, tau):
    task, cfset = random_problem
    continuous = np.array([f.is_continuous for f in task.features])
    tau_vec = resolve_tau(task.feature_names, continuous, tau)
    phi, mu = algorithm_1(cfset.factuals, cfset.counterfactuals, cfset.valid, continuous, task.ranges(), tau_vec)
    result = fc.importance.flex_importance(cfset, task, tau=tau)
    np.testing.assert_allclose(result.frequency_mean, phi)
    np.testing.assert_allclose(result.magnitude_mean, mu)
    np.testing.assert_allclose(
        result.dice_frequency, algorithm_2(cfset.factuals, cfset.counterfactuals, cfset.valid, continuous)
    )


def test_tau_zero_reproduces_dice_when_every_query_is_complete(random_problem):
    task, cfset = random_problem
    complete = cfset.subset(cfset.query_index[cfset.counts == cfset.n_cf])
    assert complete.n_queries >= 3
    result = fc.importance.flex_importance(complete, task, tau=0.0)
    np.testing.assert_allclose(result.frequency_mean, result.dice_frequency)


def test_tau_at_least_one_zeroes_continuous_and_leaves_categorical(random_problem):
    task, cfset = random_problem
    continuous = np.array([f.is_continuous for f in task.features])
    low, high = fc.importance.flex_importance(cfset, task, tau=0.0), fc.importance.flex_importance(cfset, task, tau=1.0)
    assert (high.frequency_mean[continuous] == 0).all()
    assert (low.frequency_mean[continuous] > 0).all()
    np.testing.assert_array_equal(high.frequency_mean[~continuous], low.frequency_mean[~continuous])
    # Raising τ can only lower a continuous frequency.
    taus = np.linspace(0, 1, 11)
    curves = np.array([fc.importance.flex_importance(cfset, task, tau=t).frequency_mean[continuous] for t in taus])
    assert (np.diff(curves, axis=0) <= 1e-12).all()


def test_frequencies_in_unit_interval_and_order_free(random_problem):
    task, cfset = random_problem
    base = fc.importance.flex_importance(cfset, task, tau=0.1)
    assert np.all((base.frequency_mean >= 0) & (base.frequency_mean <= 1))
    assert np.all(base.local_frequencies[~np.isnan(base.local_frequencies)] >= 0)
    assert np.all(base.local_frequencies[~np.isnan(base.local_frequencies)] <= 1)
    rng = np.random.default_rng(3)
    # Shuffle the counterfactuals within each query, and the queries themselves.
    perm_cf = np.array([rng.permutation(cfset.n_cf) for _ in range(cfset.n_queries)])
    perm_q = rng.permutation(cfset.n_queries)
    take = lambda a: np.take_along_axis(a, perm_cf[:, :, None] if a.ndim == 3 else perm_cf, axis=1)[perm_q]  # noqa: E731
    shuffled = fc.counterfactuals.CounterfactualSet(
        cfset.feature_names,
        cfset.query_index[perm_q],
        cfset.factuals[perm_q],
        take(cfset.counterfactuals),
        take(cfset.found),
        take(cfset.valid),
        "shuffled",
        0.0,
    )
    other = fc.importance.flex_importance(shuffled, task, tau=0.1)
    np.testing.assert_allclose(other.frequency_mean, base.frequency_mean)
    np.testing.assert_allclose(other.frequency_std, base.frequency_std)
    np.testing.assert_allclose(other.magnitude_mean, base.magnitude_mean)
    np.testing.assert_allclose(other.dice_frequency, base.dice_frequency)


def test_query_without_counterfactuals_is_left_out(random_problem):
    task, cfset = random_problem
    result = fc.importance.flex_importance(cfset, task, tau=0.1)
    assert np.isnan(result.local_frequencies[0]).all()
    assert result.n_factuals_used == cfset.n_queries - 1
    assert result.counts[0] == 0


def test_no_counterfactual_at_all_gives_nan_not_a_crash(tiny_task):
    empty = make_set(tiny_task, [0, 2], [[], []], n_cf=3)
    result = fc.importance.flex_importance(empty, tiny_task, tau=0.1)
    assert np.isnan(result.frequency_mean).all()
    np.testing.assert_array_equal(result.dice_frequency, [0.0, 0.0])
    record = result.to_dict()["features"][0]
    assert record["frequency_mean"] is None  # NaN is exported as null, never as invalid JSON


def test_unnamed_features_take_the_same_default_tau_in_the_library_and_the_cli():
    from flex_core.cli._main import parse_tau

    names, continuous = ["a", "b", "c"], [True, True, False]
    library = resolve_tau(names, continuous, {"a": 0.3})
    cli = resolve_tau(names, continuous, parse_tau(["a=0.3"]))
    np.testing.assert_array_equal(library, cli)
    assert library[1] == fc.importance.DEFAULT_TAU == 0.1 and library[0] == 0.3 and np.isnan(library[2])
    np.testing.assert_array_equal(resolve_tau(names, continuous, parse_tau(None)), [0.1, 0.1, np.nan])

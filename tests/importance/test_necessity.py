"""Necessary changes, necessity and sufficiency (Mothilal et al. 2021), and the spread across seeds."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.counterfactuals._revert import necessary_changes, revert_single_features
from flex_core.importance._necessity import seed_spread
from tests.factories import make_set


class OnlyX1:
    """A hand-built classifier: undesirable exactly when x1 < 5, whatever x2 and x3 are."""

    def __init__(self):
        self.rows_scored = 0

    def predict_proba(self, X):
        self.rows_scored += len(X)
        p_undesirable = (X["x1"].to_numpy(dtype=float) < 5).astype(float)
        return np.column_stack([1 - p_undesirable, p_undesirable])


@pytest.fixture(scope="module")
def only_x1():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({name: rng.integers(0, 11, 120).astype(float) for name in ("x1", "x2", "x3")})
    frame["y"] = np.where(frame["x1"] < 5, "bad", "good")
    task = fc.make_task(frame, target="y", undesirable="bad", kinds={n: "continuous" for n in ("x1", "x2", "x3")})
    model = fc.FittedModel("hand", "onehot", 0, OnlyX1(), frame.index.to_numpy(), np.empty(0, int))
    return task, model


def test_only_x1_can_flip_so_it_flips_alone_and_is_needed_and_the_others_neither(only_x1):
    task, model = only_x1
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=4, seed=0)
    rows = store.factual_rows[:15]
    scores = fc.importance.necessity_sufficiency(store, rows)
    np.testing.assert_allclose(scores.flip_alone, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(scores.needed, [1.0, 0.0, 0.0])
    # The ratios count the distinct minimal ways out among the 4 requested: there is one (x1 up to 5), so the
    # necessity ratio of the one decisive feature is 1/4, and freezing a feature that plays no part still
    # "loses" 3 of the 4 requested: the ratios measure alternatives, not need.
    np.testing.assert_allclose(scores.necessity_ratio, [0.25, 0.0, 0.0])
    np.testing.assert_allclose(scores.sufficiency_ratio, [1.0, 0.75, 0.75])
    assert scores.generator_runs == 6 and scores.seconds > 0 and scores.rows == tuple(int(r) for r in rows)


def test_a_passenger_change_is_not_necessary(only_x1):
    task, model = only_x1
    factual = int(np.flatnonzero(task.frame["x1"] < 5)[0])
    x3 = task.frame.loc[factual, "x3"]
    # Counterfactual 1 moves x1 (the driver) and x2 (a passenger); counterfactual 2 moves x1 alone.
    cfset = make_set(task, [factual], [[(8.0, task.frame.loc[factual, "x2"] + 3, x3), (9.0, task.frame.loc[factual, "x2"], x3)]], n_cf=2)
    necessary = necessary_changes(cfset, task, model)
    np.testing.assert_array_equal(necessary[0], [[True, False, False], [True, False, False]])
    result = fc.importance.flex_importance(cfset, task, tau=0.0, necessary=necessary)
    np.testing.assert_allclose(result.frequency_mean, [1.0, 0.5, 0.0])
    np.testing.assert_allclose(result.necessary_frequency, [1.0, 0.0, 0.0])
    only = result.only_necessary()
    np.testing.assert_allclose(only.frequency_mean, [1.0, 0.0, 0.0])
    assert only.rank[0] == 1 and only.config["count"] == "necessary changes only"


def test_revert_scores_only_the_cells_asked_and_the_corner_of_those_that_hold(only_x1):
    task, model = only_x1
    factuals = np.array([[1.0, 1.0, 1.0]])
    cfs = np.array([[[7.0, 4.0, 1.0]]])
    cells = np.array([[[True, True, False]]])
    before = model.pipeline.rows_scored
    still = revert_single_features(task, model, factuals, cfs, cells)
    np.testing.assert_array_equal(still, [[[False, True, False]]])
    # The two reverts, then (robust validity) the one that holds once more with x1 pulled back toward the factual.
    assert model.pipeline.rows_scored - before == 3


def test_necessary_changes_are_scored_once_per_row_not_per_tau(only_x1):
    task, model = only_x1
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=3, seed=1)
    first = fc.importance.run_global(store, n_factuals=10, tau=0.0)
    before = model.pipeline.rows_scored
    second = fc.importance.run_global(store, n_factuals=10, tau=0.3)
    assert model.pipeline.rows_scored == before  # a τ change reuses the stored counterfactuals and reverts
    assert first.necessary_frequency is not None and second.necessary_frequency is not None
    # Every change of the driver is necessary (at τ = 0 every change counts).
    assert first.necessary_frequency[0] == pytest.approx(1.0)
    # Above τ fewer changes count, and a change that does not count is not a necessary one either.
    assert second.necessary_frequency[0] == pytest.approx(second.frequency_mean[0]) and second.frequency_mean[0] < 1


def test_necessary_frequency_never_exceeds_frequency_and_is_in_the_json(only_x1):
    task, model = only_x1
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=3, seed=2)
    result = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=12, tau=0.1), store, tau=0.1, sufficiency=True)
    assert np.all(result.necessary_frequency <= result.frequency_mean + 1e-12)
    features = json.loads(result.to_json())["features"]
    assert {"necessary_frequency", "flip_alone", "needed", "necessity_ratio", "sufficiency_ratio", "frequency_ci",
            "rank_interval"} <= set(features[0])
    assert result.config["necessity_sufficiency"]["generator_runs"] == 6


def test_immutable_features_have_null_scores(synthetic_task, synthetic_model):
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3, seed=0)
    result = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=8), store, sufficiency=True)
    records = {r["name"]: r for r in result.to_dict()["features"]}
    for name in synthetic_task.immutable_names:
        assert records[name]["flip_alone"] is None and records[name]["needed"] is None
        assert records[name]["necessity_ratio"] is None and records[name]["flip_alone_interval"] == [None, None]
    assert records["speed"]["flip_alone"] is not None


def test_synthetic_data_recovers_its_planted_driver(synthetic_task, synthetic_model):
    """SYNTHETIC_GROUND_TRUTH: speed > 80 drives severity everywhere; the noise features drive nothing."""
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=5, seed=0)
    result = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=40), store, sufficiency=True)
    names = list(result.feature_names)
    speed = names.index("speed")
    noise = [names.index("noise_continuous"), names.index("noise_categorical")]
    assert result.flip_alone[speed] > 0.5
    assert result.flip_alone[speed] > result.flip_alone[noise].max() + 0.4
    assert (result.needed[noise] == 0).all()  # a way out never needs noise
    # Most of speed's changes are necessary; most of the noise features' are passengers.
    assert result.necessary_frequency[speed] > 0.8 * result.frequency_mean[speed]


def test_regional_results_carry_necessary_frequency_and_necessity(synthetic_task, synthetic_model):
    store = fc.counterfactuals.CounterfactualStore(synthetic_task, synthetic_model, fc.counterfactuals.make_generator("batch"), n_cf=3, seed=0)
    base = fc.importance.run_global(store, n_factuals=10)
    query = int(base.query_index[0])
    regional = fc.importance.run_regional(store, base, query=query, k=3, sufficiency=True)
    importance = regional.importance
    assert importance.necessary_frequency.shape == (len(importance.feature_names),)
    assert importance.config["necessity_sufficiency"]["factuals"] == 4
    record = regional.to_dict()["features"][0]
    assert {"necessary_frequency", "frequency_ci", "rank_interval", "flip_alone", "needed_interval"} <= set(record)


def test_seed_spread_over_repeats(only_x1):
    task, model = only_x1
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=3, seed=0)
    result = fc.importance.with_extras(fc.importance.run_global(store, n_factuals=10, tau=0.0), store, tau=0.0, repeats=3)
    assert result.config["repeats"] == {"n": 3, "seeds": [0, 1, 2]}
    assert result.frequency_seed_sd.shape == (3,) and np.all(result.frequency_seed_sd >= 0)
    assert result.frequency_seed_sd[0] == 0  # at τ = 0 every seed changes x1 in every counterfactual
    assert json.loads(result.to_json())["features"][0]["frequency_seed_sd"] == 0
    with pytest.raises(fc.ConfigError, match="at least 2"):
        seed_spread(store, result.query_index, repeats=1)


def test_scores_from_other_factuals_are_refused(only_x1):
    task, model = only_x1
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=2, seed=0)
    result = fc.importance.run_global(store, n_factuals=5)
    other = fc.importance.necessity_sufficiency(store, store.factual_rows[-3:])
    with pytest.raises(fc.ConfigError, match="other factuals"):
        fc.importance.with_necessity_sufficiency(result, other)

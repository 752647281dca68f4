"""Permutation importance on held-out rows: the planted driver tops it (a rule coded as a model, a forest learned from
noisy planted data with pure-noise features), seeded, with its spread; its agreement with FLEX; refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from tests.contract import assert_valid
from tests.factories import Rule, make_set, planted
from tests.planted_learned import NOISE_FEATURES, planted_forest, planted_task


def _rule_task(n: int = 400):
    """Undesirable exactly when speed > 80: ``speed`` drives it, ``temp`` and ``colour`` are noise. The rule-coded
    model is judged on the second half of the rows (the first half stand in as its training rows)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"speed": rng.uniform(20, 120, n).round(1), "temp": rng.normal(15, 8, n).round(1),
                          "colour": rng.choice(["red", "blue", "green"], n)})
    task, _ = planted(frame, lambda X: X["speed"] > 80)
    test = task.frame.iloc[n // 2:]
    model = fc.FittedModel.from_estimator(Rule(lambda X: X["speed"] > 80), task, X_test=test[task.feature_names],
                                          y_test=test[task.target].to_numpy(), train_index=task.frame.index[: n // 2],
                                          identity="planted rule", evaluated_on="the second half")
    return task, model


def test_the_planted_driver_of_a_rule_tops_permutation_importance_and_the_rest_score_exactly_zero():
    task, model = _rule_task()
    calls = []
    result = fc.compare.permutation_importance(task, model, n_repeats=4, seed=3,
                                               progress=lambda done, total: calls.append((done, total)))
    assert result.baseline_score == 1.0  # the rule is the outcome
    assert result.rank.tolist() == [1, 2, 2] and result.to_frame()["feature"].iloc[0] == "speed"
    # The rule never reads temp or colour: shuffling them changes no prediction, so no repeat drops the AUC.
    np.testing.assert_array_equal(result.importances[1:], 0.0)
    assert result.importances.shape == (3, 4) and result.std[0] > 0 and result.mean[0] > 0.3
    assert calls[-1] == (1 + 3 * 4, 1 + 3 * 4) and len(calls) == 13  # the baseline, then every shuffle
    assert set(result.query_index) == set(model.test_index)
    assert result.config == {"scoring": "roc_auc", "n_repeats": 4, "seed": 3, "evaluated_on": "the second half"}
    again = fc.compare.permutation_importance(task, model, n_repeats=4, seed=3)
    np.testing.assert_array_equal(again.importances, result.importances)  # seeded
    other = fc.compare.permutation_importance(task, model, n_repeats=4, seed=4)
    assert not np.array_equal(other.importances[0], result.importances[0])


@pytest.mark.slow  # trains a forest on 1,000 rows and shuffles each of six columns five times (about 3 s)
def test_a_forest_learned_from_noisy_planted_data_ranks_its_two_drivers_above_every_noise_feature():
    task = planted_task(1000)
    result = fc.compare.permutation_importance(task, planted_forest(task), seed=0)
    by_name = dict(zip(result.feature_names, result.mean))
    assert set(result.to_frame()["feature"].iloc[:2]) == {"speed", "road"}
    noise = np.array([by_name[name] for name in NOISE_FEATURES])
    assert min(by_name["speed"], by_name["road"]) > 0.1 > 0.02 > np.abs(noise).max()


def test_a_model_without_held_out_rows_or_with_too_few_repeats_is_refused(user_explainer):
    with pytest.raises(fc.ConfigError, match="without held-out rows"):
        fc.compare.permutation_importance(user_explainer.task, user_explainer.model)
    task, model = _rule_task()
    with pytest.raises(fc.ConfigError, match="n_repeats .* from 2 to 100; got 1"):
        fc.compare.permutation_importance(task, model, n_repeats=1)


def test_flex_permutation_agreement_ranks_the_mutable_features_and_bootstraps_flex_s_factuals():
    task, model = _rule_task()
    permutation = fc.compare.permutation_importance(task, model, n_repeats=2)
    # Three factuals by hand: two ways out change speed alone, one changes speed and temp.
    rows = [int(r) for r in task.frame.index[task.y == 1][:3]]
    fast = task.frame.loc[rows, task.feature_names].copy()
    slow = fast.assign(speed=60.0)
    warmer = slow.assign(temp=slow["temp"] + 30)  # 30 degrees: well above τ = 0.1 of temp's range
    cfs = [[slow.iloc[0].tolist()], [slow.iloc[1].tolist()], [warmer.iloc[2].tolist()]]
    flex = fc.importance.flex_importance(make_set(task, rows, cfs, 1), task, level="global")
    np.testing.assert_allclose(flex.frequency_mean, [1, 1 / 3, 0])
    agreement = permutation.agreement_with(flex, k=1, n_boot=200, seed=5)
    # Ranks: FLEX speed > temp > colour; permutation speed > temp = colour (both 0).
    point = fc.compare.rank_agreement(flex.frequency_mean, permutation.mean, k=1, names=flex.feature_names)
    assert (agreement.spearman, agreement.kendall, agreement.top_k_overlap) == (
        point.spearman, point.kendall, 1.0)
    assert agreement.spearman == pytest.approx(np.sqrt(3) / 2)  # ranks (1, 2, 3) against (1, 2.5, 2.5)
    assert agreement.config["bootstrap"] == {"resamples": 200, "level": 0.95, "seed": 5, "over": "FLEX's factuals"}
    assert agreement == permutation.agreement_with(flex, k=1, n_boot=200, seed=5)
    assert agreement.spearman_interval[0] <= agreement.spearman <= agreement.spearman_interval[1]
    assert_valid(agreement.to_dict())


def test_permutation_importance_round_trips_through_json():
    task, model = _rule_task()
    result = fc.compare.permutation_importance(task, model, n_repeats=2)
    data = assert_valid(result.to_dict())
    assert data["features"][0] == {"name": "speed", "label": result.display_names[0], "immutable": False,
                                   "permutation_mean": result.mean[0], "permutation_std": result.std[0],
                                   "permutation_rank": 1}
    again = fc.read_result(result.to_json())
    assert again.to_dict() == data
    np.testing.assert_array_equal(again.importances, result.importances)

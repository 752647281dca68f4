"""ROC, precision-recall and gain curves and precision by bin: hand-counted on ten rows, and planted models with
known answers (a perfect model scores 1, a constant one has no skill); a model without held-out rows is refused."""

import numpy as np
import pandas as pd
import pytest

import flex_core as fc
from flex_core.models._curves import quality_curves
from tests.contract import assert_valid
from tests.factories import Rule, planted

# Ten rows: 4 truly undesirable (1), 6 not. Sorted by P: 0.9(1) 0.8(0) 0.7(1) 0.55(0) 0.5(0) 0.45(1) 0.3(0) 0.2(1)
# 0.1(0) 0.05(0).
Y = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
P = [0.9, 0.7, 0.45, 0.2, 0.8, 0.55, 0.3, 0.1, 0.05, 0.5]


def test_the_curves_and_areas_match_the_hand_count():
    curves = quality_curves(Y, P, n_bins=5)
    # One point per distinct P, after the point above all of them: predicted undesirable when P >= threshold.
    np.testing.assert_allclose(curves.thresholds[1:], [0.9, 0.8, 0.7, 0.55, 0.5, 0.45, 0.3, 0.2, 0.1, 0.05])
    np.testing.assert_allclose(curves.tpr * 4, [0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4])
    np.testing.assert_allclose(curves.fpr * 6, [0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 6])
    # AUC: pairs (undesirable, not) ranked right: 6 + 5 + 3 + 2 of 24. AP: precision at each undesirable row's
    # rank (1, 3, 6, 8), averaged: (1 + 2/3 + 3/6 + 4/8) / 4.
    assert curves.roc_auc == pytest.approx(16 / 24)
    assert curves.average_precision == pytest.approx((1 + 2 / 3 + 3 / 6 + 4 / 8) / 4)
    assert curves.prevalence == pytest.approx(0.4)
    # Gain: one more row taken at each threshold; found = the undesirable rows among them, of 4.
    np.testing.assert_allclose(curves.gain_share, np.arange(11) / 10)
    np.testing.assert_allclose(curves.gain_found, np.array([0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4]) / 4)
    assert curves.gain_lift[1] == pytest.approx(2.5) and curves.gain_lift[-1] == pytest.approx(1.0)
    # The PR curve at the cutoffs 0.9, 0.7 (2 of 3 rows), and everything (4 of 10).
    pr = dict(zip(curves.recall.round(4), curves.precision.round(4)))
    assert pr[0.25] == 1.0 and pr[0.5] == pytest.approx(0.6667, abs=1e-4)
    assert curves.precision[0] == pytest.approx(0.4) and curves.recall[0] == 1.0


def test_precision_by_bin_matches_the_hand_count():
    table = quality_curves(Y, P, n_bins=5).to_frame()
    # [0, .2): 0.1, 0.05 | [.2, .4): 0.2(1), 0.3 | [.4, .6): 0.45(1), 0.55, 0.5 | [.6, .8): 0.7(1) | [.8, 1]: 0.9(1), 0.8
    assert table["rows"].tolist() == [2, 2, 3, 1, 2]
    assert table["undesirable"].tolist() == [0, 1, 1, 1, 1]
    np.testing.assert_allclose(table["precision"], [0, 1 / 2, 1 / 3, 1, 1 / 2])
    np.testing.assert_allclose(table["bin_low"], [0, 0.2, 0.4, 0.6, 0.8])


def test_a_row_on_a_bin_edge_goes_to_the_bin_above_and_an_empty_bin_has_no_precision():
    curves = quality_curves([1, 0, 1], [0.3, 0.7, 1.0], n_bins=10)
    assert np.flatnonzero(curves.bin_rows).tolist() == [3, 7, 9]  # 0.3 is in [0.3, 0.4); 1.0 in the last bin
    assert np.isnan(curves.bin_precision[0])
    assert assert_valid(curves.to_dict())["bins"][0] == {"low": 0.0, "high": 0.1, "rows": 0, "undesirable": 0}


def test_bad_input_is_one_clear_error():
    with pytest.raises(fc.ConfigError, match="only one outcome"):
        quality_curves([1, 1], [0.2, 0.9])
    with pytest.raises(fc.ConfigError, match="one probability per"):
        quality_curves([1, 0], [0.2])
    with pytest.raises(fc.ConfigError, match="between 0 and 1"):
        quality_curves([1, 0], [0.2, 1.5])
    with pytest.raises(fc.ConfigError, match="2 bins"):
        quality_curves([1, 0], [0.2, 0.5], n_bins=1)


def _split_rule(rule, *, n: int = 400, constant: float | None = None):
    """A planted task whose outcome is ``rule`` itself, and a rule-coded model judged on the second half of its rows
    (the first half stand in as its training rows). ``constant``: the model answers that P for every row instead."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"speed": rng.uniform(20, 120, n).round(1), "colour": rng.choice(["red", "blue"], n)})
    task, _ = planted(frame, rule)
    estimator = Rule(rule) if constant is None else Rule(lambda X: np.full(len(X), constant))
    test = task.frame.iloc[n // 2:]
    model = fc.FittedModel.from_estimator(estimator, task, X_test=test[task.feature_names],
                                          y_test=test[task.target].to_numpy(), train_index=task.frame.index[: n // 2],
                                          identity="planted rule", evaluated_on="the second half")
    return task, model


def _fast(X):
    return X["speed"] > 80


def test_a_perfect_model_scores_one_and_a_constant_one_has_no_skill():
    task, perfect = _split_rule(_fast)
    curves = fc.models.model_curves(task, perfect)
    assert curves.roc_auc == 1.0 and curves.average_precision == 1.0
    assert curves.config["rows"] == 200 and curves.config["evaluated_on"] == "the second half"
    # Every undesirable row is in the last bin (P = 1) and none elsewhere: precision 1 there, 0 in the first.
    assert curves.bin_precision[-1] == 1.0 and curves.bin_precision[0] == 0.0
    task, constant = _split_rule(_fast, constant=0.3)
    curves = fc.models.model_curves(task, constant)
    assert curves.roc_auc == 0.5
    assert curves.average_precision == pytest.approx(curves.prevalence)  # no skill: the share undesirable
    np.testing.assert_allclose(curves.gain_found, curves.gain_share)  # the diagonal


def test_a_model_trained_elsewhere_without_held_out_rows_is_not_scored(accident_data, user_model, user_explainer):
    task = fc.make_task(accident_data, target="severity", undesirable="severe")
    from_file = fc.models.from_file_estimator(task, user_model, name="user.joblib")
    for task, model in (from_file, (user_explainer.task, user_explainer.model)):
        assert "test_accuracy" in model.metrics  # scored on every row, as the cutoff view does, with its caveat
        with pytest.raises(fc.ConfigError, match="without held-out rows"):
            fc.models.model_curves(task, model)


def test_the_curves_round_trip_through_json():
    curves = quality_curves(Y, P, n_bins=5, evaluated_on="ten rows")
    data = assert_valid(curves.to_dict())
    assert data["roc"]["thresholds"][0] is None  # above every probability: inf, written as null
    again = fc.read_result(curves.to_json())
    assert again.to_dict() == data and np.isinf(again.thresholds[0])


def test_the_figure_draws_each_curve_against_no_skill_and_marks_the_cutoff():
    curves = quality_curves(Y, P, n_bins=5)
    fig = fc.plotting.model_curves_figure(curves, at=fc.models.quality_at_cutoff(Y, P, 0.5), undesirable="Rejected")
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0] == "ROC: AUC 0.667 (no skill 0.5)" and titles[1] == "Precision-recall: AP 0.667 (no skill 0.400)"
    by_name = {}
    for trace in fig.data:
        by_name.setdefault(trace.name, []).append(trace)
    roc, pr, gain = by_name["model"]
    np.testing.assert_allclose(roc.x, curves.fpr) and np.testing.assert_allclose(roc.y, curves.tpr)
    np.testing.assert_allclose(gain.x, np.arange(11) / 10)
    assert list(by_name["no skill (precision 40.0%, the share Rejected)"][0].y) == [0.4, 0.4]
    np.testing.assert_allclose(by_name["precision"][0].y, [0, 1 / 2, 1 / 3, 1, 1 / 2])
    assert [t.text for t in by_name["precision"]] == [("2", "2", "3", "1", "2")]
    # Above 0.5: 0.9 and 0.7 (undesirable), 0.8 and 0.55 (not): 2 of 6 others flagged, 2 of 4 found, 4 of 10 taken.
    marks = [(t.x[0], t.y[0]) for t in by_name["cutoff 0.50"]]
    assert marks == [(pytest.approx(2 / 6), 0.5), (0.5, 0.5), (0.4, 0.5)]

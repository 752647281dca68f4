"""Model quality at a cutoff, checked against a confusion matrix counted by hand."""

import math

import numpy as np
import pytest

import flex_core as fc

# Ten rows: 4 truly undesirable (1), 6 not.
Y = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
P = [0.9, 0.7, 0.45, 0.2, 0.8, 0.55, 0.3, 0.1, 0.05, 0.5]


def test_counts_and_scores_at_a_cutoff_match_the_hand_count():
    q = fc.models.quality_at_cutoff(Y, P, 0.5)
    # Predicted undesirable (P > 0.5): rows 0, 1 (true 1) and 4, 5 (true 0); 0.5 itself is not above.
    assert (q.tn, q.fp, q.fn, q.tp) == (4, 2, 2, 2)
    assert q.matrix().tolist() == [[4, 2], [2, 2]]
    assert q.precision == pytest.approx(2 / 4)
    assert q.recall == pytest.approx(2 / 4)
    assert q.f1 == pytest.approx(0.5)
    assert q.accuracy == pytest.approx(6 / 10)
    # The majority (6 of 10) is "not undesirable": the baseline never predicts undesirable.
    assert not q.baseline_predicts_undesirable
    assert math.isnan(q.baseline_precision)
    assert q.baseline_recall == 0.0 and q.baseline_f1 == 0.0
    assert q.baseline_accuracy == pytest.approx(0.6)


def test_a_lower_cutoff_trades_precision_for_recall():
    q = fc.models.quality_at_cutoff(Y, P, 0.15)
    # P > 0.15: rows 0-3 (all four true 1) and 4, 5, 6, 9 (true 0).
    assert (q.tn, q.fp, q.fn, q.tp) == (2, 4, 0, 4)
    assert q.recall == 1.0 and q.precision == pytest.approx(0.5)
    assert q.f1 == pytest.approx(2 * 4 / (2 * 4 + 4))


def test_the_baseline_predicts_undesirable_when_it_is_the_majority():
    q = fc.models.quality_at_cutoff([1, 1, 1, 0], [0.9, 0.2, 0.6, 0.7], 0.5)
    assert q.baseline_predicts_undesirable
    assert q.baseline_precision == pytest.approx(0.75) and q.baseline_recall == 1.0
    assert q.baseline_f1 == pytest.approx(2 * 0.75 / 1.75)


def test_no_predicted_undesirable_has_no_precision_and_a_bad_cutoff_is_refused():
    q = fc.models.quality_at_cutoff(Y, P, 1.0)
    assert q.tp == q.fp == 0 and math.isnan(q.precision) and q.recall == 0.0
    with pytest.raises(fc.ConfigError, match="between 0 and 1"):
        fc.models.quality_at_cutoff(Y, P, 1.5)
    with pytest.raises(fc.ConfigError):
        fc.models.quality_at_cutoff(Y, P[:3], 0.5)


def test_calibration_bins_count_every_row_and_match_scikit_learn():
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(0)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(int)
    table = fc.models.calibration_table(y, p, n_bins=10)
    observed, predicted = calibration_curve(y, p, n_bins=10)
    assert table["rows"].sum() == 500
    np.testing.assert_allclose(table["observed"], observed)
    np.testing.assert_allclose(table["mean_predicted"], predicted)
    # Bin 0.3-0.4 by hand.
    inside = (p >= 0.3) & (p < 0.4)
    row = table[np.isclose(table["bin_low"], 0.3)].iloc[0]
    assert row["rows"] == inside.sum()
    assert row["observed"] == pytest.approx(y[inside].mean())


def test_held_out_predictions_are_the_test_split_of_a_model_trained_here():
    task = fc.data.load_builtin("toy2d")
    model = fc.fit_model(task, cv_folds=0)
    held = fc.models.held_out_predictions(task, model)
    assert set(held.rows) == set(model.test_index) and not set(held.rows) & set(model.train_index)
    q = fc.models.quality_at_cutoff(held.y_true, held.p, 0.5)
    assert q.accuracy == pytest.approx(model.metrics["test_accuracy"])
    assert "held-out" in held.evaluated_on


class _FixedScores:
    """A fitted 'classifier' whose P(yes) is the row's own ``p`` column: its predictions are set by hand."""

    classes_ = np.array(["no", "yes"])

    def predict_proba(self, X):
        p = X["p"].to_numpy(dtype=float)
        return np.column_stack([1 - p, p])


def _scored(p, outcomes) -> dict:
    import pandas as pd

    frame = pd.DataFrame({"p": p, "outcome": outcomes})
    task = fc.make_task(frame, target="outcome", undesirable="yes")
    return fc.models.FittedModel.from_estimator(_FixedScores(), task, X_test=task.X, y_test=outcomes).metrics


def test_the_undesirable_outcomes_precision_recall_and_f1_match_the_hand_count():
    outcomes = ["yes" if y else "no" for y in Y]
    metrics = _scored(P, outcomes)
    # As counted above at 0.5: tp 2, fp 2, fn 2, tn 4.
    assert metrics["test_precision_undesirable"] == pytest.approx(2 / 4)
    assert metrics["test_recall_undesirable"] == pytest.approx(2 / 4)
    assert metrics["test_f1_undesirable"] == pytest.approx(2 * 2 / (2 * 2 + 2 + 2))
    # The weighted F1 beside it: "no" has precision 4/6, recall 4/6 (F1 2/3) on 6 rows, "yes" F1 1/2 on 4 rows.
    assert metrics["test_f1"] == pytest.approx(0.6 * 2 / 3 + 0.4 * 0.5) and metrics["f1_average"] == "weighted"


def test_a_model_that_never_predicts_the_rare_outcome_shows_f1_zero_not_a_weighted_099():
    """The issue's case: a weighted F1 near 1 beside a balanced accuracy of 0.50."""
    outcomes = ["yes"] * 2 + ["no"] * 98
    metrics = _scored([0.1] * 100, outcomes)
    assert metrics["balanced_accuracy"] == pytest.approx(0.5)
    # Weighted: 0.98 x F1(no) = 0.98 x 2*98 / (2*98 + 2), + 0.02 x 0.
    assert metrics["test_f1"] == pytest.approx(0.98 * 196 / 198)
    assert metrics["test_recall_undesirable"] == 0.0 and metrics["test_f1_undesirable"] == 0.0
    assert metrics["test_precision_undesirable"] is None  # nothing predicted "yes": no precision, not a silent 0
    summary = fc.models._fit.model_summary(fc.models.FittedModel(
        name="stub", encoding="", seed=0, pipeline=None, train_index=np.arange(3), test_index=np.arange(3), metrics=metrics))
    assert summary["test_f1_undesirable"] == 0.0 and summary["f1_average"] == "weighted"


def test_the_quality_table_shows_the_undesirable_outcomes_scores_and_names_the_weighted_average():
    from flex_core.snapshot._payload import _quality
    from ui import reporting

    metrics = {"cv_folds": 5, "cv_accuracy_mean": 0.9, "cv_f1_mean": 0.88, "cv_f1_undesirable_mean": 0.4,
               "test_accuracy": 0.98, "balanced_accuracy": 0.5, "test_precision_undesirable": None,
               "test_recall_undesirable": 0.0, "test_f1_undesirable": 0.0, "test_f1": 0.97, "majority_baseline": 0.98}
    table = reporting.model_quality_table(metrics)
    assert list(table.columns) == list(fc.models._quality.QUALITY_COLUMNS)
    assert "F1 (both outcomes, weighted by rows)" in table.columns
    test_line = table.iloc[1]
    assert test_line["F1 (undesirable)"] == "0%" and test_line["precision (undesirable)"] == "–"
    assert test_line["balanced accuracy"] == "50%" and table.iloc[0]["F1 (undesirable)"] == "40%"
    # The pages head the outcome's own scores with its words, not "undesirable".
    worded = reporting.model_quality_table(metrics, outcome="Rejected")
    assert "F1 (Rejected)" in worded.columns and not any("undesirable" in c for c in worded.columns)
    assert worded.iloc[1]["F1 (Rejected)"] == "0%"
    # The interactive report gets the same columns and numbers.
    payload = _quality(metrics)
    assert payload["columns"] == list(fc.models._quality.QUALITY_COLUMNS)
    assert payload["lines"][1]["F1 (undesirable)"] == 0 and payload["lines"][1]["precision (undesirable)"] is None
    # A model scored before these were measured keeps its table without empty columns.
    old = reporting.model_quality_table({"test_accuracy": 0.9, "test_f1": 0.8, "majority_baseline": 0.7})
    assert list(old.columns) == ["measured on", "accuracy", "F1 (both outcomes, weighted by rows)",
                                 "always the most common outcome"]

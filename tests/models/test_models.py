"""Models: seeded pipelines in the original feature space, with cross-validated metrics."""

from __future__ import annotations

import numpy as np
import pytest

import flex_core as fc
from flex_core.models._fit import model_summary


@pytest.mark.parametrize("model", sorted(fc.models.MODELS))
def test_models_are_deterministic_and_evaluated(synthetic_task, model):
    first = fc.fit_model(synthetic_task, model=model, seed=3, cv_folds=3)
    second = fc.fit_model(synthetic_task, model=model, seed=3, cv_folds=3)
    np.testing.assert_array_equal(first.predict_proba(synthetic_task.X), second.predict_proba(synthetic_task.X))
    for key in ("cv_accuracy_mean", "cv_accuracy_std", "cv_f1_mean", "cv_f1_std", "test_accuracy", "test_f1"):
        assert 0 <= first.metrics[key] <= 1
    assert first.metrics["cv_folds"] == 3
    assert first.metrics["test_rows"] == 400 and first.metrics["train_rows"] == 1600  # the 80/20 split
    assert not set(first.train_index) & set(first.test_index)


def test_label_encoding_is_available(synthetic_task):
    model = fc.fit_model(synthetic_task, model="rf", encoding="label", cv_folds=2)
    assert model.encoding == "label"
    assert model.metrics["test_accuracy"] > 0.9
    with pytest.raises(fc.ConfigError, match="encoding"):
        fc.fit_model(synthetic_task, encoding="binary")
    with pytest.raises(fc.ConfigError, match="choose one of"):
        fc.fit_model(synthetic_task, model="svm")


def test_synthetic_drivers_are_learnable(synthetic_model):
    assert synthetic_model.metrics["test_accuracy"] > 0.93  # 3% label noise caps it near 0.97


@pytest.mark.slow
def test_paper_accuracy_accidents(accidents_path):
    task = fc.data.load_accidents(accidents_path)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=10)
    # The paper: CV accuracy 83.44% (0.53), F1 78.60% (0.55); test 83.47% / 78.94%.
    assert model.metrics["cv_folds"] == 10
    assert model.metrics["cv_accuracy_mean"] == pytest.approx(0.834, abs=0.03)
    assert model.metrics["cv_f1_mean"] == pytest.approx(0.786, abs=0.03)


@pytest.mark.slow
def test_paper_accuracy_loan(loan_path):
    task = fc.data.load_loan(loan_path)
    model = fc.fit_model(task, model="rf", seed=0, cv_folds=3)
    assert model.metrics["test_accuracy"] == pytest.approx(0.981, abs=0.015)  # the paper: 98.13%


def test_majority_only_model_is_flagged_in_metrics_summary_and_notes():
    from tests.factories import noise_frame

    task = fc.make_task(noise_frame(), target="outcome", undesirable="good", name="noise")
    model = fc.fit_model(task, model="lr", cv_folds=2)
    test_y = task.y[np.isin(task.frame.index, model.test_index)]
    predicted = model.predict_undesirable(task.X.loc[model.test_index])
    assert (predicted == 1).all()  # logistic regression on noise: always the majority ("good" is undesirable here)
    assert model.metrics["majority_baseline"] == pytest.approx(test_y.mean())
    assert model.metrics["test_accuracy"] == pytest.approx(model.metrics["majority_baseline"])
    assert model.metrics["balanced_accuracy"] == pytest.approx(0.5)
    summary = model_summary(model)
    assert summary["majority_baseline"] == model.metrics["majority_baseline"]
    assert summary["balanced_accuracy"] == pytest.approx(0.5)
    note = fc.models.adequacy_note(model.metrics)
    assert note and "does not beat" in note and f"{model.metrics['majority_baseline']:.1%}" in note
    store = fc.counterfactuals.CounterfactualStore(task, model, fc.counterfactuals.make_generator("batch"), n_cf=2)
    assert note in fc.importance.run_global(store, n_factuals=5).to_dict()["notes"]


def test_a_model_that_beats_the_baseline_gets_no_note(synthetic_model):
    metrics = synthetic_model.metrics
    assert metrics["test_accuracy"] > metrics["majority_baseline"] and metrics["balanced_accuracy"] > 0.9
    assert fc.models.adequacy_note(metrics) is None


def test_cross_validation_reports_each_fold_and_matches_sklearn():
    from sklearn.model_selection import StratifiedKFold, cross_validate, train_test_split

    task = fc.data.load_builtin("toy2d")
    calls = []
    model = fc.fit_model(task, model="lr", seed=3, cv_folds=4, progress=lambda *a: calls.append(a))
    assert [c[:2] for c in calls] == [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5)]
    assert calls[0][2] == "Cross-validation: fold 1 of 4" and calls[-1][2].startswith("Training the model on 480 rows")
    # The same folds and scores as scikit-learn's own cross_validate.
    train, _ = train_test_split(np.arange(len(task.y)), test_size=0.2, random_state=3, stratify=task.y)
    pipeline = fc.models.build_pipeline(task, model="lr", seed=3)
    expected = cross_validate(pipeline, task.X.iloc[train], task.y[train], scoring=("accuracy", "f1_weighted", "f1"),
                              cv=StratifiedKFold(n_splits=4, shuffle=True, random_state=3))
    assert model.metrics["cv_accuracy_mean"] == pytest.approx(np.mean(expected["test_accuracy"]))
    assert model.metrics["cv_f1_std"] == pytest.approx(np.std(expected["test_f1_weighted"]))
    assert model.metrics["cv_f1_undesirable_mean"] == pytest.approx(np.mean(expected["test_f1"]))  # the outcome's own
    assert "note" not in model.metrics and "cv_rows" not in model.metrics


def test_cross_validation_can_be_subsampled_or_skipped_and_says_so():
    task = fc.data.load_builtin("toy2d")
    full = fc.fit_model(task, model="lr", seed=0, cv_folds=3)
    sampled = fc.fit_model(task, model="lr", seed=0, cv_folds=3, cv_rows=120)
    assert sampled.metrics["cv_rows"] == 120 and "120 of the 480 training rows" in sampled.metrics["note"]
    # Three folds of 40 rows: every fold accuracy is a multiple of 1/40, so the mean times 120 is whole.
    assert sampled.metrics["cv_accuracy_mean"] * 120 == pytest.approx(round(sampled.metrics["cv_accuracy_mean"] * 120))
    # The final model is the same: only the cross-validation looked at fewer rows.
    assert sampled.metrics["test_accuracy"] == full.metrics["test_accuracy"]
    skipped = fc.fit_model(task, model="lr", seed=0, cv_folds=0)
    assert "cv_accuracy_mean" not in skipped.metrics and "skipped" in skipped.metrics["note"]
    assert model_summary(skipped)["note"] == skipped.metrics["note"]
    with pytest.raises(fc.ConfigError, match="0 skips it.* from 0 to 10, not 1; got 1"):
        fc.fit_model(task, cv_folds=1)

"""Models: seeded pipelines in the original feature space, with cross-validated metrics."""

from __future__ import annotations

import numpy as np
import pytest

import flex_core as fc


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

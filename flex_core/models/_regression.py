"""Regression models (issue 38): the regressors :func:`~flex_core.models.fit_model` fits for a task with a band,
the checks that a user's model fits its task, and a regressor's quality scores (R², MAE, RMSE against predicting the
mean)."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from .._errors import ConfigError
from ..data import TaskSpec
from ..data._band import Band

__all__ = ["REGRESSORS", "BAND_SCALE_SHARE", "REGRESSION_KEYS", "regressor", "regression_scores", "check_classifier",
           "check_regressor", "band_scale", "cross_validate_r2", "regression_summary"]


#: The regressor each of :data:`MODELS` fits for a task with a band (a number target).
REGRESSORS = {
    "rf": "Random forest regressor (100 trees)",
    "gb": "Histogram gradient boosting regressor",
    "lr": "Linear regression",
}
#: A regression model's band scale ``s`` (:meth:`flex_core.data.Band.score`): this share of the target's standard
#: deviation over the rows the model learned from.
BAND_SCALE_SHARE = 0.1
#: A regression model's scores in :func:`regression_summary` (and ``FittedModel.metrics``).
REGRESSION_KEYS = ("test_r2", "test_mae", "test_rmse", "baseline_mae", "baseline_rmse", "cv_r2_mean", "cv_r2_std")


#: The least training rows in a leaf of the random forest regressor FLEX fits: Breiman's default for regression
#: (R's randomForest, nodesize = 5). A leaf of one row predicts that row's own number, noise included; on the loan
#: data (loan_amount above 20,000,000) five rows give the same cross-validated R² (0.855 against 0.852) with a fifth of
#: the leaves, and the tree generator reads them 3.6 times as fast (docs/generators.md).
RF_REGRESSOR_MIN_LEAF = 5


def regressor(model: str, seed: int):
    """The unfitted regressor of :data:`REGRESSORS`' key ``model`` (seeded as the classifiers are)."""
    if model == "rf":
        return RandomForestRegressor(n_estimators=100, min_samples_leaf=RF_REGRESSOR_MIN_LEAF, random_state=seed, n_jobs=1)
    if model == "gb":
        return HistGradientBoostingRegressor(random_state=seed)
    if model == "lr":
        return LinearRegression()
    raise ConfigError(f"Unknown model {model!r}; choose one of {', '.join(REGRESSORS)}.")


def regression_scores(actual, predicted, reference: float) -> dict[str, float]:
    """R², MAE and RMSE of predictions, and the MAE and RMSE of always predicting ``reference`` (a training mean).

    R² = 1 - Σ(y - ŷ)² / Σ(y - ȳ)² over these rows (scikit-learn's ``r2_score``; NaN when every y is equal),
    MAE = mean |y - ŷ|, RMSE = sqrt(mean (y - ŷ)²).
    """
    actual, predicted = np.asarray(actual, dtype=float), np.asarray(predicted, dtype=float)
    errors, baseline = actual - predicted, actual - float(reference)
    r2 = float(r2_score(actual, predicted)) if len(actual) > 1 and np.ptp(actual) > 0 else float("nan")
    return {"test_r2": r2, "test_mae": float(np.mean(np.abs(errors))), "test_rmse": float(np.sqrt(np.mean(errors ** 2))),
            "baseline_mae": float(np.mean(np.abs(baseline))), "baseline_rmse": float(np.sqrt(np.mean(baseline ** 2)))}


def check_classifier(estimator) -> None:
    """Refuse anything but a fitted classifier for a classification task (a regressor: say to give a band)."""
    if callable(getattr(estimator, "predict_proba", None)) and hasattr(estimator, "classes_"):
        return
    if is_regressor(estimator) or (not is_classifier(estimator) and callable(getattr(estimator, "predict", None))):
        raise ConfigError(f"The model ({type(estimator).__name__}) predicts a number, not classes: give the undesirable "
                          "band of its prediction (--above T, --below T or --band LO:HI; in Python undesirable={'above': T}).")
    raise ConfigError(
        f"The model must be a fitted classifier with predict_proba and classes_; got {type(estimator).__name__}.")


def check_regressor(estimator, undesired, desired) -> None:
    """Refuse anything but a fitted regressor for a task with a band, and undesired or desired classes beside it."""
    if is_classifier(estimator) or hasattr(estimator, "classes_"):
        raise ConfigError(f"The model ({type(estimator).__name__}) is a classifier; a band applies to a regressor's "
                          "number. Name the undesirable classes instead of a band.")
    if not callable(getattr(estimator, "predict", None)):
        raise ConfigError(f"The model must be a fitted regressor with predict; got {type(estimator).__name__}.")
    if undesired is not None or desired is not None:
        raise ConfigError("A regression model's undesirable outcome is its band; give no undesired or desired classes.")


def band_scale(task: TaskSpec, train_index) -> float:
    """:data:`BAND_SCALE_SHARE` x the target's standard deviation over the training rows (every row by default)."""
    values = task.frame[task.target] if train_index is None else task.frame.loc[np.asarray(train_index), task.target]
    sd = float(np.std(values.to_numpy(dtype=float)))
    return BAND_SCALE_SHARE * sd if sd > 0 else 1.0


def cross_validate_r2(pipeline, X: pd.DataFrame, values: np.ndarray, strata: np.ndarray, cv, progress,
                      total: int) -> np.ndarray:
    """R² per fold of a regression pipeline (folds stratified by the band's outcome), reporting each fold as it starts."""
    out = []
    for k, (fit_pos, score_pos) in enumerate(cv.split(X, strata)):
        progress(k, total, f"Cross-validation: fold {k + 1} of {cv.get_n_splits()}")
        fold = clone(pipeline).fit(X.iloc[fit_pos], values[fit_pos])
        out.append(regression_scores(values[score_pos], fold.predict(X.iloc[score_pos]), 0.0)["test_r2"])
    return np.array(out)


def regression_summary(model) -> dict:
    """A regression model's band and number scores as they go into a result's JSON (:func:`model_summary`)."""
    return {
        "band": {**cast(Band, model.band).as_dict(), "scale": model.band_scale},
        **{key: model.metrics.get(key) for key in REGRESSION_KEYS},
    }


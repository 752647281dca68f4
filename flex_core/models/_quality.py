"""How good the model is at a decision cutoff: the confusion matrix, precision, recall and F1 of the
undesirable class beside the majority-class baseline, and a calibration curve (reliability diagram).

All of it is computed on the model's evaluation rows (:func:`held_out_predictions`): the held-out
test split for a model trained here, every row of the data for a model loaded from a file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import ConfigError
from ..data import TaskSpec
from ._fit import FittedModel

__all__ = ["HeldOut", "CutoffQuality", "NOT_HELD_OUT", "held_out_predictions", "held_out_only", "quality_at_cutoff",
           "calibration_table", "QUALITY_COLUMNS", "REGRESSION_COLUMNS", "quality_table", "quality_lines", "quality_columns"]

#: The columns of the model's quality table (the app, the print report and the interactive report), in order. The
#: undesirable outcome's own precision, recall and F1 come first; the weighted F1 says what it averages.
QUALITY_COLUMNS = ("measured on", "accuracy", "balanced accuracy", "precision (undesirable)", "recall (undesirable)",
                   "F1 (undesirable)", "F1 (both outcomes, weighted by rows)", "always the most common outcome")
_CV_KEYS = ("cv_accuracy_mean", "cv_balanced_accuracy_mean", None, None, "cv_f1_undesirable_mean", "cv_f1_mean", None)
_TEST_KEYS = ("test_accuracy", "balanced_accuracy", "test_precision_undesirable", "test_recall_undesirable",
              "test_f1_undesirable", "test_f1", "majority_baseline")
#: A regression model's own columns (numbers in the target's units but R²), before the band outcome's
#: :data:`QUALITY_COLUMNS`: its errors beside those of always predicting the training rows' mean.
REGRESSION_COLUMNS = ("R²", "MAE", "RMSE", "MAE of always the training mean", "RMSE of always the training mean")
_CV_REGRESSION_KEYS = ("cv_r2_mean", None, None, None, None)
_TEST_REGRESSION_KEYS = ("test_r2", "test_mae", "test_rmse", "baseline_mae", "baseline_rmse")


def quality_table(metrics, test_label: str) -> tuple[list[str], list[dict]]:
    """(:func:`quality_columns`, :func:`quality_lines`): the model's quality table as every front end shows it."""
    return quality_columns(metrics), quality_lines(metrics, test_label)


def quality_lines(metrics, test_label: str) -> list[dict]:
    """The model's scores as lines of the quality table (:data:`QUALITY_COLUMNS`; a score not measured is None).

    One line for the cross-validation when it ran (``metrics["cv_folds"]``), then one for the test rows,
    labelled ``test_label``. ``metrics`` is :attr:`FittedModel.metrics`.
    """
    lines = []
    if metrics.get("cv_folds"):
        lines.append(_line(f"cross-validation (mean of {metrics['cv_folds']} folds)", _CV_KEYS, metrics))
    lines.append(_line(test_label, _TEST_KEYS, metrics))
    return lines


def quality_columns(metrics) -> list[str]:
    """The columns of :data:`QUALITY_COLUMNS` that ``metrics`` measured (a model scored before a score existed,
    e.g. one without balanced accuracy, leaves that column out; one measured but undefined stays, shown empty); a
    regression model's :data:`REGRESSION_COLUMNS` first (its classification scores are of the band's outcome)."""
    columns = (*REGRESSION_COLUMNS, *QUALITY_COLUMNS[1:])
    keys = zip((*_CV_REGRESSION_KEYS, *_CV_KEYS), (*_TEST_REGRESSION_KEYS, *_TEST_KEYS))
    measured = [any(key in metrics for key in pair if key) for pair in keys]
    return [QUALITY_COLUMNS[0], *(c for c, m in zip(columns, measured) if m)]


def _line(label: str, keys, metrics) -> dict:
    regression = _CV_REGRESSION_KEYS if keys is _CV_KEYS else _TEST_REGRESSION_KEYS
    pairs = [*zip(REGRESSION_COLUMNS, regression), *zip(QUALITY_COLUMNS[1:], keys)]
    return {"measured on": label, **{column: None if key is None else metrics.get(key) for column, key in pairs}}

#: Why the views that need rows the model never saw (ROC, PR, gain, permutation importance) are not drawn.
NOT_HELD_OUT = (
    "The model came without held-out rows: it was trained elsewhere, so every row with a true outcome may be one "
    "it learned from, and scores on them would flatter it. A model trained here is judged on its held-out 20% "
    "test split."
)


@dataclass(frozen=True)
class HeldOut:
    """The rows a model is judged on: row ids, true outcomes (1 = undesirable) and P(undesirable).

    ``evaluated_on`` says which rows they are, in words (e.g. "the held-out 20% test split"); for a
    model loaded from a file it says the rows may include rows the model was trained on.
    """

    rows: np.ndarray
    y_true: np.ndarray
    p: np.ndarray
    evaluated_on: str
    #: A regression model's true numbers and predictions of the rows (target units; the residual plot's);
    #: None for a classifier.
    actual: np.ndarray | None = None
    predicted: np.ndarray | None = None


def held_out_predictions(task: TaskSpec, model: FittedModel) -> HeldOut:
    """P(undesirable) and the true outcome of each of the model's evaluation rows (``model.test_index``).

    Raises ConfigError when the model has no evaluation rows (a model given without true outcomes).
    """
    rows = np.asarray(model.test_index)
    if len(rows) == 0 or "test_accuracy" not in model.metrics:
        raise ConfigError("The model has no rows with true outcomes to judge it on (it was given without them).")
    frame = task.frame.loc[rows]
    y_true = task.y[task.frame.index.get_indexer(rows)]  # 1 undesirable (a regression: the true number in the band)
    p = model.predict_proba(frame[task.feature_names])[:, 1]
    numbers = {} if model.band is None else {"actual": frame[task.target].to_numpy(dtype=float),
                                             "predicted": model.predict_value(frame[task.feature_names])}
    return HeldOut(rows=rows, y_true=y_true, p=p, evaluated_on=str(model.metrics.get("evaluated_on") or "the test rows"),
                   **numbers)


def held_out_only(task: TaskSpec, model: FittedModel) -> HeldOut:
    """:func:`held_out_predictions` when the evaluation rows are rows the model was not trained on.

    Raises ConfigError (:data:`NOT_HELD_OUT`) for a model whose evaluation rows overlap its training rows:
    a model trained elsewhere is scored on every row of the data, rows it may have learned from.
    """
    if np.isin(np.asarray(model.test_index), np.asarray(model.train_index)).any():
        raise ConfigError(NOT_HELD_OUT)
    return held_out_predictions(task, model)


@dataclass(frozen=True)
class CutoffQuality:
    """Counts and scores at one cutoff: a row is predicted undesirable when P(undesirable) > cutoff
    (so 0.5 gives the model's own predictions, as FLEX takes them).

    precision, recall and f1 are those of the undesirable class (NaN where undefined: no row
    predicted undesirable has no precision). ``baseline_*`` are the same for always predicting
    the most common outcome of these rows (``baseline_predicts_undesirable`` says which).
    """

    cutoff: float
    tn: int
    fp: int
    fn: int
    tp: int
    precision: float
    recall: float
    f1: float
    accuracy: float
    baseline_predicts_undesirable: bool
    baseline_precision: float
    baseline_recall: float
    baseline_f1: float
    baseline_accuracy: float

    @property
    def n(self) -> int:
        return self.tn + self.fp + self.fn + self.tp

    def matrix(self) -> np.ndarray:
        """[[tn, fp], [fn, tp]]: rows the true outcome (desirable, undesirable), columns the predicted one."""
        return np.array([[self.tn, self.fp], [self.fn, self.tp]])

    def table(self) -> pd.DataFrame:
        """Precision, recall, F1 and accuracy of the model beside the baseline (one row each)."""
        return pd.DataFrame(
            {
                "measure": ["Precision (undesirable)", "Recall (undesirable)", "F1 (undesirable)", "Accuracy"],
                "model": [self.precision, self.recall, self.f1, self.accuracy],
                "always the most common outcome": [self.baseline_precision, self.baseline_recall, self.baseline_f1,
                                                   self.baseline_accuracy],
            }
        )


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den else float("nan")


def _scores(tn: int, fp: int, fn: int, tp: int) -> tuple[float, float, float, float]:
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    return precision, recall, f1, _ratio(tp + tn, tn + fp + fn + tp)


def quality_at_cutoff(y_true, p, cutoff: float) -> CutoffQuality:
    """The confusion matrix and scores when rows with P(undesirable) above ``cutoff`` are predicted undesirable
    (strictly above, as :meth:`FittedModel.predict_undesirable` at 0.5).

    Parameters
    ----------
    y_true : array-like of shape (n_rows,)
        1 where the true outcome is undesirable, else 0.
    p : array-like of shape (n_rows,)
        P(undesirable) of each row.
    cutoff : float in [0, 1]
    """
    y = np.asarray(y_true, dtype=int)
    p = np.asarray(p, dtype=float)
    if y.shape != p.shape or y.ndim != 1 or len(y) == 0:
        raise ConfigError("quality_at_cutoff needs as many probabilities as outcomes, and at least one row.")
    if not 0.0 <= float(cutoff) <= 1.0:
        raise ConfigError(f"The cutoff must lie between 0 and 1 (got {cutoff}).")
    predicted = p > float(cutoff)
    actual = y == 1
    tp = int(np.sum(predicted & actual))
    fp = int(np.sum(predicted & ~actual))
    fn = int(np.sum(~predicted & actual))
    tn = int(np.sum(~predicted & ~actual))
    precision, recall, f1, accuracy = _scores(tn, fp, fn, tp)
    positives = int(actual.sum())
    majority_undesirable = positives > len(y) - positives
    if majority_undesirable:
        base = _scores(0, len(y) - positives, 0, positives)
    else:
        base = _scores(len(y) - positives, 0, positives, 0)
    return CutoffQuality(float(cutoff), tn, fp, fn, tp, precision, recall, f1, accuracy, majority_undesirable, *base)


def calibration_table(y_true, p, *, n_bins: int = 10) -> pd.DataFrame:
    """The reliability diagram's points: per bin of P(undesirable) (``n_bins`` equal widths), the mean
    predicted probability, the observed share undesirable and the number of rows. Empty bins are left out.

    The points are scikit-learn's ``calibration_curve(strategy="uniform")``; the counts use its bins.
    """
    from sklearn.calibration import calibration_curve

    y = np.asarray(y_true, dtype=int)
    p = np.asarray(p, dtype=float)
    if n_bins < 2:
        raise ConfigError("A calibration curve needs at least 2 bins.")
    observed, predicted = calibration_curve(y, p, n_bins=n_bins, strategy="uniform")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.searchsorted(edges[1:-1], p, side="right")  # scikit-learn's binning
    counts = np.bincount(bins, minlength=n_bins)
    filled = np.flatnonzero(counts)
    return pd.DataFrame(
        {
            "bin_low": edges[filled],
            "bin_high": edges[filled + 1],
            "mean_predicted": predicted,
            "observed": observed,
            "rows": counts[filled],
        }
    )

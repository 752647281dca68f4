"""Scoring a classifier's outcomes and cross-validating :func:`~flex_core.models.fit_model`'s pipeline on its training
part (a regression's folds score R², see ``_regression``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold, train_test_split

from ._regression import cross_validate_r2

__all__ = ["F1_AVERAGE", "undesirable_scores", "cv_metrics", "cross_validate", "mean_std", "smallest_class"]


#: What ``metrics["test_f1"]`` and ``cv_f1_mean`` average over: each outcome's F1 weighted by its rows (the paper's).
F1_AVERAGE = "weighted"

def undesirable_scores(actual, predicted) -> dict[str, float | None]:
    """Precision, recall and F1 of the undesirable outcome (1) from true and predicted 0/1 outcomes.

    precision = tp / (tp + fp), recall = tp / (tp + fn), F1 = 2 tp / (2 tp + fp + fn); None where the
    denominator is 0 (no row predicted undesirable has no precision), never a silent 0.
    """
    actual, predicted = np.asarray(actual, dtype=bool), np.asarray(predicted, dtype=bool)
    tp = int(np.sum(actual & predicted))
    fp = int(np.sum(~actual & predicted))
    fn = int(np.sum(actual & ~predicted))

    def ratio(num: int, den: int) -> float | None:
        return float(num / den) if den else None

    return {"precision": ratio(tp, tp + fp), "recall": ratio(tp, tp + fn), "f1": ratio(2 * tp, 2 * tp + fp + fn)}

def cross_validate(pipeline, X: pd.DataFrame, y: np.ndarray, cv, progress, total: int) -> dict[str, np.ndarray]:
    """Accuracy, weighted F1 and the undesirable outcome's F1 per fold (the first two as sklearn's cross_validate),
    reporting each fold as it starts."""
    accuracy, f1, f1_undesirable = [], [], []
    n_splits = cv.get_n_splits()
    for k, (fit_pos, score_pos) in enumerate(cv.split(X, y)):
        progress(k, total, f"Cross-validation: fold {k + 1} of {n_splits}")
        fold = clone(pipeline).fit(X.iloc[fit_pos], y[fit_pos])
        # Scored as undesirable (label 1) against the rest, as the test part is, whatever else the labels tell apart.
        actual, predicted = y[score_pos] == 1, fold.predict(X.iloc[score_pos]) == 1
        accuracy.append(accuracy_score(actual, predicted))
        f1.append(f1_score(actual, predicted, average="weighted"))
        f1_undesirable.append(undesirable_scores(actual, predicted)["f1"])
    return {"test_accuracy": np.array(accuracy), "test_f1_weighted": np.array(f1),
            "test_f1_undesirable": np.array([np.nan if v is None else v for v in f1_undesirable])}

def cv_metrics(pipeline, X: pd.DataFrame, y: np.ndarray, train_pos: np.ndarray, *, cv_folds: int,
                cv_rows: int | None, seed: int, progress, values: np.ndarray | None = None) -> tuple[dict, int]:
    """:func:`fit_model`'s cross-validation on the training part (or a stratified sample of it): its metrics, with a
    ``note`` saying what was sampled, cut or skipped, and the steps the whole fit reports (folds, then the final fit).
    ``values``: a regression's numbers, which the folds fit and score (R²); ``y`` then only stratifies them.
    """
    metrics: dict = {}
    notes = []
    cv_pos = train_pos
    if cv_folds and cv_rows is not None and len(train_pos) > cv_rows:
        cv_pos, _ = train_test_split(train_pos, train_size=cv_rows, random_state=seed, stratify=y[train_pos])
        cv_pos = np.sort(cv_pos)
        metrics["cv_rows"] = int(len(cv_pos))
        notes.append(f"Cross-validation used a random sample of {len(cv_pos):,} of the {len(train_pos):,} "
                     "training rows (stratified, seeded), to keep training quick on large data.")
    folds = min(cv_folds, int(np.bincount(y[cv_pos] == 1, minlength=2).min()), smallest_class(y[cv_pos]))
    steps = (folds if folds >= 2 else 0) + 1
    if not cv_folds:
        notes.append("Cross-validation was skipped; the held-out test split is the only check of the model.")
    elif folds >= 2 and values is not None:
        r2 = cross_validate_r2(pipeline, X.iloc[cv_pos], values[cv_pos], y[cv_pos],
                                StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed), progress, steps)
        metrics.update(cv_folds=folds, **mean_std("cv_r2", r2))
    elif folds >= 2:
        scores = cross_validate(pipeline, X.iloc[cv_pos], y[cv_pos],
                                 StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed), progress, steps)
        if folds < cv_folds:
            notes.append(f"{cv_folds}-fold cross-validation was cut to {folds} folds: the smaller class is that small.")
        metrics.update(
            cv_folds=folds,
            cv_accuracy_mean=float(np.mean(scores["test_accuracy"])),
            cv_accuracy_std=float(np.std(scores["test_accuracy"])),
            cv_f1_mean=float(np.mean(scores["test_f1_weighted"])),
            cv_f1_std=float(np.std(scores["test_f1_weighted"])),
            **mean_std("cv_f1_undesirable", scores["test_f1_undesirable"]),
        )
    if notes:
        metrics["note"] = " ".join(notes)
    return metrics, steps

def mean_std(name: str, values: np.ndarray) -> dict:
    """``{name}_mean`` and ``{name}_std`` over the folds where the score is defined (None when it is in none)."""
    defined = values[np.isfinite(values)]
    if not len(defined):
        return {f"{name}_mean": None, f"{name}_std": None}
    return {f"{name}_mean": float(np.mean(defined)), f"{name}_std": float(np.std(defined))}


def smallest_class(labels: np.ndarray) -> int:
    """Rows of the least common label present."""
    return int(np.unique(labels, return_counts=True)[1].min())

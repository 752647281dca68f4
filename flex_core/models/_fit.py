"""Seeded scikit-learn pipelines that take the task's original feature frame.

Encoding lives inside the pipeline, so explainers (DiCE, SHAP, LIME, the batch
generator) all talk to the model in the original feature space.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

from .._errors import ConfigError
from ..data import TaskSpec

__all__ = ["FittedModel", "fit_model", "MODELS", "model_summary", "adequacy_note"]

MODELS = {
    "rf": "Random forest (100 trees; the paper's model)",
    "gb": "Histogram gradient boosting",
    "lr": "Logistic regression",
}
Encoding = Literal["onehot", "label"]


def _estimator(model: str, seed: int):
    if model == "rf":
        return RandomForestClassifier(n_estimators=100, random_state=seed, n_jobs=1)
    if model == "gb":
        return HistGradientBoostingClassifier(random_state=seed)
    if model == "lr":
        return LogisticRegression(max_iter=2000)
    raise ConfigError(f"Unknown model {model!r}; choose one of {', '.join(MODELS)}.")


def build_pipeline(task: TaskSpec, *, model: str = "rf", encoding: Encoding = "onehot", seed: int = 0) -> Pipeline:
    """Encoder + classifier. ``encoding="label"`` reproduces the paper's label encoding."""
    categorical = task.categorical_names
    continuous = task.continuous_names
    categories = [list(task.feature(c).categories) for c in categorical]
    if encoding == "onehot":
        cat_encoder = OneHotEncoder(categories=categories, handle_unknown="ignore", sparse_output=False)
    elif encoding == "label":
        cat_encoder = OrdinalEncoder(categories=categories, handle_unknown="use_encoded_value", unknown_value=-1)
    else:
        raise ConfigError(f"Unknown encoding {encoding!r}; use 'onehot' or 'label'.")
    # Logistic regression needs comparable scales; trees do not care.
    numeric = StandardScaler() if model == "lr" else "passthrough"
    transformers = []
    if categorical:
        transformers.append(("categorical", cat_encoder, categorical))
    if continuous:
        transformers.append(("continuous", numeric, continuous))
    pre = ColumnTransformer(transformers, verbose_feature_names_out=False)
    return Pipeline([("encode", pre), ("classify", _estimator(model, seed))])


@dataclass(frozen=True, eq=False)
class FittedModel:
    """A fitted pipeline with its evaluation. ``predict_undesirable`` is the one entry point explainers use."""

    name: str
    encoding: str
    seed: int
    pipeline: Pipeline
    train_index: np.ndarray
    test_index: np.ndarray
    metrics: dict = field(default_factory=dict)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Probabilities of (desirable, undesirable), shape (n_rows, 2)."""
        return self.pipeline.predict_proba(X)

    def predict_undesirable(self, X: pd.DataFrame) -> np.ndarray:
        """1 where the predicted outcome is undesirable, shape (n_rows,)."""
        return (self.pipeline.predict_proba(X)[:, 1] > 0.5).astype(int)

    @property
    def label(self) -> str:
        return MODELS.get(self.name, self.name)


def _cross_validate(pipeline, X: pd.DataFrame, y: np.ndarray, cv, progress, total: int) -> dict[str, np.ndarray]:
    """Accuracy and weighted F1 per fold, as sklearn's cross_validate, reporting each fold as it starts."""
    accuracy, f1 = [], []
    n_splits = cv.get_n_splits()
    for k, (fit_pos, score_pos) in enumerate(cv.split(X, y)):
        progress(k, total, f"Cross-validation: fold {k + 1} of {n_splits}")
        fold = clone(pipeline).fit(X.iloc[fit_pos], y[fit_pos])
        predicted = fold.predict(X.iloc[score_pos])
        accuracy.append(accuracy_score(y[score_pos], predicted))
        f1.append(f1_score(y[score_pos], predicted, average="weighted"))
    return {"test_accuracy": np.array(accuracy), "test_f1_weighted": np.array(f1)}


def fit_model(
    task: TaskSpec,
    *,
    model: str = "rf",
    encoding: Encoding = "onehot",
    seed: int = 0,
    cv_folds: int = 10,
    cv_rows: int | None = None,
    test_size: float = 0.2,
    progress: Callable[[int, int, str], None] | None = None,
) -> FittedModel:
    """Fit on an 80/20 stratified split, with k-fold cross-validation on the training part.

    F1 is the support-weighted F1, which is what the paper's numbers (accuracy 83.4%,
    F1 78.6% on accidents) imply on such an imbalanced target.

    Parameters
    ----------
    cv_folds : int
        Folds of the cross-validation; 0 skips it (large data), which ``metrics["note"]`` says.
    cv_rows : int, optional
        Cross-validate on a stratified, seeded sample of at most this many training
        rows (the final model still trains on all of them); ``metrics["cv_rows"]``
        and ``metrics["note"]`` say so when it applies.
    progress : callable(step, total, text), optional
        Called before each cross-validation fold and before the final fit.
    """
    if model not in MODELS:
        raise ConfigError(f"Unknown model {model!r}; choose one of {', '.join(MODELS)}.")
    if cv_folds < 2 and cv_folds != 0:
        raise ConfigError(f"Cross-validation needs at least 2 folds, or 0 to skip it (got {cv_folds}).")
    if cv_rows is not None and cv_rows < 10:
        raise ConfigError(f"Cross-validation needs at least 10 rows (cv_rows={cv_rows}).")
    progress = progress or (lambda step, total, text: None)
    X, y = task.X, task.y
    if min(np.bincount(y, minlength=2)) < 2:
        raise ConfigError("Each outcome needs at least two rows to split into training and test data.")
    positions = np.arange(len(y))
    train_pos, test_pos = train_test_split(positions, test_size=test_size, random_state=seed, stratify=y)
    pipeline = build_pipeline(task, model=model, encoding=encoding, seed=seed)
    metrics: dict = {}
    notes = []
    cv_pos = train_pos
    if cv_folds and cv_rows is not None and len(train_pos) > cv_rows:
        cv_pos, _ = train_test_split(train_pos, train_size=cv_rows, random_state=seed, stratify=y[train_pos])
        cv_pos = np.sort(cv_pos)
        metrics["cv_rows"] = int(len(cv_pos))
        notes.append(f"Cross-validation used a random sample of {len(cv_pos):,} of the {len(train_pos):,} "
                     "training rows (stratified, seeded), to keep training quick on large data.")
    folds = min(cv_folds, int(np.bincount(y[cv_pos], minlength=2).min()))
    steps = (folds if folds >= 2 else 0) + 1
    if not cv_folds:
        notes.append("Cross-validation was skipped; the held-out test split is the only check of the model.")
    elif folds >= 2:
        scores = _cross_validate(pipeline, X.iloc[cv_pos], y[cv_pos],
                                 StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed), progress, steps)
        if folds < cv_folds:
            notes.append(f"{cv_folds}-fold cross-validation was cut to {folds} folds: the smaller class is that small.")
        metrics.update(
            cv_folds=folds,
            cv_accuracy_mean=float(np.mean(scores["test_accuracy"])),
            cv_accuracy_std=float(np.std(scores["test_accuracy"])),
            cv_f1_mean=float(np.mean(scores["test_f1_weighted"])),
            cv_f1_std=float(np.std(scores["test_f1_weighted"])),
        )
    if notes:
        metrics["note"] = " ".join(notes)
    progress(steps - 1, steps, f"Training the model on {len(train_pos):,} rows")
    pipeline.fit(X.iloc[train_pos], y[train_pos])
    predicted = pipeline.predict(X.iloc[test_pos])
    # The baseline always predicts the training part's most common class; a model that does not beat it
    # on the test part has learned little, however high its accuracy looks on imbalanced data.
    majority = np.bincount(y[train_pos], minlength=2).argmax()
    metrics.update(
        test_accuracy=float(accuracy_score(y[test_pos], predicted)),
        test_f1=float(f1_score(y[test_pos], predicted, average="weighted")),
        majority_baseline=float(np.mean(y[test_pos] == majority)),
        balanced_accuracy=float(balanced_accuracy_score(y[test_pos], predicted)),
        train_rows=int(len(train_pos)),
        test_rows=int(len(test_pos)),
    )
    return FittedModel(
        name=model,
        encoding=encoding,
        seed=seed,
        pipeline=pipeline,
        train_index=task.frame.index.to_numpy()[train_pos],
        test_index=task.frame.index.to_numpy()[test_pos],
        metrics=metrics,
    )


def adequacy_note(metrics: dict) -> str | None:
    """A warning when test accuracy does not beat always predicting the majority class, else None."""
    accuracy, baseline = metrics.get("test_accuracy"), metrics.get("majority_baseline")
    if accuracy is None or baseline is None or accuracy > baseline:
        return None
    balanced = metrics.get("balanced_accuracy")
    return (
        f"The model's test accuracy ({accuracy:.1%}) does not beat always predicting the most common outcome "
        f"({baseline:.1%})"
        + (f"; its balanced accuracy is {balanced:.1%}" if balanced is not None else "")
        + ". The importances explain this model, which has learned little about the outcome."
    )


def model_summary(model: FittedModel) -> dict:
    """The model's settings and test metrics, as they appear in the JSON export."""
    return {
        "name": model.name,
        "encoding": model.encoding,
        "seed": model.seed,
        "cv_accuracy_mean": model.metrics.get("cv_accuracy_mean"),
        "cv_accuracy_std": model.metrics.get("cv_accuracy_std"),
        "cv_f1_mean": model.metrics.get("cv_f1_mean"),
        "cv_f1_std": model.metrics.get("cv_f1_std"),
        "test_accuracy": model.metrics.get("test_accuracy"),
        "test_f1": model.metrics.get("test_f1"),
        "majority_baseline": model.metrics.get("majority_baseline"),
        "balanced_accuracy": model.metrics.get("balanced_accuracy"),
        "cv_folds": model.metrics.get("cv_folds"),
        "cv_rows": model.metrics.get("cv_rows"),  # None: cross-validated on every training row
        "note": model.metrics.get("note"),  # CV skipped, subsampled or cut to fewer folds
    }

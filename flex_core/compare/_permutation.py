"""Permutation importance on the model's held-out rows: how much the model's ROC AUC drops when one
feature's column is shuffled (scikit-learn's ``permutation_importance``), with its spread over repeats.

It ranks what the *model* relies on to tell cases apart, on rows it never saw, where FLEX ranks what the smallest
ways out of the undesirable outcome change: a fourth ranking beside FLEX, DiCE's count and SHAP.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from .._contract import json_floats, json_matrix, json_number
from .._errors import ConfigError
from .._results import FeatureScores
from ..data import TaskSpec
from ..limits import check
from ..models import FittedModel
from ..models._quality import held_out_only

__all__ = ["PermutationImportance", "permutation_importance"]


@dataclass(frozen=True, eq=False)
class PermutationImportance(FeatureScores):
    """Drop of the model's ROC AUC on held-out rows when each feature's column is shuffled.

    Attributes
    ----------
    importances : ndarray of shape (n_features, n_repeats)
        The drop per feature and repeat (scikit-learn's ``importances``); negative when shuffling helped by chance.
    mean, std : ndarray of shape (n_features,)
        Its mean and std over the repeats: the ranking, and its spread.
    baseline_score : float
        The ROC AUC on the held-out rows, unshuffled.
    query_index : ndarray of shape (n_rows,)
        The held-out rows.
    config : dict
        ``scoring``, ``n_repeats``, ``seed`` and ``evaluated_on``.
    """

    feature_names: tuple[str, ...]
    display_names: tuple[str, ...]
    immutable: tuple[bool, ...]
    importances: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    baseline_score: float
    query_index: np.ndarray
    seconds: float
    config: dict = field(default_factory=dict)
    versions: dict | None = field(default=None, repr=False)

    kind = "permutation"
    method: ClassVar[str] = "permutation"

    @property
    def scores(self) -> np.ndarray:
        return self.mean

    def agreement_with(self, flex, *, k: int = 3, n_boot: int = 1000, level: float = 0.95, seed: int = 0):
        """How this ranking agrees with a FlexResult's over its mutable features: Spearman, Kendall and top-k
        overlap (a RankAgreement), with percentile-bootstrap intervals over FLEX's factuals; this ranking, measured
        once on the held-out rows, stays as it is (its own spread is :attr:`std`)."""
        from ._agreement import flex_fixed_agreement

        return flex_fixed_agreement(flex, self.mean, between="permutation mean drop of ROC AUC", k=k, n_boot=n_boot,
                                    level=level, seed=seed)

    def to_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame({"feature": self.feature_names, "label": self.display_names, "immutable": self.immutable,
                              "permutation_mean": self.mean, "permutation_std": self.std,
                              "permutation_rank": self.rank})
        return frame.sort_values(["permutation_rank", "feature"], kind="stable").reset_index(drop=True)

    def _body(self) -> dict:
        ranks = self.rank
        return {
            "method": self.method,
            "baseline_score": self.baseline_score,
            "features": [
                {"name": name, "label": self.display_names[j], "immutable": bool(self.immutable[j]),
                 "permutation_mean": json_number(self.mean[j]), "permutation_std": json_number(self.std[j]),
                 "permutation_rank": int(ranks[j])}
                for j, name in enumerate(self.feature_names)
            ],
            "rows": [int(r) for r in self.query_index],
            "per_repeat": json_matrix(self.importances),
            "seconds": self.seconds,
            "config": self.config,
        }

    @classmethod
    def _from_body(cls, data: Mapping) -> PermutationImportance:
        records = data["features"]
        importances = np.array([json_floats(row) for row in data["per_repeat"]], dtype=float)
        return cls(
            feature_names=tuple(r["name"] for r in records), display_names=tuple(r["label"] for r in records),
            immutable=tuple(bool(r["immutable"]) for r in records), importances=importances,
            mean=importances.mean(axis=1), std=importances.std(axis=1),
            baseline_score=float(data["baseline_score"]), query_index=np.asarray(data["rows"], dtype=int),
            seconds=float(data["seconds"]), config=dict(data.get("config") or {}), versions=data.get("versions"),
        )


class _Scored:
    """The estimator scikit-learn's ``permutation_importance`` is handed: the scorer does the predicting."""

    def fit(self, X, y):  # scikit-learn checks that an estimator has one; nothing is refitted
        return self


def permutation_importance(
    task: TaskSpec,
    model: FittedModel,
    *,
    n_repeats: int = 5,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> PermutationImportance:
    """scikit-learn's permutation importance of each feature on the model's held-out rows, scored by ROC AUC.

    Each feature's column of the task (a categorical feature as a whole, not its one-hot columns) is shuffled
    ``n_repeats`` times with a seeded generator; the importance is the mean drop of P(undesirable)'s ROC AUC,
    its spread the std over the repeats.

    Parameters
    ----------
    task : TaskSpec the model was fitted on
    model : FittedModel
    n_repeats : int
        Shuffles per feature (at least 2, for a spread).
    seed : int
        ``random_state`` of the shuffles: the same seed gives the same importances.
    progress : callable(done, total), optional
        Called after each scoring of the model (1 + n_features × n_repeats in all).

    Raises
    ------
    ConfigError
        The model has no held-out rows (:data:`flex_core.models.NOT_HELD_OUT`), they hold one outcome only, or
        ``n_repeats`` is below 2.
    """
    from sklearn.inspection import permutation_importance as sklearn_permutation_importance
    from sklearn.metrics import roc_auc_score

    n_repeats, seed = check("permutation_repeats", n_repeats, label="n_repeats"), check("seed", seed)
    held = held_out_only(task, model)
    if len(set(held.y_true.tolist())) < 2:
        raise ConfigError("The held-out rows hold only one outcome, so the model's ROC AUC is undefined there.")
    X = task.frame.loc[held.rows, task.feature_names]
    total, done = 1 + len(task.feature_names) * n_repeats, [0]

    def score(_estimator, rows: pd.DataFrame, y) -> float:
        value = float(roc_auc_score(y, model.predict_proba(rows)[:, 1]))
        done[0] += 1
        if progress is not None:
            progress(done[0], total)
        return value

    started = time.perf_counter()
    found = sklearn_permutation_importance(_Scored(), X, held.y_true, scoring=score, n_repeats=n_repeats,
                                           random_state=seed, n_jobs=1)
    return PermutationImportance(
        feature_names=tuple(task.feature_names), display_names=tuple(f.label for f in task.features),
        immutable=tuple(f.immutable for f in task.features), importances=np.asarray(found.importances, dtype=float),
        mean=np.asarray(found.importances_mean, dtype=float), std=np.asarray(found.importances_std, dtype=float),
        baseline_score=float(roc_auc_score(held.y_true, held.p)), query_index=np.asarray(held.rows),
        seconds=time.perf_counter() - started,
        config={"scoring": "roc_auc", "n_repeats": n_repeats, "seed": seed, "evaluated_on": held.evaluated_on},
    )

"""LIME importances of a region's factuals on the original features (the paper's Fig. 3)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._extras import require
from .._typing import Rows
from ..counterfactuals._set import Progress, decode_rows, encode_rows, encoded_width, query_seed
from ..data import TaskSpec
from ..limits import check, check_memory
from ..models import FittedModel
from ._scores import MethodScores, checked_rows

__all__ = ["LimeImportance", "normalise_to_max", "lime_importance"]


@dataclass(frozen=True, eq=False)
class LimeImportance(MethodScores):
    """LIME importances of a set of factuals (a region), averaged and normalised as in the paper's Fig. 3.

    Attributes
    ----------
    local_weights : ndarray of shape (n_rows, n_features)
        |LIME weight| of each feature for each factual (explaining P(undesirable)).
    mean_abs : ndarray of shape (n_features,)
        Mean over rows of ``local_weights``.
    normalised : ndarray of shape (n_features,)
        ``mean_abs / max(mean_abs)``: in [0, 1] with the top feature at 1.
    """

    feature_names: tuple[str, ...]
    display_names: tuple[str, ...]
    immutable: tuple[bool, ...]
    local_weights: np.ndarray
    mean_abs: np.ndarray
    normalised: np.ndarray
    query_index: np.ndarray
    seconds: float
    config: dict = field(default_factory=dict)
    versions: dict | None = field(default=None, repr=False)

    method: ClassVar[str] = "lime"
    kind = "lime"
    libraries = ("lime",)

    def _scores(self) -> dict[str, np.ndarray]:
        return {"lime_mean_abs": self.mean_abs, "lime_importance": self.normalised}

    def _per_row(self) -> np.ndarray:
        return self.local_weights

    @classmethod
    def _from_body(cls, data: Mapping) -> LimeImportance:
        """The result :meth:`to_dict` describes (|LIME weight| per row included)."""
        common = cls._common_from_dict(data)
        weights = common.pop("per_row")
        mean_abs = weights.mean(axis=0)
        return cls(**common, local_weights=weights, mean_abs=mean_abs, normalised=normalise_to_max(mean_abs))


def normalise_to_max(values: np.ndarray) -> np.ndarray:
    """values / max(values), so the largest is 1 (all zeros stay zeros); shape kept."""
    values = np.asarray(values, dtype=float)
    top = np.nanmax(values) if values.size else 0.0
    return values / top if top > 0 else np.zeros_like(values)


def lime_importance(
    model: FittedModel,
    task: TaskSpec,
    rows: Rows,
    *,
    num_samples: int = 5000,
    seed: int = 0,
    progress: Progress | None = None,
) -> LimeImportance:
    """LIME per factual on the original features, |weight| averaged over the rows and normalised to [0, 1].

    Categorical features are given to LIME as level indices (``categorical_features``
    and ``categorical_names``); its samples are decoded back to the original frame and
    scored by the pipeline in one call per factual. Each factual's explainer is seeded
    from (seed, row), so a factual's weights do not depend on which others are explained.

    Parameters
    ----------
    rows : sequence of int, length n_rows
        Factual row ids (a region's members).
    num_samples : int
        LIME's perturbation samples per factual.

    Returns
    -------
    LimeImportance
    """
    LimeTabularExplainer = require("lime.lime_tabular", "LIME").LimeTabularExplainer

    rows = checked_rows(task, rows, "LIME")
    num_samples = check("num_samples", num_samples)
    # Per factual, LIME holds its samples as codes, scaled and decoded, and the model's input (measured: about
    # 600 bytes a sample with 6 features encoding to 14 columns).
    n_f = len(task.features)
    check_memory(num_samples * 8 * (8 * n_f + encoded_width(task) + 16),
                 what=f"LIME with {num_samples:,} samples per factual", reduce="num_samples (--lime-samples)")
    training = encode_rows(task, task.frame.loc[model.train_index, task.feature_names])
    explained = encode_rows(task, task.frame.loc[rows, task.feature_names])
    categorical = [j for j, f in enumerate(task.features) if not f.is_continuous]
    names = {j: [str(level) for level in task.features[j].levels] for j in categorical}
    labels = [f.label for f in task.features]

    def predict(codes: np.ndarray) -> np.ndarray:
        return model.predict_proba(decode_rows(task, np.asarray(codes, dtype=float)))

    weights = np.zeros((len(rows), len(task.features)))
    started = time.perf_counter()
    for i, row in enumerate(rows):
        explainer = LimeTabularExplainer(
            training,
            mode="classification",
            feature_names=labels,
            categorical_features=categorical,
            categorical_names=names,
            class_names=["desirable", "undesirable"],
            discretize_continuous=True,
            random_state=query_seed(seed, row),
        )
        explanation = explainer.explain_instance(
            explained[i], predict, labels=(1,), num_features=len(task.features), num_samples=num_samples
        )
        for j, weight in explanation.as_map()[1]:
            weights[i, j] = abs(weight)
        if progress is not None:
            progress(i + 1, len(rows))
    mean_abs = weights.mean(axis=0)
    return LimeImportance(
        feature_names=tuple(task.feature_names),
        display_names=tuple(labels),
        immutable=tuple(f.immutable for f in task.features),
        local_weights=weights,
        mean_abs=mean_abs,
        normalised=normalise_to_max(mean_abs),
        query_index=np.asarray(rows, dtype=int),
        seconds=time.perf_counter() - started,
        config={"num_samples": num_samples, "seed": seed, "output": "P(undesirable)", "path": "original",
                "path_meaning": "the original features, through the model's predict_proba (model-agnostic)"},
    )

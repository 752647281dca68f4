"""The factual map: factual rows placed in 2-D as the model sees them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._errors import ConfigError
from ..data import TaskSpec
from ..models import FittedModel

__all__ = ["FactualMap", "project_factuals"]


@dataclass(frozen=True, eq=False)
class FactualMap:
    """Factual rows placed in 2-D by PCA of the model's encoded inputs.

    Attributes
    ----------
    frame : DataFrame with columns ``row``, ``x``, ``y``, ``probability``
        One line per factual; ``probability`` is P(undesirable) from the model.
    explained : ndarray of shape (2,)
        Share of the (standardised) variance each axis explains.
    space : {"encoded", "original"}
        The model's own encoder step, or (a model without one) the original features
        with categorical ones one-hot encoded.
    """

    frame: pd.DataFrame
    explained: np.ndarray
    space: str = "encoded"
    total: int = 0  # factuals there were; more than len(frame) when the map shows a sample

    @property
    def note(self) -> str:
        """A sentence for the reader when the map shows a sample, else empty."""
        if self.total <= len(self.frame):
            return ""
        return (f"The map shows a seeded random sample of {len(self.frame):,} of the {self.total:,} factuals "
                "(drawing them all would slow every page); any factual can still be chosen by its row number.")


#: Most factuals drawn on the map; a larger pool is sampled (seed 0).
MAP_POINTS = 5_000


def project_factuals(task: TaskSpec, model: FittedModel, rows: Sequence[int], *, max_points: int = MAP_POINTS) -> FactualMap:
    """PCA of the factuals as the model sees them (its own encoding), standardised per column.

    A model without a separate encoder step (see ``FittedModel.encoder_and_classifier``)
    is mapped from its original features, categorical ones one-hot encoded; ``space`` says which.

    One batched model call gives the colour (P(undesirable)). Component signs are fixed
    by the scores' skew, which makes the map reproducible across runs and row orders.
    More than ``max_points`` factuals are first sampled (seeded, sorted by row id); the
    map's ``total`` and ``note`` say so.
    """
    rows = [int(r) for r in rows]
    if not rows:
        raise ConfigError("There are no factual rows to place on the map.")
    total = len(rows)
    if total > max_points:
        rows = sorted(int(r) for r in np.random.default_rng(0).choice(rows, size=max_points, replace=False))
    X = task.X.loc[rows]
    split = model.encoder_and_classifier()
    if split is not None:
        space, encoded = "encoded", np.asarray(split[0].transform(model.estimator_input(X)), dtype=float)
    else:
        space, encoded = "original", _one_hot(task, X)
    centred = encoded - encoded.mean(axis=0)
    scale = centred.std(axis=0)
    centred = centred[:, scale > 0] / scale[scale > 0]
    coords = np.zeros((len(rows), 2))
    explained = np.zeros(2)
    if centred.shape[1] and len(rows) > 1:
        _, singular, components = np.linalg.svd(centred, full_matrices=False)
        n = min(2, components.shape[0])
        coords[:, :n] = centred @ components[:n].T
        # A component's sign is arbitrary; pointing each axis at its longer tail (positive third moment)
        # does not depend on the row order or the platform's SVD, unlike a sign from tied loadings.
        coords[:, :n] *= np.where((coords[:, :n] ** 3).sum(axis=0) < 0, -1.0, 1.0)
        variance = singular**2
        explained[:n] = variance[:n] / variance.sum() if variance.sum() > 0 else 0.0
    probability = model.predict_proba(X)[:, 1]
    frame = pd.DataFrame({"row": rows, "x": coords[:, 0], "y": coords[:, 1], "probability": probability})
    return FactualMap(frame=frame, explained=explained, space=space, total=total)


def _one_hot(task: TaskSpec, X: pd.DataFrame) -> np.ndarray:
    """Continuous features as they are, categorical ones as indicator columns; shape (n_rows, n_columns)."""
    parts = []
    for f in task.features:
        if f.is_continuous:
            parts.append(X[f.name].to_numpy(dtype=float)[:, None])
        else:
            parts.append((X[f.name].to_numpy()[:, None] == np.asarray(f.categories, dtype=object)[None, :]).astype(float))
    return np.hstack(parts)


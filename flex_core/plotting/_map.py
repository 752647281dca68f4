"""The factual map: factual rows placed in 2-D as the model sees them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

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
    # How rows are placed (column means, kept columns, their scales, the two signed components), so rows
    # left out of a sample can be added where they belong without refitting the map.
    projection: tuple | None = None
    sample_size: int = 0  # rows the map was fitted on (rows added later by ``including`` are not part of it)

    def including(self, task: TaskSpec, model: FittedModel, rows: Sequence[int]) -> FactualMap:
        """This map with ``rows`` added where they belong, when a sample left them out (e.g. a query and its region).

        Only the missing rows are encoded and scored (one batched call); the axes do not move.
        """
        missing = sorted(set(int(r) for r in rows) - set(self.frame["row"].tolist()))
        if not missing or self.projection is None:
            return self
        mean, keep, scale, components = self.projection
        encoded = _encode(task, model, task.X.loc[missing])[1]
        coords = ((encoded - mean)[:, keep] / scale) @ components.T
        added = pd.DataFrame({"row": missing, "x": coords[:, 0], "y": coords[:, 1],
                              "probability": model.predict_proba(task.X.loc[missing])[:, 1]})
        return replace(self, frame=pd.concat([self.frame, added], ignore_index=True))

    @property
    def note(self) -> str:
        """A sentence for the reader when the map shows a sample, else empty."""
        drawn = self.sample_size or len(self.frame)
        if self.total <= drawn:
            return ""
        return (f"The map shows a seeded random sample of {drawn:,} of the {self.total:,} factuals "
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
    space, encoded = _encode(task, model, X)
    mean = encoded.mean(axis=0)
    centred = encoded - mean
    scale = centred.std(axis=0)
    keep = scale > 0
    centred = centred[:, keep] / scale[keep]
    coords = np.zeros((len(rows), 2))
    explained = np.zeros(2)
    signed = np.zeros((2, centred.shape[1]))
    if centred.shape[1] and len(rows) > 1:
        _, singular, components = np.linalg.svd(centred, full_matrices=False)
        n = min(2, components.shape[0])
        coords[:, :n] = centred @ components[:n].T
        # A component's sign is arbitrary; pointing each axis at its longer tail (positive third moment)
        # does not depend on the row order or the platform's SVD, unlike a sign from tied loadings.
        signs = np.where((coords[:, :n] ** 3).sum(axis=0) < 0, -1.0, 1.0)
        coords[:, :n] *= signs
        signed[:n] = components[:n] * signs[:, None]
        variance = singular**2
        explained[:n] = variance[:n] / variance.sum() if variance.sum() > 0 else 0.0
    probability = model.predict_proba(X)[:, 1]
    frame = pd.DataFrame({"row": rows, "x": coords[:, 0], "y": coords[:, 1], "probability": probability})
    return FactualMap(frame=frame, explained=explained, space=space, total=total,
                      projection=(mean, keep, scale[keep], signed), sample_size=len(rows))


def _encode(task: TaskSpec, model: FittedModel, X: pd.DataFrame) -> tuple[str, np.ndarray]:
    """The rows as the map places them: the model's own encoder step, else original features one-hot."""
    split = model.encoder_and_classifier()
    if split is not None:
        return "encoded", np.asarray(split[0].transform(model.estimator_input(X)), dtype=float)
    return "original", _one_hot(task, X)


def _one_hot(task: TaskSpec, X: pd.DataFrame) -> np.ndarray:
    """Continuous features as they are, categorical ones as indicator columns; shape (n_rows, n_columns)."""
    parts = []
    for f in task.features:
        if f.is_continuous:
            parts.append(X[f.name].to_numpy(dtype=float)[:, None])
        else:
            parts.append((X[f.name].to_numpy()[:, None] == np.asarray(f.categories, dtype=object)[None, :]).astype(float))
    return np.hstack(parts)


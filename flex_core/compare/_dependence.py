"""Partial dependence and individual conditional expectation (ICE) of P(undesirable) on one feature.

Computed with scikit-learn's :func:`sklearn.inspection.partial_dependence` (``kind="both"``, the brute method:
each row is scored with the feature set to every grid value), through a view of the model that takes rows in
the task's format and answers P(undesirable); so every model FLEX explains (a pipeline, a booster on category
columns, a rule) gets the same curves. The grid holds the data's range and, exactly, the query case's own value
and its counterfactuals' values of the feature, so the marks on the query's curve are the model's own answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin

from .._errors import ConfigError
from ..data import TaskSpec
from ..models import FittedModel

__all__ = ["DependenceCurves", "dependence_curves", "ICE_ROWS", "GRID_POINTS"]

#: Rows drawn from the data for the individual curves (the query case is added to them).
ICE_ROWS = 200
#: Evenly spaced grid values across a number's range in the data (the query's and its counterfactuals' values
#: are added to them).
GRID_POINTS = 40


class _UndesirableScore(ClassifierMixin, BaseEstimator):
    """The model as scikit-learn's inspection tools take it: rows in the task's format, classes 0 and 1, and
    ``predict_proba[:, 1]`` the model's P(undesirable)."""

    def __init__(self, model: FittedModel):
        self.model = model

    def fit(self, X, y=None):  # pragma: no cover - never fitted: the model is
        raise NotImplementedError("the model is fitted already")

    @property
    def classes_(self) -> np.ndarray:
        return np.array([0, 1])

    def predict_proba(self, X) -> np.ndarray:
        return self.model.predict_proba(X)

    def predict(self, X) -> np.ndarray:
        return self.model.predict_undesirable(X)

    def __sklearn_is_fitted__(self) -> bool:
        return True


@dataclass(frozen=True, eq=False)
class DependenceCurves:
    """P(undesirable) as one feature moves, for each of some rows (ICE) and on average (partial dependence).

    Attributes
    ----------
    feature, label : str
        The feature's name and display label.
    unit : str
        Its unit or currency ("" without one).
    continuous : bool
        Whether the grid holds numbers (else the feature's levels, in its order).
    grid : ndarray of shape (n_grid,)
        The feature's values, ascending for a number.
    rows : ndarray of int, shape (n_rows,)
        Row ids of the individual curves (the query last, when given).
    individual : ndarray of shape (n_rows, n_grid)
        P(undesirable) of each row with the feature set to each grid value, everything else as it is.
    average : ndarray of shape (n_grid,)
        The partial dependence: ``individual.mean(axis=0)``.
    query : int or None
        The row whose curve is highlighted (``rows[-1]``).
    query_value : object
        The query's own value of the feature.
    query_text : str
        That value as the data dictionary writes it ("₹24,200,000"; "" without a query).
    counterfactual_values : tuple
        The distinct values the query's valid counterfactuals give the feature where they change it.
    threshold : float
        The decision boundary on P(undesirable) (0.5).
    """

    feature: str
    label: str
    unit: str
    continuous: bool
    grid: np.ndarray
    rows: np.ndarray
    individual: np.ndarray
    average: np.ndarray
    query: int | None = None
    query_value: object = None
    query_text: str = ""
    counterfactual_values: tuple = ()
    threshold: float = 0.5
    config: dict = field(default_factory=dict)

    @property
    def query_curve(self) -> np.ndarray | None:
        """The query's ICE curve (n_grid,), or None."""
        return None if self.query is None else self.individual[-1]

    def at(self, values) -> np.ndarray:
        """The query's P(undesirable) at grid values ``values`` (each must be on the grid)."""
        if self.query is None:
            raise ValueError("These curves have no query case.")
        lookup = {v: i for i, v in enumerate(self.grid.tolist())}
        return np.array([self.individual[-1, lookup[v]] for v in values], dtype=float)

    def crossings(self) -> list[list]:
        """Per row, the grid values where its curve crosses the threshold: each is the first grid value on the
        other side (P above the threshold is undesirable, at or below it desirable).

        Only for a number feature, whose grid is ordered.
        """
        if not self.continuous:
            raise ValueError(f"{self.label} has levels, not an ordered grid: its curves cross nowhere in between.")
        above = self.individual > self.threshold
        return [[self.grid[i + 1] for i in np.flatnonzero(row[1:] != row[:-1])] for row in above]


def dependence_curves(
    model: FittedModel,
    task: TaskSpec,
    feature: str,
    *,
    query: int | None = None,
    counterfactuals: pd.DataFrame | None = None,
    n_rows: int = ICE_ROWS,
    grid_points: int = GRID_POINTS,
    seed: int = 0,
) -> DependenceCurves:
    """ICE curves of up to ``n_rows`` rows drawn from the data (seeded) and of ``query``, and their average.

    Parameters
    ----------
    model : FittedModel
    task : TaskSpec the model was fitted on
    feature : str
        The feature that moves.
    query : int, optional
        A row id of the data: its curve is added last and highlighted.
    counterfactuals : DataFrame, optional
        The query's valid counterfactuals in the task's format; the values they give ``feature`` where it
        differs from the query's are put on the grid (marked on the query's curve).
    n_rows : int
        Rows drawn for the individual curves (all rows when the data has fewer).
    grid_points : int
        Evenly spaced values across a number's range in the data; a feature with levels takes all its levels.
    seed : int
        Seeds the drawing of rows.

    Returns
    -------
    DependenceCurves
    """
    from sklearn.inspection import partial_dependence

    if feature not in task.feature_names:
        raise ConfigError(f"There is no feature {feature!r}; choose one of {', '.join(task.feature_names)}.")
    if query is not None and query not in task.frame.index:
        raise ConfigError(f"There is no row {query!r} in the data.")
    spec = task.feature(feature)
    frame = task.frame[task.feature_names]
    rng = np.random.default_rng(seed)
    others = frame.index.drop(query) if query is not None else frame.index
    drawn = np.sort(rng.choice(others.to_numpy(), size=min(n_rows, len(others)), replace=False))
    rows = np.append(drawn, query).astype(int) if query is not None else drawn.astype(int)
    X = frame.loc[rows]
    query_value = X[feature].iloc[-1] if query is not None else None
    moved = _changed_values(counterfactuals, feature, query_value, spec.is_continuous)
    grid = _grid(frame[feature], spec, grid_points, [query_value, *moved] if query is not None else [])
    out = partial_dependence(_UndesirableScore(model), X, [feature], kind="both", method="brute",
                             custom_values={feature: grid}, response_method="predict_proba")
    individual = np.asarray(out["individual"][0], dtype=float)
    return DependenceCurves(
        feature=feature, label=spec.label, unit=spec.unit, continuous=spec.is_continuous, grid=np.asarray(out["grid_values"][0]),
        rows=rows, individual=individual, average=individual.mean(axis=0), query=query,
        query_value=query_value, query_text=spec.format_value(query_value) if query is not None else "",
        counterfactual_values=tuple(moved),
        config={"n_rows": int(n_rows), "grid_points": int(grid_points), "seed": int(seed), "method": "brute"},
    )


def _changed_values(counterfactuals: pd.DataFrame | None, feature: str, own, continuous: bool) -> list:
    """The distinct values the counterfactuals give ``feature`` where they change it (ascending for a number)."""
    if counterfactuals is None or own is None or counterfactuals.empty:
        return []
    values = counterfactuals[feature]
    if continuous:
        numbers = values.astype(float).to_numpy()
        return sorted({float(v) for v in numbers if v != float(own)})
    return sorted({str(v) for v in values if str(v) != str(own)})


def _grid(column: pd.Series, spec, points: int, extra: list) -> np.ndarray:
    """A number's evenly spaced range with ``extra`` values added (sorted, distinct); a feature's levels."""
    if not spec.is_continuous:
        return np.asarray(list(spec.levels), dtype=object)
    values = column.astype(float)
    grid = np.linspace(values.min(), values.max(), points)
    return np.unique(np.concatenate([grid, np.asarray(extra, dtype=float)]))

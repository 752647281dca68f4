"""What a ``batch`` search works in: the model's tables, built once per (model, data), and one call's search space.

The tables hold the model's training rows as codes, their spread and a scorer straight from codes (and, for
``batch-plausible``, an index of the training rows the model predicts desirable); the space says which features
may move, to which values, and in which direction (:mod:`._batch` explains the search).
"""

from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, replace

import numpy as np

from ..data import TaskSpec
from ..models import FittedModel
from ._quality import feature_mad
from ._refine import MinimalPlan
from ._scoring import CodeScorer, scorer_for
from ._set import encode_rows
from ._validity import Validity

__all__ = ["SINGLE_GRID", "ModelTables", "SearchSpace", "embed", "model_tables"]

#: Values per number scanned when every single-feature change is tried (quantiles of the training values:
#: the smallest, the median and the largest; the flip found is then shrunk to its boundary anyway).
SINGLE_GRID = 3
#: Levels per categorical feature scanned alone at most (the most frequent ones).
SINGLE_LEVELS = 64


# -- per-model tables: built once per (model, data), reused by every call ----------------------
@dataclass
class ModelTables:
    train_codes: np.ndarray  # (n_train, F) codes of the model's training rows
    mad: np.ndarray  # (F,) median absolute deviation of continuous features (1 where 0 or categorical)
    scorer: CodeScorer  # P(undesirable) straight from codes
    desired_codes: np.ndarray | None = None  # training rows that are valid counterfactuals (``desired_for``)
    index: object = None  # NearestNeighbors over desired_codes' embedding
    desired_for: float | None = None  # the validity threshold desired_codes were chosen under


_TABLES: weakref.WeakKeyDictionary[FittedModel, dict[str, ModelTables]] = weakref.WeakKeyDictionary()


def model_tables(model: FittedModel, task: TaskSpec, *, need_index: bool,
                 validity: Validity) -> tuple[ModelTables, int]:
    """The model's cached tables (built on first use) and the model rows this call spent building them."""
    per_task = _TABLES.setdefault(model, {})
    tables = per_task.get(task.fingerprint)
    if tables is None:
        train = encode_rows(task, task.frame.loc[model.train_index, task.feature_names])
        tables = per_task[task.fingerprint] = ModelTables(
            train_codes=train, mad=feature_mad(task, train), scorer=scorer_for(model, task)
        )
    rows_spent = 0
    if need_index and tables.desired_for != validity.threshold:
        from sklearn.neighbors import NearestNeighbors

        desirable = validity.desirable(tables.scorer(tables.train_codes))
        rows_spent = len(tables.train_codes)
        desired = tables.train_codes[desirable]
        if len(desired):
            tables.index = NearestNeighbors(metric="manhattan").fit(embed(task, desired, tables.mad))
        tables.desired_codes, tables.desired_for = desired, validity.threshold
    return tables, rows_spent


def embed(task: TaskSpec, codes: np.ndarray, mad: np.ndarray) -> np.ndarray:
    """Rows in a space where L1 = MAD-normalised L1 on continuous features + categorical mismatches."""
    parts = []
    for j, f in enumerate(task.features):
        if f.is_continuous:
            parts.append((codes[:, j] / mad[j])[:, None])
        else:
            one_hot = np.zeros((len(codes), len(f.levels)))
            one_hot[np.arange(len(codes)), codes[:, j].astype(int)] = 0.5  # two cells differ: 0.5 + 0.5 = 1
            parts.append(one_hot)
    return np.hstack(parts)



# -- the search space of one call ---------------------------------------------------------
@dataclass
class SearchSpace:
    """What a chunk of queries needs: the model, which features move and the values they may take."""

    task: TaskSpec
    model: FittedModel
    vary: np.ndarray  # (F,) bool: feature may change (and has at least one value to change to)
    values: list  # per feature: sorted candidate codes, or None
    cumulative: list  # per feature: cumulative weights of ``values``, or None
    allowed_low: np.ndarray  # (F,) permitted range (codes); -inf/inf when open
    allowed_high: np.ndarray
    allowed_levels: list  # per feature: bool mask over levels, or None when all allowed
    direction: np.ndarray  # (F,) +1 increase only, -1 decrease only, 0 either (ordinal codes follow the order)
    tables: ModelTables
    single_grid: list  # per feature: the values tried as a single change, or None
    plan: MinimalPlan | None  # how to make a counterfactual minimal (None: refine="none")
    validity: Validity  # when a candidate is a valid counterfactual

    @classmethod
    def build(cls, task, model, tables, vary_names, ranges, *, minimal: bool, validity: Validity) -> SearchSpace:
        n_f = len(task.features)
        vary = np.array([f.name in vary_names for f in task.features])
        values: list[np.ndarray | None] = [None] * n_f
        cumulative: list[np.ndarray | None] = [None] * n_f
        allowed_levels: list[np.ndarray | None] = [None] * n_f
        low, high = np.full(n_f, -np.inf), np.full(n_f, np.inf)
        for j, f in enumerate(task.features):
            col = tables.train_codes[:, j]
            col = col[~np.isnan(col)]
            if f.is_continuous:
                if f.name in ranges:
                    low[j], high[j] = ranges[f.name]
                kept = col[(col >= low[j]) & (col <= high[j])]
                if len(kept):
                    vals, counts = np.unique(kept.astype(float), return_counts=True)
                else:  # no training value inside a narrow range: spread candidates evenly over it
                    vals = _grid(low[j], high[j], integer=f.integer)
                    counts = np.ones(len(vals), dtype=int)
            else:
                levels = np.arange(len(f.levels), dtype=float)
                mask = np.ones(len(levels), bool)
                if f.name in ranges:
                    mask = np.isin(np.asarray(f.levels, dtype=object), ranges[f.name])
                    allowed_levels[j] = mask
                # Training frequencies, plus one so an allowed level unseen in training can still be proposed.
                weights = np.bincount(col.astype(int), minlength=len(levels)) + 1
                vals, counts = levels[mask], weights[mask]
            if vary[j] and len(vals):
                values[j] = vals.astype(float)
                cumulative[j] = np.cumsum(counts, dtype=float)
            else:
                vary[j] = False
        direction = np.array([{"increase": 1, "decrease": -1}.get(f.direction, 0) for f in task.features])
        single_grid = [_single_grid(task.features[j], v, c) if v is not None and c is not None else None
                       for j, (v, c) in enumerate(zip(values, cumulative))]
        train = tables.train_codes
        with np.errstate(invalid="ignore"):
            spans = np.array([np.nanmax(train[:, j]) - np.nanmin(train[:, j]) if f.is_continuous and len(train) else np.nan
                              for j, f in enumerate(task.features)])
        plan = MinimalPlan.build(task, ranges, spans) if minimal else None
        validity = validity.on(task, spans)
        return cls(task, model, vary, values, cumulative, low, high, allowed_levels, direction, tables, single_grid, plan,
                   validity)

    def for_workers(self) -> SearchSpace:
        """This space without the task's rows or the training codes, which the search never reads.

        Every chunk sent to another process carries its space; with the rows a 200,000-row
        table cost 0.4 s to pickle per chunk, a fifth of what a second core saves on 20,000 factuals.
        Its scorer walks a forest's trees in one thread: the processes already share out the cores.
        """
        task = replace(self.task, frame=self.task.frame.iloc[:0])
        scorer = copy.copy(self.tables.scorer.with_threads(1))  # each worker process is one of the cores already
        scorer.task = task
        tables = replace(self.tables, train_codes=self.tables.train_codes[:0], scorer=scorer)
        rules = self.validity.rules  # the constraints between features read no rows either
        validity = self.validity if rules is None else self.validity.with_rules(rules.for_task(task))
        return replace(self, task=task, tables=tables, validity=validity)

    def with_threads(self, threads: int) -> SearchSpace:
        """This space scoring with a forest's trees spread over ``threads`` threads."""
        return replace(self, tables=replace(self.tables, scorer=self.tables.scorer.with_threads(threads)))

    def p_undesirable(self, codes: np.ndarray) -> np.ndarray:
        """P(undesirable) for coded rows, shape (n_rows,): the only way the search touches the model."""
        return self.tables.scorer(codes)

    def permitted(self, codes: np.ndarray, factual: np.ndarray) -> np.ndarray:
        """Per cell (rows, F): the factual's own value, or a value of a varying feature inside its permitted range."""
        ok = (codes >= self.allowed_low) & (codes <= self.allowed_high) & self.vary
        ok &= np.sign(codes - factual) * self.direction >= 0
        for j, mask in enumerate(self.allowed_levels):
            if mask is not None:
                ok[:, j] &= mask[codes[:, j].astype(int)]
        return ok | (codes == factual)


def _single_grid(feature, values: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """The values a feature takes when it is tried as the only change.

    A number: :data:`SINGLE_GRID` quantiles of its permitted training values (weighted as they
    occur, so its smallest and largest are among them); a level: every permitted level, at most the
    :data:`SINGLE_LEVELS` most frequent. The order in which they are tried is the search's seeded
    random order of items (see ``item_ranks``), not this one.
    """
    if feature.is_continuous:
        quantiles = np.linspace(0.0, 1.0, SINGLE_GRID) * cumulative[-1]
        grid = values[np.minimum(np.searchsorted(cumulative, quantiles, side="left"), len(values) - 1)]
        middle = np.argsort(np.abs(np.arange(1, SINGLE_GRID - 1) - (SINGLE_GRID - 1) / 2), kind="stable") + 1
        ordered = np.r_[grid[-1], grid[0], grid[middle]]
        return ordered[np.sort(np.unique(ordered, return_index=True)[1])]
    weights = np.diff(np.r_[0.0, cumulative])
    return values[np.argsort(-weights, kind="stable")[:SINGLE_LEVELS]]


def _grid(low: float, high: float, *, integer: bool) -> np.ndarray:
    if integer:
        low, high = np.ceil(low), np.floor(high)
        if low > high:
            return np.empty(0)
        return np.unique(np.linspace(low, high, num=int(min(high - low + 1, 101))).round())
    return np.linspace(low, high, num=101)


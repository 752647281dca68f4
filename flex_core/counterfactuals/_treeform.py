"""One exact form of a tree ensemble over the task's coded features (issue 33).

A forest or a boosted ensemble is piecewise constant between its split thresholds, so its
P(undesirable) can be read from its trees instead of searched for. :func:`tree_form` reads
scikit-learn's RandomForest / ExtraTrees / GradientBoosting / HistGradientBoosting classifiers and a single
DecisionTree / ExtraTree (bare, or at the end of a :func:`~flex_core.models.build_pipeline` pipeline), XGBoost
(``save_raw("json")``) and LightGBM (``dump_model``; both read in :mod:`._treeboosters`) into :class:`TreeForm`:
every split a test on
one *task* feature's code (a number, or a level index):

- a number: left iff ``x <= bound``, where ``bound`` is the largest float64 the library sends left
  (scikit-learn compares ``float32(x) <= t``; XGBoost ``float32(x) < t``; LightGBM and
  HistGradientBoosting ``x <= t`` in float64; an integer column FLEX hands over rounded is rounded first);
- a level: left iff the level is in the node's set (a one-hot column, an ordinal code, a native
  category index: each level's value tested with the library's own rule);
- missing (NaN): the node's missing direction.

Leaves hold per-class raw values; ``link`` turns their sum into probabilities: ``mean`` (a
random forest: mean of per-tree class fractions), ``sigmoid`` (binary boosting: base + sum) or
``softmax`` (multi-class boosting). A regressor of a task with a band (issue 38) has one output, its prediction:
the mean of the trees' leaf values (``band-mean``: a forest) or base + their sum (``band``: scikit-learn's
boosting with learning rate and initial estimate, HistGradientBoosting's baseline, XGBoost's base score,
LightGBM's raw sum); the link is the band's off-band score of that prediction (``FittedModel.predict_proba``'s). Anything else, or any model whose form disagrees with its
own ``predict_proba`` on the training rows checked when the form is built, is refused with one
ConfigError (the caller falls back to the batch search).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigError
from ..models._adapter import category_key
from ._scoring import scorer_for
from ._set import decode_rows, encode_rows
from ._treeboosters import IDENTITY_OBJECTIVES, read_lightgbm, read_xgboost
from ._treewalk import depth_of, level_masks, pack_nodes, reached_leaves

__all__ = ["TreeForm", "tree_form", "CHECK_ROWS", "MAX_LEVELS"]

#: Training rows the form is checked on against the model's own predict_proba when it is built.
CHECK_ROWS = 256
#: Level sets are bit masks: a categorical feature with more levels is not read (ConfigError).
MAX_LEVELS = 63
#: About how many nodes of scikit-learn's trees are read in one pass (see ``_sklearn_trees``).
GROUP_NODES = 32_768
#: Largest difference from predict_proba tolerated by the build check.
CHECK_TOLERANCE = 1e-9
#: XGBoost's probabilities are float32: its margin is reproduced to the bit, but its expf is not always
#: correctly rounded, so its sigmoid may differ by one float32 step (6e-8 at 0.5); tolerated up to two.
FLOAT32_TOLERANCE = 2.5e-7


@dataclass(frozen=True, eq=False)
class TreeForm:
    """A tree ensemble over coded task features. Node arrays are concatenated over trees.

    Attributes
    ----------
    roots : ndarray of int, shape (T,)
    feature : ndarray of int, shape (N,)
        Task feature of each split node, -1 at leaves.
    numeric : bool ndarray (N,)
        Number split (``x <= bound``) or level split (``level in mask``).
    bound : float ndarray (N,)
    mask : int64 ndarray (N,)
        Levels going left, as bits.
    nan_left : bool ndarray (N,)
    left, right : int ndarray (N,)
    value : float ndarray (N, K)
        Leaf raw values per output.
    link : {"mean", "sigmoid", "softmax"}
    base : float ndarray (K,)
        Raw base added before the link (unused by ``mean``).
    undesired : tuple of int
        Probability columns (the model's classes order) summed into P(undesirable).
    library : str
    """

    roots: np.ndarray
    feature: np.ndarray
    numeric: np.ndarray
    bound: np.ndarray
    mask: np.ndarray
    nan_left: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    link: str
    base: np.ndarray
    undesired: tuple
    library: str
    depth: int = 0
    #: XGBoost sums and links in float32, tree by tree from its base margin: done the same way here.
    float32: bool = False
    #: A regressor's band and its score's scale (``band-mean`` and ``band`` links), else None.
    band: Any = None
    band_scale: float = 0.0

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    @cached_property
    def nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """The node arrays packed for the compiled walks: int64 rows (N, 4) and their float64 view
        (:func:`._treewalk.pack_nodes`), built at first use."""
        packed = pack_nodes(self.feature, self.numeric, self.bound, self.mask, self.nan_left, self.left, self.right)
        return packed, packed.view(np.float64)

    def leaves(self, codes: np.ndarray) -> np.ndarray:
        """The leaf each coded row (n, F) reaches in each tree, shape (n, T) (one compiled walk)."""
        codes = np.ascontiguousarray(codes, dtype=float)
        return reached_leaves(codes, self.roots, *self.nodes)

    def raw(self, codes: np.ndarray) -> np.ndarray:
        """Summed leaf values, shape (n, K)."""
        leaves = self.leaves(codes)
        if not self.float32:
            return self.value[leaves].sum(axis=1)
        total = np.broadcast_to(self.base.astype(np.float32), (len(leaves), self.value.shape[1])).copy()
        values = self.value.astype(np.float32)
        for t in range(self.n_trees):
            total += values[leaves[:, t]]
        return total

    def prediction(self, raw: np.ndarray) -> np.ndarray:
        """A regressor's prediction from summed leaf values (..., 1) -> (...,), as its ``predict`` gives it."""
        raw = np.asarray(raw, dtype=float)[..., 0]
        if self.link == "band-mean":
            return raw / self.n_trees
        if self.link != "band":
            raise ConfigError("Only a regressor's tree form has a prediction.")
        return raw if self.float32 else raw + self.base[0]  # XGBoost's float32 sum starts from its base score

    def proba(self, raw: np.ndarray) -> np.ndarray:
        """Class probabilities from summed leaf values (..., K) -> (..., C); a regressor's (1 - score, score)."""
        raw = np.asarray(raw, dtype=float)
        if self.link in ("band", "band-mean"):
            score = self.band.score(self.prediction(raw), self.band_scale)
            return np.stack([1.0 - score, score], axis=-1)
        if self.link == "mean":
            return raw / self.n_trees
        if self.float32:
            return _float32_link(raw.astype(np.float32), self.link)
        raw = raw + self.base
        if self.link == "sigmoid":
            p = 1.0 / (1.0 + np.exp(-raw[..., 0]))
            return np.stack([1.0 - p, p], axis=-1)
        shifted = np.exp(raw - raw.max(axis=-1, keepdims=True))
        return shifted / shifted.sum(axis=-1, keepdims=True)

    def p_undesirable_raw(self, raw: np.ndarray) -> np.ndarray:
        return self.proba(raw)[..., list(self.undesired)].sum(axis=-1)

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        """P(undesirable) of coded rows (n, F), as the model's predict_proba gives it."""
        return self.p_undesirable_raw(self.raw(codes))


def _float32_link(raw: np.ndarray, link: str) -> np.ndarray:
    """XGBoost's link in float32 (a margin already holding its base score)."""
    one = np.float32(1.0)

    def expf(x):  # C's expf is correctly rounded; numpy's float32 exp may be an ulp off
        return np.exp(x.astype(np.float64)).astype(np.float32)

    if link == "sigmoid":
        p = one / (one + expf(-raw[..., 0]))
        return np.stack([one - p, p], axis=-1).astype(float)
    shifted = expf(raw - raw.max(axis=-1, keepdims=True))
    total = np.zeros(shifted.shape[:-1] + (1,))
    for k in range(shifted.shape[-1]):  # XGBoost sums in double, in class order, then divides in float32
        total += shifted[..., k: k + 1]
    return (shifted / total.astype(np.float32)).astype(float)


# -- numeric split bounds ---------------------------------------------------------------------
def _float32_le_bounds(t32: np.ndarray) -> np.ndarray:
    """Per float32 t: the largest float64 x with float32(x) <= t (numpy rounds to nearest, ties to even)."""
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.nextafter(t32, np.float32(np.inf))
        middle = (t32.astype(float) + up.astype(float)) / 2.0  # exact: both are float32 values
        out = np.where(middle.astype(np.float32) == t32, middle, np.nextafter(middle, -np.inf))
    out = np.where(np.isinf(up), np.finfo(np.float64).max, out)  # t is the largest float32
    return np.where(np.isinf(t32), t32.astype(float), out)


def left_bounds(threshold: np.ndarray, *, strict: bool, float32: bool) -> np.ndarray:
    """Per threshold, the largest float64 code x sent left by ``x <= threshold`` (``x < threshold`` if ``strict``).

    ``float32``: the library compares ``float32(x)`` (scikit-learn's trees against a float64
    threshold, XGBoost against a float32 one).
    """
    threshold = np.asarray(threshold, dtype=float)
    if not float32:
        return np.nextafter(threshold, -np.inf) if strict else threshold.copy()
    with np.errstate(over="ignore"):
        t32 = threshold.astype(np.float32)
    # float32(x) < t  <=>  float32(x) <= the float32 below t; float32(x) <= t  <=>  ... <= the float32 at or below t
    below = (t32.astype(float) >= threshold) if strict else (t32.astype(float) > threshold)
    t32 = np.where(below, np.nextafter(t32, np.float32(-np.inf)), t32)
    return _float32_le_bounds(t32)


def left_bound(threshold: float, *, strict: bool, float32: bool) -> float:
    """:func:`left_bounds` of one threshold."""
    return float(left_bounds(np.array([threshold]), strict=strict, float32=float32)[0])


def rounded_bounds(bound: np.ndarray) -> np.ndarray:
    """For a column FLEX rounds (half to even) before the model sees it: per bound, the largest x with round(x) <= bound."""
    bound = np.asarray(bound, dtype=float)
    n = np.floor(bound)
    half = n + 0.5
    with np.errstate(invalid="ignore"):
        out = np.where(n % 2 == 0, half, np.nextafter(half, -np.inf))
    return np.where(np.isfinite(bound), out, bound)


def rounded_bound(bound: float) -> float:
    """:func:`rounded_bounds` of one bound."""
    return float(rounded_bounds(np.array([bound]))[0])


# -- the model's input columns as task codes ---------------------------------------------------
@dataclass(frozen=True)
class _Column:
    """One column the classifier takes: a task feature's number, or a value per level of it."""

    feature: int
    level_values: np.ndarray | None = None  # per level: the value the classifier sees (NaN: missing)
    rounded: bool = False


def _pipeline_columns(model, task) -> list[_Column]:
    scorer = scorer_for(model, task)
    if scorer.plan is None:
        raise ConfigError("The tree generator reads only pipelines FLEX builds (one-hot or label encoding, numbers passed through).")
    width, blocks = scorer.plan
    columns: list[_Column | None] = [None] * width
    for kind, j, offset, table in blocks:
        if kind == "onehot":
            for m in range(int(table.max()) + 1 if len(table) else 0):
                columns[offset + m] = _Column(j, (table == m).astype(float))
        elif kind == "ordinal":
            columns[offset] = _Column(j, np.asarray(table, dtype=float))
        else:
            shift, scale = table
            if shift != 0.0 or scale != 1.0:
                raise ConfigError("The tree generator does not read scaled numbers (a scaler before the trees).")
            columns[offset] = _Column(j)
    if any(c is None for c in columns):
        # a one-hot column for a level the task no longer has: it is always 0
        columns = [c if c is not None else _Column(-1) for c in columns]
    return columns  # type: ignore[return-value]


def _frame_columns(model, task) -> list[_Column]:
    """A classifier taking the task's frame itself (XGBoost, LightGBM, a bare scikit-learn ensemble)."""
    position = {name: j for j, name in enumerate(task.feature_names)}
    out = []
    for name in model.input_columns or task.feature_names:
        j = position[name]
        feature = task.features[j]
        categories = None if model.schema is None else model.schema.categories.get(name)
        if feature.is_continuous:
            dtype = model.input_dtypes.get(name, "")
            out.append(_Column(j, rounded=dtype.startswith(("int", "uint", "Int", "UInt"))))
        elif categories:
            index = {category_key(c): k for k, c in enumerate(categories)}
            out.append(_Column(j, np.array([index.get(category_key(level), np.nan) for level in feature.levels], float)))
        elif name in model.input_dtypes:
            out.append(_Column(j, pd.to_numeric(pd.Series(list(feature.levels)), errors="coerce").to_numpy(float)))
        else:
            raise ConfigError(f"The tree generator cannot tell which value the model sees for the levels of {name!r}.")
    return out


# -- building the node arrays ------------------------------------------------------------------
class _Builder:
    """Collects trees node by node in task codes."""

    def __init__(self, columns: list[_Column], n_levels: list[int], n_outputs: int):
        self.n_levels, self.k = n_levels, n_outputs
        self.parts: list[dict] = []
        self.offset = 0
        self.depth = 0
        self.set_columns(columns)

    def set_columns(self, columns: list[_Column]) -> None:
        """The classifier's input columns, in its order."""
        self.columns = columns
        # per column: its task feature, its number of levels (-1: a number), whether it is rounded, and the value
        # each level has there (NaN past the last level)
        self.col_feature = np.array([c.feature for c in columns], dtype=np.int64)
        self.col_levels = np.array([-1 if c.level_values is None else len(c.level_values) for c in columns], dtype=np.int64)
        self.col_rounded = np.array([c.rounded for c in columns], dtype=bool)
        # as wide as the most levels a column has (bits past a column's last level are 0 anyway)
        width = max([len(c.level_values) for c in columns if c.level_values is not None and len(c.level_values) <= MAX_LEVELS], default=1)
        self.col_values = np.full((len(columns), width), np.nan)
        for i, c in enumerate(columns):
            if c.level_values is not None and len(c.level_values) <= MAX_LEVELS:
                self.col_values[i, : len(c.level_values)] = c.level_values

    def _level_masks(self, at, cols, thresholds, categorical, category_left, *, strict, float32, nan_left) -> np.ndarray:
        """Per level split node, the bits of the levels it sends left (the library's own comparison of each
        level's value, a native category set, missing values the node's way)."""
        seen = self.col_values.astype(np.float32).astype(float) if float32 else self.col_values
        n_levels = np.clip(self.col_levels, 0, seen.shape[1])
        out = level_masks(cols, thresholds[at], nan_left[at], seen, n_levels, strict)
        for k in np.flatnonzero(categorical):
            values = self.col_values[cols[k], : n_levels[cols[k]]]
            goes = np.where(np.isnan(values), nan_left[at[k]], category_left(at[k], values))
            out[k] = int((goes.astype(np.int64) << np.arange(len(values), dtype=np.int64)).sum())
        return out

    def add(self, *, column, numeric_threshold, strict, float32, nan_left, left, right, leaf_value,
            category_left=None, depth=0, roots=(0,)):
        """One tree, or several laid end to end; arrays over their nodes (column -1 at leaves, children numbered
        within these arrays), each tree's root at ``roots``. ``category_left(node, values) -> bool`` decides a
        native categorical split for the level values (None: none in these trees)."""
        n = len(column)
        feature = np.full(n, -1, dtype=np.int64)
        numeric = np.ones(n, dtype=bool)
        bound = np.zeros(n)
        mask = np.zeros(n, dtype=np.int64)
        value = np.zeros((n, self.k))
        value[:] = leaf_value
        column = np.asarray(column)
        nodes = np.flatnonzero(column >= 0)
        categorical = (np.zeros(len(nodes), dtype=bool) if category_left is None else
                       np.array([category_left(node, None) is not None for node in nodes], dtype=bool))
        cols = column[nodes]
        if (self.col_feature[cols] < 0).any():
            raise ConfigError("The model splits on a one-hot column for a level the task does not have.")
        feature[nodes] = self.col_feature[cols]
        is_level = self.col_levels[cols] >= 0
        if (categorical & ~is_level).any():
            raise ConfigError("The model splits by category on a number column; the tree generator does not read it.")
        if (self.col_levels[cols] > MAX_LEVELS).any():
            raise ConfigError(f"A categorical feature with more than {MAX_LEVELS} levels is not read by the tree generator.")
        thresholds = np.asarray(numeric_threshold, dtype=float)
        at = nodes[~is_level]
        b = left_bounds(thresholds[at], strict=strict, float32=float32)
        bound[at] = np.where(self.col_rounded[cols[~is_level]], rounded_bounds(b), b)
        at = nodes[is_level]
        numeric[at] = False
        mask[at] = self._level_masks(at, cols[is_level], thresholds, categorical[is_level], category_left,
                                     strict=strict, float32=float32, nan_left=np.asarray(nan_left, dtype=bool))
        left = np.where(np.asarray(left) >= 0, np.asarray(left) + self.offset, -1)
        right = np.where(np.asarray(right) >= 0, np.asarray(right) + self.offset, -1)
        self.parts.append(dict(feature=feature, numeric=numeric, bound=bound, mask=mask,
                               nan_left=np.asarray(nan_left, dtype=bool), left=left, right=right, value=value,
                               roots=np.asarray(roots, dtype=np.int64) + self.offset))
        self.offset += n
        self.depth = max(self.depth, int(depth))

    def form(self, *, link, base, undesired, library, float32=False, band=None, band_scale=0.0) -> TreeForm:
        if not self.parts:
            raise ConfigError("The model has no trees.")
        cat = {k: np.concatenate([p[k] for p in self.parts]) for k in
               ("feature", "numeric", "bound", "mask", "nan_left", "left", "right", "value")}
        return TreeForm(roots=np.concatenate([p["roots"] for p in self.parts]), link=link,
                        base=np.asarray(base, dtype=float).reshape(-1), undesired=tuple(undesired), library=library,
                        depth=self.depth, float32=float32, band=band, band_scale=band_scale, **cat)


def _sklearn_trees(builder: _Builder, trees, values: list[np.ndarray]) -> None:
    """scikit-learn's trees (``tree_``: ``<=`` against float32 thresholds), ``values`` their nodes' values; read
    laid end to end, a group of about :data:`GROUP_NODES` nodes at a time (one pass per group, not per tree, while
    a group's arrays stay in the cache)."""
    sizes = np.array([tree.tree_.node_count for tree in trees])
    group = np.cumsum(sizes) // GROUP_NODES
    for g in np.unique(group):
        at = np.flatnonzero(group == g)
        _sklearn_group(builder, [trees[i] for i in at], [values[i] for i in at])


def _sklearn_group(builder: _Builder, trees, values: list[np.ndarray]) -> None:
    starts = np.cumsum([0] + [tree.tree_.node_count for tree in trees])
    left, right, column, threshold, nan_left = [], [], [], [], []
    for start, tree in zip(starts, trees):
        t = tree.tree_
        left.append(np.where(t.children_left >= 0, t.children_left + start, -1))
        right.append(np.where(t.children_right >= 0, t.children_right + start, -1))
        column.append(np.where(t.children_left >= 0, t.feature, -1))
        threshold.append(t.threshold)
        nan_left.append(np.asarray(getattr(t, "missing_go_to_left", np.zeros(t.node_count)), dtype=bool))
    left_all, right_all = np.concatenate(left), np.concatenate(right)
    builder.add(column=np.concatenate(column), numeric_threshold=np.concatenate(threshold), strict=False,
                float32=True, nan_left=np.concatenate(nan_left), left=left_all, right=right_all,
                leaf_value=np.concatenate(values), depth=depth_of(left_all, right_all), roots=starts[:-1])


def _read_forest(builder, model) -> dict:
    """A random forest's (or extra trees') classifier, or one decision (or extra) tree as a forest of one: each
    tree's class fractions, averaged (``mean``)."""
    trees = _sklearn_tree_list(model)
    n_classes = int(model.n_classes_)
    fractions = [tree.tree_.value[:, 0, :n_classes].astype(float) for tree in trees]
    totals = [f.sum(axis=1, keepdims=True) for f in fractions]
    _sklearn_trees(builder, trees, [f / np.where(t == 0, 1.0, t) for f, t in zip(fractions, totals)])
    return dict(link="mean", base=np.zeros(n_classes))


def _read_forest_regressor(builder, model) -> dict:
    """A random forest's (or extra trees') regressor, or one tree: each tree's leaf value, averaged (``band-mean``)."""
    trees = _sklearn_tree_list(model)
    _sklearn_trees(builder, trees, [tree.tree_.value[:, 0, :1].astype(float) for tree in trees])
    return dict(link="band-mean", base=np.zeros(1))


def _sklearn_tree_list(model) -> list:
    """A forest's trees, or a single tree alone; single-output only."""
    if getattr(model, "n_outputs_", 1) != 1:
        raise ConfigError("The tree generator reads single-output trees and forests only.")
    return list(model.estimators_) if hasattr(model, "estimators_") else [model]


def _read_gradient_boosting(builder, gb) -> dict:
    from sklearn.dummy import DummyClassifier, DummyRegressor

    if not (gb.init_ == "zero" or isinstance(gb.init_, (DummyClassifier, DummyRegressor))):
        raise ConfigError("The tree generator reads GradientBoosting with its default initial estimator only.")
    base = np.asarray(gb._raw_predict_init(np.zeros((1, gb.n_features_in_), dtype=np.float32)), dtype=float)[0]
    k = gb.estimators_.shape[1]
    trees, values = [], []
    for stage in gb.estimators_:
        for c, tree in enumerate(stage):
            trees.append(tree)
            values.append(np.zeros((tree.tree_.node_count, k)))
            values[-1][:, c] = gb.learning_rate * tree.tree_.value[:, 0, 0]
    _sklearn_trees(builder, trees, values)
    if not hasattr(gb, "classes_"):  # a regressor: every loss it takes predicts the raw sum itself
        return dict(link="band", base=base)
    return dict(link="sigmoid" if k == 1 else "softmax", base=base)


def _bitset_has(bitset: np.ndarray, values: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(values) & (values >= 0) & (values < 32 * len(bitset))
    v = np.where(ok, values, 0).astype(np.int64)
    return ok & (((bitset[v // 32].astype(np.int64) >> (v % 32)) & 1) == 1)


def _read_histogram_boosting(builder, hgb) -> dict:
    k = hgb.n_trees_per_iteration_
    if getattr(hgb, "_preprocessor", None) is not None:  # its own encoder puts the categorical columns first
        categorical = np.asarray(hgb.is_categorical_, dtype=bool)
        order = np.r_[np.flatnonzero(categorical), np.flatnonzero(~categorical)]
        builder.set_columns([builder.columns[i] for i in order])
    for stage in hgb._predictors:
        for c, predictor in enumerate(stage):
            nodes = predictor.nodes
            split = ~nodes["is_leaf"].astype(bool)
            left = np.where(split, nodes["left"].astype(np.int64), -1)
            right = np.where(split, nodes["right"].astype(np.int64), -1)
            values = np.zeros((len(nodes), k))
            values[:, c] = nodes["value"]
            categorical = nodes["is_categorical"].astype(bool)

            def category_left(node, values, nodes=nodes, predictor=predictor, categorical=categorical):
                if not categorical[node]:
                    return None
                if values is None:
                    return True
                return _bitset_has(predictor.raw_left_cat_bitsets[nodes["bitset_idx"][node]], values)

            builder.add(column=np.where(split, nodes["feature_idx"].astype(np.int64), -1),
                        numeric_threshold=nodes["num_threshold"], strict=False, float32=False,
                        nan_left=nodes["missing_go_to_left"].astype(bool), left=left, right=right, leaf_value=values,
                        category_left=category_left if categorical.any() else None, depth=depth_of(left, right))
    base = np.asarray(hgb._baseline_prediction, dtype=float).reshape(-1)
    if not hasattr(hgb, "classes_"):
        return dict(link="band", base=base)
    return dict(link="sigmoid" if k == 1 else "softmax", base=base)


def _classifier(model):
    """(the classifier, True if it sits behind FLEX's own encoder)."""
    steps = getattr(model.pipeline, "steps", None)
    if steps:
        if len(steps) != 2:
            raise ConfigError("The tree generator reads a classifier alone or after one FLEX encoder step.")
        return steps[-1][1], True
    return model.pipeline, False


def tree_form(model, task) -> TreeForm:
    """The model's :class:`TreeForm` over ``task``'s coded features, checked against its predict_proba.

    Raises
    ------
    ConfigError
        Not a supported tree ensemble, or its form does not reproduce the model (say why).
    """
    classifier, encoded = _classifier(model)
    n_levels = [0 if f.is_continuous else len(f.levels) for f in task.features]
    read, library = _reader(classifier, regression=model.band is not None)
    columns = _pipeline_columns(model, task) if encoded else _frame_columns(model, task)
    if model.band is not None:  # one output, the prediction; the band's score is P(undesirable), column 1
        builder = _Builder(columns, n_levels, 1)
        form = builder.form(undesired=(1,), library=library, band=model.band, band_scale=model.band_scale,
                            **read(builder, classifier))
    else:
        k_classes = len(getattr(classifier, "classes_", model.classes))
        # the probability columns the model sums into P(undesirable) (P off the goal, with desired classes): as
        # FittedModel.p_off_goal does
        undesired = [list(model.classes).index(c) for c in model.off_goal]
        # a forest averages class fractions; boosting has one raw output for two classes, one per class otherwise
        builder = _Builder(columns, n_levels, k_classes if read is _read_forest or k_classes > 2 else 1)
        form = builder.form(undesired=undesired, library=library, **read(builder, classifier))
    _check(form, model, task)
    return form


def _reader(estimator, *, regression: bool) -> tuple[Callable[[_Builder, Any], dict], str]:
    """(the function reading ``estimator``'s trees, its library); ConfigError for a model it does not read."""
    from sklearn import ensemble, tree

    module = type(estimator).__module__
    kind = "Regressor" if regression else "Classifier"
    # a single DecisionTree{kind} (ExtraTree{kind} is one too) is read as a forest of one tree
    if isinstance(estimator, (getattr(ensemble, f"RandomForest{kind}"), getattr(ensemble, f"ExtraTrees{kind}"),
                              getattr(tree, f"DecisionTree{kind}"))):
        return (_read_forest_regressor if regression else _read_forest), "sklearn"
    if isinstance(estimator, (getattr(ensemble, f"GradientBoosting{kind}"), getattr(ensemble, f"HistGradientBoosting{kind}"))):
        if regression and getattr(estimator, "loss", "") not in IDENTITY_OBJECTIVES["sklearn"]:
            raise ConfigError(f"The tree generator does not read the loss {estimator.loss!r} (its prediction is not "
                              "the trees' sum).")
        hist = isinstance(estimator, getattr(ensemble, f"HistGradientBoosting{kind}"))
        return (_read_histogram_boosting if hist else _read_gradient_boosting), "sklearn"
    if module.startswith("xgboost"):
        return read_xgboost, "xgboost"
    if module.startswith("lightgbm"):
        return read_lightgbm, "lightgbm"
    raise ConfigError(f"The tree generator does not read {type(estimator).__name__} models (only scikit-learn's "
                      "decision trees and tree ensembles, XGBoost and LightGBM).")


def _check(form: TreeForm, model, task) -> None:
    """Refuse a form that does not reproduce the model's predict_proba on a sample of its rows."""
    rows = model.train_index if len(model.train_index) else task.frame.index.to_numpy()
    rows = rows[:: max(1, len(rows) // CHECK_ROWS)]
    codes = encode_rows(task, task.frame.loc[rows, task.feature_names])
    codes = codes[~np.isnan(codes[:, [not f.is_continuous for f in task.features]]).any(axis=1)]
    if not len(codes):
        return
    expected = model.p_off_goal(decode_rows(task, codes))
    got = form(codes)
    worst = float(np.max(np.abs(got - expected)))
    if not worst <= (FLOAT32_TOLERANCE if form.float32 else CHECK_TOLERANCE):
        raise ConfigError(f"The tree generator's reading of this model differs from its predict_proba by {worst:.3g}; "
                          "it is not used.")

"""Scoring coded rows without a pandas round trip: the pipeline's encode step done once in numpy.

A search scores tens of thousands of candidate rows that exist as codes (see ``_set``).
Decoding them to a frame and letting the pipeline's ColumnTransformer one-hot them again
costs as much as the forest itself. For the encoders this package builds (one-hot,
ordinal, passthrough, standard scaling) the encoded matrix is a table lookup per
feature, built once per model; the classifier then sees exactly the matrix the pipeline
would have given it (checked on training rows when the scorer is built). Any other model
is scored through its own ``predict_proba`` on decoded rows, as before.
"""

from __future__ import annotations

import copy
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..data import TaskSpec
from ..models import FittedModel
from ._set import decode_rows, encode_rows

__all__ = ["CodeScorer", "scorer_for", "resolve_cores"]

#: Training rows the encoding is checked on when a scorer is built.
CHECK_ROWS = 200
#: Fewer rows than this go through a forest's trees in one thread (handing out 100 trees costs more).
THREADED_ROWS = 2_000

_SCORERS: weakref.WeakKeyDictionary[FittedModel, dict[str, CodeScorer]] = weakref.WeakKeyDictionary()


def resolve_cores(n_jobs: int) -> int:
    """Cores an ``n_jobs`` setting asks for on this machine: -1 (or any negative number) means all of them."""
    return (os.cpu_count() or 1) if int(n_jobs) < 0 else max(1, int(n_jobs))


def scorer_for(model: FittedModel, task: TaskSpec) -> CodeScorer:
    """The model's scorer for this task, built on first use and kept as long as the model lives.

    Shared by the search and the refinement, so a session builds (and checks) one encoding per model.
    """
    per_task = _SCORERS.setdefault(model, {})
    scorer = per_task.get(task.fingerprint)
    if scorer is None:
        rows = model.train_index if len(model.train_index) else task.frame.index.to_numpy()
        rows = rows[:: max(1, len(rows) // CHECK_ROWS)]
        check = encode_rows(task, task.frame.loc[rows, task.feature_names])
        scorer = per_task[task.fingerprint] = CodeScorer(model, task, check_codes=check)
    return scorer

#: Rows scored per block: rows are scored independently, so blocks only bound the memory.
BLOCK_ROWS = 200_000


class CodeScorer:
    """P(undesirable) for coded rows of shape (n, n_features).

    ``check_codes`` (training rows as codes) are encoded both ways once; if the two
    differ anywhere the scorer falls back to the pipeline, so it is never wrong, only slower.
    """

    def __init__(self, model: FittedModel, task: TaskSpec, check_codes: np.ndarray | None = None,
                 *, threads: int | None = None):
        # The model weakly: the module's registry of scorers is keyed by the model, and a strong reference from
        # its value kept every model (and its task) a scorer was ever built for alive for the life of the process.
        self._model = weakref.ref(model)
        self._pinned: FittedModel | None = None  # a copy that crossed a pickle holds its own model
        self.task = task
        # Threads a forest's trees are spread over: 1 unless a caller was given more cores (``with_threads``).
        self.threads = 1 if threads is None else max(1, int(threads))
        self._plan = _encoding_plan(model, task)
        # The classifier's columns that are undesirable (a user's model may order or name its classes
        # any way, and may have several undesired ones; with desired classes, every other class): summed, as
        # FittedModel.p_off_goal does.
        self._undesired = [list(model.classes).index(c) for c in model.off_goal]
        if self._plan is not None and check_codes is not None and len(check_codes):
            sample = check_codes[:: max(1, len(check_codes) // CHECK_ROWS)]
            try:
                expected = np.asarray(model.pipeline.steps[0][1].transform(model.estimator_input(decode_rows(task, sample))),
                                      dtype=float)
            except Exception:
                expected = None
            got = self._encode(sample)
            if expected is None or got.shape != expected.shape or not np.allclose(got, expected, equal_nan=True):
                self._plan = None  # an encoder this module does not mirror exactly: use the pipeline

    @property
    def model(self) -> FittedModel:
        model = self._model()
        if model is None:  # pragma: no cover - callers hold the model they score with
            raise RuntimeError("This scorer's model no longer exists.")
        return model

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_model": None, "_pinned": self.model}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._model = weakref.ref(state["_pinned"])

    def with_threads(self, threads: int) -> CodeScorer:
        """This scorer walking a forest's trees in ``threads`` threads (same encoding, same bits)."""
        if threads == self.threads:
            return self
        twin = copy.copy(self)
        twin.threads = max(1, int(threads))
        return twin

    @property
    def plan(self):
        """(width, blocks) of the checked numpy encoding (see :func:`_encoding_plan`), or None (the pipeline is called)."""
        return self._plan

    @property
    def fast(self) -> bool:
        """The pipeline's encode step is done here in numpy (else the whole pipeline is called)."""
        return self._plan is not None

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        if len(codes) > BLOCK_ROWS:  # the encoded matrix of a million rows would cost gigabytes at once
            return np.concatenate([self(codes[i : i + BLOCK_ROWS]) for i in range(0, len(codes), BLOCK_ROWS)])
        if self._plan is None:
            return self.model.p_off_goal(decode_rows(self.task, codes))
        model = self.model
        classifier = model.pipeline.steps[-1][1]
        encoded = self._encode(codes)
        if model.band is not None:  # a regressor: its off-band score (FittedModel.predict_proba's)
            return model.band.score(np.asarray(classifier.predict(encoded), dtype=float).reshape(-1), model.band_scale)
        if _plain_forest(classifier):
            proba = _forest_proba(classifier, encoded, threads=self.threads if len(codes) >= THREADED_ROWS else 1)
        else:
            proba = classifier.predict_proba(encoded)
        return np.asarray(proba, dtype=float)[:, self._undesired].sum(axis=1)

    def _encode(self, codes: np.ndarray) -> np.ndarray:
        width, blocks = self._plan
        out = np.zeros((len(codes), width))
        rows = np.arange(len(codes))
        for kind, j, offset, table in blocks:
            col = codes[:, j]
            if kind == "onehot":
                target = table[col.astype(int)]
                hit = target >= 0  # a level the encoder never saw stays all zeros (handle_unknown="ignore")
                out[rows[hit], offset + target[hit]] = 1.0
            elif kind == "ordinal":
                out[:, offset] = table[col.astype(int)]
            else:  # numeric: (x - shift) / scale
                shift, scale = table
                out[:, offset] = (col - shift) / scale
        return out


def _encoding_plan(model: FittedModel, task: TaskSpec):
    """(width, blocks) mirroring the fitted ColumnTransformer, or None when it is not one this module mirrors."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder, StandardScaler

    pipeline = model.pipeline
    steps = getattr(pipeline, "steps", None)
    if not steps or len(steps) != 2 or not isinstance(steps[0][1], ColumnTransformer):
        return None
    if hasattr(steps[1][1], "feature_names_in_"):  # fitted on a frame: it expects column names
        return None
    position = {name: j for j, name in enumerate(task.feature_names)}
    blocks: list[tuple[str, int, int, Any]] = []  # (kind, feature, first column, levels' columns or (shift, scale))
    offset = 0
    for _, transformer, columns in steps[0][1].transformers_:
        if (isinstance(transformer, str) and transformer == "drop") or len(columns) == 0:
            continue
        if any(not isinstance(c, str) or c not in position for c in columns):
            return None
        for k, name in enumerate(columns):
            j, feature = position[name], task.features[position[name]]
            if isinstance(transformer, OneHotEncoder) and not feature.is_continuous:
                if transformer.drop_idx_ is not None:
                    return None
                seen = {level: i for i, level in enumerate(transformer.categories_[k])}
                blocks.append(("onehot", j, offset, np.array([seen.get(level, -1) for level in feature.levels])))
                offset += len(transformer.categories_[k])
            elif isinstance(transformer, OrdinalEncoder) and not feature.is_continuous:
                seen = {level: i for i, level in enumerate(transformer.categories_[k])}
                unknown = float(transformer.unknown_value) if transformer.handle_unknown == "use_encoded_value" else np.nan
                blocks.append(("ordinal", j, offset, np.array([seen.get(level, unknown) for level in feature.levels], dtype=float)))
                offset += 1
            elif feature.is_continuous and (
                # a fitted ColumnTransformer holds "passthrough" as an identity FunctionTransformer
                (isinstance(transformer, str) and transformer == "passthrough")
                or (isinstance(transformer, FunctionTransformer) and transformer.func is None)
            ):
                blocks.append(("numeric", j, offset, (0.0, 1.0)))
                offset += 1
            elif isinstance(transformer, StandardScaler) and feature.is_continuous:
                shift = transformer.mean_[k] if transformer.with_mean else 0.0
                scale = transformer.scale_[k] if transformer.with_std else 1.0
                blocks.append(("numeric", j, offset, (float(shift), float(scale))))
                offset += 1
            else:
                return None
    return offset, blocks


def _plain_forest(classifier) -> bool:
    """A fitted single-output scikit-learn forest classifier predicting in one thread."""
    from sklearn.ensemble._forest import ForestClassifier

    return (
        isinstance(classifier, ForestClassifier)
        and getattr(classifier, "n_outputs_", 0) == 1
        and classifier.n_jobs in (None, 1)
        and hasattr(classifier, "estimators_")
    )


def _forest_proba(forest, matrix: np.ndarray, *, threads: int = 1) -> np.ndarray:
    """``forest.predict_proba(matrix)`` without its per-tree bookkeeping, to the last bit.

    scikit-learn's forest sends each tree through joblib, a fitted check and input
    validation; with 100 trees and a dozen calls per search that bookkeeping costs
    a quarter of the time. The arithmetic here is the forest's own: each tree's leaf
    fractions (``tree_.predict`` on float32 rows) summed in estimator order, divided
    by the number of trees (tests compare the two with exact equality). With
    ``threads`` > 1 the trees are walked in that many threads (the tree walk releases
    the GIL) but still summed in estimator order, so the bits do not depend on it.
    """
    rows = np.ascontiguousarray(matrix, dtype=np.float32)
    n_classes = int(forest.n_classes_)
    total = np.zeros((len(rows), n_classes))

    def leaf_fractions(tree) -> np.ndarray:
        return tree.tree_.predict(rows)[:, :n_classes]

    trees = forest.estimators_
    for fractions in map(leaf_fractions, trees) if threads <= 1 else _pool(threads).map(leaf_fractions, trees):
        total += fractions
    total /= len(trees)
    return total


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    """One long-lived pool per thread count: starting threads on every call would cost more than they save."""
    with _POOLS_LOCK:
        if threads not in _POOLS:
            _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="flex-trees")
        return _POOLS[threads]

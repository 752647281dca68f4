"""Quality of a counterfactual set: sparsity, proximity, diversity and plausibility.

All four use one distance between rows in the coded feature space: the
MAD-normalised L1 distance on continuous features plus the number of categorical
(and ordinal) mismatches, as in DiCE's proximity. Every function averages over
*valid* counterfactuals only, and returns NaN when there is none to average.
"""

from __future__ import annotations

import numpy as np

from ..data import TaskSpec
from ..models import FittedModel
from ._set import CounterfactualSet, decode_rows, encode_rows

__all__ = [
    "feature_mad",
    "mixed_distances",
    "sparsity",
    "proximity",
    "diversity",
    "plausibility",
    "counterfactual_quality",
]

#: A continuous value counts as changed when it moves more than this (DiCE's tolerance).
CHANGE_EPSILON = 1e-6


def feature_mad(task: TaskSpec, codes: np.ndarray) -> np.ndarray:
    """Median absolute deviation of each continuous feature over ``codes`` (n_rows, F), shape (F,).

    1 for categorical features, and for a continuous feature whose MAD is 0 (most
    values equal), so that its changes are still counted in value units.
    """
    mad = np.ones(len(task.features))
    for j, f in enumerate(task.features):
        if f.is_continuous:
            col = codes[:, j][~np.isnan(codes[:, j])]
            value = float(np.median(np.abs(col - np.median(col)))) if len(col) else 0.0
            mad[j] = value if value > 0 else 1.0
    return mad


def _continuous(task: TaskSpec) -> np.ndarray:
    return np.array([f.is_continuous for f in task.features])


def mixed_distances(a: np.ndarray, b: np.ndarray, task: TaskSpec, *, mad: np.ndarray) -> np.ndarray:
    """Distance between rows of ``a`` (..., F) and ``b`` (..., F), broadcast: shape (...).

    sum over continuous j of |a_j - b_j| / mad_j, plus the count of categorical j with a_j != b_j.
    """
    continuous = _continuous(task)
    diff = np.abs(a - b)
    return np.where(continuous, diff / mad, diff != 0).sum(axis=-1)


def _changed(cfset: CounterfactualSet, task: TaskSpec) -> np.ndarray:
    """(n_q, n_cf, F) bool: the cell differs from the factual (continuous: by more than CHANGE_EPSILON)."""
    diff = np.abs(cfset.counterfactuals - cfset.factuals[:, None, :])
    with np.errstate(invalid="ignore"):
        return np.where(_continuous(task), diff > CHANGE_EPSILON, diff != 0) & ~np.isnan(diff)


def sparsity(cfset: CounterfactualSet, task: TaskSpec) -> float:
    """Mean number of features a valid counterfactual changes (lower = sparser)."""
    if not cfset.valid.any():
        return float("nan")
    return float(_changed(cfset, task).sum(axis=2)[cfset.valid].mean())


def proximity(cfset: CounterfactualSet, task: TaskSpec, *, mad: np.ndarray) -> float:
    """Mean distance from a valid counterfactual to its factual (lower = closer)."""
    if not cfset.valid.any():
        return float("nan")
    dist = mixed_distances(cfset.counterfactuals, cfset.factuals[:, None, :], task, mad=mad)
    return float(dist[cfset.valid].mean())


def diversity(cfset: CounterfactualSet, task: TaskSpec, *, mad: np.ndarray) -> float:
    """Mean over queries with two or more valid counterfactuals of their mean pairwise distance."""
    per_query = []
    for cfs, valid in zip(cfset.counterfactuals, cfset.valid):
        rows = cfs[valid]
        if len(rows) >= 2:
            dist = mixed_distances(rows[:, None, :], rows[None, :, :], task, mad=mad)
            upper = np.triu_indices(len(rows), k=1)
            per_query.append(dist[upper].mean())
    return float(np.mean(per_query)) if per_query else float("nan")


def plausibility(cfset: CounterfactualSet, task: TaskSpec, reference: np.ndarray, *, mad: np.ndarray) -> float:
    """Mean distance from a valid counterfactual to its nearest row of ``reference`` (n_ref, F); lower = more plausible.

    Pass the training rows of the desired class as ``reference``.
    """
    if not cfset.valid.any() or len(reference) == 0:
        return float("nan")
    cfs = cfset.counterfactuals[cfset.valid]
    nearest = np.empty(len(cfs))
    step = max(1, 2_000_000 // max(1, len(reference) * reference.shape[1]))  # bound the (step, n_ref, F) block
    for start in range(0, len(cfs), step):
        block = cfs[start : start + step]
        nearest[start : start + step] = mixed_distances(block[:, None, :], reference[None, :, :], task, mad=mad).min(axis=1)
    return float(nearest.mean())


def counterfactual_quality(cfset: CounterfactualSet, task: TaskSpec, model: FittedModel) -> dict:
    """Validity, coverage and the four measures above, with MAD and the desired-class rows from the model's training data."""
    train = encode_rows(task, task.frame.loc[model.train_index, task.feature_names])
    mad = feature_mad(task, train)
    desired = train[model.p_off_goal(decode_rows(task, train)) <= 0.5]  # predicted the goal (not undesirable)
    found = int(cfset.found.sum())
    return {
        "validity": float(cfset.valid.sum() / found) if found else float("nan"),
        "coverage": float((cfset.counts >= cfset.n_cf).mean()) if cfset.n_queries else float("nan"),
        "sparsity": sparsity(cfset, task),
        "proximity": proximity(cfset, task, mad=mad),
        "diversity": diversity(cfset, task, mad=mad),
        "plausibility": plausibility(cfset, task, desired, mad=mad),
    }

"""Minimal magnitudes: move each change of a counterfactual back toward the factual while it stays valid.

Generators draw new values far from the factual (DiCE random uniformly over the training
range, ``batch`` from the training rows), so the size of a change, and with it μ_j and F_j at
τ >= 0.5, describes the sampler rather than the model. :func:`refine_counterfactuals` keeps
each counterfactual's *set* of changed features and shrinks every continuous or ordinal change
to about the smallest size the model needs:

1. For every (valid counterfactual, changed continuous/ordinal feature) pair, search the segment
   from the factual's value (clipped to the permitted range) to the counterfactual's value,
   with the other features held at the counterfactual's values. Each model call scores, for all
   pairs at once, the factual's value and three inner points (the first call), then three inner
   points of the remaining segment (quartering it): the value kept is the point nearest the
   factual that the model still predicts desirable. The search stops when the segment is no longer
   than ``range_j / 1000`` (and at least one unit for integers and ordinal levels), so about six calls.
2. All of a counterfactual's shrunk features are applied together and scored (one call). Where
   the combination is no longer valid, the features are applied one by one, largest reduction
   first, and the longest valid prefix is kept (one more call).

Every returned counterfactual is a row the model scored as desirable in these calls, so validity
stays 100% by construction; integer features and ordinal levels stay integers, values stay
inside the permitted range (each point lies between the clipped factual value and the
counterfactual's value).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from .._errors import ConfigError
from ..data import TaskSpec
from ..models import FittedModel
from ._scoring import resolve_cores, scorer_for
from ._set import CounterfactualSet, resolve_permitted_range

__all__ = ["REFINE_MODES", "RELATIVE_TOLERANCE", "default_refine", "check_refine", "refine_counterfactuals"]

#: "minimal": shrink every continuous/ordinal change (see the module docstring); "none": keep the generator's values.
REFINE_MODES = ("minimal", "none")

#: Fractions of the remaining segment (factual side = 0, counterfactual side = 1) scored per call.
_FIRST_POINTS = np.array([0.0, 0.25, 0.5, 0.75])
_NEXT_POINTS = np.array([0.25, 0.5, 0.75])
#: A continuous segment shorter than this share of the feature's training range is close enough.
RELATIVE_TOLERANCE = 1e-3


def default_refine(generator_name: str) -> str:
    """``"minimal"`` for the native ``batch`` generators, ``"none"`` for DiCE (as the paper ran it)."""
    return "none" if generator_name.startswith("dice-") else "minimal"


def check_refine(refine: str) -> str:
    if refine not in REFINE_MODES:
        raise ConfigError(f"Unknown refine mode {refine!r}; choose one of {', '.join(REFINE_MODES)}.")
    return refine


def refine_counterfactuals(
    cfset: CounterfactualSet,
    task: TaskSpec,
    model: FittedModel,
    *,
    permitted_range: Mapping[str, Sequence] | None = None,
    ranges: np.ndarray | None = None,
    n_jobs: int = 1,
) -> CounterfactualSet:
    """The set with every valid counterfactual's continuous and ordinal changes made about minimal.

    Parameters
    ----------
    cfset : CounterfactualSet
        Counterfactuals of shape (n_queries, n_cf, n_features); invalid ones are returned unchanged.
    task, model : the task the codes belong to and the model that decides validity.
    permitted_range : mapping, optional
        The ranges the generator was given; a value never leaves them.
    ranges : ndarray of shape (n_features,), optional
        Training ranges, for the stopping tolerance (default: the task's data ranges).
    n_jobs : int, default 1
        Cores a forest's trees are spread over (-1: all); the result does not depend on it.

    Returns
    -------
    CounterfactualSet
        Same shape and validity; ``config["refine"] == "minimal"`` and the model calls and rows
        spent are added to ``seconds``/``model_rows`` and recorded in ``config``.
    """
    start = time.perf_counter()
    scorer = _Scorer(task, model, threads=resolve_cores(n_jobs))
    factuals = cfset.factuals
    current = cfset.counterfactuals.copy()
    query, slot = np.nonzero(cfset.valid)
    permitted = resolve_permitted_range(task, permitted_range)
    bounds = _bounds(task, permitted)
    ranges = task.ranges() if ranges is None else np.asarray(ranges, dtype=float)
    stepwise = np.array([(not f.is_continuous) or f.integer for f in task.features])
    movable = np.array([f.is_continuous or f.kind == "ordinal" for f in task.features])
    levels = np.array([np.nan if f.is_continuous else len(f.categories) - 1 for f in task.features], dtype=float)
    spans = np.where(np.isnan(ranges), levels, ranges)
    # Integers stop at one unit, or at range/1000 when that is larger (an amount in the millions
    # needs no more precision than a float feature of the same range).
    tolerance = np.maximum(np.nan_to_num(spans) * RELATIVE_TOLERANCE, np.where(stepwise, 1.0, 1e-12))

    cfs, facts = current[query, slot], factuals[query]
    target = np.clip(facts, bounds[0], bounds[1])  # the factual's value, or the nearest permitted one
    pair_cf, pair_feature = np.nonzero((cfs != target) & (cfs != facts) & movable)
    refined_value = _shrink(
        scorer, cfs, target, pair_cf, pair_feature, stepwise, tolerance, bounds, _LevelFilter(task, permitted)
    )
    refined = _combine(scorer, cfs, pair_cf, pair_feature, refined_value, spans)
    current[query, slot] = refined
    config = {
        **cfset.config,
        "refine": "minimal",
        "refine_model_calls": scorer.calls,
        "refine_model_rows": scorer.rows,
        "refine_seconds": time.perf_counter() - start,
    }
    model_rows = cfset.model_rows + scorer.rows if cfset.model_rows >= 0 else cfset.model_rows
    return replace(
        cfset,
        counterfactuals=current,
        found=cfset.found.copy(),
        valid=cfset.valid.copy(),
        query_index=cfset.query_index.copy(),
        factuals=cfset.factuals.copy(),
        seconds=cfset.seconds + config["refine_seconds"],
        model_rows=model_rows,
        config=config,
    )


class _Scorer:
    """Scores coded rows (desirable or not) and counts the calls and rows spent.

    Through the model's code scorer (the pipeline's encoding done in numpy, the search's own):
    decoding every batch to a frame for the pipeline cost more than the forest.
    """

    def __init__(self, task: TaskSpec, model: FittedModel, *, threads: int = 1):
        self.p_undesirable, self.calls, self.rows = scorer_for(model, task).with_threads(threads), 0, 0

    def desirable(self, codes: np.ndarray) -> np.ndarray:
        if len(codes) == 0:
            return np.zeros(0, dtype=bool)
        self.calls += 1
        self.rows += len(codes)
        return self.p_undesirable(codes) <= 0.5  # undesirable means p > 0.5, as predict_undesirable


class _LevelFilter:
    """Which candidate codes an ordinal feature's permitted values allow (everything else passes)."""

    def __init__(self, task: TaskSpec, permitted: dict):
        self.masks = {
            j: np.isin(np.asarray(f.categories, dtype=object), permitted[f.name])
            for j, f in enumerate(task.features)
            if f.kind == "ordinal" and f.name in permitted
        }

    def __call__(self, values: np.ndarray, features: np.ndarray) -> np.ndarray:
        ok = np.ones(values.shape, dtype=bool)
        for j, mask in self.masks.items():
            rows = features == j
            ok[rows] = mask[values[rows].astype(int)]
        return ok


def _bounds(task: TaskSpec, permitted: dict) -> tuple[np.ndarray, np.ndarray]:
    """Low and high code per feature: the permitted range of a continuous feature, or of an ordinal's levels."""
    low, high = np.full(len(task.features), -np.inf), np.full(len(task.features), np.inf)
    for j, f in enumerate(task.features):
        if f.name not in permitted:
            continue
        if f.is_continuous:
            low[j], high[j] = permitted[f.name]
        elif f.kind == "ordinal":
            allowed = [f.categories.index(v) for v in permitted[f.name]]
            low[j], high[j] = min(allowed), max(allowed)
    return low, high


def _shrink(scorer, cfs, target, pair_cf, pair_feature, stepwise, tolerance, bounds, allowed):
    """Per (counterfactual, feature) pair: the value nearest the target that keeps the counterfactual valid.

    ``lo`` is the side toward the factual (known invalid after the first call, unless the
    target itself was valid), ``hi`` the nearest value known valid. Shapes: (n_pairs,).
    ``allowed(values, features)`` rules out ordinal levels the permitted values exclude.
    """
    lo = target[pair_cf, pair_feature].astype(float)
    hi = cfs[pair_cf, pair_feature].astype(float)
    step = stepwise[pair_feature]
    tol = tolerance[pair_feature]
    low, high = bounds[0][pair_feature], bounds[1][pair_feature]
    open_ = np.ones(len(lo), dtype=bool)
    points = _FIRST_POINTS
    while open_.any():
        idx = np.flatnonzero(open_)
        gap = hi[idx] - lo[idx]
        values = lo[idx, None] + gap[:, None] * points[None, :]
        # Integers and levels round toward the valid side, so a point never lands past the target.
        rounded = np.where(gap[:, None] > 0, np.ceil(values), np.floor(values))
        values = np.where(step[idx, None], rounded, values)
        values = np.clip(values, low[idx, None], high[idx, None])
        rows = np.repeat(cfs[pair_cf[idx]], len(points), axis=0)
        rows[np.arange(len(rows)), np.repeat(pair_feature[idx], len(points))] = values.reshape(-1)
        ok = scorer.desirable(rows).reshape(len(idx), len(points)) & allowed(values, pair_feature[idx])
        # The first valid point from the factual side; none valid means the segment's last quarter.
        first = np.where(ok.any(axis=1), ok.argmax(axis=1), len(points))
        with_hi = np.column_stack([values, hi[idx]])
        new_hi = with_hi[np.arange(len(idx)), first]
        new_lo = np.where(first > 0, with_hi[np.arange(len(idx)), np.maximum(first - 1, 0)], lo[idx])
        hi[idx] = new_hi
        if points is _FIRST_POINTS:  # the target itself is valid: nothing left to search
            new_lo = np.where(first == 0, new_hi, new_lo)
        lo[idx] = new_lo
        open_[idx] = np.abs(hi[idx] - lo[idx]) > tol[idx]
        points = _NEXT_POINTS
    return hi


def _combine(scorer, cfs, pair_cf, pair_feature, refined_value, spans):
    """Apply every pair's shrunk value; where the combination breaks a counterfactual, the longest valid prefix."""
    out = cfs.copy()
    if len(pair_cf) == 0:
        return out
    combined = cfs.copy()
    combined[pair_cf, pair_feature] = refined_value
    touched = np.unique(pair_cf)
    ok = scorer.desirable(combined[touched])
    out[touched[ok]] = combined[touched[ok]]
    broken = touched[~ok]
    if len(broken) == 0:
        return out
    # Largest reduction first; prefix 1 (one shrunk feature) was scored valid during the search.
    in_broken = np.isin(pair_cf, broken)
    p_cf, p_feat, p_val = pair_cf[in_broken], pair_feature[in_broken], refined_value[in_broken]
    reduction = np.abs(cfs[p_cf, p_feat] - p_val) / np.where(spans[p_feat] > 0, spans[p_feat], 1.0)
    order = np.lexsort((p_feat, -reduction, p_cf))
    p_cf, p_feat, p_val = p_cf[order], p_feat[order], p_val[order]
    starts = np.r_[True, p_cf[1:] != p_cf[:-1]]
    first_of = np.maximum.accumulate(np.where(starts, np.arange(len(p_cf)), 0))
    rank = np.arange(len(p_cf)) - first_of  # 0 for a counterfactual's largest reduction
    # Row r: the counterfactual with its features of rank 0..rank[r] shrunk (built cumulatively).
    prefixes = cfs[p_cf].copy()
    for r in range(len(p_cf)):
        if rank[r] > 0:
            prefixes[r] = prefixes[r - 1]
        prefixes[r, p_feat[r]] = p_val[r]
    counts = np.bincount(p_cf, minlength=len(cfs))
    trial = (rank >= 1) & (rank < counts[p_cf] - 1)  # rank 0 known valid, the full set known broken
    valid_prefix = rank == 0
    valid_prefix[trial] = scorer.desirable(prefixes[trial])
    best = np.full(len(cfs), -1)
    np.maximum.at(best, p_cf[valid_prefix], np.flatnonzero(valid_prefix))
    out[broken] = prefixes[best[broken]]
    return out

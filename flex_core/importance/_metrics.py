"""FLEX's formulas as vectorised numpy over a (queries, n_cf, features) array.

Paper references: Eq. (1) local change frequency, Algorithm 1 (τ and μ), Eq. (4)
global/regional mean, Algorithm 2 (DiCE's importance).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from .._errors import ConfigError

__all__ = ["DEFAULT_TAU", "resolve_tau", "change_matrix", "local_frequencies", "local_magnitudes", "aggregate", "dice_importance"]

#: DiCE's machine-precision tolerance for "a continuous value changed" (Algorithm 2).
DICE_EPSILON = 1e-6


DEFAULT_TAU = 0.1  # the paper's main setting; also what a τ mapping gives the features it does not name


def resolve_tau(feature_names, continuous, tau: float | Mapping[str, float]) -> np.ndarray:
    """τ per feature, shape (n_features,): a number for continuous features, NaN for the others.

    ``tau`` is one number for every continuous feature, or a mapping ``{feature: τ}``
    whose unnamed continuous features take ``tau.get("*", DEFAULT_TAU)`` (the CLI's default too).
    """
    continuous = np.asarray(continuous, dtype=bool)
    out = np.full(len(feature_names), np.nan)
    if isinstance(tau, Mapping):
        unknown = [k for k in tau if k != "*" and k not in feature_names]
        if unknown:
            raise ConfigError(f"τ given for unknown feature(s): {', '.join(unknown)}.")
        not_cont = [k for k in tau if k != "*" and not continuous[list(feature_names).index(k)]]
        if not_cont:
            raise ConfigError(f"τ applies to continuous features only, not to: {', '.join(not_cont)}.")
        default = float(tau.get("*", DEFAULT_TAU))
        values = [float(tau.get(name, default)) for name in feature_names]
    else:
        values = [float(tau)] * len(feature_names)
    for j, v in enumerate(values):
        if continuous[j]:
            if not np.isfinite(v) or v < 0:
                raise ConfigError(f"τ must be a number >= 0 (got {v} for {feature_names[j]!r}).")
            out[j] = v
    return out


def change_matrix(factuals, counterfactuals, continuous, ranges, tau, *, epsilon: float | None = None):
    """Which counterfactual cells count as a change, and their relative size.

    Parameters
    ----------
    factuals : ndarray of shape (n_queries, n_features)
    counterfactuals : ndarray of shape (n_queries, n_cf, n_features)
    continuous : bool ndarray of shape (n_features,)
    ranges : ndarray of shape (n_features,)
        range(X_j) of the training data for continuous features.
    tau : ndarray of shape (n_features,)
        Ignored where ``epsilon`` is given (DiCE's rule: |Δ| > ε).

    Returns
    -------
    changed : bool ndarray of shape (n_queries, n_cf, n_features)
    relative : ndarray of shape (n_queries, n_cf, n_features)
        |Δ| / range for continuous features, NaN for the others.
    """
    delta = np.abs(counterfactuals - factuals[:, None, :])
    # A constant feature cannot change in a meaningful way: its relative change is 0.
    safe_range = np.where(np.asarray(ranges) > 0, ranges, np.inf)
    relative = np.where(continuous, delta / safe_range, np.nan)
    with np.errstate(invalid="ignore"):
        if epsilon is None:
            continuous_changed = relative > tau
        else:
            continuous_changed = delta > epsilon
        changed = np.where(continuous, continuous_changed, delta != 0)
    changed &= ~np.isnan(delta)  # empty slots never count
    return changed, relative


def local_frequencies(changed, usable) -> np.ndarray:
    """f_j(i), Eq. (1): share of query i's usable counterfactuals that change feature j.

    Computed over the counterfactuals a query has (not n_cf); NaN for a query with none.
    Shape (n_queries, n_features).
    """
    counts = usable.sum(axis=1).astype(float)
    hits = (changed & usable[:, :, None]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts[:, None] > 0, hits / counts[:, None], np.nan)


def local_magnitudes(relative, usable) -> np.ndarray:
    """μ_j(i), Algorithm 1: mean relative change |Δ|/range over usable counterfactuals.

    Shape (n_queries, n_features); NaN for categorical features and queries with none.
    """
    counts = usable.sum(axis=1).astype(float)
    summed = np.where(usable[:, :, None], relative, 0.0).sum(axis=1)
    categorical = np.isnan(relative).all(axis=(0, 1)) if relative.size else np.zeros(relative.shape[-1], bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(counts[:, None] > 0, summed / counts[:, None], np.nan)
    out[:, categorical] = np.nan
    return out


def aggregate(local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F_j, Eq. (4): mean over the queries that have counterfactuals, and the population std.

    ``local`` has shape (n_queries, n_features); NaN rows (no counterfactual) are skipped.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (categorical μ) stay NaN
        return np.nanmean(local, axis=0), np.nanstd(local, axis=0)


def dice_importance(changed_eps, usable) -> np.ndarray:
    """Φ^DiCE, Algorithm 2: changes above ε counted over all usable counterfactuals pooled.

    ``changed_eps`` is :func:`change_matrix` with ``epsilon`` set. Shape (n_features,);
    zeros when there is no counterfactual at all (as the algorithm initialises).
    """
    total = int(usable.sum())
    if total == 0:
        return np.zeros(changed_eps.shape[-1])
    return (changed_eps & usable[:, :, None]).sum(axis=(0, 1)) / total

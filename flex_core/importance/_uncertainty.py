"""How sure a ranking is: percentile-bootstrap intervals over the factuals, fully vectorised.

Every resample draws the factuals with replacement; a resampled F_j is the mean of
f_j(i) over the drawn factuals (Eq. 4), computed for all resamples at once as one
(n_boot, n_rows) @ (n_rows, n_features) product of draw counts and local frequencies,
so a τ change redraws the intervals in milliseconds.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.stats import rankdata

__all__ = ["BOOTSTRAP_RESAMPLES", "BOOTSTRAP_LEVEL", "bootstrap_counts", "bootstrap_means", "frequency_intervals"]

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_LEVEL = 0.95


@lru_cache(maxsize=32)
def bootstrap_counts(n_rows: int, *, n_boot: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> np.ndarray:
    """How often each row is drawn in each resample, shape (n_boot, n_rows); each row of it sums to n_rows.

    The draws depend only on (n_rows, n_boot, seed), so they are made once and shared
    (read-only): a τ change reuses them and only redoes the product.
    """
    picks = np.random.default_rng(seed).integers(0, n_rows, size=(n_boot, n_rows))
    offsets = np.arange(n_boot)[:, None] * n_rows
    counts = np.bincount((picks + offsets).ravel(), minlength=n_boot * n_rows).reshape(n_boot, n_rows).astype(float)
    counts.setflags(write=False)
    return counts


def bootstrap_means(local: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Resampled means of ``local`` (n_rows, n_features) for draw counts (n_boot, n_rows): (n_boot, n_features)."""
    return counts @ local / max(local.shape[0], 1)


def _percentiles(values: np.ndarray, level: float, **kwargs) -> np.ndarray:
    tail = (1 - level) / 2 * 100
    return np.percentile(values, [tail, 100 - tail], axis=0, **kwargs).T


def frequency_intervals(
    local: np.ndarray, *, n_boot: int = BOOTSTRAP_RESAMPLES, level: float = BOOTSTRAP_LEVEL, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap interval of each F_j and of each feature's rank, resampling the factuals.

    Parameters
    ----------
    local : ndarray of shape (n_queries, n_features)
        f_j(i); NaN rows (factuals without a counterfactual) are left out, as in F_j itself.
    n_boot, level, seed : resamples, coverage and the seed of the draws

    Returns
    -------
    frequency_ci : ndarray of shape (n_features, 2)
        [low, high] of F_j; NaN when no factual has a counterfactual.
    rank_interval : ndarray of shape (n_features, 2)
        [best, worst] rank (1 = most changed, ties share the best rank, as ``FlexResult.rank``):
        the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles of the feature's rank
        across resamples, taken among ranks that occurred. NaN when F is undefined.
    """
    rows = local[~np.isnan(local).all(axis=1)]
    n_features = local.shape[1]
    if len(rows) == 0:
        return np.full((n_features, 2), np.nan), np.full((n_features, 2), np.nan)
    means = bootstrap_means(rows, bootstrap_counts(len(rows), n_boot=n_boot, seed=seed))
    ranks = rankdata(-means, axis=1, method="min")
    frequency_ci = _percentiles(means, level)
    rank_interval = _percentiles(ranks, level, method="inverted_cdf").astype(float)
    return frequency_ci, rank_interval

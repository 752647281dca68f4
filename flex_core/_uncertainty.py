"""How sure a ranking is: 95% intervals of F_j, of ranks and of a region's r, in closed form.

F_j is the mean over n factuals of f_j(i), a value in [0, 1]. The factuals are a random
sample and each one's counterfactuals a random draw, so the f_j(i) are i.i.d. over both
levels, and any variable in [0, 1] with mean p has variance at most p(1 - p). The
**Wilson score interval** uses exactly that bound, so it needs neither a resample nor an
estimate of the spread; with a **continuity correction** of 1/(2n) it keeps its coverage
when the f_j(i) are all 0 or all 1 (five factuals that never change a feature give
[0, 0.54], not [0, 0]). ``benchmarks/bench_coverage.py`` measures the coverage on planted
data; the formula is Newcombe (1998), method 4, written as the Wilson bound of p̂ ∓ 1/(2n)
so that it is monotone and continuous in p̂ (the f_j(i) need not be 0 or 1).

Everything is vectorised over features; a τ change recomputes it in well under a millisecond.

The bootstrap helpers (``bootstrap_counts``, ``bootstrap_means``) remain for the FLEX-SHAP
rank agreement (``flex_core.compare.flex_shap_agreement``), which resamples both methods together.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.stats import norm

__all__ = [
    "INTERVAL_LEVEL",
    "INTERVAL_METHOD",
    "CONTINUITY",
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_LEVEL",
    "wilson_interval",
    "rank_intervals",
    "frequency_intervals",
    "intervals_of_means",
    "pearson_interval",
    "bootstrap_counts",
    "bootstrap_means",
]

INTERVAL_LEVEL = 0.95
INTERVAL_METHOD = "wilson-cc"  # Wilson score interval with a continuity correction of 1/(2n)
CONTINUITY = 0.5  # the correction, in units of 1/n
BOOTSTRAP_RESAMPLES = 1000  # the FLEX-SHAP agreement's resamples
BOOTSTRAP_LEVEL = 0.95


@lru_cache(maxsize=8)
def _z(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level!r}")
    return float(norm.ppf((1 + level) / 2))


def _wilson_bounds(p: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    z2 = z * z
    scale = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / scale
    half = z / scale * np.sqrt(np.maximum(p * (1 - p), 0) / n + z2 / (4 * n * n))
    return centre - half, centre + half


def wilson_interval(mean, n, *, level: float = INTERVAL_LEVEL, continuity: float = CONTINUITY) -> np.ndarray:
    """Wilson score interval of the mean of n values in [0, 1], shape ``mean.shape + (2,)``.

    Parameters
    ----------
    mean : float or ndarray
        The observed mean p̂ (in [0, 1]).
    n : int or ndarray (broadcast against ``mean``)
        How many values the mean is over; NaN bounds where n < 1 or the mean is NaN.
    level : float, default 0.95
    continuity : float, default 0.5
        The lower bound is Wilson's at p̂ - continuity/n and the upper at p̂ + continuity/n
        (clipped to [0, 1]); 0 gives the plain Wilson interval. With 0.5 and values that are
        0 or 1 this is Newcombe's continuity-corrected interval.

    Notes
    -----
    Plain Wilson for n = 5 values all 0: [0, z²/(n + z²)] = [0, 0.4345]. With the correction:
    the Wilson upper bound at p̂ = 0.1, 0.5371.
    """
    mean = np.asarray(mean, dtype=float)
    n = np.asarray(n, dtype=float)
    z = _z(level)
    with np.errstate(invalid="ignore", divide="ignore"):
        safe_n = np.where(n >= 1, n, np.nan)
        shift = continuity / safe_n
        low = _wilson_bounds(np.clip(mean - shift, 0, 1), safe_n, z)[0]
        high = _wilson_bounds(np.clip(mean + shift, 0, 1), safe_n, z)[1]
    # Rounding can leave a bound a hair beyond the estimate at p̂ = 0 or 1: the estimate is always inside.
    low, high = np.clip(np.minimum(low, mean), 0, 1), np.clip(np.maximum(high, mean), 0, 1)
    return np.stack(np.broadcast_arrays(low, high), axis=-1)


def rank_intervals(frequency_ci: np.ndarray) -> np.ndarray:
    """[best, worst] rank of each feature that its F interval and every other's allow, shape (n_features, 2).

    Ranks as ``FlexResult.rank``: 1 = most changed, ties share the best rank, so a feature's
    rank is 1 + the number of features with a larger F. Best: every other F at its lower bound
    and this one at its upper, i.e. 1 + #{k : low_k > high_j}; worst: 1 + #{k ≠ j : high_k > low_j}.
    When every F interval holds its true F, every rank interval holds the true rank. NaN rows
    (undefined F) are NaN and take no part.
    """
    ci = np.asarray(frequency_ci, dtype=float)
    low, high = ci[:, 0], ci[:, 1]
    defined = ~np.isnan(low) & ~np.isnan(high)
    others = defined[None, :] & ~np.eye(len(ci), dtype=bool)
    best = 1 + ((low[None, :] > high[:, None]) & others).sum(axis=1)
    worst = 1 + ((high[None, :] > low[:, None]) & others).sum(axis=1)
    out = np.column_stack([best, worst]).astype(float)
    out[~defined] = np.nan
    return out


def frequency_intervals(
    local: np.ndarray, *, level: float = INTERVAL_LEVEL, fixed: np.ndarray | None = None, continuity: float = CONTINUITY
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson interval of each F_j and the rank interval it implies.

    Parameters
    ----------
    local : ndarray of shape (n_queries, n_features)
        f_j(i); NaN rows (factuals without a counterfactual) are left out, as in F_j itself,
        so n is the number of factuals with counterfactuals.
    level : float, default 0.95
    fixed : bool ndarray of shape (n_features,), optional
        Features that cannot change (immutable): where they never changed, F_j = 0 by
        construction, not by chance, and the interval is [0, 0].
    continuity : see :func:`wilson_interval`

    Returns
    -------
    frequency_ci : ndarray of shape (n_features, 2)
        [low, high] of F_j; NaN when no factual has a counterfactual.
    rank_interval : ndarray of shape (n_features, 2)
        [best, worst] rank (:func:`rank_intervals`); NaN when F is undefined.
    """
    local = np.asarray(local, dtype=float)
    rows = local[~np.isnan(local).all(axis=1)]
    n_features = local.shape[1]
    if len(rows) == 0:
        return np.full((n_features, 2), np.nan), np.full((n_features, 2), np.nan)
    n = (~np.isnan(rows)).sum(axis=0)
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(rows, axis=0) if np.isnan(rows).any() else rows.mean(axis=0)
    return intervals_of_means(mean, n, level=level, fixed=fixed, continuity=continuity)


def intervals_of_means(mean: np.ndarray, n: np.ndarray, *, level: float = INTERVAL_LEVEL, fixed: np.ndarray | None = None,
                       continuity: float = CONTINUITY) -> tuple[np.ndarray, np.ndarray]:
    """:func:`frequency_intervals` from each F_j and the number n_j of f_j(i) behind it (what a run read in chunks
    keeps): the interval needs nothing else. NaN where n_j is 0."""
    mean = np.asarray(mean, dtype=float)
    ci = wilson_interval(mean, n, level=level, continuity=continuity)
    if fixed is not None:
        structural = np.asarray(fixed, dtype=bool) & (mean == 0)
        ci[structural] = 0.0
    return ci, rank_intervals(ci)


def pearson_interval(
    regional: np.ndarray, n: int, global_: np.ndarray, include: np.ndarray, *, level: float = INTERVAL_LEVEL
) -> tuple[float, float]:
    """Interval of Pearson r between a region's F and the global F, from the region's sampling error.

    r is a smooth function of the regional F over the included features, so to first order its
    error is u · (F̂ - F), with u the gradient of r: the mean over the region's n factuals of
    u · f(i). u sums to 0 (r ignores a shift of F), so with every f_j(i) in [0, 1], u · f(i) lies
    in [-M, M], M the sum of u's positive entries, and its variance is at most M² (Popoviciu):
    the bound Wilson's p(1 - p) is for one feature. The interval is r ± z·M/sqrt(n), cut to
    [-1, 1]; it needs no estimate of the spread from five factuals. The global F is held as given
    (it rests on far more factuals). ``benchmarks/bench_coverage.py`` measures its coverage.

    Parameters
    ----------
    regional : ndarray of shape (n_features,)
        The region's F_j.
    n : int
        Factuals with counterfactuals behind ``regional``.
    global_ : ndarray of shape (n_features,)
    include : bool ndarray of shape (n_features,)
        Features that take part (the mutable ones), as in :func:`flex_core.importance.compare_with_global`.

    Returns
    -------
    (low, high) : NaN, NaN when r itself is undefined (fewer than three features, either side
    constant) or fewer than two factuals have counterfactuals: there is no honest interval then.
    """
    regional, global_ = np.asarray(regional, dtype=float), np.asarray(global_, dtype=float)
    include = np.asarray(include, dtype=bool) & ~np.isnan(regional) & ~np.isnan(global_)
    nan = (float("nan"), float("nan"))
    if n < 2 or include.sum() < 3:
        return nan
    x, y = regional[include], global_[include]
    xc, yc = x - x.mean(), y - y.mean()
    x_norm, y_norm = np.linalg.norm(xc), np.linalg.norm(yc)
    if x_norm <= 1e-12 or y_norm <= 1e-12:
        return nan
    a, w = yc / y_norm, xc / x_norm
    r = float(a @ w)
    u = (a - r * w) / x_norm
    se = u[u > 0].sum() / np.sqrt(n)
    z = _z(level)
    return float(max(r - z * se, -1.0)), float(min(r + z * se, 1.0))


# -- the bootstrap, for the FLEX-SHAP agreement ------------------------------------------------
@lru_cache(maxsize=32)
def bootstrap_counts(n_rows: int, *, n_boot: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> np.ndarray:
    """How often each row is drawn in each resample, shape (n_boot, n_rows); each row of it sums to n_rows.

    The draws depend only on (n_rows, n_boot, seed), so they are made once and shared (read-only).
    """
    picks = np.random.default_rng(seed).integers(0, n_rows, size=(n_boot, n_rows))
    offsets = np.arange(n_boot)[:, None] * n_rows
    counts = np.bincount((picks + offsets).ravel(), minlength=n_boot * n_rows).reshape(n_boot, n_rows).astype(float)
    counts.setflags(write=False)
    return counts


def bootstrap_means(local: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Resampled means of ``local`` (n_rows, n_features) for draw counts (n_boot, n_rows): (n_boot, n_features)."""
    return counts @ local / max(local.shape[0], 1)

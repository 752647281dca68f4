"""Alternatives that differ: a counterfactual that only adds features to a sparser one of the same factual is no other way out.

On a learned forest a counterfactual {speed 57.0} is often joined by {speed 57.1, colour white}: the
added change "buys" a hair of the real one. Both are minimal (neither change of the second can be
reverted alone), yet the second is the first plus a passenger the model tolerates. The rule:

    B is dropped when some other valid counterfactual A of the same factual changes a strict subset of
    B's features, and on every feature A changes, B makes the same change up to the tolerance: the same
    level (categorical), or a change in the same direction whose size B reduces by less than
    ``tolerance`` x the feature's range (numbers and ordinal levels; a larger change counts as no reduction).

A real trade-off (a smaller rise in one feature bought with a change of another) reduces the shared
change by more than the tolerance and stays.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ALTERNATIVE_TOLERANCE", "not_alternatives"]

#: A shared change reduced by less than this share of the feature's range is the same change.
ALTERNATIVE_TOLERANCE = 0.02


def not_alternatives(rows: np.ndarray, factual: np.ndarray, spans: np.ndarray, ordered: np.ndarray,
                     tolerance: float = ALTERNATIVE_TOLERANCE) -> np.ndarray:
    """Which of one factual's valid counterfactuals are not another way out (see the module docstring).

    Parameters
    ----------
    rows : ndarray of shape (n, F)
        Distinct valid counterfactuals (codes) of ``factual`` (shape (F,)).
    spans : ndarray of shape (F,)
        Each feature's range (numbers) or number of levels - 1 (ordinal); unused for categorical ones.
    ordered : bool ndarray of shape (F,)
        Numbers and ordinal features (a change has a size); categorical ones compare levels.

    Returns
    -------
    drop : bool ndarray of shape (n,)
    """
    rows = np.asarray(rows, dtype=float)
    n = len(rows)
    drop = np.zeros(n, dtype=bool)
    if n < 2:
        return drop
    delta = rows - factual
    changed = delta != 0
    k = changed.sum(axis=1)
    # only a counterfactual with fewer changes (in a) can make one with more (in b) an alternative
    a, b = np.flatnonzero(k < k.max()), np.flatnonzero(k > k.min())
    if not len(a):
        return drop
    # subset[i, j]: a[i]'s features are a strict subset of b[j]'s.
    subset = (changed[a][:, None, :] <= changed[b][None, :, :]).all(axis=2) & (k[a][:, None] < k[b][None, :])
    size_a, size_b = np.abs(delta[a])[:, None, :], np.abs(delta[b])[None, :, :]
    same_side = np.sign(delta[a])[:, None, :] == np.sign(delta[b])[None, :, :]
    scale = np.where(np.nan_to_num(spans) > 0, np.nan_to_num(spans), 1.0)
    near = same_side & (size_a - size_b < tolerance * scale)
    same_level = rows[a][:, None, :] == rows[b][None, :, :]
    same = np.where(ordered, near, same_level) | ~changed[a][:, None, :]  # only the features A changes must match
    drop[b] = (subset & same.all(axis=2)).any(axis=0)
    return drop

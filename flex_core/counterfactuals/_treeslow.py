"""The ``tree`` generator's two-feature search in numpy, for the forms the compiled one does not read (XGBoost's
float32 sums, multi-class boosting): group by group, the profile's cells next to the threshold rescored by the model
or the form (:func:`settle_all`), then the Pareto-minimal pairs of changes (:func:`pareto`).
"""

from __future__ import annotations

import numpy as np

from ._treeform import TreeForm
from ._treegrid import FLOAT32_WINDOW, NEAR_THRESHOLD
from ._treeprofile import pair_profile, propagate

__all__ = ["MAX_PAIR_CANDIDATES", "settle_all", "slow_pairs"]

#: Two-feature profiles held at once (their cells next to the threshold are rescored together).
PAIR_CHUNK = 500
#: Candidate values per axis and side a two-feature trade-off is searched over (nearest first); more are cut and counted.
MAX_PAIR_CANDIDATES = 400


def _lookup(upper: np.ndarray, values: np.ndarray, numeric: bool) -> np.ndarray:
    """The cell of each value: (upper[i-1], upper[i]] for numbers, the level itself for levels."""
    if not numeric:
        return values.astype(np.int64)
    return np.minimum(np.searchsorted(upper, values, side="left"), len(upper) - 1)


def _representatives(upper: np.ndarray, numeric: bool) -> np.ndarray:
    """One value inside each cell: its upper end (the last, open cell: just above the previous end)."""
    if not numeric:
        return upper
    points = upper.copy()
    points[-1] = np.nextafter(upper[-2], np.inf) if len(upper) > 1 else 0.0
    return points


def settle_all(form: TreeForm, items, threshold: float, score=None) -> list[np.ndarray]:
    """``p`` of many profiles ``(p, rows_for, exact)`` with the cells next to the threshold scored exactly, in one
    walk of the trees (``rows_for(cell indices)``: a coded row inside each; ``exact``: cells already the model's
    value to the bit, skipped).

    ``score`` (default the form): what scores them. An XGBoost form (float32) is settled by the model itself
    within two float32 steps of the threshold, since its sigmoid may differ from XGBoost's by one.
    """
    window = FLOAT32_WINDOW if form.float32 else NEAR_THRESHOLD
    score = form if score is None else score
    near = [np.argwhere((np.abs(p - threshold) <= window) & (True if exact is None else ~exact))
            for p, _, exact in items]
    rows = [rows_for(cells) for (_, rows_for, _), cells in zip(items, near) if len(cells)]
    if not rows:
        return [p for p, _, _ in items]
    scores = score(np.concatenate(rows))
    out, pos = [], 0
    for (p, _, _), cells in zip(items, near):
        if len(cells):
            p = p.copy()
            p[tuple(cells.T)] = scores[pos: pos + len(cells)]
            pos += len(cells)
        out.append(p)
    return out


def _pair_rows(axes, a: int, b: int, f_row: np.ndarray, prof):
    points_a = _representatives(prof.upper_a, bool(axes.numeric[a]))
    points_b = _representatives(prof.upper_b, bool(axes.numeric[b]))

    def rows_for(cells):
        rows = np.repeat(f_row[None], len(cells), axis=0)
        rows[:, a], rows[:, b] = points_a[cells[:, 0]], points_b[cells[:, 1]]
        return rows

    return rows_for


def slow_pairs(form, axes, factuals, query, axes_of, per_query, single_best, stats, near) -> None:
    """Pair profiles group by group in numpy (:func:`pair_profile`), cells near the threshold rescored by the model."""
    threshold = axes.validity.threshold
    leaves = propagate(form, factuals, query, axes_of, near)
    order = np.argsort(leaves.group, kind="stable")
    bounds = np.searchsorted(leaves.group[order], np.arange(len(query) + 1))
    todo = np.arange(len(query))
    for chunk in np.array_split(todo, max(1, -(-len(todo) // PAIR_CHUNK))):
        profiles = []
        for g in chunk:
            sel = order[bounds[g]: bounds[g + 1]]
            a, b = int(axes_of[g, 0]), int(axes_of[g, 1])
            sub = type(leaves)(leaves.group[sel], leaves.leaf[sel], leaves.lo[sel], leaves.hi[sel], leaves.mask[sel])
            profiles.append(pair_profile(form, sub, (bool(axes.numeric[a]), bool(axes.numeric[b])),
                                         (int(axes.n_levels[a]), int(axes.n_levels[b]))))
        settled = settle_all(form, [(prof.p, _pair_rows(axes, int(axes_of[g, 0]), int(axes_of[g, 1]), factuals[query[g]], prof),
                                      prof.exact) for g, prof in zip(chunk, profiles)], threshold, axes.settle_with)
        for g, prof, p in zip(chunk, profiles, settled):
            prof.p = p
            q, a, b = int(query[g]), int(axes_of[g, 0]), int(axes_of[g, 1])
            stats["pairs_read"] += 1
            _pareto(axes, factuals[q], q, a, b, prof, threshold, per_query[q], single_best, stats)


def _axis_candidates(axes, j, f, upper, q, single_best, stats):
    values, side = axes.candidates(j, f, upper)
    # a change at least as large as a valid one-feature change on the same side is that one plus a passenger
    if axes.ordered[j]:
        limit = np.where(side > 0, single_best.get((q, j, 1.0), np.inf), single_best.get((q, j, -1.0), np.inf))
        keep = np.abs(values - f) < limit
    else:
        keep = ~np.isin(side, [s for (qq, jj, s) in single_best if qq == q and jj == j])
    values, side = values[keep], side[keep]
    if len(values) > 2 * MAX_PAIR_CANDIDATES:
        near = np.argsort(np.abs(values - f), kind="stable")[: 2 * MAX_PAIR_CANDIDATES]
        stats["pair_candidates_cut"] += len(values) - len(near)
        values, side = values[near], side[near]
    return values, side


def _pareto(axes, f_row, q, a, b, prof, threshold, out, single_best, stats) -> None:
    if not (prof.p < threshold).any():  # no cell is valid: no candidate can be
        return
    fa, fb = f_row[a], f_row[b]
    va, sa = _axis_candidates(axes, a, fa, prof.upper_a, q, single_best, stats)
    vb, sb = _axis_candidates(axes, b, fb, prof.upper_b, q, single_best, stats)
    if not len(va) or not len(vb):
        return
    na, nb = bool(axes.numeric[a]), bool(axes.numeric[b])
    ia, ib = _lookup(prof.upper_a, va, na), _lookup(prof.upper_b, vb, nb)
    ca, cb = _lookup(prof.upper_a, axes.corner(a, va, fa), na), _lookup(prof.upper_b, axes.corner(b, vb, fb), nb)
    valid = (prof.p[ia[:, None], ib[None, :]] < threshold) & (prof.p[ca[:, None], cb[None, :]] < threshold)
    if not valid.any():
        return
    # neither change valid alone (the factual's cell on the other axis)
    fa_cell, fb_cell = _lookup(prof.upper_a, np.array([fa]), na)[0], _lookup(prof.upper_b, np.array([fb]), nb)[0]
    alone_a = (prof.p[ia, fb_cell] < threshold) & (prof.p[ca, fb_cell] < threshold)
    alone_b = (prof.p[fa_cell, ib] < threshold) & (prof.p[fa_cell, cb] < threshold)
    valid &= ~alone_a[:, None] & ~alone_b[None, :]
    size_a, size_b = np.abs(va - fa), np.abs(vb - fb)
    for s_a in np.unique(sa):
        rows = np.flatnonzero(sa == s_a)
        rows = rows[np.argsort(size_a[rows], kind="stable")]
        for s_b in np.unique(sb):
            cols = np.flatnonzero(sb == s_b)
            cols = cols[np.argsort(size_b[cols], kind="stable")]
            grid = valid[np.ix_(rows, cols)]
            has = grid.any(axis=1)
            first = np.where(has, np.argmax(grid, axis=1), len(cols))
            # the staircase: a row is Pareto-minimal when it needs less of b than every smaller change of a
            keep = first < np.r_[len(cols), np.minimum.accumulate(first)[:-1]]
            for r, k in zip(rows[keep], cols[first[keep]]):
                row = f_row.copy()
                row[a], row[b] = va[r], vb[k]
                size = float(axes.size(a, va[[r]], fa)[0] + axes.size(b, vb[[k]], fb)[0])
                out.append((2, size, (a, b), row, float(prof.p[ia[r], ib[k]])))

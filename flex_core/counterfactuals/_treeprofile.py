"""Exact profiles of a tree ensemble: P(undesirable) as a function of one or two features of a factual.

Everything else held at the factual's values, each tree's leaves reachable when only the chosen
features vary are found by propagating intervals (numbers) and level sets (levels) down the
tree (:func:`propagate`: vectorised over factuals, feature groups and trees, never row by row).
The leaves' intervals, merged over every tree, cut each axis into cells on which the model's
score is constant: a profile is the cells' bounds and one P(undesirable) per cell, the exact
score (no grid of scored rows). Cells are left-open: a number cell is (lower, upper].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._treeform import MAX_LEVELS, TreeForm

__all__ = ["propagate", "Profile1", "single_profiles", "pair_profile", "Leaves"]


@dataclass
class Leaves:
    """Leaves reached per (group, tree): the group, the leaf, and per axis its interval and level set."""

    group: np.ndarray
    leaf: np.ndarray
    lo: np.ndarray  # (R, 2)
    hi: np.ndarray  # (R, 2)
    mask: np.ndarray  # (R, 2) int64 level bits


def propagate(form: TreeForm, factuals: np.ndarray, query: np.ndarray, axes: np.ndarray) -> Leaves:
    """The leaves reachable in every tree when only ``axes`` vary.

    Parameters
    ----------
    factuals : ndarray (Q, F)
    query : int ndarray (G,)
        Factual of each group.
    axes : int ndarray (G, 2)
        The one or two features a group varies (-1: none).
    """
    n_groups, n_trees = len(query), form.n_trees
    group = np.repeat(np.arange(n_groups), n_trees)
    node = np.tile(form.roots, n_groups)
    lo = np.full((len(group), 2), -np.inf)
    hi = np.full((len(group), 2), np.inf)
    mask = np.full((len(group), 2), (1 << MAX_LEVELS) - 1, dtype=np.int64)
    done: list[tuple] = []
    while len(group):
        feature = form.feature[node]
        leaf = feature < 0
        if leaf.any():
            done.append((group[leaf], node[leaf], lo[leaf], hi[leaf], mask[leaf]))
            keep = ~leaf
            group, node, lo, hi, mask, feature = group[keep], node[keep], lo[keep], hi[keep], mask[keep], feature[keep]
            if not len(group):
                break
        on = axes[group] == feature[:, None]  # (n, 2)
        fixed = ~on.any(axis=1)
        x = factuals[query[group], feature]
        go_left = form.go_left(node, x)
        # an axis: both sides that stay non-empty
        axis = np.argmax(on, axis=1)
        rows = np.arange(len(group))
        numeric = form.numeric[node]
        bound = form.bound[node]
        a_lo, a_hi, a_mask = lo[rows, axis], hi[rows, axis], mask[rows, axis]
        left_mask, right_mask = a_mask & form.mask[node], a_mask & ~form.mask[node]
        left_ok = np.where(numeric, a_lo < bound, left_mask != 0)
        right_ok = np.where(numeric, a_hi > bound, right_mask != 0)
        take_left = np.where(fixed, go_left, left_ok)
        take_right = np.where(fixed, ~go_left, right_ok)
        parts = []
        for take, child, side in ((take_left, form.left, 0), (take_right, form.right, 1)):
            idx = np.flatnonzero(take)
            n_lo, n_hi, n_mask = lo[idx].copy(), hi[idx].copy(), mask[idx].copy()
            moving = ~fixed[idx]
            r, a = np.flatnonzero(moving), axis[idx][moving]
            num = numeric[idx][moving]
            b = bound[idx][moving]
            if side == 0:
                n_hi[r, a] = np.where(num, np.minimum(n_hi[r, a], b), n_hi[r, a])
                n_mask[r, a] = np.where(num, n_mask[r, a], left_mask[idx][moving])
            else:
                n_lo[r, a] = np.where(num, np.maximum(n_lo[r, a], b), n_lo[r, a])
                n_mask[r, a] = np.where(num, n_mask[r, a], right_mask[idx][moving])
            parts.append((group[idx], child[node[idx]], n_lo, n_hi, n_mask))
        group, node, lo, hi, mask = (np.concatenate([p[k] for p in parts]) for k in range(5))
    return Leaves(*(np.concatenate([d[k] for d in done]) for k in range(5)))


@dataclass
class Profile1:
    """Single-feature profiles of many (factual, feature) groups, flattened.

    Group g's cells are ``start[g] <= c < start[g + 1]``; number cell c is (upper[c-1], upper[c]]
    (the first from -inf), a level cell c is level ``c - start[g]``. ``p[c]``: P(undesirable) on it.
    """

    start: np.ndarray
    upper: np.ndarray
    p: np.ndarray
    numeric: np.ndarray  # (G,) bool
    exact: np.ndarray  # per cell: P is the model's to the bit (whole-number leaves of a forest)


def single_profiles(form: TreeForm, factuals: np.ndarray, query: np.ndarray, feature: np.ndarray,
                    numeric: np.ndarray, n_levels: np.ndarray) -> Profile1:
    """The exact P(undesirable) of each factual ``query[g]`` as a function of ``feature[g]`` alone."""
    axes = np.column_stack([feature, np.full(len(feature), -1)])
    leaves = propagate(form, factuals, query, axes)
    value = _with_inexact(form, form.value[leaves.leaf])
    g, lo, hi, mask = leaves.group, leaves.lo[:, 0], leaves.hi[:, 0], leaves.mask[:, 0]
    n_groups = len(query)
    is_num = numeric[g]
    # numbers: the cells between every bound reached, a difference array over them
    vals = np.concatenate([lo[is_num], hi[is_num]])
    grp = np.concatenate([g[is_num], g[is_num]])
    order = np.lexsort((vals, grp))
    sv, sg = vals[order], grp[order]
    new = np.ones(len(sv), dtype=bool)
    new[1:] = (sv[1:] != sv[:-1]) | (sg[1:] != sg[:-1])
    uid_sorted = np.cumsum(new) - 1
    uid = np.empty(len(vals), dtype=np.int64)
    uid[order] = uid_sorted
    n_num = int(is_num.sum())
    bounds, bound_group = sv[new], sg[new]
    diff = np.zeros((len(bounds) + 1, value.shape[1]))
    np.add.at(diff, uid[:n_num], value[is_num])
    np.subtract.at(diff, uid[n_num:], value[is_num])
    num_raw = np.cumsum(diff, axis=0)[:-1]
    # each number group's cells: every bound but its last (+inf) starts one; the cell's upper end is the next bound
    starts_cell = np.ones(len(bounds), dtype=bool)
    starts_cell[:-1] = bound_group[1:] == bound_group[:-1]
    starts_cell[-1:] = False
    cell_upper = np.r_[bounds[1:], np.inf][starts_cell] if len(bounds) else np.empty(0)
    cell_group = bound_group[starts_cell]
    cell_raw = num_raw[starts_cell]
    # levels: one cell per level
    lev_groups = np.flatnonzero(~numeric)
    levels = n_levels[lev_groups]
    lev_start = np.r_[0, np.cumsum(levels)]
    lev_raw = np.zeros((int(lev_start[-1]), value.shape[1]))
    position = np.full(n_groups, -1)
    position[lev_groups] = np.arange(len(lev_groups))
    cat = ~is_num
    for level in range(int(levels.max()) if len(levels) else 0):
        hit = cat & ((mask >> level) & 1 == 1) & (level < n_levels[g])
        pos = position[g[hit]]
        np.add.at(lev_raw, lev_start[pos] + level, value[hit])
    # one flat layout: groups in order
    counts = np.zeros(n_groups, dtype=np.int64)
    np.add.at(counts, cell_group, 1)
    counts[lev_groups] = levels
    start = np.r_[0, np.cumsum(counts)]
    upper = np.full(int(start[-1]), np.nan)
    raw = np.zeros((int(start[-1]), value.shape[1]))
    num_pos = start[cell_group] + _rank_within(cell_group)
    upper[num_pos] = cell_upper
    raw[num_pos] = cell_raw
    for k, gg in enumerate(lev_groups):
        raw[start[gg]: start[gg + 1]] = lev_raw[lev_start[k]: lev_start[k + 1]]
        upper[start[gg]: start[gg + 1]] = np.arange(levels[k])
    p, exact = _combine(form, raw)
    return Profile1(start=start, upper=upper, p=p, numeric=numeric.copy(), exact=exact)


def _rank_within(sorted_groups: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... within each run of equal values of a sorted array."""
    if not len(sorted_groups):
        return np.zeros(0, dtype=np.int64)
    first = np.r_[True, sorted_groups[1:] != sorted_groups[:-1]]
    index = np.arange(len(sorted_groups))
    return index - np.maximum.accumulate(np.where(first, index, 0))


@dataclass
class Profile2:
    """A two-feature profile: per axis the cells' upper ends (levels: level codes), and P per cell (na, nb)."""

    upper_a: np.ndarray
    upper_b: np.ndarray
    p: np.ndarray
    exact: np.ndarray


def pair_profile(form: TreeForm, leaves: Leaves, numeric: tuple[bool, bool], n_levels: tuple[int, int]) -> Profile2:
    """One group's two-feature profile from its reached leaves (:func:`propagate` with two axes)."""
    value = _with_inexact(form, form.value[leaves.leaf])
    spans: list[tuple] = []
    uppers = []
    for axis in (0, 1):
        if numeric[axis]:
            bounds = np.unique(np.r_[leaves.lo[:, axis], leaves.hi[:, axis]])  # includes -inf and +inf
            s = np.searchsorted(bounds, leaves.lo[:, axis])
            e = np.searchsorted(bounds, leaves.hi[:, axis])
            spans.append((s, e, None))
            uppers.append(bounds[1:])
        else:
            spans.append((None, None, leaves.mask[:, axis]))
            uppers.append(np.arange(n_levels[axis], dtype=float))
    na, nb = len(uppers[0]), len(uppers[1])
    diff = np.zeros((na + 1, nb + 1, value.shape[1]))
    rows_a = _axis_rows(spans[0], n_levels[0])
    rows_b = _axis_rows(spans[1], n_levels[1])
    # expand level sets into single-level records, then a 2-d difference array
    idx_a, s_a, e_a = rows_a
    idx_b, s_b, e_b = rows_b
    both = _join(idx_a, idx_b)
    ia, ib = both
    r = idx_a[ia]
    v = value[r]
    for sa_, sb_, sign in ((s_a[ia], s_b[ib], 1.0), (e_a[ia], s_b[ib], -1.0), (s_a[ia], e_b[ib], -1.0), (e_a[ia], e_b[ib], 1.0)):
        np.add.at(diff, (sa_, sb_), sign * v)
    raw = np.cumsum(np.cumsum(diff, axis=0), axis=1)[:na, :nb]
    p, exact = _combine(form, raw)
    return Profile2(upper_a=uppers[0], upper_b=uppers[1], p=p, exact=exact)


def _with_inexact(form: TreeForm, value: np.ndarray) -> np.ndarray:
    """Leaf values split in two: whole-number leaves of a forest (0 or 1), the other leaves, and a count of the latter.

    Whole numbers sum exactly in any order, so a forest cell reached by whole-number leaves only has the
    model's P to the bit; a running sum over the others (cells before it) may leave a last-bit residue, so
    those are summed apart and ignored where no such leaf covers the cell (see ``_tree._settle``).
    """
    whole = (value == np.round(value)).all(axis=1) if form.link == "mean" else np.zeros(len(value), dtype=bool)
    return np.column_stack([value * whole[:, None], value * ~whole[:, None], (~whole).astype(float)])


def _combine(form: TreeForm, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(undesirable), exact) per cell from the split sums of :func:`_with_inexact`."""
    k = (raw.shape[-1] - 1) // 2
    exact = raw[..., -1] < 0.5
    total = np.where(exact[..., None], raw[..., :k], raw[..., :k] + raw[..., k: 2 * k])
    return form.p_undesirable_raw(total), exact if form.link == "mean" else np.zeros_like(exact)


def _axis_rows(span, n_levels: int):
    """(record index, first cell, end cell) per record and axis; level sets expand to one row per level."""
    s, e, mask = span
    if mask is None:
        return np.arange(len(s)), s, e
    records, levels = [], []
    for level in range(n_levels):
        hit = np.flatnonzero((mask >> level) & 1 == 1)
        records.append(hit)
        levels.append(np.full(len(hit), level))
    rec = np.concatenate(records)
    lev = np.concatenate(levels)
    order = np.argsort(rec, kind="stable")
    return rec[order], lev[order], lev[order] + 1


def _join(rec_a: np.ndarray, rec_b: np.ndarray):
    """Pairs of rows (i, j) with rec_a[i] == rec_b[j] (both sorted by record)."""
    n = int(max(rec_a.max(initial=-1), rec_b.max(initial=-1))) + 1
    count_b = np.bincount(rec_b, minlength=n)
    start_b = np.r_[0, np.cumsum(count_b)]
    reps = count_b[rec_a]
    ia = np.repeat(np.arange(len(rec_a)), reps)
    offset = np.arange(len(ia)) - np.repeat(np.cumsum(reps) - reps, reps)
    ib = start_b[rec_a[ia]] + offset
    return ia, ib

"""Exact profiles of a tree ensemble: P(undesirable) as a function of one or two features of a factual.

Everything else held at the factual's values, each tree's leaves reachable when only the chosen
features vary are read from the leaves' boxes (:func:`leaf_boxes`: per leaf and feature an interval
or a level set): a factual reaches a leaf by changing exactly the features on which it is outside
the box (:func:`near_leaves`, all factuals against all leaves at once, never row by row).
The leaves' intervals, merged over every tree, cut each axis into cells on which the model's
score is constant: a profile is the cells' bounds and one P(undesirable) per cell, the exact
score (no grid of scored rows). Cells are left-open: a number cell is (lower, upper].
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ._treeform import MAX_LEVELS, TreeForm

__all__ = ["propagate", "near_leaves", "near_rows", "leaf_boxes", "LeafBoxes", "Profile1", "single_profiles", "pair_profile", "Leaves"]


@dataclass
class Leaves:
    """Leaves reached per (group, tree): the group, the leaf, and per axis its interval and level set."""

    group: np.ndarray
    leaf: np.ndarray
    lo: np.ndarray  # (R, 2)
    hi: np.ndarray  # (R, 2)
    mask: np.ndarray  # (R, 2) int64 level bits


@dataclass(frozen=True)
class LeafBoxes:
    """Every leaf of a form as a box over the features: the leaf is reached by exactly the rows inside it.

    A number x is inside when ``lo < x <= hi``, a level when its bit is in ``mask``, a missing value
    when every split on that feature along the path sends missing values the path's way (``nan_ok``).
    ``empty``: no value of the feature reaches the leaf (the leaf is never reached while it varies).
    """

    leaf: np.ndarray  # (L,) node ids
    lo: np.ndarray  # (L, F)
    hi: np.ndarray  # (L, F)
    mask: np.ndarray  # (L, F) int64 level bits
    nan_ok: np.ndarray  # (L, F) bool
    empty: np.ndarray  # (L, F) bool


_BOXES: weakref.WeakKeyDictionary[TreeForm, LeafBoxes] = weakref.WeakKeyDictionary()
#: Booleans (factuals x leaves x features) compared at once when violations are counted.
VIOLATION_BLOCK = 8_000_000


def leaf_boxes(form: TreeForm, n_features: int) -> LeafBoxes:
    """The leaf boxes of ``form`` (one walk of all trees, kept per form)."""
    boxes = _BOXES.get(form)
    if boxes is not None and boxes.lo.shape[1] == n_features:
        return boxes
    node = form.roots.copy()
    n = len(node)
    lo, hi = np.full((n, n_features), -np.inf), np.full((n, n_features), np.inf)
    mask = np.full((n, n_features), (1 << MAX_LEVELS) - 1, dtype=np.int64)
    nan_ok = np.ones((n, n_features), dtype=bool)
    done: list[tuple] = []
    while len(node):
        leaf = form.feature[node] < 0
        done.append((node[leaf], lo[leaf], hi[leaf], mask[leaf], nan_ok[leaf]))
        node, lo, hi, mask, nan_ok = node[~leaf], lo[~leaf], hi[~leaf], mask[~leaf], nan_ok[~leaf]
        rows, j = np.arange(len(node)), form.feature[node]
        numeric, bound, split = form.numeric[node], form.bound[node], form.mask[node]
        parts = []
        for side, child in ((0, form.left), (1, form.right)):
            c_lo, c_hi, c_mask, c_nan = lo.copy(), hi.copy(), mask.copy(), nan_ok.copy()
            if side == 0:
                c_hi[rows, j] = np.where(numeric, np.minimum(hi[rows, j], bound), hi[rows, j])
                c_mask[rows, j] = np.where(numeric, mask[rows, j], mask[rows, j] & split)
                c_nan[rows, j] &= form.nan_left[node]
            else:
                c_lo[rows, j] = np.where(numeric, np.maximum(lo[rows, j], bound), lo[rows, j])
                c_mask[rows, j] = np.where(numeric, mask[rows, j], mask[rows, j] & ~split)
                c_nan[rows, j] &= ~form.nan_left[node]
            parts.append((child[node], c_lo, c_hi, c_mask, c_nan))
        node, lo, hi, mask, nan_ok = (np.concatenate([p[k] for p in parts]) for k in range(5))
    leaf, lo, hi, mask, nan_ok = (np.concatenate([d[k] for d in done]) for k in range(5))
    boxes = LeafBoxes(leaf=leaf, lo=lo, hi=hi, mask=mask, nan_ok=nan_ok, empty=(lo >= hi) | (mask == 0))
    _BOXES[form] = boxes
    return boxes


def _near_leaves(boxes: LeafBoxes, x: np.ndarray):
    """(factual, leaf, first, second violated feature or -1) for every leaf outside at most two features of a factual.

    A factual row reaches a leaf with some features changed iff it is inside the leaf's box on all others.
    """
    n_leaves, n_features = boxes.lo.shape
    step = max(1, VIOLATION_BLOCK // max(1, n_leaves * n_features))
    full = (1 << MAX_LEVELS) - 1
    numbers = np.asarray(((boxes.lo > -np.inf) | (boxes.hi < np.inf)).any(axis=0), dtype=bool)
    levels = np.asarray((boxes.mask != full).any(axis=0), dtype=bool)
    tested = np.flatnonzero(numbers | levels | (~boxes.nan_ok).any(axis=0))  # features no leaf constrains are skipped
    # per level feature and leaf, the levels inside as booleans (L, 64)
    bits: dict[int, np.ndarray] = {
        int(j): np.unpackbits(np.ascontiguousarray(boxes.mask[:, j]).astype("<i8").view(np.uint8).reshape(n_leaves, 8),
                              axis=1, bitorder="little").astype(bool)
        for j in np.flatnonzero(levels)}
    out: list[tuple] = []
    for s in range(0, len(x), step):
        xs = x[s: s + step]
        outside = np.zeros((n_features, len(xs), n_leaves), dtype=bool)
        for j in tested:
            col = np.asarray(xs[:, j], dtype=float)
            missing = np.isnan(col)
            inside = np.ones((len(xs), n_leaves), dtype=bool)
            if numbers[j]:
                inside &= (col[:, None] > boxes.lo[:, j]) & (col[:, None] <= boxes.hi[:, j])
            if levels[j]:
                level = np.where(missing | (col < 0) | (col > MAX_LEVELS), 0, np.nan_to_num(col)).astype(np.int64)
                inside &= bits[int(j)][:, level].T
            if missing.any():
                inside[missing] = boxes.nan_ok[:, j]
            outside[j] = ~inside
        count = outside.sum(axis=0)
        q, leaf = np.nonzero(count <= 2)
        v = outside[:, q, leaf].T
        c = count[q, leaf]
        first = np.where(c >= 1, np.argmax(v, axis=1), -1)
        second = np.where(c == 2, n_features - 1 - np.argmax(v[:, ::-1], axis=1), -1)
        out.append((q + s, leaf, first, second))
    return tuple(np.concatenate([o[k] for o in out]) for k in range(4))


def near_leaves(form: TreeForm, factuals: np.ndarray):
    """:func:`_near_leaves` of every factual row (read once, handed to :func:`propagate` and :func:`lowest_pair_totals`)."""
    return _near_leaves(leaf_boxes(form, factuals.shape[1]), factuals)


def near_rows(near, rows: np.ndarray):
    """The records of ``near`` (:func:`near_leaves`) for factual ``rows``, renumbered 0..len(rows)-1."""
    position = np.full(int(max(near[0].max(initial=-1), rows.max(initial=-1))) + 1, -1)
    position[rows] = np.arange(len(rows))
    q = position[near[0]]
    keep = q >= 0
    return q[keep], near[1][keep], near[2][keep], near[3][keep]


def _match(rec_key: np.ndarray, grp_key: np.ndarray):
    """Every (record, group) with equal keys."""
    order = np.argsort(grp_key, kind="stable")
    sorted_keys = grp_key[order]
    left = np.searchsorted(sorted_keys, rec_key, side="left")
    count = np.searchsorted(sorted_keys, rec_key, side="right") - left
    rec = np.repeat(np.arange(len(rec_key)), count)
    offset = np.arange(len(rec)) - np.repeat(np.cumsum(count) - count, count)
    return rec, order[left[rec] + offset]


def propagate(form: TreeForm, factuals: np.ndarray, query: np.ndarray, axes: np.ndarray, near=None) -> Leaves:
    """The leaves reachable in every tree when only ``axes`` vary.

    Read from the leaf boxes (:func:`leaf_boxes`): a group's leaves are those whose box the factual
    leaves on no feature but the group's axes (none, one or both), and whose box is not empty on them.

    Parameters
    ----------
    factuals : ndarray (Q, F)
    query : int ndarray (G,)
        Factual of each group.
    axes : int ndarray (G, 2)
        The one or two features a group varies (-1: none).
    near : tuple, optional
        :func:`near_leaves` of ``factuals``, if already read.
    """
    n_features = factuals.shape[1]
    boxes = leaf_boxes(form, n_features)
    used, q_of = np.unique(query, return_inverse=True)
    rq, rl, first, second = _near_leaves(boxes, factuals[used]) if near is None else near_rows(near, used)
    width = n_features + 1
    a, b = axes[:, 0], axes[:, 1]
    lo_ax, hi_ax = np.minimum(a, b), np.maximum(a, b)
    key = (q_of * width + lo_ax + 1) * width + hi_ax + 1  # (factual, smaller axis, larger axis)
    rec_key = (rq * width + np.minimum(first, second) + 1) * width + np.maximum(first, second) + 1
    one = second < 0
    zero = first < 0
    # none violated: every group of the factual; one: every group with it as an axis; two: the group with both
    matches = [_match(rq[zero], q_of), _match((rq * width + first + 1)[one & ~zero], np.r_[q_of * width + a + 1, q_of * width + b + 1]),
               _match(rec_key[~one], key)]
    ids = [np.flatnonzero(zero), np.flatnonzero(one & ~zero), np.flatnonzero(~one)]
    n_groups = len(query)
    rec = np.concatenate([ids[k][matches[k][0]] for k in range(3)])
    grp = np.concatenate([matches[0][1], matches[1][1] % n_groups, matches[2][1]])
    leaf = rl[rec]
    axis = np.column_stack([a[grp], b[grp]])
    has = axis >= 0
    ax = np.maximum(axis, 0)
    ok = ~(boxes.empty[leaf[:, None], ax] & has).any(axis=1)
    grp, leaf, axis, has, ax = grp[ok], leaf[ok], axis[ok], has[ok], ax[ok]
    lo = np.where(has, boxes.lo[leaf[:, None], ax], -np.inf)
    hi = np.where(has, boxes.hi[leaf[:, None], ax], np.inf)
    mask = np.where(has, boxes.mask[leaf[:, None], ax], (1 << MAX_LEVELS) - 1)
    return Leaves(grp, boxes.leaf[leaf], lo, hi, mask)


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
                    numeric: np.ndarray, n_levels: np.ndarray, near=None) -> Profile1:
    """The exact P(undesirable) of each factual ``query[g]`` as a function of ``feature[g]`` alone."""
    axes = np.column_stack([feature, np.full(len(feature), -1)])
    leaves = propagate(form, factuals, query, axes, near)
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


def lowest_pair_totals(form: TreeForm, factuals: np.ndarray, score: np.ndarray, near=None) -> np.ndarray:
    """Per factual and pair of features (a, b), the sum over trees of the lowest ``score`` (per node) of a leaf
    reachable by changing a and b only, shape (Q, F, F): a bound read before any pair profile is built.

    Leaves whose box is empty on a or b are counted too (the bound only gets looser). ``near``: :func:`near_leaves`
    of ``factuals``, if already read.
    """
    n_q, n_features = factuals.shape
    boxes = leaf_boxes(form, n_features)
    tree_of = np.searchsorted(form.roots, boxes.leaf, side="right") - 1
    leaf_score = score[boxes.leaf]
    totals = np.empty((n_q, n_features, n_features))
    n_t = form.n_trees
    step = max(1, VIOLATION_BLOCK // max(1, n_t * n_features * n_features))
    for s in range(0, n_q, step):
        block = np.arange(s, min(s + step, n_q))
        rq, rl, first, second = _near_leaves(boxes, factuals[block]) if near is None else near_rows(near, block)
        n = int(min(step, n_q - s))
        t, v = tree_of[rl], leaf_score[rl]
        best0 = np.full((n, n_t), np.inf)
        best1 = np.full((n, n_t, n_features), np.inf)
        best2 = np.full((n, n_t, n_features, n_features), np.inf)
        zero, one = first < 0, (first >= 0) & (second < 0)
        two = second >= 0
        np.minimum.at(best0, (rq[zero], t[zero]), v[zero])
        np.minimum.at(best1, (rq[one], t[one], first[one]), v[one])
        np.minimum.at(best2, (rq[two], t[two], first[two], second[two]), v[two])
        best2 = np.minimum(best2, best2.transpose(0, 1, 3, 2))
        best = np.minimum(np.minimum(best2, best1[:, :, :, None]), best1[:, :, None, :])
        totals[s: s + n] = np.minimum(best, best0[:, :, None, None]).sum(axis=1)
    return totals

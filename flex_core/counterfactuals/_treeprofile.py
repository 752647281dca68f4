"""Leaf boxes of a tree ensemble, and its exact two-feature profiles in numpy.

Every leaf is a box over the features (:func:`leaf_boxes`: per leaf and feature an interval or a
level set): a factual reaches a leaf by changing exactly the features on which it is outside the
box (the compiled walk of ``_treegrid.near_walk`` lists those leaves). The leaves' intervals, merged
over every tree, cut each axis into cells on which the model's score is constant: a profile is the
cells' bounds and one P(undesirable) per cell, the exact score (no grid of scored rows). Cells are
left-open: a number cell is (lower, upper]. Two-feature profiles here (:func:`pair_profile`) serve
the models the compiled pair search does not read (multi-class boosting, XGBoost's float32 sums).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ._treeform import MAX_LEVELS, TreeForm
from ._treekernel import lowest_pair_sums
from ._treewalk import leaf_box_arrays

__all__ = ["lowest_p", "lowest_band_score", "propagate", "near_rows", "leaf_boxes", "LeafBoxes", "pair_profile", "Leaves", "with_inexact", "combine",
           "lowest_pair_totals"]


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


def leaf_boxes(form: TreeForm, n_features: int) -> LeafBoxes:
    """The leaf boxes of ``form``, leaves in node order (one compiled walk of all trees, kept per form)."""
    boxes = _BOXES.get(form)
    if boxes is not None and boxes.lo.shape[1] == n_features:
        return boxes
    leaf, lo, hi, mask, nan_ok = leaf_box_arrays(form.roots, *form.nodes, n_features, form.depth, (1 << MAX_LEVELS) - 1)
    boxes = LeafBoxes(leaf=leaf, lo=lo, hi=hi, mask=mask, nan_ok=nan_ok, empty=(lo >= hi) | (mask == 0))
    _BOXES[form] = boxes
    return boxes


def near_rows(near, rows: np.ndarray):
    """The walk records ``near`` (``_treegrid.near_walk``) of factual ``rows``, renumbered 0..len(rows)-1."""
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


def propagate(form: TreeForm, factuals: np.ndarray, query: np.ndarray, axes: np.ndarray, near) -> Leaves:
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
    near : tuple
        The walk records of ``factuals`` (``_treegrid.near_walk``, at most two changes, numbered as in ``factuals``).
    """
    n_features = factuals.shape[1]
    boxes = leaf_boxes(form, n_features)
    used, q_of = np.unique(query, return_inverse=True)
    rq, rl, first, second = near_rows(near, used)
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
class Profile2:
    """A two-feature profile: per axis the cells' upper ends (levels: level codes), and P per cell (na, nb)."""

    upper_a: np.ndarray
    upper_b: np.ndarray
    p: np.ndarray
    exact: np.ndarray


def pair_profile(form: TreeForm, leaves: Leaves, numeric: tuple[bool, bool], n_levels: tuple[int, int]) -> Profile2:
    """One group's two-feature profile from its reached leaves (:func:`propagate` with two axes)."""
    value = with_inexact(form, form.value[leaves.leaf])
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
    p, exact = combine(form, raw)
    return Profile2(upper_a=uppers[0], upper_b=uppers[1], p=p, exact=exact)


def with_inexact(form: TreeForm, value: np.ndarray) -> np.ndarray:
    """Leaf values split in two: whole-number leaves of a forest (0 or 1), the other leaves, and a count of the latter.

    Whole numbers sum exactly in any order, so a forest cell reached by whole-number leaves only has the
    model's P to the bit; a running sum over the others (cells before it) may leave a last-bit residue, so
    those are summed apart and ignored where no such leaf covers the cell (see ``_treeslow.settle_all``).
    """
    whole = (value == np.round(value)).all(axis=1) if form.link == "mean" else np.zeros(len(value), dtype=bool)
    return np.column_stack([value * whole[:, None], value * ~whole[:, None], (~whole).astype(float)])


def combine(form: TreeForm, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P(undesirable), exact) per cell from the split sums of :func:`with_inexact`.

    An XGBoost form (float32) links a margin that holds its base score: the base is added here (the sum,
    done in float64, may then differ from XGBoost's float32 one by a few steps: cells that close to the
    threshold are rescored by the model).
    """
    k = (raw.shape[-1] - 1) // 2
    exact = raw[..., -1] < 0.5
    total = np.where(exact[..., None], raw[..., :k], raw[..., :k] + raw[..., k: 2 * k])
    if form.float32:
        total = total + form.base
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


def lowest_pair_totals(form: TreeForm, factuals: np.ndarray, score: np.ndarray, near) -> np.ndarray:
    """Per factual and pair of features (a, b), the sum over trees of the lowest ``score`` (per node) of a leaf
    reachable by changing a and b only, shape (Q, F, F): a bound read before any pair profile is built.

    ``near``: the walk records of ``factuals`` (``_treegrid.near_walk``), numbered as in ``factuals``.
    """
    n_q, n_features = factuals.shape
    boxes = leaf_boxes(form, n_features)
    tree_of = np.searchsorted(form.roots, boxes.leaf, side="right") - 1
    rq, rl, first, second = near
    return lowest_pair_sums(n_q, form.n_trees, n_features, rq, tree_of[rl], first, second,
                            np.ascontiguousarray(score[boxes.leaf][rl], dtype=float))


def lowest_p(form: TreeForm, factuals: np.ndarray, short: np.ndarray, pairs: np.ndarray, near) -> np.ndarray:
    """Per (short factual, pair), a lower bound on P(undesirable) anywhere on the pair's two axes: the sum of each
    tree's most favourable leaf reachable by changing the pair only (:func:`lowest_pair_totals`), linked.

    Exact bound for a forest (a mean) and binary boosting (a monotone link); -inf (no bound) for softmax. A
    regressor's band: :func:`lowest_band_score`.
    """
    n_groups = len(short) * len(pairs)
    if form.link in ("band", "band-mean"):
        return lowest_band_score(form, factuals, short, pairs, near)
    if form.link not in ("mean", "sigmoid") or (form.link == "sigmoid" and form.undesired not in ((0,), (1,))):
        return np.full(n_groups, -np.inf)
    if form.link == "mean":
        score = form.value[:, list(form.undesired)].sum(axis=1)
    else:  # P(class 1) grows with the raw score: the lowest raw for class 1, the highest for class 0
        score = form.value[:, 0] * (1.0 if form.undesired == (1,) else -1.0)
    totals = lowest_pair_totals(form, factuals[short], score, near_rows(near, short))
    total = totals[:, pairs[:, 0], pairs[:, 1]].reshape(-1)
    if form.link == "mean":
        return total / form.n_trees
    raw = form.base[0] + (total if form.undesired == (1,) else -total)
    p = 1.0 / (1.0 + np.exp(-raw))
    return p if form.undesired == (1,) else 1.0 - p

def lowest_band_score(form: TreeForm, factuals: np.ndarray, short: np.ndarray, pairs: np.ndarray, near) -> np.ndarray:
    """Per (short factual, pair), a lower bound on a regressor's off-band score on the pair's two axes.

    Every prediction reachable there lies between the sums of each tree's lowest and highest reachable leaf
    (the prediction rises with the sum: a mean, or a base plus the sum). The score rises with the distance outside
    the desired band, which is convex in the prediction and smallest at the band's centre (at the lowest prediction
    for "above", the highest for "below"): its lowest over that interval is its value at the centre clipped to it.
    """
    value = form.value[:, 0]
    rows = near_rows(near, short)
    low = lowest_pair_totals(form, factuals[short], value, rows)[:, pairs[:, 0], pairs[:, 1]].reshape(-1)
    high = -lowest_pair_totals(form, factuals[short], -value, rows)[:, pairs[:, 0], pairs[:, 1]].reshape(-1)

    def prediction(total):
        return total / form.n_trees if form.link == "band-mean" else total + form.base[0]

    band = form.band
    if band.above is not None and band.below is not None:
        centre = (band.above + band.below) / 2
    else:
        centre = -np.inf if band.below is None else np.inf
    return band.score(np.clip(centre, prediction(low), prediction(high)), form.band_scale)

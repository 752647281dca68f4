"""Each feature's grid of split bounds, and every factual's exact one-feature profiles on it (issue 33).

A number feature's grid is the sorted distinct bounds of the form's splits on it: between two bounds no
tree can tell values apart, so the model's score as that one feature moves is constant on each cell.
Candidate values (where a cell starts, plus the validity rule's neighbourhood step) depend on the grid
and the step only, so they are read once per form and rule; each factual then only looks up its own
profile at them. The compiled walks are in :mod:`._treewalk`, the compiled profiles in :mod:`._treekernel`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ._treeform import TreeForm
from ._treekernel import single_sums
from ._treeprofile import LeafBoxes, combine, leaf_boxes, with_inexact
from ._treewalk import walk_near

__all__ = ["Grids", "grids", "in_order", "near_walk", "walk_reached", "single_grid_profiles", "settle_singles", "single_counterfactuals",
           "number_candidates", "past", "cell_points", "NEAR_THRESHOLD", "FLOAT32_WINDOW", "RuleCheck"]

#: Profile values this close to the threshold are rescored tree by tree in the model's own order.
NEAR_THRESHOLD = 1e-9
#: The same for XGBoost, which sums its trees in float32: a profile summed in float64 may differ from its
#: probability by a few float32 steps of the margin per tree (100 trees of margin 5: under 1e-5), so cells
#: this close to the threshold are rescored by the model itself.
FLOAT32_WINDOW = 1e-4


@dataclass(frozen=True, eq=False)
class Grids:
    """Per feature its grid (numbers) or levels, and the leaf boxes as cell ranges.

    Attributes
    ----------
    grid : list of ndarray
        Sorted distinct split bounds of each number feature (empty for level features).
    n_cells, offset : int ndarray
        Cells per feature; feature j's first cell in a flat layout (one spare cell after a number feature).
    box_lo, box_hi : int ndarray (L, F)
        A leaf's cells on a number feature: ``box_lo..box_hi`` (inclusive).
    box_of : int ndarray (N,)
        The row of a leaf node in the box arrays (-1 for split nodes).
    weights : ndarray (L, 2K+1)
        The leaves' values split into whole, other and a count of the other.
    """

    boxes: LeafBoxes
    is_number: np.ndarray
    grid: list
    n_cells: np.ndarray
    offset: np.ndarray
    box_lo: np.ndarray
    box_hi: np.ndarray
    box_of: np.ndarray
    weights: np.ndarray


_GRIDS: weakref.WeakKeyDictionary[TreeForm, dict] = weakref.WeakKeyDictionary()


def grids(form: TreeForm, is_number: np.ndarray, n_levels: np.ndarray) -> Grids:
    """The grids of ``form`` for features of these kinds (kept per form)."""
    key = (tuple(bool(v) for v in is_number), tuple(int(v) for v in n_levels))
    per_form = _GRIDS.setdefault(form, {})
    if key in per_form:
        return per_form[key]
    n_features = len(is_number)
    boxes = leaf_boxes(form, n_features)
    split = form.feature >= 0
    grid, n_cells = [], np.zeros(n_features, dtype=np.int64)
    box_lo = np.zeros(boxes.lo.shape, dtype=np.int64)
    box_hi = np.zeros(boxes.lo.shape, dtype=np.int64)
    for j in range(n_features):
        if not is_number[j]:
            grid.append(np.empty(0))
            n_cells[j] = n_levels[j]
            continue
        g = np.unique(form.bound[split & (form.feature == j) & form.numeric])
        grid.append(g)
        n_cells[j] = len(g) + 1
        box_lo[:, j] = np.searchsorted(g, boxes.lo[:, j], side="right")  # lo = g[i] -> cell i + 1; -inf -> 0
        box_hi[:, j] = np.searchsorted(g, boxes.hi[:, j], side="left")  # hi = g[i] -> cell i; +inf -> len(g)
    offset = np.r_[0, np.cumsum(n_cells + is_number.astype(np.int64))].astype(np.int64)
    box_of = np.full(len(form.feature), -1, dtype=np.int64)
    box_of[boxes.leaf] = np.arange(len(boxes.leaf))
    out = Grids(boxes=boxes, is_number=np.asarray(is_number, dtype=bool), grid=grid, n_cells=n_cells, offset=offset,
                box_lo=box_lo, box_hi=box_hi, box_of=box_of, weights=with_inexact(form, form.value[boxes.leaf]))
    per_form[key] = out
    return out


def near_walk(form: TreeForm, g: Grids, factuals: np.ndarray, vary: np.ndarray, max_changes: int):
    """(factual, box row, first, second changed feature or -1) for every leaf each factual reaches by changing
    at most ``max_changes`` features that may vary; leaves whose box is empty on a changed feature are left out."""
    q, leaf, a, b = walk_near(np.ascontiguousarray(factuals, dtype=float), form.roots, *form.nodes,
                              np.asarray(vary, dtype=np.bool_), int(max_changes), int(form.depth))
    box = g.box_of[leaf]
    empty = g.boxes.empty
    keep = ~((a >= 0) & empty[box, np.maximum(a, 0)]) & ~((b >= 0) & empty[box, np.maximum(b, 0)])
    return q[keep], box[keep], a[keep], b[keep]


def walk_reached(form: TreeForm, factuals: np.ndarray, vary: np.ndarray, max_changes: int) -> int:
    """How many leaves the compiled walk of :func:`near_walk` reaches (before dropping those empty on a change)."""
    q, _, _, _ = walk_near(np.ascontiguousarray(factuals, dtype=float), form.roots, *form.nodes,
                           np.asarray(vary, dtype=np.bool_), int(max_changes), int(form.depth))
    return len(q)


@dataclass
class GridProfiles:
    """P(undesirable) per factual and cell of every varying feature: ``p[:, offset[j]: offset[j] + n_cells[j]]``."""

    p: np.ndarray
    exact: np.ndarray


def single_grid_profiles(form: TreeForm, g: Grids, factuals: np.ndarray, vary: np.ndarray, near) -> GridProfiles:
    """Every factual's exact one-feature profiles from its walk records ``near`` (:func:`near_walk`, ≤ 1 change)."""
    q, box, a, _ = near
    raw = single_sums(len(factuals), q, box, a, g.box_lo, g.box_hi, g.boxes.mask, g.boxes.empty, g.weights,
                      g.is_number, g.offset, g.n_cells, np.asarray(vary, dtype=np.bool_))
    p, exact = combine(form, raw)
    return GridProfiles(p=p, exact=exact)


def cell_points(g: Grids, j: int) -> np.ndarray:
    """A value inside each cell of feature j: its upper end (the last, open cell: just above the last bound)."""
    if not g.is_number[j]:
        return np.arange(g.n_cells[j], dtype=float)
    bounds = g.grid[j]
    last = np.nextafter(bounds[-1], np.inf) if len(bounds) else 0.0
    return np.r_[bounds, last]


def settle_singles(form: TreeForm, g: Grids, prof: GridProfiles, factuals: np.ndarray, vary: np.ndarray,
                   threshold: float, score=None) -> None:
    """Rescore, in place, the profile cells within a rounding error of the threshold whose sum is not exact.

    ``score`` (default the form): an XGBoost form (float32) is settled by the model itself.
    """
    window = FLOAT32_WINDOW if form.float32 else NEAR_THRESHOLD
    near = (np.abs(prof.p - threshold) <= window) & ~prof.exact
    if not near.any():
        return
    rows, where = [], []
    for j in np.flatnonzero(vary):
        lo = g.offset[j]
        qs, cells = np.nonzero(near[:, lo: lo + g.n_cells[j]])
        if not len(qs):
            continue
        r = factuals[qs].copy()
        r[:, j] = cell_points(g, int(j))[cells]
        rows.append(r)
        where.append((qs, lo + cells))
    if rows:
        scores = (form if score is None else score)(np.concatenate(rows))
        qs = np.concatenate([w[0] for w in where])
        cells = np.concatenate([w[1] for w in where])
        prof.p[qs, cells] = scores


def past(ends: np.ndarray, step: float, side: int) -> np.ndarray:
    """Per end e: the nearest x on ``side`` whose pulled corner x - side*step is still past e (float64 exactly)."""
    x = ends + side * step
    for _ in range(64):
        short = (x - side * step <= ends) if side > 0 else (x - side * step > ends)
        if not short.any():
            break
        x = np.where(short, np.nextafter(x, side * np.inf), x)
    return x


_CANDIDATES: weakref.WeakKeyDictionary[Grids, dict] = weakref.WeakKeyDictionary()


def number_candidates(g: Grids, axes, j: int, side: int):
    """(values, cell, corner cell, origin) of feature j's candidates on one side (+1 up, -1 down), kept per grid
    and per the axis settings they depend on (step, permitted range, whole numbers): see :func:`_number_candidates`."""
    key = (j, side, float(axes.step[j]), float(axes.low[j]), float(axes.high[j]), bool(axes.integer[j]))
    per_grid = _CANDIDATES.setdefault(g, {})
    if key not in per_grid:
        per_grid[key] = _number_candidates(g, axes, j, side)
    return per_grid[key]


def _number_candidates(g: Grids, axes, j: int, side: int):
    """(values, cell, corner cell, origin) of feature j's candidates on one side (+1 up, -1 down).

    Up: where each cell starts (just above a bound) and that plus the step; down: where a cell ends (the
    bound) and that minus the step. Integers: the first whole number. ``origin``: the index of the grid
    bound each came from. Values outside the permitted range are left out.
    """
    bounds = g.grid[j]
    step = float(axes.step[j])
    first = np.nextafter(bounds, np.inf) if side > 0 else bounds.copy()
    values = [first] + ([past(bounds, step, side)] if step > 0 else [])
    v = np.concatenate(values)
    if axes.integer[j]:
        v = np.ceil(v) if side > 0 else np.floor(v)
    origin = np.tile(np.arange(len(bounds)), len(values))
    ok = (v >= axes.low[j]) & (v <= axes.high[j])
    v, origin = v[ok], origin[ok]
    cell = np.searchsorted(bounds, v, side="left")
    corner = np.searchsorted(bounds, v - side * step, side="left") if step > 0 else cell
    return v, cell, corner, origin


class RuleCheck:
    """The task's constraints between features applied to candidates (none: every candidate holds), and how many
    candidates each constraint rejected."""

    def __init__(self, task):
        self.task = task
        self.rejected = np.zeros(len(task.rules), dtype=np.int64)

    def keep(self, valid: np.ndarray, factuals: np.ndarray, j: int, values: np.ndarray) -> np.ndarray:
        """``valid`` (factuals x candidates) without the candidates (feature j moved to ``values``) that break one."""
        if not len(self.task.rules) or not valid.any():
            return valid
        qs, cs = np.nonzero(valid)
        rows = factuals[qs].copy()
        rows[:, j] = values[cs]
        breaks = self.task.rule_breaks(rows, factuals[qs])
        self.rejected += breaks.sum(axis=0)
        out = valid.copy()
        out[qs[breaks.any(axis=1)], cs[breaks.any(axis=1)]] = False
        return out


def single_counterfactuals(g: Grids, axes, prof: GridProfiles, factuals: np.ndarray, threshold: float,
                           rules: RuleCheck):
    """Every factual's minimal one-feature counterfactuals: arrays (factual, feature, value, side, size, P there).

    Numbers and ordinal features: the nearest valid value on each side; categorical: every valid allowed
    level (side 2 + level). Valid: P < threshold at the value and at its pulled-back corner, and every
    constraint between features holds (``rules``), so a value that breaks one gives way to the next.
    """
    out = []
    for j in np.flatnonzero(axes.vary):
        p = prof.p[:, g.offset[j]: g.offset[j] + g.n_cells[j]]
        f = factuals[:, j]
        if g.is_number[j]:
            parts = [_nearest_number(g, axes, int(j), p, factuals, side, threshold, rules) for side in (-1, 1)
                     if side * axes.direction[j] >= 0]
        else:
            parts = [_levels(axes, int(j), p, factuals, threshold, rules)]
        for qs, values, side in parts:
            size = np.abs(values - f[qs]) / axes.scale[j] if axes.ordered[j] else np.ones(len(qs))
            cells = np.searchsorted(g.grid[j], values, side="left") if g.is_number[j] else values.astype(np.int64)
            out.append((qs, np.full(len(qs), j), values, side, size, p[qs, cells]))
    if not out:
        return tuple(np.empty(0, dtype=int if k < 2 else float) for k in range(6))
    return tuple(np.concatenate([o[k] for o in out]) for k in range(6))


def _nearest_number(g: Grids, axes, j: int, p: np.ndarray, factuals: np.ndarray, side: int, threshold: float,
                    rules: RuleCheck):
    f = factuals[:, j]
    v, cell, corner, origin = number_candidates(g, axes, j, side)
    if not len(v):  # no split on the feature (or none in its permitted range): no change of it alone can help
        return np.empty(0, dtype=np.int64), np.empty(0), np.empty(0)
    bounds = g.grid[j]
    with np.errstate(invalid="ignore"):
        beyond = (bounds[origin][None, :] >= f[:, None]) if side > 0 else (bounds[origin][None, :] < f[:, None])
        beyond &= (v[None, :] > f[:, None]) if side > 0 else (v[None, :] < f[:, None])
        close = np.abs(v[None, :] - f[:, None]) <= axes.step[j]
    f_cell = np.searchsorted(bounds, f, side="left")
    rows = np.arange(len(f))[:, None]
    corner_cell = np.where(close, f_cell[:, None], corner[None, :])
    valid = rules.keep(beyond & (p[rows, cell[None, :]] < threshold) & (p[rows, corner_cell] < threshold), factuals, j, v)
    distance = np.where(valid, np.abs(v[None, :] - f[:, None]), np.inf)
    best = np.argmin(distance, axis=1)
    qs = np.flatnonzero(np.isfinite(distance[np.arange(len(f)), best]))
    return qs, v[best[qs]], np.full(len(qs), float(side))


def _levels(axes, j: int, p: np.ndarray, factuals: np.ndarray, threshold: float, rules: RuleCheck):
    f = factuals[:, j]
    levels = np.arange(int(axes.n_levels[j]), dtype=float)
    allowed = np.ones(len(levels), dtype=bool) if axes.levels_ok[j] is None else np.asarray(axes.levels_ok[j], dtype=bool)
    valid = (p[:, : len(levels)] < threshold) & allowed[None, :] & (levels[None, :] != f[:, None])
    valid = rules.keep(valid, factuals, j, levels)
    if not axes.ordinal[j]:
        qs, lev = np.nonzero(valid)
        return qs, lev.astype(float), 2.0 + lev
    side = np.sign(levels[None, :] - f[:, None])
    valid &= side * axes.direction[j] >= 0
    parts = []
    for s in (-1.0, 1.0):
        on = valid & (side == s)
        distance = np.where(on, np.abs(levels[None, :] - f[:, None]), np.inf)
        best = np.argmin(distance, axis=1)
        qs = np.flatnonzero(np.isfinite(distance[np.arange(len(f)), best]))
        parts.append((qs, levels[best[qs]], np.full(len(qs), s)))
    return (np.concatenate([p_[0] for p_ in parts]), np.concatenate([p_[1] for p_ in parts]),
            np.concatenate([p_[2] for p_ in parts]))


def in_order(per_query: list[list[tuple]], n_features: int) -> list[np.ndarray]:
    """Each query's candidate rows in the generator's order: fewest changed features, then the smallest change, then
    round by round across the sets of features changed (the k-th smallest change of every set before the (k+1)-th of
    any), then the lowest P(undesirable), then the values.

    Ties are common (every valid level of a categorical feature is a change of size 1): settling them by feature
    order would hand the first n_cf slots to the first feature in the file with many valid levels, and F would
    measure the file's column order. Each candidate carries its P from the profile it was read from.
    """
    out = []
    for items in per_query:
        r = np.array([t[3] for t in items]).reshape(-1, n_features)
        pq = [t[4] for t in items]
        by_set: dict[tuple, list[int]] = {}
        for i in sorted(range(len(items)), key=lambda i: (items[i][1], pq[i], tuple(r[i]))):
            by_set.setdefault(items[i][2], []).append(i)
        rank = {i: k for members in by_set.values() for k, i in enumerate(members)}
        order = sorted(range(len(items)), key=lambda i: (items[i][0], round(items[i][1], 12), rank[i], pq[i], tuple(r[i])))
        out.append(r[order])
    return out

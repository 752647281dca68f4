"""The candidates a ``batch`` search proposes, per query, in its order (:mod:`._batch` explains the search).

Single changes on each feature's grid, a near miss with each possible partner at the ends of its range, rounds of
random candidates short of what already flips a query alone (:class:`SingleBounds`), and, for ``batch-plausible``,
the nearest training rows the model predicts desirable (:class:`NeighbourFeed`). Every draw comes from the query's
own random stream.
"""

from __future__ import annotations

import numpy as np

from ._batchspace import SearchSpace, embed

__all__ = [
    "NeighbourFeed",
    "SingleBounds",
    "all_partners",
    "item_ranks",
    "probe_candidates",
    "random_candidates",
    "single_candidates",
]

#: Item numbers per feature (a level's code, or 0/1 for a number's sides): keeps items of features apart.
ITEMS_PER_FEATURE = 1_000_000


def single_candidates(space: SearchSpace, factuals: np.ndarray):
    """Every query with one feature changed to each value of that feature's single-change grid.

    Values equal to the factual's or against a feature's direction are left out. Returns
    (candidates (m, F), owner (m,), item (m,)): the item numbers a query's single changes that
    end as one counterfactual: each level of a category, each side (up, down) of a number.
    """
    parts, owners, items = [], [], []
    n_q = len(factuals)
    for j in np.flatnonzero(space.vary):
        grid = space.single_grid[j]
        rows = np.repeat(factuals, len(grid), axis=0)
        rows[:, j] = np.tile(grid, n_q)
        owner = np.repeat(np.arange(n_q), len(grid))
        moved = rows[:, j] - factuals[owner, j]
        ok = (moved != 0) & (np.sign(moved) * space.direction[j] >= 0)
        # A level is its own item; a number has two, its up side and its down side.
        within = rows[:, j].astype(int) if space.task.features[j].kind == "categorical" else (moved > 0).astype(int)
        parts.append(rows[ok])
        owners.append(owner[ok])
        items.append(j * ITEMS_PER_FEATURE + within[ok])
    if not parts:
        return np.empty((0, factuals.shape[1])), np.empty(0, dtype=int), np.empty(0, dtype=int)
    return np.concatenate(parts), np.concatenate(owners), np.concatenate(items)


def item_ranks(owner: np.ndarray, item: np.ndarray, rngs) -> np.ndarray:
    """Per row, the rank of its item in its query's seeded random order of items (0 first)."""
    rank = np.zeros(len(owner), dtype=int)
    order = np.lexsort((item, owner))
    for q in np.unique(owner):
        rows = order[np.searchsorted(owner[order], q, side="left"):np.searchsorted(owner[order], q, side="right")]
        unique_items, inverse = np.unique(item[rows], return_inverse=True)
        item_rank = np.argsort(rngs[q].random(len(unique_items)), kind="stable").argsort(kind="stable")
        rank[rows] = item_rank[inverse]
    return rank



def probe_candidates(space: SearchSpace, factuals: np.ndarray, bounds: SingleBounds, queries: np.ndarray):
    """Each near miss with one other feature at each end of its range (a number) or at each level (a category).

    Ends stop short of the other feature's own single flips and follow its direction. Returns
    (candidates (m, F), owner (m,), anchor feature (m,), partner feature (m,)); the last rows are
    the near misses alone (partner -1).
    """
    n_f = factuals.shape[1]
    anchor_q, anchor_j, anchor_value = bounds.near_misses(queries)
    parts: list[tuple] = []
    for b in np.flatnonzero(space.vary):
        use = anchor_j != b
        q, a, value = anchor_q[use], anchor_j[use], anchor_value[use]
        if not len(q):
            continue
        current = factuals[q, b]
        if space.task.features[b].kind == "categorical":
            levels = space.single_grid[b]
            q, a, value, current = (np.repeat(x, len(levels)) for x in (q, a, value, current))
            partner_value = np.tile(levels, len(anchor_q[use]))
            ok = (partner_value != current) & ~bounds.excluded_levels(b, q)[np.arange(len(q)), partner_value.astype(int)]
        else:
            low, high = bounds.low[q, b], bounds.high[q, b]
            if space.direction[b] > 0:
                low = np.maximum(low, current)
            elif space.direction[b] < 0:
                high = np.minimum(high, current)
            ends = [_draw_between(space.values[b], space.cumulative[b], current, low, high, np.full(len(q), u))
                    for u in (0.0, 1.0 - 1e-12)]
            q, a, value, current = (np.tile(x, 2) for x in (q, a, value, current))
            partner_value = np.concatenate(ends)
            ok = partner_value != current
        rows = factuals[q].copy()
        rows[np.arange(len(q)), a] = value
        rows[:, b] = partner_value
        parts.append((rows[ok], q[ok], a[ok], np.full(int(ok.sum()), b)))
    if not parts:
        return np.empty((0, n_f)), np.empty(0, int), np.empty(0, int), np.empty(0, int)
    lone = factuals[anchor_q].copy()  # the near miss alone: what a partner must improve on
    lone[np.arange(len(anchor_q)), anchor_j] = anchor_value
    parts.append((lone, anchor_q, anchor_j, np.full(len(anchor_q), -1)))
    rows, q, a, b = (np.concatenate(x) for x in zip(*parts))
    return rows, q, a, b


def all_partners(probes, owner, anchor, partner, p):
    """Per (query, near miss): the near miss with every helping partner at its better end (lower P(undesirable)).

    ``probes`` are the helping probe rows, one partner each. Returns (rows, query, anchor feature).
    """
    if len(probes) == 0:
        return np.empty((0, probes.shape[1])), np.empty(0, int), np.empty(0, int)
    order = np.lexsort((p, partner, anchor, owner))  # per (query, anchor, partner): the better end first
    probes, owner, anchor, partner = probes[order], owner[order], anchor[order], partner[order]
    best = np.r_[True, (np.diff(owner) != 0) | (np.diff(anchor) != 0) | (np.diff(partner) != 0)]
    probes, owner, anchor, partner = probes[best], owner[best], anchor[best], partner[best]
    start = np.r_[True, (np.diff(owner) != 0) | (np.diff(anchor) != 0)]
    group = np.cumsum(start) - 1
    rows = probes[start].copy()  # the near miss and its first partner
    rows[group, partner] = probes[np.arange(len(probes)), partner]  # every partner's value into its group's row
    return rows, owner[start], anchor[start]



def random_candidates(space, factuals, rngs, active, subset, samples, bounds: SingleBounds):
    """``samples`` candidates per active query: the factual with ``subset[q]`` random varying features redrawn.

    New values are drawn as the training rows have them, inside the permitted range and direction,
    and short of any value that flips the query alone (``bounds``): a candidate that went past one
    would only collapse onto that known single change when its passengers are reverted. A query
    that some number flips alone looks for trade-offs instead: each candidate puts one such
    feature just short of its single flip (:meth:`SingleBounds.near_misses`) and redraws
    ``subset[q] - 1`` others, so another feature decides whether it flips (a smaller cibil rise
    together with a shorter loan term).
    """
    n_f = factuals.shape[1]
    if len(active) == 0:
        return np.empty((0, n_f)), np.empty(0, dtype=int), np.empty(0, dtype=int)
    # One draw per query from its own stream: per candidate, F subset keys, F values and one anchor choice.
    draws = np.stack([rngs[q].random((samples, 2 * n_f + 1)) for q in active]).reshape(-1, 2 * n_f + 1)
    owner = np.repeat(active, samples)
    keys, uniforms, pick = draws[:, :n_f].copy(), draws[:, n_f : 2 * n_f], draws[:, -1]
    keys[:, ~space.vary] = np.inf
    anchor_q, anchor_j, anchor_value = bounds.near_misses(active, with_partners=True)
    anchored = np.zeros(len(owner), dtype=bool)
    anchor_row_j = np.zeros(len(owner), dtype=int)
    anchor_row_value = np.zeros(len(owner))
    if len(anchor_q):
        first = np.searchsorted(anchor_q, owner, side="left")
        count = np.searchsorted(anchor_q, owner, side="right") - first
        anchored = count > 0
        choice = first + np.minimum((pick * count).astype(int), np.maximum(count - 1, 0))
        rows = np.flatnonzero(anchored)
        anchor_row_j[rows], anchor_row_value[rows] = anchor_j[choice[rows]], anchor_value[choice[rows]]
        # Only the features that helped this near miss at one end of their range may join it.
        partners = bounds.partners[owner[rows], anchor_row_j[rows]]
        keys[rows] = np.where(partners, keys[rows], np.inf)
        keys[rows, anchor_row_j[rows]] = -1.0  # the anchor is always among the changed features
    ranks = np.argsort(np.argsort(keys, axis=1, kind="stable"), axis=1, kind="stable")
    chosen = (ranks < subset[owner][:, None]) & np.isfinite(keys)
    base = factuals[owner]
    candidates = base.copy()
    for j in np.flatnonzero(space.vary):
        rows = np.flatnonzero(chosen[:, j] & ~(anchored & (anchor_row_j == j)))
        if not len(rows):
            continue
        current, q = base[rows, j], owner[rows]
        if space.task.features[j].kind == "categorical":
            candidates[rows, j] = _draw_level(
                space.values[j], space.cumulative[j], current, uniforms[rows, j], bounds.excluded_levels(j, q)
            )
        else:
            low, high = bounds.low[q, j], bounds.high[q, j]
            # The direction a feature may move in, and for a partner the side on which it helped its near miss.
            side = np.where(anchored[rows], bounds.side[q, anchor_row_j[rows], j], 0) if len(anchor_q) else 0
            up = (space.direction[j] > 0) | (side > 0)
            down = (space.direction[j] < 0) | (side < 0)
            low = np.where(up, np.maximum(low, current), low)
            high = np.where(down, np.minimum(high, current), high)
            candidates[rows, j] = _draw_between(space.values[j], space.cumulative[j], current, low, high, uniforms[rows, j])
    rows = np.flatnonzero(anchored)
    candidates[rows, anchor_row_j[rows]] = anchor_row_value[rows]
    return candidates, owner, np.where(anchored, anchor_row_j, -1)



def _draw_between(values, cumulative, current, low, high, uniforms):
    """Draw from ``values`` with weights (given as ``cumulative``) strictly between ``low`` and ``high``, never ``current``.

    Inverse-CDF sampling over the allowed slice with the current value's weight cut out: all of
    shape (n,) but ``values`` and ``cumulative``. Where no value is left to draw, the current one
    is kept (the cell simply does not change).
    """
    n = len(values)
    before = np.r_[0.0, cumulative]  # before[i]: weight of values[:i]
    first = np.searchsorted(values, low, side="right")  # first value above low
    stop = np.searchsorted(values, high, side="left")  # first value at or above high
    stop = np.maximum(stop, first)
    pos = np.searchsorted(values, current)
    pos_c = np.minimum(pos, n - 1)
    present = (pos < n) & (values[pos_c] == current) & (pos >= first) & (pos < stop)
    own = np.where(present, before[pos_c + 1] - before[pos_c], 0.0)
    span = before[stop] - before[first] - own
    target = before[first] + uniforms * span
    target = np.where(present & (target >= before[pos_c]), target + own, target)
    idx = np.clip(np.searchsorted(cumulative, target, side="right"), first, np.maximum(stop - 1, first))
    idx = np.minimum(idx, n - 1)
    return np.where(span > 0, values[idx], current)


def _draw_level(values, cumulative, current, uniforms, excluded):
    """Draw a level from ``values`` with weights, never ``current`` nor a level ``excluded`` (rows, n_levels) marks."""
    weights = np.diff(np.r_[0.0, cumulative])
    codes = values.astype(int)
    allowed = (values[None, :] != current[:, None]) & ~excluded[:, codes]
    running = np.cumsum(weights[None, :] * allowed, axis=1)
    total = running[:, -1]
    idx = np.minimum((running <= (uniforms * total)[:, None]).sum(axis=1), len(values) - 1)
    return np.where(total > 0, values[idx], current)



class SingleBounds:
    """Per query, what already flips it alone: the values a random candidate need not reach.

    For a number or an ordinal level, the nearest value on each side of the factual that flips the
    query as the only change (``low``/``high``, (n_queries, F), ±inf when none is known); for a
    categorical feature, the levels that do (``excluded_levels``).
    """

    def __init__(self, space: SearchSpace, factuals: np.ndarray):
        n_q, n_f = factuals.shape
        self.factuals = factuals
        # One step short of a single flip: the stopping tolerance of a minimal change, or one unit / level.
        self.step = space.plan.tolerance if space.plan is not None else np.where(
            [f.is_continuous and not f.integer for f in space.task.features], 0.0, 1.0)
        self.nominal = np.array([f.kind == "categorical" for f in space.task.features])
        # partners[q, a, b]: feature b at one end of its range brought query q's near miss on a closer to a flip;
        # side[q, a, b]: which way (+1 up, -1 down) it helped more (a number or level; 0 for a category).
        self.partners = np.zeros((n_q, n_f, n_f), dtype=bool)
        self.side = np.zeros((n_q, n_f, n_f), dtype=np.int8)
        self.low, self.high = np.full((n_q, n_f), -np.inf), np.full((n_q, n_f), np.inf)
        self._levels = {
            j: np.zeros((n_q, len(f.levels)), dtype=bool)
            for j, f in enumerate(space.task.features)
            if f.kind == "categorical" and space.vary[j]
        }

    def near_misses(self, queries: np.ndarray, *, with_partners: bool = False):
        """(query, feature, value) of every number or level just short of a known single flip, sorted by query.

        Only for single flips more than one step away from the factual (else nothing lies between);
        ``with_partners``: only those that some other feature was seen to help.
        """
        parts = []
        for edge, sign in ((self.high, -1.0), (self.low, 1.0)):
            q_pos, j = np.nonzero(np.isfinite(edge[queries]) & ~self.nominal)
            q = queries[q_pos]
            value = edge[q, j] + sign * self.step[j]
            between = (value - self.factuals[q, j]) * -sign > 0
            if with_partners:
                between &= self.partners[q, j].any(axis=1)
            parts.append((q[between], j[between], value[between]))
        q = np.concatenate([p[0] for p in parts])
        order = np.argsort(q, kind="stable")
        return q[order], np.concatenate([p[1] for p in parts])[order], np.concatenate([p[2] for p in parts])[order]

    def learn_partners(self, probes, owner, anchor, partner, p) -> None:
        """Record the probes that helped a near miss: its partner, and the side of the end that helped more."""
        order = np.lexsort((p, partner, anchor, owner))[::-1]  # the better end written last, so it wins
        owner, anchor, partner = owner[order], anchor[order], partner[order]
        moved = probes[order, partner] - self.factuals[owner, partner]
        self.partners[owner, anchor, partner] = True
        self.side[owner, anchor, partner] = np.where(self.nominal[partner], 0, np.sign(moved)).astype(np.int8)

    def has_near_miss(self, queries: np.ndarray) -> np.ndarray:
        """Per query: some number or level flips it alone, more than one step from the factual."""
        q, _, _ = self.near_misses(queries)
        return np.isin(queries, q)

    def excluded_levels(self, j: int, queries: np.ndarray) -> np.ndarray:
        return self._levels[j][queries]

    def learn(self, owner: np.ndarray, rows: np.ndarray) -> None:
        """Record the single-change counterfactuals among ``rows`` (one query each, ``owner``)."""
        changed = rows != self.factuals[owner]
        single = changed.sum(axis=1) == 1
        for q, row, moved in zip(owner[single], rows[single], changed[single]):
            j = int(np.flatnonzero(moved)[0])
            if j in self._levels:
                self._levels[j][q, int(row[j])] = True
            elif row[j] > self.factuals[q, j]:
                self.high[q, j] = min(self.high[q, j], row[j])
            else:
                self.low[q, j] = max(self.low[q, j], row[j])



class NeighbourFeed:
    """Nearest unlike neighbours per query from the per-model index, handed out in growing windows."""

    def __init__(self, space: SearchSpace, factuals: np.ndarray):
        self.space, self.factuals = space, factuals
        self.served = np.zeros(len(factuals), dtype=int)

    def propose(self, active, round_no, settings):
        tables = self.space.tables
        n_f = self.factuals.shape[1]
        if tables.index is None or len(active) == 0:
            return np.empty((0, n_f)), np.empty(0, int)
        n_desired = len(tables.desired_codes)
        window = min(n_desired, settings.samples * 2 ** min(round_no, 3))
        reach = min(n_desired, int(self.served[active].max()) + window)
        embedding = embed(self.space.task, self.factuals[active], tables.mad)
        _, neighbour_idx = tables.index.kneighbors(embedding, n_neighbors=reach)
        parts, owners = [], []
        for row, q in enumerate(active):
            take = neighbour_idx[row, self.served[q] : self.served[q] + window]
            self.served[q] += len(take)
            parts.append(tables.desired_codes[take])
            owners.append(np.full(len(take), q))
        donors = np.concatenate(parts)
        owner = np.concatenate(owners)
        factual = self.factuals[owner]
        # Take the neighbour's value only where the feature may vary and the value is permitted.
        hybrid = np.where(self.space.permitted(donors, factual), donors, factual)
        return hybrid, owner

"""Compiled profiles of a tree form (numba): a factual's exact one-feature profiles on each feature's grid of
split bounds, and the search of its two-feature trade-offs, from the leaves the walks of :mod:`._treewalk` reach.

Grids: a number feature's cells are the intervals between the sorted distinct bounds of its splits,
cell ``c`` = (grid[c-1], grid[c]] (the first from -inf, the last to +inf); a level feature's cells are
its levels. A leaf covers cells ``lo..hi`` of a number feature, or the levels in its mask.

Sums are kept in three parts per output (see ``_treeprofile.with_inexact``): whole-number leaf values
(exact in any order), the other values, and a count of the latter, so a forest's vote counts stay exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: The off-band score's pinned values either side of 0.5 (as ``flex_core.data._band``).
_BELOW_HALF = float(np.nextafter(0.5, 0.0))
_ABOVE_HALF = float(np.nextafter(0.5, 1.0))

__all__ = ["single_sums", "pair_search", "lowest_pair_sums"]


@njit(cache=True, nogil=True)
def single_sums(n_q, rec_q, rec_box, rec_a, box_lo, box_hi, box_mask, box_empty, weights, is_number, offset, n_cells, vary):
    """Per factual and cell of every varying feature, the summed leaf weights (whole, other, count of other).

    ``rec_*``: records of :func:`walk_near` with at most one change (``rec_box``: the leaf's row in the
    box arrays). A record with no change covers the leaf's cells on every varying feature; one with a
    change, on that feature only. ``weights`` (boxes, W). ``offset[j]``: feature j's first cell in the flat
    layout, which leaves one spare cell after each number feature for the running sums. Returns (n_q, cells, W).
    """
    n_features = offset.shape[0] - 1
    width = weights.shape[1]
    out = np.zeros((n_q, offset[n_features], width))
    for r in range(rec_q.shape[0]):
        q, box, a = rec_q[r], rec_box[r], rec_a[r]
        for j in range(n_features):
            if not vary[j] or (a >= 0 and a != j) or box_empty[box, j]:
                continue
            base = offset[j]
            if is_number[j]:
                for w in range(width):
                    out[q, base + box_lo[box, j], w] += weights[box, w]
                    out[q, base + box_hi[box, j] + 1, w] -= weights[box, w]
            else:
                bits = box_mask[box, j]
                for level in range(n_cells[j]):
                    if (bits >> level) & 1:
                        for w in range(width):
                            out[q, base + level, w] += weights[box, w]
    for j in range(n_features):
        if not vary[j] or not is_number[j]:
            continue
        base = offset[j]
        for q in range(n_q):
            for c in range(1, n_cells[j]):
                for w in range(width):
                    out[q, base + c, w] += out[q, base + c - 1, w]
    return out


@njit(cache=True, nogil=True)
def _edges(rects, n_rects, box_lo, box_hi, j, first, last, marks, loc):
    """Sorted distinct cell starts of the rectangles on number feature j within global cells first..last (the
    window any candidate, corner or factual of the pair lies in), with ``first`` and ``last + 1``.

    ``marks``: a zeroed flag per global cell, set at the edges found (the caller's candidates read them, then
    :func:`_unmark` clears them). ``loc``: set for every global cell of the window to its local cell, so
    :func:`_at` looks a cell up without a search."""
    marks[first] = True
    marks[last + 1] = True
    for k in range(n_rects):
        marks[min(max(box_lo[rects[k], j], first), last + 1)] = True
        marks[min(max(box_hi[rects[k], j] + 1, first), last + 1)] = True
    n = 0
    for c in range(first, last + 2):
        n += marks[c]
    out = np.empty(n, np.int64)
    n = 0
    for c in range(first, last + 2):
        if marks[c]:
            out[n] = c
            n += 1
        loc[c] = n - 1
    return out


@njit(cache=True, nogil=True)
def _unmark(marks, edges):
    for e in edges:
        marks[e] = False


@njit(cache=True, nogil=True)
def _at(loc, edges, cell):
    """The local cell holding global cell ``cell`` (edges: sorted local cell starts, the last one the end): read from
    the window's ``loc`` (set by :func:`_edges`) when the cell lies in it, else found by a binary search."""
    if edges[0] <= cell <= edges[-1]:
        return loc[cell]
    return np.searchsorted(edges, cell, side="right") - 1


@njit(cache=True, nogil=True)
def _pair_grid(rects, n_rects, A, B, num_a, num_b, ea, eb, na, nb, box_lo, box_hi, box_mask, weights, width, loc_a, loc_b):
    """Summed weights (their first ``width`` columns) per local cell (na, nb, width), by a 2-d difference array."""
    diff = np.zeros((na + 1, nb + 1, width))
    for k in range(n_rects):
        box = rects[k]
        for la in range(na if not num_a else 1):
            if not num_a and not (box_mask[box, A] >> la) & 1:
                continue
            a0 = loc_a[min(max(box_lo[box, A], ea[0]), ea[-1])] if num_a else la
            a1 = loc_a[min(max(box_hi[box, A] + 1, ea[0]), ea[-1])] if num_a else la + 1
            if a1 <= a0:
                continue  # outside the window
            for lb in range(nb if not num_b else 1):
                if not num_b and not (box_mask[box, B] >> lb) & 1:
                    continue
                b0 = loc_b[min(max(box_lo[box, B], eb[0]), eb[-1])] if num_b else lb
                b1 = loc_b[min(max(box_hi[box, B] + 1, eb[0]), eb[-1])] if num_b else lb + 1
                if b1 <= b0:
                    continue
                for w in range(width):
                    v = weights[box, w]
                    diff[a0, b0, w] += v
                    diff[a1, b0, w] -= v
                    diff[a0, b1, w] -= v
                    diff[a1, b1, w] += v
    for i in range(na + 1):
        for k in range(1, nb + 1):
            for w in range(width):
                diff[i, k, w] += diff[i, k - 1, w]
    for i in range(1, na + 1):
        for k in range(nb + 1):
            for w in range(width):
                diff[i, k, w] += diff[i - 1, k, w]
    return diff


@njit(cache=True, nogil=True)
def _p_grid(raw, na, nb, link, n_trees, undesired, base0, class_one, threshold, window, whole, band):
    """P(undesirable) per local cell, and whether a cell within ``window`` of the threshold is not exact.

    ``link``: 0 a forest's mean, 1 binary boosting's sigmoid, 2 and 3 a regressor's off-band score of its prediction
    (the trees' mean, or ``base0`` + their sum; see :func:`_band_score`). ``whole``: the sums hold a forest's
    whole-number leaves only (one column per output, all exact)."""
    k_out = undesired.shape[0]
    p = np.empty((na, nb))
    unsure = False
    for i in range(na):
        for k in range(nb):
            exact = whole or raw[i, k, 2 * k_out] < 0.5
            if link == 0:
                value = 0.0
                for c in range(k_out):
                    if undesired[c]:
                        value += (raw[i, k, c] + (0.0 if exact else raw[i, k, k_out + c])) / n_trees
            elif link == 1:
                margin = base0 + raw[i, k, 0] + raw[i, k, k_out]
                p1 = 1.0 / (1.0 + np.exp(-margin))
                value = p1 if class_one else 1.0 - p1
                exact = False
            else:
                total = raw[i, k, 0] + raw[i, k, k_out]
                value = _band_score(total / n_trees if link == 2 else base0 + total, band)
                exact = False
            p[i, k] = value
            if not exact and abs(value - threshold) <= window:
                unsure = True
    return p, unsure


@njit(cache=True, nogil=True)
def _band_score(prediction, band):
    """``flex_core.data.Band.score`` of one prediction; ``band`` = (above, below, inclusive, scale), NaN for no
    threshold: 0.5 + 0.5 d / (|d| + scale), pinned one float step below 0.5 inside the band and above it outside."""
    d = -np.inf
    if not np.isnan(band[0]):
        d = prediction - band[0]
    if not np.isnan(band[1]):
        d = max(d, band[1] - prediction)
    undesirable = d >= 0.0 if band[2] > 0.5 else d > 0.0
    value = 0.5 + 0.5 * d / (abs(d) + band[3])
    return max(value, _ABOVE_HALF) if undesirable else min(value, _BELOW_HALF)


@njit(cache=True, nogil=True)
def _axis_candidates(q, j, fx, is_num, edges, marks, loc, n_local, f_local, grid, g_start, cand_start, cand_v, cand_cell,
                     cand_corner, cand_origin, step, direction, ordinal, levels_ok, scale, limit, level_single, max_cand,
                     buffers):
    """One axis's candidates for a pair: (value, local cell, local corner cell, size, side), sorted by side, then
    size, then value (views into ``buffers``: valid until its next call with them).

    Numbers: the table's values whose bound is one of this pair's local edges, beyond the factual, nearer
    than the best one-feature change on that side; levels: every allowed level that is not valid alone.
    """
    f = fx[q, j]
    n_max = 1 + (2 * edges.shape[0] * 2 if is_num else 64)  # at most two values per bound and side
    if buffers[0].shape[0] < n_max:
        buffers = _candidate_buffers(n_max)
    value, cell, corner, side, size, index = buffers
    m = 0
    if is_num:
        for s in range(2):
            sgn = 1.0 if s == 1 else -1.0
            if sgn * direction[j] < 0:
                continue
            # the table is sorted by origin: only bounds inside the window (edges[0] - 1 .. edges[-1] - 1) can be edges
            c0, c1 = cand_start[2 * j + s], cand_start[2 * j + s + 1]
            lo = c0 + np.searchsorted(cand_origin[c0:c1], edges[0] - 1, side="left")
            hi = c0 + np.searchsorted(cand_origin[c0:c1], edges[-1] - 1, side="right")
            for c in range(lo, hi):
                origin = cand_origin[c]
                bound = grid[g_start[j] + origin]
                v = cand_v[c]
                if not marks[origin + 1]:
                    continue
                if s == 1 and not (bound >= f and v > f):
                    continue
                if s == 0 and not (bound < f and v < f):
                    continue
                if not abs(v - f) < limit[q, j, s]:
                    continue
                value[m] = v
                cell[m] = _at(loc, edges, cand_cell[c])
                corner[m] = f_local if abs(v - f) <= step[j] else _at(loc, edges, cand_corner[c])
                side[m] = sgn
                m += 1
    else:
        for level in range(n_local):
            if level == f or not levels_ok[j, level]:
                continue
            if ordinal[j]:
                sgn = 1.0 if level > f else -1.0
                if sgn * direction[j] < 0 or not abs(level - f) < limit[q, j, 1 if sgn > 0 else 0]:
                    continue
            else:
                if level_single[q, j, level]:
                    continue
                sgn = 2.0 + level
            value[m] = level
            cell[m] = level
            corner[m] = level
            side[m] = sgn
            m += 1
    # np.int64(m): a count that may still be its literal 0 would compile _in_order a second time (seconds)
    return _in_order(buffers, np.int64(m), f, is_num or ordinal[j], scale[j], max_cand)


@njit(cache=True, nogil=True)
def _in_order(buffers, m, f, sized, scale, max_cand):
    """The first ``m`` candidates in ``buffers`` sorted by side, then size (|value - f| / scale when ``sized``, else
    1), then value: at most 2 ``max_cand`` of them (the nearest), and how many were cut."""
    value, cell, corner, side, size, index = buffers
    for i in range(m):
        size[i] = abs(value[i] - f) / scale if sized else 1.0
        index[i] = i
    # Made side by side (a level's own side), each side in table order: the nearer side's run (-1) comes first,
    # its nearest value last. Reversed, both runs are nearly in order, and an insertion sort by (side, size,
    # value, place made) finishes in about m steps.
    down = 0
    while down < m and side[down] == -1.0:
        down += 1
    for i in range(down // 2):
        k = down - 1 - i
        value[i], value[k] = value[k], value[i]
        cell[i], cell[k] = cell[k], cell[i]
        corner[i], corner[k] = corner[k], corner[i]
        size[i], size[k] = size[k], size[i]
        index[i], index[k] = index[k], index[i]
    for i in range(1, m):
        v, c, k, z, sd, x = value[i], cell[i], corner[i], size[i], side[i], index[i]
        r = i - 1
        while r >= 0 and _after(side[r], size[r], value[r], index[r], sd, z, v, x):
            value[r + 1], cell[r + 1], corner[r + 1] = value[r], cell[r], corner[r]
            size[r + 1], side[r + 1], index[r + 1] = size[r], side[r], index[r]
            r -= 1
        value[r + 1], cell[r + 1], corner[r + 1], size[r + 1], side[r + 1], index[r + 1] = v, c, k, z, sd, x
    if m > 2 * max_cand:  # too many (numbers only: a feature has at most 64 levels)
        return _nearest(value, cell, corner, size, side, index, m, f, 2 * max_cand)
    return value[:m], cell[:m], corner[:m], size[:m], side[:m], 0


@njit(cache=True, nogil=True)
def _nearest(value, cell, corner, size, side, index, m, f, keep):
    """Of ``m`` candidates in order (the side below the factual, then the side above, each nearest first), the
    ``keep`` nearest to ``f`` (a tie: the one made first), still in that order; and how many were cut. Merging the
    two runs' heads replaces sorting every candidate by distance (and compiling a merge sort for this rare case)."""
    down = 0
    while down < m and side[down] == -1.0:
        down += 1
    a, b = 0, down
    while a + (b - down) < keep:
        if b >= m:
            a += 1
        elif a >= down:
            b += 1
        else:
            d_a, d_b = abs(value[a] - f), abs(value[b] - f)
            if d_a < d_b or (d_a == d_b and index[a] < index[b]):
                a += 1
            else:
                b += 1
    for i in range(b - down):  # the side above's kept head moves up to follow the side below's
        value[a + i], cell[a + i], corner[a + i] = value[down + i], cell[down + i], corner[down + i]
        size[a + i], side[a + i], index[a + i] = size[down + i], side[down + i], index[down + i]
    return value[:keep], cell[:keep], corner[:keep], size[:keep], side[:keep], m - keep


@njit(cache=True, nogil=True)
def _after(side_a, size_a, value_a, index_a, side_b, size_b, value_b, index_b):
    """Whether candidate a comes after b in the order (side, size, value, place made)."""
    if side_a != side_b:
        return side_a > side_b
    if size_a != size_b:
        return size_a > size_b
    if value_a != value_b:
        return value_a > value_b
    return index_a > index_b


@njit(cache=True, nogil=True)
def _candidate_buffers(n):
    """Room for ``n`` candidates of one axis: value, cell, corner cell, side, size and the place each was made."""
    return (np.empty(n), np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n), np.empty(n), np.empty(n, np.int64))


@njit(cache=True, nogil=True)
def _staircase(va, ca, ka, za, sa, vb, cb, kb, zb, sb, p, fa_local, fb_local, threshold, out_a, out_b, out_size, out_p):
    """The Pareto-minimal valid (a, b) changes, per pair of sides, appended to the out lists.

    Valid: P < threshold at the pair and at its corner, and neither change valid alone. A row (a change of
    a, smallest first) is kept when it needs less of b than every smaller change of a on the same sides.
    """
    n_a, n_b = va.shape[0], vb.shape[0]
    alone_b = np.empty(n_b, np.bool_)
    for k in range(n_b):
        alone_b[k] = p[fa_local, cb[k]] < threshold and p[fa_local, kb[k]] < threshold
    i = 0
    while i < n_a:
        i_end = i
        while i_end < n_a and sa[i_end] == sa[i]:
            i_end += 1
        k = 0
        while k < n_b:
            k_end = k
            while k_end < n_b and sb[k_end] == sb[k]:
                k_end += 1
            best = k_end  # the fewest b steps any smaller change of a needed
            for r in range(i, i_end):
                if p[ca[r], fb_local] < threshold and p[ka[r], fb_local] < threshold:
                    continue  # this change of a is valid alone
                for c in range(k, min(k_end, best)):
                    if alone_b[c]:
                        continue
                    if p[ca[r], cb[c]] < threshold and p[ka[r], kb[c]] < threshold:
                        out_a.append(va[r])
                        out_b.append(vb[c])
                        out_size.append(za[r] + zb[c])
                        out_p.append(p[ca[r], cb[c]])
                        best = c
                        break
            k = k_end
        i = i_end


@njit(cache=True, nogil=True)
def _gather(ranges, rec_box, rects):
    """The boxes of one group's four runs of records, in ``rects`` (grown when short), and how many."""
    total = 0
    for k in range(4):
        total += ranges[2 * k + 1] - ranges[2 * k]
    if rects.shape[0] < total:
        rects = np.empty(total, np.int64)
    n = 0
    for k in range(4):
        for r in range(ranges[2 * k], ranges[2 * k + 1]):
            rects[n] = rec_box[r]
            n += 1
    return rects, n


@njit(cache=True, nogil=True)
def _all_whole(rects, n_rects, weights, k_out):
    """No box holds a leaf value that is not a whole number (the count of such values is in column 2 K)."""
    for k in range(n_rects):  # noqa: SIM110 (numba compiles the loop, not a generator)
        if weights[rects[k], 2 * k_out] > 0:
            return False
    return True


@njit(cache=True, nogil=True)
def pair_search(g_q, g_a, g_b, g_ranges, g_window, rec_box, box_lo, box_hi, box_mask, weights, is_number, n_cells,
                fx, f_cell, grid, g_start, cand_start, cand_v, cand_cell, cand_corner, cand_origin, step, direction,
                ordinal, levels_ok, scale, limit, level_single, link, n_trees, undesired, base0, class_one, threshold,
                window, max_cand, band):
    """The Pareto-minimal two-feature counterfactuals of every group (factual g_q, features g_a < g_b).

    A group's profile is read from the leaves its factual reaches changing nothing, one of the two features
    or both: ``rec_box[g_ranges[g, 2k]: g_ranges[g, 2k + 1]]`` for k = 0..3; ``g_window[g]``: the first and
    last global cell of a and of b that a candidate can reach (nearer than the best one-feature change). Returns
    (group, value a, value b, size, P) of each counterfactual, per group whether a cell near the threshold was
    not exact (to be rescored by the caller, nothing emitted for it), and the candidates cut per group.
    """
    out_g = [0]
    out_a = [0.0]
    out_b = [0.0]
    out_size = [0.0]
    out_p = [0.0]
    out_p.pop()
    out_g.pop()
    out_a.pop()
    out_b.pop()
    out_size.pop()
    n_groups = g_q.shape[0]
    unsure = np.zeros(n_groups, np.bool_)
    cut = np.zeros(n_groups, np.int64)
    rects = np.empty(0, np.int64)
    marks_a = np.zeros(n_cells.max() + 2, np.bool_)
    marks_b = np.zeros(n_cells.max() + 2, np.bool_)
    loc_a = np.zeros(n_cells.max() + 2, np.int64)
    loc_b = np.zeros(n_cells.max() + 2, np.int64)
    buffers_a = _candidate_buffers(4 * (n_cells.max() + 2) + 65)
    buffers_b = _candidate_buffers(4 * (n_cells.max() + 2) + 65)
    for gi in range(n_groups):
        q, A, B = g_q[gi], g_a[gi], g_b[gi]
        rects, n_rects = _gather(g_ranges[gi], rec_box, rects)
        num_a, num_b = is_number[A], is_number[B]
        if num_a:
            ea = _edges(rects, n_rects, box_lo, box_hi, A, g_window[gi, 0], g_window[gi, 1], marks_a, loc_a)
        else:
            ea = np.arange(n_cells[A] + 1)
        if num_b:
            eb = _edges(rects, n_rects, box_lo, box_hi, B, g_window[gi, 2], g_window[gi, 3], marks_b, loc_b)
        else:
            eb = np.arange(n_cells[B] + 1)
        na, nb = ea.shape[0] - 1, eb.shape[0] - 1
        # a forest's group reached by whole-number leaves only: its sums are exact, one per output
        whole = link == 0 and _all_whole(rects, n_rects, weights, undesired.shape[0])
        width = undesired.shape[0] if whole else weights.shape[1]
        raw = _pair_grid(rects, n_rects, A, B, num_a, num_b, ea, eb, na, nb, box_lo, box_hi, box_mask, weights, width,
                         loc_a, loc_b)
        p, unsure[gi] = _p_grid(raw, na, nb, link, n_trees, undesired, base0, class_one, threshold, window, whole, band)
        if unsure[gi]:
            if num_a:
                _unmark(marks_a, ea)
            if num_b:
                _unmark(marks_b, eb)
            continue
        fa_local = _at(loc_a, ea, f_cell[q, A]) if num_a else f_cell[q, A]
        fb_local = _at(loc_b, eb, f_cell[q, B]) if num_b else f_cell[q, B]
        va, ca, ka, za, sa, cut_a = _axis_candidates(q, A, fx, num_a, ea, marks_a, loc_a, na, fa_local, grid, g_start, cand_start, cand_v,
                                                     cand_cell, cand_corner, cand_origin, step, direction, ordinal,
                                                     levels_ok, scale, limit, level_single, max_cand, buffers_a)
        vb, cb, kb, zb, sb, cut_b = _axis_candidates(q, B, fx, num_b, eb, marks_b, loc_b, nb, fb_local, grid, g_start, cand_start, cand_v,
                                                     cand_cell, cand_corner, cand_origin, step, direction, ordinal,
                                                     levels_ok, scale, limit, level_single, max_cand, buffers_b)
        if num_a:
            _unmark(marks_a, ea)
        if num_b:
            _unmark(marks_b, eb)
        cut[gi] = cut_a + cut_b
        before = len(out_a)
        _staircase(va, ca, ka, za, sa, vb, cb, kb, zb, sb, p, fa_local, fb_local, threshold, out_a, out_b, out_size,
                   out_p)
        for _ in range(len(out_a) - before):
            out_g.append(gi)
    return (np.array(out_g, dtype=np.int64), np.array(out_a), np.array(out_b), np.array(out_size), np.array(out_p),
            unsure, cut)


@njit(cache=True, nogil=True)
def lowest_pair_sums(n_q, n_trees, n_features, rec_q, rec_tree, rec_a, rec_b, rec_value):
    """Per factual q and features (a, b), the sum over trees of the lowest ``rec_value`` of a leaf the factual
    reaches changing a and b only, shape (n_q, F, F); records (factual, tree, first and second changed feature or
    -1, value) in any order."""
    start = np.zeros(n_q + 1, np.int64)
    for r in range(rec_q.shape[0]):
        start[rec_q[r] + 1] += 1
    for q in range(n_q):
        start[q + 1] += start[q]
    order = np.empty(rec_q.shape[0], np.int64)
    fill = start[:-1].copy()
    for r in range(rec_q.shape[0]):
        order[fill[rec_q[r]]] = r
        fill[rec_q[r]] += 1
    out = np.zeros((n_q, n_features, n_features))
    best0 = np.empty(n_trees)
    best1 = np.empty((n_trees, n_features))
    best2 = np.empty((n_trees, n_features, n_features))
    for q in range(n_q):
        best0[:] = np.inf
        best1[:] = np.inf
        best2[:] = np.inf
        for k in range(start[q], start[q + 1]):
            r = order[k]
            t, a, b, v = rec_tree[r], rec_a[r], rec_b[r], rec_value[r]
            if a < 0:
                best0[t] = min(best0[t], v)
            elif b < 0:
                best1[t, a] = min(best1[t, a], v)
            else:
                best2[t, a, b] = min(best2[t, a, b], v)
                best2[t, b, a] = min(best2[t, b, a], v)
        for t in range(n_trees):
            for a in range(n_features):
                low_a = min(best0[t], best1[t, a])
                for b in range(n_features):
                    out[q, a, b] += min(low_a, best1[t, b], best2[t, a, b])
    return out

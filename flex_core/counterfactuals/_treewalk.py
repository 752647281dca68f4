"""Compiled walks of a tree form's nodes (numba): the leaves a factual reaches by changing one or two features, the
leaf each row reaches, every leaf's box, and the small kernels that build a form (depth, level masks).

A factual reaches a leaf by changing exactly the features on which it is outside the leaf's box. One
walk per factual and tree finds every such leaf with at most ``max_changes`` of them: at a split the
factual's own side keeps the changes made so far, the other side adds the split's feature (or keeps
the set when the feature is already changed). Work follows the leaves reached, not the forest's size.

Nodes are packed one row of four int64 each (:func:`pack_nodes`), so a step of a walk reads one cache line, not seven
arrays (a forest's node arrays exceed the processor's cache: on accidents' forest this halved the walks' time):
``head = feature * 4 + numeric * 2 + nan_left`` (``head >> 2`` is -1 at a leaf), left child, right child, and the
split's bound as float64 bits (a number split) or its level bits (a level split); ``fnodes`` is the float64 view
of the same memory.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["pack_nodes", "walk_near", "reached_leaves", "leaf_box_arrays", "tree_depth", "depth_of", "level_masks"]


def pack_nodes(feature, numeric, bound, mask, nan_left, left, right) -> np.ndarray:
    """The packed node rows (N, 4) of a tree form's node arrays (see the module's docstring)."""
    nodes = np.empty((len(feature), 4), np.int64)
    nodes[:, 0] = (np.asarray(feature, np.int64) * 4 + np.asarray(numeric, np.int64) * 2
                   + np.asarray(nan_left, np.int64))
    nodes[:, 1] = left
    nodes[:, 2] = right
    nodes[:, 3] = np.where(numeric, np.asarray(bound, np.float64).view(np.int64), mask)
    return nodes


@njit(cache=True, nogil=True)
def _go_left(nodes, fnodes, node, x):
    if np.isnan(x):
        return (nodes[node, 0] & 1) == 1
    if (nodes[node, 0] >> 1) & 1:
        return x <= fnodes[node, 3]
    if x < 0 or x > 63:
        return (nodes[node, 3] & 1) == 1
    return ((nodes[node, 3] >> np.int64(x)) & 1) == 1


@njit(cache=True, nogil=True)
def walk_near(x, roots, nodes, fnodes, vary, max_changes, depth):
    """Every (factual, leaf, first, second changed feature or -1) with at most ``max_changes`` changes.

    ``nodes``, ``fnodes``: the packed nodes and their float64 view; ``vary[j]``: feature j may change. Returns four
    int64 arrays in factual order.
    """
    n_q = x.shape[0]
    cap = max(1024, n_q * roots.shape[0] * 4)
    out_q = np.empty(cap, np.int64)
    out_leaf = np.empty(cap, np.int64)
    out_a = np.empty(cap, np.int64)
    out_b = np.empty(cap, np.int64)
    n = 0
    size = 2 * (depth + 2) * (max_changes + 1) + 8
    st_node = np.empty(size, np.int64)
    st_a = np.empty(size, np.int64)
    st_b = np.empty(size, np.int64)
    for q in range(n_q):
        for t in range(roots.shape[0]):
            top = 0
            st_node[0] = roots[t]
            st_a[0] = -1
            st_b[0] = -1
            top = 1
            while top > 0:
                top -= 1
                node, a, b = st_node[top], st_a[top], st_b[top]
                j = nodes[node, 0] >> 2
                if j < 0:
                    if n == cap:
                        cap *= 2
                        out_q = _grow(out_q, cap)
                        out_leaf = _grow(out_leaf, cap)
                        out_a = _grow(out_a, cap)
                        out_b = _grow(out_b, cap)
                    out_q[n] = q
                    out_leaf[n] = node
                    out_a[n] = a
                    out_b[n] = b
                    n += 1
                    continue
                if top + 2 > size:  # cannot happen for a checked form; a deeper tree would overflow
                    raise ValueError("tree deeper than its form says")
                goes = _go_left(nodes, fnodes, node, x[q, j])
                own = nodes[node, 1] if goes else nodes[node, 2]
                other = nodes[node, 2] if goes else nodes[node, 1]
                if j == a or j == b:  # noqa: SIM109 (numba compiles the plain comparisons)
                    st_node[top], st_a[top], st_b[top] = other, a, b
                    top += 1
                elif vary[j] and a < 0 and max_changes >= 1:
                    st_node[top], st_a[top], st_b[top] = other, j, -1
                    top += 1
                elif vary[j] and b < 0 and max_changes >= 2:
                    st_node[top], st_a[top], st_b[top] = other, min(a, j), max(a, j)
                    top += 1
                st_node[top], st_a[top], st_b[top] = own, a, b
                top += 1
    return out_q[:n].copy(), out_leaf[:n].copy(), out_a[:n].copy(), out_b[:n].copy()


@njit(cache=True, nogil=True)
def _grow(a, cap):
    out = np.empty(cap, a.dtype)
    for i in range(a.shape[0]):  # a loop: a slice assignment compiles its shape-mismatch message (seconds)
        out[i] = a[i]
    return out


def depth_of(left, right) -> int:
    """The depth of a tree, or of the deepest of trees laid end to end (children come after their parent:
    checked for loaded files)."""
    return int(tree_depth(np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64))) if len(left) else 0


@njit(cache=True, nogil=True)
def tree_depth(left, right):
    """The depth of a tree whose children come after their parent (node 0 the root)."""
    depth = np.zeros(left.shape[0], np.int64)
    deepest = 0
    for node in range(left.shape[0]):
        for child in (left[node], right[node]):
            if child >= 0:
                depth[child] = depth[node] + 1
                deepest = max(deepest, depth[child])
    return deepest


@njit(cache=True, nogil=True)
def leaf_box_arrays(roots, nodes, fnodes, n_features, depth, full_mask):
    """Every leaf's box, leaves in node order: per feature (lo, hi] for numbers, the level bits, and whether a
    missing value reaches it. One walk per tree over the packed nodes with one box: each step down narrows one
    feature and logs its old bounds, and a step to a sibling first undoes the log back to their parent."""
    n_nodes = nodes.shape[0]
    rank = np.full(n_nodes, -1, np.int64)
    n_leaves = 0
    for node in range(n_nodes):
        if nodes[node, 0] < 0:
            rank[node] = n_leaves
            n_leaves += 1
    leaf = np.empty(n_leaves, np.int64)
    lo = np.empty((n_leaves, n_features))
    hi = np.empty((n_leaves, n_features))
    bits = np.empty((n_leaves, n_features), np.int64)
    nan_ok = np.empty((n_leaves, n_features), np.bool_)
    box_lo = np.empty(n_features)
    box_hi = np.empty(n_features)
    box_bits = np.empty(n_features, np.int64)
    box_nan = np.empty(n_features, np.bool_)
    size = 2 * (depth + 2)
    s_node = np.empty(size, np.int64)  # a node to visit, the split above it (-1 at a root), its side, the log's length
    s_parent = np.empty(size, np.int64)
    s_left = np.empty(size, np.bool_)
    s_mark = np.empty(size, np.int64)
    log_j = np.empty(depth + 2, np.int64)  # per step down: the feature narrowed and its bounds before
    log_lo = np.empty(depth + 2)
    log_hi = np.empty(depth + 2)
    log_bits = np.empty(depth + 2, np.int64)
    log_nan = np.empty(depth + 2, np.bool_)
    for t in range(roots.shape[0]):
        for f in range(n_features):
            box_lo[f] = -np.inf
            box_hi[f] = np.inf
            box_bits[f] = full_mask
            box_nan[f] = True
        n_log = 0
        s_node[0], s_parent[0], s_left[0], s_mark[0] = roots[t], -1, True, 0
        top = 1
        while top > 0:
            top -= 1
            node, parent, went_left = s_node[top], s_parent[top], s_left[top]
            while n_log > s_mark[top]:  # back to the parent's box
                n_log -= 1
                j = log_j[n_log]
                box_lo[j], box_hi[j], box_bits[j], box_nan[j] = log_lo[n_log], log_hi[n_log], log_bits[n_log], log_nan[n_log]
            if parent >= 0:
                head = nodes[parent, 0]
                j = head >> 2
                log_j[n_log], log_lo[n_log], log_hi[n_log] = j, box_lo[j], box_hi[j]
                log_bits[n_log], log_nan[n_log] = box_bits[j], box_nan[j]
                n_log += 1
                if (head >> 1) & 1:
                    if went_left:
                        box_hi[j] = min(box_hi[j], fnodes[parent, 3])
                    else:
                        box_lo[j] = max(box_lo[j], fnodes[parent, 3])
                else:
                    box_bits[j] = box_bits[j] & (nodes[parent, 3] if went_left else ~nodes[parent, 3])
                box_nan[j] = box_nan[j] and ((head & 1) == 1) == went_left
            if nodes[node, 0] < 0:
                r = rank[node]
                leaf[r] = node
                for f in range(n_features):
                    lo[r, f] = box_lo[f]
                    hi[r, f] = box_hi[f]
                    bits[r, f] = box_bits[f]
                    nan_ok[r, f] = box_nan[f]
                continue
            s_node[top], s_parent[top], s_left[top], s_mark[top] = nodes[node, 2], node, False, n_log
            s_node[top + 1], s_parent[top + 1], s_left[top + 1], s_mark[top + 1] = nodes[node, 1], node, True, n_log
            top += 2
    return leaf, lo, hi, bits, nan_ok


@njit(cache=True, nogil=True)
def reached_leaves(codes, roots, nodes, fnodes):
    """The leaf each coded row reaches in each tree over the packed nodes, shape (n, T)."""
    out = np.empty((codes.shape[0], roots.shape[0]), np.int64)
    for i in range(codes.shape[0]):
        for t in range(roots.shape[0]):
            node = roots[t]
            while nodes[node, 0] >= 0:
                goes = _go_left(nodes, fnodes, node, codes[i, nodes[node, 0] >> 2])
                node = nodes[node, 1] if goes else nodes[node, 2]
            out[i, t] = node
    return out


@njit(cache=True, nogil=True)
def level_masks(cols, thresholds, nan_left, seen, n_levels, strict):
    """Per level split node, the bits of the levels it sends left: level ``l`` of column ``cols[i]`` (its value as
    the library compares it, ``seen[c, l]``) goes left when it is below the threshold (``<``, or ``<=`` unless
    ``strict``); a missing level goes the node's missing-value way."""
    out = np.zeros(cols.shape[0], np.int64)
    for i in range(cols.shape[0]):
        c = cols[i]
        t = thresholds[i]
        bits = np.int64(0)
        for lev in range(n_levels[c]):
            v = seen[c, lev]
            if np.isnan(v):
                goes = nan_left[i]
            elif strict:
                goes = v < t
            else:
                goes = v <= t
            if goes:
                bits |= np.int64(1) << np.int64(lev)
        out[i] = bits
    return out

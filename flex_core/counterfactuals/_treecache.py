"""Whether the tree generator's compiled loops (:mod:`._treewalk`, :mod:`._treekernel`) are in this process, or in
numba's cache.

numba compiles them at their first call (20-40 s on two cores after an install) or reads them back from its cache
beside their files (under a second). The app's progress message says which to expect
(:attr:`~._tree.TreeGenerator.first_call_note`).
"""

from __future__ import annotations

from ._treekernel import lowest_pair_sums, pair_search, single_sums
from ._treewalk import level_masks, reached_leaves, tree_depth, walk_near

__all__ = ["loaded", "cached"]


def loaded() -> bool:
    """Whether this process holds the compiled walks already. numba compiles them at their first call (20-40 s on
    two cores after an install) or reads them back from its cache beside their file (under a second; see
    :func:`cached`). The two walks every factual takes stand for the rest (the pair search is compiled at its own
    first call, with the first factual that needs a pair)."""
    return bool(walk_near.signatures and single_sums.signatures)


def cached() -> bool | None:
    """Whether numba's cache holds every loop called from Python for this machine and this source, so a first call
    reads them back instead of compiling them: True or False, or None when the cache cannot be read (numba's cache
    index is not a public API: a numba that lays it out otherwise gives None, never an error)."""
    try:
        return all(_in_cache(f) for f in (walk_near, single_sums, pair_search, lowest_pair_sums, reached_leaves,
                                          tree_depth, level_masks))
    except Exception:  # any change in numba's private cache layout means "cannot tell"
        return None


def _in_cache(dispatcher) -> bool:
    """One compiled function's cache index has an entry for this machine's code generator and this source's bytes
    (numba's own test when it loads an entry: ``FunctionCache._index_key``)."""
    cache = dispatcher._cache
    codegen = dispatcher.targetctx.codegen()
    return any(key[1:] == cache._index_key(key[0], codegen)[1:] for key in cache._cache_file._load_index())

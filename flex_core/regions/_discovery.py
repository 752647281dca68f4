"""Region discovery: the rule-defined regions whose counterfactual feature importance differs from global.

One pool of factuals (``n_factuals``, the sample ``explain_global`` takes) with their stored
counterfactuals; f_j(i) per factual once (n_factuals × n_features). A candidate region is a mask
over the pool, its F the mean of the rows it selects: every candidate at once is one matrix product,
and nothing is generated per candidate.

**Candidates.** Conditions on any feature, mutable or immutable: a categorical level (``=``); a
range of consecutive ordinal levels (``=`` for one, ``between`` for more); a range of consecutive
quantile bins of a number (``between`` its lowest and highest value in the pool, both included).
Rules are one condition or, with ``max_conditions=2``, two on different features. A candidate is
tested when it holds at least ``min_support`` factuals and leaves at least as many outside it; one
with the same members as a simpler (or earlier) candidate is not tested twice.

**Divergence.** 1 - r, r the Pearson correlation between the region's F and the pool's F over the
mutable features (the paper's r, as :func:`flex_core.importance.compare_with_global`): 0 when the
same features drive the region, up to 2. Its 95% interval is 1 - r's interval from
:func:`flex_core._uncertainty.pearson_interval` (the pool's F held as given). The L1 shift,
Σ_j |F_j(region) - F_j| over the mutable features, says how far F moved, direction included in
``top_up`` and ``top_down``.

**Test.** Under "the region is a random set of factuals", a region of m factuals is m rows drawn
without replacement from the pool. ``n_permutations`` random orders of the pool give, from their
running means, a random region of *every* size at once; 1 - r of each is the permutation null.
To first order 1 - r is a quadratic form in the region's sampling error, whose variance is
proportional to 1/m - 1/n, so the null of (1 - r) / (1/m - 1/n) changes slowly with m; it grows
with m (1 - r saturates for small, noisy regions). A region of m factuals is therefore compared
with the scaled draws of its own size and of the larger sizes whose 1/m - 1/n is within a factor
of 1.5, which resolves p-values far below 1 / n_permutations. Measured on planted data with no
regional effect (80 seeds, pools of 200): BH at 0.1 flagged a region in 5 runs with these p-values
from 10,000 permutations, as with exact per-size p-values from 10,000; with the default 1,000, 5;
with 200 permutations, 8 (the pooled tail is noisier, so the smallest p-values run a little low). p = (1 + null draws at least as large) / (1 + null draws); q-values are
Benjamini–Hochberg's over every candidate tested, and a region is significant when q <= ``fdr`` **and its
divergence interval lies above 0** (an undefined interval, r without spread, is not above 0). The
permutation null asks whether the region's factuals look like a random set *for this fitted model*;
a forest's memorised label noise makes pockets (``colour = red and weekday = Mon``) where they do
not, with a divergence of a few hundredths. Measured on a forest trained on labels with no regional
structure (tests/planted_learned.py, 4,000 rows, 3% flipped, seeds 0-9, pools of 1,000): 437-587
candidates per run had q <= 0.1, every one with an interval reaching 0; with the interval rule no
region is significant in 10 of 10 runs. ``counts["interval_reaches_zero"]`` counts the candidates
below the FDR level left out this way.

**Pruning.** A two-condition region is dropped when it adds nothing to one of its conditions: when
its 1 - r is not clearly above 1 - r over 200 random subsets, of its size, of the factuals meeting
that condition alone (its members look like a random part of the simpler region). "Clearly" is at
the level 0.05 / K, K the two-condition regions tested inside that condition, since the best of K
random parts is high by chance: above the subsets' 95th percentile and their mean + z·sd.
Regions are pruned while the ranked list is filled, so ``counts["pruned"]`` counts those met on the
way. (Comparing p-values instead would drop a small region that differs sharply inside a large one
that differs a little: the large one is more significant.) A region whose cases are at least 95% those
of a region listed above it (Jaccard index, :data:`NEAR_COPY`) is the same finding told twice and is
left out too (``counts["near_copies"]``, and a note).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._format import plural
from .._uncertainty import pearson_interval
from ..counterfactuals import CounterfactualStore
from ..counterfactuals._set import Progress
from ..data import TaskSpec
from ..importance import DEFAULT_TAU, compare_with_global, rule_text
from ..importance._region_runs import PEARSON_INTERVAL_CONFIG
from ..limits import check_each
from ._found import Region, RegionsResult
from ._pool import Pool, build_pool, number_value, quantile_bins

__all__ = [
    "Region",
    "RegionsResult",
    "find_regions",
    "discover",
    "candidate_conditions",
    "divergence",
    "benjamini_hochberg",
    "permutation_null",
    "DIVERGENCE",
]

REPLICATION = (
    "per refit of the model (bootstrap rows, another seed): the region's members among the factuals the refit also "
    "rejects, with counterfactuals under the refit, have 1 - r above the 95th percentile of random sets of as many"
)
DIVERGENCE = "1 - Pearson r between the region's F and the pool's F over the mutable features"
L1_SHIFT = "sum over the mutable features of |F_j(region) - F_j(pool)|"
NULL = (
    "permutation: random regions of the same size drawn without replacement from the pool; "
    "(1 - r) / (1/m - 1/n) pooled over the region's size and the larger sizes whose 1/m - 1/n is within a factor of 1.5"
)
PRUNING = (
    "a two-condition region is dropped unless, for each of its two conditions, its 1 - r is above 1 - r over 200 "
    "random subsets of its size of the factuals meeting that condition alone, at the level 0.05 / (two-condition "
    "regions tested inside that condition): above their 95th percentile and their mean + z sd; and a region whose "
    "cases are at least 95% those of a region listed above it (Jaccard index) is left out as a near copy"
)
CHANCE_QUANTILE = 0.95
PRUNING_LEVEL = 0.05
#: A region is left out of the list when this share of the cases in either it or a region listed above it are in
#: both (Jaccard index): the same finding told twice (loan: "loan amount 8.3M-20.9M and commercial assets 7.5M-18.8M",
#: 121 cases, and "loan amount 0.3M-20.9M and ...", the same 121 and one more).
NEAR_COPY = 0.95
BAND_RATIO = 1.5
TOP_FEATURES = 3
#: 1 - r is rounded to this many decimals before it is compared with the null: sums in another order
#: differ in the last bits, which must not decide a tie (all rows equal: every region ties at 0).
_DECIMALS = 10


# -- the arithmetic --------------------------------------------------------------------------
def divergence(frequency: np.ndarray, global_: np.ndarray) -> np.ndarray:
    """1 - Pearson r between each row of ``frequency`` (..., k) and ``global_`` (k,), shape (...).

    A row without spread (every F equal) has no linear relation with the global F: r = 0, 1 - r = 1.
    ``global_`` must have spread (else r is undefined for every region; :func:`discover` refuses it).
    """
    frequency = np.asarray(frequency, dtype=float)
    g = np.asarray(global_, dtype=float)
    gc = g - g.mean()
    centred = frequency - frequency.mean(axis=-1, keepdims=True)
    norm = np.linalg.norm(centred, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(norm > 1e-12, centred @ gc / (norm * np.linalg.norm(gc)), 0.0)
    return 1.0 - np.clip(r, -1.0, 1.0)


def benjamini_hochberg(p_values) -> np.ndarray:
    """Benjamini–Hochberg q-values, same shape: q_(i) = min over k >= i of p_(k) · m / k, at most 1."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    out = np.empty(m)
    out[order] = q
    return out.reshape(p.shape)


def _variance_factor(sizes, n: int) -> np.ndarray:
    sizes = np.asarray(sizes, dtype=float)
    return 1.0 / sizes - 1.0 / n


def permutation_null(
    local: np.ndarray, global_: np.ndarray, *, sizes: tuple[int, int], n_permutations: int, seed: int = 0, chunk: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """1 - r of random regions of every size from ``sizes[0]`` to ``sizes[1]``: (sizes, draws (n_permutations, n_sizes)).

    ``local`` (n, k) holds f_j(i) of the included features for the n factuals of the pool. Each
    permutation of the pool gives one random region of every size (its first m factuals), from
    running sums; each column of ``draws`` is therefore n_permutations independent draws.
    """
    local = np.asarray(local, dtype=float)
    n = len(local)
    low, high = int(sizes[0]), int(sizes[1])
    ms = np.arange(low, high + 1)
    draws = np.empty((n_permutations, len(ms)))
    rng = np.random.default_rng(seed)
    for start in range(0, n_permutations, chunk):
        b = min(chunk, n_permutations - start)
        order = np.argsort(rng.random((b, n)), axis=1)
        running = np.cumsum(local[order], axis=1)[:, low - 1 : high, :] / ms[None, :, None]
        draws[start : start + b] = np.round(divergence(running, global_), _DECIMALS)
    return ms, draws


def _p_values(observed: np.ndarray, sizes: np.ndarray, null_sizes: np.ndarray, null: np.ndarray, n: int) -> np.ndarray:
    """Permutation p-values of ``observed`` 1 - r at ``sizes``, against the draws of the same and somewhat larger sizes.

    A region of m factuals is compared, after scaling by 1/m - 1/n, with the draws of every size m'
    >= m whose 1/m' - 1/n is within a factor of :data:`BAND_RATIO` of its own. The scaled null grows
    (slowly) with the size (1 - r saturates for small, noisy regions), so the larger sizes make the
    p-value conservative, never optimistic; the draws of size m itself are always among them.
    """
    factor_null = _variance_factor(null_sizes, n)
    scaled_null = np.sort(null / factor_null[None, :], axis=0)
    factor = _variance_factor(sizes, n)
    scaled = observed / factor * (1 - 1e-9)  # a hair of tolerance: equal values (after rounding) tie
    first = np.searchsorted(null_sizes, sizes)
    last = np.searchsorted(-factor_null, -factor / BAND_RATIO, side="right") - 1  # factor_null decreases with size
    larger = np.zeros(len(observed))
    for k in range(len(null_sizes)):
        at = (first <= k) & (last >= k)
        if at.any():
            larger[at] += len(scaled_null) - np.searchsorted(scaled_null[:, k], scaled[at], side="left")
    draws = (last - first + 1) * len(scaled_null)
    return (1 + larger) / (1 + draws)


# -- candidates ------------------------------------------------------------------------------
def candidate_conditions(task: TaskSpec, rows: Sequence[int], *, bins: int = 4) -> list[tuple[dict, np.ndarray]]:
    """Single conditions over ``rows`` (pool order): (condition, bool mask over rows), every feature.

    A categorical level (=); a range of consecutive ordinal levels (= for one level, between for
    more; ranges whose ends are levels no row has are left out, they repeat a narrower one); a range
    of consecutive quantile bins of a number (:func:`~flex_core.regions._pool.quantile_bins`), as
    between its lowest and highest value among ``rows`` (= when they are equal). Ranges that take
    every row are left out.
    """
    frame = task.frame.loc[np.asarray(rows, dtype=int)]
    out: list[tuple[dict, np.ndarray]] = []
    for f in task.features:
        column = frame[f.name]
        if f.kind == "categorical":
            values = column.to_numpy(dtype=object)
            for level in f.levels:
                mask = values == level
                if mask.any() and not mask.all():
                    out.append(({"feature": f.name, "op": "=", "value": level}, mask))
        elif f.is_ordinal:
            lookup = {level: i for i, level in enumerate(f.levels)}
            codes = np.array([lookup.get(v, -1) for v in column.to_numpy(dtype=object)])
            present = [i for i in range(len(f.levels)) if (codes == i).any()]
            for a_pos, a in enumerate(present):
                for b in present[a_pos:]:
                    mask = (codes >= a) & (codes <= b)
                    if mask.all():
                        continue
                    value = f.levels[a] if a == b else [f.levels[a], f.levels[b]]
                    out.append(({"feature": f.name, "op": "=" if a == b else "between", "value": value}, mask))
        else:
            values = column.to_numpy(dtype=float)
            parts = quantile_bins(values, bins)
            for first in range(len(parts)):
                for last in range(first, len(parts)):
                    if first == 0 and last == len(parts) - 1:
                        continue
                    mask = np.logical_or.reduce([parts[k][0] for k in range(first, last + 1)])
                    low, high = number_value(parts[first][1]), number_value(parts[last][2])
                    condition = (
                        {"feature": f.name, "op": "=", "value": low} if low == high
                        else {"feature": f.name, "op": "between", "value": [low, high]}
                    )
                    out.append((condition, mask))
    return out


@dataclass(frozen=True)
class _Scored:
    """Every candidate tested, as arrays: condition indices (second -1 for one condition), size, F, p, q."""

    pairs: np.ndarray
    sizes: np.ndarray
    frequency: np.ndarray
    divergence: np.ndarray
    p: np.ndarray
    q: np.ndarray
    chance: np.ndarray
    counts: dict


def discover(
    local: np.ndarray,
    include: np.ndarray,
    masks: np.ndarray,
    features_of: np.ndarray,
    *,
    max_conditions: int = 2,
    min_support: int = 20,
    n_permutations: int = 1000,
    seed: int = 0,
    chunk: int = 2048,
) -> _Scored:
    """Score every candidate over a pool: the arithmetic of :func:`find_regions`, on arrays only.

    Parameters
    ----------
    local : ndarray (n, n_features)
        f_j(i) of the pool's factuals (no NaN rows).
    include : bool ndarray (n_features,)
        Features r and the L1 shift are computed over (the mutable ones).
    masks : bool ndarray (n_conditions, n)
        Single conditions over the pool; ``features_of`` (n_conditions,) the feature each is on.
    """
    local = np.asarray(local, dtype=float)
    n = len(local)
    low, high = int(min_support), n - int(min_support)
    g = local.mean(axis=0)
    if np.ptp(g[include]) <= 1e-12:
        raise ConfigError(
            "Every mutable feature has the same F over the pool, so r cannot tell regions apart; "
            "try another τ or more factuals."
        )
    if high < low:
        raise ConfigError(
            f"{n} factuals with a counterfactual cannot hold a region of {min_support} and as many outside it; "
            "lower min_support or raise n_factuals."
        )
    masks = np.asarray(masks, dtype=bool)
    single_sizes = masks.sum(axis=1)
    keep = (single_sizes >= low) & (single_sizes <= high)
    singles = np.flatnonzero(keep)
    as_float = masks[singles].astype(np.float64)
    candidates = [np.column_stack([singles, np.full(len(singles), -1)])]
    candidate_sizes = [single_sizes[singles]]
    if max_conditions >= 2 and len(singles) > 1:
        overlap = np.rint(as_float @ as_float.T).astype(int)
        i, j = np.triu_indices(len(singles), k=1)
        size = overlap[i, j]
        ok = (
            (features_of[singles][i] != features_of[singles][j])
            & (size >= low) & (size <= high)
            # Equal to one of its conditions: the same members as a simpler rule.
            & (size != single_sizes[singles][i]) & (size != single_sizes[singles][j])
        )
        candidates.append(np.column_stack([singles[i[ok]], singles[j[ok]]]))
        candidate_sizes.append(size[ok])
    pairs = np.concatenate(candidates).astype(int)
    sizes = np.concatenate(candidate_sizes).astype(int)
    # One test per distinct set of members (the first candidate keeps it: singles come first).
    bits = np.packbits(_candidate_masks(masks, pairs), axis=1)
    _, first = np.unique(bits, axis=0, return_index=True)
    unique = np.zeros(len(pairs), bool)
    unique[first] = True
    same_members = int((~unique).sum())
    pairs, sizes = pairs[unique], sizes[unique]
    frequency = np.empty((len(pairs), local.shape[1]))
    for start in range(0, len(pairs), chunk):
        block = _candidate_masks(masks, pairs[start : start + chunk]).astype(np.float64)
        frequency[start : start + chunk] = block @ local / sizes[start : start + chunk, None]
    observed = np.round(divergence(frequency[:, include], g[include]), _DECIMALS)
    if len(pairs):
        null_sizes, null = permutation_null(local[:, include], g[include], sizes=(low, high),
                                            n_permutations=n_permutations, seed=seed)
        p = _p_values(observed, sizes, null_sizes, null, n)
        chance = np.quantile(null, CHANCE_QUANTILE, axis=0)[sizes - low]
    else:
        p, chance = np.empty(0), np.empty(0)
    counts = {"conditions": int(len(singles)), "tested": int(len(pairs)), "same_members": same_members}
    return _Scored(pairs=pairs, sizes=sizes, frequency=frequency, divergence=observed, p=p, q=benjamini_hochberg(p),
                   chance=chance, counts=counts)


def _candidate_masks(masks: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    first = masks[pairs[:, 0]]
    second = np.where(pairs[:, 1:2] >= 0, masks[np.maximum(pairs[:, 1], 0)], True)
    return first & second


def _subset_means(values: np.ndarray, size: int, rng: np.random.Generator, draws: int) -> np.ndarray:
    """The mean row of ``draws`` uniform random subsets of ``size`` of the rows of ``values``: shape (draws, k).

    Each draw's subset is the rows with the ``size`` smallest of its uniform numbers, as a sort would pick them;
    the size-th smallest number marks them at a fraction of a sort's cost, and a matrix product averages them.
    Equal numbers (never seen in doubles) would mark more: then a stable sort's order decides.
    """
    numbers = rng.random((draws, len(values)))
    chosen = numbers <= np.partition(numbers, size - 1, axis=1)[:, size - 1 : size]
    if (chosen.sum(axis=1) != size).any():
        chosen = np.zeros(numbers.shape, bool)
        np.put_along_axis(chosen, np.argsort(numbers, axis=1, kind="stable")[:, :size], True, axis=1)
    return chosen @ values / size


def _adds_to(parent: np.ndarray, size: int, child_divergence: float, local: np.ndarray, global_: np.ndarray,
             rng: np.random.Generator, *, siblings: int, draws: int = 200) -> bool:
    """Whether a region of ``size`` factuals inside ``parent`` (a mask) diverges more than a random subset of it would.

    ``local`` and ``global_`` hold the included features only. The region is compared with 1 - r over
    ``draws`` random subsets of the parent of its size, at the level 0.05 / ``siblings`` (the
    two-condition regions tested inside this parent: the best of many random subsets is high by
    chance): above their 95th percentile and above their mean + z·sd, z the normal quantile of
    1 - 0.05 / siblings.
    """
    members = np.flatnonzero(parent)
    if size >= len(members):
        return False
    if child_divergence <= divergence(local[members].mean(axis=0), global_):
        return False  # no more divergent than the condition alone: random parts of it are, on average, more
    null = np.round(divergence(_subset_means(local[members], size, rng, draws), global_), _DECIMALS)
    z = NormalDist().inv_cdf(1 - PRUNING_LEVEL / max(int(siblings), 1))
    threshold = max(float(np.quantile(null, CHANCE_QUANTILE)), float(null.mean() + z * null.std()))
    return bool(child_divergence > threshold)


def _fill_list(scored: _Scored, order: np.ndarray, masks: np.ndarray, local: np.ndarray, global_: np.ndarray, *,
               seed: int, top: int) -> tuple[list[int], int, int]:
    """The candidates shown, in ``order``: at most ``top``, without the two-condition regions that add nothing to
    one of their conditions (:func:`_adds_to`) or near copies of one already listed (:data:`NEAR_COPY`).

    ``local`` and ``global_`` hold the included features only. Returns (shown, pruned, near copies).
    """
    rng = np.random.default_rng([int(seed), 1])
    two = scored.pairs[scored.pairs[:, 1] >= 0]
    siblings = np.bincount(two.ravel(), minlength=len(masks))  # two-condition regions tested inside each condition
    listed = np.zeros((min(top, len(order), 64), masks.shape[1]), dtype=np.float32)  # the shown regions' members
    shown: list[int] = []
    pruned = near_copies = 0
    for k in order:
        if len(shown) == top:
            break
        members = _candidate_masks(masks, scored.pairs[k : k + 1])[0]
        size = int(scored.sizes[k])
        if shown:
            both = listed[: len(shown)] @ members.astype(np.float32)
            either = listed[: len(shown)].sum(axis=1) + size - both
            if (both >= NEAR_COPY * either).any():
                near_copies += 1
                continue
        a, b = (int(v) for v in scored.pairs[k])
        if b >= 0 and not all(_adds_to(masks[c], size, float(scored.divergence[k]), local, global_, rng,
                                       siblings=siblings[c]) for c in (a, b)):
            pruned += 1
            continue
        if len(shown) == len(listed):  # grown by doubling: ``top`` may be large and most lists are short
            listed = np.concatenate([listed, np.zeros_like(listed)])
        listed[len(shown)] = members
        shown.append(int(k))
    return shown, pruned, near_copies


# -- the run ---------------------------------------------------------------------------------
def find_regions(
    store: CounterfactualStore,
    *,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    n_factuals: int = 1000,
    max_conditions: int = 2,
    min_support: int = 20,
    fdr: float = 0.1,
    n_permutations: int = 1000,
    bins: int = 4,
    top: int = 20,
    replicate: int = 0,
    labelled: bool = True,
    progress: Progress | None = None,
) -> RegionsResult:
    """The regions whose F differs most from the pool's, tested against a permutation null with FDR control.

    ``replicate=K`` refits the model K times (:func:`flex_core.importance.refit_models`) and marks, per region
    shown, whether it replicates under each refit (:func:`replication`); ``labelled``: whether a user's model may
    be refitted (y was given).

    See the module's notes for the candidates, the measure, the test and the pruning. The pool is
    the sample ``explain_global(n_factuals=n_factuals)`` takes (same seed), generated once through
    the store (``progress`` reports it); a τ change recomputes only f_j(i). ``top`` caps the regions
    returned. Open one with ``explainer.explain_region(rule=region.rule, n_factuals=n_factuals)``.
    """
    check_discovery_options(max_conditions=max_conditions, min_support=min_support, fdr=fdr, n_permutations=n_permutations,
                   bins=bins, top=top)
    settings: dict[str, Any] = {
        "measure": DIVERGENCE, "l1_shift": L1_SHIFT, "null": NULL, "pruning": PRUNING,
        "divergence_interval": PEARSON_INTERVAL_CONFIG, "fdr": fdr, "n_permutations": n_permutations,
        "max_conditions": max_conditions, "min_support": min_support, "bins": bins, "top": top,
        "rank": "significant regions by divergence, then the others by p-value",
    }
    if replicate:
        settings["replication"] = REPLICATION
    pool = build_pool(store, n_factuals=n_factuals, tau=tau, progress=progress, discovery=settings)
    found = regions_of_pool(store.task, pool, seed=store.seed, **{k: settings[k] for k in (
        "max_conditions", "min_support", "fdr", "n_permutations", "bins", "top")})
    return replication(store, found, replicate, tau=tau, labelled=labelled) if replicate else found


def regions_of_pool(
    task: TaskSpec, pool: Pool, *, seed: int, max_conditions: int, min_support: int, fdr: float, n_permutations: int,
    bins: int, top: int,
) -> RegionsResult:
    result = pool.result
    usable = pool.has_counterfactual
    rows = pool.rows[usable]
    local = result.local_frequencies[usable]
    include = ~np.array(result.immutable, dtype=bool)
    if include.sum() < 3:
        raise ConfigError("Region discovery compares F over the mutable features with r, which needs at least three of them.")
    notes = list(pool.notes)
    if (~usable).any():
        left = int((~usable).sum())
        notes.append(f"{plural(left, 'sampled case')} without a way out {'is' if left == 1 else 'are'} left out of the "
                     "regions.")
    conditions = candidate_conditions(task, rows, bins=bins)
    masks = np.array([m for _, m in conditions], dtype=bool).reshape(len(conditions), len(rows))
    features_of = np.array([task.feature_names.index(c["feature"]) for c, _ in conditions], dtype=int)
    scored = discover(local, include, masks, features_of, max_conditions=max_conditions, min_support=min_support,
                      n_permutations=n_permutations, seed=seed)
    g = local.mean(axis=0)
    significant, undecided = _significant(scored, fdr, g, include)
    # Significant first, by divergence (ties: the larger region); then the others by p-value.
    order = np.lexsort((-scored.sizes, -scored.divergence, np.where(significant, 0.0, scored.p),
                        np.where(significant, -scored.divergence, 0.0), ~significant))
    shown, pruned, near_copies = _fill_list(scored, order, masks, local[:, include], g[include], seed=seed, top=top)
    if near_copies:
        one = near_copies == 1
        notes.append(f"{plural(near_copies, 'region')} {'was' if one else 'were'} left out of the list: "
                     f"{'it is' if one else 'each is'} a near copy of a region above (at least {NEAR_COPY:.0%} of the "
                     "cases in either are in both).")
    labels = dict(zip(result.feature_names, result.display_names))
    regions = tuple(
        _region(task, scored, k, conditions, rows, g, include, labels, significant=bool(significant[k])) for k in shown
    )
    counts = {
        **scored.counts,
        "significant": int(significant.sum()),
        # Below the FDR level, but their divergence interval reaches 0 (or is undefined): not called significant.
        "interval_reaches_zero": int(undecided),
        "pruned": pruned,
        "near_copies": near_copies,
        "shown": len(regions),
    }
    return RegionsResult(
        regions=regions,
        feature_names=tuple(result.feature_names),
        display_names=tuple(result.display_names),
        kinds=tuple(result.kinds),
        immutable=tuple(result.immutable),
        global_frequency=g,
        global_frequency_ci=_computed(result.frequency_ci),
        factuals=rows.copy(),
        counts=counts,
        generator=dict(result.generator),
        model=dict(result.model),
        config=dict(result.config),
        notes=tuple(notes),
    )


def replication(store: CounterfactualStore, found: RegionsResult, k: int, *, tau, labelled: bool = True,
                draws: int = 200) -> RegionsResult:
    """``found`` with each region marked per refit: does it diverge there beyond chance? (:data:`REPLICATION`)

    Each refit's pool is the pool's factuals it also rejects, with counterfactuals from the same generator and
    settings; a region replicates under a refit when its members there (at least two) have a 1 - r above the
    95th percentile of 1 - r over ``draws`` random sets of as many factuals of that pool.
    """
    from ..counterfactuals._spread import uses_cluster
    from ..importance import flex_importance
    from ..importance._retrain import refit_models

    task = store.task
    include = ~np.array(found.immutable, dtype=bool)
    marks = np.zeros((len(found.regions), 0), bool)
    rng = np.random.default_rng([int(store.seed), 2])
    for refit in refit_models(task, store.model, k, labelled=labelled, cluster=uses_cluster(store.generator)):
        other = CounterfactualStore(task, refit, store.generator, n_cf=store.n_cf, seed=store.seed,
                                    features_to_vary=store.features_to_vary, permitted_range=store.permitted_range,
                                    refine=store.refine)
        rows = np.intersect1d(found.factuals, other.factual_rows)
        local = flex_importance(other.ensure(rows), task, tau=tau, ranges=store.ranges, intervals=False).local_frequencies
        usable = ~np.isnan(local).all(axis=1)
        rows, local = rows[usable], local[usable][:, include]
        g = local.mean(axis=0)
        column = []
        for region in found.regions:
            members = np.isin(rows, region.members)
            size = int(members.sum())
            if size < 2 or size >= len(rows):
                column.append(False)
                continue
            chance = np.quantile(np.round(divergence(_subset_means(local, size, rng, draws), g), _DECIMALS),
                                 CHANCE_QUANTILE)
            column.append(bool(divergence(local[members].mean(axis=0)[None], g)[0] > chance))
        marks = np.column_stack([marks, column])
    regions = tuple(replace(r, replicated=tuple(bool(v) for v in marks[i])) for i, r in enumerate(found.regions))
    counts = {**found.counts, "refits": int(k),
              "significant_not_replicated": int(sum(r.significant and not all(r.replicated or ()) for r in regions))}
    return replace(found, regions=regions, counts=counts)


def _significant(scored: _Scored, fdr: float, g: np.ndarray, include: np.ndarray) -> tuple[np.ndarray, int]:
    """Which candidates are significant: q <= ``fdr`` and a divergence interval above 0 (module notes, **Test**);
    and how many met the FDR level with an interval reaching 0 or undefined."""
    passed = np.flatnonzero(scored.q <= fdr)
    significant = np.zeros(len(scored.q), bool)
    for k in passed:
        r_high = pearson_interval(scored.frequency[k], int(scored.sizes[k]), g, include)[1]
        significant[k] = bool(r_high < 1.0)  # 1 - r_high > 0; NaN (no honest interval) is not significant
    return significant, int(len(passed) - significant.sum())


def _region(task, scored: _Scored, k: int, conditions, rows, g, include, labels, *, significant: bool) -> Region:
    a, b = (int(v) for v in scored.pairs[k])
    rule = tuple(dict(conditions[c][0]) for c in (a, b) if c >= 0)
    mask = conditions[a][1] & (conditions[b][1] if b >= 0 else True)
    frequency = scored.frequency[k]
    size = int(scored.sizes[k])
    r_low, r_high = pearson_interval(frequency, size, g, include)
    r = compare_with_global(frequency, g, include)[0]  # NaN when the region's F has no spread (1 - r is then 1)
    shift = np.where(include, frequency - g, np.nan)
    names = task.feature_names

    def ranked(indices):
        return tuple(
            {"name": names[j], "label": labels[names[j]], "frequency": float(frequency[j]),
             "global_frequency": float(g[j]), "shift": float(shift[j])}
            for j in indices
        )

    valid = np.flatnonzero(~np.isnan(shift))
    up = [j for j in valid[np.argsort(-shift[valid], kind="stable")] if shift[j] > 1e-12][:TOP_FEATURES]
    down = [j for j in valid[np.argsort(shift[valid], kind="stable")] if shift[j] < -1e-12][:TOP_FEATURES]
    return Region(
        rule=rule,
        text=rule_text(rule, labels, features=task.features),
        size=size,
        members=tuple(int(m) for m in rows[mask]),
        frequency=frequency.copy(),
        divergence=float(scored.divergence[k]),
        divergence_interval=(1.0 - r_high, 1.0 - r_low),
        pearson_r=r,
        pearson_r_interval=(r_low, r_high),
        l1_shift=float(np.abs(frequency - g)[include].sum()),
        top_up=ranked(up),
        top_down=ranked(down),
        p_value=float(scored.p[k]),
        q_value=float(scored.q[k]),
        significant=significant,
        chance_divergence=float(scored.chance[k]),
    )


def check_discovery_options(*, max_conditions, min_support, fdr, n_permutations, bins, top) -> None:
    if max_conditions not in (1, 2):
        raise ConfigError(
            f"max_conditions is 1 or 2, not {max_conditions!r} (two conditions already make thousands of candidates)."
        )
    check_each(min_support=min_support, n_permutations=n_permutations, bins=bins, top=top)
    if not 0 < float(fdr) < 1:
        raise ConfigError(f"fdr is a false-discovery rate between 0 and 1 (e.g. 0.1), not {fdr!r}.")


def _computed(intervals: np.ndarray | None) -> np.ndarray:
    """The intervals of a result computed here (only a result read back from an old file lacks them)."""
    if intervals is None:
        raise ValueError("The pool's global result has no frequency intervals.")
    return intervals

"""Minimal counterfactuals: no change can be reverted or shrunk without losing validity.

Generators draw new values far from the factual (DiCE random uniformly over the training
range, ``batch`` from the training rows), and add changes the model does not need (passengers),
so the size of a change, and with it μ_j and F_j at τ >= 0.5, and even which features change,
describe the sampler rather than the model. :func:`minimal_rows` makes a valid counterfactual
minimal, in this order (every step is one batched model call over all rows at once):

1. **Shrink.** For every (counterfactual, changed continuous/ordinal feature) pair, search the
   segment from the factual's value (clipped to the permitted range) to the counterfactual's
   value, with the other features held at the counterfactual's values. Each call scores, for all
   pairs at once, the middle of the remaining segment (bisection; in the first call also the
   clipped value where the factual's lies outside the permitted range), from the fifth call on
   three points that quarter it: the value kept is the point nearest the factual that the model
   still predicts desirable. The search stops when the segment is no longer than
   ``range_j / 1000`` (and at least one unit for integers and ordinal levels), so at most about
   seven calls and thirteen rows per pair. The factual's value itself is not scored here: a
   change the model does not need at all is reverted in step 2, which follows every shrink. A
   feature the caller asked to shrink first (``first``, with the other changes held) is not
   shrunk again here.
   All of a counterfactual's shrunk features are then applied together and scored (one shrunk
   feature alone is the row its search last scored valid); where the combination is no longer
   valid, they are applied one by one, largest reduction first, and the longest valid prefix is kept.
2. **Revert passengers** (:func:`revert_passengers`), for every kind of feature: each pass scores
   every single revert of every open row; the reverts that keep a row valid are ranked by the
   P(undesirable) they leave, the 2, 3, ... best are tried together, and the largest valid group
   is applied. A row closes when no single revert keeps it valid.
2b. **Revert what the others make up for** (:func:`revert_stretched`): a change that cannot be reverted
   alone, but can with every other number's change stretched by the alternatives tolerance (2% of its
   range), is no other way out (:mod:`._alternatives`): the sparser row is kept.
3. If a change went (shrunk to the factual's value or reverted) or step 2b changed the row, it is shrunk and
   cleared of passengers once more (that can leave room to shrink another change); where the cycles run out
   right after such a step, one more shrink and revert of step 2 end it, so the last step always shrinks.

Every returned counterfactual is a row the model scored as desirable in these calls, so validity
stays 100% by construction, and the last step is always step 2, so no returned counterfactual
holds a change that can be reverted alone. Integer features and ordinal levels stay integers,
values stay inside the permitted range (each point lies between the clipped factual value and
the counterfactual's value).

Shrinking maps counterfactuals that changed the same features onto the same point, so
:func:`refine_counterfactuals` merges the copies (see :func:`~._set.merge_copies`): FLEX averages
over distinct counterfactuals.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .._errors import ConfigError
from ..data import TaskSpec
from ..models import FittedModel
from ._alternatives import ALTERNATIVE_TOLERANCE, not_alternatives
from ._scoring import resolve_cores, scorer_for
from ._set import RELATIVE_TOLERANCE, CounterfactualSet, copy_tolerance, merge_copies, resolve_permitted_range
from ._tally import with_call
from ._validity import Validity

__all__ = [
    "REFINE_MODES",
    "RELATIVE_TOLERANCE",
    "MinimalPlan",
    "CountingScorer",
    "default_refine",
    "check_refine",
    "minimal_rows",
    "revert_passengers",
    "revert_stretched",
    "refine_counterfactuals",
]

#: "minimal": shrink every continuous/ordinal change and revert passengers; "none": keep the generator's values.
REFINE_MODES = ("minimal", "none")

#: Points scored per open pair in each bisection call (the last entry repeats): one while most pairs are
#: still open, then three (a stretch quartered) for the long ones left, since a call costs about as
#: much as a hundred rows. Fixed per call number, never by how many pairs are open: a pair's points,
#: and with them where it stops, must not depend on the other counterfactuals in its batch.
_POINTS_PER_CALL = (1, 1, 1, 1, 3)
#: Shrink-and-revert cycles at most (a revert in the second cycle is kept; the result is still valid).
_CYCLES = 2

PUndesirable = Callable[[np.ndarray], np.ndarray]


def default_refine(generator_name: str) -> str:
    """``"minimal"`` for the native ``batch`` generators, ``"none"`` for DiCE (as the paper ran it)."""
    return "none" if generator_name.startswith("dice-") else "minimal"


def check_refine(refine: str) -> str:
    if refine not in REFINE_MODES:
        raise ConfigError(f"Unknown refine mode {refine!r}; choose one of {', '.join(REFINE_MODES)}.")
    return refine


@dataclass(frozen=True, eq=False)
class MinimalPlan:
    """Per feature, what shrinking may do: its steps, stopping tolerance and permitted codes.

    Built once per (task, permitted range, training ranges) with :meth:`build`; plain arrays, so
    it travels to worker processes cheaply.
    """

    stepwise: np.ndarray  # (F,) integers and levels move in whole units
    movable: np.ndarray  # (F,) continuous or ordinal: a change can shrink
    tolerance: np.ndarray  # (F,) the grid step of a shrunk value (see ``copy_tolerance``): values closer are copies
    spans: np.ndarray  # (F,) training range, or the number of levels - 1
    low: np.ndarray  # (F,) permitted range in codes (-inf when open)
    high: np.ndarray  # (F,)
    level_masks: dict = field(default_factory=dict)  # ordinal j -> allowed levels (bool per code)

    @classmethod
    def build(cls, task: TaskSpec, permitted: Mapping[str, Sequence], ranges: np.ndarray | None = None) -> MinimalPlan:
        """``permitted`` as :func:`resolve_permitted_range` gives it; ``ranges``: training ranges (default: the data's)."""
        ranges = task.ranges() if ranges is None else np.asarray(ranges, dtype=float)
        stepwise = np.array([(not f.is_continuous) or f.integer for f in task.features])
        movable = np.array([f.is_continuous or f.kind == "ordinal" for f in task.features])
        levels = np.array([np.nan if f.is_continuous else len(f.levels) - 1 for f in task.features], dtype=float)
        spans = np.where(np.isnan(ranges), levels, ranges)
        # Integers stop at one unit, or at range/1000 when that is larger (an amount in the millions
        # needs no more precision than a float feature of the same range); values closer are copies.
        tolerance = copy_tolerance(task, ranges)
        low, high = np.full(len(task.features), -np.inf), np.full(len(task.features), np.inf)
        masks = {}
        for j, f in enumerate(task.features):
            if f.name not in permitted:
                continue
            if f.is_continuous:
                low[j], high[j] = permitted[f.name]
            elif f.kind == "ordinal":
                allowed = [f.levels.index(v) for v in permitted[f.name]]
                low[j], high[j] = min(allowed), max(allowed)
                masks[j] = np.isin(np.asarray(f.levels, dtype=object), permitted[f.name])
        return cls(stepwise, movable, tolerance, spans, low, high, masks)

    def allowed(self, values: np.ndarray, features: np.ndarray) -> np.ndarray:
        """Which candidate codes the permitted levels of an ordinal feature allow (everything else passes)."""
        ok = np.ones(values.shape, dtype=bool)
        for j, mask in self.level_masks.items():
            rows = np.broadcast_to(features == j, values.shape)
            ok[rows] = mask[values[rows].astype(int)]
        return ok


def minimal_rows(
    p_undesirable: PUndesirable, cfs: np.ndarray, factuals: np.ndarray, plan: MinimalPlan, *, first: np.ndarray | None = None,
    validity: Validity | None = None,
) -> np.ndarray:
    """Valid counterfactuals made minimal (see the module docstring), shape (n, F) in and out.

    Parameters
    ----------
    p_undesirable : callable
        P(undesirable) of coded rows, (m, F) -> (m,); valid as ``validity`` says (:mod:`._validity`).
    cfs, factuals : ndarray of shape (n, F)
        Valid counterfactuals (codes) and the factual of each.
    first : ndarray of int, shape (n,), optional
        A feature per row to shrink on its own before the others (-1: none). Where a trade-off
        exists, shrinking one change leaves the others as they are: which goes first decides
        where on the trade-off the counterfactual lands.
    validity : Validity, optional
        When a row is valid (:mod:`._validity`); default the margin alone (no neighbourhood without ranges).
    """
    validity = Validity() if validity is None else validity
    out = np.array(cfs, dtype=float, copy=True)
    # The feature shrunk first is already as small as the other changes, held as they are, allow:
    # shrinking it again in the same state would score its bisection a second time for the same point.
    done = np.full(len(out), -1) if first is None else np.asarray(first)
    if first is not None:
        out = _shrink_first(p_undesirable, out, factuals, plan, done, validity)
    todo = np.arange(len(out))
    for _ in range(_CYCLES):
        if len(todo) == 0:
            break
        before = (out[todo] != factuals[todo]).sum(axis=1)
        shrunk = _shrink_rows(p_undesirable, out[todo], factuals[todo], plan, validity, skip=done[todo])
        cleared = revert_passengers(p_undesirable, shrunk, factuals[todo], validity=validity)
        stretched = revert_stretched(p_undesirable, cleared, factuals[todo], plan, validity)
        out[todo] = stretched
        # A change gone (shrunk to the factual's value or reverted) or a stretched revert leaves room to shrink again.
        todo = todo[((stretched != factuals[todo]).sum(axis=1) < before) | (stretched != cleared).any(axis=1)]
        done = np.full(len(out), -1)  # after a revert every change may shrink further
    if len(todo):
        # The cycles ran out right after a revert ({term 19, cibil 566} -> {cibil 566}, which 556 would do): shrink
        # those rows once more and clear their passengers, without another stretched revert, so the last step shrinks.
        shrunk = _shrink_rows(p_undesirable, out[todo], factuals[todo], plan, validity)
        out[todo] = revert_passengers(p_undesirable, shrunk, factuals[todo], validity=validity)
    return out


def _desirable(p_undesirable: PUndesirable, rows: np.ndarray, factuals: np.ndarray, validity: Validity) -> np.ndarray:
    if len(rows) == 0:
        return np.zeros(0, dtype=bool)
    return validity.check(p_undesirable, rows, factuals)


def _shrink_first(p_undesirable, cfs, factuals, plan: MinimalPlan, first: np.ndarray, validity: Validity) -> np.ndarray:
    """Each row with its ``first`` feature shrunk alone, the other changes held (every result scored valid)."""
    target = np.clip(factuals, plan.low, plan.high)
    rows = np.flatnonzero(first >= 0)
    feature = first[rows]
    movable = plan.movable[feature] & (cfs[rows, feature] != target[rows, feature]) & (cfs[rows, feature] != factuals[rows, feature])
    rows, feature = rows[movable], feature[movable]
    out = cfs.copy()
    if len(rows):
        out[rows, feature] = _shrink(p_undesirable, cfs, factuals, rows, feature, plan, validity)
    return out


def _shrink_rows(p_undesirable, cfs, factuals, plan: MinimalPlan, validity: Validity, *,
                 skip: np.ndarray | None = None) -> np.ndarray:
    """Every movable change of every row shrunk with the others held, then combined; ``skip``: a feature per row left as it is (-1: none)."""
    target = np.clip(factuals, plan.low, plan.high)  # the factual's value, or the nearest permitted one
    shrinkable = (cfs != target) & (cfs != factuals) & plan.movable
    if skip is not None:
        rows = np.flatnonzero(skip >= 0)
        shrinkable[rows, skip[rows]] = False
    pair_cf, pair_feature = np.nonzero(shrinkable)
    if len(pair_cf) == 0:
        return cfs.copy()
    refined_value = _shrink(p_undesirable, cfs, factuals, pair_cf, pair_feature, plan, validity)
    return _combine(p_undesirable, cfs, factuals, pair_cf, pair_feature, refined_value, plan.spans, validity)


def revert_passengers(
    p_undesirable: PUndesirable, cfs: np.ndarray, factuals: np.ndarray, *, validity: Validity | None = None
) -> np.ndarray:
    """Revert changed features (any kind) to the factual's values while the prediction stays desirable.

    Each pass, for all open rows at once: one model call scores every single revert; the
    features whose revert keeps the row valid are ranked by the P(undesirable) it leaves, and
    a second call scores reverting the 2, 3, ... best of them together; the largest valid group
    is applied. A row closes when no single revert keeps it valid. Cost per pass: about 2k rows
    for k changes.

    Parameters
    ----------
    cfs, factuals : ndarray of shape (n, F)
        Valid counterfactuals and the factual each belongs to.
    validity : Validity, optional
        What a revert must keep (:mod:`._validity`); default the margin alone.

    Returns
    -------
    ndarray of shape (n, F): each row with no change that can be reverted alone.
    """
    validity = Validity() if validity is None else validity
    n = len(cfs)
    current = np.array(cfs, dtype=float, copy=True)
    open_ = np.ones(n, dtype=bool)
    while True:
        changed = current != factuals
        open_ &= changed.sum(axis=1) >= 2  # a single change cannot be reverted and stay a counterfactual
        cand_idx, feat_idx = np.nonzero(changed & open_[:, None])
        if len(cand_idx) == 0:
            break
        singles = current[cand_idx].copy()
        singles[np.arange(len(singles)), feat_idx] = factuals[cand_idx, feat_idx]
        p = validity.score(p_undesirable, singles, factuals[cand_idx])  # ranks the reverts by what they leave
        ok = validity.desirable(p)
        open_[:] = False
        if not ok.any():
            break
        cand_idx, feat_idx, p = cand_idx[ok], feat_idx[ok], p[ok]
        order = np.lexsort((feat_idx, p, cand_idx))
        cand_idx, feat_idx = cand_idx[order], feat_idx[order]
        starts = np.r_[True, cand_idx[1:] != cand_idx[:-1]]
        rank = np.arange(len(cand_idx)) - np.maximum.accumulate(np.where(starts, np.arange(len(cand_idx)), 0))
        # Row i reverts its candidate's features of rank 0..rank[i]: a running one-hot sum within each candidate.
        one_hot = np.zeros((len(cand_idx), current.shape[1]), dtype=int)
        one_hot[np.arange(len(cand_idx)), feat_idx] = 1
        running = np.cumsum(one_hot, axis=0)
        start_row = np.arange(len(cand_idx)) - rank
        revert = running - np.where((start_row > 0)[:, None], running[start_row - 1], 0) > 0
        chosen_row = np.flatnonzero(starts)  # the best single revert, valid by construction
        groups = np.flatnonzero(rank >= 1)
        if len(groups):
            trials = np.where(revert[groups], factuals[cand_idx[groups]], current[cand_idx[groups]])
            valid_groups = groups[validity.check(p_undesirable, trials, factuals[cand_idx[groups]])]
            # Rows are in rank order, so a candidate's last valid row is its largest valid group.
            best_row = np.full(n, -1)
            np.maximum.at(best_row, cand_idx[valid_groups], valid_groups)
            upgrade = best_row[cand_idx[chosen_row]]
            chosen_row = np.where(upgrade >= 0, upgrade, chosen_row)
        winners = cand_idx[chosen_row]
        current[winners] = np.where(revert[chosen_row], factuals[winners], current[winners])
        open_[winners] = True
    return current


def revert_stretched(
    p_undesirable: PUndesirable, cfs: np.ndarray, factuals: np.ndarray, plan: MinimalPlan, validity: Validity,
    tolerance: float = ALTERNATIVE_TOLERANCE,
) -> np.ndarray:
    """Revert a change that the other changes make up for within the alternatives tolerance.

    A counterfactual {speed 59, colour red} whose colour cannot be reverted alone ({speed 59} misses the
    margin) is still no other way out when {speed 58} is valid: it adds a feature to a sparser counterfactual
    and reduces the shared change by less than ``tolerance`` x the feature's span (:mod:`._alternatives`).
    For every row with two or more changes, one call scores, for each changed feature, the row with that
    feature reverted and every other continuous change stretched away from the factual by ``tolerance`` x its
    span (rounded down to the feature's grid step, inside the permitted range); the valid trial that leaves
    the lowest P(undesirable) is applied. The caller shrinks the row again afterwards.

    Returns
    -------
    ndarray of shape (n, F): the rows, each with at most one change reverted this way.
    """
    out = np.array(cfs, dtype=float, copy=True)
    changed = out != factuals
    rows = np.flatnonzero(changed.sum(axis=1) >= 2)
    if len(rows) == 0:
        return out
    step = np.where(plan.tolerance > 0, plan.tolerance, 1.0)
    reach = np.where(plan.movable & np.isfinite(plan.spans), np.floor(tolerance * np.nan_to_num(plan.spans) / step) * step, 0.0)
    stretched = np.clip(out[rows] + np.sign(out[rows] - factuals[rows]) * reach, plan.low, plan.high)
    stretched = np.where(changed[rows], stretched, out[rows])  # an unchanged value stays, even outside the range
    owner, feature = np.nonzero(changed[rows])
    trials = stretched[owner].copy()
    trials[np.arange(len(owner)), feature] = factuals[rows[owner], feature]
    p = validity.score(p_undesirable, trials, factuals[rows[owner]])
    ok = validity.desirable(p)
    if not ok.any():
        return out
    owner, trials, p = owner[ok], trials[ok], p[ok]
    order = np.lexsort((p, owner))
    first = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
    out[rows[owner[first]]] = trials[first]
    return out


def refine_counterfactuals(
    cfset: CounterfactualSet,
    task: TaskSpec,
    model: FittedModel,
    *,
    permitted_range: Mapping[str, Sequence] | None = None,
    ranges: np.ndarray | None = None,
    n_jobs: int = 1,
    validity: Validity | None = None,
) -> CounterfactualSet:
    """The set with every valid counterfactual made minimal, copies merged and non-alternatives dropped.

    Parameters
    ----------
    cfset : CounterfactualSet
        Counterfactuals of shape (n_queries, n_cf, n_features); invalid ones are returned unchanged.
    task, model : the task the codes belong to and the model that decides validity.
    permitted_range : mapping, optional
        The ranges the generator was given; a value never leaves them.
    ranges : ndarray of shape (n_features,), optional
        Training ranges, for the stopping tolerance (default: the task's data ranges).
    n_jobs : int, default 1
        Cores a forest's trees are spread over (-1: all); the result does not depend on it.
    validity : Validity, optional
        The rule a refined counterfactual keeps (default :class:`~._validity.Validity` on ``ranges``).
        The set's counterfactuals are checked against it first: one that does not meet it stays invalid.

    Returns
    -------
    CounterfactualSet
        Same shape; every returned counterfactual valid and minimal, distinct ones first in each
        query's slots (copies merged: fewer slots filled, counted in ``copies``);
        ``config["refine"] == "minimal"`` and the model calls and rows spent are added to
        ``seconds``/``model_rows`` and recorded in ``config``.
    """
    start = time.perf_counter()
    scorer = CountingScorer(scorer_for(model, task).with_threads(resolve_cores(n_jobs)))
    plan = MinimalPlan.build(task, resolve_permitted_range(task, permitted_range), ranges)
    validity = Validity().on(task, ranges) if validity is None else validity
    current = cfset.counterfactuals.copy()
    valid = cfset.valid.copy()
    query, slot = np.nonzero(valid)
    valid[query, slot] = validity.check(scorer, current[query, slot], cfset.factuals[query])
    query, slot = np.nonzero(valid)
    current[query, slot] = minimal_rows(scorer, current[query, slot], cfset.factuals[query], plan, validity=validity)
    merged = merge_copies(cfset.factuals, current, cfset.found, valid, plan.tolerance)
    cfs, found, valid, dropped = drop_non_alternatives(cfset.factuals, merged.counterfactuals, merged.found, merged.valid, plan)
    config = {**cfset.config, "refine": "minimal", "validity": validity.describe(), "alternatives_tolerance": ALTERNATIVE_TOLERANCE}
    # A call of its own, so its calls, rows and seconds add up when the set is cut and stacked (_tally).
    seconds = time.perf_counter() - start
    config = with_call(config, cfset.query_index, {"refine_model_calls": scorer.calls, "refine_model_rows": scorer.rows,
                                                   "refine_seconds": seconds, "seconds": seconds, "model_rows": scorer.rows})
    model_rows = cfset.model_rows + scorer.rows if cfset.model_rows >= 0 else cfset.model_rows
    return replace(
        cfset,
        counterfactuals=cfs,
        found=found,
        valid=valid,
        copies=cfset.copy_counts + merged.copies,
        dropped=np.asarray(cfset.dropped, dtype=int) + dropped,
        query_index=cfset.query_index.copy(),
        factuals=cfset.factuals.copy(),
        seconds=cfset.seconds + config["refine_seconds"],
        model_rows=model_rows,
        config=config,
    )


def drop_non_alternatives(factuals, counterfactuals, found, valid, plan: MinimalPlan):
    """The slots without the counterfactuals that are no other way out (:mod:`._alternatives`): emptied.

    Returns (counterfactuals, found, valid, dropped per query of shape (n_queries,)).
    """
    counterfactuals, found, valid = counterfactuals.copy(), found.copy(), valid.copy()
    dropped = np.zeros(len(valid), dtype=int)
    for q in np.flatnonzero(valid.sum(axis=1) >= 2):
        slots = np.flatnonzero(valid[q])
        gone = slots[not_alternatives(counterfactuals[q, slots], factuals[q], plan.spans, plan.movable)]
        counterfactuals[q, gone], found[q, gone], valid[q, gone] = np.nan, False, False
        dropped[q] = len(gone)
    return counterfactuals, found, valid, dropped


class CountingScorer:
    """P(undesirable) of coded rows, counting the calls and rows sent to the model (``model_rows``).

    Wraps the model's code scorer (the pipeline's encoding done in numpy; decoding every batch to a
    frame for the pipeline cost more than the forest). Shared by the search and the refinement.
    """

    def __init__(self, p_undesirable: PUndesirable):
        self.p_undesirable, self.calls, self.rows = p_undesirable, 0, 0

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        if len(codes) == 0:
            return np.zeros(0)
        self.calls += 1
        self.rows += len(codes)
        return self.p_undesirable(codes)


def _shrink(p_undesirable, cfs, factuals, pair_cf, pair_feature, plan: MinimalPlan, validity: Validity):
    """Per (counterfactual, feature) pair: the value nearest the target that keeps the counterfactual valid.

    The target is the factual's value, or the nearest permitted one. The search runs on a grid
    anchored at it, in steps of the feature's tolerance (whole units for integers, one level for
    ordinal features): point k is ``target + k * step`` toward the counterfactual's value, for k
    below the number of steps that value lies away, and that value itself last. ``lo`` is the
    index known invalid, ``hi`` the index known valid; bisection ends when they are one step apart.
    The target is scored only where it is a permitted bound rather than the factual's value: a
    change that the model does not need at all is reverted by the passenger pass that follows
    every shrink (:func:`minimal_rows`), so scoring the factual's value here would only repeat it.
    Counterfactuals that reach the same boundary from different starting values so end on the
    same grid point: the same value, not one of many within a tolerance. Shapes: (n_pairs,).
    """
    factual_value = factuals[pair_cf, pair_feature].astype(float)
    start = np.clip(factual_value, plan.low[pair_feature], plan.high[pair_feature])
    score_target = start != factual_value
    end = cfs[pair_cf, pair_feature].astype(float)
    step = plan.tolerance[pair_feature]
    sign = np.sign(end - start)
    last = np.ceil(np.abs(end - start) / step - 1e-9).astype(np.int64)  # the index of the counterfactual's value

    def value(k, at):
        """Grid point k of the pairs ``at``; k may have a second axis (several points per pair)."""
        shape = (-1,) + (1,) * (k.ndim - 1)
        grid = start[at].reshape(shape) + sign[at].reshape(shape) * k * step[at].reshape(shape)
        return np.where(k >= last[at].reshape(shape), end[at].reshape(shape), grid)

    lo = np.where(score_target, -1, 0).astype(np.int64)  # -1: the target not scored yet
    hi = last.copy()
    open_ = hi - lo > 1
    call = 0
    while open_.any():
        idx = np.flatnonzero(open_)
        m = _POINTS_PER_CALL[min(call, len(_POINTS_PER_CALL) - 1)]  # m points split the open stretch into m + 1
        base = np.maximum(lo[idx], 0)
        ks = base[:, None] + ((hi[idx] - base)[:, None] * np.arange(1, m + 1)[None, :]) // (m + 1)
        scored = np.ones(ks.shape, dtype=bool)
        if call == 0:  # a permitted bound as the target: scored too
            ks = np.column_stack([np.zeros(len(idx), dtype=np.int64), ks])
            scored = np.column_stack([score_target[idx], scored])
        values = value(ks, idx)
        rows = np.repeat(cfs[pair_cf[idx]], ks.shape[1], axis=0)[scored.ravel()]
        their_factuals = np.repeat(factuals[pair_cf[idx]], ks.shape[1], axis=0)[scored.ravel()]
        rows[np.arange(len(rows)), np.repeat(pair_feature[idx], ks.shape[1])[scored.ravel()]] = values[scored]
        ok = np.zeros(ks.shape, dtype=bool)  # a point not scored (the factual's value) counts as invalid
        ok[scored] = _desirable(p_undesirable, rows, their_factuals, validity)
        ok &= plan.allowed(values, pair_feature[idx, None])
        # The nearest valid point, and the farthest invalid one below it (as far as the model is monotone there).
        valid_k = np.where(ok, ks, np.iinfo(np.int64).max).min(axis=1)
        hi[idx] = np.minimum(hi[idx], valid_k)
        invalid_k = np.where(~ok & (ks < hi[idx, None]), ks, -1).max(axis=1)
        lo[idx] = np.maximum(lo[idx], invalid_k)
        open_[idx] = hi[idx] - lo[idx] > 1
        call += 1
    return value(hi, np.arange(len(hi)))


def _combine(p_undesirable, cfs, factuals, pair_cf, pair_feature, refined_value, spans, validity: Validity):
    """Apply every pair's shrunk value; where the combination breaks a counterfactual, the longest valid prefix."""
    out = cfs.copy()
    combined = cfs.copy()
    combined[pair_cf, pair_feature] = refined_value
    touched, shrunk_pairs = np.unique(pair_cf, return_counts=True)
    # A counterfactual with one shrunk change is the row its search last scored valid: not scored again.
    ok = np.ones(len(touched), dtype=bool)
    several = shrunk_pairs > 1
    ok[several] = _desirable(p_undesirable, combined[touched[several]], factuals[touched[several]], validity)
    out[touched[ok]] = combined[touched[ok]]
    broken = touched[~ok]
    if len(broken) == 0:
        return out
    # Largest reduction first; prefix 1 (one shrunk feature) was scored valid during the search.
    in_broken = np.isin(pair_cf, broken)
    p_cf, p_feat, p_val = pair_cf[in_broken], pair_feature[in_broken], refined_value[in_broken]
    reduction = np.abs(cfs[p_cf, p_feat] - p_val) / np.where(spans[p_feat] > 0, spans[p_feat], 1.0)
    order = np.lexsort((p_feat, -reduction, p_cf))
    p_cf, p_feat, p_val = p_cf[order], p_feat[order], p_val[order]
    starts = np.r_[True, p_cf[1:] != p_cf[:-1]]
    first_of = np.maximum.accumulate(np.where(starts, np.arange(len(p_cf)), 0))
    rank = np.arange(len(p_cf)) - first_of  # 0 for a counterfactual's largest reduction
    # Row r: the counterfactual with its features of rank 0..rank[r] shrunk (built cumulatively).
    prefixes = cfs[p_cf].copy()
    for r in range(len(p_cf)):
        if rank[r] > 0:
            prefixes[r] = prefixes[r - 1]
        prefixes[r, p_feat[r]] = p_val[r]
    counts = np.bincount(p_cf, minlength=len(cfs))
    trial = (rank >= 1) & (rank < counts[p_cf] - 1)  # rank 0 known valid, the full set known broken
    valid_prefix = rank == 0
    valid_prefix[trial] = _desirable(p_undesirable, prefixes[trial], factuals[p_cf[trial]], validity)
    best = np.full(len(cfs), -1)
    np.maximum.at(best, p_cf[valid_prefix], np.flatnonzero(valid_prefix))
    out[broken] = prefixes[best[broken]]
    return out

"""The search over one chunk of queries of a ``batch`` call, in named steps (:mod:`._batch` explains the search).

:func:`search_chunk` runs a :class:`ChunkSearch`: single changes, trade-off probes, rounds of random candidates
(or nearest unlike neighbours), then picks each query's counterfactuals. Valid candidates wait in the search's
queue and are made final together (:meth:`ChunkSearch.settle`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

import numpy as np

from ._alternatives import not_alternatives
from ._batchdraw import (
    NeighbourFeed,
    SingleBounds,
    all_partners,
    item_ranks,
    probe_candidates,
    random_candidates,
    single_candidates,
)
from ._batchspace import SearchSpace
from ._refine import CountingScorer, minimal_rows, revert_passengers
from ._set import distinct_keys, query_seed

__all__ = ["COLLAPSE_MARGIN", "PATIENCE", "SETTLE_ROUNDS", "ChunkSearch", "SearchSettings", "search_chunk"]

#: Rounds in a row that add no new distinct counterfactual after which a query that has some stops
#: (counted when a block of rounds is made final: the whole block counts).
PATIENCE = 3
#: Rounds whose valid candidates are made minimal together (one revert loop and one shrinking loop for all):
#: a short first block, so a query learns early which of its candidates collapse, then long ones.
SETTLE_ROUNDS = (3, 9)
#: Valid candidates a query may queue beyond the distinct counterfactuals it lacks (see ``enqueue``): 4, as
#: trade-offs within the alternatives tolerance collapse onto sparser ones (with 2 the staircase test's
#: factuals got 7 of 8 points in the default 12 rounds).
COLLAPSE_MARGIN = 4


@dataclass(frozen=True)
class SearchSettings:
    n_cf: int
    samples: int
    max_rounds: int
    plausible: bool
    seed: int
    settle_rounds: tuple[int, int]  # rounds before the first refinement, and between later ones
    collapse_margin: int  # valid candidates a query may queue beyond what it lacks


def search_chunk(space: SearchSpace, settings: SearchSettings, factuals: np.ndarray, row_ids: np.ndarray):
    """Counterfactual codes per query (a list of (n_i, F) arrays, n_i <= n_cf), the model rows and calls used,
    each query's finals that were no other way out, and the candidates each constraint between features rejected.

    1. (``batch``) Every single-feature change on a grid: each level of a categorical feature,
       :data:`SINGLE_GRID` quantiles of a number's training values (in its permitted range and
       direction). So every feature that flips a query alone, within that grid, is found.
       These are made minimal at once: their shrunk values bound the near misses of step 2.
    2. (``batch``) Near misses with probed partners, one at a time and all together (two calls);
       their valid ones wait for the first block of rounds.
    3. Rounds of random candidates (``batch``: two changes at first, then more; ``batch-plausible``:
       nearest unlike neighbours), for every query still short, scored in one call per round. The
       valid ones queued so far are made minimal together after each block of rounds (``batch``:
       after round 3, then every 9 rounds, and after the last: :data:`SETTLE_ROUNDS`;
       ``batch-plausible``: every round; the same rounds for every query, so a query's result does
       not depend on its batch).

    Making valid candidates final (:meth:`ChunkSearch.settle`): each is cleared of the changes it does not need
    (:func:`revert_passengers`) and, with ``refine="minimal"``, made minimal (:func:`minimal_rows`);
    a query keeps the *distinct* results (:func:`distinct_keys`). A query queues at most the
    candidates it still lacks (``batch``: plus :data:`COLLAPSE_MARGIN`), and sits out the rest of a block once
    its queue covers what it lacks. It stays in the search until it has n_cf distinct ones, until
    :data:`PATIENCE` rounds in a row add none, or until ``max_rounds``: where fewer distinct
    counterfactuals exist, fewer are returned, never copies.
    """
    rules = space.validity.rules
    if rules is not None:  # this chunk's own tally of what each constraint between features rejected
        space = replace(space, validity=space.validity.with_rules(rules.fresh()))
    search = ChunkSearch(space, settings, factuals, row_ids)
    active = np.arange(len(factuals))
    if search.neighbours is None:
        search.single_changes()
        active = search.trade_offs()
    search.rounds(active)
    return search.result()


class ChunkSearch:
    """One chunk's search state: each query's random stream, distinct finals and waiting candidates.

    Valid candidates wait in a queue and are made final together (:meth:`settle`): one revert loop and
    one shrinking loop for several stages or rounds, since every model call costs as much as a few
    hundred rows. ``queued[q]`` counts query q's waiting candidates.
    """

    def __init__(self, space: SearchSpace, settings: SearchSettings, factuals: np.ndarray, row_ids: np.ndarray):
        n_q, n_f = factuals.shape
        self.space, self.settings, self.factuals, self.n_q = space, settings, factuals, n_q
        self.rngs = [np.random.default_rng(query_seed(settings.seed, int(r))) for r in row_ids]
        self.counter = CountingScorer(space.p_undesirable)
        self.pools: list[dict[bytes, np.ndarray]] = [{} for _ in range(n_q)]  # distinct final counterfactuals
        self.not_ways: list[set[bytes]] = [set() for _ in range(n_q)]  # finals that were no other way out (_alternatives)
        self.tolerance = space.plan.tolerance if space.plan is not None else np.full(n_f, 1e-12)
        self.n_vary = int(space.vary.sum())
        self.neighbours = NeighbourFeed(space, factuals) if settings.plausible else None
        self.bounds = SingleBounds(space, factuals)
        self.tried: list[set[bytes]] = [set() for _ in range(n_q)]  # finals already made minimal, before refinement
        self.proposed: list[set[bytes]] = [set() for _ in range(n_q)]  # random candidates already scored
        self.queue: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.queued = np.zeros(n_q, dtype=int)
        self.subset = np.ones(n_q, dtype=int)  # features changed per random candidate, per query

    def need(self) -> np.ndarray:
        """Per query: distinct counterfactuals still missing, less the candidates already waiting."""
        return self.settings.n_cf - np.array([len(p) for p in self.pools]) - self.queued

    def enqueue(self, candidates, owner, *, first=None, singles: bool = False, valid=None) -> np.ndarray:
        """Score candidates (unless ``valid`` says) and queue the valid ones; returns how many each query queued.

        ``first`` (per candidate, -1 for none): the near miss to shrink before the other changes, so the
        partners' drawn values decide where on the trade-off the counterfactual lands.
        """
        factuals = self.factuals
        first = np.full(len(candidates), -1) if first is None else first
        if valid is None:
            pick = _distinct_rows(candidates, owner, factuals)
            # A candidate proposed in an earlier round already had its answer: not scored again.
            pick = pick[_first_seen(self.proposed, owner[pick], candidates[pick])]
            candidates, owner, first = candidates[pick], owner[pick], first[pick]
            if len(candidates) == 0:
                return np.zeros(self.n_q, dtype=int)
            valid = self.space.validity.check(self.counter, candidates, factuals[owner])
        if singles:
            # Only the valid value nearest the factual on each side shrinks: the farther ones would end at the same place.
            valid = valid & _nearest_per_side(self.space, candidates, owner, factuals, valid)
        else:
            # About as many as a query still needs (making a counterfactual minimal costs tens of rows), and a
            # few more: some collapse onto one another, or onto ones already found, when they are made minimal.
            valid = valid & _first_per_owner(owner, valid, np.maximum(self.need() + self.settings.collapse_margin, 0))
        self.queue.append((candidates[valid], owner[valid], first[valid]))
        added = np.bincount(owner[valid], minlength=self.n_q)
        self.queued[:] += added
        return added

    def settle(self) -> np.ndarray:
        """Make every queued candidate final and add the distinct ones to their pools; new ones per query."""
        space, factuals, pools = self.space, self.factuals, self.pools
        new = np.zeros(self.n_q, dtype=int)
        if not self.queue:
            return new
        rows, owner, first = (np.concatenate(part) for part in zip(*self.queue))
        self.queue.clear()
        self.queued[:] = 0
        if len(rows) == 0:
            return new
        finals = revert_passengers(self.counter, rows, factuals[owner], validity=space.validity)
        # Candidates that lost their passengers may now be the same: make each one minimal only once.
        pick = _distinct_rows(finals, owner, factuals)
        pick = pick[_first_seen(self.tried, owner[pick], finals[pick])]
        finals, owner, first = finals[pick], owner[pick], first[pick]
        if space.plan is not None and len(finals):
            finals = minimal_rows(self.counter, finals, factuals[owner], space.plan, first=first, validity=space.validity)
        added: list[set[bytes]] = [set() for _ in range(self.n_q)]
        for q, row, key in zip(owner, finals, distinct_keys(finals, factuals[owner], self.tolerance)):
            if key not in pools[q] and key not in self.not_ways[q]:
                pools[q][key] = row
                added[q].add(key)
        if space.plan is not None:  # minimal counterfactuals: keep only alternatives that differ
            self._keep_alternatives(np.unique(owner))
        for q in range(self.n_q):
            new[q] = len(added[q] & pools[q].keys())
        self.bounds.learn(owner, finals)
        return new

    def _keep_alternatives(self, queries: np.ndarray) -> None:
        """Drop from these queries' pools the finals that are no other way out than one already there."""
        plan = self.space.plan
        assert plan is not None
        for q in queries:
            pool = self.pools[q]
            keys = list(pool)
            drop = not_alternatives(np.array([pool[k] for k in keys]), self.factuals[q], plan.spans, plan.movable)
            for key in np.array(keys, dtype=object)[drop]:
                del pool[key]
                self.not_ways[q].add(key)

    def single_changes(self) -> None:
        """Step 1 (``batch``): single changes in stages, for the queries still short, made final at once.

        A query's single changes are *items* (a level of a category; a side of a number, with its grid points
        on that side), taken in a seeded random order: the items that flip it are then a uniform sample of all
        that do, as if every one had been tried and n_cf drawn at random. (Taking every feature's first value
        before any second one spread the picks evenly over features and flattened F toward 1 / their number.)
        """
        space, n_cf, factuals = self.space, self.settings.n_cf, self.factuals
        candidates, owner, item = single_candidates(space, factuals)
        rank = item_ranks(owner, item, self.rngs)
        found = np.zeros(self.n_q, dtype=int)
        hits, hit_owners = [], []
        for stage in itertools.count():
            short = found < n_cf
            pick = short[owner] & (rank >= stage * n_cf) & (rank < (stage + 1) * n_cf)
            if not pick.any():
                if not (short[owner] & (rank >= stage * n_cf)).any():
                    break
                continue
            hit = space.validity.check(self.counter, candidates[pick], factuals[owner[pick]])
            rows, hit_owner, hit_item = candidates[pick][hit], owner[pick][hit], item[pick][hit]
            if len(rows):  # each item that flips is one distinct counterfactual (its nearest valid value shrinks below)
                flipped = np.unique(np.column_stack([hit_owner, hit_item]), axis=0)
                found += np.bincount(flipped[:, 0], minlength=self.n_q)
            hits.append(rows)
            hit_owners.append(hit_owner)
        if hits:
            candidates, owner = np.concatenate(hits), np.concatenate(hit_owners)
            self.enqueue(candidates, owner, singles=True, valid=np.ones(len(candidates), dtype=bool))
            self.settle()  # the single flips bound the near misses below
        self.subset[:] = min(2, max(self.n_vary, 1))  # single changes were tried: random ones start at two

    def trade_offs(self) -> np.ndarray:
        """Step 2 (``batch``): which other features help each near miss; returns the queries to search at random.

        Each other feature at both ends of its range, in one call. A query with near misses that no other
        feature helps has only its single changes.
        """
        space, factuals, bounds, counter = self.space, self.factuals, self.bounds, self.counter
        active = np.array([q for q in range(self.n_q) if len(self.pools[q]) < self.settings.n_cf], dtype=int)
        probes, owner, anchor, partner = probe_candidates(space, factuals, bounds, active)
        if len(probes):
            p = space.validity.score(counter, probes, factuals[owner])
            # A partner helps a near miss when one end of its range lowers P(undesirable) below the
            # near miss's own: alone it may not flip the query, together with other partners it may.
            alone = np.full((self.n_q, factuals.shape[1]), np.nan)
            lone = partner < 0
            alone[owner[lone], anchor[lone]] = p[lone]
            helps = ~lone & (p < alone[owner, anchor] - 1e-9)
            bounds.learn_partners(probes[helps], owner[helps], anchor[helps], partner[helps], p[helps])
            self.enqueue(probes[~lone], owner[~lone], first=anchor[~lone], valid=space.validity.desirable(p)[~lone])
            # All the partners of a near miss at once, each at its better end: where even that does not
            # flip the query, no mix of them will (as far as the model is monotone there), so none is tried.
            together, q, a = all_partners(probes[helps], owner[helps], anchor[helps], partner[helps], p[helps])
            if len(together):
                flips = space.validity.check(counter, together, factuals[q])
                bounds.partners[q[~flips], a[~flips]] = False
                self.enqueue(together, q, first=a, valid=flips)
        has_near_miss = bounds.has_near_miss(active)
        return active[~has_near_miss | bounds.partners[active].any(axis=(1, 2))]

    def rounds(self, active: np.ndarray) -> None:
        """Step 3: rounds of random candidates (or nearest unlike neighbours) for the ``active`` queries still short."""
        settings, pools, n_q = self.settings, self.pools, self.n_q
        stale = np.zeros(n_q, dtype=int)
        searching = np.array([q for q in active if len(pools[q]) < settings.n_cf], dtype=int)
        settled_after = 0  # the round after which queued candidates were last made final
        dry = np.zeros(n_q, dtype=int)  # rounds in a row in which a query found no valid candidate
        for round_no in range(settings.max_rounds):
            # A query whose waiting candidates cover what it lacks sits out until they are made final.
            active = searching[self.need()[searching] > 0]
            if len(active):
                candidates, owner, first = self._propose(active, round_no)
                found = self.enqueue(candidates, owner, first=first)
                # DiCE-like growth while changes keep finding counterfactuals; doubling when a round found nothing.
                self.subset[active] = np.minimum(
                    self.n_vary, np.where(found[active] > 0, self.subset[active] + 1, 2 * self.subset[active])
                )
                # PATIENCE rounds without even a valid candidate add no distinct counterfactual: a query that
                # has some stops before its block ends (its queue is still made final).
                dry[active] = np.where(found[active] > 0, 0, dry[active] + 1)
                has_some = np.array([len(pools[q]) > 0 for q in searching], dtype=bool) | (self.queued[searching] > 0)
                searching = searching[~(has_some & (dry[searching] >= PATIENCE))]
            # Rounds are made final in fixed blocks (the same rounds for every query, so none depends on its batch).
            if not _settles_after(round_no + 1, settings):
                continue
            new = self.settle()
            stale[searching] = np.where(new[searching] > 0, 0, stale[searching] + round_no + 1 - settled_after)
            settled_after = round_no + 1
            searching = np.array(
                [q for q in searching if len(pools[q]) < settings.n_cf and not (pools[q] and stale[q] >= PATIENCE)],
                dtype=int,
            )
            if len(searching) == 0:
                break

    def _propose(self, active: np.ndarray, round_no: int):
        """One round's candidates for the active queries: (rows, owner, first) as :meth:`enqueue` takes them."""
        if self.neighbours is not None:
            candidates, owner = self.neighbours.propose(active, round_no, self.settings)
            return candidates, owner, None
        return random_candidates(
            self.space, self.factuals, self.rngs, active, self.subset, self.settings.samples, self.bounds
        )

    def result(self):
        """Counterfactual codes per query, the model rows and calls spent, each query's finals that were no way out,
        and the rows each constraint between features rejected (None without constraints)."""
        n_f = self.factuals.shape[1]
        per_query = [
            _select(np.array(list(pool.values())).reshape(-1, n_f), self.factuals[q], self.settings.n_cf, self.rngs[q])
            for q, pool in enumerate(self.pools)
        ]
        rules = self.space.validity.rules
        return (per_query, self.counter.rows, self.counter.calls, np.array([len(d) for d in self.not_ways], dtype=int),
                None if rules is None else rules.rejected.copy())


def _settles_after(round_number: int, settings: SearchSettings) -> bool:
    """Whether the valid candidates queued so far are made final after this round (1-based): see :data:`SETTLE_ROUNDS`."""
    first, every = settings.settle_rounds
    return round_number in (settings.max_rounds, first) or (round_number > first and (round_number - first) % every == 0)



def _first_seen(seen: list[set[bytes]], owner: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Which rows their query has not seen before (bool, shape (m,)); they are recorded as seen."""
    fresh = np.zeros(len(rows), dtype=bool)
    for i, (q, row) in enumerate(zip(owner, rows)):
        key = row.tobytes()
        if key not in seen[q]:
            seen[q].add(key)
            fresh[i] = True
    return fresh



def _first_per_owner(owner: np.ndarray, mask: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """``mask`` kept for at most ``limit[q]`` rows of each owner q, the first ones in row order."""
    rows = np.flatnonzero(mask)
    own = owner[rows]
    order = np.argsort(own, kind="stable")
    sorted_own = own[order]
    rank = np.arange(len(order)) - np.searchsorted(sorted_own, sorted_own, side="left")
    out = np.zeros_like(mask)
    out[rows[order[rank < limit[sorted_own]]]] = True
    return out



def _nearest_per_side(space, candidates, owner, factuals, valid) -> np.ndarray:
    """Among single-change candidates, the valid one nearest the factual per (query, feature, side); every level."""
    changed = candidates != factuals[owner]
    feature = changed.argmax(axis=1)
    moved = candidates[np.arange(len(candidates)), feature] - factuals[owner, feature]
    nominal = np.array([f.kind == "categorical" for f in space.task.features])[feature]
    keep = valid.copy()
    rows = np.flatnonzero(valid & ~nominal)
    if len(rows):
        order = rows[np.lexsort((np.abs(moved[rows]), np.sign(moved[rows]), feature[rows], owner[rows]))]
        group = np.column_stack([owner[order], feature[order], np.sign(moved[order])])
        first = np.r_[True, (group[1:] != group[:-1]).any(axis=1)]
        keep[rows] = False
        keep[order[first]] = True
    return keep



def _distinct_rows(candidates, owner, factuals) -> np.ndarray:
    """Indices of the candidates that differ from their factual, without repeats of a query's candidate, in order."""
    differs = np.flatnonzero((candidates != factuals[owner]).any(axis=1))
    keyed = np.ascontiguousarray(np.column_stack([owner[differs], candidates[differs]]))
    # One opaque key per row: a 1-D sort instead of np.unique(axis=0)'s column-by-column one.
    _, first = np.unique(keyed.view(np.dtype((np.void, keyed.dtype.itemsize * keyed.shape[1]))).ravel(), return_index=True)
    return differs[np.sort(first)]



def _select(pool: np.ndarray, factual: np.ndarray, n_cf: int, rng) -> np.ndarray:
    """Pick up to n_cf of a query's distinct counterfactuals: the sparsest first, ties in seeded random order.

    Random among equals, as DiCE picks, because FLEX's change frequencies are the
    output: spreading the picks evenly over feature sets (maximal diversity) would
    flatten them toward 1 / (number of features that can flip the query).
    """
    if len(pool) <= n_cf:
        return pool
    order = np.lexsort((rng.random(len(pool)), (pool != factual).sum(axis=1)))
    return pool[order[:n_cf]]


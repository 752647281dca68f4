"""The ``tree`` generator: exact minimal counterfactuals read from a tree ensemble's own splits (issue 33).

For every factual it reads the model's exact one-feature profiles (:mod:`._treeprofile`) and,
where those give fewer than ``n_cf`` counterfactuals, its two-feature profiles. On a
piecewise-constant profile the validity rule (:mod:`._validity`: P(undesirable) < 0.5 - margin,
also at the corner pulled ``radius`` x range back toward the factual) is applied exactly: the
nearest valid value on a side is either where a cell of the profile starts, or that point plus
the neighbourhood step, so those are the only candidates (levels have no neighbourhood).

- **one feature**: per number (and ordinal feature) the nearest valid value on each side, every
  valid allowed level of a categorical one;
- **two features**: the Pareto-minimal pairs of changes (no other valid pair changes both by
  less on the same sides), neither change valid alone, none reducing a one-feature change of
  the same feature (the alternatives rule);
- **three or more**: factuals left without any counterfactual go to the ``batch`` search.

Numbers move to the first value the model's own split sends the other way (float32 and ``<`` /
``<=`` as the library compares), plus the step; integer features to the first whole number.
Order: fewest changed features, then the smallest change (numbers: share of the training range;
ordinal: levels over the number of levels - 1; categorical: 1), then round by round across the sets of
features changed, then the lowest P(undesirable) (:func:`._treegrid.in_order`): never the file's column order.
"""

from __future__ import annotations

import copy
import time
import weakref
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .._errors import ConfigError
from .._format import listing, plural
from ..data import TaskSpec
from ..limits import check
from ..models import FittedModel
from ._alternatives import ALTERNATIVE_TOLERANCE, not_alternatives
from ._assemble import assemble_counterfactual_set
from ._batch import BatchGenerator
from ._refine import check_refine
from ._scoring import resolve_cores, scorer_for
from ._set import (
    CounterfactualSet,
    GeneratorParams,
    Progress,
    check_request,
    copy_tolerance,
    distinct_keys,
    encode_rows,
)
from ._spread import chunk_bounds, cluster_threads, dask_client, in_threads, on_cluster
from ._treecache import cached, loaded
from ._treeform import MAX_LEVELS, TreeForm, tree_form
from ._treegrid import (
    FLOAT32_WINDOW,
    NEAR_THRESHOLD,
    RuleCheck,
    grids,
    in_order,
    near_walk,
    number_candidates,
    past,
    settle_singles,
    single_counterfactuals,
    single_grid_profiles,
    walk_reached,
)
from ._treekernel import pair_search
from ._treeprofile import lowest_p
from ._treeslow import MAX_PAIR_CANDIDATES, slow_pairs
from ._validity import DEFAULT_MARGIN, DEFAULT_RADIUS, Validity

__all__ = ["TreeGenerator", "MAX_PAIR_CANDIDATES"]

#: Factuals read at once (the leaves reached per factual, feature and tree are held in memory together).
CHUNK_QUERIES = 500
#: Factuals per chunk under a time limit: the limit is checked between chunks, so it is kept to about one chunk's time.
TIME_CHUNK_QUERIES = 50

_FORMS: weakref.WeakKeyDictionary[FittedModel, dict[str, TreeForm | ConfigError]] = weakref.WeakKeyDictionary()


def cached_form(model: FittedModel, task: TaskSpec) -> TreeForm:
    """The model's tree form for this task (built and checked once per model), or the ConfigError it raised."""
    per_task = _FORMS.setdefault(model, {})
    form = per_task.get(task.fingerprint)
    if form is None:
        try:
            form = tree_form(model, task)
        except ConfigError as exc:
            form = exc
        per_task[task.fingerprint] = form
    if isinstance(form, ConfigError):
        raise form
    return form


_SPANS: weakref.WeakKeyDictionary[FittedModel, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()


def _training_spans(model: FittedModel, task: TaskSpec) -> np.ndarray:
    """Each continuous feature's range over the model's training rows (NaN for levels), read once per model and task."""
    per_task = _SPANS.setdefault(model, {})
    if task.fingerprint not in per_task:
        train = encode_rows(task, task.frame.loc[model.train_index, task.feature_names])
        with np.errstate(invalid="ignore"):
            per_task[task.fingerprint] = np.array([np.nanmax(train[:, j]) - np.nanmin(train[:, j])
                                                   if f.is_continuous and len(train) else np.nan
                                                   for j, f in enumerate(task.features)])
    return per_task[task.fingerprint].copy()


class _Axes:
    """Per feature: may it vary, its permitted codes, direction, neighbourhood step and size scale."""

    def __init__(self, task: TaskSpec, model: FittedModel, vary: Sequence[str], ranges: Mapping, validity: Validity):
        n_f = len(task.features)
        self.numeric = np.array([f.is_continuous for f in task.features])
        self.ordinal = np.array([f.is_ordinal for f in task.features])
        self.integer = np.array([f.is_continuous and bool(f.integer) for f in task.features])
        self.n_levels = np.array([0 if f.is_continuous else len(f.levels) for f in task.features])
        self.vary = np.array([f.name in vary for f in task.features]) & (self.n_levels <= MAX_LEVELS)
        self.low, self.high = np.full(n_f, -np.inf), np.full(n_f, np.inf)
        self.levels_ok: list[np.ndarray | None] = [None] * n_f
        for j, f in enumerate(task.features):
            if f.name in ranges and f.is_continuous:
                self.low[j], self.high[j] = ranges[f.name]
            elif f.name in ranges:
                self.levels_ok[j] = np.isin(np.asarray(f.levels, dtype=object), ranges[f.name])
        self.direction = np.array([{"increase": 1, "decrease": -1}.get(f.direction or "", 0) for f in task.features])
        spans = _training_spans(model, task)
        self.validity = validity.on(task, spans)
        self.step = np.asarray(self.validity.steps, dtype=float)
        self.spans = np.where(self.numeric, spans, np.maximum(self.n_levels - 1, 1))
        self.scale = np.where(self.numeric | self.ordinal, np.where(np.nan_to_num(self.spans) > 0, np.nan_to_num(self.spans), 1.0), 1.0)
        self.ordered = self.numeric | self.ordinal
        self.copy_tolerance = copy_tolerance(task)
        #: the task's constraints between features, applied to one-feature candidates (pairs: dropped at assembly)
        self.rules = RuleCheck(task)
        #: what rescores profile cells next to the threshold (None: the tree form; the model for XGBoost)
        self.settle_with: Callable[[np.ndarray], np.ndarray] | None = None

    def candidates(self, j: int, f: float, upper: np.ndarray):
        """(values, side) a feature may move to from ``f`` given a profile's cell upper ends (levels: codes).

        Numbers: where a cell starts, and that plus the step (nearest first per side); side +1 / -1.
        Categorical: every other allowed level, each its own side (2 + level).
        """
        if not self.numeric[j]:
            levels = np.arange(self.n_levels[j], dtype=float)
            ok = levels != f
            if self.levels_ok[j] is not None:
                ok &= self.levels_ok[j]
            if self.ordinal[j]:
                side = np.sign(levels - f)
                ok &= side * self.direction[j] >= 0
                return levels[ok], side[ok]
            return levels[ok], 2 + levels[ok]
        step = self.step[j]
        lower = np.r_[-np.inf, upper[:-1]]
        up_start = lower[(lower >= f) & np.isfinite(lower)]
        down_end = upper[(upper < f) & np.isfinite(upper)]
        ups = [np.nextafter(up_start, np.inf)]
        downs = [down_end]
        if step > 0:
            ups.append(past(up_start, step, +1))
            downs.append(past(down_end, step, -1))
        up, down = np.concatenate(ups), np.concatenate(downs)
        if self.integer[j]:
            up, down = np.ceil(up), np.floor(down)
        up = np.unique(up[(up <= self.high[j]) & (up > f)]) if self.direction[j] >= 0 else np.empty(0)
        down = np.unique(down[(down >= self.low[j]) & (down < f)]) if self.direction[j] <= 0 else np.empty(0)
        up = up[up >= self.low[j]]
        down = down[down <= self.high[j]]
        return np.r_[up, down], np.r_[np.ones(len(up)), -np.ones(len(down))]

    def corner(self, j: int, values: np.ndarray, f: float) -> np.ndarray:
        """Validity.pulled for one feature."""
        step = self.step[j]
        if step <= 0:
            return values
        delta = values - f
        return np.where(np.abs(delta) <= step, f, values - np.sign(delta) * step)

    def size(self, j: int, values: np.ndarray, f: float) -> np.ndarray:
        return np.abs(values - f) / self.scale[j] if self.ordered[j] else np.ones(len(values))


class TreeGenerator(GeneratorParams):
    """Exact minimal counterfactuals of tree ensembles, read from their splits.

    Parameters
    ----------
    margin, radius : float
        The validity rule (:mod:`._validity`).
    pairs : bool, default True
        Read two-feature trade-offs for factuals with fewer than ``n_cf`` one-feature counterfactuals.
    time_limit : float or None
        Seconds after which no new chunk of factuals starts (nor the fallback search); the cases not served are
        named in the set's ``config["skipped_rows"]`` and a note, get no counterfactuals and are not stored.
    n_jobs : int, default 1
        Threads reading chunks of factuals at once (-1: one per core); the result does not depend on it. Also the
        fallback search's cores.
    samples, max_rounds, backend
        The settings of the ``batch`` search that serves the models the tree form does not read and the
        factuals with no one- or two-feature counterfactual (:class:`~._batch.BatchGenerator`).
    """

    refines_in_search = True
    # How the fallback's work is spread never changes the result, so it stays out of the store's key.
    # A time limit only decides which cases are served (those it skips are not stored), never what they get.
    execution_params = ("n_jobs", "backend", "time_limit")

    def __init__(self, *, margin: float = DEFAULT_MARGIN, radius: float = DEFAULT_RADIUS, pairs: bool = True,
                 samples: int | None = None, max_rounds: int = 12, n_jobs: int = 1, backend: str = "loky",
                 time_limit: float | None = None):
        rule = Validity(margin, radius)
        self.margin, self.radius = rule.margin, rule.radius
        self.pairs = bool(pairs)
        self.time_limit = None if time_limit is None else float(check("time_limit", time_limit))
        self._batch = BatchGenerator(samples=samples, max_rounds=max_rounds, n_jobs=n_jobs, backend=backend,
                                     margin=self.margin, radius=self.radius)  # checks them, once
        self.name = "tree"

    @property
    def samples(self) -> int | None:
        return self._batch.samples

    @property
    def max_rounds(self) -> int:
        return self._batch.max_rounds

    @property
    def n_jobs(self) -> int:
        return self._batch.n_jobs

    @property
    def backend(self) -> str:
        return self._batch.backend

    @property
    def first_call_note(self) -> str | None:
        """Until this process has run the compiled walks, when numba's cache does not hold them (after an install or
        an upgrade their first call compiles them); hedged when the cache cannot be read."""
        if loaded():
            return None
        ready = cached()
        if ready:
            return None
        if ready is None:
            return "If this is the first run after an install, the tree generator's loops are compiled first (about half a minute)."
        return "The tree generator's loops are compiled first, once after an install (about half a minute)."

    def fallback_for(self, model: FittedModel, task: TaskSpec) -> str | None:
        """``"batch"`` for a model the tree form does not read (it serves such a model: see :meth:`generate`)."""
        try:
            cached_form(model, task)
        except ConfigError:
            return "batch"
        return None

    def reading_floor(self, model: FittedModel, task: TaskSpec, queries: pd.DataFrame, *, n_cf: int,
                      repeats: int = 5) -> dict:
        """What reading ``queries`` exactly must spend at least: the parts no arrangement of the rest avoids, each the
        fastest of ``repeats`` runs in seconds, for a benchmark to set against a target (``bench_tree_floor.py``).

        ``form``: the model's tree form read cold and checked against its predict_proba (as each new process does);
        ``walk_one``: the compiled walk to every leaf each factual reaches changing at most one feature (an exact
        one-feature profile sums each of them); ``walk_two``: every leaf within two changes, for the ``short``
        factuals with fewer than ``n_cf`` one-feature ways out (an exact trade-off sums each leaf its pair reaches);
        ``leaves_one`` and ``leaves_two``: how many leaves those walks reach; ``trees`` and ``depth``: the form's.
        Nothing is summed or searched.
        """
        vary, ranges = check_request(task, queries, n_cf=n_cf, features_to_vary=None, permitted_range=None)
        cold = _fastest(lambda: tree_form(model, task), repeats)
        form = cached_form(model, task)
        axes = _Axes(task, model, vary, ranges, Validity(self.margin, self.radius))
        axes.settle_with = scorer_for(model, task) if form.float32 else None
        g = grids(form, axes.numeric, axes.n_levels)
        factuals = encode_rows(task, queries[task.feature_names])
        singles = np.bincount(_singles(form, g, axes, factuals)[0], minlength=len(factuals))
        short = factuals[singles < n_cf] if self.pairs else factuals[:0]  # those _read_counterfactuals reads pairs for
        one = _fastest(lambda: walk_reached(form, factuals, axes.vary, 1), repeats)
        two = _fastest(lambda: walk_reached(form, short, axes.vary, 2), repeats) if len(short) else 0.0
        return {"form": cold, "walk_one": one, "walk_two": two, "short": len(short), "trees": form.n_trees, "depth": form.depth,
                "leaves_one": walk_reached(form, factuals, axes.vary, 1),
                "leaves_two": walk_reached(form, short, axes.vary, 2) if len(short) else 0}

    def peak_bytes(self, task: TaskSpec, *, n_queries: int, n_cf: int) -> int:
        """The fallback search's peak memory (the tree profiles' chunks are smaller: see :data:`CHUNK_QUERIES`)."""
        return self._batch.peak_bytes(task, n_queries=n_queries, n_cf=n_cf)

    def generate(self, model: FittedModel, task: TaskSpec, queries: pd.DataFrame, *, n_cf: int,
                 features_to_vary: Sequence[str] | None = None, permitted_range: Mapping[str, Sequence] | None = None,
                 seed: int = 0, progress: Progress | None = None, refine: str = "minimal") -> CounterfactualSet:
        """Up to ``n_cf`` distinct minimal counterfactuals per query, exact for the model's trees.

        A model the tree form does not read goes to the ``batch`` search (the set's ``config["tree"]``
        says why); factuals with no one- or two-feature counterfactual too.
        """
        check_refine(refine)
        vary, ranges = check_request(task, queries, n_cf=n_cf, features_to_vary=features_to_vary,
                                     permitted_range=permitted_range)
        start = time.perf_counter()
        batch = self._batch
        try:
            form = cached_form(model, task)
        except ConfigError as exc:
            result = batch.generate(model, task, queries, n_cf=n_cf, features_to_vary=features_to_vary,
                                    permitted_range=permitted_range, seed=seed, progress=progress, refine=refine)
            config = {**result.config, "tree": {"ran": "batch", "why": str(exc)}}
            return _with_config(result, config)
        factuals = encode_rows(task, queries[task.feature_names])
        if np.isnan(factuals[:, ~np.array([f.is_continuous for f in task.features])]).any():
            bad = queries.index[np.isnan(factuals).any(axis=1)].tolist()
            raise ConfigError(f"Query {listing('row', bad)} {'has a level' if len(bad) == 1 else 'have levels'} the "
                              "task does not know.")
        axes = _Axes(task, model, vary, ranges, Validity(self.margin, self.radius))
        axes.settle_with = scorer_for(model, task) if form.float32 else None
        cluster = (model, task, vary, ranges, Validity(self.margin, self.radius)) if self.backend == "dask" else None
        deadline = None if self.time_limit is None else start + self.time_limit
        found, more, stats = _read_in_chunks(form, axes, factuals, int(n_cf), pairs=self.pairs, progress=progress,
                                             cluster=cluster, deadline=deadline, workers=resolve_cores(self.n_jobs))
        dropped, skipped = stats.pop("dropped"), stats.pop("skipped")
        empty = [i for i in range(skipped[0] if skipped else len(found)) if not len(found[i])]
        if empty and deadline is not None and time.perf_counter() >= deadline:  # no time left for the fallback either
            skipped, empty = sorted(empty + skipped), []
        served, fallback_rows = [], 0
        if empty:
            sub = batch.generate(model, task, queries.iloc[empty], n_cf=n_cf, features_to_vary=features_to_vary,
                                 permitted_range=permitted_range, seed=seed, refine=refine)
            fallback_rows = max(sub.model_rows, 0)  # the rows its search scored, counted with the final check's
            for k, i in enumerate(empty):
                rows = sub.counterfactuals[k][sub.valid[k]]
                found[i] = rows
                if len(rows):
                    served.append(i)
        row_ids = queries.index.to_numpy().astype(int)
        return assemble_counterfactual_set(
            task, model, queries[task.feature_names], found, n_cf=n_cf, generator=self.name,
            seconds=time.perf_counter() - start, model_rows=fallback_rows, rule_rejections=axes.rules.rejected,
            config={
                "features_to_vary": vary, "permitted_range": ranges or None, "seed": int(seed), "refine": refine,
                "alternatives_tolerance": ALTERNATIVE_TOLERANCE, "time_limit": self.time_limit,
                # Two-feature trade-offs read (else the factuals without a single go to batch); the result's generator
                # settings name it too, so it stays out of the JSON's tree block.
                "pairs": self.pairs,
                "tree": {"ran": "tree", "why": f"{form.library} {_what_was_read(form)} read exactly ({plural(form.n_trees, 'tree')})",
                         "order": ("fewest changed features, then smallest normalised change, then round by round across the sets "
                                   "of features changed, then lowest P(undesirable)")},
            },
            # Per case and per call, so they add up when the set is cut and stacked (_tally).
            cases={"skipped": row_ids[skipped].tolist(), "more_than_n_cf": row_ids[more].tolist(),
                   "batch_fallback": row_ids[empty].tolist(), "batch_fallback_found": row_ids[served].tolist()},
            tallies={f"tree.{key}": value for key, value in stats.items()},
            validity=axes.validity, dropped=dropped, p_undesirable=scorer_for(model, task),
        )


def _read_in_chunks(form, axes, factuals, n_cf, *, pairs, progress, cluster=None, deadline=None, workers=1):
    """:func:`_read_counterfactuals` over chunks of :data:`CHUNK_QUERIES` factuals: memory stays flat however many come.

    ``workers`` > 1: the chunks (about one per worker) are read in that many threads sharing the form; its compiled
    walks release the GIL. ``cluster``: ``(model, task, vary, ranges, validity)`` to read the chunks on the connected
    Dask cluster instead (:func:`._spread.on_cluster`). Each query's counterfactuals do not depend on the chunk it is
    read in, nor on where. ``deadline`` (a ``time.perf_counter()`` value): no chunk starts after it (chunks of
    :data:`TIME_CHUNK_QUERIES`); the positions of the factuals never read are ``stats["skipped"]``.
    """
    size = CHUNK_QUERIES if deadline is None else min(CHUNK_QUERIES, TIME_CHUNK_QUERIES)
    if cluster is None:
        size = min(size, max(1, -(-len(factuals) // max(1, workers))))
        bounds = [(s, min(s + size, len(factuals))) for s in range(0, len(factuals), size)]
        def read(bound):
            return _read_own(form, axes, factuals[bound[0]:bound[1]], n_cf, pairs)

        if workers > 1 and len(bounds) > 1:
            _candidate_tables(grids(form, axes.numeric, axes.n_levels), axes)  # the form's caches, filled before threads
            parts = in_threads(read, bounds, workers, deadline=deadline)
        else:
            parts = (read(bound) for bound in bounds if deadline is None or time.perf_counter() < deadline)
    else:
        model, task, vary, ranges, validity = cluster
        bounds = chunk_bounds(len(factuals), cluster_threads(dask_client()), size)
        shared = {"model": model, "task": task, "request": (vary, ranges, validity, n_cf, pairs)}
        parts = on_cluster(_read_part, [factuals[a:b] for a, b in bounds], shared, sizes=[b - a for a, b in bounds],
                           progress=progress, deadline=deadline)
    found: list[np.ndarray] = []
    more, dropped = [], []
    stats: dict = {}
    for part_found, part_more, part in parts:
        found += part_found
        more.append(part_more)
        dropped.append(part.pop("dropped"))
        axes.rules.rejected += part.pop("rule_rejections", 0)
        for key, value in part.items():
            stats[key] = stats.get(key, 0) + value
        if progress is not None and cluster is None:
            progress(len(found), len(factuals))
    read = len(found)  # the rest were skipped at the deadline: no counterfactuals, said so
    found += [np.empty((0, factuals.shape[1]))] * (len(factuals) - read)
    stats["dropped"] = np.concatenate([*dropped, np.zeros(len(factuals) - read, dtype=int)])
    stats["skipped"] = list(range(read, len(factuals)))
    return found, np.concatenate([*more, np.zeros(len(factuals) - read, dtype=bool)]), stats


def _read_part(factuals: np.ndarray, *, model: FittedModel, task: TaskSpec, request: tuple):
    """One chunk read on a Dask worker: the form and the axes made there (once per worker) from what was sent."""
    vary, ranges, validity, n_cf, pairs = request
    form = cached_form(model, task)
    axes = _Axes(task, model, vary, ranges, validity)
    axes.settle_with = scorer_for(model, task) if form.float32 else None
    return _read_own(form, axes, factuals, n_cf, pairs)


def _read_own(form: TreeForm, axes: _Axes, factuals: np.ndarray, n_cf: int, pairs: bool):
    """One chunk read with its own count of candidates each constraint rejected (returned, for the caller to add up)."""
    own = copy.copy(axes)
    own.rules = RuleCheck(axes.rules.task)
    found, more, stats = _read_counterfactuals(form, own, factuals, n_cf, pairs=pairs)
    return found, more, {**stats, "rule_rejections": own.rules.rejected}


def _singles(form: TreeForm, g, axes: _Axes, factuals: np.ndarray):
    """Every factual's minimal one-feature counterfactuals (:func:`single_counterfactuals`), from its exact profiles:
    the leaves it reaches changing at most one feature, walked once."""
    prof = single_grid_profiles(form, g, factuals, axes.vary, near_walk(form, g, factuals, axes.vary, 1))
    settle_singles(form, g, prof, factuals, axes.vary, axes.validity.threshold, axes.settle_with)
    return single_counterfactuals(g, axes, prof, factuals, axes.validity.threshold, axes.rules)


def _what_was_read(form: TreeForm) -> str:
    """"decision tree" for a single tree, "tree ensemble" for the rest."""
    return "decision tree" if form.n_trees == 1 else "tree ensemble"


def _fastest(call, repeats: int) -> float:
    """The fastest of ``repeats`` timed calls, in seconds."""
    best = np.inf
    for _ in range(max(1, int(repeats))):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return float(best)


def _with_config(result: CounterfactualSet, config: dict) -> CounterfactualSet:
    from dataclasses import replace

    return replace(result, config=config)


def _read_counterfactuals(form: TreeForm, axes: _Axes, factuals: np.ndarray, n_cf: int, *, pairs: bool):
    """Per query its ordered distinct minimal counterfactuals (codes, at most n_cf), whether more exist, and counts."""
    n_q = len(factuals)
    features = np.flatnonzero(axes.vary)
    g = grids(form, axes.numeric, axes.n_levels)
    singles = _singles(form, g, axes, factuals)
    per_query: list[list[tuple]] = [[] for _ in range(n_q)]
    for q, j, v, size, pv in zip(*(a.tolist() for a in (singles[0], singles[1], singles[2], singles[4], singles[5]))):
        row = factuals[q].copy()
        row[j] = v
        per_query[q].append((1, size, (j,), row, pv))
    stats: dict = {"pairs_read": 0, "pair_candidates_cut": 0}
    if pairs:
        short = [q for q in range(n_q) if len(per_query[q]) < n_cf]
        near = None
        if short:  # the leaves each short factual reaches changing at most two features, numbered as in factuals
            q, box, a, b = near_walk(form, g, factuals[short], axes.vary, 2)
            near = (np.asarray(short)[q], box, a, b)
        _add_pairs(form, g, axes, factuals, short, features, per_query, singles, stats, near)
    ordered = in_order(per_query, factuals.shape[1])
    found, more = [], np.zeros(n_q, dtype=bool)
    dropped = np.zeros(n_q, dtype=int)
    for q in range(n_q):
        rows = ordered[q]
        if len(rows) > 1:  # two candidates less than a copy tolerance apart are one counterfactual: keep the first
            keys = distinct_keys(rows, np.repeat(factuals[q][None], len(rows), axis=0), axes.copy_tolerance)
            first = np.array([keys.index(k) == i for i, k in enumerate(keys)])
            rows = rows[first]
        if len(rows) > 1:
            drop = not_alternatives(rows, factuals[q], axes.spans, axes.ordered)
            dropped[q] = int(drop.sum())
            rows = rows[~drop]
        more[q] = len(rows) > n_cf
        found.append(rows[:n_cf])
    stats["dropped"] = dropped
    return found, more, stats


def _add_pairs(form, g, axes, factuals, short, features, per_query, singles, stats, near) -> None:
    """Pareto-minimal two-feature counterfactuals for the queries in ``short`` (appended to ``per_query``).

    Pairs whose bound (:func:`._treeprofile.lowest_p`) cannot reach the threshold are skipped; the others are read by the
    compiled search (:func:`._treekernel.pair_search`) for forests and binary boosting in float64, whose cells
    near the threshold it can tell exact, and by :func:`slow_pairs` for the rest.
    """
    if not short or len(features) < 2:
        return
    a_idx, b_idx = np.triu_indices(len(features), k=1)
    pairs = np.column_stack([features[a_idx], features[b_idx]])
    query = np.repeat(np.asarray(short), len(pairs))
    axes_of = np.tile(pairs, (len(short), 1))
    threshold = axes.validity.threshold
    hopeless = lowest_p(form, factuals, np.asarray(short), pairs, near) >= threshold - NEAR_THRESHOLD
    stats["pairs_skipped"] = int(hopeless.sum())
    todo = np.flatnonzero(~hopeless)
    query, axes_of = query[todo], axes_of[todo]
    if not len(query):
        return
    rest = np.arange(len(query))
    if _compiled(form):
        rest = _compiled_pairs(form, g, axes, factuals, query, axes_of, per_query, singles, stats, near)
    if len(rest):
        single_best = {(int(q), int(j), float(s)): abs(v - factuals[q, j]) for q, j, v, s in zip(*singles[:2], singles[2], singles[3])}
        slow_pairs(form, axes, factuals, query[rest], axes_of[rest], per_query, single_best, stats, near)


def _compiled(form: TreeForm) -> bool:
    """The compiled pair search reads forests and binary boosting (XGBoost's float32 sums too: its cells within
    :data:`FLOAT32_WINDOW` of the threshold go to :func:`slow_pairs`, which rescores them by the model)."""
    return (form.link == "mean" or (form.link == "sigmoid" and form.undesired in ((0,), (1,)))
            or (form.link in ("band", "band-mean") and not form.float32))


def _compiled_pairs(form, g, axes, factuals, query, axes_of, per_query, singles, stats, near) -> np.ndarray:
    """The compiled pair search over groups (factual ``query``, features ``axes_of``); returns the groups it left
    to :func:`slow_pairs` (a cell near the threshold whose sum may not be the model's to the bit)."""
    n_q, n_f = factuals.shape
    tables = _candidate_tables(g, axes)
    limit = np.full((n_q, n_f, 2), np.inf)
    level_single = np.zeros((n_q, n_f, 64), dtype=bool)
    qs, js, values, sides = singles[:4]
    ordered = axes.ordered[js]
    limit[qs[ordered], js[ordered], (sides[ordered] > 0).astype(int)] = np.abs(values - factuals[qs, js])[ordered]
    level_single[qs[~ordered], js[~ordered], values[~ordered].astype(int)] = True
    f_cell = np.column_stack([np.searchsorted(g.grid[j], factuals[:, j], side="left") if g.is_number[j]
                              else np.nan_to_num(factuals[:, j]).astype(np.int64) for j in range(n_f)])
    levels_ok = np.ones((n_f, 64), dtype=bool)
    for j, ok in enumerate(axes.levels_ok):
        if ok is not None:
            levels_ok[j, : len(ok)] = ok
    weights, undesired = _pair_weights(form, g.weights)
    ranges, rec_box = _record_ranges(near, query, axes_of, n_f)
    grp, va, vb, size, pv, unsure, cut = pair_search(  # type: ignore[call-arg]
        query, axes_of[:, 0].copy(), axes_of[:, 1].copy(), ranges, _windows(g, factuals, query, axes_of, limit), rec_box,
        g.box_lo,
        g.box_hi, g.boxes.mask, weights, g.is_number, g.n_cells, factuals, f_cell, *tables,
        axes.step, axes.direction.astype(float), axes.ordinal, levels_ok, axes.scale, limit, level_single,
        _LINKS[form.link], float(form.n_trees), undesired, float(form.base[0]), form.undesired == (1,),
        axes.validity.threshold, FLOAT32_WINDOW if form.float32 else NEAR_THRESHOLD, MAX_PAIR_CANDIDATES, _band_array(form))
    stats["pairs_read"] += int((~unsure).sum())
    stats["pair_candidates_cut"] += int(cut.sum())
    for k, a_value, b_value, s, p_value in zip(grp.tolist(), va.tolist(), vb.tolist(), size.tolist(), pv.tolist()):
        q, a, b = int(query[k]), int(axes_of[k, 0]), int(axes_of[k, 1])
        row = factuals[q].copy()
        row[a], row[b] = a_value, b_value
        per_query[q].append((2, s, (a, b), row, p_value))
    return np.flatnonzero(unsure)


#: The compiled pair search's link codes (``_treekernel._p_grid``).
_LINKS = {"mean": 0, "sigmoid": 1, "band-mean": 2, "band": 3}


def _band_array(form: TreeForm) -> np.ndarray:
    """A regressor's band as the compiled search reads it: (above, below, inclusive, scale), NaN for no threshold."""
    band = form.band
    if band is None:
        return np.zeros(4)
    return np.array([np.nan if band.above is None else band.above, np.nan if band.below is None else band.below,
                     float(band.inclusive), form.band_scale])


def _pair_weights(form: TreeForm, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The leaf weights the pair search sums, and which of their outputs are undesired.

    A forest with one undesired class needs only that class's column of each part (whole, other, count): a
    2-d grid of three sums per cell instead of 2K + 1, and the same P to the bit.
    """
    k = form.value.shape[1]
    if form.link in ("band", "band-mean"):  # one output, the prediction, in both parts of the split sums
        return weights, np.ones(1, dtype=bool)
    if form.link == "mean" and len(form.undesired) == 1:
        u = int(form.undesired[0])
        return np.ascontiguousarray(weights[:, [u, k + u, 2 * k]]), np.ones(1, dtype=bool)
    undesired = np.zeros(k, dtype=bool)
    undesired[list(form.undesired) if form.link == "mean" else [0]] = True
    return weights, undesired


def _record_ranges(near, query, axes_of, n_features: int):
    """Per group, the four runs of walk records it reads (no change; a only; b only; a and b), and the boxes.

    Records sorted by (factual, first change + 1, second change + 1): each run is one key's.
    """
    rec_q, rec_box, rec_a, rec_b = near
    width = n_features + 1
    key = (rec_q * width + rec_a + 1) * width + rec_b + 1
    order = np.argsort(key, kind="stable")
    key = key[order]
    a, b = axes_of[:, 0], axes_of[:, 1]
    wanted = [(query * width) * width, (query * width + a + 1) * width, (query * width + b + 1) * width,
              (query * width + a + 1) * width + b + 1]
    ranges = np.column_stack([np.column_stack([np.searchsorted(key, w, side="left"), np.searchsorted(key, w, side="right")])
                              for w in wanted])
    return ranges.astype(np.int64), rec_box[order]


def _windows(g, factuals, query, axes_of, limit) -> np.ndarray:
    """Per group, the first and last global cell of each number axis that a candidate, its corner or the factual
    can lie in: within the best one-feature change of that feature on each side (the whole axis without one)."""
    out = np.zeros((len(query), 4), dtype=np.int64)
    for k in range(2):
        j = axes_of[:, k]
        for feature in np.unique(j):
            on = j == feature
            if not g.is_number[feature]:
                continue
            f = factuals[query[on], feature]
            down, up = limit[query[on], feature, 0], limit[query[on], feature, 1]
            bounds = g.grid[feature]
            with np.errstate(invalid="ignore"):
                first = np.where(np.isfinite(down), np.searchsorted(bounds, f - down, side="left"), 0)
                last = np.where(np.isfinite(up), np.searchsorted(bounds, f + up, side="left"), g.n_cells[feature] - 1)
            out[on, 2 * k] = np.clip(first, 0, g.n_cells[feature] - 1)
            out[on, 2 * k + 1] = np.clip(last, 0, g.n_cells[feature] - 1)
    return out


def _candidate_tables(g, axes):
    """Every number feature's candidates per side (:func:`._treegrid.number_candidates`), flat for the kernel, each
    (feature, side) run sorted by the grid bound the candidate came from."""
    parts, start = [], [0]
    for j in range(len(g.n_cells)):
        for side in (-1, 1):
            part = number_candidates(g, axes, j, side) if g.is_number[j] else (np.empty(0), *(np.empty(0, dtype=np.int64),) * 3)
            order = np.argsort(part[3], kind="stable")  # by the bound each came from: the kernel reads a window of them
            parts.append(tuple(a[order] for a in part))
            start.append(start[-1] + len(part[0]))
    grid = np.concatenate([np.asarray(b, dtype=float) for b in g.grid])
    g_start = np.r_[0, np.cumsum([len(b) for b in g.grid])].astype(np.int64)
    v, cell, corner, origin = (np.concatenate([p[k] for p in parts]) for k in range(4))
    return (grid, g_start, np.asarray(start, dtype=np.int64), v.astype(float), cell.astype(np.int64),
            corner.astype(np.int64), origin.astype(np.int64))



"""A native, batched, model-agnostic counterfactual generator (``batch`` and ``batch-plausible``).

Why it is fast where DiCE is slow: DiCE searches one query at a time and its
post-hoc sparsity step predicts one row per call. Here every round proposes
candidates for *all* queries still short of counterfactuals and scores them in
one ``predict_proba`` call; sparsification tries every single-feature revert of
every valid candidate in one call per greedy step. The model is only ever asked
for ``predict_proba`` on frames in the task's original columns.

Two ways to propose candidates:

- ``batch``: copy the factual and change a small random subset of the features
  allowed to vary (the subset grows over rounds), drawing each new value from the
  training rows' values of that feature (so levels keep their frequencies and
  integer features stay integer), inside the permitted range.
- ``batch-plausible``: start from the nearest training rows the model predicts
  desirable ("nearest unlike neighbours"), found with one index built per model
  and reused for every query; the factual takes their values on the features
  allowed to vary, then the result is sparsified back toward the factual.

Each query has its own random stream (:func:`query_seed`), and every step only
looks at that query's own candidates, so a query's counterfactuals do not depend
on which other queries share its batch, chunk or worker.
"""

from __future__ import annotations

import copy
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._errors import ConfigError
from ..data import TaskSpec
from ..models import FittedModel
from ._quality import feature_mad
from ._scoring import CodeScorer, resolve_cores, scorer_for
from ._set import (
    CounterfactualSet,
    GeneratorParams,
    Progress,
    assemble_counterfactual_set,
    check_request,
    encode_rows,
    query_seed,
)

__all__ = ["BatchGenerator", "BACKENDS"]

BACKENDS = ("loky", "dask")


class BatchGenerator(GeneratorParams):
    """Counterfactuals for many queries at once, by batched random search or from nearest unlike neighbours.

    Parameters
    ----------
    plausible : bool, default False
        Start from nearest training rows of the desired class (``batch-plausible``)
        instead of random changes (``batch``).
    samples : int or None
        Candidates proposed per query in the first round; default ``3 * n_cf`` random
        candidates, or ``n_cf`` neighbours (doubling each round) when ``plausible``.
    max_rounds : int, default 12
        Rounds before a query that is still short is given up (its count is recorded).
    n_jobs : int, default 1
        Cores to use; -1 = all of them (with ``backend="dask"``: every Dask worker thread).
        Up to :data:`PROCESS_QUERIES` queries per core the cores share the model's trees
        in threads of this process; more queries go to that many processes in chunks
        (starting a process costs about a second). Results do not depend on it.
    backend : {"loky", "dask"}, default "loky"
        ``"dask"`` sends the chunks to the running ``dask.distributed.Client``
        through joblib's Dask backend (a cluster, or a ``LocalCluster``).
    """

    # How the work is spread never changes the result, so it stays out of the store's key.
    execution_params = ("n_jobs", "backend")
    named_params = ("plausible",)

    def __init__(
        self,
        *,
        plausible: bool = False,
        samples: int | None = None,
        max_rounds: int = 12,
        n_jobs: int = 1,
        backend: str = "loky",
    ):
        if samples is not None and int(samples) < 1:
            raise ConfigError("samples must be at least 1 candidate per query and round.")
        if int(max_rounds) < 1:
            raise ConfigError("max_rounds must be at least 1.")
        if backend not in BACKENDS:
            raise ConfigError(f"Unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}.")
        if int(n_jobs) == 0:
            raise ConfigError("n_jobs must be a positive number of chunks, or -1 for all cores.")
        self._plausible = bool(plausible)
        self.samples = None if samples is None else int(samples)
        self.max_rounds = int(max_rounds)
        self._n_jobs = int(n_jobs)
        self._backend = backend
        self.name = "batch-plausible" if self._plausible else "batch"

    @property
    def plausible(self) -> bool:
        return self._plausible

    @property
    def n_jobs(self) -> int:
        return self._n_jobs

    @property
    def backend(self) -> str:
        return self._backend

    def generate(
        self,
        model: FittedModel,
        task: TaskSpec,
        queries: pd.DataFrame,
        *,
        n_cf: int,
        features_to_vary: Sequence[str] | None = None,
        permitted_range: Mapping[str, Sequence] | None = None,
        seed: int = 0,
        progress: Progress | None = None,
    ) -> CounterfactualSet:
        """Up to ``n_cf`` valid, distinct counterfactuals per row of ``queries`` (index = row ids).

        Returns a :class:`CounterfactualSet` with counterfactuals of shape
        (n_queries, n_cf, n_features); queries where no counterfactual was found
        (for instance because only immutable features drive the outcome) keep
        empty slots, and the set's notes count them.
        """
        vary, ranges = check_request(
            task, queries, n_cf=n_cf, features_to_vary=features_to_vary, permitted_range=permitted_range
        )
        start = time.perf_counter()
        tables, model_rows = _model_tables(model, task, need_index=self.plausible)
        space = _SearchSpace.build(task, model, tables, vary, ranges)
        factuals = encode_rows(task, queries[task.feature_names])
        if np.isnan(factuals).any():
            bad = queries.index[np.isnan(factuals).any(axis=1)].tolist()[:5]
            raise ConfigError(f"Query row(s) {bad} have missing values or levels the task does not know.")
        row_ids = queries.index.to_numpy().astype(int)
        settings = _SearchSettings(
            n_cf=int(n_cf),
            samples=self.samples or (int(n_cf) if self.plausible else 3 * int(n_cf)),
            max_rounds=self.max_rounds,
            plausible=self.plausible,
            seed=int(seed),
        )
        cores = self._cores()
        in_processes = self._backend == "dask" or (cores > 1 and len(row_ids) >= cores * PROCESS_QUERIES)
        workers = cores if in_processes else 1
        if not in_processes:
            space = space.with_threads(cores)
        # At least one chunk per worker, and none above CHUNK_QUERIES queries: memory stays flat
        # however many factuals come, and progress is reported after each chunk.
        n_chunks = max(workers, -(-len(row_ids) // CHUNK_QUERIES))
        chunks = [c for c in np.array_split(np.arange(len(row_ids)), n_chunks) if len(c)]
        found: list[np.ndarray] = [np.empty((0, len(task.features)))] * len(row_ids)
        done = 0
        model_calls = int(model_rows > 0)
        for chunk, (per_query, rows, calls) in zip(chunks, self._run(space, settings, factuals, row_ids, chunks, workers), strict=True):
            model_rows += rows
            model_calls += calls
            for pos, cfs in zip(chunk, per_query, strict=True):
                found[pos] = cfs
            done += len(chunk)
            if progress is not None:
                progress(done, len(row_ids))
        # Handed over as codes: a frame per query would cost more than the search itself.
        return assemble_counterfactual_set(
            task,
            model,
            queries[task.feature_names],
            found,
            n_cf=n_cf,
            generator=self.name,
            seconds=time.perf_counter() - start,
            model_rows=model_rows,
            config={
                "plausible": self.plausible,
                "samples": settings.samples,
                "max_rounds": self.max_rounds,
                "features_to_vary": vary,
                "permitted_range": ranges or None,
                "seed": int(seed),
                "n_jobs": self._n_jobs,
                "backend": self._backend,
                # How the cores were used (never changes the result): processes, or threads over a forest's trees.
                "processes": workers,
                "tree_threads": space.tables.scorer.threads,
                # predict_proba calls of the search (the validity check that packs the set adds one more)
                "model_calls": model_calls,
                "scored_from_codes": tables.scorer.fast,
            },
            # The workers are done by now: the final check may use every core the call was given.
            p_undesirable=space.tables.scorer.with_threads(cores),
        )

    # -- spreading chunks of queries over cores or a cluster --------------------------------
    def _cores(self) -> int:
        if self._n_jobs < 0 and self._backend == "dask":
            return max(1, sum(_dask_client().nthreads().values()))
        return resolve_cores(self._n_jobs)

    def _run(self, space, settings, factuals, row_ids, chunks, workers):
        """Each chunk's result, in chunk order, as it finishes (a generator)."""
        if workers == 1 and self._backend == "loky":
            return (_search_chunk(space, settings, factuals[c], row_ids[c]) for c in chunks)
        import joblib

        space = space.for_workers()
        jobs = (joblib.delayed(_search_chunk)(space, settings, factuals[c], row_ids[c]) for c in chunks)
        if self._backend == "dask":
            _dask_client()  # a clear error instead of joblib's when no cluster is connected
            with joblib.parallel_config(backend="dask"):
                return joblib.Parallel(n_jobs=-1)(jobs)
        return joblib.Parallel(n_jobs=workers, backend="loky", return_as="generator")(jobs)


def _dask_client():
    try:
        from dask.distributed import get_client
    except ImportError:  # pragma: no cover - distributed is in requirements.txt
        raise ConfigError("backend='dask' needs the 'distributed' package (pip install distributed).") from None
    try:
        return get_client()
    except ValueError:
        raise ConfigError(
            "backend='dask' needs a running dask.distributed Client: create one first, "
            "e.g. Client(LocalCluster()) or Client('scheduler-address:8786')."
        ) from None


# -- per-model tables: built once per (model, data), reused by every call ----------------------
@dataclass
class _ModelTables:
    train_codes: np.ndarray  # (n_train, F) codes of the model's training rows
    mad: np.ndarray  # (F,) median absolute deviation of continuous features (1 where 0 or categorical)
    scorer: CodeScorer  # P(undesirable) straight from codes
    desired_codes: np.ndarray | None = None  # training rows the model predicts desirable
    index: object = None  # NearestNeighbors over desired_codes' embedding


_TABLES: weakref.WeakKeyDictionary[FittedModel, dict[str, _ModelTables]] = weakref.WeakKeyDictionary()


def _model_tables(model: FittedModel, task: TaskSpec, *, need_index: bool) -> tuple[_ModelTables, int]:
    """The model's cached tables (built on first use) and the model rows this call spent building them."""
    per_task = _TABLES.setdefault(model, {})
    tables = per_task.get(task.fingerprint)
    if tables is None:
        train = encode_rows(task, task.frame.loc[model.train_index, task.feature_names])
        tables = per_task[task.fingerprint] = _ModelTables(
            train_codes=train, mad=feature_mad(task, train), scorer=scorer_for(model, task)
        )
    rows_spent = 0
    if need_index and tables.desired_codes is None:
        from sklearn.neighbors import NearestNeighbors

        desirable = tables.scorer(tables.train_codes) <= 0.5
        rows_spent = len(tables.train_codes)
        desired = tables.train_codes[desirable]
        if len(desired):
            tables.index = NearestNeighbors(metric="manhattan").fit(_embed(task, desired, tables.mad))
        tables.desired_codes = desired
    return tables, rows_spent


def _embed(task: TaskSpec, codes: np.ndarray, mad: np.ndarray) -> np.ndarray:
    """Rows in a space where L1 = MAD-normalised L1 on continuous features + categorical mismatches."""
    parts = []
    for j, f in enumerate(task.features):
        if f.is_continuous:
            parts.append((codes[:, j] / mad[j])[:, None])
        else:
            one_hot = np.zeros((len(codes), len(f.categories)))
            one_hot[np.arange(len(codes)), codes[:, j].astype(int)] = 0.5  # two cells differ: 0.5 + 0.5 = 1
            parts.append(one_hot)
    return np.hstack(parts)


# -- the search space of one call ---------------------------------------------------------
@dataclass
class _SearchSpace:
    """What a chunk of queries needs: the model, which features move and the values they may take."""

    task: TaskSpec
    model: FittedModel
    vary: np.ndarray  # (F,) bool: feature may change (and has at least one value to change to)
    values: list  # per feature: sorted candidate codes, or None
    cumulative: list  # per feature: cumulative weights of ``values``, or None
    allowed_low: np.ndarray  # (F,) permitted range (codes); -inf/inf when open
    allowed_high: np.ndarray
    allowed_levels: list  # per feature: bool mask over levels, or None when all allowed
    direction: np.ndarray  # (F,) +1 increase only, -1 decrease only, 0 either (ordinal codes follow the order)
    tables: _ModelTables

    @classmethod
    def build(cls, task, model, tables, vary_names, ranges) -> _SearchSpace:
        n_f = len(task.features)
        vary = np.array([f.name in vary_names for f in task.features])
        values, cumulative, allowed_levels = [None] * n_f, [None] * n_f, [None] * n_f
        low, high = np.full(n_f, -np.inf), np.full(n_f, np.inf)
        for j, f in enumerate(task.features):
            col = tables.train_codes[:, j]
            col = col[~np.isnan(col)]
            if f.is_continuous:
                if f.name in ranges:
                    low[j], high[j] = ranges[f.name]
                kept = col[(col >= low[j]) & (col <= high[j])]
                if len(kept):
                    vals, counts = np.unique(kept, return_counts=True)
                else:  # no training value inside a narrow range: spread candidates evenly over it
                    vals = _grid(low[j], high[j], integer=f.integer)
                    counts = np.ones(len(vals))
            else:
                levels = np.arange(len(f.categories), dtype=float)
                mask = np.ones(len(levels), bool)
                if f.name in ranges:
                    mask = np.isin(np.asarray(f.categories, dtype=object), ranges[f.name])
                    allowed_levels[j] = mask
                # Training frequencies, plus one so an allowed level unseen in training can still be proposed.
                counts = np.bincount(col.astype(int), minlength=len(levels)).astype(float) + 1.0
                vals, counts = levels[mask], counts[mask]
            if vary[j] and len(vals):
                values[j] = vals.astype(float)
                cumulative[j] = np.cumsum(counts, dtype=float)
            else:
                vary[j] = False
        direction = np.array([{"increase": 1, "decrease": -1}.get(f.direction, 0) for f in task.features])
        return cls(task, model, vary, values, cumulative, low, high, allowed_levels, direction, tables)

    def for_workers(self) -> _SearchSpace:
        """This space without the task's rows or the training codes, which the search never reads.

        Every chunk sent to another process carries its space; with the rows a 200,000-row
        table cost 0.4 s to pickle per chunk, a fifth of what a second core saves on 20,000 factuals.
        Its scorer walks a forest's trees in one thread: the processes already share out the cores.
        """
        task = replace(self.task, frame=self.task.frame.iloc[:0])
        scorer = copy.copy(self.tables.scorer.with_threads(1))  # each worker process is one of the cores already
        scorer.task = task
        tables = replace(self.tables, train_codes=self.tables.train_codes[:0], scorer=scorer)
        return replace(self, task=task, tables=tables)

    def with_threads(self, threads: int) -> _SearchSpace:
        """This space scoring with a forest's trees spread over ``threads`` threads."""
        return replace(self, tables=replace(self.tables, scorer=self.tables.scorer.with_threads(threads)))

    def p_undesirable(self, codes: np.ndarray) -> np.ndarray:
        """P(undesirable) for coded rows, shape (n_rows,): the only way the search touches the model."""
        return self.tables.scorer(codes)

    def permitted(self, codes: np.ndarray, factual: np.ndarray) -> np.ndarray:
        """Per cell (rows, F): the factual's own value, or a value of a varying feature inside its permitted range."""
        ok = (codes >= self.allowed_low) & (codes <= self.allowed_high) & self.vary
        ok &= np.sign(codes - factual) * self.direction >= 0
        for j, mask in enumerate(self.allowed_levels):
            if mask is not None:
                ok[:, j] &= mask[codes[:, j].astype(int)]
        return ok | (codes == factual)


def _grid(low: float, high: float, *, integer: bool) -> np.ndarray:
    if integer:
        low, high = np.ceil(low), np.floor(high)
        if low > high:
            return np.empty(0)
        return np.unique(np.linspace(low, high, num=int(min(high - low + 1, 101))).round())
    return np.linspace(low, high, num=101)


@dataclass(frozen=True)
class _SearchSettings:
    n_cf: int
    samples: int
    max_rounds: int
    plausible: bool
    seed: int


# -- the search over one chunk of queries ---------------------------------------------------
#: Queries per core from which a search is split over processes (below it the cores share the trees in threads).
PROCESS_QUERIES = 1_000
#: Most queries searched together in one chunk (results do not depend on it: each query has its own stream).
CHUNK_QUERIES = 5_000
#: Rounds after which a query may be completed with partly sparsified counterfactuals (see ``_search_chunk``).
PATIENCE = 4


def _search_chunk(space: _SearchSpace, settings: _SearchSettings, factuals: np.ndarray, row_ids: np.ndarray):
    """Counterfactual codes per query (a list of (n_i, F) arrays, n_i <= n_cf) and the model rows used.

    A query stays in the search until it has n_cf distinct fully sparsified
    counterfactuals, or, after ``PATIENCE`` rounds, n_cf distinct valid ones of any
    sparsity (when one change alone flips it, every sparsified candidate collapses
    onto that one change, so the others must keep an extra change to be distinct).
    """
    n_q, n_f = factuals.shape
    rngs = [np.random.default_rng(query_seed(settings.seed, int(r))) for r in row_ids]
    counter = _RowCounter(space)
    pools: list[dict[bytes, np.ndarray]] = [{} for _ in range(n_q)]  # every distinct valid state found
    finals: list[set[bytes]] = [set() for _ in range(n_q)]  # the states no single revert keeps valid
    n_vary = int(space.vary.sum())
    subset = np.ones(n_q, dtype=int)  # features changed per random candidate, per query
    neighbours = _NeighbourFeed(space, factuals) if settings.plausible else None
    active = np.arange(n_q)
    for round_no in range(settings.max_rounds):
        if neighbours is not None:
            candidates, owner = neighbours.propose(active, round_no, settings)
        else:
            candidates, owner = _random_candidates(space, factuals, rngs, active, subset, settings.samples)
        candidates, owner = _distinct_changes(candidates, owner, factuals)
        hits = np.zeros(n_q, dtype=int)
        if len(candidates):
            valid = counter.p_undesirable(candidates) <= 0.5
            hits = np.bincount(owner[valid], minlength=n_q)
            states, source, final = _sparsify(counter, candidates[valid], factuals[owner[valid]])
            for q, row, is_final in zip(owner[valid][source], states, final):
                key = row.tobytes()
                pools[q].setdefault(key, row)
                if is_final:
                    finals[q].add(key)
        # DiCE-like growth while changes keep flipping the query; doubling when a round found nothing.
        subset[active] = np.minimum(n_vary, np.where(hits[active] > 0, subset[active] + 1, 2 * subset[active]))
        patient = round_no + 1 >= PATIENCE
        active = np.array(
            [q for q in active if len(finals[q]) < settings.n_cf and not (patient and len(pools[q]) >= settings.n_cf)],
            dtype=int,
        )
        if len(active) == 0:
            break
    per_query = [
        _select(np.array(list(pool.values())).reshape(-1, n_f), factuals[q], settings.n_cf, rngs[q])
        for q, pool in enumerate(pools)
    ]
    return per_query, counter.rows, counter.calls


class _RowCounter:
    """Counts the rows a chunk sends to the model (reported as ``model_rows``) and the calls it takes."""

    def __init__(self, space: _SearchSpace):
        self.space, self.rows, self.calls = space, 0, 0

    def p_undesirable(self, codes: np.ndarray) -> np.ndarray:
        self.rows += len(codes)
        self.calls += 1
        return self.space.p_undesirable(codes)


def _random_candidates(space, factuals, rngs, active, subset, samples):
    """``samples`` candidates per active query: the factual with ``subset[q]`` random varying features redrawn."""
    n_f = factuals.shape[1]
    if len(active) == 0:
        return np.empty((0, n_f)), np.empty(0, dtype=int)
    # One draw per query from its own stream: (samples, 2, F) uniforms for subset keys and values.
    draws = np.stack([rngs[q].random((samples, 2, n_f)) for q in active])
    owner = np.repeat(active, samples)
    keys = draws[:, :, 0, :].reshape(-1, n_f)
    uniforms = draws[:, :, 1, :].reshape(-1, n_f)
    keys[:, ~space.vary] = np.inf
    ranks = np.argsort(np.argsort(keys, axis=1, kind="stable"), axis=1, kind="stable")
    chosen = ranks < subset[owner][:, None]
    base = factuals[owner]
    candidates = base.copy()
    for j in np.flatnonzero(space.vary):
        rows = np.flatnonzero(chosen[:, j])
        if len(rows):
            candidates[rows, j] = _draw_other(
                space.values[j], space.cumulative[j], base[rows, j], uniforms[rows, j], direction=space.direction[j]
            )
    return candidates, owner


def _draw_other(values, cumulative, current, uniforms, *, direction: int = 0):
    """Draw from ``values`` with weights (given as ``cumulative``), never the ``current`` value.

    Inverse-CDF sampling with the current value's weight cut out: shapes (n,) in, (n,) out.
    ``direction`` +1 draws only values above ``current``, -1 only values below (the
    constraint is honoured while proposing, not by filtering afterwards). Where no value
    is left to draw, the current one is kept (the cell simply does not change).
    """
    total = cumulative[-1]
    pos = np.searchsorted(values, current)  # values below current: [0, pos)
    pos_c = np.minimum(pos, len(values) - 1)
    present = (pos < len(values)) & (values[pos_c] == current)
    before = np.where(pos > 0, cumulative[np.maximum(pos, 1) - 1], 0.0)  # weight of the values below
    own = np.where(present, cumulative[pos_c] - before, 0.0)
    if direction > 0:  # only the weight above current: [before + own, total)
        start, span = before + own, total - before - own
        target = start + uniforms * span
    elif direction < 0:  # only the weight below current: [0, before)
        span = before
        target = uniforms * span
    else:
        span = total - own
        target = uniforms * span
        target = np.where(present & (target >= before), target + own, target)
    idx = np.minimum(np.searchsorted(cumulative, target, side="right"), len(values) - 1)
    return np.where(span > 0, values[idx], current)


def _distinct_changes(candidates, owner, factuals):
    """Drop candidates equal to their factual, and repeats of a query's candidate within the round."""
    differs = (candidates != factuals[owner]).any(axis=1)
    candidates, owner = candidates[differs], owner[differs]
    keyed = np.ascontiguousarray(np.column_stack([owner, candidates]))
    # One opaque key per row: a 1-D sort instead of np.unique(axis=0)'s column-by-column one.
    _, first = np.unique(keyed.view(np.dtype((np.void, keyed.dtype.itemsize * keyed.shape[1]))).ravel(), return_index=True)
    first = np.sort(first)
    return candidates[first], owner[first]


def _sparsify(counter: _RowCounter, candidates: np.ndarray, factuals: np.ndarray):
    """Revert changed features to the factual's values while the prediction stays desirable.

    Each pass, for all open candidates at once: one model call scores every single
    revert; the features whose revert keeps the candidate valid are ranked by the
    P(undesirable) it leaves, and a second call scores reverting the 2, 3, ... best
    of them together; the largest valid group is applied. A candidate closes when
    no single revert keeps it valid. Cost per pass: about 2k rows for k changes.

    Parameters
    ----------
    candidates, factuals : ndarray of shape (n, F)
        Valid candidates and the factual each belongs to.

    Returns
    -------
    states : ndarray of shape (m, F)
        Every valid state passed through (the candidates themselves included).
    source : ndarray of shape (m,)
        Index of the candidate each state came from.
    final : ndarray of bool, shape (m,)
        The state is where its candidate's sparsification ended.
    """
    n = len(candidates)
    current = candidates.copy()
    states, sources = [current.copy()], [np.arange(n)]
    open_ = np.ones(n, dtype=bool)
    while True:
        changed = current != factuals
        open_ &= changed.sum(axis=1) >= 2  # a single change cannot be reverted and stay a counterfactual
        cand_idx, feat_idx = np.nonzero(changed & open_[:, None])
        if len(cand_idx) == 0:
            break
        singles = current[cand_idx].copy()
        singles[np.arange(len(singles)), feat_idx] = factuals[cand_idx, feat_idx]
        p = counter.p_undesirable(singles)
        ok = p <= 0.5
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
            valid_groups = groups[counter.p_undesirable(trials) <= 0.5]
            # Rows are in rank order, so a candidate's last valid row is its largest valid group.
            best_row = np.full(n, -1)
            np.maximum.at(best_row, cand_idx[valid_groups], valid_groups)
            upgrade = best_row[cand_idx[chosen_row]]
            chosen_row = np.where(upgrade >= 0, upgrade, chosen_row)
        winners = cand_idx[chosen_row]
        current[winners] = np.where(revert[chosen_row], factuals[winners], current[winners])
        open_[winners] = True
        states.append(current[winners].copy())
        sources.append(winners)
    states.append(current)
    sources.append(np.arange(n))
    final = np.r_[np.zeros(sum(len(s) for s in sources[:-1]), dtype=bool), np.ones(n, dtype=bool)]
    return np.concatenate(states), np.concatenate(sources), final


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


class _NeighbourFeed:
    """Nearest unlike neighbours per query from the per-model index, handed out in growing windows."""

    def __init__(self, space: _SearchSpace, factuals: np.ndarray):
        self.space, self.factuals = space, factuals
        self.served = np.zeros(len(factuals), dtype=int)

    def propose(self, active, round_no, settings):
        tables = self.space.tables
        n_f = self.factuals.shape[1]
        if tables.index is None or len(active) == 0:
            return np.empty((0, n_f)), np.empty(0, int)
        n_desired = len(tables.desired_codes)
        window = min(n_desired, settings.samples * 2**round_no)
        reach = min(n_desired, int(self.served[active].max()) + window)
        embedding = _embed(self.space.task, self.factuals[active], tables.mad)
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

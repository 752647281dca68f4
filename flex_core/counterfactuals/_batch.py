"""A native, batched, model-agnostic counterfactual generator (``batch`` and ``batch-plausible``).

Why it is fast where DiCE is slow: DiCE searches one query at a time and its
post-hoc sparsity step predicts one row per call. Here every step proposes or
checks candidates for *all* queries still short of counterfactuals and scores
them in one call; reverting and shrinking changes are batched the same way.

What it returns (``refine="minimal"``, the default): up to n_cf *distinct minimal*
counterfactuals per query, none of whose changes can be reverted or shrunk with the
outcome staying desirable, found in this order (``batch``):

1. **Single changes**: every feature alone, at each of its levels or at
   :data:`SINGLE_GRID` quantiles of its training values (each level, and each side of a
   number, is one item), in stages of n_cf items in a seeded random order while a query is
   short, so those that flip it are a uniform sample of all that do; each that flips the
   query is shrunk to the smallest value that still does.
2. **Trade-offs**: a number that flips the query alone, set one step short of
   doing so (a *near miss*), with every other feature at each end of its range
   (one call): the features that bring it closer to a flip are its partners.
3. **Rounds of random candidates** for every query still short: a near miss with
   random partners (a smaller cibil rise together with a shorter loan term), or,
   where nothing flips a query alone, a random subset of features (two at first,
   growing as in DiCE) redrawn from the training rows' values (so levels keep their
   frequencies and integer features stay integer), inside the permitted range and
   short of any single flip.

``batch-plausible`` starts instead from the nearest training rows the model predicts
desirable ("nearest unlike neighbours"), found with one index built per model and
reused for every query; the factual takes their values on the features allowed to vary.
Either way every valid candidate is then made minimal (:mod:`._refine`), and a query
keeps the distinct results. Refining costs a dozen model calls however many rows it
takes, so valid candidates wait in a queue and are refined together: the single
changes at once (their minimal values bound the near misses), then the trade-off
probes with the random rounds in blocks (:data:`SETTLE_ROUNDS`). ``batch-plausible``
refines after every round: its neighbours collapse onto one another far more often.

Each query has its own random stream (:func:`query_seed`), and every step only
looks at that query's own candidates, so a query's counterfactuals do not depend
on which other queries share its batch, chunk or worker.
"""

from __future__ import annotations

import copy
import itertools
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .._errors import ConfigError
from ..data import TaskSpec
from ..limits import check
from ..models import FittedModel
from ._alternatives import ALTERNATIVE_TOLERANCE, not_alternatives
from ._quality import feature_mad
from ._refine import CountingScorer, MinimalPlan, check_refine, minimal_rows, revert_passengers
from ._scoring import CodeScorer, resolve_cores, scorer_for
from ._set import (
    CounterfactualSet,
    GeneratorParams,
    Progress,
    assemble_counterfactual_set,
    check_request,
    distinct_keys,
    encode_rows,
    encoded_width,
    query_seed,
)
from ._validity import DEFAULT_MARGIN, DEFAULT_RADIUS, Validity

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
        Candidates proposed per query and round; default ``2 * n_cf`` random
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
    margin : float, default 0.15
        A counterfactual is valid when P(undesirable) < 0.5 - margin (:mod:`._validity`).
    radius : float, default 0.01
        ... and stays so with every changed number moved this share of its range toward the factual's
        value. ``margin=0, radius=0`` is the paper's setting (P(undesirable) < 0.5).
    """

    # How the work is spread never changes the result, so it stays out of the store's key.
    execution_params = ("n_jobs", "backend")
    #: ``generate`` takes ``refine`` and makes counterfactuals minimal while it searches (the store
    #: then does not refine them again), so n_cf counts distinct minimal counterfactuals.
    refines_in_search = True
    named_params = ("plausible",)

    def __init__(
        self,
        *,
        plausible: bool = False,
        samples: int | None = None,
        max_rounds: int = 12,
        n_jobs: int = 1,
        backend: str = "loky",
        margin: float = DEFAULT_MARGIN,
        radius: float = DEFAULT_RADIUS,
    ):
        if backend not in BACKENDS:
            raise ConfigError(f"Unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}.")
        self._plausible = bool(plausible)
        self.samples = None if samples is None else check("samples", samples)
        self.max_rounds = check("max_rounds", max_rounds)
        self._n_jobs = check("n_jobs", n_jobs)
        self._backend = backend
        rule = Validity(margin, radius)  # checked once, here
        self.margin, self.radius = rule.margin, rule.radius
        self.name = "batch-plausible" if self._plausible else "batch"

    def peak_bytes(self, task: TaskSpec, *, n_queries: int, n_cf: int) -> int:
        """About the most memory one :meth:`generate` call holds: the candidates of a chunk of queries in one round.

        Per candidate, :data:`CANDIDATE_WORDS` plus the draws (2 per feature, plus one), the encoded
        row (one value per number, one per level of a categorical feature), 8 bytes each.
        """
        per_query = self.samples or (int(n_cf) if self.plausible else 2 * int(n_cf))
        if self.plausible:  # the window of neighbours doubles for three rounds
            per_query *= 8
        n_f = len(task.features)
        return min(int(n_queries), CHUNK_QUERIES) * per_query * 8 * (2 * n_f + 1 + encoded_width(task) + CANDIDATE_WORDS)

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
        refine: str = "minimal",
    ) -> CounterfactualSet:
        """Up to ``n_cf`` valid, distinct counterfactuals per row of ``queries`` (index = row ids).

        ``refine="minimal"`` (the default) makes every counterfactual minimal inside the search
        (no change can be reverted or shrunk and keep it valid), so distinct minimal ones are
        counted toward ``n_cf``; ``"none"`` only reverts the changes a candidate does not need.

        Returns a :class:`CounterfactualSet` with counterfactuals of shape
        (n_queries, n_cf, n_features); queries where fewer distinct counterfactuals were found
        (for instance because only immutable features drive the outcome, or only two minimal
        ones exist) keep empty slots, and the set's notes count them.
        """
        check_refine(refine)
        vary, ranges = check_request(
            task, queries, n_cf=n_cf, features_to_vary=features_to_vary, permitted_range=permitted_range
        )
        start = time.perf_counter()
        validity = Validity(self.margin, self.radius)
        tables, model_rows = _model_tables(model, task, need_index=self.plausible, validity=validity)
        space = _SearchSpace.build(task, model, tables, vary, ranges, minimal=refine == "minimal", validity=validity)
        factuals = encode_rows(task, queries[task.feature_names])
        if np.isnan(factuals).any():
            bad = queries.index[np.isnan(factuals).any(axis=1)].tolist()[:5]
            raise ConfigError(f"Query row(s) {bad} have missing values or levels the task does not know.")
        row_ids = queries.index.to_numpy().astype(int)
        settings = _SearchSettings(
            n_cf=int(n_cf),
            samples=self.samples or (int(n_cf) if self.plausible else 2 * int(n_cf)),
            max_rounds=self.max_rounds,
            plausible=self.plausible,
            seed=int(seed),
            # Nearest unlike neighbours collapse onto one another when made minimal far more often than
            # random candidates: batch-plausible refines every round, to draw the next ones knowing that.
            settle_rounds=(1, 1) if self.plausible else SETTLE_ROUNDS,
            collapse_margin=0 if self.plausible else COLLAPSE_MARGIN,
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
        dropped = np.zeros(len(row_ids), dtype=int)
        done = 0
        model_calls = int(model_rows > 0)
        for chunk, (per_query, rows, calls, not_ways) in zip(chunks, self._run(space, settings, factuals, row_ids, chunks, workers),
                                                             strict=True):
            model_rows += rows
            model_calls += calls
            dropped[chunk] = not_ways
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
                "refine": refine,
                "single_grid": None if self.plausible else SINGLE_GRID,
                "patience": PATIENCE,
                "settle_rounds": list(settings.settle_rounds),
                "collapse_margin": settings.collapse_margin,
                "n_jobs": self._n_jobs,
                "backend": self._backend,
                # How the cores were used (never changes the result): processes, or threads over a forest's trees.
                "processes": workers,
                "tree_threads": space.tables.scorer.threads,
                # predict_proba calls of the search (the validity check that packs the set adds one more)
                "model_calls": model_calls,
                "scored_from_codes": tables.scorer.fast,
                "alternatives_tolerance": ALTERNATIVE_TOLERANCE if refine == "minimal" else None,
            },
            validity=space.validity,
            dropped=dropped,
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
    desired_codes: np.ndarray | None = None  # training rows that are valid counterfactuals (``desired_for``)
    index: object = None  # NearestNeighbors over desired_codes' embedding
    desired_for: float | None = None  # the validity threshold desired_codes were chosen under


_TABLES: weakref.WeakKeyDictionary[FittedModel, dict[str, _ModelTables]] = weakref.WeakKeyDictionary()


def _model_tables(model: FittedModel, task: TaskSpec, *, need_index: bool,
                  validity: Validity) -> tuple[_ModelTables, int]:
    """The model's cached tables (built on first use) and the model rows this call spent building them."""
    per_task = _TABLES.setdefault(model, {})
    tables = per_task.get(task.fingerprint)
    if tables is None:
        train = encode_rows(task, task.frame.loc[model.train_index, task.feature_names])
        tables = per_task[task.fingerprint] = _ModelTables(
            train_codes=train, mad=feature_mad(task, train), scorer=scorer_for(model, task)
        )
    rows_spent = 0
    if need_index and tables.desired_for != validity.threshold:
        from sklearn.neighbors import NearestNeighbors

        desirable = validity.desirable(tables.scorer(tables.train_codes))
        rows_spent = len(tables.train_codes)
        desired = tables.train_codes[desirable]
        if len(desired):
            tables.index = NearestNeighbors(metric="manhattan").fit(_embed(task, desired, tables.mad))
        tables.desired_codes, tables.desired_for = desired, validity.threshold
    return tables, rows_spent


def _embed(task: TaskSpec, codes: np.ndarray, mad: np.ndarray) -> np.ndarray:
    """Rows in a space where L1 = MAD-normalised L1 on continuous features + categorical mismatches."""
    parts = []
    for j, f in enumerate(task.features):
        if f.is_continuous:
            parts.append((codes[:, j] / mad[j])[:, None])
        else:
            one_hot = np.zeros((len(codes), len(f.levels)))
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
    single_grid: list  # per feature: the values tried as a single change, or None
    plan: MinimalPlan | None  # how to make a counterfactual minimal (None: refine="none")
    validity: Validity  # when a candidate is a valid counterfactual

    @classmethod
    def build(cls, task, model, tables, vary_names, ranges, *, minimal: bool, validity: Validity) -> _SearchSpace:
        n_f = len(task.features)
        vary = np.array([f.name in vary_names for f in task.features])
        values: list[np.ndarray | None] = [None] * n_f
        cumulative: list[np.ndarray | None] = [None] * n_f
        allowed_levels: list[np.ndarray | None] = [None] * n_f
        low, high = np.full(n_f, -np.inf), np.full(n_f, np.inf)
        for j, f in enumerate(task.features):
            col = tables.train_codes[:, j]
            col = col[~np.isnan(col)]
            if f.is_continuous:
                if f.name in ranges:
                    low[j], high[j] = ranges[f.name]
                kept = col[(col >= low[j]) & (col <= high[j])]
                if len(kept):
                    vals, counts = np.unique(kept.astype(float), return_counts=True)
                else:  # no training value inside a narrow range: spread candidates evenly over it
                    vals = _grid(low[j], high[j], integer=f.integer)
                    counts = np.ones(len(vals), dtype=int)
            else:
                levels = np.arange(len(f.levels), dtype=float)
                mask = np.ones(len(levels), bool)
                if f.name in ranges:
                    mask = np.isin(np.asarray(f.levels, dtype=object), ranges[f.name])
                    allowed_levels[j] = mask
                # Training frequencies, plus one so an allowed level unseen in training can still be proposed.
                weights = np.bincount(col.astype(int), minlength=len(levels)) + 1
                vals, counts = levels[mask], weights[mask]
            if vary[j] and len(vals):
                values[j] = vals.astype(float)
                cumulative[j] = np.cumsum(counts, dtype=float)
            else:
                vary[j] = False
        direction = np.array([{"increase": 1, "decrease": -1}.get(f.direction, 0) for f in task.features])
        single_grid = [_single_grid(task.features[j], v, c) if v is not None and c is not None else None
                       for j, (v, c) in enumerate(zip(values, cumulative))]
        train = tables.train_codes
        with np.errstate(invalid="ignore"):
            spans = np.array([np.nanmax(train[:, j]) - np.nanmin(train[:, j]) if f.is_continuous and len(train) else np.nan
                              for j, f in enumerate(task.features)])
        plan = MinimalPlan.build(task, ranges, spans) if minimal else None
        validity = validity.on(task, spans)
        return cls(task, model, vary, values, cumulative, low, high, allowed_levels, direction, tables, single_grid, plan,
                   validity)

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


def _single_grid(feature, values: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """The values a feature takes when it is tried as the only change.

    A number: :data:`SINGLE_GRID` quantiles of its permitted training values (weighted as they
    occur, so its smallest and largest are among them); a level: every permitted level, at most the
    :data:`SINGLE_LEVELS` most frequent. The order in which they are tried is the search's seeded
    random order of items (see ``_item_ranks``), not this one.
    """
    if feature.is_continuous:
        quantiles = np.linspace(0.0, 1.0, SINGLE_GRID) * cumulative[-1]
        grid = values[np.minimum(np.searchsorted(cumulative, quantiles, side="left"), len(values) - 1)]
        middle = np.argsort(np.abs(np.arange(1, SINGLE_GRID - 1) - (SINGLE_GRID - 1) / 2), kind="stable") + 1
        ordered = np.r_[grid[-1], grid[0], grid[middle]]
        return ordered[np.sort(np.unique(ordered, return_index=True)[1])]
    weights = np.diff(np.r_[0.0, cumulative])
    return values[np.argsort(-weights, kind="stable")[:SINGLE_LEVELS]]


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
    settle_rounds: tuple[int, int]  # rounds before the first refinement, and between later ones
    collapse_margin: int  # valid candidates a query may queue beyond what it lacks


# -- the search over one chunk of queries ---------------------------------------------------
#: Queries per core from which a search is split over processes (below it the cores share the trees in threads).
PROCESS_QUERIES = 1_000
#: Most queries searched together in one chunk (results do not depend on it: each query has its own stream).
CHUNK_QUERIES = 5_000
#: Memory per candidate besides its draws and encoded row, in 8-byte words (masks, ranks, the model's scores;
#: measured on toy2d and synthetic-regional with a forest: 210-260 bytes per candidate in all).
CANDIDATE_WORDS = 24
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
#: Values per number scanned when every single-feature change is tried (quantiles of the training values:
#: the smallest, the median and the largest; the flip found is then shrunk to its boundary anyway).
SINGLE_GRID = 3
#: Levels per categorical feature scanned alone at most (the most frequent ones).
SINGLE_LEVELS = 64
#: Item numbers per feature (a level's code, or 0/1 for a number's sides): keeps items of features apart.
ITEMS_PER_FEATURE = 1_000_000


def _search_chunk(space: _SearchSpace, settings: _SearchSettings, factuals: np.ndarray, row_ids: np.ndarray):
    """Counterfactual codes per query (a list of (n_i, F) arrays, n_i <= n_cf) and the model rows used.

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

    Making valid candidates final (``settle``): each is cleared of the changes it does not need
    (:func:`revert_passengers`) and, with ``refine="minimal"``, made minimal (:func:`minimal_rows`);
    a query keeps the *distinct* results (:func:`distinct_keys`). A query queues at most the
    candidates it still lacks (``batch``: plus :data:`COLLAPSE_MARGIN`), and sits out the rest of a block once
    its queue covers what it lacks. It stays in the search until it has n_cf distinct ones, until
    :data:`PATIENCE` rounds in a row add none, or until ``max_rounds``: where fewer distinct
    counterfactuals exist, fewer are returned, never copies.
    """
    n_q, n_f = factuals.shape
    rngs = [np.random.default_rng(query_seed(settings.seed, int(r))) for r in row_ids]
    counter = CountingScorer(space.p_undesirable)
    pools: list[dict[bytes, np.ndarray]] = [{} for _ in range(n_q)]  # distinct final counterfactuals
    not_ways: list[set[bytes]] = [set() for _ in range(n_q)]  # finals that were no other way out (_alternatives)
    tolerance = space.plan.tolerance if space.plan is not None else np.full(n_f, 1e-12)
    n_vary = int(space.vary.sum())
    neighbours = _NeighbourFeed(space, factuals) if settings.plausible else None
    bounds = _SingleBounds(space, factuals)
    tried: list[set[bytes]] = [set() for _ in range(n_q)]  # finals already made minimal, before refinement
    proposed: list[set[bytes]] = [set() for _ in range(n_q)]  # random candidates already scored

    # Valid candidates wait in a queue and are made final together (:func:`settle`): one revert loop and
    # one shrinking loop for several stages or rounds, since every model call costs as much as a few
    # hundred rows. ``queued[q]`` counts query q's waiting candidates.
    queue: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    queued = np.zeros(n_q, dtype=int)

    def need() -> np.ndarray:
        """Per query: distinct counterfactuals still missing, less the candidates already waiting."""
        return settings.n_cf - np.array([len(p) for p in pools]) - queued

    def enqueue(candidates, owner, *, first=None, singles: bool = False, valid=None) -> np.ndarray:
        """Score candidates (unless ``valid`` says) and queue the valid ones; returns how many each query queued.

        ``first`` (per candidate, -1 for none): the near miss to shrink before the other changes, so the
        partners' drawn values decide where on the trade-off the counterfactual lands.
        """
        first = np.full(len(candidates), -1) if first is None else first
        if valid is None:
            pick = _distinct_rows(candidates, owner, factuals)
            # A candidate proposed in an earlier round already had its answer: not scored again.
            pick = pick[_first_seen(proposed, owner[pick], candidates[pick])]
            candidates, owner, first = candidates[pick], owner[pick], first[pick]
            if len(candidates) == 0:
                return np.zeros(n_q, dtype=int)
            valid = space.validity.check(counter, candidates, factuals[owner])
        if singles:
            # Only the valid value nearest the factual on each side shrinks: the farther ones would end at the same place.
            valid = valid & _nearest_per_side(space, candidates, owner, factuals, valid)
        else:
            # About as many as a query still needs (making a counterfactual minimal costs tens of rows), and a
            # few more: some collapse onto one another, or onto ones already found, when they are made minimal.
            valid = valid & _first_per_owner(owner, valid, np.maximum(need() + settings.collapse_margin, 0))
        queue.append((candidates[valid], owner[valid], first[valid]))
        added = np.bincount(owner[valid], minlength=n_q)
        queued[:] += added
        return added

    def settle() -> np.ndarray:
        """Make every queued candidate final and add the distinct ones to their pools; new ones per query."""
        new = np.zeros(n_q, dtype=int)
        if not queue:
            return new
        rows, owner, first = (np.concatenate(part) for part in zip(*queue))
        queue.clear()
        queued[:] = 0
        if len(rows) == 0:
            return new
        finals = revert_passengers(counter, rows, factuals[owner], validity=space.validity)
        # Candidates that lost their passengers may now be the same: make each one minimal only once.
        pick = _distinct_rows(finals, owner, factuals)
        pick = pick[_first_seen(tried, owner[pick], finals[pick])]
        finals, owner, first = finals[pick], owner[pick], first[pick]
        if space.plan is not None and len(finals):
            finals = minimal_rows(counter, finals, factuals[owner], space.plan, first=first, validity=space.validity)
        added: list[set[bytes]] = [set() for _ in range(n_q)]
        for q, row, key in zip(owner, finals, distinct_keys(finals, factuals[owner], tolerance)):
            if key not in pools[q] and key not in not_ways[q]:
                pools[q][key] = row
                added[q].add(key)
        if space.plan is not None:  # minimal counterfactuals: keep only alternatives that differ
            for q in np.unique(owner):
                keys = list(pools[q])
                drop = not_alternatives(np.array([pools[q][k] for k in keys]), factuals[q], space.plan.spans, space.plan.movable)
                for key in np.array(keys, dtype=object)[drop]:
                    del pools[q][key]
                    not_ways[q].add(key)
        for q in range(n_q):
            new[q] = len(added[q] & pools[q].keys())
        bounds.learn(owner, finals)
        return new

    subset = np.ones(n_q, dtype=int)  # features changed per random candidate, per query
    active = np.arange(n_q)
    if neighbours is None:
        # Single changes in stages, for the queries still short. A query's single changes are *items*
        # (a level of a category; a side of a number, with its grid points on that side), taken in a
        # seeded random order: the items that flip it are then a uniform sample of all that do, as if
        # every one had been tried and n_cf drawn at random. (Taking every feature's first value before
        # any second one spread the picks evenly over features and flattened F toward 1 / their number.)
        candidates, owner, item = _single_candidates(space, factuals)
        rank = _item_ranks(owner, item, rngs)
        found = np.zeros(n_q, dtype=int)
        hits, hit_owners = [], []
        for stage in itertools.count():
            short = found < settings.n_cf
            pick = short[owner] & (rank >= stage * settings.n_cf) & (rank < (stage + 1) * settings.n_cf)
            if not pick.any():
                if not (short[owner] & (rank >= stage * settings.n_cf)).any():
                    break
                continue
            hit = space.validity.check(counter, candidates[pick], factuals[owner[pick]])
            rows, hit_owner, hit_item = candidates[pick][hit], owner[pick][hit], item[pick][hit]
            if len(rows):  # each item that flips is one distinct counterfactual (its nearest valid value shrinks below)
                flipped = np.unique(np.column_stack([hit_owner, hit_item]), axis=0)
                found += np.bincount(flipped[:, 0], minlength=n_q)
            hits.append(rows)
            hit_owners.append(hit_owner)
        if hits:
            candidates, owner = np.concatenate(hits), np.concatenate(hit_owners)
            enqueue(candidates, owner, singles=True, valid=np.ones(len(candidates), dtype=bool))
            settle()  # the single flips bound the near misses below
        subset[:] = min(2, max(n_vary, 1))  # single changes were tried: random ones start at two
        active = np.array([q for q in range(n_q) if len(pools[q]) < settings.n_cf], dtype=int)
        # Which other features help each near miss: each at both ends of its range, one call.
        probes, owner, anchor, partner = _probe_candidates(space, factuals, bounds, active)
        if len(probes):
            p = space.validity.score(counter, probes, factuals[owner])
            # A partner helps a near miss when one end of its range lowers P(undesirable) below the
            # near miss's own: alone it may not flip the query, together with other partners it may.
            alone = np.full((n_q, n_f), np.nan)
            lone = partner < 0
            alone[owner[lone], anchor[lone]] = p[lone]
            helps = ~lone & (p < alone[owner, anchor] - 1e-9)
            bounds.learn_partners(probes[helps], owner[helps], anchor[helps], partner[helps], p[helps])
            enqueue(probes[~lone], owner[~lone], first=anchor[~lone], valid=space.validity.desirable(p)[~lone])
            # All the partners of a near miss at once, each at its better end: where even that does not
            # flip the query, no mix of them will (as far as the model is monotone there), so none is tried.
            together, q, a = _all_partners(probes[helps], owner[helps], anchor[helps], partner[helps], p[helps])
            if len(together):
                flips = space.validity.check(counter, together, factuals[q])
                bounds.partners[q[~flips], a[~flips]] = False
                enqueue(together, q, first=a, valid=flips)
        # A query with near misses that no other feature helps has only its single changes.
        has_near_miss = bounds.has_near_miss(active)
        active = active[~has_near_miss | bounds.partners[active].any(axis=(1, 2))]
    stale = np.zeros(n_q, dtype=int)
    searching = np.array([q for q in active if len(pools[q]) < settings.n_cf], dtype=int)
    settled_after = 0  # the round after which queued candidates were last made final
    dry = np.zeros(n_q, dtype=int)  # rounds in a row in which a query found no valid candidate
    for round_no in range(settings.max_rounds):
        # A query whose waiting candidates cover what it lacks sits out until they are made final.
        active = searching[need()[searching] > 0]
        if len(active):
            if neighbours is not None:
                candidates, owner = neighbours.propose(active, round_no, settings)
                first = None
            else:
                candidates, owner, first = _random_candidates(space, factuals, rngs, active, subset, settings.samples, bounds)
            found = enqueue(candidates, owner, first=first)
            # DiCE-like growth while changes keep finding counterfactuals; doubling when a round found nothing.
            subset[active] = np.minimum(n_vary, np.where(found[active] > 0, subset[active] + 1, 2 * subset[active]))
            # PATIENCE rounds without even a valid candidate add no distinct counterfactual: a query that
            # has some stops before its block ends (its queue is still made final).
            dry[active] = np.where(found[active] > 0, 0, dry[active] + 1)
            has_some = np.array([len(pools[q]) > 0 for q in searching], dtype=bool) | (queued[searching] > 0)
            searching = searching[~(has_some & (dry[searching] >= PATIENCE))]
        # Rounds are made final in fixed blocks (the same rounds for every query, so none depends on its batch).
        if not _settles_after(round_no + 1, settings):
            continue
        new = settle()
        stale[searching] = np.where(new[searching] > 0, 0, stale[searching] + round_no + 1 - settled_after)
        settled_after = round_no + 1
        searching = np.array(
            [q for q in searching if len(pools[q]) < settings.n_cf and not (pools[q] and stale[q] >= PATIENCE)],
            dtype=int,
        )
        if len(searching) == 0:
            break
    per_query = [
        _select(np.array(list(pool.values())).reshape(-1, n_f), factuals[q], settings.n_cf, rngs[q])
        for q, pool in enumerate(pools)
    ]
    return per_query, counter.rows, counter.calls, np.array([len(d) for d in not_ways], dtype=int)


def _settles_after(round_number: int, settings: _SearchSettings) -> bool:
    """Whether the valid candidates queued so far are made final after this round (1-based): see :data:`SETTLE_ROUNDS`."""
    first, every = settings.settle_rounds
    return round_number in (settings.max_rounds, first) or (round_number > first and (round_number - first) % every == 0)


def _single_candidates(space: _SearchSpace, factuals: np.ndarray):
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


def _item_ranks(owner: np.ndarray, item: np.ndarray, rngs) -> np.ndarray:
    """Per row, the rank of its item in its query's seeded random order of items (0 first)."""
    rank = np.zeros(len(owner), dtype=int)
    order = np.lexsort((item, owner))
    for q in np.unique(owner):
        rows = order[np.searchsorted(owner[order], q, side="left"):np.searchsorted(owner[order], q, side="right")]
        unique_items, inverse = np.unique(item[rows], return_inverse=True)
        item_rank = np.argsort(rngs[q].random(len(unique_items)), kind="stable").argsort(kind="stable")
        rank[rows] = item_rank[inverse]
    return rank


def _first_seen(seen: list[set[bytes]], owner: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Which rows their query has not seen before (bool, shape (m,)); they are recorded as seen."""
    fresh = np.zeros(len(rows), dtype=bool)
    for i, (q, row) in enumerate(zip(owner, rows)):
        key = row.tobytes()
        if key not in seen[q]:
            seen[q].add(key)
            fresh[i] = True
    return fresh


def _probe_candidates(space: _SearchSpace, factuals: np.ndarray, bounds: _SingleBounds, queries: np.ndarray):
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


def _all_partners(probes, owner, anchor, partner, p):
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


def _random_candidates(space, factuals, rngs, active, subset, samples, bounds: _SingleBounds):
    """``samples`` candidates per active query: the factual with ``subset[q]`` random varying features redrawn.

    New values are drawn as the training rows have them, inside the permitted range and direction,
    and short of any value that flips the query alone (``bounds``): a candidate that went past one
    would only collapse onto that known single change when its passengers are reverted. A query
    that some number flips alone looks for trade-offs instead: each candidate puts one such
    feature just short of its single flip (:meth:`_SingleBounds.near_misses`) and redraws
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


class _SingleBounds:
    """Per query, what already flips it alone: the values a random candidate need not reach.

    For a number or an ordinal level, the nearest value on each side of the factual that flips the
    query as the only change (``low``/``high``, (n_queries, F), ±inf when none is known); for a
    categorical feature, the levels that do (``excluded_levels``).
    """

    def __init__(self, space: _SearchSpace, factuals: np.ndarray):
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
        window = min(n_desired, settings.samples * 2 ** min(round_no, 3))
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

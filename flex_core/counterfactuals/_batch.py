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

The generator is spread over four modules, by concern: this one (the generator, and how it spreads
chunks of queries over cores or a cluster), :mod:`._batchspace` (the per-model tables and the search
space), :mod:`._batchsearch` (the search over one chunk, in named steps) and :mod:`._batchdraw` (the
candidates each step proposes).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._errors import ConfigError, GenerationError
from .._format import listing
from ..data import TaskSpec
from ..limits import check
from ..models import FittedModel
from ._alternatives import ALTERNATIVE_TOLERANCE
from ._assemble import assemble_counterfactual_set
from ._batchsearch import COLLAPSE_MARGIN, PATIENCE, SETTLE_ROUNDS, SearchSettings, search_chunk
from ._batchspace import SINGLE_GRID, SearchSpace, model_tables
from ._refine import check_refine
from ._scoring import resolve_cores
from ._set import (
    CounterfactualSet,
    GeneratorParams,
    Progress,
    check_request,
    encode_rows,
    encoded_width,
)
from ._spread import LOST, cluster_threads, dask_client, scheduler_lost
from ._validity import DEFAULT_MARGIN, DEFAULT_RADIUS, Validity

__all__ = ["BatchGenerator", "BACKENDS"]

BACKENDS = ("loky", "dask")
#: Queries per core from which a search is split over processes (below it the cores share the trees in threads).
PROCESS_QUERIES = 1_000
#: Most queries searched together in one chunk (results do not depend on it: each query has its own stream).
CHUNK_QUERIES = 5_000
#: Most queries in one chunk under a time limit, which is checked between chunks.
TIME_CHUNK_QUERIES = 100
#: Memory per candidate besides its draws and encoded row, in 8-byte words (masks, ranks, the model's scores;
#: measured on toy2d and synthetic-regional with a forest: 210-260 bytes per candidate in all).
CANDIDATE_WORDS = 24


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
    time_limit : float or None
        Seconds after which no new chunk of queries starts; the queries not served are named in the set's
        ``config["skipped_rows"]`` and a note, get no counterfactuals and are not stored.
    """

    # How the work is spread never changes the result, so it stays out of the store's key.
    # A time limit only decides which queries are served (those it skips are not stored), never what they get.
    execution_params = ("n_jobs", "backend", "time_limit")
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
        time_limit: float | None = None,
    ):
        if backend not in BACKENDS:
            raise ConfigError(f"Unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}.")
        self._plausible = bool(plausible)
        self.samples = None if samples is None else check("samples", samples)
        self.max_rounds = check("max_rounds", max_rounds)
        self._n_jobs = check("n_jobs", n_jobs)
        self._backend = backend
        self.time_limit = None if time_limit is None else float(check("time_limit", time_limit))
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
        tables, model_rows = model_tables(model, task, need_index=self.plausible, validity=validity)
        space = SearchSpace.build(task, model, tables, vary, ranges, minimal=refine == "minimal", validity=validity)
        factuals = _encode_queries(task, queries)
        row_ids = queries.index.to_numpy().astype(int)
        settings = self._settings(n_cf, seed)
        cores = self._cores()
        in_processes = self._backend == "dask" or (cores > 1 and len(row_ids) >= cores * PROCESS_QUERIES)
        workers = cores if in_processes else 1
        if not in_processes:
            space = space.with_threads(cores)
        deadline = None if self.time_limit is None else start + self.time_limit
        found, dropped, rows, calls, rejected, skipped = self._search(space, settings, factuals, row_ids, workers,
                                                                      progress, deadline)
        config = {**self._config(settings, space, refine, workers), "features_to_vary": vary,
                  "permitted_range": ranges or None, "seed": int(seed)}
        # Handed over as codes: a frame per query would cost more than the search itself.
        return assemble_counterfactual_set(
            task, model, queries[task.feature_names], found, n_cf=n_cf, generator=self.name,
            seconds=time.perf_counter() - start, model_rows=model_rows + rows, config=config,
            cases={"skipped": [int(row_ids[i]) for i in skipped]}, tallies={"model_calls": int(model_rows > 0) + calls},
            validity=space.validity, dropped=dropped, rule_rejections=rejected,
            # The workers are done by now: the final check may use every core the call was given.
            p_undesirable=space.tables.scorer.with_threads(cores),
        )

    def _config(self, settings: SearchSettings, space, refine: str, workers: int) -> dict:
        """The search's settings as the set's config records them (the request's own are added by the caller)."""
        return {
            "plausible": self.plausible, "samples": settings.samples, "max_rounds": self.max_rounds, "refine": refine,
            "single_grid": None if self.plausible else SINGLE_GRID, "patience": PATIENCE,
            "settle_rounds": list(settings.settle_rounds), "collapse_margin": settings.collapse_margin,
            "n_jobs": self._n_jobs, "backend": self._backend, "time_limit": self.time_limit,
            # How the cores were used (never changes the result): processes, or threads over a forest's trees.
            "processes": workers, "tree_threads": space.tables.scorer.threads,
            "scored_from_codes": space.tables.scorer.fast,
            "alternatives_tolerance": ALTERNATIVE_TOLERANCE if refine == "minimal" else None,
        }

    def _settings(self, n_cf: int, seed: int) -> SearchSettings:
        return SearchSettings(
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

    def _search(self, space, settings, factuals, row_ids, workers, progress, deadline=None):
        """Each query's counterfactual codes and dropped count, the model rows and calls of the search, the
        candidates each constraint between features rejected (None without constraints), and the positions of
        the queries skipped at ``deadline`` (a ``time.perf_counter()`` value; None: none are).

        At least one chunk per worker, and none above :data:`CHUNK_QUERIES` queries (:data:`TIME_CHUNK_QUERIES`
        under a deadline, which is checked between chunks): memory stays flat however many factuals come, and
        progress is reported after each chunk.
        """
        largest = CHUNK_QUERIES if deadline is None else TIME_CHUNK_QUERIES
        n_chunks = max(workers, -(-len(row_ids) // largest))
        chunks = [c for c in np.array_split(np.arange(len(row_ids)), n_chunks) if len(c)]
        found: list[np.ndarray] = [np.empty((0, factuals.shape[1]))] * len(row_ids)
        dropped = np.zeros(len(row_ids), dtype=int)
        done = model_rows = model_calls = 0
        rejected = None
        results = iter(self._run(space, settings, factuals, row_ids, chunks, workers))
        for n, chunk in enumerate(chunks):
            if deadline is not None and time.perf_counter() >= deadline:
                skipped = np.concatenate(chunks[n:]).tolist()
                return found, dropped, model_rows, model_calls, rejected, skipped
            per_query, rows, calls, not_ways, rule_rejected = next(results)
            if rule_rejected is not None:
                rejected = rule_rejected if rejected is None else rejected + rule_rejected
            model_rows += rows
            model_calls += calls
            dropped[chunk] = not_ways
            for pos, cfs in zip(chunk, per_query, strict=True):
                found[pos] = cfs
            done += len(chunk)
            if progress is not None:
                progress(done, len(row_ids))
        return found, dropped, model_rows, model_calls, rejected, []

    # -- spreading chunks of queries over cores or a cluster --------------------------------
    def _cores(self) -> int:
        if self._n_jobs < 0 and self._backend == "dask":
            return cluster_threads(dask_client())
        return resolve_cores(self._n_jobs)

    def _run(self, space, settings, factuals, row_ids, chunks, workers):
        """Each chunk's result, in chunk order, as it finishes (a generator)."""
        if workers == 1 and self._backend == "loky":
            return (search_chunk(space, settings, factuals[c], row_ids[c]) for c in chunks)
        import joblib

        space = space.for_workers()
        jobs = (joblib.delayed(search_chunk)(space, settings, factuals[c], row_ids[c]) for c in chunks)
        if self._backend == "dask":
            client = dask_client()  # a clear error instead of joblib's when no cluster is connected
            try:
                with joblib.parallel_config(backend="dask"):
                    return joblib.Parallel(n_jobs=-1)(jobs)
            except LOST as exc:
                raise GenerationError(scheduler_lost(client, 0, len(row_ids), exc)) from None
        return joblib.Parallel(n_jobs=workers, backend="loky", return_as="generator")(jobs)


def _encode_queries(task: TaskSpec, queries: pd.DataFrame) -> np.ndarray:
    """The queries as codes; a row with a missing value or a level the task does not know is refused."""
    factuals = encode_rows(task, queries[task.feature_names])
    if np.isnan(factuals).any():
        bad = queries.index[np.isnan(factuals).any(axis=1)].tolist()
        raise ConfigError(f"Query {listing('row', bad)} {'has' if len(bad) == 1 else 'have'} missing values or levels "
                          "the task does not know.")
    return factuals

"""DiCE (dice-ml) counterfactuals behind the generator protocol.

Traps handled here:
- DiCE's post-hoc sparsity step predicts one row at a time; it is off by default
  (``posthoc_sparsity=False``) and a ``time_limit`` stops starting new queries.
- DiCE may return fewer than n_cf counterfactuals, none, or raise for a query; each
  case is recorded per query and never reaches the caller as an exception.
- dice-ml 0.12's ``random`` method breaks under pandas 3; requirements pin pandas 2.3.
- dice-ml's methods draw from numpy's and Python's global generators and seed them unreliably
  (genetic: never); both are seeded per query here and the caller's states restored.
- dice-ml 0.12's ``genetic`` method never runs its post-hoc sparsity step (it returns the
  unsparsified set as ``final_cfs_df_sparse``), so ``posthoc_sparsity=True`` with it is refused.
- The global generators are one per process, and other threads draw from them too: Dask's own threads draw
  from Python's ``random`` while a worker runs a query (seen: 12 of 720 values differed on a threaded cluster), and
  two app sessions may run DiCE at once. So dice-ml's modules see a ``random`` of their own, one stream per
  thread (:data:`_DICE_RANDOM`), and numpy's global stream, which dice-ml and pandas draw from, is seeded and held
  for one query at a time per process (:data:`_GLOBAL_STREAMS`). Dask sizes a frame of text by sampling it with
  numpy's global stream (``dask.sizeof``), so the frames a worker gets and gives back travel wrapped
  (:class:`_Unsized`).

With ``backend="dask"`` the queries go to the connected Dask cluster in chunks (:func:`._spread.on_cluster`, the
model and data sent to each worker once); each query is seeded by its row id, so its counterfactuals are the same
whichever chunk, worker or thread runs it.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import threading
import time
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._errors import ConfigError, GenerationError
from .._extras import require
from ..data import TaskSpec
from ..limits import check
from ..models import FittedModel
from ._assemble import assemble_counterfactual_set
from ._set import (
    CounterfactualSet,
    GeneratorParams,
    Progress,
    check_request,
    query_seed,
)
from ._validity import DEFAULT_MARGIN, DEFAULT_RADIUS, Validity, training_ranges

__all__ = ["DiceGenerator"]

_OUTCOME = "__outcome__"
DICE_METHODS = ("random", "genetic", "kdtree")
#: Where the queries run: in this process, one after another, or on the connected Dask cluster.
DICE_BACKENDS = ("process", "dask")
#: Most queries in one chunk sent to a Dask worker (DiCE random: about 45 ms each on loan).
CLUSTER_CHUNK = 64
#: Held while DiCE draws from numpy's process-wide generator (see the module docstring).
_GLOBAL_STREAMS = threading.Lock()


class _ThreadRandom(threading.local):
    """What dice-ml's modules see as Python's ``random`` module: a ``random.Random`` of each thread's own, so no
    other thread's draws (Dask's, a web server's) fall between a query's seed and its draws."""

    def __init__(self):
        self.stream = random.Random()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


_DICE_RANDOM = _ThreadRandom()


class _Unsized:
    """A payload Dask sizes by ``__sizeof__`` instead of sampling it: ``dask.sizeof`` samples a frame's text
    columns with numpy's global stream, which would move a query's seeded draws on another thread."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __sizeof__(self) -> int:
        return 1 << 20  # a rough megabyte: enough for the scheduler's bookkeeping


def _private_python_streams() -> None:
    """Point dice-ml's sampling modules at :data:`_DICE_RANDOM` (once per process; the streams are the ones the
    module-level functions would give after the same seed, so the counterfactuals are the same)."""
    from dice_ml.explainer_interfaces import dice_genetic, dice_random

    for module in (dice_random, dice_genetic):
        if module.random is random:
            module.random = _DICE_RANDOM


class DiceGenerator(GeneratorParams):
    """Counterfactuals from dice-ml's model-agnostic methods (``random``, ``genetic``, ``kdtree``).

    Parameters
    ----------
    method : {"random", "genetic", "kdtree"}
    posthoc_sparsity : bool, default False
        DiCE's own post-hoc sparsity search (slow: one model call per row and step). When on, the
        sparsified set (``final_cfs_df_sparse``) is returned, its validity re-checked here.
        ``random`` and ``kdtree`` only: dice-ml 0.12's ``genetic`` ignores it, so it is a
        :class:`ConfigError` there (``refine="minimal"`` removes passenger changes instead).
    time_limit : float or None
        Seconds after which no new query is started (on a cluster: no chunk is waited for); the rest are recorded
        as skipped.
    margin, radius : float, default 0.15 and 0.01
        The validity rule DiCE's counterfactuals are checked against (:mod:`._validity`): DiCE searches
        for P(undesirable) <= 0.5, and those that miss the margin or the neighbourhood are counted
        invalid. ``margin=0, radius=0`` is the paper's setting.
    backend : {"process", "dask"}, default "process"
        ``"dask"``: run the queries on the connected ``dask.distributed`` cluster, in chunks; the counterfactuals
        are the same as in one process.
    """

    named_params = ("method",)
    execution_params = ("backend",)

    @property
    def unavailable_params(self) -> tuple[str, ...]:
        """Settings this method cannot honour, so the app does not offer them."""
        return ("posthoc_sparsity",) if self.method == "genetic" else ()

    def __init__(self, method: str = "random", *, posthoc_sparsity: bool = False, time_limit: float | None = None,
                 margin: float = DEFAULT_MARGIN, radius: float = DEFAULT_RADIUS, backend: str = "process"):
        if method not in DICE_METHODS:
            raise ConfigError(f"Unknown DiCE method {method!r}; choose one of {', '.join(DICE_METHODS)}.")
        if method == "genetic" and posthoc_sparsity:
            # DiceGenetic._generate_counterfactuals accepts posthoc_sparsity_param but never calls
            # do_posthoc_sparsity_enhancement: final_cfs_df_sparse is a plain copy of final_cfs_df.
            raise ConfigError(
                "dice-genetic ignores post-hoc sparsity in dice-ml 0.12; turn it off, or use refine=\"minimal\", "
                "which removes passenger changes for every generator."
            )
        self.method = method
        rule = Validity(margin, radius)  # checked once, here
        self.margin, self.radius = rule.margin, rule.radius
        self.posthoc_sparsity = posthoc_sparsity
        self.time_limit = None if time_limit is None else check("time_limit", time_limit)
        if backend not in DICE_BACKENDS:
            raise ConfigError(f"Unknown backend {backend!r} for DiCE; choose one of {', '.join(DICE_BACKENDS)}.")
        self.backend = backend
        self.name = f"dice-{method}"

    def _explainer(self, model: FittedModel, task: TaskSpec):
        import dice_ml

        _private_python_streams()
        train = _dice_frame(task, task.frame.loc[model.train_index, task.feature_names])
        train[_OUTCOME] = task.y[task.frame.index.get_indexer(model.train_index)]
        # Setting DiCE up draws from the global generators too (seen on a threaded cluster): never from a stream
        # another thread's query has seeded.
        with _GLOBAL_STREAMS:
            data = dice_ml.Data(dataframe=train, continuous_features=task.continuous_names, outcome_name=_OUTCOME)
            # DiCE's desired_class=0 is column 0 of predict_proba: the binary view puts "desirable" there
            # whatever the model's own classes are.
            wrapped = dice_ml.Model(model=model.as_binary_classifier(), backend="sklearn", model_type="classifier")
            return dice_ml.Dice(data, wrapped, method=self.method)

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
        require("dice_ml", "A DiCE generator")  # its own error, not "DiCE could not be set up for this data"
        vary, ranges = check_request(
            task, queries, n_cf=n_cf, features_to_vary=features_to_vary, permitted_range=permitted_range
        )
        if self.method == "genetic" and not task.continuous_names:
            # dice-ml 0.12's genetic search fails on every query of such data
            # ("cannot reshape array of size 0 into shape (0)"): say so once, up front.
            raise GenerationError(
                "DiCE's genetic method does not work on data without a continuous feature (a dice-ml 0.12 bug); "
                "choose batch, dice-random or dice-kdtree."
            )
        permitted = ranges or None
        start = time.perf_counter()
        try:
            explainer = self._explainer(model, task)
        except Exception as exc:  # dice-ml raises bare Exceptions for data it dislikes
            raise GenerationError(f"DiCE could not be set up for this data: {exc}") from None
        query_frame = _dice_frame(task, queries[task.feature_names])
        request = (n_cf, vary, permitted, seed)
        if self.backend == "dask":
            outcomes = self._on_cluster(model, task, queries.index.to_numpy(), query_frame, request, start, progress)
        else:
            outcomes = self._in_process(explainer, queries.index.to_numpy(), query_frame, request, start, progress)
        per_query: list[pd.DataFrame | None] = [frame for frame, _ in outcomes]
        per_query += [None] * (len(queries) - len(outcomes))
        skipped = [int(row_id) for row_id in queries.index[len(outcomes):]]  # left at the time limit
        failed = [{"row": int(row_id), "why": failure} for row_id, (_, failure) in zip(queries.index, outcomes) if failure]
        return assemble_counterfactual_set(
            task,
            model,
            queries[task.feature_names],
            per_query,
            n_cf=n_cf,
            generator=self.name,
            seconds=time.perf_counter() - start,
            config={
                "method": self.method,
                "posthoc_sparsity": self.posthoc_sparsity,
                "time_limit": self.time_limit,
                "features_to_vary": vary,
                "permitted_range": permitted,
                "seed": seed,
            },
            cases={"skipped": skipped, "dice_failed": failed},
            validity=Validity(self.margin, self.radius).on(task, training_ranges(task, model)),
        )

    def _in_process(self, explainer, row_ids, query_frame, request, start, progress) -> list[tuple]:
        """(counterfactual frame or None, failure or None) per query, in order, until the time limit."""
        n_cf, vary, permitted, seed = request
        outcomes: list[tuple] = []
        for i, row_id in enumerate(row_ids):
            if self.time_limit is not None and time.perf_counter() - start > self.time_limit:
                break
            outcomes.append(self._one_query(explainer, query_frame.iloc[[i]], n_cf, vary, permitted, seed, row_id))
            if progress is not None:
                progress(i + 1, len(row_ids))
        if progress is not None and len(outcomes) < len(row_ids):
            progress(len(row_ids), len(row_ids))  # the rest skipped: the bar still ends
        return outcomes

    def _on_cluster(self, model, task, row_ids, query_frame, request, start, progress) -> list[tuple]:
        """:meth:`_in_process`'s outcomes from the connected Dask cluster, chunk by chunk in order; chunks not back
        by the time limit are left out (their queries skipped)."""
        from ._spread import chunk_bounds, cluster_threads, dask_client, on_cluster

        bounds = chunk_bounds(len(row_ids), cluster_threads(dask_client()), CLUSTER_CHUNK)
        parts = [_Unsized((query_frame.iloc[a:b], row_ids[a:b])) for a, b in bounds]
        shared = {"generator": self, "model": model, "task": task, "request": request}
        deadline = None if self.time_limit is None else start + self.time_limit
        done = on_cluster(_dice_part, parts, shared, sizes=[b - a for a, b in bounds], progress=progress,
                          deadline=deadline)
        return [outcome for part in done for outcome in part.value]

    def _one_query(self, explainer, query: pd.DataFrame, n_cf, vary, ranges, seed, row_id):
        extra = {}
        qseed = query_seed(seed, int(row_id))
        if self.method == "random":
            extra["random_seed"] = qseed
        try:
            # DiCE prints progress bars and warnings per query; keep the caller's console readable.
            # Its methods draw from the two global generators, numpy's and Python's ``random`` module, and
            # seed neither reliably (random: which features to vary comes from numpy, seeded only when
            # some feature is continuous; genetic: initial population and mutations from numpy, parent
            # choice and crossover from ``random``, never seeded), so seed both per query.
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()), _no_tqdm(), _global_seeds(qseed):
                warnings.simplefilter("ignore")
                result = explainer.generate_counterfactuals(
                    query,
                    total_CFs=n_cf,
                    desired_class=0,
                    features_to_vary=vary,
                    permitted_range=ranges,
                    posthoc_sparsity_param=0.1 if self.posthoc_sparsity else None,
                    verbose=False,
                    **extra,
                )
        except Exception as exc:  # "No counterfactuals found" and friends: recorded, never raised
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return None, first[:160]
        example = result.cf_examples_list[0]
        # DiCE keeps its post-hoc result apart: final_cfs_df is the set *before* sparsification. The
        # sparse set is not re-checked by DiCE (its binary search can cross the boundary);
        # assemble_counterfactual_set re-checks every row's validity in one batched call.
        frame = example.final_cfs_df_sparse if self.posthoc_sparsity else None
        if frame is None:
            frame = example.final_cfs_df
        if frame is None or len(frame) == 0:
            return None, None
        return frame.drop(columns=[_OUTCOME], errors="ignore"), None


def _dice_part(part: _Unsized, *, generator: DiceGenerator, model: FittedModel, task: TaskSpec,
               request: tuple) -> _Unsized:
    """One chunk of queries on a Dask worker: DiCE set up there from what was sent, then each query as in one
    process."""
    query_frame, row_ids = part.value
    n_cf, vary, permitted, seed = request
    explainer = generator._explainer(model, task)
    return _Unsized([generator._one_query(explainer, query_frame.iloc[[i]], n_cf, vary, permitted, seed, row_id)
                     for i, row_id in enumerate(row_ids)])


def _dice_frame(task: TaskSpec, rows: pd.DataFrame) -> pd.DataFrame:
    """DiCE infers decimal precision from dtypes: integer-valued features must be int columns."""
    out = rows.copy()
    for f in task.features:
        if f.is_continuous and f.integer:
            out[f.name] = out[f.name].round().astype("int64")
    return out


@contextlib.contextmanager
def _global_seeds(seed: int):
    """Seed the streams DiCE draws from for one query: numpy's global one (held, then given back to the caller as
    it was) and this thread's Python stream (:data:`_DICE_RANDOM`; the caller's ``random`` is never touched)."""
    with _GLOBAL_STREAMS:
        saved = np.random.get_state()
        np.random.seed(seed)
        _DICE_RANDOM.seed(seed)
        try:
            yield
        finally:
            np.random.set_state(saved)


@contextlib.contextmanager
def _no_tqdm():
    old = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = old

"""Orchestration: the generator registry, a counterfactual store, and global/regional runs.

The store is what makes τ, k and the query cheap to change: counterfactuals are
generated once per factual row (in one batched call for all rows still missing)
and every metric is recomputed from them.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from ._batch import BatchGenerator
from . import __version__
from ._counterfactuals import CounterfactualGenerator, CounterfactualSet, Progress
from ._data import TaskSpec
from ._dice import DiceGenerator
from ._errors import ConfigError
from ._importance import flex_importance, parse_criterion, regional_importance, select_region
from ._models import FittedModel
from ._results import FlexResult, RegionalResult

__all__ = [
    "DEFAULT_GENERATOR",
    "GENERATORS",
    "register_generator",
    "make_generator",
    "generator_key",
    "CounterfactualStore",
    "factual_rows",
    "sample_factuals",
    "training_ranges",
    "model_summary",
    "run_global",
    "run_regional",
    "random_query",
]

#: The generator the CLI and the app use unless told otherwise.
DEFAULT_GENERATOR = "batch"

#: name -> (factory(**settings), one-line description)
GENERATORS: dict[str, tuple[Callable[..., CounterfactualGenerator], str]] = {
    "dice-random": (lambda **kw: DiceGenerator("random", **kw), "DiCE random sampling (the paper's generator)"),
    "dice-genetic": (lambda **kw: DiceGenerator("genetic", **kw), "DiCE genetic search"),
    "dice-kdtree": (lambda **kw: DiceGenerator("kdtree", **kw), "DiCE KD-tree over training data"),
    "batch": (lambda **kw: BatchGenerator(**kw), "Batched random search with sparsification (fast, native)"),
    "batch-plausible": (
        lambda **kw: BatchGenerator(plausible=True, **kw),
        "Batched search from nearest training rows of the desired class, sparsified",
    ),
}


def register_generator(name: str, factory: Callable[..., CounterfactualGenerator], description: str) -> None:
    """Make a generator available by name to the CLI, the app and :func:`make_generator`."""
    GENERATORS[name] = (factory, description)


def make_generator(name: str, **settings) -> CounterfactualGenerator:
    try:
        factory, _ = GENERATORS[name]
    except KeyError:
        raise ConfigError(f"Unknown generator {name!r}; choose one of {', '.join(GENERATORS)}.") from None
    try:
        return factory(**settings)
    except TypeError as exc:
        raise ConfigError(f"Generator {name!r} does not take these settings: {exc}.") from None


def generator_key(generator: CounterfactualGenerator) -> dict:
    """The generator's name and public settings: what decides its output besides seed and n_cf."""
    settings = {k: v for k, v in vars(generator).items() if not k.startswith("_") and k != "name"}
    return {"name": generator.name, **settings}


def factual_rows(task: TaskSpec, model: FittedModel) -> np.ndarray:
    """Rows the model predicts undesirable: the factuals FLEX explains (one batched call)."""
    return task.frame.index.to_numpy()[model.predict_undesirable(task.X) == 1]


def sample_factuals(rows: Sequence[int], n: int, *, seed: int = 0) -> np.ndarray:
    """A seeded random sample of n factual rows (all of them when fewer exist), sorted by row id."""
    rows = np.asarray(rows, dtype=int)
    if n < 1:
        raise ConfigError("The number of factuals must be at least 1.")
    if len(rows) == 0:
        raise ConfigError("The model predicts no row undesirable, so there is nothing to explain.")
    if n >= len(rows):
        return np.sort(rows)
    return np.sort(np.random.default_rng(seed).choice(rows, size=n, replace=False))


def training_ranges(task: TaskSpec, model: FittedModel) -> np.ndarray:
    """range(X_j) = max - min over the training rows (Algorithm 1's ``range``); NaN for categorical."""
    train = task.frame.loc[model.train_index]
    return np.array(
        [float(train[f.name].max() - train[f.name].min()) if f.is_continuous else np.nan for f in task.features]
    )


def model_summary(model: FittedModel) -> dict:
    return {
        "name": model.name,
        "encoding": model.encoding,
        "seed": model.seed,
        "cv_accuracy_mean": model.metrics.get("cv_accuracy_mean"),
        "cv_accuracy_std": model.metrics.get("cv_accuracy_std"),
        "cv_f1_mean": model.metrics.get("cv_f1_mean"),
        "cv_f1_std": model.metrics.get("cv_f1_std"),
        "test_accuracy": model.metrics.get("test_accuracy"),
        "test_f1": model.metrics.get("test_f1"),
    }


class CounterfactualStore:
    """Counterfactuals per factual row for one (data, model, generator, n_cf, seed), optionally on disk.

    ``ensure(rows)`` generates only the rows not yet stored, all in one generator
    call, and returns the set for exactly those rows. On disk each generation is
    one ``.npz`` chunk (arrays and JSON only, never pickles) in a folder named by a
    hash of the key, so a restarted app pays for nothing twice.
    """

    def __init__(
        self,
        task: TaskSpec,
        model: FittedModel,
        generator: CounterfactualGenerator,
        *,
        n_cf: int = 10,
        seed: int = 0,
        features_to_vary: Sequence[str] | None = None,
        permitted_range: Mapping[str, Sequence] | None = None,
        directory: str | Path | None = None,
    ):
        if n_cf < 1:
            raise ConfigError("n_cf must be at least 1.")
        self.task, self.model, self.generator = task, model, generator
        self.n_cf, self.seed = int(n_cf), int(seed)
        self.features_to_vary = None if features_to_vary is None else list(features_to_vary)
        self.permitted_range = None if permitted_range is None else dict(permitted_range)
        self.key = {
            # The package version is part of the key: a release that changes what a generator
            # returns must not be served counterfactuals cached by an older one.
            "flex_core": __version__,
            "data": task.fingerprint,
            "model": {"name": model.name, "encoding": model.encoding, "seed": model.seed},
            "generator": generator_key(generator),
            "n_cf": self.n_cf,
            "seed": self.seed,
            "features_to_vary": self.features_to_vary,
            "permitted_range": self.permitted_range,
        }
        digest = hashlib.sha256(json.dumps(self.key, sort_keys=True, default=str).encode()).hexdigest()[:20]
        self.directory = None if directory is None else Path(directory) / digest
        self._lock = threading.Lock()
        self._set: CounterfactualSet | None = None
        self._chunks = 0
        if self.directory is not None and self.directory.is_dir():
            chunks = sorted(self.directory.glob("chunk-*.npz"))
            loaded = []
            for path in chunks:
                try:
                    loaded.append(CounterfactualSet.load(path))
                except Exception:  # noqa: BLE001 - truncated zip, bad JSON, ...: any damage means the same
                    continue  # a damaged chunk only costs its rows being generated again
            if loaded:
                self._set = CounterfactualSet.concat(loaded)
            self._chunks = len(chunks)

    @cached_property
    def factual_rows(self) -> np.ndarray:
        """Rows the model predicts undesirable, shape (n_factuals,): one batched call per store, not per τ."""
        return _read_only(factual_rows(self.task, self.model))

    @cached_property
    def ranges(self) -> np.ndarray:
        """range(X_j) over the training rows, shape (n_features,) (see :func:`training_ranges`)."""
        return _read_only(training_ranges(self.task, self.model))

    @property
    def stored_rows(self) -> np.ndarray:
        return np.empty(0, int) if self._set is None else self._set.query_index.copy()

    def _write_chunk(self, cfset: CounterfactualSet) -> None:
        """Write under a temporary name, then rename: a killed app never leaves half a chunk."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.directory / f"chunk-{self._chunks:05d}.npz"
        partial = self.directory / f".partial-{self._chunks:05d}.npz"
        cfset.save(partial)
        os.replace(partial, final)
        self._chunks += 1

    def missing(self, rows: Sequence[int]) -> list[int]:
        rows = [int(r) for r in dict.fromkeys(int(r) for r in rows)]
        if self._set is None:
            return rows
        return [r for r, have in zip(rows, self._set.has_rows(rows)) if not have]

    def ensure(self, rows: Sequence[int], *, progress: Progress | None = None) -> CounterfactualSet:
        """Counterfactuals for these rows, generating only the missing ones (in one batch)."""
        rows = [int(r) for r in rows]
        if not rows:
            raise ConfigError("No factual rows were given.")
        unknown = [r for r in rows if r not in self.task.frame.index]
        if unknown:
            raise ConfigError(f"Row(s) {unknown[:5]} are not in the data (they may have been dropped).")
        with self._lock:
            todo = self.missing(rows)
            if todo:
                fresh = self.generator.generate(
                    self.model,
                    self.task,
                    self.task.frame.loc[todo, self.task.feature_names],
                    n_cf=self.n_cf,
                    features_to_vary=self.features_to_vary,
                    permitted_range=self.permitted_range,
                    seed=self.seed,
                    progress=progress,
                )
                # Queries a time limit skipped are not kept: another run, with more time, may find some.
                skipped = set(int(r) for r in fresh.config.get("skipped_rows", ()))
                kept_rows = [int(r) for r in fresh.query_index if int(r) not in skipped]
                if kept_rows:
                    keep = fresh if len(kept_rows) == fresh.n_queries else fresh.subset(kept_rows)
                    self._set = keep if self._set is None else CounterfactualSet.concat([self._set, keep])
                    if self.directory is not None:
                        self._write_chunk(keep)
                # This call still answers for every row asked, the skipped ones empty.
                combined = fresh if self._set is None else CounterfactualSet.concat([self._set, fresh])
                return combined.subset(rows)
            elif progress is not None:
                progress(len(rows), len(rows))
            return self._set.subset(rows)


def run_global(
    store: CounterfactualStore,
    *,
    n_factuals: int = 200,
    tau: float | Mapping[str, float] = 0.1,
    sample_seed: int | None = None,
    progress: Progress | None = None,
) -> FlexResult:
    """Global FLEX: a seeded random sample of factuals with the undesirable prediction."""
    seed = store.seed if sample_seed is None else sample_seed
    pool = store.factual_rows
    rows = sample_factuals(pool, n_factuals, seed=seed)
    cfset = store.ensure(rows, progress=progress)
    notes = []
    if len(rows) < n_factuals:
        notes.append(f"Only {len(pool)} rows are predicted undesirable; all of them were used instead of {n_factuals}.")
    result = flex_importance(
        cfset,
        store.task,
        tau=tau,
        ranges=store.ranges,
        level="global",
        generator=generator_key(store.generator),
        model=model_summary(store.model),
        config=_config(store, n_factuals=n_factuals, sample_seed=seed, factual_pool=len(pool)),
    )
    return _with_notes(result, notes)


def run_regional(
    store: CounterfactualStore,
    global_result: FlexResult,
    *,
    query: int,
    k: int = 4,
    where: str | Mapping | None = None,
    tau: float | Mapping[str, float] = 0.1,
    progress: Progress | None = None,
) -> RegionalResult:
    """Regional FLEX around a query factual, compared with ``global_result``."""
    pool = store.factual_rows
    ranges = store.ranges
    members, distances, criterion, n_candidates = select_region(
        store.task, query, pool, k=k, where=where, ranges=ranges
    )
    cfset = store.ensure(members, progress=progress)
    result = regional_importance(
        cfset,
        store.task,
        global_result,
        query=query,
        members=members,
        distances=distances,
        criterion=criterion,
        candidates=n_candidates,
        tau=tau,
        ranges=ranges,
        generator=generator_key(store.generator),
        model=model_summary(store.model),
        config=_config(store, query=int(query), k=k, where=criterion),
    )
    if len(members) - 1 < k:
        note = f"Only {len(members) - 1} neighbour(s) meet the criterion, fewer than k = {k}."
        result = replace(result, importance=_with_notes(result.importance, [note]))
    return result


def random_query(store: CounterfactualStore, *, where: str | Mapping | None = None, seed: int = 0) -> int:
    """A seeded random factual meeting the criterion (the paper's way of picking a region's query)."""
    criterion = parse_criterion(store.task, where)
    pool = store.factual_rows
    if criterion is not None:
        pool = pool[store.task.frame.loc[pool, criterion["feature"]].to_numpy() == criterion["value"]]
    if len(pool) == 0:
        raise ConfigError(f"No factual meets the criterion {criterion['feature']} = {criterion['value']}.")
    return int(np.random.default_rng(seed).choice(pool))


def _config(store: CounterfactualStore, **extra) -> dict:
    return {
        "dataset": store.task.source or store.task.name,
        "data_fingerprint": store.task.fingerprint,
        "n_cf": store.n_cf,
        "seed": store.seed,
        "features_to_vary": store.features_to_vary or store.task.mutable_names,
        "permitted_range": store.permitted_range,
        **extra,
    }


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)  # shared by every rerun that reads the store
    return array


def _with_notes(result: FlexResult, notes: list[str]) -> FlexResult:
    return replace(result, notes=tuple(result.notes) + tuple(notes)) if notes else result

"""Global FLEX over many factuals read from the store a chunk at a time (issue 39): memory for one chunk, not all.

F_j, its std, μ_j, DiCE's frequency, the necessary F and F's Wilson interval are all made of sums over the
factuals (the interval needs only F_j and how many factuals it is over: :func:`~flex_core._uncertainty.intervals_of_means`).
Each sum is kept per feature and added to chunk after chunk in the factuals' order, which is the order NumPy sums a
(factuals x features) array down its first axis; so :func:`streamed_importance` gives :func:`~._flex.flex_importance`'s
numbers on the whole set to the bit (checked in ``tests/importance/test_stream.py``). One exception: with a single
feature NumPy sums pairwise, and the last digit may differ. The std needs F first: each chunk's f_j(i) are kept for
a second pass, in memory when the result keeps them (``local=True``) and in a temporary file otherwise.

What stays in memory, besides one chunk's counterfactuals: per factual its row id, its counterfactual count, and the
found / valid flag of each of its N_cf slots (the coverage counts are made from them), about 8 + 8 + 2 N_cf bytes;
with ``local=True`` also f_j(i), μ_j(i) and the necessary f_j(i), 24 bytes per feature.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._results import FlexResult
from .._typing import Rows
from .._uncertainty import INTERVAL_LEVEL, intervals_of_means
from ..counterfactuals import CounterfactualSet, CounterfactualStore
from ..counterfactuals._registry import generator_key
from ..counterfactuals._set import Progress
from ..models._fit import model_summary
from ._flex import (
    DEFAULT_TAU,
    DICE_EPSILON,
    change_matrix,
    interval_config,
    local_frequencies,
    local_magnitudes,
    resolve_tau,
    run_config,
    store_notes,
    with_notes,
)

__all__ = ["streamed_importance"]


class _ColumnSums:
    """Per-feature sums of a (rows x features) array given a block of rows at a time, NaN left out, added row after
    row as NumPy adds down axis 0 (so the mean equals ``np.nanmean(array, axis=0)`` to the bit)."""

    def __init__(self, n_features: int):
        self.total = np.zeros(n_features)
        self.count = np.zeros(n_features, dtype=np.intp)

    def add(self, values: np.ndarray) -> None:
        filled = np.where(np.isnan(values), 0.0, values)
        self.total = np.add.reduce(np.concatenate([self.total[None, :], filled]), axis=0)
        self.count += (~np.isnan(values)).sum(axis=0)

    def mean(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.total / self.count

    def std(self, blocks, mean: np.ndarray) -> np.ndarray:
        """``np.nanstd(array, axis=0)`` from the same blocks read again (the squared deviations from ``mean``)."""
        squares = _ColumnSums(len(mean))
        for values in blocks:
            deviation = np.where(np.isnan(values), 0.0, values - mean)
            squares.add(deviation * deviation)
        return np.sqrt(squares.mean())


def _slim(cfset: CounterfactualSet) -> CounterfactualSet:
    """The set without its feature values: row ids, found and valid flags, copies, time, notes and config."""
    n = cfset.n_queries
    return CounterfactualSet((), cfset.query_index.copy(), np.zeros((n, 0)), np.zeros((n, cfset.n_cf, 0)),
                             cfset.found.copy(), cfset.valid.copy(), cfset.generator, cfset.seconds, cfset.model_rows,
                             cfset.notes, dict(cfset.config), cfset.copies.copy(), cfset.dropped.copy())


class _Locals:
    """Each chunk's f_j(i), μ_j(i) and necessary f_j(i), in memory or in files of a temporary folder."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.kept: list[tuple[np.ndarray, ...]] = []
        self.paths: list[Path] = []

    def add(self, *arrays: np.ndarray) -> None:
        if self.folder is None:
            self.kept.append(arrays)
            return
        path = self.folder / f"{len(self.paths):06d}.npy"
        np.save(path, np.stack(arrays), allow_pickle=False)
        self.paths.append(path)

    def column(self, which: int):
        """The chunks' arrays of one kind (0: f, 1: μ, 2: necessary f), in order."""
        for arrays in self.kept:
            yield arrays[which]
        for path in self.paths:
            yield np.load(path, allow_pickle=False)[which]

    def whole(self, which: int, n_features: int) -> np.ndarray:
        blocks = list(self.column(which))
        return np.concatenate(blocks) if blocks else np.zeros((0, n_features))


def _read_chunks(store: CounterfactualStore, rows: Rows, locals_: _Locals, *, tau_vec, continuous, epsilon,
                 necessary: bool, progress: Progress | None) -> tuple[dict, list[CounterfactualSet]]:
    """One pass over the store's chunks of ``rows``: the per-feature sums, and each chunk's slim set."""
    n_features = len(store.task.features)
    sums: dict[str, Any] = {"f": _ColumnSums(n_features), "mu": _ColumnSums(n_features),
                            "necessary": _ColumnSums(n_features), "dice": np.zeros(n_features, dtype=np.int64), "usable": 0}
    slims = []
    for chunk in store.chunks(rows, progress=progress):
        usable = chunk.valid
        changed, relative = change_matrix(chunk.factuals, chunk.counterfactuals, continuous, store.ranges, tau_vec)
        changed_eps, _ = change_matrix(chunk.factuals, chunk.counterfactuals, continuous, store.ranges, tau_vec,
                                       epsilon=epsilon)
        local_f, local_mu = local_frequencies(changed, usable), local_magnitudes(relative, usable)
        if necessary:
            local_necessary = local_frequencies(changed & store.necessary_changes(chunk, keep=False), usable)
        else:
            local_necessary = np.full_like(local_f, np.nan)
        for key, values in (("f", local_f), ("mu", local_mu), ("necessary", local_necessary)):
            sums[key].add(values)
        sums["dice"] += (changed_eps & usable[:, :, None]).sum(axis=(0, 1))
        sums["usable"] += int(usable.sum())
        locals_.add(local_f, local_mu, local_necessary)
        slims.append(_slim(chunk))
    return sums, slims


def streamed_importance(
    store: CounterfactualStore,
    rows: Rows,
    *,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    epsilon: float = DICE_EPSILON,
    necessary: bool = True,
    local: bool = True,
    progress: Progress | None = None,
    **config,
) -> FlexResult:
    """Global FLEX of ``rows`` (factual row ids) from ``store``, read :attr:`~CounterfactualStore.chunk_rows` at a time.

    The numbers equal those of ``importance_of(store, store.ensure(rows), ...)`` (the module says how); missing rows
    are generated and stored a chunk at a time first (:meth:`CounterfactualStore.chunks`). ``necessary=False`` skips
    the necessary-change search; ``local=False`` keeps no f_j(i) in the result (its local arrays have no rows),
    so memory does not grow with the factuals beyond the per-factual counts the module lists. The result carries no
    counterfactual set; ``config`` adds keys to its config.
    """
    task = store.task
    continuous = np.array([f.is_continuous for f in task.features])
    tau_vec = resolve_tau(task.feature_names, continuous, tau)
    n_features = len(task.features)
    with tempfile.TemporaryDirectory(prefix="flex-stream-") as folder:
        locals_ = _Locals(None if local else Path(folder))
        sums, slims = _read_chunks(store, rows, locals_, tau_vec=tau_vec, continuous=continuous, epsilon=epsilon,
                                   necessary=necessary, progress=progress)
        f_mean, mu_mean, necessary_mean = (sums[key].mean() for key in ("f", "mu", "necessary"))
        f_std = sums["f"].std(locals_.column(0), f_mean)
        necessary_std = sums["necessary"].std(locals_.column(2), necessary_mean) if necessary else None
        local_arrays = [locals_.whole(k, n_features) if local else np.zeros((0, n_features)) for k in (0, 1, 2)]
    mu_mean[~continuous] = np.nan
    immutable = np.array([f.immutable for f in task.features], dtype=bool)
    ci, ranks = intervals_of_means(f_mean, sums["f"].count, level=INTERVAL_LEVEL, fixed=immutable)
    dice = sums["dice"] / sums["usable"] if sums["usable"] else np.zeros(n_features)
    slim = CounterfactualSet.concat(slims)
    extra = dict(necessary_frequency=necessary_mean, necessary_std=necessary_std, local_necessary=local_arrays[2]) \
        if necessary else {}
    result = FlexResult(
        level="global", feature_names=tuple(task.feature_names), display_names=tuple(f.label for f in task.features),
        kinds=tuple(f.kind for f in task.features), immutable=tuple(f.immutable for f in task.features), tau=tau_vec,
        frequency_mean=f_mean, frequency_std=f_std, magnitude_mean=mu_mean, dice_frequency=dice,
        local_frequencies=local_arrays[0], local_magnitudes=local_arrays[1], query_index=slim.query_index.copy(),
        counts=slim.counts, generator={"name": slim.generator, **slim.coverage(), **generator_key(store.generator)},
        model=model_summary(store.model),
        config={"tau": tau if not isinstance(tau, Mapping) else dict(tau), "epsilon": epsilon,
                "intervals": interval_config(), **run_config(store, **config)},
        notes=(*slim.notes, *slim.coverage_notes), features=tuple(task.features),
        frequency_ci=ci, rank_interval=ranks, **extra,
    )
    return with_notes(result, store_notes(store))

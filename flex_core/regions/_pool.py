"""The pool both analyses read: one seeded sample of factuals, their stored counterfactuals, F per factual.

Generated once (with progress) through the store; a τ change recomputes only the per-factual
change frequencies, never a counterfactual.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._format import format_number
from .._results import FlexResult
from ..counterfactuals import CounterfactualSet, CounterfactualStore
from ..counterfactuals._set import Progress
from ..importance import DEFAULT_TAU, sample_factuals
from ..importance._flex import importance_of, store_notes
from ..limits import check

__all__ = ["Pool", "build_pool", "quantile_bins"]


@dataclass(frozen=True, eq=False)
class Pool:
    """A sample of factuals with their counterfactuals and F per factual at one τ.

    ``result`` is FLEX over the whole sample (level "global": it is ``explain_global(n_factuals)``
    without the necessary-change counts), whose ``local_frequencies`` are f_j(i), a NaN row for a
    factual without a counterfactual; it carries the generator, model and config blocks every
    result's JSON has.
    """

    result: FlexResult
    cfset: CounterfactualSet
    notes: tuple[str, ...]

    @property
    def rows(self) -> np.ndarray:
        return self.result.query_index

    @property
    def has_counterfactual(self) -> np.ndarray:
        return ~np.isnan(self.result.local_frequencies).all(axis=1)


def build_pool(
    store: CounterfactualStore,
    *,
    n_factuals: int,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    progress: Progress | None = None,
    **config,
) -> Pool:
    """The factuals ``explain_global(n_factuals=...)`` samples (same seed), their counterfactuals and f_j(i)."""
    pool = store.factual_rows
    rows = sample_factuals(pool, n_factuals, seed=store.seed)
    cfset = store.ensure(rows, progress=progress)
    result = importance_of(store, cfset, tau=tau, level="global", necessary=False, n_factuals=n_factuals,
                           sample_seed=store.seed, factual_pool=len(pool), **config)
    notes = store_notes(store)
    short = store.pool_note(n_factuals)
    if short is not None:
        notes.append(short)
    return Pool(result=result, cfset=cfset, notes=tuple(result.notes) + tuple(notes))


def quantile_bins(values: np.ndarray, bins: int) -> list[tuple[np.ndarray, float, float]]:
    """Consecutive quantile bins of ``values``: (mask, lowest value, highest value) per non-empty bin.

    Edges are the quantiles of ``values``; equal values always share a bin (so heavy ties give fewer
    bins than asked), and each bin is stated by the lowest and highest value in it, both included.
    """
    bins = check("bins", bins)
    values = np.asarray(values, dtype=float)
    edges = np.quantile(values, np.linspace(0, 1, bins + 1))
    ids = np.searchsorted(edges[1:-1], values, side="right")
    out = []
    for b in np.unique(ids):
        mask = ids == b
        out.append((mask, float(values[mask].min()), float(values[mask].max())))
    return out


def number_value(x: float):
    """A bin edge as JSON: an int when whole, else the float."""
    return int(x) if float(x).is_integer() else float(x)


def bin_label(low: float, high: float) -> str:
    return format_number(low) if low == high else f"{format_number(low)}–{format_number(high)}"

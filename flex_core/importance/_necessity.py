"""Necessity and sufficiency of each feature (Kommiya Mothilal et al., AIES 2021), and the generator's dice.

- necessity of j: the share of requested counterfactuals the generator finds when only j
  may change (share per factual, then the mean over factuals);
- sufficiency of j: 1 - the share found when j is frozen at the factual's value and every
  other feature the generator may change still may.

Both cost two generator runs per feature over the same factuals, so they run on request.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .._errors import ConfigError
from .._results import FlexResult
from ..counterfactuals import CounterfactualStore, Progress
from ._flex import flex_importance

__all__ = ["NecessitySufficiency", "necessity_sufficiency", "with_necessity_sufficiency", "seed_spread"]


@dataclass(frozen=True, eq=False)
class NecessitySufficiency:
    """Per-feature necessity and sufficiency over a set of factuals.

    Attributes
    ----------
    feature_names : tuple of str, length n_features
    necessity, sufficiency : ndarray of shape (n_features,)
        NaN for features the generator may not change (immutable or not in features_to_vary).
    rows : tuple of int
        The factuals, in the order given.
    seconds : float
        Wall time of all generator runs.
    generator_runs : int
    """

    feature_names: tuple[str, ...]
    necessity: np.ndarray
    sufficiency: np.ndarray
    rows: tuple[int, ...]
    seconds: float
    generator_runs: int

    def summary(self) -> dict:
        """What a FlexResult's config records about the run (the scores go to each feature)."""
        return {"factuals": len(self.rows), "seconds": float(self.seconds), "generator_runs": int(self.generator_runs)}


def _share_found(store: CounterfactualStore, rows: list[int], vary: list[str]) -> float:
    """Mean over factuals of (valid counterfactuals found / n_cf) when only ``vary`` may change."""
    if not vary:
        return 0.0  # nothing may change: no counterfactual exists
    cfset = store.generate_varying(rows, vary)
    return float(np.mean(cfset.counts / store.n_cf))


def necessity_sufficiency(
    store: CounterfactualStore, rows: Sequence[int], *, progress: Progress | None = None
) -> NecessitySufficiency:
    """Necessity and sufficiency of every feature the store's generator may change, over these factuals.

    Parameters
    ----------
    store : CounterfactualStore
        Its generator, n_cf, seed and ranges are used; its features_to_vary decide which
        features are scored and which may change when one is frozen.
    rows : sequence of int
        The factual rows (e.g. a global result's ``query_index``).
    progress : callable(done, total), optional
        Called after each generator run.
    """
    rows = [int(r) for r in rows]
    if not rows:
        raise ConfigError("Necessity and sufficiency need at least one factual.")
    names = list(store.task.feature_names)
    varying = store.varying_features
    scored = [name for name in names if name in varying]
    necessity = np.full(len(names), np.nan)
    sufficiency = np.full(len(names), np.nan)
    started = time.perf_counter()
    runs, total = 0, 2 * len(scored)
    for name in scored:
        j = names.index(name)
        necessity[j] = _share_found(store, rows, [name])
        sufficiency[j] = 1.0 - _share_found(store, rows, [other for other in varying if other != name])
        runs += 2
        if progress is not None:
            progress(runs, total)
    return NecessitySufficiency(
        feature_names=tuple(names),
        necessity=necessity,
        sufficiency=sufficiency,
        rows=tuple(rows),
        seconds=time.perf_counter() - started,
        generator_runs=runs,
    )


def with_necessity_sufficiency(result: FlexResult, scores: NecessitySufficiency) -> FlexResult:
    """``result`` carrying the scores (computed over the same factuals) and their cost in its config."""
    if tuple(scores.feature_names) != tuple(result.feature_names):
        raise ConfigError("Necessity and sufficiency were computed for other features than this result's.")
    if sorted(scores.rows) != sorted(int(r) for r in result.query_index):
        raise ConfigError("Necessity and sufficiency were computed over other factuals than this result's.")
    return replace(
        result,
        necessity=scores.necessity,
        sufficiency=scores.sufficiency,
        config={**result.config, "necessity_sufficiency": scores.summary()},
    )


def seed_spread(
    store: CounterfactualStore,
    rows: Sequence[int],
    *,
    repeats: int,
    tau: float | Mapping[str, float] = 0.1,
    progress: Progress | None = None,
) -> np.ndarray:
    """Std (ddof = 1) of F_j across ``repeats`` generator seeds over the same factuals, shape (n_features,).

    Seed r is ``store.seed + r``; r = 0 is the store itself, so its counterfactuals are reused.
    """
    if repeats < 2:
        raise ConfigError("A spread across seeds needs at least 2 repeats.")
    frequencies = []
    for r in range(repeats):
        seeded = store if r == 0 else store.reseeded(store.seed + r)
        cfset = seeded.ensure(rows)
        frequencies.append(flex_importance(cfset, store.task, tau=tau, ranges=store.ranges, n_boot=0).frequency_mean)
        if progress is not None:
            progress(r + 1, repeats)
    return np.std(np.array(frequencies), axis=0, ddof=1)

"""What must change: per factual, can a feature flip the outcome alone, and is it needed at all?

Two yes/no questions per factual i and mutable feature j, each answered by a search:

- ``flip_alone[i, j]``: changing j alone flips the outcome. The store's generator runs with only
  j allowed to vary (its levels, or its range, within the constraints); yes when it finds any
  valid counterfactual.
- ``needed[i, j]``: no flip is found with j held at the factual's value. No when any stored
  counterfactual of i leaves j unchanged (a witness: no search needed); otherwise the store's
  generator runs with j frozen and every other mutable feature free, and yes when it finds none.

Each is reported as the share of factuals with a yes, with a Wilson interval (a share of
independent yes/no answers over randomly drawn factuals: its 95% means 95% even at 5 factuals).
"Needed" rests on a search: it says no flip was *found* within the generator's budget, which
the result records.

Kommiya Mothilal et al. (AIES 2021) define two ratios over the same runs, kept here:
``necessity_ratio`` (share of the requested counterfactuals found when only j may change) and
``sufficiency_ratio`` (1 - share found when j is frozen). They measure how many alternatives a
generator finds, not need: a binary feature has one possible change, so its necessity ratio is
at most 1 / N_cf however decisive it is.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .._contract import Result, json_floats, json_matrix, json_number, json_pair
from .._errors import ConfigError
from .._results import FlexResult
from .._typing import Rows
from .._uncertainty import INTERVAL_LEVEL, INTERVAL_METHOD, wilson_interval
from ..counterfactuals import CounterfactualStore
from ..counterfactuals._set import Progress
from ._flex import DEFAULT_TAU, flex_importance

__all__ = ["NecessitySufficiency", "necessity_sufficiency", "with_necessity_sufficiency", "seed_spread"]


@dataclass(frozen=True, eq=False)
class NecessitySufficiency(Result):
    """Per-feature answers to "can it flip the outcome alone?" and "is it needed?" over a set of factuals.

    Attributes
    ----------
    feature_names : tuple of str, length n_features
    rows : tuple of int
        The factuals, in the order given.
    local_flip_alone, local_needed : ndarray of shape (n_rows, n_features)
        1.0 / 0.0 per factual; NaN for features that may not change (immutable or not varied).
    flip_alone, needed : ndarray of shape (n_features,)
        Share of factuals with a yes; NaN for features that may not change.
    flip_alone_interval, needed_interval : ndarray of shape (n_features, 2)
        Wilson interval of each share (``level``).
    necessity_ratio, sufficiency_ratio : ndarray of shape (n_features,)
        Kommiya Mothilal et al.'s ratios over the same runs (see the module docstring).
    seconds : float
        Wall time of all generator runs.
    generator_runs : int
    witnessed : int
        (factual, feature) pairs whose "needed" a stored counterfactual answered without a search.
    budget : dict
        The generator and its settings: what "no flip found" was searched with.
    versions : dict or None
        The library versions recorded in the JSON it was read from; None when computed here.
    """

    feature_names: tuple[str, ...]
    rows: tuple[int, ...]
    local_flip_alone: np.ndarray
    local_needed: np.ndarray
    flip_alone: np.ndarray
    flip_alone_interval: np.ndarray
    needed: np.ndarray
    needed_interval: np.ndarray
    necessity_ratio: np.ndarray
    sufficiency_ratio: np.ndarray
    seconds: float
    generator_runs: int
    witnessed: int = 0
    level: float = INTERVAL_LEVEL
    budget: dict | None = None
    versions: dict | None = field(default=None, repr=False)

    kind = "necessity_sufficiency"

    def summary(self) -> dict:
        """What a FlexResult's config records about the run (the scores go to each feature)."""
        return {
            "factuals": len(self.rows),
            "seconds": float(self.seconds),
            "generator_runs": int(self.generator_runs),
            "needed_witnessed": int(self.witnessed),
            "interval": {"method": INTERVAL_METHOD, "level": float(self.level), "over": "factuals"},
            "search": dict(self.budget or {}),
        }

    def _body(self) -> dict:
        """Per feature the shares with their intervals and the ratios; per factual the yes/no answers."""
        features = [
            {
                "name": name,
                "flip_alone": json_number(self.flip_alone[j]),
                "flip_alone_interval": json_pair(self.flip_alone_interval[j]),
                "needed": json_number(self.needed[j]),
                "needed_interval": json_pair(self.needed_interval[j]),
                "necessity_ratio": json_number(self.necessity_ratio[j]),
                "sufficiency_ratio": json_number(self.sufficiency_ratio[j]),
            }
            for j, name in enumerate(self.feature_names)
        ]
        summary = self.summary()
        return {
            "features": features,
            "rows": [int(r) for r in self.rows],
            "local": {"flip_alone": json_matrix(self.local_flip_alone), "needed": json_matrix(self.local_needed)},
            "seconds": summary["seconds"],
            "generator_runs": summary["generator_runs"],
            "needed_witnessed": summary["needed_witnessed"],
            "config": {"interval": summary["interval"], "search": summary["search"]},
        }

    @classmethod
    def _from_body(cls, data: Mapping) -> NecessitySufficiency:
        records, rows = data["features"], tuple(int(r) for r in data["rows"])
        shape = (len(rows), len(records))
        config = data.get("config") or {}

        def column(key: str) -> np.ndarray:
            return json_floats(r[key] for r in records)

        def pairs(key: str) -> np.ndarray:
            return np.array([json_floats(r[key]) for r in records], dtype=float).reshape(len(records), 2)

        def matrix(key: str) -> np.ndarray:
            return np.array([json_floats(row) for row in data["local"][key]], dtype=float).reshape(shape)

        return cls(
            feature_names=tuple(r["name"] for r in records),
            rows=rows,
            local_flip_alone=matrix("flip_alone"),
            local_needed=matrix("needed"),
            flip_alone=column("flip_alone"),
            flip_alone_interval=pairs("flip_alone_interval"),
            needed=column("needed"),
            needed_interval=pairs("needed_interval"),
            necessity_ratio=column("necessity_ratio"),
            sufficiency_ratio=column("sufficiency_ratio"),
            seconds=float(data["seconds"]),
            generator_runs=int(data["generator_runs"]),
            witnessed=int(data.get("needed_witnessed", 0)),
            level=float((config.get("interval") or {}).get("level", INTERVAL_LEVEL)),
            budget=dict(config.get("search") or {}),
            versions=data.get("versions"),
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per feature: the flip-alone and needed shares with their intervals, and the two ratios."""
        return pd.DataFrame(
            {
                "feature": self.feature_names,
                "flip_alone": self.flip_alone,
                "flip_alone_low": self.flip_alone_interval[:, 0],
                "flip_alone_high": self.flip_alone_interval[:, 1],
                "needed": self.needed,
                "needed_low": self.needed_interval[:, 0],
                "needed_high": self.needed_interval[:, 1],
                "necessity_ratio": self.necessity_ratio,
                "sufficiency_ratio": self.sufficiency_ratio,
            }
        )


def _found(store: CounterfactualStore, rows: list[int], vary: list[str]) -> np.ndarray:
    """Valid counterfactuals found per factual when only ``vary`` may change, shape (len(rows),)."""
    if not vary:
        return np.zeros(len(rows), dtype=int)  # nothing may change: no counterfactual exists
    return store.generate_varying(rows, vary).counts


def necessity_sufficiency(
    store: CounterfactualStore, rows: Rows, *, progress: Progress | None = None
) -> NecessitySufficiency:
    """Flip-alone and needed shares, and Kommiya Mothilal et al.'s ratios, of every feature the store may change.

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
    n_rows, n_features = len(rows), len(names)
    local_flip = np.full((n_rows, n_features), np.nan)
    local_needed = np.full((n_rows, n_features), np.nan)
    necessity_ratio = np.full(n_features, np.nan)
    sufficiency_ratio = np.full(n_features, np.nan)
    started = time.perf_counter()

    # A stored counterfactual that leaves j as it was answers "needed" with a no, for free.
    stored = store.ensure(rows)
    with np.errstate(invalid="ignore"):
        kept = (stored.counterfactuals == stored.factuals[:, None, :]) & stored.valid[:, :, None]
    witness = kept.any(axis=1)  # (n_rows, n_features)

    runs, total = 0, 2 * len(scored)
    for name in scored:
        j = names.index(name)
        alone = _found(store, rows, [name])
        local_flip[:, j] = alone > 0
        necessity_ratio[j] = float(np.mean(alone / store.n_cf))
        frozen = _found(store, rows, [other for other in varying if other != name])
        # The run with j frozen answers every factual (and gives the ratio); a witness can only agree.
        local_needed[:, j] = (frozen == 0) & ~witness[:, j]
        sufficiency_ratio[j] = 1.0 - float(np.mean(frozen / store.n_cf))
        runs += 2
        if progress is not None:
            progress(runs, total)
    flip_share, flip_interval = _shares(local_flip)
    needed_share, needed_interval = _shares(local_needed)
    generator = getattr(store.generator, "name", type(store.generator).__name__)
    return NecessitySufficiency(
        feature_names=tuple(names),
        rows=tuple(rows),
        local_flip_alone=local_flip,
        local_needed=local_needed,
        flip_alone=flip_share,
        flip_alone_interval=flip_interval,
        needed=needed_share,
        needed_interval=needed_interval,
        necessity_ratio=necessity_ratio,
        sufficiency_ratio=sufficiency_ratio,
        seconds=time.perf_counter() - started,
        generator_runs=runs,
        witnessed=int(np.sum(witness[:, [names.index(n) for n in scored]])) if scored else 0,
        budget={"generator": generator, "n_cf": store.n_cf, "seed": store.seed, **_settings(store.generator)},
    )


def _settings(generator) -> dict:
    get = getattr(generator, "result_params", None)
    return dict(get()) if callable(get) else {}


def _shares(local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share of yes per feature (n_features,) and its Wilson interval (n_features, 2); NaN for features not scored."""
    scored = ~np.isnan(local).all(axis=0)
    share = np.full(local.shape[1], np.nan)
    interval = np.full((local.shape[1], 2), np.nan)
    if scored.any():
        share[scored] = np.nanmean(local[:, scored], axis=0)
        interval[scored] = wilson_interval(share[scored], (~np.isnan(local[:, scored])).sum(axis=0))
    return share, interval


def with_necessity_sufficiency(result: FlexResult, scores: NecessitySufficiency) -> FlexResult:
    """``result`` carrying the scores (computed over the same factuals) and their cost in its config."""
    if tuple(scores.feature_names) != tuple(result.feature_names):
        raise ConfigError("Necessity and sufficiency were computed for other features than this result's.")
    if sorted(scores.rows) != sorted(int(r) for r in result.query_index):
        raise ConfigError("Necessity and sufficiency were computed over other factuals than this result's.")
    return replace(
        result,
        flip_alone=scores.flip_alone,
        flip_alone_interval=scores.flip_alone_interval,
        needed=scores.needed,
        needed_interval=scores.needed_interval,
        necessity_ratio=scores.necessity_ratio,
        sufficiency_ratio=scores.sufficiency_ratio,
        config={**result.config, "necessity_sufficiency": scores.summary()},
    )


def seed_spread(
    store: CounterfactualStore,
    rows: Rows,
    *,
    repeats: int,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
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
        frequencies.append(flex_importance(cfset, store.task, tau=tau, ranges=store.ranges, intervals=False).frequency_mean)
        if progress is not None:
            progress(r + 1, repeats)
    return np.std(np.array(frequencies), axis=0, ddof=1)

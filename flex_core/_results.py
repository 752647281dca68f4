"""Result objects: plain frozen data that carries its own configuration, kept apart from plotting."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.stats import rankdata

__all__ = ["FlexResult", "RegionalResult", "QUADRANT_MEANING", "versions"]

QUADRANT_MEANING = {
    "A": "low global, high regional importance: a driver specific to this region",
    "B": "low global and low regional importance",
    "C": "high global and high regional importance: a driver everywhere",
    "D": "high global, low regional importance: a global driver that matters less here",
}


def json_number(x):
    """JSON-safe float: NaN becomes null."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def json_int(x):
    """JSON-safe integer: NaN becomes null."""
    x = json_number(x)
    return None if x is None else int(x)


def versions() -> dict:
    """Versions of the libraries a result depends on, for the JSON export."""
    import importlib.metadata as md
    import platform

    out = {"python": platform.python_version()}
    for pkg in ("flex-studio", "numpy", "pandas", "scikit-learn", "dice-ml", "scipy"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            continue
    from . import __version__

    out["flex_core"] = __version__
    return out


@dataclass(frozen=True, eq=False)
class FlexResult:
    """FLEX importances at one level (local, regional or global).

    Arrays are indexed by feature (length n_features) unless said otherwise.

    Attributes
    ----------
    level : {"local", "regional", "global"}
    frequency_mean, frequency_std : ndarray of shape (n_features,)
        F_j and its std across factuals (Eq. 4).
    magnitude_mean : ndarray of shape (n_features,)
        μ_j, mean relative change size |Δ|/range; NaN for categorical features.
    dice_frequency : ndarray of shape (n_features,)
        DiCE's Algorithm 2 on the same counterfactuals.
    local_frequencies : ndarray of shape (n_queries, n_features)
        f_j(i) per factual; a NaN row for a factual with no counterfactual.
    query_index : ndarray of shape (n_queries,)
    counts : ndarray of shape (n_queries,)
        Valid counterfactuals per factual.
    tau : ndarray of shape (n_features,)
        τ_j used; NaN for categorical features.
    necessary_frequency, necessary_std : ndarray of shape (n_features,) or None
        F_j and its std counting only *necessary* changes: those whose revert alone (back to
        the factual's value) makes the counterfactual invalid. None when no model was at hand.
    local_necessary : ndarray of shape (n_queries, n_features) or None
        f_j(i) counting only necessary changes.
    frequency_ci : ndarray of shape (n_features, 2) or None
        Percentile-bootstrap interval of F_j over the factuals (``config["bootstrap"]``).
    rank_interval : ndarray of shape (n_features, 2) or None
        [best, worst] rank across the same resamples.
    necessity, sufficiency : ndarray of shape (n_features,) or None
        Mothilal et al. (2021): share of requested counterfactuals found when only j may
        change; 1 - share found when j is frozen. NaN for features that may not change.
        None unless asked for (two generator runs per feature).
    frequency_seed_sd : ndarray of shape (n_features,) or None
        Std of F_j across generator seeds (``config["repeats"]``); None unless asked for.
    """

    level: str
    feature_names: tuple[str, ...]
    display_names: tuple[str, ...]
    kinds: tuple[str, ...]
    immutable: tuple[bool, ...]
    tau: np.ndarray
    frequency_mean: np.ndarray
    frequency_std: np.ndarray
    magnitude_mean: np.ndarray
    dice_frequency: np.ndarray
    local_frequencies: np.ndarray
    local_magnitudes: np.ndarray
    query_index: np.ndarray
    counts: np.ndarray
    generator: dict = field(default_factory=dict)
    model: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    necessary_frequency: np.ndarray | None = None
    necessary_std: np.ndarray | None = None
    local_necessary: np.ndarray | None = None
    frequency_ci: np.ndarray | None = None
    rank_interval: np.ndarray | None = None
    necessity: np.ndarray | None = None
    sufficiency: np.ndarray | None = None
    frequency_seed_sd: np.ndarray | None = None

    @property
    def rank(self) -> np.ndarray:
        """1 for the most frequently changed feature; ties share the best rank (as the paper's tables)."""
        values = np.nan_to_num(self.frequency_mean, nan=-1.0)
        return rankdata(-values, method="min").astype(int)

    @property
    def n_factuals_used(self) -> int:
        return int((self.counts > 0).sum())

    def only_necessary(self) -> FlexResult:
        """The same result counting only necessary changes (F, std, f_j(i), intervals and ranks)."""
        if self.necessary_frequency is None:
            raise ValueError("This result has no necessary-change frequencies (it was computed without a model).")
        from .importance import frequency_intervals  # importance builds on this module

        boot = self.config.get("bootstrap", {})
        ci, ranks = frequency_intervals(
            self.local_necessary, **{k: boot[k] for k in ("n_boot", "level", "seed") if k in boot}
        )
        return replace(
            self,
            frequency_mean=self.necessary_frequency,
            frequency_std=self.necessary_std,
            local_frequencies=self.local_necessary,
            frequency_ci=ci,
            rank_interval=ranks,
            config={**self.config, "count": "necessary changes only"},
        )

    def _optional_columns(self) -> dict[str, np.ndarray]:
        """Per-feature scores that exist only when computed, by JSON/frame column name."""
        out = {}
        for name in ("necessary_frequency", "necessity", "sufficiency", "frequency_seed_sd"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per feature, sorted by rank."""
        columns = {
            "feature": self.feature_names,
            "label": self.display_names,
            "kind": self.kinds,
            "immutable": self.immutable,
            "frequency_mean": self.frequency_mean,
            "frequency_std": self.frequency_std,
            "magnitude_mean": self.magnitude_mean,
            "dice_frequency": self.dice_frequency,
            "tau": self.tau,
            "rank": self.rank,
            **self._optional_columns(),
        }
        if self.frequency_ci is not None:
            columns.update(frequency_ci_low=self.frequency_ci[:, 0], frequency_ci_high=self.frequency_ci[:, 1])
        if self.rank_interval is not None:
            columns.update(rank_best=self.rank_interval[:, 0], rank_worst=self.rank_interval[:, 1])
        frame = pd.DataFrame(columns)
        return frame.sort_values(["rank", "feature"], kind="stable").reset_index(drop=True)

    def local_frame(self) -> pd.DataFrame:
        """f_j(i) per factual: rows are factual row ids, columns features, plus the counterfactual count."""
        frame = pd.DataFrame(self.local_frequencies, columns=list(self.feature_names), index=self.query_index)
        frame.index.name = "row"
        frame.insert(0, "counterfactuals", self.counts)
        return frame

    def feature_records(self) -> list[dict]:
        ranks = self.rank
        optional = self._optional_columns()
        records = []
        for j, name in enumerate(self.feature_names):
            record = {
                "name": name,
                "label": self.display_names[j],
                "kind": self.kinds[j],
                "immutable": bool(self.immutable[j]),
                "frequency_mean": json_number(self.frequency_mean[j]),
                "frequency_std": json_number(self.frequency_std[j]),
                "magnitude_mean": json_number(self.magnitude_mean[j]),
                "rank": int(ranks[j]),
                "dice_frequency": json_number(self.dice_frequency[j]),
                "tau": json_number(self.tau[j]),
                **{key: json_number(values[j]) for key, values in optional.items()},
            }
            if self.frequency_ci is not None:
                record["frequency_ci"] = [json_number(v) for v in self.frequency_ci[j]]
            if self.rank_interval is not None:
                record["rank_interval"] = [json_int(v) for v in self.rank_interval[j]]
            records.append(record)
        return records

    def to_dict(self) -> dict:
        return {
            "level": self.level,
            "features": self.feature_records(),
            "factuals": [int(r) for r in self.query_index],
            "counterfactuals_per_factual": [int(c) for c in self.counts],
            "generator": self.generator,
            "model": self.model,
            "config": self.config,
            "notes": list(self.notes),
            "versions": versions(),
        }

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **{"indent": 2, **kwargs})


@dataclass(frozen=True, eq=False)
class RegionalResult:
    """Regional FLEX: a query factual, its Hamming neighbours, and how the region compares to global.

    Attributes
    ----------
    importance : FlexResult
        Regional F_j ± std over the members (level "regional").
    members : tuple of int
        Row ids; the query first, then neighbours by increasing distance.
    distances : tuple of float
        Distance of each member to the query.
    mode_shift : tuple of dict
        Per feature: ``name``, ``mode``, ``p_orig``, ``p_cf``, ``delta`` (Eq. 5), ``cf_mode`` and,
        for an ordinal feature, ``rank_shift`` (mean level change along its order; NaN otherwise).
    global_frequency : ndarray of shape (n_features,)
        F_j^global the region is compared with.
    pearson_r : float
        Pearson r between regional and global F over the mutable features (NaN if undefined).
    pearson_r_interval : (float, float)
        95% percentile-bootstrap interval of r over the region's factuals (NaN if undefined).
    quadrants : tuple of str or None
        "A"-"D" per feature as in the paper's Fig. 4; None for immutable features.
    """

    importance: FlexResult
    query: int
    members: tuple[int, ...]
    distances: tuple[float, ...]
    criterion: dict | None
    mode_shift: tuple[dict, ...]
    global_frequency: np.ndarray
    pearson_r: float
    quadrants: tuple
    quadrant_thresholds: tuple[float, float]
    candidates: int = 0
    pearson_r_interval: tuple[float, float] = (float("nan"), float("nan"))

    @property
    def feature_names(self) -> tuple[str, ...]:
        return self.importance.feature_names

    def to_frame(self) -> pd.DataFrame:
        frame = self.importance.to_frame()
        lookup = dict(zip(self.feature_names, zip(self.global_frequency, self.quadrants)))
        frame["global_frequency"] = [lookup[f][0] for f in frame["feature"]]
        frame["quadrant"] = [lookup[f][1] for f in frame["feature"]]
        return frame

    def mode_shift_frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.mode_shift), columns=["name", "mode", "p_orig", "p_cf", "delta", "cf_mode", "rank_shift"])

    def to_dict(self) -> dict:
        out = self.importance.to_dict()
        lookup = dict(zip(self.feature_names, zip(self.global_frequency, self.quadrants)))
        for record in out["features"]:
            global_f, quadrant = lookup[record["name"]]
            record["global_frequency"] = json_number(global_f)
            record["quadrant"] = quadrant
        out.update(
            query=int(self.query),
            members=[int(m) for m in self.members],
            distances=[float(d) for d in self.distances],
            criterion=self.criterion,
            candidates=int(self.candidates),
            mode_shift=[{k: (json_number(v) if k in ("p_orig", "p_cf", "delta", "rank_shift") else v) for k, v in row.items()} for row in self.mode_shift],
            pearson_r=json_number(self.pearson_r),
            pearson_r_interval=[json_number(v) for v in self.pearson_r_interval],
            quadrant_thresholds={"global": json_number(self.quadrant_thresholds[0]), "regional": json_number(self.quadrant_thresholds[1])},
        )
        return out

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **{"indent": 2, **kwargs})

"""How two importance rankings agree: Spearman, Kendall and top-k overlap, with bootstrap intervals for FLEX against
SHAP and against a ranking measured once (permutation importance)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, rankdata, spearmanr

from .._contract import Result, json_floats, json_number, json_pair
from .._errors import ConfigError
from .._results import FlexResult, importance_rank
from ..importance import bootstrap_counts, bootstrap_means
from ._shap import ShapImportance

__all__ = ["RankAgreement", "rank_agreement", "rank_correlations", "flex_shap_agreement", "flex_fixed_agreement"]


@dataclass(frozen=True)
class RankAgreement(Result):
    """How two importance vectors agree over the same features.

    ``spearman`` and ``kendall`` (tau-b) handle ties; ``top_k_overlap`` is
    |A ∩ B| / max(|A|, |B|) where A and B are the features ranked <= k by each
    method (ties at the boundary included, so a set can hold more than k features).
    ``config`` records k and, for :func:`flex_shap_agreement`, the bootstrap; it and
    ``versions`` take no part in equality.
    """

    spearman: float
    kendall: float
    top_k_overlap: float
    k: int
    features: tuple[str, ...]
    spearman_interval: tuple[float, float] | None = None
    kendall_interval: tuple[float, float] | None = None
    config: dict = field(default_factory=dict, compare=False)
    versions: dict | None = field(default=None, repr=False, compare=False)

    kind = "rank_agreement"

    def _body(self) -> dict:
        out = {
            "spearman": json_number(self.spearman),
            "kendall": json_number(self.kendall),
            f"top{self.k}_overlap": json_number(self.top_k_overlap),
            "features": list(self.features),
        }
        if self.spearman_interval is not None and self.kendall_interval is not None:  # set together
            out["spearman_interval"] = json_pair(self.spearman_interval)
            out["kendall_interval"] = json_pair(self.kendall_interval)
        return {**out, "config": {"k": self.k, **self.config}}

    @classmethod
    def _from_body(cls, data: Mapping) -> RankAgreement:
        config = dict(data.get("config") or {})
        k = int(config.pop("k")) if "k" in config else next(
            int(key[3:-8]) for key in data if key.startswith("top") and key.endswith("_overlap")
        )
        intervals: dict[str, Any] = {
            name: tuple(float(v) for v in json_floats(data[name]))
            for name in ("spearman_interval", "kendall_interval") if data.get(name) is not None
        }
        spearman, kendall, overlap = json_floats([data["spearman"], data["kendall"], data[f"top{k}_overlap"]])
        return cls(
            spearman=float(spearman), kendall=float(kendall), top_k_overlap=float(overlap), k=k,
            features=tuple(data["features"]), config=config, versions=data.get("versions"), **intervals,
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per statistic (spearman, kendall, top_k_overlap): its value and, where computed, its interval."""
        intervals = {"spearman": self.spearman_interval, "kendall": self.kendall_interval, "top_k_overlap": None}
        values = {"spearman": self.spearman, "kendall": self.kendall, "top_k_overlap": self.top_k_overlap}
        return pd.DataFrame(
            [
                {"statistic": name, "value": values[name], "low": (intervals[name] or (np.nan, np.nan))[0],
                 "high": (intervals[name] or (np.nan, np.nan))[1], "k": self.k if name == "top_k_overlap" else None,
                 "features": len(self.features)}
                for name in values
            ]
        )


def rank_agreement(
    a: np.ndarray,
    b: np.ndarray,
    *,
    k: int = 3,
    names: Sequence[str] | None = None,
    include: np.ndarray | Sequence[bool] | None = None,
) -> RankAgreement:
    """Spearman, Kendall and top-k overlap between two importance vectors of shape (n,).

    ``include`` (bool, shape (n,)) restricts the comparison, e.g. to mutable features:
    FLEX gives an immutable feature 0 by construction, which says nothing about agreement.
    Features where either value is NaN are left out.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ConfigError(f"Importance vectors must have the same length; got {a.shape} and {b.shape}.")
    if k < 1:
        raise ConfigError("k for the top-k overlap must be at least 1.")
    names = [str(i) for i in range(len(a))] if names is None else list(names)
    keep = ~np.isnan(a) & ~np.isnan(b)
    if include is not None:
        keep &= np.asarray(include, dtype=bool)
    a, b = a[keep], b[keep]
    kept_names = tuple(n for n, ok in zip(names, keep) if ok)
    if len(a) < 2:
        raise ConfigError("Rank agreement needs at least two features to compare.")
    constant = np.ptp(a) == 0 or np.ptp(b) == 0
    spearman = float("nan") if constant else float(spearmanr(a, b).statistic)
    kendall = float("nan") if constant else float(kendalltau(a, b).statistic)
    top_a = set(np.flatnonzero(importance_rank(a) <= k))
    top_b = set(np.flatnonzero(importance_rank(b) <= k))
    overlap = len(top_a & top_b) / max(len(top_a), len(top_b))
    return RankAgreement(spearman=spearman, kendall=kendall, top_k_overlap=overlap, k=k, features=kept_names)


def rank_correlations(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and Kendall's tau-b of each row pair of (n_rows, n) arrays, vectorised; NaN where a row is constant.

    Both as scipy's ``spearmanr`` and ``kendalltau`` (ties included); shapes (n_rows,).
    """
    return _rowwise_spearman(a, b), _rowwise_kendall(a, b)


def _rowwise_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r of average ranks, row by row."""
    ra, rb = rankdata(a, axis=1), rankdata(b, axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    denom = np.sqrt((ra**2).sum(axis=1) * (rb**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (ra * rb).sum(axis=1) / denom, np.nan)


def _rowwise_kendall(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Tau-b row by row, from the signs of all pairwise differences."""
    sa = np.sign(a[:, :, None] - a[:, None, :])
    sb = np.sign(b[:, :, None] - b[:, None, :])
    denom = np.sqrt(np.abs(sa).sum(axis=(1, 2)) * np.abs(sb).sum(axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (sa * sb).sum(axis=(1, 2)) / denom, np.nan)


def flex_shap_agreement(
    flex: FlexResult, shap_result: ShapImportance, *, k: int = 3, n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> RankAgreement:
    """FLEX-SHAP rank agreement over the mutable features, with percentile-bootstrap intervals.

    Each resample draws the factuals both methods explained (with replacement) and
    recomputes F_j and mean |SHAP| from the same draw, so the interval says how much
    the agreement depends on which factuals were sampled. A resample in which either
    side is constant has no rank correlation and is left out; with fewer than half
    the resamples left, the interval is NaN.
    """
    mutable = ~np.asarray(flex.immutable, dtype=bool)
    point = rank_agreement(flex.frequency_mean, shap_result.mean_abs, k=k, names=flex.feature_names, include=mutable)
    point = replace(point, config={
        "between": ["flex frequency_mean", "shap mean |SHAP|"],
        "over": "mutable features",
        "bootstrap": {"resamples": n_boot, "level": level, "seed": seed, "over": "the factuals both methods explained"},
    })
    shap_rows = {int(r): i for i, r in enumerate(shap_result.query_index)}
    has_cf = ~np.isnan(flex.local_frequencies).all(axis=1)
    pairs = [(i, shap_rows[int(r)]) for i, r in enumerate(flex.query_index) if has_cf[i] and int(r) in shap_rows]
    keep = mutable & ~np.isnan(flex.frequency_mean) & ~np.isnan(shap_result.mean_abs)
    if len(pairs) < 2 or keep.sum() < 2:
        nan = (float("nan"), float("nan"))
        return replace(point, spearman_interval=nan, kendall_interval=nan)
    flex_pos, shap_pos = (np.array(p) for p in zip(*pairs))
    counts = bootstrap_counts(len(pairs), n_boot=n_boot, seed=seed)
    flex_means = bootstrap_means(flex.local_frequencies[flex_pos][:, keep], counts)
    shap_means = bootstrap_means(np.abs(shap_result.values[shap_pos][:, keep]), counts)
    spearman, kendall = _percentile_intervals(flex_means, shap_means, n_boot=n_boot, level=level)
    return replace(point, spearman_interval=spearman, kendall_interval=kendall)


def _percentile_intervals(a: np.ndarray, b: np.ndarray, *, n_boot: int, level: float) -> list[tuple[float, float]]:
    """Percentile intervals of Spearman and Kendall over bootstrap rows of ``a`` and ``b`` (n_boot, n); NaN when
    fewer than half the resamples have a rank correlation (either side constant)."""
    tail = (1 - level) / 2 * 100
    intervals = []
    for values in rank_correlations(a, b):
        values = values[~np.isnan(values)]
        if len(values) < n_boot / 2:
            intervals.append((float("nan"), float("nan")))
        else:
            low, high = np.percentile(values, [tail, 100 - tail])
            intervals.append((float(low), float(high)))
    return intervals


def flex_fixed_agreement(
    flex: FlexResult, scores: np.ndarray, *, between: str, k: int = 3, n_boot: int = 1000, level: float = 0.95,
    seed: int = 0,
) -> RankAgreement:
    """FLEX against a ranking measured once (``scores``, shape (n_features,)), over the mutable features, with
    percentile-bootstrap intervals.

    Each resample draws FLEX's factuals (with replacement) and recomputes F_j; ``scores`` (e.g. permutation
    importance on held-out rows, which does not depend on FLEX's factuals) stay as they are. The interval so says
    how much the agreement depends on which factuals FLEX sampled. ``between`` names what ``scores`` are.
    """
    scores = np.asarray(scores, dtype=float)
    mutable = ~np.asarray(flex.immutable, dtype=bool)
    point = rank_agreement(flex.frequency_mean, scores, k=k, names=flex.feature_names, include=mutable)
    point = replace(point, config={
        "between": ["flex frequency_mean", between],
        "over": "mutable features",
        "bootstrap": {"resamples": n_boot, "level": level, "seed": seed, "over": "FLEX's factuals"},
    })
    has_cf = np.flatnonzero(~np.isnan(flex.local_frequencies).all(axis=1))
    keep = mutable & ~np.isnan(flex.frequency_mean) & ~np.isnan(scores)
    if len(has_cf) < 2 or keep.sum() < 2:
        nan = (float("nan"), float("nan"))
        return replace(point, spearman_interval=nan, kendall_interval=nan)
    counts = bootstrap_counts(len(has_cf), n_boot=n_boot, seed=seed)
    flex_means = bootstrap_means(flex.local_frequencies[has_cf][:, keep], counts)
    fixed = np.broadcast_to(scores[keep], flex_means.shape).copy()
    spearman, kendall = _percentile_intervals(flex_means, fixed, n_boot=n_boot, level=level)
    return replace(point, spearman_interval=spearman, kendall_interval=kendall)

"""FLEX at the three levels, from stored counterfactuals: no function here generates any."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._errors import ConfigError
from .._format import format_number
from .._results import FlexResult, RegionalResult
from .._typing import Numbers, Rows
from .._uncertainty import CONTINUITY, INTERVAL_LEVEL, INTERVAL_METHOD, frequency_intervals, pearson_interval
from ..counterfactuals import CounterfactualSet, decode_rows, encode_rows
from ..data import TaskSpec
from ..limits import check
from ._metrics import (
    DEFAULT_TAU,
    DICE_EPSILON,
    aggregate,
    change_matrix,
    dice_importance,
    local_frequencies,
    local_magnitudes,
    resolve_tau,
)

__all__ = [
    "flex_importance",
    "interval_config",
    "hamming_distances",
    "select_region",
    "mode_shift",
    "compare_with_global",
    "regional_importance",
    "parse_criterion",
]


PEARSON_INTERVAL_CONFIG = {
    "method": "linearised, variance bounded for values in [0, 1]",
    "level": INTERVAL_LEVEL,
    "over": "the region's factuals; the global F held as given",
}


def interval_config() -> dict:
    """What ``config["intervals"]`` records about ``frequency_ci`` and ``rank_interval``."""
    return {
        "method": INTERVAL_METHOD,
        "level": INTERVAL_LEVEL,
        "continuity": CONTINUITY,
        "over": "factuals, each with its own counterfactual draw",
        "ranks": "the ranks the F intervals allow",
    }


def _check_compatible(cfset: CounterfactualSet, task: TaskSpec) -> None:
    if tuple(cfset.feature_names) != tuple(task.feature_names):
        raise ConfigError("These counterfactuals were made for other features than this task's.")


def flex_importance(
    cfset: CounterfactualSet,
    task: TaskSpec,
    *,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    ranges: np.ndarray | None = None,
    epsilon: float = DICE_EPSILON,
    level: str = "global",
    necessary: np.ndarray | None = None,
    intervals: bool = True,
    generator: dict | None = None,
    model: dict | None = None,
    config: dict | None = None,
) -> FlexResult:
    """FLEX (Algorithm 1) plus DiCE's Algorithm 2 on one counterfactual set.

    Parameters
    ----------
    cfset : CounterfactualSet with n_queries factuals
    task : TaskSpec the counterfactuals belong to
    tau : float or mapping feature -> float
        Change threshold on |Δ|/range for continuous features.
    ranges : ndarray of shape (n_features,), optional
        range(X_j) of the training data; default the whole frame's.
    level : {"local", "regional", "global"}
        Only a label: the arithmetic is the same at every level (Eq. 4).
    necessary : bool ndarray of shape (n_queries, n_cf, n_features), optional
        Which changes are necessary (:func:`flex_core.counterfactuals._revert.necessary_changes`,
        τ-independent, so computed once per set); gives ``necessary_frequency``.
    intervals : bool, default True
        Compute ``frequency_ci`` (95% Wilson score interval of F_j with a continuity correction,
        over the factuals with counterfactuals; an immutable feature that never changed gets
        [0, 0]) and ``rank_interval`` (the ranks those intervals allow); see
        :mod:`flex_core._uncertainty`. Recorded in ``config["intervals"]``.
    """
    _check_compatible(cfset, task)
    continuous = np.array([f.is_continuous for f in task.features])
    tau_vec = resolve_tau(task.feature_names, continuous, tau)
    ranges = task.ranges() if ranges is None else np.asarray(ranges, dtype=float)
    usable = cfset.valid
    changed, relative = change_matrix(cfset.factuals, cfset.counterfactuals, continuous, ranges, tau_vec)
    changed_eps, _ = change_matrix(
        cfset.factuals, cfset.counterfactuals, continuous, ranges, tau_vec, epsilon=epsilon
    )
    local_f = local_frequencies(changed, usable)
    local_mu = local_magnitudes(relative, usable)
    f_mean, f_std = aggregate(local_f)
    mu_mean, _ = aggregate(local_mu)
    mu_mean[~continuous] = np.nan
    coverage = cfset.coverage()
    extra, run_config = _necessary_and_intervals(task, changed, usable, local_f, necessary=necessary, intervals=intervals)
    return FlexResult(
        level=level,
        feature_names=tuple(task.feature_names),
        display_names=tuple(f.label for f in task.features),
        kinds=tuple(f.kind for f in task.features),
        immutable=tuple(f.immutable for f in task.features),
        tau=tau_vec,
        frequency_mean=f_mean,
        frequency_std=f_std,
        magnitude_mean=mu_mean,
        dice_frequency=dice_importance(changed_eps, usable),
        local_frequencies=local_f,
        local_magnitudes=local_mu,
        query_index=cfset.query_index.copy(),
        counts=cfset.counts,
        generator={"name": cfset.generator, **coverage, **(generator or {})},
        model=dict(model or {}),
        config={"tau": tau if not isinstance(tau, Mapping) else dict(tau), "epsilon": epsilon, **run_config, **(config or {})},
        notes=(*cfset.notes, *cfset.coverage_notes),
        counterfactual_set=cfset,
        features=tuple(task.features),
        **extra,
    )


def _necessary_and_intervals(task: TaskSpec, changed: np.ndarray, usable: np.ndarray, local_f: np.ndarray, *,
                             necessary: np.ndarray | None, intervals: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`flex_importance`'s optional parts: necessary F (given which changes are necessary) and F's intervals.

    Returns the result's extra fields and what its config records of them.
    """
    extra: dict[str, Any] = {}
    run_config: dict[str, Any] = {}
    if necessary is not None:
        if necessary.shape != changed.shape:
            raise ConfigError(f"necessary has shape {necessary.shape}; the counterfactuals have {changed.shape}.")
        # A change counts as necessary only if it also counts as a change at this τ.
        local_necessary = local_frequencies(changed & necessary, usable)
        necessary_mean, necessary_std = aggregate(local_necessary)
        extra.update(necessary_frequency=necessary_mean, necessary_std=necessary_std, local_necessary=local_necessary)
    if intervals:
        immutable = np.array([f.immutable for f in task.features], dtype=bool)
        ci, ranks = frequency_intervals(local_f, level=INTERVAL_LEVEL, fixed=immutable)
        extra.update(frequency_ci=ci, rank_interval=ranks)
        run_config["intervals"] = interval_config()
    return extra, run_config


# -- regions ---------------------------------------------------------------------------
def parse_criterion(task: TaskSpec, where: str | Mapping | None) -> dict | None:
    """``"Feature=Value"`` (or a mapping) to ``{"feature", "value"}``, checked against the task."""
    if where is None or where == "":
        return None
    if isinstance(where, Mapping):
        feature, value = where["feature"], where["value"]
    else:
        feature, sep, value = str(where).partition("=")
        if not sep:
            raise ConfigError(f"A criterion is FEATURE=VALUE, not {where!r}.")
    feature, value = str(feature).strip(), str(value).strip()
    spec = task.feature(feature)
    if spec.is_continuous:
        raise ConfigError(f"A criterion needs a categorical feature; {feature!r} is continuous.")
    if value not in spec.levels:
        raise ConfigError(f"{feature!r} has no value {value!r}; its values are: {', '.join(spec.levels)}.")
    return {"feature": feature, "value": value}


def hamming_distances(task: TaskSpec, query: int, rows: Rows, *, ranges: np.ndarray | None = None) -> np.ndarray:
    """Distance from the query row to each row, shape (n_rows,).

    Categorical features add 1 when the values differ (the paper's Hamming distance,
    Eq. 3). A continuous feature adds |Δ| / range(X_j), a number in [0, 1]: equal values
    add 0 and the two ends of the range add 1, so a continuous feature weighs at most as
    much as a categorical mismatch (Gower's rule). An ordinal feature uses its order the
    same way: |Δ rank| / (levels - 1), so neighbouring levels are closer than the two ends.
    On data without continuous or ordinal features this is exactly the paper's Hamming distance.
    """
    continuous = np.array([f.is_continuous for f in task.features])
    ranges = task.ranges() if ranges is None else np.asarray(ranges, dtype=float)
    ranges = np.array([len(f.levels) - 1 if f.is_ordinal else r for f, r in zip(task.features, ranges, strict=True)], dtype=float)
    graded = continuous | np.array([f.is_ordinal for f in task.features])
    safe_range = np.where(ranges > 0, ranges, np.inf)
    codes = encode_rows(task, task.frame.loc[list(rows)])
    q = encode_rows(task, task.frame.loc[[query]])[0]
    diff = np.abs(codes - q)
    per_feature = np.where(graded, diff / safe_range, diff != 0)
    return per_feature.sum(axis=1)


def select_region(
    task: TaskSpec,
    query: int,
    candidates: Rows,
    *,
    k: int = 4,
    where: str | Mapping | None = None,
    ranges: np.ndarray | None = None,
    seed: int = 0,
) -> tuple[list[int], list[float], dict | None, int, dict | None]:
    """The query and its k nearest candidates that meet the criterion.

    Hamming distances tie often (categorical data has few distinct distances). Candidates
    tied at the k-th distance are drawn at random with ``seed`` (and the query), never by
    row id or file order; the draw does not depend on the order of ``candidates``.

    Returns
    -------
    members : list of int, length <= k + 1 (the query first)
    distances : list of float, same length
    criterion : dict or None
    n_candidates : int, how many candidates met the criterion (query excluded)
    ties : dict or None
        ``{"distance": d, "candidates": c, "drawn": n}`` when c > n candidates lie at the k-th
        distance d and n of them were drawn at random; None when no draw was needed.
    """
    k = check("k", k)
    criterion = parse_criterion(task, where)
    candidates = np.asarray(list(candidates), dtype=int)
    if query not in task.frame.index:
        raise ConfigError(f"Row {query} is not in the data (it may have been dropped for missing values).")
    if query not in set(candidates.tolist()):
        raise ConfigError(
            f"Row {query} is not a factual with the undesirable outcome predicted; pick one of the factual rows."
        )
    if criterion is not None:
        column = task.frame[criterion["feature"]]
        if column.loc[query] != criterion["value"]:
            raise ConfigError(
                f"Row {query} has {criterion['feature']} = {column.loc[query]!r}, not {criterion['value']!r}; "
                "pick a query that meets the criterion."
            )
        candidates = candidates[column.loc[candidates].to_numpy() == criterion["value"]]
    others = np.unique(candidates[candidates != query])  # sorted: the draw below ignores the input order
    # Rounded so that distances equal up to float noise tie.
    distances = np.round(hamming_distances(task, query, others, ranges=ranges), 12)
    draw = np.random.default_rng([int(seed), int(query)]).permutation(len(others))
    order = np.lexsort((draw, distances))[:k]
    ties = None
    if 0 < len(order) < len(others):
        boundary = distances[order[-1]]
        tied, drawn = int((distances == boundary).sum()), int((distances[order] == boundary).sum())
        if tied > drawn:
            ties = {"distance": float(boundary), "candidates": tied, "drawn": drawn}
    members = [int(query)] + [int(r) for r in others[order]]
    return members, [0.0] + [float(d) for d in distances[order]], criterion, int(len(others)), ties


def mode_shift(task: TaskSpec, cfset: CounterfactualSet, *, bins: int = 4) -> list[dict]:
    """The mode-shift table (Eq. 5) for the factuals of a region and their valid counterfactuals.

    For each feature: the factuals' mode, its share p_orig among the factuals, its share
    p_cf among the counterfactuals, δ = (p_cf - p_orig) / p_orig, and the counterfactuals'
    own mode. Continuous features are first cut into ``bins`` quantile bins of the data,
    so "mode" means the most common bin. An ordinal feature also gets ``rank_shift``: the
    counterfactuals' mean level minus the factuals' along its order (positive = up the
    order), which a mode alone cannot show; NaN for other features.
    """
    valid_cfs = cfset.counterfactuals[cfset.valid]
    factuals = decode_rows(task, cfset.factuals)
    cf_frame = decode_rows(task, cfset.counterfactuals[cfset.valid])
    rows = []
    for j, f in enumerate(task.features):
        fact_col, cf_col = factuals[f.name], cf_frame[f.name]
        rank_shift = float("nan")
        if f.is_ordinal and len(valid_cfs):
            rank_shift = float(valid_cfs[:, j].mean() - cfset.factuals[:, j].mean())
        if f.is_continuous:
            edges = np.unique(np.quantile(task.frame[f.name].astype(float), np.linspace(0, 1, bins + 1)))
            if len(edges) < 2:  # a constant feature is one bin
                edges = np.array([edges[0], edges[0]])
            labels = [f"{format_number(a)} to {format_number(b)}" for a, b in zip(edges[:-1], edges[1:])]

            def to_bin(col, edges=edges, labels=labels):
                idx = np.clip(np.searchsorted(edges, col.astype(float), side="right") - 1, 0, len(labels) - 1)
                return pd.Series(np.asarray(labels, dtype=object)[idx], index=col.index)

            fact_col, cf_col = to_bin(fact_col), to_bin(cf_col) if len(cf_col) else cf_col
        counts = fact_col.value_counts()
        # The most common value; ties go to the value first in the feature's level order.
        top = counts[counts == counts.max()].index
        mode = sorted(top, key=lambda v: (f.categories.index(v) if f.categories else 0, str(v)))[0]
        p_orig = float((fact_col == mode).mean())
        p_cf = float((cf_col == mode).mean()) if len(cf_col) else float("nan")
        cf_mode = cf_col.value_counts().idxmax() if len(cf_col) else None
        rows.append(
            {
                "name": f.name,
                "mode": str(mode),
                "p_orig": p_orig,
                "p_cf": p_cf,
                "delta": (p_cf - p_orig) / p_orig,
                "cf_mode": None if cf_mode is None else str(cf_mode),
                "rank_shift": rank_shift,
            }
        )
    return rows


def compare_with_global(regional: np.ndarray, global_: np.ndarray, include: np.ndarray) -> tuple[float, tuple, tuple]:
    """Pearson r between regional and global F (Eq. 6) and each feature's quadrant (Fig. 4).

    Only features in ``include`` (the mutable ones: an immutable feature sits at 0 in
    both and would inflate r) take part. A feature is "high" on an axis when it is above
    that axis' mean over the included features, the same centre as in r's formula.

    Returns
    -------
    r : float (NaN when either side is constant or fewer than three features take part)
    quadrants : tuple of "A" | "B" | "C" | "D" | None, length n_features
    thresholds : (global mean, regional mean)
    """
    include = np.asarray(include, dtype=bool) & ~np.isnan(regional) & ~np.isnan(global_)
    reg, glo = regional[include], global_[include]
    # With two features r is always ±1: it says nothing, so it needs three or more.
    if include.sum() >= 3 and np.ptp(reg) > 0 and np.ptp(glo) > 0:
        r = float(np.corrcoef(reg, glo)[0, 1])
    else:
        r = float("nan")
    g_mid = float(glo.mean()) if include.any() else float("nan")
    r_mid = float(reg.mean()) if include.any() else float("nan")
    quadrants: list[str | None] = []
    for j in range(len(regional)):
        if not include[j]:
            quadrants.append(None)
            continue
        high_regional, high_global = regional[j] > r_mid, global_[j] > g_mid
        quadrants.append({(True, False): "A", (False, False): "B", (True, True): "C", (False, True): "D"}[(high_regional, high_global)])
    return r, tuple(quadrants), (g_mid, r_mid)


def regional_importance(
    cfset: CounterfactualSet,
    task: TaskSpec,
    global_result: FlexResult,
    *,
    query: int,
    members: Rows,
    distances: Numbers,
    criterion: dict | None = None,
    candidates: int = 0,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    ranges: np.ndarray | None = None,
    necessary: np.ndarray | None = None,
    generator: dict | None = None,
    model: dict | None = None,
    config: dict | None = None,
    neighbour_ties: dict | None = None,
) -> RegionalResult:
    """Regional FLEX over the members' counterfactuals, compared with a global result.

    ``necessary`` (shape (n_queries, n_cf, n_features), aligned with ``cfset``) is passed
    on to :func:`flex_importance` for the members.
    ``neighbour_ties`` is :func:`select_region`'s report of a random draw among tied neighbours.
    ``pearson_r_interval`` is :func:`pearson_interval`: r's 95% interval from the region's
    sampling error, the global F held as given; NaN where r is undefined.
    """
    region_set = cfset.subset(members)
    config = {**(config or {}), "pearson_r_interval": PEARSON_INTERVAL_CONFIG}
    if necessary is not None:
        necessary = necessary[cfset.positions_of(members)]
    importance = flex_importance(
        region_set,
        task,
        tau=tau,
        ranges=ranges,
        level="regional",
        necessary=necessary,
        generator=generator,
        model=model,
        config=config,
    )
    include = ~np.array(importance.immutable)
    r, quadrants, thresholds = compare_with_global(importance.frequency_mean, global_result.frequency_mean, include)
    interval = pearson_interval(importance.frequency_mean, importance.n_factuals_used, global_result.frequency_mean, include)
    return RegionalResult(
        importance=importance,
        query=int(query),
        members=tuple(int(m) for m in members),
        distances=tuple(float(d) for d in distances),
        criterion=criterion,
        mode_shift=tuple(mode_shift(task, region_set)),
        global_frequency=global_result.frequency_mean.copy(),
        pearson_r=r,
        pearson_r_interval=interval,
        quadrants=quadrants,
        quadrant_thresholds=thresholds,
        candidates=candidates,
        neighbour_ties=neighbour_ties,
    )

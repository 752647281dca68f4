"""A region's FLEX: its members (Hamming neighbours of a query, or the factuals meeting a rule), their F set
against the global F (r, quadrants), the mode shift, and the runs over a store.

The runs here have no ``generators`` option. :func:`flex_core.importance.run_regional` and
``run_rule_region`` (in :mod:`._runs`) add it through :mod:`._sensitivity`, which reruns a region with these:
the imports go one way (``_runs`` -> ``_sensitivity`` -> here -> :mod:`._flex`), with no cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from .._errors import ConfigError
from .._format import format_number, plural
from .._results import FlexResult, RegionalResult
from .._typing import Numbers, Rows
from .._uncertainty import INTERVAL_LEVEL, pearson_interval
from ..counterfactuals import CounterfactualSet, CounterfactualStore, decode_rows, encode_rows
from ..counterfactuals._registry import generator_key
from ..counterfactuals._set import Progress
from ..data import TaskSpec
from ..limits import check
from ..models._fit import model_summary
from ._flex import DEFAULT_TAU, flex_importance, run_config, store_notes, with_notes
from ._necessity import necessity_sufficiency, seed_spread, with_necessity_sufficiency
from ._rules import check_rule, rule_mask, rule_text

__all__ = [
    "PEARSON_INTERVAL_CONFIG", "parse_criterion", "hamming_distances", "select_region", "mode_shift", "compare_with_global",
    "regional_importance", "select_members", "run_regional", "run_rule_region", "with_member_extras",
]


PEARSON_INTERVAL_CONFIG = {
    "method": "linearised, variance bounded for values in [0, 1]",
    "level": INTERVAL_LEVEL,
    "over": "the region's factuals; the global F held as given",
}


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


# -- runs over a store ------------------------------------------------------------------------
def select_members(store: CounterfactualStore, query: int, *, k: int, where: str | Mapping | None):
    """:func:`~flex_core.importance.select_region` among the store's factuals (members, distances, criterion,
    candidates, ties): the one place a Hamming region's members are chosen."""
    return select_region(store.task, query, store.factual_rows, k=k, where=where, ranges=store.ranges, seed=store.seed)


def run_regional(
    store: CounterfactualStore,
    global_result: FlexResult,
    *,
    query: int,
    k: int = 4,
    where: str | Mapping | None = None,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    sufficiency: bool = False,
    repeats: int = 1,
    progress: Progress | None = None,
) -> RegionalResult:
    """Regional FLEX around a query factual, compared with ``global_result``.

    ``sufficiency`` and ``repeats`` work as in :func:`flex_core.importance.run_global`, over the region's members.
    """
    ranges = store.ranges
    members, distances, criterion, n_candidates, ties = select_members(store, query, k=k, where=where)
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
        necessary=store.necessary_changes(cfset),
        generator=generator_key(store.generator),
        model=model_summary(store.model),
        config=run_config(store, query=int(query), k=k, where=criterion),
        neighbour_ties=ties,
    )
    importance = with_member_extras(result.importance, store, tau=tau, sufficiency=sufficiency, repeats=repeats)
    notes = store_notes(store)
    if len(members) - 1 < k:
        found = len(members) - 1
        notes.append(f"Only {plural(found, 'neighbour')} {'meets' if found == 1 else 'meet'} the criterion, fewer than "
                     f"the {k} asked for.")
    importance = with_notes(importance, notes)
    result = replace(result, importance=importance)
    return result


def run_rule_region(
    store: CounterfactualStore,
    global_result: FlexResult,
    *,
    rule,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    sufficiency: bool = False,
    repeats: int = 1,
    progress: Progress | None = None,
) -> RegionalResult:
    """Regional FLEX over the factuals of ``global_result`` that meet ``rule``, compared with it.

    The members are drawn from the global result's factuals (the sample ``explain_global`` took), so
    a region found by :func:`~flex_core.regions.find_regions` with ``n_factuals`` opens with the same
    members when the global result has the same ``n_factuals``. The result has no query, no
    distances and no criterion; ``rule`` and ``rule_text`` say what defines it. ``sufficiency`` and
    ``repeats`` work as in :func:`flex_core.importance.run_regional`.
    """
    task = store.task
    rule = check_rule(task, rule)
    text = rule_text(rule, features=task.features)
    sampled = np.asarray(global_result.query_index, dtype=int)
    members = sampled[rule_mask(task, rule, sampled)]
    if len(members) == 0:
        anywhere = int(rule_mask(task, rule, store.factual_rows).sum())
        where = (
            f"{anywhere:,} of all {len(store.factual_rows):,} cases to explain do; explain more cases (n_factuals) to "
            "include them" if anywhere else "no case to explain in the data does; widen the rule"
        )
        raise ConfigError(f"None of the {len(sampled):,} sampled cases meets {text} ({where}).")
    cfset = store.ensure(members, progress=progress)
    result = regional_importance(
        cfset,
        task,
        global_result,
        query=int(members[0]),
        members=members,
        distances=np.zeros(len(members)),
        tau=tau,
        ranges=store.ranges,
        necessary=store.necessary_changes(cfset),
        generator=generator_key(store.generator),
        model=model_summary(store.model),
        config=run_config(store, rule=[dict(c) for c in rule], rule_text=text, n_factuals=len(sampled)),
    )
    importance = with_member_extras(result.importance, store, tau=tau, sufficiency=sufficiency, repeats=repeats)
    notes = store_notes(store)
    if len(members) < 5:
        notes.append(f"Only {plural(len(members), 'sampled case')} {'meets' if len(members) == 1 else 'meet'} {text}: "
                     "the region's shares rest on very few cases.")
    result = replace(result, importance=with_notes(importance, notes), query=None, distances=(), rule=rule, rule_text=text)
    return result


def with_member_extras(result: FlexResult, store: CounterfactualStore, *, tau, sufficiency: bool, repeats: int) -> FlexResult:
    """Add the on-request scores: necessity and sufficiency, and the spread of F across seeds."""
    if sufficiency:
        result = with_necessity_sufficiency(result, necessity_sufficiency(store, result.query_index))
    if repeats != 1:
        spread = seed_spread(store, result.query_index, repeats=repeats, tau=tau)
        seeds = [store.seed + r for r in range(repeats)]
        result = replace(result, frequency_seed_sd=spread, config={**result.config, "repeats": {"n": repeats, "seeds": seeds}})
    return result

"""Does a finding depend on the counterfactual generator? The same factuals, rerun with other generators.

FLEX measures the generator as much as the model: DiCE random counts passengers that the default
generator reverts, and on the paper's region 2 (the same five members) r was 0.85 with DiCE random
and 0.22 with batch. :func:`generator_sensitivity` reruns the factuals of a result with each other
generator (its own default refinement, every other setting the store's) and reports, per feature,
each generator's F_j with its 95% interval and whether the intervals overlap; for a region, each
generator's r (region against the global F *of the same generator*) with its interval.

With few factuals the intervals are wide, and "the intervals overlap" says nothing: with five
factuals r's interval is [-1, 1], and r = 0.23 against 0.94 read as the same verdict. So each
comparison gets a verdict (:func:`verdict`):

- **depends**: the intervals separate (some pair shares no point): the finding depends on the generator;
- **cannot tell**: they overlap, but some interval spans most of its range: wider than half of it
  (:data:`CANNOT_TELL_SHARE`: for F_j in [0, 1] wider than 0.5, for r in [-1, 1] wider than 1);
- **same**: they overlap and every interval is narrower than that.

Rank changes are reported too (:func:`rank_changes`): per generator against the store's own, the
overlap of the top-k features by F (k = 3, or fewer mutable features) and Spearman's rank
correlation of F over the mutable features.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._contract import json_number
from .._errors import ConfigError
from .._results import FlexResult, GeneratorSensitivity, RegionalResult
from ..counterfactuals import CounterfactualStore, make_generator
from ._flex import DEFAULT_TAU, flex_importance
from ._region_runs import run_regional, run_rule_region

__all__ = ["generator_sensitivity", "verdict", "rank_changes", "CANNOT_TELL_SHARE", "TOP_K"]

#: An interval wider than this share of its quantity's range (F: 1, r: 2) cannot tell generators apart.
CANNOT_TELL_SHARE = 0.5
#: The top features compared across generators.
TOP_K = 3
#: The verdicts' rule, as the JSON states it.
VERDICT_RULE = ("depends: the intervals separate; cannot tell: they overlap but one is wider than half its range "
                "(F: 0.5, r: 1); same: they overlap and none is that wide")


def generator_sensitivity(
    store: CounterfactualStore,
    global_result: FlexResult,
    generators: Sequence[str],
    *,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    regional: RegionalResult | None = None,
) -> GeneratorSensitivity:
    """Each generator's F_j (and r for ``regional``) over the same factuals, as plain data (a dict with the result contract).

    Parameters
    ----------
    store : CounterfactualStore
        The store ``global_result`` (and ``regional``) came from; its generator is the first compared.
    global_result : FlexResult
        Its factuals are rerun.
    generators : sequence of str
        Registered generator names; the store's own is added first if missing.
    regional : RegionalResult, optional
        Its members are rerun too, and compared with each generator's own global F.

    Returns
    -------
    GeneratorSensitivity, a dict with ``generators`` (names, the store's first), ``features`` (per
    mutable feature: ``name``, ``frequency`` and ``frequency_ci`` per generator, ``intervals_overlap``),
    ``differ`` (the features whose intervals do not all overlap), ``refine`` per generator, ``config``
    (τ, the factuals, and the region's query, members and criterion), and for a region ``regional``:
    the same per feature over the members, plus ``r`` and ``r_interval`` per generator and
    ``r_intervals_overlap``.
    """
    own = store.generator.name
    names = list(dict.fromkeys([own, *generators]))
    if len(names) < 2:
        raise ConfigError(f"Name at least one generator other than {own!r} to compare with.")
    rows = [int(r) for r in global_result.query_index]
    globals_, refine = {own: global_result}, {own: store.refine}
    regionals: dict[str, RegionalResult] = {} if regional is None else {own: regional}
    for name in names[1:]:
        other = store.with_generator(_same_validity(make_generator(name), store, name))
        refine[name] = other.refine
        globals_[name] = flex_importance(other.ensure(rows), store.task, tau=tau, ranges=store.ranges)
        if regional is not None and regional.rule is not None:

            regionals[name] = run_rule_region(other, globals_[name], rule=regional.rule, tau=tau)
        elif regional is not None:
            assert regional.query is not None  # a region without a rule is a query's Hamming neighbourhood
            regionals[name] = run_regional(other, globals_[name], query=regional.query, k=len(regional.members) - 1,
                                           where=regional.criterion, tau=tau)
    out = GeneratorSensitivity({"generators": names, "refine": refine, **_compare(globals_, names),
                                "ranks": rank_changes(globals_, names), "verdict_rule": VERDICT_RULE})
    config: dict[str, Any] = {"tau": dict(tau) if isinstance(tau, Mapping) else tau, "factuals": rows}
    if regional is not None:
        config["region"] = {"query": None if regional.query is None else int(regional.query),
                            "members": [int(m) for m in regional.members], "criterion": regional.criterion}
        if regional.rule is not None:
            config["region"]["rule"] = [dict(c) for c in regional.rule]
        out["regional"] = {
            **_compare({n: r.importance for n, r in regionals.items()}, names),
            "r": {n: json_number(regionals[n].pearson_r) for n in names},
            "r_interval": {n: [json_number(v) for v in regionals[n].pearson_r_interval] for n in names},
            "r_intervals_overlap": _overlap(np.array([regionals[n].pearson_r_interval for n in names], dtype=float)),
            "r_verdict": verdict(np.array([regionals[n].pearson_r_interval for n in names], dtype=float), span=2.0),
        }
    out["config"] = config
    return out


def _same_validity(generator, store: CounterfactualStore, name: str):
    """The generator with the store's validity rule, when it takes one: the comparison varies only the generator."""
    if not hasattr(generator, "margin"):
        return generator
    return make_generator(name, margin=store.rule.margin, radius=store.rule.radius)


def _compare(results: Mapping[str, FlexResult], names: list[str]) -> dict:
    first = results[names[0]]
    features, differ = [], []
    for j, name in enumerate(first.feature_names):
        if first.immutable[j]:
            continue
        intervals = np.array([_interval(results[n], j) for n in names])
        overlap = _overlap(intervals)
        features.append({
            "name": name,
            "label": first.display_names[j],
            "frequency": {n: json_number(results[n].frequency_mean[j]) for n in names},
            "frequency_ci": {n: [json_number(v) for v in intervals[i]] for i, n in enumerate(names)},
            "intervals_overlap": overlap,
            "verdict": verdict(intervals, span=1.0),
        })
        if overlap is False:
            differ.append(name)
    return {"features": features, "differ": differ}


def _interval(result: FlexResult, j: int) -> np.ndarray:
    if result.frequency_ci is None:
        return np.array([np.nan, np.nan])
    return np.asarray(result.frequency_ci[j], dtype=float)


def _overlap(intervals: np.ndarray) -> bool | None:
    """Whether every interval shares a point with every other (None when any is undefined)."""
    if np.isnan(intervals).any():
        return None
    return bool(intervals[:, 0].max() <= intervals[:, 1].min())


def verdict(intervals: np.ndarray, *, span: float) -> str | None:
    """"depends", "cannot tell" or "same" for intervals (n, 2) of a quantity whose range is ``span`` wide (module
    docstring); None when an interval is undefined."""
    intervals = np.asarray(intervals, dtype=float)
    overlap = _overlap(intervals)
    if overlap is None:
        return None
    if not overlap:
        return "depends"
    if ((intervals[:, 1] - intervals[:, 0]) > CANNOT_TELL_SHARE * span).any():
        return "cannot tell"
    return "same"


def rank_changes(results: Mapping[str, FlexResult], names: list[str]) -> dict:
    """Per generator against ``names[0]``: its top-k mutable features by F, their overlap share and Spearman's rho.

    Ties in F share a rank (Spearman on average ranks); the top k are taken by F, ties broken by feature order.
    """
    from scipy.stats import spearmanr

    first = results[names[0]]
    mutable = [j for j in range(len(first.feature_names)) if not first.immutable[j]]
    k = min(TOP_K, len(mutable))
    top = {}
    for n in names:
        f = np.nan_to_num(np.asarray(results[n].frequency_mean, dtype=float)[mutable], nan=-1.0)
        top[n] = [first.feature_names[mutable[i]] for i in np.argsort(-f, kind="stable")[:k]]
    spearman = {}
    for n in names[1:]:
        a = np.asarray(first.frequency_mean, dtype=float)[mutable]
        b = np.asarray(results[n].frequency_mean, dtype=float)[mutable]
        constant = len(mutable) < 2 or np.nanstd(a) == 0 or np.nanstd(b) == 0
        spearman[n] = None if constant else json_number(spearmanr(a, b, nan_policy="omit").statistic)
    return {
        "k": k,
        "top": top,
        "top_overlap": {n: len(set(top[n]) & set(top[names[0]])) / k if k else None for n in names[1:]},
        "top_feature_same": {n: bool(top[n][:1] == top[names[0]][:1]) for n in names[1:]},
        "spearman": spearman,
    }

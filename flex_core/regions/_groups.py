"""What the model asks of each group: flip share, cost of the minimal change and F, per value of one feature.

The same pool as region discovery (the ``n_factuals`` factuals ``explain_global`` samples, their
stored counterfactuals), split by one feature: by level for a categorical or ordinal feature, by
quantile bin of the pool for a number (edges stated, both included). Per group:

* ``flip_share``: the share of its factuals with at least one valid counterfactual under the
  task's constraints, with its 95% Wilson interval (continuity-corrected, as F's);
* ``cost_median``: the median over its factuals of the distance to their nearest valid
  counterfactual, with a 95% percentile-bootstrap interval. The distance is the one regions use
  for neighbours (:func:`flex_core.importance._region_runs.hamming_distances`): the sum over features of
  |Δ| / range for a number (the training rows' range), |Δ levels| / (levels - 1) for an ordinal
  feature, and 1 per changed categorical feature;
* F_j over its factuals with the 95% Wilson interval of each.

The verdict names a difference only when the 95% intervals of the two groups compared do not
overlap; the difference in cost comes with the bootstrap interval of the difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._contract import Result, json_floats, json_number
from .._errors import ConfigError
from .._format import format_share
from .._uncertainty import INTERVAL_LEVEL, frequency_intervals, wilson_interval
from ..counterfactuals import CounterfactualSet, CounterfactualStore
from ..counterfactuals._set import Progress
from ..data import TaskSpec
from ..importance import DEFAULT_TAU
from ..importance._rules import condition_text
from ..limits import check_each
from ._pool import build_pool, number_value, quantile_bins

__all__ = ["Group", "GroupsResult", "compare_groups", "minimal_costs", "COST_DISTANCE", "REPLICATION"]

#: How a difference between groups is checked under refits of the model (``replicate=K``).
REPLICATION = ("per refit of the model (bootstrap rows, another seed): the same groups of the factuals the refit also "
               "rejects, with counterfactuals under the refit; replicated where the same difference is named there")

COST_DISTANCE = (
    "distance from a factual to its nearest valid counterfactual: the sum over features of |Δ|/range for numbers "
    "(the training rows' range), |Δ levels|/(levels - 1) for ordinal features and 1 per changed categorical feature"
)
BOOTSTRAP = 1000


@dataclass(frozen=True, eq=False)
class Group:
    """One value (or bin) of the grouping feature.

    Attributes
    ----------
    value : str
        The level, or the bin as "low–high" (both included).
    rule : tuple of one {"feature", "op", "value"}
        The group as a rule (open it with ``explain_region(rule=...)``).
    factuals, with_counterfactual : int
        Its factuals in the pool, and how many of them have a valid counterfactual.
    flip_share, flip_share_interval : float, (low, high)
    cost_median, cost_interval : float, (low, high)
        NaN when fewer than ``min_size`` factuals have a counterfactual (no interval is honest then).
    frequency, frequency_ci : ndarray of shape (n_features,) and (n_features, 2)
        F_j over its factuals with a counterfactual, and its 95% Wilson interval.
    members : tuple of int
    """

    value: str
    rule: tuple[dict, ...]
    factuals: int
    with_counterfactual: int
    flip_share: float
    flip_share_interval: tuple[float, float]
    cost_median: float
    cost_interval: tuple[float, float]
    frequency: np.ndarray
    frequency_ci: np.ndarray
    members: tuple[int, ...]

    def to_dict(self, names: Sequence[str], labels: Sequence[str]) -> dict:
        return {
            "value": self.value,
            "rule": [dict(c) for c in self.rule],
            "factuals": int(self.factuals),
            "with_counterfactual": int(self.with_counterfactual),
            "flip_share": json_number(self.flip_share),
            "flip_share_interval": [json_number(v) for v in self.flip_share_interval],
            "cost_median": json_number(self.cost_median),
            "cost_interval": [json_number(v) for v in self.cost_interval],
            "features": [
                {"name": name, "label": labels[j], "frequency": json_number(self.frequency[j]),
                 "frequency_ci": [json_number(v) for v in self.frequency_ci[j]]}
                for j, name in enumerate(names)
            ],
            "members": [int(m) for m in self.members],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Group:
        features = data["features"]
        return cls(
            value=data["value"],
            rule=tuple(dict(c) for c in data["rule"]),
            factuals=int(data["factuals"]),
            with_counterfactual=int(data.get("with_counterfactual", data["factuals"])),
            flip_share=json_floats([data["flip_share"]])[0],
            flip_share_interval=tuple(json_floats(data["flip_share_interval"])),
            cost_median=json_floats([data["cost_median"]])[0],
            cost_interval=tuple(json_floats(data["cost_interval"])),
            frequency=json_floats(f["frequency"] for f in features),
            frequency_ci=np.array([json_floats(f["frequency_ci"]) for f in features]).reshape(len(features), 2),
            members=tuple(int(m) for m in data.get("members", ())),
        )


@dataclass(frozen=True, eq=False)
class GroupsResult(Result):
    """The groups of one feature side by side, with a verdict that names only separated differences.

    ``verdict`` is plain sentences; ``differences`` the same as data (``measure``: "cost_median",
    "flip_share" or "frequency"; ``higher`` and ``lower`` group values; their estimates and
    intervals; for cost the difference and its interval; for frequency the ``feature``).
    """

    by: str
    by_label: str
    groups: tuple[Group, ...]
    feature_names: tuple[str, ...]
    display_names: tuple[str, ...]
    immutable: tuple[bool, ...]
    verdict: tuple[str, ...]
    differences: tuple[dict, ...]
    generator: dict = field(default_factory=dict)
    model: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    level: str = "groups"
    versions: dict | None = field(default=None, repr=False)

    kind = "groups"

    def group(self, value: str) -> Group:
        for g in self.groups:
            if g.value == str(value):
                return g
        raise ConfigError(f"No group {value!r}; the groups are: {', '.join(g.value for g in self.groups)}.")

    def to_frame(self) -> pd.DataFrame:
        """One row per group: counts, flip share and cost with their intervals."""
        return pd.DataFrame(
            [
                {
                    "value": g.value, "factuals": g.factuals, "with_counterfactual": g.with_counterfactual,
                    "flip_share": g.flip_share, "flip_share_low": g.flip_share_interval[0],
                    "flip_share_high": g.flip_share_interval[1], "cost_median": g.cost_median,
                    "cost_low": g.cost_interval[0], "cost_high": g.cost_interval[1],
                }
                for g in self.groups
            ],
            columns=["value", "factuals", "with_counterfactual", "flip_share", "flip_share_low", "flip_share_high",
                     "cost_median", "cost_low", "cost_high"],
        )

    def frequency_frame(self) -> pd.DataFrame:
        """Long form: one row per (group, feature) with F and its interval."""
        rows = [
            {"value": g.value, "feature": name, "label": self.display_names[j], "immutable": self.immutable[j],
             "frequency": g.frequency[j], "frequency_low": g.frequency_ci[j, 0], "frequency_high": g.frequency_ci[j, 1]}
            for g in self.groups for j, name in enumerate(self.feature_names)
        ]
        return pd.DataFrame(rows, columns=["value", "feature", "label", "immutable", "frequency", "frequency_low", "frequency_high"])

    def _body(self) -> dict:
        """The CLI's JSON (``level: "groups"``); :meth:`from_dict` reads it back."""
        return {
            "level": self.level,
            "by": self.by,
            "by_label": self.by_label,
            "groups": [g.to_dict(self.feature_names, self.display_names) for g in self.groups],
            "verdict": list(self.verdict),
            "differences": [dict(d) for d in self.differences],
            "immutable": [name for name, fixed in zip(self.feature_names, self.immutable) if fixed],
            "generator": self.generator,
            "model": self.model,
            "config": self.config,
            "notes": list(self.notes),
        }

    @classmethod
    def _from_body(cls, data: Mapping) -> GroupsResult:
        groups = tuple(Group.from_dict(g) for g in data["groups"])
        features = data["groups"][0]["features"] if data["groups"] else []
        fixed = set(data.get("immutable", ()))
        return cls(
            by=data["by"],
            by_label=data.get("by_label", data["by"]),
            groups=groups,
            feature_names=tuple(f["name"] for f in features),
            display_names=tuple(f.get("label", f["name"]) for f in features),
            immutable=tuple(f["name"] in fixed for f in features),
            verdict=tuple(data.get("verdict", ())),
            differences=tuple(dict(d) for d in data.get("differences", ())),
            generator=dict(data.get("generator", {})),
            model=dict(data.get("model", {})),
            config=dict(data.get("config", {})),
            notes=tuple(data.get("notes", ())),
            level=data.get("level", "groups"),
            versions=data.get("versions"),
        )


def _pair(bounds) -> tuple[float, float]:
    """An interval's (low, high) as plain floats."""
    low, high = bounds
    return float(low), float(high)


def minimal_costs(cfset: CounterfactualSet, task: TaskSpec, ranges: np.ndarray) -> np.ndarray:
    """Per factual, the distance to its nearest valid counterfactual (:data:`COST_DISTANCE`); NaN without one."""
    ordinal = np.array([f.is_ordinal for f in task.features])
    continuous = np.array([f.is_continuous for f in task.features])
    scale = np.array([len(f.levels) - 1 if f.is_ordinal else r for f, r in zip(task.features, ranges)], dtype=float)
    graded = continuous | ordinal
    safe = np.where(scale > 0, scale, np.inf)
    diff = np.abs(cfset.counterfactuals - cfset.factuals[:, None, :])
    with np.errstate(invalid="ignore"):
        per_feature = np.where(graded, diff / safe, diff != 0)
    distance = np.where(cfset.valid, np.nansum(per_feature, axis=2), np.inf)
    nearest = distance.min(axis=1) if distance.size else np.full(cfset.n_queries, np.inf)
    return np.where(np.isfinite(nearest), nearest, np.nan)


def compare_groups(
    store: CounterfactualStore,
    by: str,
    *,
    bins: int = 4,
    n_factuals: int = 1000,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    min_size: int = 10,
    n_boot: int = BOOTSTRAP,
    replicate: int = 0,
    labelled: bool = True,
    progress: Progress | None = None,
) -> GroupsResult:
    """Flip share, cost of the minimal change and F per value (or quantile bin) of ``by``.

    See the module's notes. Groups with fewer than ``min_size`` factuals with a counterfactual get
    no cost interval and take no part in the verdict on cost. ``replicate=K`` refits the model K
    times and marks each difference with ``replicated`` (per refit: named there too, same groups).
    """
    task = store.task
    if by not in task.feature_names:
        raise ConfigError(f"Unknown feature {by!r} to group by; the features are: {', '.join(task.feature_names)}.")
    check_each(bins=bins, n_factuals=n_factuals)  # before the pool is generated
    if int(min_size) < 2:
        raise ConfigError("min_size must be at least 2.")
    if int(n_boot) < 100:
        raise ConfigError("n_boot must be at least 100.")
    feature = task.feature(by)
    settings = {
        "by": by, "bins": bins if feature.is_continuous else None, "cost": COST_DISTANCE,
        "cost_interval": f"{INTERVAL_LEVEL:.0%} percentile bootstrap of the median, {n_boot} resamples",
        "flip_share_interval": f"{INTERVAL_LEVEL:.0%} Wilson score interval, continuity-corrected",
        "verdict": "a difference is named only when the two groups' 95% intervals do not overlap",
        "min_size": min_size,
    }
    if replicate:
        settings["replication"] = REPLICATION
    pool = build_pool(store, n_factuals=n_factuals, tau=tau, progress=progress, groups=settings)
    result = pool.result
    rows = pool.rows
    splits = [(condition, mask, label) for condition, mask, label in _split(task, feature, rows, bins)]
    groups = _groups(store, pool.cfset, result.local_frequencies, rows, splits, min_size=min_size, n_boot=n_boot)
    verdict, differences = _verdict(feature, groups, minimal_costs(pool.cfset, task, store.ranges), rows, result,
                                    n_boot=n_boot, seed=store.seed, min_size=min_size)
    if replicate:
        differences = _replicated(store, differences, rows, splits, feature, replicate, tau=tau,
                                  labelled=labelled, min_size=min_size, n_boot=n_boot)
        unreplicated = sum(not all(d["replicated"]) for d in differences)
        if unreplicated:
            verdict = [*verdict, (f"1 of these differences does not hold under all {replicate} refits of the model: "
                                  "it depends on this fit." if unreplicated == 1 else
                                  f"{unreplicated} of these differences do not hold under all {replicate} refits of "
                                  "the model: they depend on this fit.")]
    return GroupsResult(
        by=by,
        by_label=feature.label,
        groups=tuple(groups),
        feature_names=tuple(result.feature_names),
        display_names=tuple(result.display_names),
        immutable=tuple(result.immutable),
        verdict=tuple(verdict),
        differences=tuple(differences),
        generator=dict(result.generator),
        model=dict(result.model),
        config=dict(result.config),
        notes=pool.notes,
    )


def _groups(store: CounterfactualStore, cfset: CounterfactualSet, local: np.ndarray, rows: np.ndarray, splits, *,
            min_size: int, n_boot: int) -> list[Group]:
    """One Group per (condition, mask over ``rows``, label) of ``splits``, from a pool's set and f_j(i)."""
    costs = minimal_costs(cfset, store.task, store.ranges)
    fixed = np.array([f.immutable for f in store.task.features], dtype=bool)
    groups = []
    for index, (condition, mask, label) in enumerate(splits):
        has = ~np.isnan(local[mask]).all(axis=1)
        n, found = int(mask.sum()), int(has.sum())
        share = found / n if n else float("nan")
        frequency, ci = _frequencies(local[mask][has], fixed)
        group_costs = costs[mask][has]
        median, interval = float("nan"), (float("nan"), float("nan"))
        if found:
            median = float(np.median(group_costs))
        if found >= min_size:
            draws = _bootstrap_medians(group_costs, n_boot, seed=(store.seed, index))
            low, high = np.percentile(draws, [2.5, 97.5])
            interval = (float(low), float(high))
        groups.append(Group(
            value=label, rule=(condition,), factuals=n, with_counterfactual=found, flip_share=share,
            flip_share_interval=_pair(wilson_interval(share, n)) if n else (float("nan"), float("nan")),
            cost_median=median, cost_interval=interval, frequency=frequency, frequency_ci=ci,
            members=tuple(int(r) for r in rows[mask]),
        ))
    return groups


def _replicated(store: CounterfactualStore, differences: list[dict], rows: np.ndarray, splits, by,
                k: int, *, tau, labelled: bool, min_size: int, n_boot: int) -> list[dict]:
    """``differences`` each with ``replicated``: per refit, whether the same difference (measure, feature, higher and
    lower group) is named over the same groups of the factuals the refit also rejects (:data:`REPLICATION`)."""
    from ..counterfactuals._spread import uses_cluster
    from ..importance import flex_importance
    from ..importance._retrain import refit_models
    from ..importance._rules import rule_mask

    task = store.task
    marks: list[list[bool]] = [[] for _ in differences]
    for refit in refit_models(task, store.model, k, labelled=labelled, cluster=uses_cluster(store.generator)):
        other = CounterfactualStore(task, refit, store.generator, n_cf=store.n_cf, seed=store.seed,
                                    features_to_vary=store.features_to_vary, permitted_range=store.permitted_range,
                                    refine=store.refine)
        kept = np.intersect1d(rows, other.factual_rows)
        cfset = other.ensure(kept)
        result = flex_importance(cfset, task, tau=tau, ranges=store.ranges)
        refit_splits = [(c, rule_mask(task, (c,), kept), label) for c, _, label in splits]
        groups = [g for g in _groups(other, cfset, result.local_frequencies, kept, refit_splits, min_size=min_size,
                                     n_boot=n_boot) if g.factuals]
        _, named = _verdict(by, groups, minimal_costs(cfset, task, store.ranges), kept, result, n_boot=n_boot,
                            seed=store.seed, min_size=min_size)
        keys = {_key(d) for d in named}
        for mark, difference in zip(marks, differences):
            mark.append(_key(difference) in keys)
    return [{**d, "replicated": mark} for d, mark in zip(differences, marks)]


def _key(difference: Mapping) -> tuple:
    return difference["measure"], difference.get("feature"), difference["higher"], difference["lower"]


def _split(task: TaskSpec, feature, rows: np.ndarray, bins: int):
    """(condition, mask over rows, label) per level present, or per quantile bin of a number."""
    column = task.frame.loc[rows, feature.name]
    if feature.is_continuous:
        for mask, low, high in quantile_bins(column.to_numpy(dtype=float), bins):
            low, high = number_value(low), number_value(high)
            condition = (
                {"feature": feature.name, "op": "=", "value": low} if low == high
                else {"feature": feature.name, "op": "between", "value": [low, high]}
            )
            yield condition, mask, feature.format_value(low) if low == high else feature.format_span(low, high, sep="–")
        return
    values = column.to_numpy(dtype=object)
    for level in feature.categories:
        mask = values == level
        if mask.any():
            yield {"feature": feature.name, "op": "=", "value": level}, mask, str(level)


def _frequencies(local: np.ndarray, fixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(local) == 0:
        return np.full(local.shape[1], np.nan), np.full((local.shape[1], 2), np.nan)
    ci, _ = frequency_intervals(local, fixed=fixed)
    return local.mean(axis=0), ci


def _bootstrap_medians(values: np.ndarray, n_boot: int, *, seed) -> np.ndarray:
    rng = np.random.default_rng([int(s) for s in seed])
    picks = rng.integers(0, len(values), size=(n_boot, len(values)))
    return np.median(values[picks], axis=1)


def _separated(a: Sequence[float], b: Sequence[float]) -> bool:
    """a lies wholly above b (both intervals defined)."""
    return not (np.isnan(a).any() or np.isnan(b).any()) and a[0] > b[1]


def _verdict(by, groups, costs, rows, result, *, n_boot, seed, min_size) -> tuple[list[str], list[dict]]:
    """Sentences and data on cost, flip share and F; a difference is named only when intervals separate."""
    if len(groups) < 2:
        return [f"There is only one group of {by.label} among the cases: nothing to compare."], []
    sentences: list[str] = []
    differences: list[dict] = []
    _cost_verdict(by, groups, costs, rows, sentences, differences, n_boot=n_boot, seed=seed, min_size=min_size)
    _share_verdict(by, groups, sentences, differences)
    _feature_verdict(by, groups, result, sentences, differences)
    return sentences, differences


def _name(group, by) -> str:
    return condition_text(group.rule[0], feature=by)


def _cost_verdict(by, groups, costs, rows, sentences, differences, *, n_boot, seed, min_size) -> None:
    """Cost of the minimal change: which group needs a clearly larger one (appended to ``sentences``, ``differences``)."""
    priced = [g for g in groups if not np.isnan(g.cost_interval[0])]
    if len(priced) < 2:
        sentences.append(f"Too few groups of {by.label} have {min_size} or more cases with a way out to compare costs.")
        return
    high = max(priced, key=lambda g: g.cost_median)
    low = min(priced, key=lambda g: g.cost_median)
    if _separated(high.cost_interval, low.cost_interval):
        i, j = groups.index(high), groups.index(low)
        draws = (_bootstrap_medians(_costs_of(high, costs, rows), n_boot, seed=(seed, i))
                 - _bootstrap_medians(_costs_of(low, costs, rows), n_boot, seed=(seed, j)))
        d_low, d_high = (float(v) for v in np.percentile(draws, [2.5, 97.5]))
        difference = high.cost_median - low.cost_median
        sentences.append(
            f"Cases with {_name(high, by)} need a larger change than those with {_name(low, by)}: "
            f"{difference:.2f} more features changed, a number counting the share of its range it moves (median "
            f"distance to the nearest way out {high.cost_median:.2f} against {low.cost_median:.2f}; "
            f"95% interval of the difference {d_low:.2f}–{d_high:.2f})."
        )
        differences.append({
            "measure": "cost_median", "higher": high.value, "lower": low.value,
            "higher_estimate": high.cost_median, "lower_estimate": low.cost_median,
            "higher_interval": list(high.cost_interval), "lower_interval": list(low.cost_interval),
            "difference": difference, "difference_interval": [d_low, d_high],
        })
        also = [g for g in priced if g not in (high, low) and _separated(g.cost_interval, low.cost_interval)]
        if also:
            sentences.append(
                f"Also clearly above {_name(low, by)}: "
                + "; ".join(f"{_name(g, by)} ({g.cost_median:.2f})" for g in also) + "."
            )
    elif high.cost_median == low.cost_median:
        sentences.append(f"Every group of {by.label} has the same median distance to its nearest way out, "
                         f"{low.cost_median:.2f}.")
    else:
        sentences.append(
            f"No group of {by.label} needs a clearly larger change: the 95% intervals of the median distance overlap "
            f"(from {low.cost_median:.2f} for {low.value} to {high.cost_median:.2f} for {high.value})."
        )


def _share_verdict(by, groups, sentences, differences) -> None:
    """Share with a way out: whether fewer factuals of one group have a counterfactual."""
    most = max(groups, key=lambda g: g.flip_share)
    least = min(groups, key=lambda g: g.flip_share)
    if _separated(most.flip_share_interval, least.flip_share_interval):
        sentences.append(
            f"Fewer cases with {_name(least, by)} have a way out under the constraints: "
            f"{format_share(least.flip_share)} (95% interval {_shares(least.flip_share_interval)}) against "
            f"{format_share(most.flip_share)} ({_shares(most.flip_share_interval)}) with {_name(most, by)}."
        )
        differences.append({
            "measure": "flip_share", "higher": most.value, "lower": least.value,
            "higher_estimate": most.flip_share, "lower_estimate": least.flip_share,
            "higher_interval": list(most.flip_share_interval), "lower_interval": list(least.flip_share_interval),
        })
    elif least.flip_share == 1.0:
        sentences.append("Every case in every group has a way out under the constraints.")
    else:
        sentences.append(f"The share with a way out does not differ clearly between groups of {by.label} (intervals overlap).")


def _feature_verdict(by, groups, result, sentences, differences) -> None:
    """The features each group must change: the largest separated gap in F between two groups."""
    best = None
    for j in range(len(result.feature_names)):
        if result.immutable[j]:
            continue
        defined = [g for g in groups if not np.isnan(g.frequency[j])]
        if len(defined) < 2:
            continue
        high = max(defined, key=lambda g: g.frequency[j])
        low = min(defined, key=lambda g: g.frequency[j])
        gap = high.frequency[j] - low.frequency[j]
        if _separated(high.frequency_ci[j], low.frequency_ci[j]) and (best is None or gap > best[0]):
            best = (gap, j, high, low)
    if best is None:
        sentences.append(f"The features that must change do not differ clearly between groups of {by.label} (every feature's intervals overlap).")
        return
    gap, j, high, low = best
    label = result.display_names[j]
    sentences.append(
        f"{label} must change more often with {_name(high, by)} than with {_name(low, by)}: in "
        f"{format_share(high.frequency[j])} of their ways out against {format_share(low.frequency[j])} (95% intervals "
        f"{_shares(high.frequency_ci[j])} and {_shares(low.frequency_ci[j])}); the largest separated gap."
    )
    differences.append({
        "measure": "frequency", "feature": result.feature_names[j], "higher": high.value, "lower": low.value,
        "higher_estimate": float(high.frequency[j]), "lower_estimate": float(low.frequency[j]),
        "higher_interval": [float(v) for v in high.frequency_ci[j]], "lower_interval": [float(v) for v in low.frequency_ci[j]],
    })


def _costs_of(group: Group, costs: np.ndarray, rows: np.ndarray) -> np.ndarray:
    picked = costs[np.isin(rows, np.asarray(group.members, dtype=int))]
    return picked[~np.isnan(picked)]


def _shares(interval) -> str:
    return f"{format_share(interval[0])}–{format_share(interval[1])}"

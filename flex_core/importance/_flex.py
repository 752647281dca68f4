"""FLEX (Algorithm 1) from counterfactuals: the formulas, F over a set, and the global and local runs over a store.

Where τ is used: :meth:`FlexExplainer.explain_global` calls :func:`run_global` here, which samples the
factuals, reads their counterfactuals from the store and computes F with :func:`flex_importance`, whose
:func:`change_matrix` counts a continuous change only above τ. No function here generates counterfactuals
(the store does); the on-request scores (flip-alone and needed, seeds, generators, refits) are added by
:func:`flex_core.importance.with_extras`, regions by :mod:`._region_runs`.

Paper references: Eq. (1) local change frequency, Algorithm 1 (τ and μ), Eq. (4)
global/regional mean, Algorithm 2 (DiCE's importance).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._format import listing
from .._results import FlexResult
from .._typing import Rows
from .._uncertainty import CONTINUITY, INTERVAL_LEVEL, INTERVAL_METHOD, frequency_intervals
from ..counterfactuals import CounterfactualSet, CounterfactualStore
from ..counterfactuals._registry import generator_key
from ..counterfactuals._set import CHANGE_EPSILON, Progress, differs
from ..data import TaskSpec
from ..limits import check
from ..models._fit import adequacy_note, model_summary

__all__ = [
    "DEFAULT_TAU", "DICE_EPSILON", "resolve_tau", "change_matrix", "local_frequencies", "local_magnitudes", "aggregate",
    "dice_importance", "flex_importance", "interval_config", "store_notes", "run_config", "with_notes", "importance_of",
    "sample_factuals", "run_local", "run_global",
]

#: DiCE's machine-precision tolerance for "a continuous value changed" (Algorithm 2).
DICE_EPSILON = CHANGE_EPSILON


DEFAULT_TAU = 0.1  # the paper's main setting; also what a τ mapping gives the features it does not name


def resolve_tau(feature_names, continuous, tau: float | Mapping[str, float]) -> np.ndarray:
    """τ per feature, shape (n_features,): a number for continuous features, NaN for the others.

    ``tau`` is one number for every continuous feature, or a mapping ``{feature: τ}``
    whose unnamed continuous features take ``tau.get("*", DEFAULT_TAU)`` (the CLI's default too).
    """
    continuous = np.asarray(continuous, dtype=bool)
    out = np.full(len(feature_names), np.nan)
    if isinstance(tau, Mapping):
        unknown = [k for k in tau if k != "*" and k not in feature_names]
        if unknown:
            raise ConfigError(f"τ given for an unknown {listing('feature', unknown)}.")
        not_cont = [k for k in tau if k != "*" and not continuous[list(feature_names).index(k)]]
        if not_cont:
            raise ConfigError(f"τ applies to continuous features only, not to: {', '.join(not_cont)}.")
        default = float(tau.get("*", DEFAULT_TAU))
        values = [float(tau.get(name, default)) for name in feature_names]
    else:
        values = [float(tau)] * len(feature_names)
    for j, v in enumerate(values):
        if continuous[j]:
            if not np.isfinite(v) or v < 0:
                raise ConfigError(f"τ must be a number >= 0 (got {v} for {feature_names[j]!r}).")
            out[j] = v
    return out


def change_matrix(factuals, counterfactuals, continuous, ranges, tau, *, epsilon: float | None = None):
    """Which counterfactual cells count as a change, and their relative size.

    Parameters
    ----------
    factuals : ndarray of shape (n_queries, n_features)
    counterfactuals : ndarray of shape (n_queries, n_cf, n_features)
    continuous : bool ndarray of shape (n_features,)
    ranges : ndarray of shape (n_features,)
        range(X_j) of the training data for continuous features.
    tau : ndarray of shape (n_features,)
        Ignored where ``epsilon`` is given (DiCE's rule: |Δ| > ε).

    Returns
    -------
    changed : bool ndarray of shape (n_queries, n_cf, n_features)
    relative : ndarray of shape (n_queries, n_cf, n_features)
        |Δ| / range for continuous features, NaN for the others.
    """
    delta = np.abs(counterfactuals - factuals[:, None, :])
    # A constant feature cannot change in a meaningful way: its relative change is 0.
    safe_range = np.where(np.asarray(ranges) > 0, ranges, np.inf)
    relative = np.where(continuous, delta / safe_range, np.nan)
    if epsilon is None:
        with np.errstate(invalid="ignore"):
            changed = np.where(continuous, relative > tau, delta != 0)
    else:  # DiCE's rule, the one CounterfactualSet.changed uses
        changed = differs(factuals, counterfactuals, continuous, epsilon)
    changed &= ~np.isnan(delta)  # empty slots never count
    return changed, relative


def local_frequencies(changed, usable) -> np.ndarray:
    """f_j(i), Eq. (1): share of query i's usable counterfactuals that change feature j.

    Computed over the counterfactuals a query has (not n_cf); NaN for a query with none.
    Shape (n_queries, n_features).
    """
    counts = usable.sum(axis=1).astype(float)
    hits = (changed & usable[:, :, None]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts[:, None] > 0, hits / counts[:, None], np.nan)


def local_magnitudes(relative, usable) -> np.ndarray:
    """μ_j(i), Algorithm 1: mean relative change |Δ|/range over usable counterfactuals.

    Shape (n_queries, n_features); NaN for categorical features and queries with none.
    """
    counts = usable.sum(axis=1).astype(float)
    summed = np.where(usable[:, :, None], relative, 0.0).sum(axis=1)
    categorical = np.isnan(relative).all(axis=(0, 1)) if relative.size else np.zeros(relative.shape[-1], bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(counts[:, None] > 0, summed / counts[:, None], np.nan)
    out[:, categorical] = np.nan
    return out


def aggregate(local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """F_j, Eq. (4): mean over the queries that have counterfactuals, and the population std.

    ``local`` has shape (n_queries, n_features); NaN rows (no counterfactual) are skipped.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (categorical μ) stay NaN
        return np.nanmean(local, axis=0), np.nanstd(local, axis=0)


def dice_importance(changed_eps, usable) -> np.ndarray:
    """Φ^DiCE, Algorithm 2: changes above ε counted over all usable counterfactuals pooled.

    ``changed_eps`` is :func:`change_matrix` with ``epsilon`` set. Shape (n_features,);
    zeros when there is no counterfactual at all (as the algorithm initialises).
    """
    total = int(usable.sum())
    if total == 0:
        return np.zeros(changed_eps.shape[-1])
    return (changed_eps & usable[:, :, None]).sum(axis=(0, 1)) / total


# -- F over one counterfactual set ----------------------------------------------------------
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


# -- runs over a store ------------------------------------------------------------------------
def store_notes(store: CounterfactualStore) -> list[str]:
    """What every result built on ``store`` says: the model's adequacy and the store's own notes (a damaged cache)."""
    return [note for note in (adequacy_note(store.model.metrics), store.factual_note, *store.notes) if note]


def run_config(store: CounterfactualStore, **extra) -> dict:
    return {
        "dataset": store.task.source or store.task.name,
        "data_fingerprint": store.task.fingerprint,
        "n_cf": store.n_cf,
        "seed": store.seed,
        "features_to_vary": store.features_to_vary or store.task.mutable_names,
        "permitted_range": store.permitted_range,
        "refine": store.refine,
        "constraints": store.task.constraints,
        **({"constraints_between": store.task.rule_texts} if store.task.rules else {}),
        # The classes a counterfactual must reach, and the rule that says it did (only when some are named).
        **({"desired": {"classes": [str(c) for c in store.task.desired or store.model.desired],
                        "criterion": f"P(one of them) > 0.5 + margin ({store.rule.margin:g}), also at the pulled-back "
                                     "corner"}} if store.model.desired else {}),
        "factuals": store.factual_selection,
        **extra,
    }


def with_notes(result: FlexResult, notes: list[str]) -> FlexResult:
    return replace(result, notes=tuple(result.notes) + tuple(notes)) if notes else result


def sample_factuals(rows: Rows, n: int, *, seed: int = 0) -> np.ndarray:
    """A seeded random sample of n factual rows (all of them when fewer exist), sorted by row id."""
    rows = np.asarray(rows, dtype=int)
    n = check("n_factuals", n)
    if len(rows) == 0:
        raise ConfigError("The model predicts no row undesirable, so there is nothing to explain.")
    if n >= len(rows):
        return np.sort(rows)
    return np.sort(np.random.default_rng(seed).choice(rows, size=n, replace=False))


def importance_of(store: CounterfactualStore, cfset, *, tau, level: str, necessary: bool = True, **config) -> FlexResult:
    """FLEX of a set from ``store``, with the store's ranges, generator, model and config blocks (``config`` adds keys).

    ``necessary=False`` skips the necessary-change search (region discovery needs only F).
    """
    return flex_importance(
        cfset,
        store.task,
        tau=tau,
        ranges=store.ranges,
        level=level,
        necessary=store.necessary_changes(cfset) if necessary else None,
        generator=generator_key(store.generator),
        model=model_summary(store.model),
        config=run_config(store, **config),
    )


def run_local(
    store: CounterfactualStore,
    row: int,
    *,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    progress: Progress | None = None,
) -> FlexResult:
    """Local FLEX: one factual and its n_cf counterfactuals (F_j is the share of them that change feature j)."""
    row = int(row)
    if row not in set(store.factual_rows.tolist()):
        outcome = " / ".join(map(str, store.task.undesirable))
        p = float(store.model.predict_proba(store.task.frame.loc[[row], store.task.feature_names])[0, 1])
        if p <= 0.5:
            raise ConfigError(f"Row {row} is not a factual: the model does not predict it {outcome}.")
        selection = store.factual_selection
        raise ConfigError(
            f"Row {row} is not a factual: the model predicts it {outcome} (P {p:.2f}) but not by more than the "
            f"margin {selection['margin']:g}{' or not out of bag' if selection['out_of_bag'] else ''}; "
            "the paper's setting (margin 0, radius 0) explains it."
        )
    cfset = store.ensure([row], progress=progress)
    return with_notes(importance_of(store, cfset, tau=tau, level="local", row=row), store_notes(store))


def run_global(
    store: CounterfactualStore,
    *,
    n_factuals: int = 200,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    sample_seed: int | None = None,
    progress: Progress | None = None,
) -> FlexResult:
    """Global FLEX: a seeded random sample of ``n_factuals`` factuals (the store's seed, or ``sample_seed``).

    Generates the sample's missing counterfactuals, then computes F at ``tau`` with ``necessary_frequency``,
    ``frequency_ci`` and ``rank_interval``. The scores computed on request (flip-alone and needed, F's spread
    over seeds, other generators, refits) are added to the result by :func:`flex_core.importance.with_extras`
    (:meth:`~flex_core.FlexExplainer.explain_global` takes them as options).
    """
    seed = store.seed if sample_seed is None else sample_seed
    pool = store.factual_rows
    rows = sample_factuals(pool, n_factuals, seed=seed)
    cfset = store.ensure(rows, progress=progress)
    notes = store_notes(store)
    short = store.pool_note(n_factuals)
    if short is not None:
        notes.append(short)
    result = importance_of(store, cfset, tau=tau, level="global", n_factuals=n_factuals, sample_seed=seed,
                           factual_pool=len(pool))
    return with_notes(result, notes)

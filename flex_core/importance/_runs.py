"""Global and regional FLEX runs over a counterfactual store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from .._errors import ConfigError
from .._results import FlexResult, RegionalResult
from .._typing import Rows
from ..counterfactuals import CounterfactualStore
from ..counterfactuals._registry import generator_key
from ..counterfactuals._set import Progress
from ..data import TaskSpec
from ..limits import check
from ..models._fit import model_summary
from . import _region_runs
from ._flex import flex_importance, parse_criterion
from ._metrics import DEFAULT_TAU
from ._region_runs import run_config, store_notes, with_extras, with_notes
from ._retrain import retrain_stability
from ._rules import check_rule, rule_mask, rule_text
from ._sensitivity import generator_sensitivity

__all__ = ["sample_factuals", "importance_of", "store_notes", "run_local", "run_global", "run_regional", "run_rule_region", "check_rule_region", "check_region_arguments", "random_query", "rows_meeting"]


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
    sufficiency: bool = False,
    repeats: int = 1,
    generators: Sequence[str] = (),
    retrain: int = 0,
    labelled: bool = True,
    progress: Progress | None = None,
) -> FlexResult:
    """Global FLEX: a seeded random sample of factuals with the undesirable prediction.

    ``necessary_frequency``, ``frequency_ci`` and ``rank_interval`` are always computed.
    ``sufficiency=True`` adds flip_alone and needed (with intervals) and the necessity and sufficiency ratios (two generator runs per feature);
    ``repeats=N`` (N >= 2) regenerates with N seeds and adds ``frequency_seed_sd``.
    ``generators=["dice-random", ...]`` reruns the same factuals with those generators and adds
    ``generator_sensitivity`` (each one's F_j, its interval, and whether they overlap).
    ``retrain=K`` refits the model K times and adds ``retrain`` (F's range across refits, a ``stable``
    verdict per feature, the counterfactuals' validity under each refit: :mod:`._retrain`); ``labelled``
    says whether the outcome column holds real labels (a user's model is refitted only then).
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
    result = with_extras(result, store, tau=tau, sufficiency=sufficiency, repeats=repeats)
    if generators:
        result = replace(result, generator_sensitivity=generator_sensitivity(store, result, generators, tau=tau))
    if retrain:
        result = replace(result, retrain=retrain_stability(store, result, retrain, labelled=labelled, tau=tau))
    return with_notes(result, notes)


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
    generators: Sequence[str] = (),
    progress: Progress | None = None,
) -> RegionalResult:
    """Regional FLEX around a query factual, compared with ``global_result``.

    ``sufficiency`` and ``repeats`` work as in :func:`run_global`, over the region's members;
    ``generators`` reruns the members and ``global_result``'s factuals with each of them and adds
    each one's regional F_j and r to ``importance.generator_sensitivity``.
    """
    result = _region_runs.run_regional(store, global_result, query=query, k=k, where=where, tau=tau,
                                       sufficiency=sufficiency, repeats=repeats, progress=progress)
    return _with_generators(store, global_result, result, generators, tau=tau)


def run_rule_region(
    store: CounterfactualStore,
    global_result: FlexResult,
    *,
    rule,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    sufficiency: bool = False,
    repeats: int = 1,
    generators: Sequence[str] = (),
    progress: Progress | None = None,
) -> RegionalResult:
    """Regional FLEX over the factuals of ``global_result`` that meet ``rule``, compared with it.

    The members are drawn from the global result's factuals (the sample ``explain_global`` took), so
    a region found by :func:`~flex_core.regions.find_regions` with ``n_factuals`` opens with the same
    members when the global result has the same ``n_factuals``. The result has no query, no
    distances and no criterion; ``rule`` and ``rule_text`` say what defines it. ``sufficiency``,
    ``repeats`` and ``generators`` work as in :func:`run_regional`.
    """
    result = _region_runs.run_rule_region(store, global_result, rule=rule, tau=tau, sufficiency=sufficiency,
                                          repeats=repeats, progress=progress)
    return _with_generators(store, global_result, result, generators, tau=tau)


def _with_generators(store: CounterfactualStore, global_result: FlexResult, result: RegionalResult,
                     generators: Sequence[str], *, tau) -> RegionalResult:
    """``result`` with each generator's regional F_j and r in ``importance.generator_sensitivity`` (when asked)."""
    if not generators:
        return result
    sensitivity = generator_sensitivity(store, global_result, generators, tau=tau, regional=result)
    return replace(result, importance=replace(result.importance, generator_sensitivity=sensitivity))


def random_query(store: CounterfactualStore, *, where: str | Mapping | None = None, seed: int = 0) -> int:
    """A seeded random factual meeting the criterion (the paper's way of picking a region's query)."""
    criterion = parse_criterion(store.task, where)
    pool = store.factual_rows
    if criterion is not None:
        pool = pool[store.task.frame.loc[pool, criterion["feature"]].to_numpy() == criterion["value"]]
    if len(pool) == 0:
        if criterion is None:  # (the message used to index None here and fail with a TypeError)
            raise ConfigError("No row is a factual (predicted undesirable), so there is no query to pick.")
        raise ConfigError(f"No factual meets the criterion {criterion['feature']} = {criterion['value']}.")
    return int(np.random.default_rng(seed).choice(pool))


def rows_meeting(task: TaskSpec, rows: Rows, where: str | Mapping | None) -> np.ndarray:
    """The rows (in their order) that meet a ``feature=value`` criterion; all of them when there is none."""
    rows = np.asarray(list(rows), dtype=int)
    criterion = parse_criterion(task, where)
    if criterion is None:
        return rows
    return rows[task.frame.loc[rows, criterion["feature"]].to_numpy() == criterion["value"]]


def check_region_arguments(*, rule, query, where) -> None:
    if rule is not None and (query is not None or where is not None):
        raise ConfigError("A rule defines the region by itself: give either rule, or query / where (Hamming neighbours), not both.")


def check_rule_region(store: CounterfactualStore, rule) -> tuple[dict, ...]:
    """The rule in canonical form, checked before anything is generated: valid, and met by at least one factual."""
    rule = check_rule(store.task, rule)
    if not rule_mask(store.task, rule, store.factual_rows).any():
        text = rule_text(rule, {f.name: f.label for f in store.task.features})
        raise ConfigError(
            f"No factual (row the model predicts {' / '.join(map(str, store.task.undesirable))}) meets {text}; widen the rule."
        )
    return rule

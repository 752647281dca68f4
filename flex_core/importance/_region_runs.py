"""A region's FLEX from one store: what :mod:`._runs` offers and :mod:`._sensitivity` reruns with other generators.

These are the runs without the ``generators`` option. :func:`flex_core.importance.run_regional` and
``run_rule_region`` (in :mod:`._runs`) add it through :mod:`._sensitivity`, which reruns a region with these:
the imports go one way (``_runs`` -> ``_sensitivity`` -> here), with no cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from .._errors import ConfigError
from .._results import FlexResult, RegionalResult
from ..counterfactuals import CounterfactualStore
from ..counterfactuals._registry import generator_key
from ..counterfactuals._set import Progress
from ..models._fit import adequacy_note, model_summary
from ._flex import regional_importance, select_region
from ._metrics import DEFAULT_TAU
from ._necessity import necessity_sufficiency, seed_spread, with_necessity_sufficiency
from ._rules import check_rule, rule_mask, rule_text

__all__ = ["select_members", "run_regional", "run_rule_region", "store_notes", "run_config", "with_extras", "with_notes"]


def store_notes(store: CounterfactualStore) -> list[str]:
    """What every result built on ``store`` says: the model's adequacy and the store's own notes (a damaged cache)."""
    return [note for note in (adequacy_note(store.model.metrics), store.factual_note, *store.notes) if note]


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
    importance = with_extras(result.importance, store, tau=tau, sufficiency=sufficiency, repeats=repeats)
    notes = store_notes(store)
    if len(members) - 1 < k:
        notes.append(f"Only {len(members) - 1} neighbour(s) meet the criterion, fewer than k = {k}.")
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
    labels = {f.name: f.label for f in task.features}
    text = rule_text(rule, labels)
    sampled = np.asarray(global_result.query_index, dtype=int)
    members = sampled[rule_mask(task, rule, sampled)]
    if len(members) == 0:
        anywhere = int(rule_mask(task, rule, store.factual_rows).sum())
        where = (
            f"{anywhere} of all {len(store.factual_rows)} factuals do; sample more (n_factuals) to include them"
            if anywhere else "no factual in the data does; widen the rule"
        )
        raise ConfigError(f"None of the {len(sampled)} sampled factuals meets {text} ({where}).")
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
    importance = with_extras(result.importance, store, tau=tau, sufficiency=sufficiency, repeats=repeats)
    notes = store_notes(store)
    if len(members) < 5:
        notes.append(f"Only {len(members)} sampled factual(s) meet {text}: the region's F rests on very few cases.")
    result = replace(result, importance=with_notes(importance, notes), query=None, distances=(), rule=rule, rule_text=text)
    return result


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
        "factuals": store.factual_selection,
        **extra,
    }


def with_extras(result: FlexResult, store: CounterfactualStore, *, tau, sufficiency: bool, repeats: int) -> FlexResult:
    """Add the on-request scores: necessity and sufficiency, and the spread of F across seeds."""
    if sufficiency:
        result = with_necessity_sufficiency(result, necessity_sufficiency(store, result.query_index))
    if repeats != 1:
        spread = seed_spread(store, result.query_index, repeats=repeats, tau=tau)
        seeds = [store.seed + r for r in range(repeats)]
        result = replace(result, frequency_seed_sd=spread, config={**result.config, "repeats": {"n": repeats, "seeds": seeds}})
    return result


def with_notes(result: FlexResult, notes: list[str]) -> FlexResult:
    return replace(result, notes=tuple(result.notes) + tuple(notes)) if notes else result

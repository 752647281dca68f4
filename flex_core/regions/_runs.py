"""A rule-defined region as a RegionalResult: the factuals of a global result that meet the rule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from .._errors import ConfigError
from .._results import FlexResult, RegionalResult
from ..counterfactuals import CounterfactualStore
from ..counterfactuals._registry import generator_key
from ..counterfactuals._set import Progress
from ..importance import DEFAULT_TAU, regional_importance
from ..importance._runs import _config, _with_extras, _with_notes
from ..models._fit import adequacy_note, model_summary
from ._rules import check_rule, rule_mask, rule_text

__all__ = ["run_rule_region", "check_rule_region"]


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
    ``repeats`` and ``generators`` work as in :func:`flex_core.importance.run_regional`.
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
        config=_config(store, rule=[dict(c) for c in rule], rule_text=text, n_factuals=len(sampled)),
    )
    importance = _with_extras(result.importance, store, tau=tau, sufficiency=sufficiency, repeats=repeats)
    notes = [note for note in (adequacy_note(store.model.metrics),) if note]
    if len(members) < 5:
        notes.append(f"Only {len(members)} sampled factual(s) meet {text}: the region's F rests on very few cases.")
    result = replace(result, importance=_with_notes(importance, notes), query=None, distances=(), rule=rule, rule_text=text)
    if generators:
        from ..importance import generator_sensitivity

        sensitivity = generator_sensitivity(store, global_result, generators, tau=tau, regional=result)
        result = replace(result, importance=replace(result.importance, generator_sensitivity=sensitivity))
    return result


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

"""The on-request scores of a run, and the regional runs with other generators beside them.

:func:`with_extras` adds to a global result what :meth:`~flex_core.FlexExplainer.explain_global` computes on
request (flip-alone and needed, F's spread over seeds, other generators, refits); :func:`run_regional` and
:func:`run_rule_region` are :mod:`._region_runs`' with the ``generators`` option, which :mod:`._sensitivity`
answers by rerunning the region with those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from .._errors import ConfigError
from .._results import FlexResult, RegionalResult
from .._typing import Rows
from ..counterfactuals import CounterfactualStore
from ..counterfactuals._set import Progress
from ..data import TaskSpec
from . import _region_runs
from ._flex import DEFAULT_TAU
from ._region_runs import parse_criterion, with_member_extras
from ._retrain import retrain_stability
from ._rules import check_rule, rule_mask, rule_text
from ._sensitivity import generator_sensitivity

__all__ = ["with_extras", "run_regional", "run_rule_region", "check_rule_region", "check_region_arguments", "random_query",
           "rows_meeting", "where_criterion"]


def with_extras(
    result: FlexResult,
    store: CounterfactualStore,
    *,
    tau: float | Mapping[str, float] = DEFAULT_TAU,
    sufficiency: bool = False,
    repeats: int = 1,
    generators: Sequence[str] = (),
    retrain: int = 0,
    labelled: bool = True,
) -> FlexResult:
    """A global ``result`` (from :func:`~flex_core.importance.run_global` on ``store``) with the scores asked for.

    ``sufficiency=True`` adds flip_alone and needed (with intervals) and the necessity and sufficiency ratios (two
    generator runs per feature); ``repeats=N`` (N >= 2) regenerates with N seeds and adds ``frequency_seed_sd``;
    ``generators=["dice-random", ...]`` reruns the same factuals with those generators and adds
    ``generator_sensitivity`` (each one's F_j, its interval, and whether they overlap); ``retrain=K`` refits the
    model K times and adds ``retrain`` (F's range across refits, a ``stable`` verdict per feature, the
    counterfactuals' validity under each refit: :mod:`._retrain`); ``labelled`` says whether the outcome column
    holds real labels (a user's model is refitted only then). ``tau`` is the result's.
    """
    result = with_member_extras(result, store, tau=tau, sufficiency=sufficiency, repeats=repeats)
    if generators:
        result = replace(result, generator_sensitivity=generator_sensitivity(store, result, generators, tau=tau))
    if retrain:
        result = replace(result, retrain=retrain_stability(store, result, retrain, labelled=labelled, tau=tau))
    return result


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

    ``sufficiency`` and ``repeats`` work as in :func:`with_extras`, over the region's members;
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
        text = rule_text(rule, features=store.task.features)
        raise ConfigError(
            f"No factual (row the model predicts {' / '.join(map(str, store.task.undesirable))}) meets {text}; widen the rule."
        )
    return rule


def where_criterion(where) -> str | Mapping | None:
    """``{"zone": "rural"}`` or ``Condition.criterion("zone", "rural")`` as ``{"feature": "zone", "value": "rural"}``,
    the form the runs take (text and that form pass as they are): a mapping never becomes ``"feature=value"`` text to
    be split again."""
    if where is None or isinstance(where, str) or (isinstance(where, Mapping) and set(where) == {"feature", "value"}):
        return where
    if isinstance(where, Mapping) and set(where) == {"feature", "op", "value"}:  # a Condition (or its dict)
        if where["op"] != "=":
            raise ConfigError(f"where takes one feature = value criterion, not {where['op']!r}; a rule takes the others.")
        return {"feature": where["feature"], "value": where["value"]}
    if isinstance(where, Mapping) and len(where) == 1:
        (feature, value), = where.items()
        return {"feature": feature, "value": value}
    raise ConfigError("where takes one criterion: {'feature': value} or 'feature=value'.")

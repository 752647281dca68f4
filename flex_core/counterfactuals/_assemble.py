"""Assembling a generator's counterfactuals into a :class:`~._set.CounterfactualSet`: one validity check for every
generator, copies merged, constraint breakers dropped and counted."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..data._task import TaskSpec
from ..models import FittedModel
from ._rulecheck import rules_report
from ._set import CounterfactualSet, copy_tolerance, decode_rows, encode_rows, feature_violations, merge_copies
from ._tally import REJECTED, opened
from ._validity import Validity

__all__ = ["assemble_counterfactual_set"]

def assemble_counterfactual_set(
    task: TaskSpec,
    model: FittedModel,
    queries: pd.DataFrame,
    per_query: Sequence[pd.DataFrame | np.ndarray | None],
    *,
    n_cf: int,
    generator: str,
    seconds: float,
    model_rows: int = -1,
    notes: Sequence[str] = (),
    config: Mapping | None = None,
    p_undesirable: Callable[[np.ndarray], np.ndarray] | None = None,
    validity: Validity | None = None,
    dropped: np.ndarray | None = None,
    rule_rejections: np.ndarray | None = None,
    cases: Mapping | None = None,
    tallies: Mapping | None = None,
) -> CounterfactualSet:
    """Pack per-query counterfactuals into a set, checking validity with one batched model call.

    Each entry of ``per_query`` is a frame in the original feature space, an array of
    codes of shape (n_found, n_features) (a generator that searches in code space
    skips a decode and re-encode), or None. Extra rows beyond n_cf are cut;
    copies among a query's valid counterfactuals are merged (:func:`merge_copies`). ``p_undesirable`` scores coded rows
    (shape (n, n_features) -> (n,)) for a generator that has a faster way than the
    model's ``predict_proba`` on decoded rows; the outcome is the same. ``validity``: the rule a valid
    counterfactual meets (default :class:`~._validity.Validity`'s), recorded in ``config["validity"]``;
    ``dropped``: per query, counterfactuals the generator dropped as no other way out (:mod:`._alternatives`);
    ``rule_rejections``: candidates each of the task's constraints between features rejected while the generator
    searched (None: it did not search with them). With such constraints ``config["constraints_between"]`` reports,
    per constraint, what it rejected and dropped and its share (:func:`~._rulecheck.rules_report`).
    ``cases`` (row ids per count, e.g. ``{"skipped": [...]}``) and ``tallies`` (what the call spent, e.g.
    ``{"model_calls": 3}``) are kept as :mod:`._tally` says, so they add up when the set is cut and stacked; the notes
    that count cases are written from them (``notes`` holds the others).
    """
    validity = Validity() if validity is None else validity
    n_q = len(queries)
    cfs, found = _packed(task, per_query, n_q, n_cf)
    factual_codes = encode_rows(task, queries)
    row_ids = queries.index.to_numpy().astype(int)
    cases = {name: list(entries) for name, entries in (cases or {}).items()}
    tallies = dict(tallies or {})
    if found.any():
        cases.update(_drop_broken(task, factual_codes, cfs, found, row_ids))
    config = dict(config or {})
    if task.rules:
        cases["breaks_at_factual"] = _breaking_as_they_are(task, factual_codes, row_ids)
        if rule_rejections is not None:
            tallies[REJECTED] = [int(v) for v in rule_rejections]
        zeros = np.zeros(len(task.rules), dtype=np.int64)
        config["constraints_between"] = rules_report(task.rule_texts, None, zeros, zeros)  # written from the cases
    valid = np.zeros_like(found)
    if found.any():
        if p_undesirable is None:
            def p_undesirable(codes):
                return model.p_off_goal(decode_rows(task, codes))
        their_factuals = np.repeat(factual_codes, n_cf, axis=0)[found.reshape(-1)]
        valid[found] = validity.check(p_undesirable, cfs[found], their_factuals)
        model_rows = model_rows + int(found.sum()) if model_rows >= 0 else model_rows
    # FLEX averages over distinct counterfactuals: a generator that returns the same one twice
    # (DiCE may) has it counted once, and the set says how often that happened.
    merged = merge_copies(factual_codes, cfs, found, valid, copy_tolerance(task))
    cfs, found, valid = merged.counterfactuals, merged.found, merged.valid
    return CounterfactualSet(
        tuple(task.feature_names),
        row_ids,
        factual_codes,
        cfs,
        found,
        valid,
        generator,
        float(seconds),
        int(model_rows),
        tuple(notes),
        opened({**config, "validity": validity.describe()}, row_ids, cases=cases,
               tallies={**tallies, "seconds": float(seconds), "model_rows": int(model_rows)}),
        merged.copies,
        np.zeros(n_q, dtype=int) if dropped is None else np.asarray(dropped, dtype=int),
    )


def _packed(task: TaskSpec, per_query, n_q: int, n_cf: int) -> tuple[np.ndarray, np.ndarray]:
    """Each query's counterfactuals as codes in slots of n_cf (extra rows cut), and which slots hold one."""
    cfs = np.full((n_q, n_cf, len(task.features)), np.nan)
    found = np.zeros((n_q, n_cf), dtype=bool)
    for i, frame in enumerate(per_query):
        if frame is None or len(frame) == 0:
            continue
        codes = frame[:n_cf] if isinstance(frame, np.ndarray) else encode_rows(task, frame.iloc[:n_cf])
        cfs[i, : len(codes)] = codes
        found[i, : len(codes)] = True
    # A coded NaN inside a found row means the generator produced a level the task does not know.
    found &= ~np.isnan(cfs).any(axis=2)
    return cfs, found


def _breaking_as_they_are(task: TaskSpec, factual_codes: np.ndarray, row_ids: np.ndarray) -> list[dict]:
    """The cases whose own values break a constraint between features (row, broken): a way out must fix it."""
    breaks = task.rule_breaks(factual_codes, factual_codes)
    return [{"row": int(row_ids[q]), "broken": [t for t, b in zip(task.rule_texts, breaks[q]) if b]}
            for q in np.flatnonzero(breaks.any(axis=1))]


def _drop_broken(task: TaskSpec, factual_codes: np.ndarray, cfs: np.ndarray, found: np.ndarray,
                 row_ids: np.ndarray) -> dict[str, list]:
    """Drop (in place) the counterfactuals that break a constraint; the cases they came from (:mod:`._tally`).

    One check for every generator: one that cannot express a constraint (DiCE and a direction, or a constraint
    between features) loses the counterfactuals that break it here, and the shortfall is counted later. Returns
    ``dropped_by_feature`` (a row id per way out dropped for a feature's constraint, direction or range) and
    ``dropped_by_rule`` (per way out dropped for a constraint between features: its query's row, its slot and the
    constraints it broke), which the set's notes and ``config["constraints_between"]`` count.
    """
    n_cf = found.shape[1]
    their_factuals = np.repeat(factual_codes, n_cf, axis=0)[found.reshape(-1)]
    per_feature = np.zeros_like(found)
    per_feature[found] = feature_violations(task, their_factuals, cfs[found])
    rule_breaks = np.zeros((*found.shape, len(task.rules)), dtype=bool)
    rule_breaks[found] = task.rule_breaks(cfs[found], their_factuals)
    by_rule = rule_breaks.any(axis=2) & ~per_feature
    query, slot = np.nonzero(by_rule)
    cases: dict[str, list] = {
        "dropped_by_feature": [int(row_ids[q]) for q in np.nonzero(per_feature)[0]],
        "dropped_by_rule": [{"row": int(row_ids[q]), "slot": int(c),
                             "broken": [t for t, b in zip(task.rule_texts, rule_breaks[q, c]) if b]}
                            for q, c in zip(query, slot)],
    }
    breaks = per_feature | by_rule
    found &= ~breaks
    cfs[breaks] = np.nan
    return {name: entries for name, entries in cases.items() if entries}

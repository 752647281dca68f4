"""Assembling a generator's counterfactuals into a :class:`~._set.CounterfactualSet`: one validity check for every
generator, copies merged, constraint breakers dropped and counted."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .._format import plural
from ..data._task import TaskSpec
from ..models import FittedModel
from ._rulecheck import rules_report
from ._set import CounterfactualSet, copy_tolerance, decode_rows, encode_rows, feature_violations, merge_copies
from ._validity import Validity

__all__ = ["assemble_counterfactual_set", "skipped_note"]

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
    """
    validity = Validity() if validity is None else validity
    n_q = len(queries)
    cfs, found = _packed(task, per_query, n_q, n_cf)
    factual_codes = encode_rows(task, queries)
    notes = list(notes)
    config = dict(config or {})
    rule_drops = np.zeros(len(task.rules), dtype=np.int64)
    if found.any():
        rule_drops = _drop_broken(task, factual_codes, cfs, found, generator, notes, queries.index.to_numpy(), config)
    if task.rules:
        at_factual = task.rule_breaks(factual_codes, factual_codes).sum(axis=0)
        notes.extend(_factual_rule_notes(task, at_factual, n_q))
        config["constraints_between"] = {**rules_report(task.rule_texts, rule_rejections, rule_drops, at_factual),
                                         **config.get("constraints_between", {})}
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
    if merged.copies.any():
        copies = int(merged.copies.sum())
        notes.append(f"{plural(copies, 'copy', 'copies')} among the ways out of {plural(int((merged.copies > 0).sum()), 'case')} "
                     f"{'was' if copies == 1 else 'were'} merged: FLEX counts each different way out once.")
    return CounterfactualSet(
        tuple(task.feature_names),
        queries.index.to_numpy().astype(int),
        factual_codes,
        cfs,
        found,
        valid,
        generator,
        float(seconds),
        int(model_rows),
        tuple(notes),
        {**config, "validity": validity.describe()},
        merged.copies,
        np.zeros(n_q, dtype=int) if dropped is None else np.asarray(dropped, dtype=int),
    )


def skipped_note(n_skipped: int, n_cases: int, time_limit: float | None) -> str:
    """The note of a generator that stopped starting cases at its time limit (every generator says it alike; only a
    generator with a limit skips any)."""
    return (f"{n_skipped:,} of {plural(n_cases, 'case')} skipped: the time limit of {time_limit:g} s was reached (they "
            "get no ways out here and are not stored; another run may serve them).")


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


def _dropped(n: int, generator: str, broken: str) -> str:
    """"1 way out from dice-random was dropped: it broke ...", "3 ways out ... were dropped: they broke ..."."""
    one = n == 1
    return (f"{plural(n, 'way out', 'ways out')} from {generator} {'was' if one else 'were'} dropped: "
            f"{'it' if one else 'they'} broke {broken}.")


def _drop_broken(task: TaskSpec, factual_codes: np.ndarray, cfs: np.ndarray, found: np.ndarray, generator: str,
                 notes: list[str], row_ids: np.ndarray, config: dict) -> np.ndarray:
    """Drop (in place) the counterfactuals that break a constraint, say how many in ``notes``; per-rule drops.

    One check for every generator: one that cannot express a constraint (DiCE and a direction, or a constraint
    between features) loses the counterfactuals that break it here, and the shortfall is counted later. Each
    one dropped for a constraint between features is listed in ``config["constraints_between"]["dropped"]``
    (its query's row and the constraints it broke).
    """
    n_cf = found.shape[1]
    their_factuals = np.repeat(factual_codes, n_cf, axis=0)[found.reshape(-1)]
    per_feature = np.zeros_like(found)
    per_feature[found] = feature_violations(task, their_factuals, cfs[found])
    rule_breaks = np.zeros((*found.shape, len(task.rules)), dtype=bool)
    rule_breaks[found] = task.rule_breaks(cfs[found], their_factuals)
    if per_feature.any():
        notes.append(
            _dropped(int(per_feature.sum()), generator, "a feature's constraint, its allowed direction or range (the "
                     "generator cannot express every one)")
        )
    by_rule = rule_breaks.any(axis=2) & ~per_feature
    if by_rule.any():
        counts = rule_breaks[by_rule].sum(axis=0)
        worst = ", ".join(f"{t!r} {int(c)}" for t, c in zip(task.rule_texts, counts) if c)
        notes.append(_dropped(int(by_rule.sum()), generator, f"a constraint between features ({worst})"))
        query, slot = np.nonzero(by_rule)
        config["constraints_between"] = {"dropped": [
            {"row": int(row_ids[q]), "slot": int(c),
             "broken": [t for t, b in zip(task.rule_texts, rule_breaks[q, c]) if b]}
            for q, c in zip(query, slot)]}
    breaks = per_feature | by_rule
    found &= ~breaks
    cfs[breaks] = np.nan
    return rule_breaks[by_rule].sum(axis=0) if by_rule.any() else np.zeros(len(task.rules), dtype=np.int64)


def _factual_rule_notes(task: TaskSpec, at_factual: np.ndarray, n_queries: int) -> list[str]:
    """A note per constraint between features that some queries break as they are (a counterfactual must fix it)."""
    return [f"{int(n):,} of the {plural(n_queries, 'case')} {'breaks' if n == 1 else 'break'} {text!r} at "
            f"{'its' if n == 1 else 'their'} own values: only a way out that changes them so it holds is kept."
            for text, n in zip(task.rule_texts, at_factual) if n]

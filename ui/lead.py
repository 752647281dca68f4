"""The sentence a page opens with, in the data dictionary's words: which change the ways out make most, which
way, and by how much in the feature's own unit ("To become Approved, the ways out most often change Loan term:
44 in 100 on average, shortening it by 9 years (median)")."""

from __future__ import annotations

import numpy as np
import pandas as pd

import flex_core as fc

__all__ = ["lead_reading", "feature_moves", "small_region_note", "MIN_REGION_CASES"]

#: Fewer changed ways out than this and the sentence gives no direction or size (too few to say).
MIN_CHANGES = 5
#: A region with fewer cases (with ways out) than this shows its r and shares for reference, not as findings.
MIN_REGION_CASES = 5


def small_region_note(cases: int) -> str | None:
    """Why a region's numbers are no finding when it has fewer than :data:`MIN_REGION_CASES` cases; None otherwise."""
    if cases >= MIN_REGION_CASES:
        return None
    what = "no case" if cases == 0 else ("1 case" if cases == 1 else f"{cases} cases")
    return (f"This region rests on {what} with ways out, fewer than {MIN_REGION_CASES}: its agreement with all cases, "
            "its shares and intervals are shown for reference only, not as findings. Widen it (a larger k, or a broader rule).")


def feature_moves(result: fc.FlexResult, task: fc.TaskSpec, name: str) -> pd.Series:
    """For feature ``name``, the change each valid way out makes to it (way out minus case) over the ways out that
    change it by more than τ of its range (the changes F counts); a level feature gives the new levels instead."""
    frame = result.counterfactual_set.to_frame(task)
    cases = frame[frame["cf"] < 0].set_index("row")[name]
    outs = frame[(frame["cf"] >= 0) & frame["valid"].astype(bool)]
    before = cases.loc[outs["row"]].to_numpy()
    j = list(result.feature_names).index(name)
    if not task.features[j].is_continuous:
        return outs.loc[outs[name].astype(str).to_numpy() != before.astype(str), name]
    delta = outs[name].astype(float).to_numpy() - before.astype(float)
    tau = float(result.tau[j]) if np.isfinite(result.tau[j]) else 0.0
    return pd.Series(delta[np.abs(delta) > max(tau * float(task.ranges()[j]), 1e-9)])


def _verbs(label: str) -> tuple[str, str]:
    """(raising, lowering) in words that fit a duration ("lengthening", "shortening") or any other number."""
    if any(word in label.lower() for word in ("term", "duration", "period", "experience")):
        return "lengthening", "shortening"
    return "raising", "lowering"


def lead_reading(result: fc.FlexResult, task: fc.TaskSpec) -> str:
    """One or two sentences on the change the ways out make most, in the dictionary's words and units.

    "" when the result carries no counterfactuals or no feature changes. The share is F (the mean over the
    cases of each case's share of its ways out); the direction and size are read over the ways out that change
    the feature, as a median in its unit, and left out when fewer than :data:`MIN_CHANGES` change it.
    """
    if result.counterfactual_set is None or tuple(result.feature_names) != tuple(task.feature_names):
        return ""
    mutable = [j for j in range(len(result.feature_names)) if not result.immutable[j]]
    shares = np.nan_to_num(np.asarray(result.frequency_mean, float)[mutable])  # NaN: no case has a way out
    if not mutable or not shares.max() > 0:
        return ""
    j = max(mutable, key=lambda k: result.frequency_mean[k])
    feature = task.features[j]
    share = round(100 * float(result.frequency_mean[j]))
    goal = f"To become {task.desirable_words}" if task.band is None else f"To reach a predicted {task.desirable_words}"
    lead = f"{goal}, the ways out most often change {feature.label}: {share} in 100 on average"
    moves = feature_moves(result, task, feature.name)
    if len(moves) < MIN_CHANGES:
        return lead + "."
    if not feature.is_continuous:
        common = moves.astype(str).value_counts()
        if common.iloc[0] < 0.25 * len(moves):  # no level stands out: naming the commonest would overstate it
            return lead + f", to {len(common)} different levels."
        return lead + f", most often to {feature.level_label(common.index[0])} ({common.iloc[0]} of {len(moves)})."
    up = float((moves > 0).mean())
    raise_word, lower_word = _verbs(feature.label)
    if up >= 0.75 or up <= 0.25:
        direction = moves[moves > 0] if up >= 0.75 else -moves[moves < 0]
        verb = raise_word if up >= 0.75 else lower_word
        size = feature.format_value(float(np.median(direction)))
        return lead + f", {verb} it by {size} (the median of the {len(moves):,} ways out that change it)."
    return lead + f", in both directions ({100 * up:.0f}% raise it)."

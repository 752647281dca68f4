"""Plain-language readings of FLEX results, for the app and the HTML report."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._results import QUADRANT_MEANING, FlexResult, RegionalResult

__all__ = [
    "describe_global",
    "describe_regional",
    "describe_neighbour_ties",
    "describe_tau_sweep",
    "describe_coverage",
    "quadrant_legend",
    "with_interval",
    "rank_text",
    "describe_certainty",
    "describe_passengers",
    "WHAT_MUST_CHANGE_READING",
    "what_must_change_frame",
]

#: One sentence each on how to read the four "what must change" numbers.
WHAT_MUST_CHANGE_READING = {
    "F": "F: the share of each case's counterfactuals that change the feature, averaged over the cases.",
    "necessary F": (
        "necessary F: the same share, counting a change only when undoing it alone (all else kept) "
        "loses the desired outcome; a feature with high F but low necessary F is a passenger that rides along."
    ),
    "necessity": (
        "necessity: the share of requested counterfactuals the generator still finds when only this feature "
        "may change; high means changing this feature alone is often enough."
    ),
    "sufficiency": (
        "sufficiency: 1 minus the share found when this feature is frozen and everything else may change; "
        "high means there is rarely a way around changing it."
    ),
}

#: A feature is named a passenger when it changes in at least this share of counterfactuals ...
PASSENGER_MIN_FREQUENCY = 0.03
#: ... and at most this fraction of those changes is necessary.
PASSENGER_MAX_NECESSARY_SHARE = 0.25


def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.0f}%"


def with_interval(value: float, interval: Sequence[float] | None, *, decimals: int = 2) -> str:
    """``"0.73 (0.61 to 0.85)"``; the value alone when the interval is missing or undefined."""
    if value is None or math.isnan(value):
        return "n/a"
    text = f"{value:.{decimals}f}"
    if interval is None or any(v is None or math.isnan(v) for v in interval):
        return text
    return f"{text} ({interval[0]:.{decimals}f} to {interval[1]:.{decimals}f})"


def rank_text(rank: int, interval: Sequence[float] | None) -> str:
    """``"4–7"`` when the 95% bootstrap interval of a rank spans several ranks, else ``"4"``."""
    if interval is None or any(v is None or math.isnan(v) for v in interval) or interval[0] == interval[1]:
        return f"{int(rank)}"
    return f"{int(interval[0])}–{int(interval[1])}"


def describe_certainty(result: FlexResult) -> str:
    """Which ranks the bootstrap over the cases can tell apart, in words ("" without intervals)."""
    if result.rank_interval is None or result.n_factuals_used < 2:
        return ""
    frame = result.to_frame()
    frame = frame[~frame["immutable"] & (frame["frequency_mean"] > 0)]
    if frame.empty:
        return ""
    parts = []
    top = frame.iloc[0]
    if top["rank_best"] == top["rank_worst"] == 1:
        parts.append(f"{top['label']} is first in at least 95% of resamples")
    # Runs of features whose rank intervals overlap cannot be ordered with confidence.
    groups, current, reach = [], [], 0.0
    for _, line in frame.iterrows():
        if current and line["rank_best"] <= reach:
            current.append(line)
            reach = max(reach, line["rank_worst"])
            continue
        if len(current) > 1:
            groups.append(current)
        current, reach = [line], line["rank_worst"]
    if len(current) > 1:
        groups.append(current)
    for group in groups:
        labels = ", ".join(line["label"] for line in group)
        parts.append(f"ranks {int(group[0]['rank'])}–{int(group[-1]['rank'])} ({labels}) are indistinguishable")
    if not groups:
        parts.append("every rank is clear (no two rank intervals overlap)")
    return " Resampling the cases (95% bootstrap): " + "; ".join(parts) + "."


def describe_passengers(result: FlexResult) -> str:
    """Names the features that change often but almost never need to ("" when there are none or no model)."""
    if result.necessary_frequency is None:
        return ""
    passengers = [
        f"{result.display_names[j]} (changed in {_pct(result.frequency_mean[j])}, needed in {100 * result.necessary_frequency[j]:.1f}%)"
        for j in np.argsort(-np.nan_to_num(result.frequency_mean), kind="stable")
        if not result.immutable[j]
        and result.frequency_mean[j] >= PASSENGER_MIN_FREQUENCY
        and result.necessary_frequency[j] <= PASSENGER_MAX_NECESSARY_SHARE * result.frequency_mean[j]
    ]
    if not passengers:
        return ""
    return (
        " Passengers, changed along the way but rarely needed (undoing that change alone keeps the outcome): "
        + "; ".join(passengers)
        + "."
    )


def what_must_change_frame(result: FlexResult) -> pd.DataFrame:
    """One row per mutable feature, by rank: rank (as "4–7" where uncertain), F with its interval, necessary F,
    necessity and sufficiency (empty until computed)."""
    rows = []
    for j in np.argsort(result.rank, kind="stable"):
        if result.immutable[j]:
            continue
        interval = None if result.frequency_ci is None else result.frequency_ci[j]
        ranks = None if result.rank_interval is None else result.rank_interval[j]
        rows.append(
            {
                "feature": result.display_names[j],
                "rank": rank_text(result.rank[j], ranks),
                "F (95% interval)": with_interval(result.frequency_mean[j], interval),
                "necessary F": None if result.necessary_frequency is None else float(result.necessary_frequency[j]),
                "necessity": None if result.necessity is None else float(result.necessity[j]),
                "sufficiency": None if result.sufficiency is None else float(result.sufficiency[j]),
            }
        )
    return pd.DataFrame(rows, columns=["feature", "rank", "F (95% interval)", "necessary F", "necessity", "sufficiency"])


def _outcome(undesirable: Sequence | None) -> str:
    return " or ".join(str(v) for v in undesirable) if undesirable else "the undesirable outcome"


def describe_neighbour_ties(regional: RegionalResult) -> str:
    """Whether the region's last neighbours were drawn at random among cases at the same distance ("" if not)."""
    ties = regional.neighbour_ties
    if not ties:
        return ""
    seed = regional.importance.config.get("seed")
    return (
        f"{ties['candidates']} cases tie at distance {ties['distance']:g}; {ties['drawn']} of them were drawn at random"
        + (f" (seed {seed})" if seed is not None else "")
        + ", so another seed may give a slightly different region."
    )


def describe_global(result: FlexResult, *, undesirable: Sequence | None = None) -> str:
    """A short reading of a global (or regional) result for people who have never seen FLEX."""
    frame = result.to_frame()
    mutable = frame[~frame["immutable"]]
    if mutable.empty or mutable["frequency_mean"].isna().all():
        return "No counterfactual was found, so there is nothing to read yet."
    top = mutable.iloc[: min(3, len(mutable))]
    parts = []
    for _, line in top.iterrows():
        text = f"{line['label']} ({_pct(line['frequency_mean'])} of alternatives"
        if line["kind"] == "continuous" and not math.isnan(line["magnitude_mean"]):
            text += f", typically by {_pct(line['magnitude_mean'])} of its range"
        parts.append(text + ")")
    scope = {"global": "Across", "regional": "In this group of", "local": "For"}[result.level]
    lead = (
        f"{scope} {result.n_factuals_used} case(s) predicted {_outcome(undesirable)}, "
        f"the smallest changes that flip the prediction most often involve "
    )
    body = "; ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] + "."
    low = mutable[mutable["frequency_mean"] < 0.05]
    tail = ""
    if len(low):
        tail = f" Rarely changed (under 5%): {', '.join(low['label'])}."
    immutable = frame[frame["immutable"]]
    if len(immutable):
        tail += f" Held fixed because they cannot be changed: {', '.join(immutable['label'])}."
    tau = [t for t in result.tau if not math.isnan(t)]
    if tau:
        tail += (
            f" A change to a number only counts when it exceeds τ = {min(tau):g}"
            + (f" to {max(tau):g}" if max(tau) != min(tau) else "")
            + " of the feature's range."
        )
    return lead + body + tail + describe_certainty(result) + describe_passengers(result)


def describe_regional(regional: RegionalResult, *, undesirable: Sequence | None = None) -> str:
    """A reading of a region: how it compares with the whole population, in words."""
    imp = regional.importance
    labels = dict(zip(imp.feature_names, imp.display_names))
    size = len(regional.members)
    crit = regional.criterion
    where = f" with {crit['feature']} = {crit['value']}" if crit else ""
    r = regional.pearson_r
    if math.isnan(r):
        agreement = "The region is too small or too uniform to compare with the whole population (r undefined)."
    else:
        strength = "closely follows" if r >= 0.7 else "partly follows" if r >= 0.3 else "differs from"
        agreement = f"Its pattern {strength} the whole population's (Pearson r = {r:.2f})."
        low, high = regional.pearson_r_interval
        if not math.isnan(low):
            # A region holds few cases: say how far r moves with which cases it happens to hold.
            agreement += (
                f" Resampling the region's cases puts r between {low:.2f} and {high:.2f} (95% bootstrap interval)"
                + ("; with so wide a range, read r as rough." if high - low > 0.5 else ".")
            )
    by_quadrant: dict[str, list[str]] = {}
    for name, q in zip(imp.feature_names, regional.quadrants):
        if q is not None:
            by_quadrant.setdefault(q, []).append(labels[name])
    extra = []
    if by_quadrant.get("A"):
        extra.append(f"Drivers specific to this region (quadrant A): {', '.join(by_quadrant['A'])}.")
    if by_quadrant.get("C"):
        extra.append(f"Drivers everywhere (quadrant C): {', '.join(by_quadrant['C'])}.")
    if by_quadrant.get("D"):
        extra.append(f"Important overall but less so here (quadrant D): {', '.join(by_quadrant['D'])}.")
    shifts = sorted(
        (s for s in regional.mode_shift if not math.isnan(s["delta"])), key=lambda s: s["delta"]
    )
    if shifts and shifts[0]["delta"] < -0.3:
        s = shifts[0]
        extra.append(
            f"The counterfactuals most often move away from {labels.get(s['name'], s['name'])} = {s['mode']} "
            f"(δ = {s['delta']:+.2f}: the share falls from {_pct(s['p_orig'])} to {_pct(s['p_cf'])})."
        )
    lead = f"A group of {size} similar case(s) around row {regional.query}{where}. "
    return lead + describe_global(imp, undesirable=undesirable) + " " + agreement + (" " + " ".join(extra) if extra else "")


def describe_tau_sweep(sweep: pd.DataFrame) -> str:
    """How quickly each continuous feature's frequency falls as τ grows."""
    if sweep.empty:
        return "This dataset has no continuous feature, so τ has no effect."
    parts = []
    for label, group in sweep.groupby("label", sort=False):
        group = group.sort_values("tau")
        start = float(group["frequency_mean"].iloc[0])
        half = group[group["frequency_mean"] <= start / 2]
        if start == 0:
            parts.append(f"{label} never changes")
        elif half.empty:
            parts.append(f"{label} keeps most of its changes even at τ = {group['tau'].max():g} (large changes)")
        else:
            parts.append(f"{label} loses half its changes by τ = {half['tau'].iloc[0]:g}")
    return (
        "τ decides how large a change to a number must be (as a share of its range) to count. "
        + "; ".join(parts)
        + ". A feature that keeps its frequency at high τ needs big changes to flip the prediction."
    )


def describe_coverage(coverage: Mapping) -> str:
    """The generator's coverage in one sentence."""
    return (
        f"{coverage['queries']} case(s) explained; {coverage['counterfactuals_found']} of "
        f"{coverage['counterfactuals_requested']} requested alternatives were found and "
        f"{_pct(coverage['validity'])} of those really flip the prediction; "
        f"{coverage['queries_without']} case(s) got none."
    )


def quadrant_legend() -> str:
    """The four quadrants of the regional-vs-global scatter, one line each."""
    return "\n".join(f"{q}: {text}" for q, text in QUADRANT_MEANING.items())



"""Plain-language readings of FLEX results, for the app and the HTML report.

Each reading names a feature at most once per list (often changed / rarely changed /
held fixed), says which counterfactuals a number refers to, and writes counts and
shares the way a reader expects ("1 case", "12,316 rows", "83%").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from flex_core import FlexResult, RegionalResult
from flex_core.data import TaskSpec
from flex_core.formatting import format_number, format_share, plural

from ._tables import mode_words, target_words

__all__ = [
    "describe_global",
    "describe_regional",
    "describe_r_interval",
    "describe_neighbour_ties",
    "describe_tau_sweep",
    "describe_coverage",
    "quadrant_legend",
    "with_interval",
    "rank_text",
    "describe_certainty",
    "describe_passengers",
    "what_must_change_reading",
    "what_must_change_columns",
    "what_must_change_frame",
    "describe_what_must_change",
    "FeatureLists",
    "feature_lists",
    "describe_magnitudes",
    "describe_model",
    "majority_outcome",
]

#: One sentence each on how to read the "what must change" numbers.
_WHAT_MUST_CHANGE_READING = {
    "changed": "{changed}: the share of each case's ways out that change the feature, averaged over the cases.",
    "changed and needed": (
        "{needed_f}: the same share, counting a change only when undoing it alone (all else kept) loses the desired "
        "outcome; a feature high in the first share and low in this one is changed but not needed."
    ),
    "flips it alone": (
        "flips it alone: the share of cases whose outcome changes when only this feature changes "
        "(the generator searched its levels or range, within the constraints)."
    ),
    "needed": (
        "needed: the share of cases for which no way to change the outcome was found with this feature "
        "kept as it is; high means there is rarely a way around changing it."
    ),
    "necessity ratio": (
        "necessity ratio (Kommiya Mothilal et al. 2021): the share of the requested ways out found when only "
        "this feature may change; it counts ways out, so a yes/no feature scores at most {one_in_n_cf}."
    ),
    "sufficiency ratio": (
        "sufficiency ratio (same paper): 1 minus the share found when this feature is kept as it is."
    ),
}


def what_must_change_reading(*, terms: bool = False) -> list[str]:
    """One sentence per "what must change" column on how to read it, naming the columns as
    :func:`what_must_change_frame` does (``terms``: the analyst's F and necessary F after the words)."""
    names = {"changed": "changed (F)", "needed_f": "changed and needed (necessary F)", "one_in_n_cf": "1 / N_cf"}
    if not terms:
        names = {"changed": "changed", "needed_f": "changed and needed",
                 "one_in_n_cf": "one in the number of ways out asked for"}
    return [sentence.format(**names) for sentence in _WHAT_MUST_CHANGE_READING.values()]


def what_must_change_columns(*, terms: bool = False) -> tuple[str, str]:
    """The names of the change-frequency and necessary-change columns: plain words, or the paper's symbols."""
    return ("F (95% interval)", "necessary F") if terms else ("changed (95% interval)", "changed and needed")


#: A feature is named "changed but not needed" (a passenger, in the literature) when it changes in at least this share of counterfactuals ...
PASSENGER_MIN_FREQUENCY = 0.03
#: ... and at most this fraction of those changes is necessary.
PASSENGER_MAX_NECESSARY_SHARE = 0.25

#: A feature changed by fewer than this share of the ways out is "rarely changed".
RARE = 0.05
#: At most this many features are named as "most often changed".
TOP = 3
#: At most this many rarely changed features are named; the rest are counted.
MAX_RARE_NAMED = 6


#: The quadrants of the regional-vs-global scatter (the paper's Fig. 4), as a reading names them.
QUADRANT_MEANING = {
    "A": "low global, high regional importance: important here only",
    "B": "low global and low regional importance: minor here and overall",
    "C": "high global and high regional importance: important everywhere",
    "D": "high global, low regional importance: important overall, less so here",
}


def _pct(x) -> str:
    return format_share(x)


def with_interval(value: float, interval: Sequence[float] | None, *, decimals: int = 2) -> str:
    """``"0.73 (0.61 to 0.85)"``; the value alone when the interval is missing or undefined."""
    if value is None or math.isnan(value):
        return "n/a"
    text = f"{value:.{decimals}f}"
    if interval is None or any(v is None or math.isnan(v) for v in interval):
        return text
    return f"{text} ({interval[0]:.{decimals}f} to {interval[1]:.{decimals}f})"


def rank_text(rank: int, interval: Sequence[float] | None) -> str:
    """``"4–7"`` when the 95% interval of a rank spans several ranks, else ``"4"``."""
    if interval is None or any(v is None or math.isnan(v) for v in interval) or interval[0] == interval[1]:
        return f"{int(rank)}"
    return f"{int(interval[0])}–{int(interval[1])}"


def describe_certainty(result: FlexResult) -> str:
    """Which ranks the 95% intervals of F can tell apart, in words ("" without intervals)."""
    if result.rank_interval is None or result.n_factuals_used < 2:
        return ""
    frame = result.to_frame()
    frame = frame[~frame["immutable"] & (frame["frequency_mean"] > 0)]
    if frame.empty:
        return ""
    parts = []
    top = frame.iloc[0]
    if top["rank_best"] == top["rank_worst"] == 1:
        parts.append(f"{top['label']} is first (its interval lies above every other feature's)")
    # Runs of features whose rank intervals overlap cannot be ordered with confidence.
    groups: list[list[pd.Series]] = []
    current: list[pd.Series] = []
    reach = 0.0
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
        labels = _join(_capped([line["label"] for line in group]))
        parts.append(f"ranks {int(group[0]['rank'])}–{int(group[-1]['rank'])} ({labels}) are indistinguishable")
    if not groups:
        parts.append("every rank is clear (no two rank intervals overlap)")
    return (
        f" With 95% intervals over the {plural(result.n_factuals_used, 'case')} and their ways out: " + "; ".join(parts) + "."
    )


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
        " Changed but not needed (changed along the way; undoing that change alone keeps the outcome): "
        + "; ".join(_capped(passengers))
        + "."
    )


def what_must_change_frame(result: FlexResult, *, terms: bool = False) -> pd.DataFrame:
    """One row per mutable feature, by rank: rank (as "4–7" where uncertain), F with its interval, necessary F,
    the shares that flip alone and that need the feature with their intervals, and Kommiya Mothilal et al.'s
    ratios (the last four left out until computed). Every cell is text; "–" where a value is missing. Columns are
    named in plain words (:func:`what_must_change_columns`; ``terms``: the paper's F and necessary F)."""
    changed, needed = what_must_change_columns(terms=terms)
    rows = []
    for j in np.argsort(result.rank, kind="stable"):
        if result.immutable[j]:
            continue
        ranks = None if result.rank_interval is None else result.rank_interval[j]
        rows.append(
            {
                "feature": result.display_names[j],
                "rank": rank_text(result.rank[j], ranks),
                # A share like every other column here ("48% (41–55%)"), not 0.48 beside a necessary F of 48%.
                changed: _share(result.frequency_mean, result.frequency_ci, j) or "–",
                needed: _percent(result.necessary_frequency, j),
                "flips it alone (95% interval)": _share(result.flip_alone, result.flip_alone_interval, j) or "–",
                "needed (95% interval)": _share(result.needed, result.needed_interval, j) or "–",
                "necessity ratio": _percent(result.necessity_ratio, j),
                "sufficiency ratio": _percent(result.sufficiency_ratio, j),
            }
        )
    columns = ["feature", "rank", changed, needed]
    if result.flip_alone is not None:  # the shares and ratios only once computed: empty columns read as "none"
        columns += ["flips it alone (95% interval)", "needed (95% interval)", "necessity ratio", "sufficiency ratio"]
    return pd.DataFrame(rows, columns=columns)


def _percent(values, j: int) -> str:
    """A share as text ("35%"), or "–" when it was not computed: a table never shows a raw None."""
    if values is None or math.isnan(values[j]):
        return "–"
    return _pct(values[j])


def _share(values, intervals, j: int, cases: str | None = None) -> str | None:
    """``"27% (22–33%)"``, or with ``cases`` ``"27% of these cases (22–33%)"``; None when not computed."""
    if values is None or math.isnan(values[j]):
        return None
    text = f"{values[j]:.0%}" + (f" of {cases}" if cases else "")
    if intervals is None or np.isnan(intervals[j]).any():
        return text
    return f"{text} ({intervals[j][0] * 100:.0f}–{intervals[j][1]:.0%})"


def describe_what_must_change(result: FlexResult, *, cases: str = "these cases") -> str:
    """Plain sentences on the features that flip the outcome alone and those it cannot do without ("" until computed).

    "Changing surface alone flips 27% of these cases (22–33%)." for the features that flip the most
    cases alone, then which features no way around was found for, each with its 95% interval.
    """
    if result.flip_alone is None or result.needed is None:
        return ""
    mutable = [j for j in range(len(result.feature_names)) if not result.immutable[j] and not np.isnan(result.flip_alone[j])]
    flips = _top_share_sentences(
        result, mutable, result.flip_alone, result.flip_alone_interval, cases,
        sentence="Changing {feature} alone flips {share}.",
        otherwise=f"No single feature flips any of {cases} on its own: every way out changes several.",
    )
    needed = _top_share_sentences(
        result, mutable, result.needed, result.needed_interval, cases,
        sentence="For {share} no way out was found that keeps {feature} as it is.",
        otherwise=f"Every feature has a way around it: for each of {cases}, some way out keeps it as it is.",
    )
    return " ".join(flips + needed)


def _top_share_sentences(result: FlexResult, features: Sequence[int], shares, intervals, cases: str, *,
                         sentence: str, otherwise: str) -> list[str]:
    """``sentence`` (a template of ``{feature}`` and ``{share}``) for the ``TOP`` features of ``features`` with
    the largest positive share, largest first; ``[otherwise]`` when no feature has any."""
    top = sorted((j for j in features if shares[j] > 0), key=lambda j: -shares[j])[:TOP]
    return [sentence.format(feature=result.display_names[j], share=_share(shares, intervals, j, cases))
            for j in top] or [otherwise]


def _outcome(undesirable: Sequence | None) -> str:
    return " or ".join(str(v) for v in undesirable) if undesirable else "the undesirable outcome"


def describe_neighbour_ties(regional: RegionalResult) -> str:
    """Whether the region's last neighbours were drawn at random among cases at the same distance ("" if not)."""
    ties = regional.neighbour_ties
    if not ties:
        return ""
    seed = regional.importance.config.get("seed")
    return (
        f"{ties['candidates']} cases tie at distance {format_number(ties['distance'])}; "
        f"{ties['drawn']} of them {'was' if ties['drawn'] == 1 else 'were'} drawn at random"
        + (f" (seed {seed})" if seed is not None else "")
        + ", so another seed may give a slightly different region."
    )


#: A list in a reading names at most this many items, then says how many more ("a, b, c and 20 more").
LIST_CAP = 3


def _capped(items: Sequence[str], cap: int = LIST_CAP) -> list[str]:
    """The first ``cap`` items and "N more" for the rest: a long list hides the point (the table has them all)."""
    items = list(items)
    return items if len(items) <= cap + 1 else [*items[:cap], f"{len(items) - cap} more"]


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


@dataclass(frozen=True)
class FeatureLists:
    """Feature positions in the three lists of a reading; a feature is in one list at most.

    ``often``: up to three changeable features changed by at least 5% of the ways out,
    most frequent first; ``rarely``: changeable features changed by fewer than 5%;
    ``fixed``: immutable features. Changeable features between the two (5% or more, but
    not in the top three) are in no list.
    """

    often: tuple[int, ...]
    rarely: tuple[int, ...]
    fixed: tuple[int, ...]


def feature_lists(result: FlexResult) -> FeatureLists:
    """Which features a reading names as often changed, rarely changed and fixed (disjoint by construction)."""
    freq = np.asarray(result.frequency_mean, dtype=float)
    fixed = [j for j in range(len(freq)) if result.immutable[j]]
    mutable = [j for j in range(len(freq)) if not result.immutable[j] and not math.isnan(freq[j])]
    by_frequency = sorted(mutable, key=lambda j: (-freq[j], result.feature_names[j]))
    often = [j for j in by_frequency if freq[j] >= RARE][:TOP]
    rarely = [j for j in by_frequency if freq[j] < RARE]
    return FeatureLists(tuple(often), tuple(rarely), tuple(fixed))


def describe_magnitudes(result: FlexResult, features: Sequence[int]) -> str:
    """How large the changes to the given continuous features are, said against τ.

    μ_j is averaged over *all* ways out (those that leave the number alone or move it
    by less than τ count with their own, small size), so the sentence says so, and flags
    when the average is below the τ that a change needs to count.
    """
    parts = []
    for j in features:
        mu, tau = float(result.magnitude_mean[j]), float(result.tau[j])
        if result.kinds[j] != "continuous" or math.isnan(mu):
            continue
        text = f"{result.display_names[j]} {_pct(mu)} of its range"
        if not math.isnan(tau):
            text += f" ({'below' if mu < tau else 'at or above'} its threshold of {_pct(tau)})"
        parts.append(text)
    if not parts:
        return ""
    return (
        "Average size of the change to a number, over all ways out (including those that leave it alone or "
        f"move it by less than the threshold): {_join(parts)}."
    )


def _tau_sentence(result: FlexResult) -> str:
    tau = [t for t in result.tau if not math.isnan(t)]
    if not tau:
        return ""
    low, high = min(tau), max(tau)
    span = _pct(low) if low == high else f"{_pct(low)} to {_pct(high)}"
    return f" A change to a number counts only when it exceeds {span} of the number's range (the threshold)."


def _left_out(result: FlexResult) -> str:
    """", with the margin (of 1,032 predicted so; the 958 others are borderline or memorised)" when cases were left out."""
    selection = result.config.get("factuals") if result.level == "global" else None
    if not isinstance(selection, Mapping):
        return ""
    left = int(selection.get("borderline", 0)) + int(selection.get("memorised", 0))
    if not left:
        return ""
    return (f" with the margin (of {int(selection['candidates']):,} predicted so; the {left:,} others are borderline "
            "or memorised, so their way out would be the model's noise)")


def describe_global(result: FlexResult, *, undesirable: Sequence | None = None) -> str:
    """A short reading of a global (or regional) result for people who have never seen FLEX."""
    lists = feature_lists(result)
    freq = result.frequency_mean
    if np.isnan(np.asarray(freq, dtype=float)[[j for j in range(len(freq)) if not result.immutable[j]]]).all():
        return "No way out was found, so there is nothing to read yet."
    cases = plural(result.n_factuals_used, "case")
    scope = {"global": f"Across {cases}", "regional": f"In this group of {cases}", "local": f"For {cases}"}[result.level]
    lead = f"{scope} predicted {_outcome(undesirable)}{_left_out(result)}, "
    if lists.often:
        named = [f"{result.display_names[j]} ({_pct(freq[j])} of ways out)" for j in lists.often]
        body = f"the smallest changes that flip the prediction most often involve {_join(named)}."
    else:
        body = f"no changeable feature is changed by {_pct(RARE)} or more of the ways out."
    magnitudes = describe_magnitudes(result, lists.often)
    tail = f" {magnitudes}" if magnitudes else ""
    if lists.rarely:
        rare = [result.display_names[j] for j in lists.rarely]
        if len(rare) > MAX_RARE_NAMED:  # a long list hides the point; the table has the rest
            rare = [*rare[: MAX_RARE_NAMED - 1], plural(len(rare) - MAX_RARE_NAMED + 1, "other feature")]
        tail += f" Rarely changed (under {_pct(RARE)} of ways out): {_join(rare)}."
    if lists.fixed:
        tail += f" Held fixed because they cannot be changed: {_join(_capped([result.display_names[j] for j in lists.fixed]))}."
    # One sentence leads (what flips the prediction); the details follow in their own paragraph.
    details = (tail + _tau_sentence(result) + describe_certainty(result) + describe_passengers(result)).strip()
    return lead + body + ("\n\n" + details if details else "")


def describe_r_interval(regional: RegionalResult, *, terms: bool = False) -> str:
    """How far the agreement (r) can move with which cases the region happens to hold, in words ("" when r is
    undefined). ``terms``: call it r, the analyst's name."""
    if math.isnan(regional.pearson_r):
        return ""
    r, its = ("r", "r's") if terms else ("the agreement", "the agreement's")
    low, high = regional.pearson_r_interval
    cases = regional.importance.n_factuals_used
    if math.isnan(low) or math.isnan(high):
        return (f" With {cases} case{'' if cases == 1 else 's'} with ways out, {r} has no honest interval: read "
                "it as a guess.")
    text = f" From {cases} cases, {its} 95% interval runs from {low:.2f} to {high:.2f}"
    if low <= -0.99 and high >= 0.99:
        return text + f": so few cases cannot pin {r} down at all."
    return text + ("; with so wide a range, read it as rough." if high - low > 0.5 else ".")


def describe_regional(regional: RegionalResult, *, undesirable: Sequence | None = None, terms: bool = False) -> str:
    """A reading of a region: how it compares with the whole population, in words (``terms``: its agreement named
    Pearson r, the scatter's corners quadrants and the mode shift δ, as the analyst's terms do)."""
    imp = regional.importance
    labels = dict(zip(imp.feature_names, imp.display_names))
    size = len(regional.members)
    crit = regional.criterion
    where = f" with {labels.get(crit['feature'], crit['feature'])} = {crit['value']}" if crit else ""
    r = regional.pearson_r
    if math.isnan(r):
        agreement = ("The region is too small or too uniform to compare with the whole population "
                     f"({'r' if terms else 'agreement'} undefined).")
    else:
        strength = "closely follows" if r >= 0.7 else "partly follows" if r >= 0.3 else "differs from"
        measure = f"Pearson r = {r:.2f}" if terms else f"agreement {r:.2f} on a scale from −1 to 1"
        agreement = f"Its pattern {strength} the whole population's ({measure})."
        agreement += describe_r_interval(regional, terms=terms)
    # Quadrants are relative to the mean, so a feature the region rarely changes can sit "high": it is
    # not called important here then (the reading would contradict its own "rarely" list).
    rarely = set(feature_lists(imp).rarely)
    by_quadrant: dict[str, list[str]] = {}
    for j, q in enumerate(regional.quadrants):
        if q is not None and not (q in ("A", "C") and j in rarely):
            by_quadrant.setdefault(q, []).append(imp.display_names[j])
    extra = [f"{meaning} ({f'quadrant {q}' if terms else f'{q} on the chart'}): {_join(_capped(by_quadrant[q]))}."
             for q, meaning in (("A", "Important here only"), ("C", "Important everywhere"),
                                ("D", "Important overall, less so here")) if by_quadrant.get(q)]
    shifts = sorted((s for s in regional.mode_shift if not math.isnan(s["delta"])), key=lambda s: s["delta"])
    if shifts and shifts[0]["delta"] < -0.3:
        s = shifts[0]
        features = {f.name: f for f in imp.features}
        mode = mode_words(features[s["name"]], s["mode"]) if s["name"] in features else s["mode"]
        delta = f"δ = {s['delta']:+.2f}: " if terms else ""
        extra.append(
            f"The ways out most often move away from {labels.get(s['name'], s['name'])} = {mode} "
            f"({delta}its share falls from {_pct(s['p_orig'])} of the cases to {_pct(s['p_cf'])} of their ways out)."
        )
    if regional.rule is not None:
        lead = f"The {plural(size, 'case')} with {regional.rule_text} (a region defined by a rule). "
    else:
        lead = f"A group of {plural(size, 'similar case')} around row {regional.query}{where}. "
    return lead + describe_global(imp, undesirable=undesirable) + " " + agreement + (" " + " ".join(extra) if extra else "")


def describe_tau_sweep(sweep: pd.DataFrame) -> str:
    """How quickly each continuous feature's frequency falls as τ grows, the most often changed first.

    A feature changed by under :data:`RARE` of the ways out at the smallest τ is only named among the rarely changed:
    where its half-life rests on a handful of ways out, it would read as a finding. Ties keep the sweep's order
    (the data dictionary's).
    """
    if sweep.empty:
        return "This dataset has no continuous feature, so τ has no effect."
    features = []
    for label, group in sweep.groupby("label", sort=False):
        group = group.sort_values("tau")
        start = float(group["frequency_mean"].iloc[0])
        half = group[group["frequency_mean"] <= start / 2]
        if start < RARE:
            phrase = None
        elif half.empty:
            phrase = f"{label} keeps most of its changes even at τ = {group['tau'].max():g} (large changes)"
        else:
            phrase = f"{label} loses half its changes by τ = {half['tau'].iloc[0]:g}"
        features.append((start, str(label), phrase))
    features.sort(key=lambda item: -item[0])  # stable: ties stay in the sweep's order
    parts = [phrase for _, _, phrase in features if phrase is not None]
    rare = [label for start, label, phrase in features if phrase is None]
    text = "τ decides how large a change to a number must be (as a share of its range) to count. "
    if parts:
        text += "; ".join(parts) + ". A feature that keeps its frequency at high τ needs big changes to flip the prediction."
    if rare:
        text += (" " if parts else "") + (f"Rarely changed even at τ = {sweep['tau'].min():g} (under {_pct(RARE)} of the "
                                          f"ways out), so how fast they fall says little: {_join(rare)}.")
    return text


def describe_coverage(coverage: Mapping) -> str:
    """The generator's coverage in one sentence."""
    text = (
        f"{plural(coverage['queries'], 'case')} explained; {coverage['counterfactuals_found']:,} distinct ways out "
        f"were found ({coverage['counterfactuals_requested']:,} requested) and "
        f"{_pct(coverage['validity'])} of those really flip the prediction; "
        f"{plural(coverage['queries_without'], 'case')} got none."
    )
    if "distinct_mean" in coverage:
        text += f" {coverage['distinct_mean']:.1f} per case on average"
        requested = coverage["counterfactuals_requested"] / max(coverage["queries"], 1)
        text += (": where every change is as small as the model allows, a case often has only a few different "
                 "ways out, and no copies are counted." if coverage["distinct_mean"] < requested else ".")
    if coverage.get("queries_with_copies"):
        text += (f" The generator returned copies for {plural(coverage['queries_with_copies'], 'case')}; each "
                 "was counted once.")
    return text


def majority_outcome(task: TaskSpec) -> tuple[str, float]:
    """The more common side of the task's binary outcome, in the data dictionary's words (else by its target
    values), and its share of the rows."""
    y = task.y
    undesirable_share = float(y.mean()) if len(y) else 0.0
    if undesirable_share > 0.5:
        return task.undesirable_words, undesirable_share
    return task.desirable_words, 1.0 - undesirable_share


def describe_model(metrics: Mapping, task: TaskSpec) -> str:
    """The model's quality next to always guessing the most common outcome, in words.

    ``metrics`` is :attr:`FittedModel.metrics`. Its ``majority_baseline`` (the test part's
    most common outcome share) is used when present, else the whole data's share, which a
    stratified split keeps within a rounding step of it.
    """
    majority, majority_share = majority_outcome(task)
    accuracy = metrics.get("test_accuracy")
    if accuracy is None:
        return "The model was not evaluated on held-out cases."
    baseline = metrics.get("majority_baseline", majority_share)
    # A model trained elsewhere is scored on the rows given, which may include its training rows: say which.
    text = f"The model is right {_pct(accuracy)} of the time on {metrics.get('evaluated_on') or 'held-out cases'}"
    if baseline is not None:
        text += f"; always guessing '{majority}' would be right {_pct(baseline)} of the time"
    text += "."
    balanced = metrics.get("balanced_accuracy")
    if balanced is not None:
        text += (
            f" Its balanced accuracy (the average of its hit rates on each outcome; 50% is guessing) is "
            f"{_pct(balanced)}."
        )
    recall, precision = metrics.get("test_recall_undesirable"), metrics.get("test_precision_undesirable")
    if recall is not None:
        text += f" It finds {_pct(recall)} of the cases that truly are {task.undesirable_words}"
        text += (f"; of the cases it calls {task.undesirable_words}, {_pct(precision)} are."
                 if precision is not None else f" and calls no case {task.undesirable_words}.")
    if baseline is not None and accuracy <= baseline + 0.01:
        text += (
            " It is hardly better than always guessing the most common outcome, so its ways out say more "
            "about the model than about the cases: read them with care."
        )
    return text


def describe_regression(metrics: Mapping, task: TaskSpec) -> str:
    """R², MAE and RMSE of a regressor against always predicting the mean, in words a domain expert reads."""
    name, value = target_words(task), task.format_target
    if metrics.get("test_mae") is None:
        return "The model was not evaluated on rows with true values."
    where = metrics.get("evaluated_on") or "held-out rows"
    text = (f"On {where}, the model's {name} is off by {value(metrics['test_mae'])} on average (mean absolute "
            f"error); always predicting the average {name} would be off by {value(metrics['baseline_mae'])}. "
            f"Weighing large misses more (root mean squared error): {value(metrics['test_rmse'])}, against "
            f"{value(metrics['baseline_rmse'])} for the average.")
    r2 = metrics.get("test_r2")
    if r2 is not None and not math.isnan(r2):
        text += (f" R² = {r2:.2f}: the model accounts for {max(r2, 0):.0%} of how much {name} varies around its average "
                 "(0 is no better than the average, 1 is exact).")
        if r2 < 0.1:
            text += (" It is hardly better than always predicting the average, so its ways out say more about "
                     "the model than about the cases: read them with care.")
    if metrics.get("cv_r2_mean") is not None:
        text += f" Cross-validated R²: {metrics['cv_r2_mean']:.2f} ± {metrics['cv_r2_std']:.2f}."
    return text


def quadrant_legend() -> str:
    """The four quadrants of the regional-vs-global scatter, one line each."""
    return "\n".join(f"{q}: {text}" for q, text in QUADRANT_MEANING.items())

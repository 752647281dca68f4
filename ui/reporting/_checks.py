"""Readings of the checks on a result: another generator, refits of the model, the regions found and their replication.

Pure functions of flex_core's results (no Streamlit), as the rest of :mod:`ui.reporting`.
"""

from __future__ import annotations

import pandas as pd

from flex_core import RegionalResult
from flex_core.formatting import plural

from ._readings import with_interval

__all__ = [
    "describe_found_counts",
    "describe_found_regions",
    "describe_generator_sensitivity",
    "describe_group_replication",
    "describe_region_replication",
    "describe_retrain",
    "divergence_text",
    "generator_sensitivity_table",
    "multiple_testing_caveat",
    "q_value_text",
    "region_title",
    "replicates_text",
    "retrain_table",
    "significance_text",
]


def q_value_text(q: float, *, plain: bool = False) -> str:
    """A region's q-value for reading: two significant digits, "< 0.0001" below that (not "7e-05"); ``plain``: as the
    expected share of flukes, "0.13%", "below 0.01%"."""
    if q != q:
        return "n/a"
    if plain:
        return "below 0.01%" if q < 1e-4 else f"{float(f'{100 * q:.2g}'):g}%"  # 100%, not 1e+02%
    return "< 0.0001" if q < 1e-4 else f"{q:.2g}"


def divergence_text(value: float) -> str:
    """A divergence (1 - r) or an end of its interval: two decimals, but a value above 0 that two decimals would show
    as 0.00 keeps two significant digits ("0.0013"), and 0 itself reads "0", so an interval that lies above 0 (the
    significance rule) never reads like one that reaches it."""
    if value != value:
        return "n/a"
    if value == 0:
        return "0"
    return f"{value:.2g}" if abs(value) < 0.005 else f"{value:.2f}"


def significance_text(region, fdr: float | None) -> str:
    """"yes", or why not: a region below the false-discovery rate whose divergence interval reaches 0 is not called
    significant (it may not differ at all), which its q-value alone would not say."""
    if region.significant:
        return "yes"
    return "no: its interval reaches 0" if region.interval_reaches_zero(fdr) else "no"


def generator_sensitivity_table(sensitivity: dict) -> pd.DataFrame:
    """One row per mutable feature: F with its 95% interval per generator, and the verdict (depends, cannot tell, same)."""
    names = sensitivity["generators"]
    rows = []
    for feature in sensitivity["features"]:
        row = {"feature": feature.get("label", feature["name"])}
        for name in names:
            value, interval = feature["frequency"][name], feature["frequency_ci"][name]
            row[f"F, {name}"] = with_interval(float("nan") if value is None else value,
                                              None if None in interval else interval)
        row["verdict"] = _verdict_of(feature)
        rows.append(row)
    return pd.DataFrame(rows)


def describe_generator_sensitivity(sensitivity: dict) -> str:
    """Which features' F differs between generators beyond their 95% intervals, in words (and r for a region)."""
    names = sensitivity["generators"]
    others = " and ".join(names[1:])
    verdicts = {f["name"]: _verdict_of(f) for f in sensitivity["features"]}
    differ = [f for f in sensitivity["features"] if verdicts[f["name"]] == "depends"]
    unclear = [f.get("label", f["name"]) for f in sensitivity["features"] if verdicts[f["name"]] == "cannot tell"]
    if differ:
        parts = [f"{f.get('label', f['name'])} ("
                 + " vs ".join(f"{f['frequency'][n]:.2f} with {n}" for n in names) + ")" for f in differ]
        text = (f"Rerun with {others} instead of {names[0]}, F differs beyond the 95% intervals for "
                + "; ".join(parts) + ": these findings depend on the generator.")
    elif unclear:
        text = (f"Rerun with {others} instead of {names[0]}, no feature's F separates, but for {', '.join(unclear)} "
                "an interval spans more than half of F's range: with so few cases this cannot tell.")
    else:
        text = (f"Rerun with {others} instead of {names[0]}, every feature's F stays within the other's 95% interval: "
                "no finding here depends on the generator.")
    ranks = sensitivity.get("ranks")
    if ranks:
        text += " " + " ".join(
            f"With {n}, {ranks['top_overlap'][n]:.0%} of the top {ranks['k']} features are the same"
            + ("" if ranks["top_feature_same"][n] else f" and the top feature is {ranks['top'][n][0]}, not "
               f"{ranks['top'][names[0]][0]}")
            + ("" if ranks["spearman"][n] is None else f" (Spearman {ranks['spearman'][n]:.2f})") + "."
            for n in names[1:] if ranks["top_overlap"][n] is not None)
    regional = sensitivity.get("regional")
    if regional:
        r = ", ".join(f"{'undefined' if regional['r'][n] is None else format(regional['r'][n], '.2f')} with {n}"
                      for n in names)
        verdict = regional.get("r_verdict") or _verdict_of({"intervals_overlap": regional["r_intervals_overlap"]})
        text += f" The region's r against the global F: {r}" + {
            "same": "; their intervals overlap.",
            "depends": "; their intervals do not overlap, so the verdict on this region depends on the generator.",
            "cannot tell": "; an interval is wider than 1 (half of r's range), so whether the verdict depends on the "
                           "generator cannot be told with so few members.",
        }.get(verdict, ".")
    return text


def retrain_table(block: dict) -> pd.DataFrame:
    """One row per feature: F here, F under each refit, their range and the stable verdict."""
    rows = []
    for feature in block["features"]:
        row = {"feature": feature["name"], "F": feature["frequency"]}
        for seed, value in zip(block["seeds"], feature["refits"]):
            row[f"F, refit {seed}"] = value
        low, high = feature["range"]
        row["range over refits"] = "n/a" if low is None else f"{low:.2f}–{high:.2f}"
        row["stable"] = "yes" if feature["stable"] else "no"
        rows.append(row)
    return pd.DataFrame(rows)


def describe_retrain(block: dict) -> str:
    """The refits in words: which features are not stable, and how many counterfactuals each refit keeps valid."""
    unstable = [f["name"] for f in block["features"] if not f["stable"]]
    valid = ", ".join("n/a" if v is None else f"{v:.0%}" for v in block["validity"])
    text = (f"Refitted {block['refits']} times ({block['how']}). Valid under each refit: {valid} of the "
            "counterfactuals. ")
    text += (f"Not stable: {', '.join(unstable)}." if unstable else "Every feature's F is stable.")
    return text + f" Rule: {block['rule']}."


def _verdict_of(feature: dict) -> str:
    """A comparison's verdict; files written before format 2.2 have only intervals_overlap."""
    if feature.get("verdict"):
        return feature["verdict"]
    overlap = feature.get("intervals_overlap")
    return "n/a" if overlap is None else ("same" if overlap else "depends")


def region_title(regional: RegionalResult) -> str:
    """How a region is named in headings: around its query, or by its rule."""
    if regional.rule is not None:
        return f"the region with {regional.rule_text}"
    return f"the region around row {regional.query}"


def multiple_testing_caveat(found) -> str:
    """The multiple-testing caveat of region discovery, in words (``found``: a RegionsResult)."""
    discovery = found.config.get("discovery", {})
    fdr = float(discovery.get("fdr", 0.1))
    tested = int(found.counts.get("tested", 0))
    share = f"one in {round(1 / fdr):d}" if fdr > 0 and abs(1 / fdr - round(1 / fdr)) < 1e-9 else f"{fdr:.0%}"
    return (
        f"{tested:,} candidate regions were tried, so some differ by chance alone. A region marked significant at "
        f"a false-discovery rate of {fdr:g} belongs to a list in which, on average, at most {share} is such a chance "
        "finding; any single one of them may be one. On data where nothing differs at all, this control still lets "
        f"one run in {round(1 / fdr) if fdr > 0 else 0} (at most) flag something. \"Significant\" says that a "
        "region's ways out ask for other changes than a random set of as many cases would; it does not say "
        "why, and with other ways out (another generator, threshold or seed) the regions can change."
    )


def describe_found_counts(found, fdr: float) -> str:
    """The found regions' counts in one sentence (Markdown): how many differ significantly of those tested, how many
    more pass ``fdr`` with an interval reaching 0, and why a significant region may be missing from the list."""
    counts, regions = found.counts, found.regions
    reaching, copies = counts.get("interval_reaches_zero", 0), counts.get("near_copies", 0)
    listed = sum(bool(r.significant) for r in regions)
    text = (f"**{counts['significant']:,} of {counts['tested']:,} candidate regions differ significantly** at FDR {fdr:g}"
            + (f" ({reaching:,} more {'passes' if reaching == 1 else 'pass'} that rate, but how much "
               f"{'it differs' if reaching == 1 else 'they differ'} could be 0 within the 95% interval: not counted)"
               if reaching else ""))
    if listed < counts["significant"]:
        if regions and all(r.significant for r in regions):  # the list is full of significant ones
            text += f"; the first {listed:,} are listed"
        else:
            missing = counts["significant"] - listed
            text += (f"; {listed:,} of them {'is' if listed == 1 else 'are'} listed, the other "
                     f"{'one' if missing == 1 else f'{missing:,}'} "
                     f"{'repeats' if missing == 1 else 'repeat'} a listed region or {'adds' if missing == 1 else 'add'} "
                     "nothing to one of its two conditions")
    text += (". The region shown is the one ranked first" if len(regions) == 1 else
             f". The {len(regions):,} regions shown are ranked, significant ones first")
    if copies:
        text += (f" ({plural(copies, 'region')} left out: at least 95% of {'its' if copies == 1 else 'their'} cases "
                 "those of a region above, the same finding under another rule)")
    return text + "."


def describe_found_regions(found) -> str:
    """A reading of region discovery (``found``: a RegionsResult): what was compared, what stands out."""
    n = len(found.factuals)
    discovery = found.config.get("discovery", {})
    significant = found.significant
    lead = (
        f"Every region of one or {'two conditions' if discovery.get('max_conditions', 2) == 2 else 'one condition'} "
        f"on the features holding at least {discovery.get('min_support', 20)} of the {n:,} cases was compared with "
        "all of them: how much the features its ways out change differ from those of all the cases, over the features "
        "that may change (0: the same drivers; 1: unrelated; 2: reversed; one minus their agreement). "
    )
    if not significant:
        lead += "No region differs from the whole more than random sets of as many cases do."
    else:
        best = significant[0]
        q_text = q_value_text(best.q_value)  # "< 0.0001" or a number
        ups = ", ".join(f"{t['label']} ({t['global_frequency']:.2f} → {t['frequency']:.2f})" for t in best.top_up[:2])
        downs = ", ".join(f"{t['label']} ({t['global_frequency']:.2f} → {t['frequency']:.2f})" for t in best.top_down[:2])
        lead += (
            f"{plural(len(significant), 'region')} of those shown differ significantly. The first, {best.text} "
            f"({plural(best.size, 'case')}), has divergence {divergence_text(best.divergence)} (95% interval "
            f"{divergence_text(best.divergence_interval[0])}–{divergence_text(best.divergence_interval[1])}, "
            f"q {q_text if q_text.startswith('<') else '= ' + q_text})"
            + (f"; there {ups} must change more often" if ups else "")
            + (f", {downs} less often" if downs else "") + "."
        )
    replication = describe_region_replication(found)
    return f"{lead} {replication}" if replication else lead


def replicates_text(marks) -> str:
    """How many refits a finding held under (``marks``: one bool per refit), e.g. "in 2 of 3 refits"."""
    return f"in {sum(bool(m) for m in marks)} of {len(marks)} refits"


def describe_region_replication(found) -> str:
    """Which significant regions replicate under the refits of the model ("" when replication was not asked)."""
    marked = [r for r in found.regions if r.replicated is not None]
    if not marked:
        return ""
    k = len(marked[0].replicated)
    significant = [r for r in marked if r.significant]
    if not significant:
        return (f"The model was refitted {plural(k, 'time')}; no region shown is significant, so none is checked "
                "against the refits (the table still says where each diverges beyond chance).")
    failing = [r for r in significant if not all(r.replicated)]
    if not failing:
        return f"Every significant region also diverges beyond chance under each of the {plural(k, 'refit')} of the model."
    verb, pronoun = ("does", "it depends") if len(failing) == 1 else ("do", "they depend")
    return (f"{len(failing)} of the {plural(len(significant), 'significant region')} {verb} not replicate under all "
            f"{plural(k, 'refit')} of the model, so {pronoun} on this fit: "
            + "; ".join(f"{r.text} (replicates {replicates_text(r.replicated)})" for r in failing) + ".")


#: How each measure of a named group difference is said.
_GROUP_MEASURES = {"cost_median": "the distance to the nearest way out",
                   "flip_share": "the share with a way out"}


def describe_group_replication(groups) -> str:
    """Which named differences between groups hold under the refits of the model ("" when not asked)."""
    marked = [d for d in groups.differences if d.get("replicated") is not None]
    if not marked:
        asked = bool(groups.config.get("groups", {}).get("replication"))
        return "No difference is named, so none is checked under the refits of the model." if asked else ""
    labels = dict(zip(groups.feature_names, groups.display_names))

    def said(d) -> str:
        measure = (f"how often {labels.get(d['feature'], d['feature'])} must change" if d["measure"] == "frequency"
                   else _GROUP_MEASURES.get(d["measure"], d["measure"]))
        return (f"{measure}, higher for {groups.by_label} {d['higher']} than {d['lower']} "
                f"(holds {replicates_text(d['replicated'])})")

    k = len(marked[0]["replicated"])
    failing = [d for d in marked if not all(d["replicated"])]
    if not failing:
        return f"Every named difference is named again under each of the {plural(k, 'refit')} of the model."
    return ("Not replicated under every refit of the model (they depend on this fit): "
            + "; ".join(said(d) for d in failing) + ".")

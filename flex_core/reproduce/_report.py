"""Writing the reproduction's report: figures, the Markdown sections, and findings read from this run's numbers.

Every comparison word (higher, lower, sparser, ...) is decided from the numbers (:func:`findings`), so the text
cannot contradict the tables whichever generator or seed produced them.
"""

from __future__ import annotations

import math
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import ConfigError
from .._format import plural
from ..models import adequacy_note
from ._experiments import ReproductionSettings
from ._markdown import fmt, interval, markdown_table
from ._reference import PAPER, PAPER_GENERATOR, RARE_CHANGE

__all__ = ["DISCUSSION", "FigureWriter", "findings", "machine", "ranking_lines", "regions_lines", "report", "tau_lines"]


class FigureWriter:
    """Writes figures as PNG through kaleido, or as HTML sharing one local plotly.js when PNG is unavailable."""

    def __init__(self, directory: Path, fmt: str):
        if fmt not in ("png", "html"):
            raise ConfigError(f"Figure format must be 'png' or 'html', not {fmt!r}.")
        self.directory, self.format = directory, fmt
        self.notes: list[str] = []
        directory.mkdir(parents=True, exist_ok=True)

    def write(self, fig, stem: str) -> str:
        if self.format == "png":
            try:
                fig.write_image(self.directory / f"{stem}.png", width=900, height=fig.layout.height or 500, scale=1)
                return f"{self.directory.name}/{stem}.png"
            except Exception as exc:  # kaleido needs a Chrome; without one the HTML figures still work
                self.notes.append(f"PNG export failed ({type(exc).__name__}: {exc}); figures were written as HTML.")
                self.format = "html"
        fig.write_html(self.directory / f"{stem}.html", include_plotlyjs="directory", full_html=True)
        return f"{self.directory.name}/{stem}.html"

    def markdown(self, fig, stem: str, caption: str) -> str:
        path = self.write(fig, stem)
        return f"![{caption}]({path})" if path.endswith(".png") else f"[{caption} (interactive figure)]({path})"



# -- the sections ---------------------------------------------------------------------------------
def ranking_lines(key, task, runs, shap, table, agreements, figures) -> list[str]:
    """The ranking table, the rank agreements and two figures: FLEX and SHAP by feature, and rank against rank."""
    mutable = np.array([not f.immutable for f in task.features])
    labels = [f.label for f in task.features]
    names = task.feature_names
    agreement_frame = pd.DataFrame(
        [
            {"comparison": label, "Spearman": a.spearman,
             "Spearman 95% interval": "–" if a.spearman_interval is None else interval(a.spearman_interval),
             "Kendall": a.kendall, "top-3 overlap": a.top_k_overlap}
            for label, a in agreements.items()
        ]
    ).set_index("comparison")

    from ..plotting import rank_scatter_figure, ranking_bars_figure

    first = next(iter(runs))
    bars = ranking_bars_figure(
        names, labels, {f"FLEX ({n})": runs[n]["result"].frequency_mean for n in runs} | {"SHAP": shap.mean_abs},
        include=mutable, title=f"{task.name}: global importance by method (each / its maximum)",
    )
    scatter = rank_scatter_figure(
        names, labels, runs[first]["result"].frequency_mean, shap.mean_abs,
        methods=(f"FLEX ({first})", "SHAP"), agreement=agreements[f"FLEX ({first}) vs SHAP (ours)"], include=mutable,
    )
    return [
        markdown_table(table),
        "",
        "Rank agreement over the mutable features (FLEX gives immutable features 0 by construction):",
        "",
        markdown_table(agreement_frame),
        "",
        figures.markdown(bars, f"{key}_global_bars", f"{task.name}: FLEX and SHAP, normalised"),
        "",
        figures.markdown(scatter, f"{key}_rank_scatter", f"{task.name}: FLEX rank against SHAP rank"),
    ]


def regions_lines(task, runs, regions, figures) -> list[str]:
    """The summary of r per region, then each region: its query, its table beside LIME, and two figures."""
    lines: list[str] = []
    r_rows = []
    for region in regions:
        r_rows.append(_r_row(region))
        lines += _region_lines(task, region, figures)
        if region.number == 1:
            lines += _mode_shift_lines(region.regional)
    summary = ["### Pearson r, regional against global (mutable features)", "", markdown_table(pd.DataFrame(r_rows), index=False), ""]
    unexplained = sorted({name for row in r_rows for name in runs if name != PAPER_GENERATOR
                          and isinstance(row.get(f"r ({name})"), float) and math.isnan(row[f"r ({name})"])})
    for name in unexplained:  # say why in the report, not only in the log
        factuals = len(runs[name]["explainer"].factual_rows)
        summary += [f"{name}: r is undefined where the paper's query row is not a factual under {name}'s validity rule "
                    f"(the model rejects it only narrowly, or only because it memorised the row's label: its out-of-bag "
                    f"vote does not reject it). {factuals:,} cases are factuals under that rule.", ""]
    return summary + lines


def _published_r(number: int) -> tuple[float, str]:
    note = " (commented out in the .tex)" if number in PAPER["pearson_r_commented_out"] else ""
    return PAPER["pearson_r"][number], note


def _r_row(region) -> dict:
    """A region's row in the summary of r: its members, r and interval per generator, and the paper's r."""
    regional = region.regional
    published, note = _published_r(region.number)
    return {"region": f"{region.number}: {region.feature.replace('_', ' ')} = {region.value}", "query row": region.query,
            "members": ", ".join(map(str, regional.members)),
            f"r ({PAPER_GENERATOR})": regional.pearson_r,
            f"95% interval ({PAPER_GENERATOR})": interval(regional.pearson_r_interval),
            **{column: value for name, r in region.other_r.items()
               for column, value in ((f"r ({name})", r), (f"95% interval ({name})", interval(region.other_interval[name])))},
            "paper r": f"{published:.2f}{note}"}


def _region_lines(task, region, figures) -> list[str]:
    from ..plotting import regional_lime_figure, regional_scatter

    regional, lime, number = region.regional, region.lime, region.number
    published, note = _published_r(number)
    frame = pd.DataFrame(
        {
            "feature": [f.label + (" (fixed)" if f.immutable else "") for f in task.features],
            "FLEX F ± std": [f"{m:.2f} ± {s:.2f}" for m, s in zip(regional.importance.frequency_mean, regional.importance.frequency_std)],
            "LIME (normalised)": lime.normalised,
            "global F": regional.global_frequency,
            "quadrant": [q or "–" for q in regional.quadrants],
        }
    )
    frame = frame.iloc[np.argsort(-np.nan_to_num(regional.importance.frequency_mean, nan=-1), kind="stable")]
    return [
        f"### Region {number}: {region.feature.replace('_', ' ')} = {region.value}",
        "",
        f"Query row {region.query} ({region.choice}) and its {len(regional.members) - 1} "
        f"nearest qualifying factuals by Hamming distance (of {regional.candidates} candidates); Pearson r against "
        f"global = **{fmt(regional.pearson_r)}** with {PAPER_GENERATOR} "
        f"(95% interval from the region's {regional.importance.n_factuals_used} factuals: {interval(regional.pearson_r_interval)})"
        + "".join(f"; {name}: {fmt(r)} ({interval(region.other_interval[name])})" for name, r in region.other_r.items())
        + f" (paper: {published:.2f}{note}). The table, LIME and the figures use {PAPER_GENERATOR}'s counterfactuals.",
        "",
        markdown_table(frame, index=False),
        "",
        figures.markdown(regional_lime_figure(regional, lime, terms=True), f"accidents_region{number}_lime", f"Region {number}: FLEX vs LIME"),
        "",
        figures.markdown(regional_scatter(regional), f"accidents_region{number}_vs_global", f"Region {number}: regional vs global"),
        "",
    ]


def _mode_shift_lines(regional) -> list[str]:
    ours = regional.mode_shift_frame().set_index("name")
    rows = []
    for name, (mode, p_orig, p_cf, delta) in PAPER["mode_shift_region_1"].items():
        mine = ours.loc[name]
        rows.append(
            {
                "feature": name.replace("_", " "),
                "factual mode (ours)": f"{mine['mode']} ({mine['p_orig']:.0%})",
                "CF mode share (ours)": f"{mine['p_cf']:.0%}",
                "δ (ours)": f"{mine['delta']:.2f}",
                "CF mode (ours)": mine["cf_mode"],
                "paper: factual mode": f"{mode} ({p_orig:.0%})",
                "paper: CF share": f"{p_cf:.0%}",
                "paper: δ": f"{delta:.2f}",
            }
        )
    negative = sum(1 for name in PAPER["mode_shift_region_1"] if ours.loc[name, "delta"] < 0)
    paper_negative = sum(1 for *_, delta in PAPER["mode_shift_region_1"].values() if delta < 0)
    return [
        "#### Mode shift in region 1 (the paper's Table 2)",
        "",
        "Our region 1's query was chosen so that its region's factual modes match the table as well as any "
        "factual's region does (see above); the counterfactual side (CF share, δ) was not used in the choice. "
        "What should carry over is the pattern (high factual mode shares, negative δ). "
        f"Here {negative} of our {len(rows)} δ are negative (paper: {paper_negative} of {len(rows)}).",
        "",
        markdown_table(pd.DataFrame(rows), index=False),
        "",
    ]



def tau_lines(tau, settings, figures) -> list[str]:
    """F at each τ for the continuous features, as generated and refined, and the two panels' figures."""
    from ..plotting import tau_panels_figure

    panels, refined, refined_set = tau.panels, tau.refined, tau.refined_set
    first = panels[settings.taus[0]]
    frame = pd.DataFrame({"feature": list(first.display_names)})
    for label, results in (("as generated", panels), ("refined", refined)):
        frame[f"μ ({label})"] = results[settings.taus[0]].magnitude_mean
        for t, res in results.items():
            frame[f"F τ={t:g} ({label})"] = [f"{m:.2f} ± {s:.2f}" for m, s in zip(res.frequency_mean, res.frequency_std)]
    frame["DiCE Alg. 2"] = first.dice_frequency
    continuous = np.array([k == "continuous" for k in first.kinds])
    frame = frame[continuous]
    frame = frame.iloc[np.argsort(-np.nan_to_num(first.frequency_mean[continuous], nan=-1), kind="stable")]
    return [
        f"Continuous features, with {PAPER_GENERATOR}'s counterfactuals as generated (the paper's setting) and the same "
        "counterfactuals refined (`refine=\"minimal\"`: each change moved back toward the factual as far as the "
        f"prediction stays desirable; {refined_set.config['refine_model_calls']} model calls, "
        f"{refined_set.config['refine_seconds']:.1f} s, validity {refined_set.coverage()['validity']:.0%}). Categorical "
        "features do not depend on τ or the refinement.",
        "",
        markdown_table(frame, index=False),
        "",
        figures.markdown(tau_panels_figure(panels, terms=True), "loan_tau_panels", "Loan: F_j at τ = 0.1, 0.5, 0.9 (as generated)"),
        "",
        figures.markdown(tau_panels_figure(refined, terms=True), "loan_tau_panels_refined", "Loan: F_j at τ = 0.1, 0.5, 0.9 (refined)"),
        "",
    ]


def machine() -> str:
    import os

    return f"{platform.machine()}, {plural(os.cpu_count() or 1, 'CPU')}, Python {platform.python_version()}, {platform.system()}"


# -- findings: plain statements from this run's numbers, set against the paper's claims -----------------
def findings(results: dict) -> list[str]:
    """Plain statements computed from this run's numbers, set against the paper's claims.

    Every comparison word (higher, lower, sparser, ...) is decided here from the numbers,
    so the text cannot contradict the tables whichever generator or seed produced them.
    """
    generators = results["generators"]
    out = []
    for key in ("accidents", "loan"):
        out += _global_findings(key, results[key]["global"]["facts"], generators)
    out += _region_findings(results["accidents"]["regions"], generators)
    out.append(_sparsity_finding(results["accidents"]["share_of_cfs_changing_at_most_two_features"], generators))
    out.append(_tau_finding(results["loan"]["tau_panels"]["facts"]))
    for key in ("accidents", "loan"):
        note = adequacy_note(results[key]["model"])
        if note:
            out.append(f"- **{key}, model:** {note}")
    return out


def _global_findings(key: str, f: dict, generators) -> list[str]:
    paper_rho = f["paper_flex_vs_shap"]
    models = "so the two forests rank features alike" if f["shap_vs_paper_shap"] >= 0.9 else "so our SHAP ranking differs from the paper's"
    out = [
        f"- **{key}, global:** our SHAP against the paper's SHAP: Spearman {fmt(f['shap_vs_paper_shap'])} ({models}; "
        f"our SHAP top three {', '.join(f['our_shap_top3'])}; our mean |SHAP| values are a median "
        f"{f['shap_scale_ratio_median']:.1f}x the paper's). The paper's FLEX against its SHAP: {fmt(paper_rho)}; its "
        f"FLEX top three {', '.join(f['paper_flex_top3'])}."
    ]
    for name in generators:
        g = f["by_generator"][name]
        low, high = g["flex_vs_shap_interval"]
        # Larger or smaller only when the paper's value lies outside our 95% bootstrap interval.
        against_paper = (
            "not comparable with" if low is None or math.isnan(low)
            else "indistinguishable from" if low <= paper_rho <= high
            else "closer than" if paper_rho < low else "less close than"
        )
        beside = "" if name == PAPER_GENERATOR else f"; against FLEX ({PAPER_GENERATOR}) {fmt(g['flex_vs_paper_generator'])}"
        rare = (
            f" {g['rare_features']} of its {g['mutable_features']} mutable features have F < {RARE_CHANGE:g}, so "
            "their order, and with it part of every coefficient here, rests on a handful of counterfactuals."
            if g["rare_features"] > 1
            else ""
        )
        out.append(
            f"  - FLEX ({name}): Spearman against our SHAP **{fmt(g['flex_vs_shap'])}** (95% bootstrap interval "
            f"over the factuals {fmt(low)} to {fmt(high)}: {against_paper} the "
            f"paper's pair), top-3 overlap with SHAP {fmt(g['flex_vs_shap_top3_overlap'])}, top three "
            f"{', '.join(g['our_flex_top3'])}; against the paper's FLEX {fmt(g['flex_vs_paper_flex'])}{beside}.{rare}"
        )
    return out


def _region_findings(regions: dict, generators) -> list[str]:
    published = [n for n in PAPER["pearson_r"] if n not in PAPER["pearson_r_commented_out"]]
    verdicts: dict[str, dict] = {}
    out = []
    for name in generators:
        r, bounds = {}, {}
        for n in PAPER["pearson_r"]:
            region = regions[str(n)]
            if name == PAPER_GENERATOR:
                r[n], bounds[n] = region["regional"]["pearson_r"], region["regional"]["pearson_r_interval"]
            else:
                r[n] = region["pearson_r_other_generators"][name]
                bounds[n] = region.get("pearson_r_interval_other_generators", {}).get(name, [float("nan")] * 2)
        # Five factuals make r fragile: above or below the paper's only when its value is outside our interval.
        relation = {n: _against_interval(bounds[n], PAPER["pearson_r"][n]) for n in r}
        verdicts[name] = relation
        r_text = ", ".join(f"{n}: {fmt(v)} ({interval(bounds[n])})" for n, v in r.items())
        versus = "; ".join(
            f"region {n} {relation[n]} the paper's {PAPER['pearson_r'][n]:.2f}"
            + (" (commented out in the .tex)" if n in PAPER["pearson_r_commented_out"] else "")
            for n in r
        )
        differs = [n for n in published if relation[n] in ("above", "below")]
        undefined = [n for n in published if relation[n] == "not comparable with"]
        parts = [f"in region {n} the paper's query row is not a factual under this generator's validity rule, so "
                 "there is no r to compare" for n in undefined]
        parts += [f"in region {n} the paper's {PAPER['pearson_r'][n]:.2f} lies outside our interval, so our r is "
                  f"{relation[n]} it" for n in differs]
        if not parts:
            parts = ["in both published regions the paper's r lies inside our 95% interval, so five factuals cannot "
                     "tell the two apart"]
        reading = "; ".join(parts)
        out.append(f"- **accidents, regions ({name}):** r against global {r_text}: {versus}; {reading}.")
    return out + [_sensitivity_finding(verdicts, generators)]


def _sensitivity_finding(verdicts: dict, generators) -> str:
    """Generator sensitivity: a verdict that changes with the generator is the generator's, not the model's."""
    changed = [n for n in PAPER["pearson_r"] if len({verdicts[name][n] for name in generators}) > 1]
    if changed:
        return ("- **accidents, regions, generator sensitivity:** the verdict depends on the generator for "
                + "; ".join(f"region {n} ("
                            + ", ".join(f"{verdicts[name][n]} the paper's with {name}" for name in generators) + ")"
                            for n in changed)
                + ": read those regions' r as a property of the counterfactual generator as much as of the model.")
    return ("- **accidents, regions, generator sensitivity:** every region gets the same verdict with "
            + " and ".join(generators) + ".")


def _sparsity_finding(shares: dict, generators) -> str:
    paper_share = PAPER["share_of_cfs_changing_at_most_two_features"]
    counted, total = PAPER["cfs_changing_at_most_two_features"]
    # The paper states 70.3% but its counts give 73.0%: "as sparse as" means within 2 points of either.
    low, high = sorted((paper_share, counted / total))
    middle, tolerance = (low + high) / 2, (high - low) / 2 + 0.02
    share_text = "; ".join(
        f"{name} {shares[name]:.1%} ({_relation(shares[name], middle, 'sparser than', 'as sparse as', 'less sparse than', tolerance=tolerance)} the paper's)"
        for name in generators
    )
    configured = (
        f"Since our {PAPER_GENERATOR} differs here, the paper's DiCE was configured differently (method, post-hoc "
        "sparsity, sampling), which by itself changes which features counterfactuals touch"
        if abs(shares[PAPER_GENERATOR] - middle) > tolerance
        else f"Our {PAPER_GENERATOR} matches the paper's DiCE here"
    )
    return (
        f"- **accidents, counterfactual sparsity:** share of valid counterfactuals changing at most two features: "
        f"{share_text}; the paper states {paper_share:.1%} for \"1460 instances of 2000\", which is "
        f"{counted / total:.1%}: both are quoted. {configured}; SHAP, which uses no counterfactuals, is the cleaner "
        "check that our model matches."
    )


def _tau_finding(tau: dict) -> str:
    by_tau = ", ".join(f"τ = {t}: {v:.2f}" for t, v in tau["top_frequency_by_tau"].items())
    by_tau_refined = ", ".join(f"τ = {t}: {v:.2f}" for t, v in tau["top_frequency_by_tau_refined"].items())
    return (
        f"- **loan, τ ({PAPER_GENERATOR}):** the top feature {tau['top_feature']} has F = {by_tau} as generated "
        f"(μ = {tau['top_magnitude']:.2f}); refined to minimal changes, F = {by_tau_refined} (μ = "
        f"{tau['top_magnitude_refined']:.2f}). The paper's τ panels are empty `\\includegraphics{{}}` in the .tex, "
        "so there is no published number to compare either with."
    )


def _against_interval(bounds, theirs: float) -> str:
    """'above' / 'below' when ``theirs`` lies outside our interval, else 'indistinguishable from'."""
    low, high = (float("nan") if b is None else float(b) for b in bounds)
    if math.isnan(low) or math.isnan(high):
        return "not comparable with"
    if theirs < low:
        return "above"
    return "below" if theirs > high else "indistinguishable from"


def _relation(ours: float | None, theirs: float, more: str, same: str, less: str, *, tolerance: float = 0.005) -> str:
    """The word comparing two numbers, or 'not comparable with' when ours is undefined."""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return "not comparable with"
    if abs(ours - theirs) <= tolerance:
        return same
    return more if ours > theirs else less



def report(settings, generators, default, metric_rows, sections, sparsity, timings, total, notes, findings) -> str:
    """The whole ``report.md``: how it was run, the forest, each section, the findings and the discussion."""
    sparsity_rows = pd.DataFrame(
        [{"dataset": key, **{f"ours ({g})": v for g, v in by_gen.items()},
          "paper": PAPER["share_of_cfs_changing_at_most_two_features"] if key == "accidents" else float("nan")}
         for key, by_gen in sparsity.items()]
    )
    parts = [
        *_preamble(settings, generators, default, timings, total, notes),
        "## Random forest performance",
        "",
        "CV metrics are over the folds of the training part; F1 is support-weighted (as the paper's numbers imply). "
        "majority_baseline is the test accuracy of always predicting the training part's most common outcome and "
        "balanced_accuracy the mean of the per-outcome recalls; a model whose accuracy does not beat the baseline is "
        "flagged in the findings below.",
        "",
        markdown_table(pd.DataFrame(metric_rows), index=False),
        "",
        "Share of valid counterfactuals that change at most two features (the paper: \"1460 instances of 2000, "
        "70.3%\" on accidents; 1460 of 2000 is 73.0%, so both are given):",
        "",
        markdown_table(sparsity_rows, index=False),
        "",
        "## Global importance: FLEX next to SHAP — accidents (the paper's Table 1)",
        "",
        "Cells are \"rank (mean ± std)\" for FLEX and \"rank (mean |SHAP|)\" for SHAP; ranks are over the nine "
        "mutable features, ties share the best rank.",
        "",
        *sections["accidents_global"],
        "",
        "## Global importance: FLEX next to SHAP — loan (the paper's Table 3)",
        "",
        *sections["loan_global"],
        "",
        "## Four accident regions: FLEX next to LIME, and r against global (the paper's Figs. 3 and 4)",
        "",
        *sections["regions"],
        "## Threshold τ on loan (the paper's τ panels)",
        "",
        "F_j at three thresholds from the same stored counterfactuals (no regeneration); μ_j is the mean relative "
        "size of a change and DiCE's Algorithm 2 counts any change above 1e-6. The paper's τ panels are empty "
        "`\\includegraphics{}` in the .tex, so there is no published number to compare these with.",
        "",
        *sections["tau"],
        "## What this run shows, next to the paper's claims",
        "",
        *findings,
        "",
        DISCUSSION,
    ]
    return "\n".join(parts) + "\n"


def _preamble(settings, generators, default, timings, total, notes) -> list[str]:
    """The title, a warning on a reduced run, how the run was made, its run time and any notes."""
    other = [g for g in generators if g != PAPER_GENERATOR]
    generator_line = (
        f"Counterfactuals come from `{PAPER_GENERATOR}` (DiCE random sampling, the method the paper used; it does "
        "not reproduce the paper's counterfactuals, see the sparsity table) and from the "
        f"project's default generator `{default}` (with `refine=\"minimal\"`), each on the factuals its validity rule "
        "admits, drawn with the same seed (the paper's rule keeps every case the model rejects; the default's keeps "
        "those rejected with a margin, and out of bag), with SHAP on each generator's own factuals."
        if other
        else f"Counterfactuals come from `{PAPER_GENERATOR}` (DiCE random sampling, the method the paper used), which "
        f"is also the project's DEFAULT_GENERATOR at the time of this run."
    )
    size = (
        f"{settings.n_factuals} factuals x {settings.n_cf} counterfactuals, regions of 1 + {settings.k}, "
        f"{settings.cv_folds}-fold CV, LIME {settings.lime_samples} samples, τ = {settings.tau:g}, seed {settings.seed}"
    )
    paper_sizes = ReproductionSettings()
    sizes = ("n_factuals", "n_cf", "cv_folds", "k", "lime_samples")
    quick_warning = (
        []
        if all(getattr(settings, s) == getattr(paper_sizes, s) for s in sizes)
        else ["> **Reduced run** (not the paper's sizes): the numbers below only check that the pipeline works.", ""]
    )
    return [
        "# Reproducing the FLEX paper's experiments",
        "",
        *quick_warning,
        f"Generated by `python -m flex_core reproduce` ({size}). {generator_line} "
        "The random forest (100 trees) is fitted on an 80/20 stratified split with categorical features one-hot "
        "encoded inside the pipeline; SHAP is TreeExplainer on that forest explaining P(undesirable), summed over "
        "each feature's one-hot columns, on the same factuals as FLEX; LIME explains P(undesirable) on the original "
        "features and is averaged over a region's factuals and divided by its maximum. Published values are copied "
        "from `FLEX_paper.tex`. Every number is also in `results.json`.",
        "",
        f"Run time: **{total:.0f} s** in total ("
        + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items())
        + f") on {machine()}.",
        "",
        *([f"Note: {n}" for n in notes] + [""] if notes else []),
    ]


#: Why our numbers cannot match the paper's digit for digit, and what to read in the comparison.
DISCUSSION = """## Discussion: where we differ from the paper, and why

- **Sampling.** The paper's 200 factuals, its region queries and DiCE's random draws are unpublished random
  draws; ours are seeded draws of the same kind. With 200 factuals the global F_j carry a standard error of
  roughly std/√200 ≈ 0.015, so ranks of features closer than ~0.03 can swap between draws; a region has only
  five factuals and fifty counterfactuals, so its F_j, LIME weights and r depend heavily on which query was
  drawn and on the generator's own random draws (the two generators' r on the same members show how much).
- **Data preparation.** We drop accident rows with a missing value in the 11 features (the paper does not say
  what it did) and one-hot encode categorical features; the paper "encoded text features", likely label
  encoding. Both change the fitted forest, and with it SHAP and the counterfactuals.
- **SHAP scale.** We explain the probability of the undesirable class and sum over one-hot columns; the paper
  does not state its output scale, encoding or background, so its absolute SHAP values need not match ours
  (the ratio is given above). Ranks, not absolute SHAP values, are the comparable part.
- **Generators.** DiCE random is the method the paper used, not a reproduction of its counterfactuals: on
  accidents no DiCE random setting tried changes more than two features in about 30% of counterfactuals, as the
  paper's did. FLEX measures the generator as much as the model. When the project's default generator is
  not DiCE random it runs beside it on the same factuals and the same forest, so where their columns differ the
  difference is the generator's: how many features a counterfactual changes, and which, sets F_j.
- **Regions 3 and 4.** The paper's r for these (0.33, 0.66) appear only in a commented-out part of the .tex;
  they are listed for completeness.
- **What could carry over** is the qualitative picture the paper draws: FLEX and SHAP agreeing on the top
  drivers, regional FLEX differing from global FLEX (moderate r) and from LIME, cibil_score dominating on loan.
  The statements above say, from this run's numbers, where that holds and where it does not.
"""

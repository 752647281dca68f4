"""Every result of a session as report sections, each with its reading.

The app collects what exists (a region only once one was chosen, SHAP and LIME only
after they ran) into :class:`SessionResults`; :func:`session_sections` turns each
present result into one :class:`ReportSection`, in reading order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from flex_core import FlexResult, RegionalResult
from flex_core.compare import LimeImportance, ShapImportance, rank_agreement, ranking_table
from flex_core.data import TaskSpec
from flex_core.formatting import format_duration, format_share, plural
from flex_core.models import NO_LABELS_NOTE, FittedModel

from ._checks import (
    describe_found_regions,
    describe_group_replication,
    divergence_text,
    multiple_testing_caveat,
    q_value_text,
    region_title,
    replicates_text,
    significance_text,
)
from ._html import ReportSection
from ._quality import describe_model_curves, describe_permutation
from ._readings import (
    describe_coverage,
    describe_global,
    describe_model,
    describe_regional,
    describe_regression,
    describe_tau_sweep,
    describe_what_must_change,
    quadrant_legend,
    what_must_change_frame,
    what_must_change_reading,
    with_interval,
)
from ._settings import describe_settings
from ._tables import (
    case_line,
    changed_first,
    class_balance,
    dataset_label,
    human_table,
    importance_table,
    mode_shift_table,
    model_quality_table,
    probability_label,
    regional_table,
)

__all__ = ["SessionResults", "session_sections", "counterfactual_examples_table", "HOW_TO_READ", "found_regions_table", "groups_table"]

HOW_TO_READ = (
    "For each case the model predicts as undesirable, a generator looks for a few "
    "ways out: the same case with small changes that make the model predict the desirable outcome. "
    "FLEX counts how often each feature is changed in those ways out. A feature changed in 80% of them "
    "is one the model's decision hinges on; one never changed does not matter for flipping it. For a number, "
    "a change only counts when it is larger than τ (a share of the number's range), so tiny nudges do not count. "
    "The counts are made for all cases (global), for a group of similar cases (regional) and for one case "
    "(local). The importance is of features for the model's decision, not causes in the world; it depends on "
    "the model, the generator and its seed, which the settings table names."
)


@dataclass(frozen=True)
class SessionResults:
    """What a session computed. Only ``task``, ``model`` and ``global_result`` are required.

    ``saved`` and ``lime`` map a region's name to its result; ``examples`` maps a row id to
    the output of :func:`ui.reporting.counterfactual_table` (table, changed).
    """

    task: TaskSpec
    model: FittedModel
    global_result: FlexResult
    coverage: Mapping | None = None
    tau_sweep: pd.DataFrame | None = None
    tau_panels: Mapping[float, FlexResult] | None = None
    regional: RegionalResult | None = None
    saved: Mapping[str, RegionalResult] = field(default_factory=dict)
    examples: Mapping[int, tuple[pd.DataFrame, pd.DataFrame]] = field(default_factory=dict)
    shap: ShapImportance | None = None
    lime: Mapping[str, tuple[RegionalResult, LimeImportance]] = field(default_factory=dict)
    regions: object | None = None  # flex_core.regions.RegionsResult, when region discovery ran
    groups: object | None = None  # flex_core.regions.GroupsResult, when the group comparison ran
    curves: Any = None  # flex_core.models.model_curves on the held-out rows (None: none)
    curves_note: str | None = None  # why there are no curves (a model without held-out rows)
    permutation: Any = None  # flex_core.compare.permutation_importance, when it ran


def counterfactual_examples_table(task: TaskSpec, table: pd.DataFrame, changed: pd.DataFrame) -> pd.DataFrame:
    """A case and its ways out for reading: unchanged cells show "·", changed ones their new value; the lines are
    "this case", then "way out 1", "way out 2", ... (as the app's tables name them). The features that change come
    first, then the outcome, then the features no way out touches (:func:`changed_first`), as in the app."""
    out = pd.DataFrame(index=table.index)
    moved, still = changed_first(task, changed)
    by_name = {f.name: f for f in task.features}

    def add(names):
        for f in (by_name[n] for n in names):
            values = [f.format_value(v) for v in table[f.name]]  # in the dictionary's units and words
            out[f.label] = [v if line == "factual" or changed.loc[line, f.name] else "·"
                            for line, v in zip(table.index, values)]

    add(moved)
    out[probability_label(task)] = [f"{p:.2f}" if task.band is None else task.format_target(p) for p in table["P(undesirable)"]]
    out["flips the prediction"] = ["–"] + ["yes" if v else "no" for v in table["valid"].iloc[1:]]
    add(still)
    out.index = [case_line(name) for name in out.index]
    return out.reset_index(names="")


def _data_section(results: SessionResults) -> ReportSection:
    task, model = results.task, results.model
    balance = class_balance(task).assign(share=lambda f: f["share"].map(format_share))
    scored = "test_accuracy" in model.metrics or "cv_accuracy_mean" in model.metrics
    reading = (
        f"{task.name}: {len(task.frame):,} cases and {plural(len(task.features), 'feature')}; the outcome "
        f"{task.undesirable_words} counts as undesirable. The model is a {model.label}. "
        + (describe_regression(model.metrics, task) if scored and task.band is not None else
           describe_model(model.metrics, task) if scored else str(model.metrics.get("note") or NO_LABELS_NOTE))
        + (" " + " ".join(task.notes) if task.notes else "")
    )
    quality = (model_quality_table(model.metrics, held_out=model.trained_here, outcome=task.undesirable_words),) if scored else ()  # no labels: no accuracy or F1 to show
    figures: tuple = ()
    if results.curves is not None:
        from flex_core.plotting import model_curves_figure

        figures = (model_curves_figure(results.curves, undesirable=task.undesirable_words),)
        reading += "\n\n" + describe_model_curves(results.curves, undesirable=task.undesirable_words,
                                                  desirable=task.desirable_words, cutoff=False)
    elif results.curves_note:
        reading += "\n\n" + results.curves_note
    return ReportSection("The data and the model", reading, figures=figures, tables=(human_table(balance), *quality))


def _global_section(results: SessionResults) -> ReportSection:
    from flex_core.plotting import importance_figure

    result = results.global_result
    reading = describe_global(result, undesirable=(results.task.undesirable_words,))
    if results.coverage is not None:
        reading += "\n\n" + describe_coverage(results.coverage)
    return ReportSection("What would have to change, across all cases", reading,
                         figures=(importance_figure(result),), tables=(importance_table(result),))


def _what_must_change_section(result: FlexResult) -> ReportSection:
    from flex_core.plotting import what_must_change_figure

    reading = describe_what_must_change(result, cases="the sampled cases")
    search = result.config.get("necessity_sufficiency", {}).get("search", {})
    if search.get("generator"):
        reading += (f"\n\n\"Needed\" means no way out was found by {search['generator']} with the feature kept as it is. "
                    "Intervals: 95% Wilson, over the cases.")
    reading += "\n\n" + "\n".join(f"- {sentence}" for sentence in what_must_change_reading())
    return ReportSection("What must change: alone, or not without it", reading,
                         figures=(what_must_change_figure(result),), tables=(what_must_change_frame(result),))


def _tau_section(results: SessionResults) -> ReportSection:
    from flex_core.plotting import tau_panels_figure, tau_sweep_figure

    current = [t for t in results.global_result.tau if not math.isnan(t)]
    figures = [tau_sweep_figure(results.tau_sweep, current=min(current) if current else None)]
    if results.tau_panels:
        figures.append(tau_panels_figure(results.tau_panels))
    return ReportSection("How large a change must be to count (τ)", describe_tau_sweep(results.tau_sweep),
                         figures=tuple(figures))


def _region_sections(name: str, regional: RegionalResult, results: SessionResults, settings: str) -> list[ReportSection]:
    from flex_core.plotting import importance_figure, regional_scatter

    settings = f"{settings} · region of {plural(len(regional.members), 'case')}"
    reading = describe_regional(regional, undesirable=(results.task.undesirable_words,))
    reading += "\n\nQuadrants of the scatter: " + quadrant_legend().replace("\n", "; ") + "."
    return [
        ReportSection(name, reading,
                      figures=(importance_figure(regional.importance, dice=False), regional_scatter(regional)),
                      tables=(regional_table(regional),), settings=settings),
        ReportSection(f"{name}: which values the ways out move away from",
                      "The mode shift: for each feature, the region's most common value and its share among the "
                      "cases and among their ways out, and how much that share changes. A change below zero means the "
                      "ways out leave that value; −100% means no way out keeps it.",
                      tables=(mode_shift_table(regional),), settings=settings),
    ]


def _saved_section(results: SessionResults) -> ReportSection:
    from flex_core.plotting import regions_heatmap

    lines = []
    for name, regional in results.saved.items():
        r = regional.pearson_r
        top = regional.importance
        order = np.argsort(-np.nan_to_num(top.frequency_mean, nan=-1.0), kind="stable")
        leader = top.display_names[order[0]]
        lines.append(f"{name} ({plural(len(regional.members), 'case')}): most often changed {leader} "
                     f"({format_share(top.frequency_mean[order[0]])}); agreement with the whole population "
                     f"{'undefined' if math.isnan(r) else with_interval(r, regional.pearson_r_interval)}"
                     f"{'' if math.isnan(r) or math.isnan(regional.pearson_r_interval[0]) else ', with its 95% interval'}.")
    reading = "Each line of the heatmap is one group's change frequency per feature, the whole population first.\n\n" + "\n\n".join(lines)
    return ReportSection("Saved regions compared", reading,
                         figures=(regions_heatmap(results.saved, results.global_result),))


def found_regions_table(found, *, plain: bool = False) -> pd.DataFrame:
    """The found regions for reading: rank, rule, size, divergence with its interval, q-value, significant, shifts;
    ``plain``: the q-value as a share (the page names its column "share of flukes among regions this strong" then)."""
    fdr = (getattr(found, "config", None) or {}).get("discovery", {}).get("fdr")
    return pd.DataFrame(
        [
            {
                "rank": i + 1,
                "region": r.text,
                "cases": r.size,
                "divergence 1 − r (95% interval)": f"{divergence_text(r.divergence)} "
                                                   f"({divergence_text(r.divergence_interval[0])}–{divergence_text(r.divergence_interval[1])})",
                "q-value": q_value_text(r.q_value, plain=plain),
                "significant": significance_text(r, fdr),
                "changed more often": ", ".join(f"{t['label']} {t['shift']:+.2f}" for t in r.top_up),
                "changed less often": ", ".join(f"{t['label']} {t['shift']:+.2f}" for t in r.top_down),
                "replicates": "not asked" if r.replicated is None else replicates_text(r.replicated),
            }
            for i, r in enumerate(found.regions)
        ],
        # "significant" before the numbers: the verdict in view on a narrow screen, its reason beside it
        columns=["rank", "region", "cases", "significant", "divergence 1 − r (95% interval)", "q-value",
                 "changed more often", "changed less often",
                 *(["replicates"] if any(r.replicated is not None for r in found.regions) else [])],
    )


def groups_table(groups) -> pd.DataFrame:
    """Per group: cases, the share with a way out and the cost of the minimal change, with intervals."""
    def pair(interval, fmt):
        return "–".join("n/a" if v != v else fmt(v) for v in interval)

    return pd.DataFrame(
        [
            {
                groups.by_label: g.value,
                "cases": g.factuals,
                "with a way out (95% interval)": f"{format_share(g.flip_share)} ({pair(g.flip_share_interval, format_share)})",
                "median distance to the nearest way out (95% interval)":
                    "n/a" if g.cost_median != g.cost_median else f"{g.cost_median:.2f} ({pair(g.cost_interval, lambda v: f'{v:.2f}')})",
            }
            for g in groups.groups
        ]
    )


def _found_regions_section(found) -> ReportSection:
    from ui.figures import regions_small_multiples

    reading = describe_found_regions(found) + "\n\n" + multiple_testing_caveat(found)
    return ReportSection("Regions that differ", reading, figures=(regions_small_multiples(found),),
                         tables=(found_regions_table(found),))


def _groups_section(groups) -> ReportSection:
    from ui.figures import groups_frequency_figure

    reading = (
        f"The cases split by {groups.by_label}. For each group: the share with a way out under the constraints, "
        "and the median distance from a case to its nearest way out (a number counts its change as a share of "
        "its range, an ordinal feature its levels moved as a share of its levels, a category 1 per change). A "
        "difference is named only when the 95% intervals of the two groups do not overlap.\n\n"
        + " ".join([*groups.verdict, describe_group_replication(groups)]).strip()
    )
    return ReportSection(f"What the model asks of each group of {groups.by_label}", reading,
                         figures=(groups_frequency_figure(groups),), tables=(groups_table(groups),))


def _examples_section(results: SessionResults) -> ReportSection:
    tables = tuple(counterfactual_examples_table(results.task, *pair) for pair in results.examples.values())
    rows = [str(r) for r in results.examples]
    named = ("row " if len(rows) == 1 else "rows ") + (rows[0] if len(rows) == 1 else ", ".join(rows[:-1]) + " and " + rows[-1])
    reading = (
        f"The ways out the generator found for {named}: in each table, the first line is the case as it is; on the "
        "following lines a dot means the value is unchanged, so what is written is what would have to change. "
        "'flips the prediction' says whether the model really predicts the desirable outcome for it."
    )
    return ReportSection("Counterfactual examples", reading, tables=tables)


def _shap_section(results: SessionResults, shap: ShapImportance) -> ReportSection:
    from flex_core.plotting import rank_scatter_figure, ranking_bars_figure

    result, task = results.global_result, results.task
    names, labels = list(task.feature_names), [f.label for f in task.features]
    mutable = ~np.array(result.immutable)
    scores = {"FLEX": result.frequency_mean, "DiCE Alg. 2": result.dice_frequency, "SHAP": shap.mean_abs}
    agreement = rank_agreement(result.frequency_mean, shap.mean_abs, names=names, include=mutable)
    words = ("closely agree" if agreement.spearman >= 0.7 else "partly agree" if agreement.spearman >= 0.3
             else "rank the features differently")
    reading = (
        f"SHAP, with the {shap.explainer} explainer, on the same {plural(len(shap.query_index), 'case')} "
        f"took {format_duration(shap.seconds)}. FLEX and SHAP {words} (Spearman {agreement.spearman:.2f}, Kendall "
        f"{agreement.kendall:.2f}; {format_share(agreement.top_k_overlap)} of the top {agreement.k} in common). "
        "SHAP measures how much a feature moves the predicted probability; FLEX what it takes to flip the decision, "
        "so a feature can matter to one and not the other."
    )
    table = ranking_table(labels, scores, stds={"FLEX": result.frequency_std}, decimals={"SHAP": 4}, include=mutable)
    return ReportSection(
        "FLEX next to SHAP and DiCE's own count",
        reading,
        figures=(ranking_bars_figure(names, labels, scores, include=mutable),
                 rank_scatter_figure(names, labels, result.frequency_mean, shap.mean_abs, agreement=agreement,
                                     include=mutable)),
        tables=(table.reset_index() if table.index.name else table,),
    )


def _permutation_section(results: SessionResults, permutation) -> ReportSection:
    result = results.global_result
    labels, mutable = list(result.display_names), ~np.asarray(result.immutable, dtype=bool)
    agreement = permutation.agreement_with(result)
    table = ranking_table(labels, {"FLEX": result.frequency_mean, "Permutation (AUC drop)": permutation.mean},
                          stds={"FLEX": result.frequency_std, "Permutation (AUC drop)": permutation.std},
                          decimals={"Permutation (AUC drop)": 3}, include=mutable)
    reading = describe_permutation(permutation, agreement, flex_name="FLEX")
    return ReportSection("FLEX next to permutation importance", reading, tables=(table.reset_index(),))


def _lime_section(name: str, regional: RegionalResult, lime: LimeImportance) -> ReportSection:
    from flex_core.plotting import regional_lime_figure

    reading = (
        f"LIME on the {plural(len(lime.query_index), 'case')} of {name} (it took {format_duration(lime.seconds)}): its mean "
        "|weight|, divided by its largest, beside FLEX's change frequency. Where they disagree, LIME measures the "
        "local sensitivity of the score, FLEX what it takes to flip the decision."
    )
    return ReportSection(f"FLEX next to LIME: {name}", reading, figures=(regional_lime_figure(regional, lime),))


def _with_settings(section: ReportSection, settings: str) -> ReportSection:
    """The section with its settings line, and the same line as each figure's subtitle (a saved PNG says it too)."""
    from dataclasses import replace

    from flex_core.plotting import with_settings

    return replace(section, settings=settings, figures=tuple(with_settings(f, settings) for f in section.figures))


def session_sections(results: SessionResults, *, settings: str | None = None) -> list[ReportSection]:
    """One section per result present in ``results``, in reading order, each with its reading and settings line.

    ``settings`` is the line every section and figure names (default: :func:`describe_settings` of the
    global result, with the task's label); a region's sections add the region's size.
    """
    settings = settings or describe_settings(results.global_result, dataset=dataset_label(results.task))
    return [_with_settings(section, section.settings or settings) for section in _sections(results, settings)]


def _sections(results: SessionResults, settings: str) -> list[ReportSection]:
    sections = [_data_section(results), _global_section(results)]
    if results.global_result.flip_alone is not None:
        sections.append(_what_must_change_section(results.global_result))
    if results.tau_sweep is not None and not results.tau_sweep.empty:
        sections.append(_tau_section(results))
    if results.regional is not None:
        regional = results.regional
        title = region_title(regional)
        sections += _region_sections(title[0].upper() + title[1:], regional, results, settings)
    for name, regional in results.saved.items():
        sections += _region_sections(f"Saved region: {name}", regional, results, settings)
    if results.saved:
        sections.append(_saved_section(results))
    if results.regions is not None:
        sections.append(_found_regions_section(results.regions))
    if results.groups is not None:
        sections.append(_groups_section(results.groups))
    if results.examples:
        sections.append(_examples_section(results))
    if results.shap is not None:
        sections.append(_shap_section(results, results.shap))
    if results.permutation is not None:
        sections.append(_permutation_section(results, results.permutation))
    for name, (regional, lime) in results.lime.items():
        sections.append(_lime_section(name, regional, lime))
    return sections

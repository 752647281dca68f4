"""The Compare page's SHAP views and its one-case section: the beeswarm, a dependence plot coloured by the feature
SHAP suggests, one case's SHAP contributions beside its counterfactuals, and partial dependence with ICE curves.

The numbers come from :mod:`flex_core.compare` (``strongest_interaction``, ``case_agreement``,
``dependence_curves``) and the figures from :mod:`flex_core.plotting`; the curves are cached in :mod:`ui.cache`.
"""

from __future__ import annotations

import streamlit as st

import flex_core as fc
from ui import cache, reporting
from ui import state as S
from ui.case import case_counterfactuals
from ui.components import chart, highlighted_counterfactuals
from ui.context import Analysis, run_or_stop
from ui.text import plain

__all__ = ["shap_summary_views", "case_views"]


def _top_feature(shap: fc.compare.ShapImportance) -> str:
    return max(shap.feature_names, key=lambda n: (shap.mean_abs[shap.feature_names.index(n)],
                                                  -shap.feature_names.index(n)))


def shap_summary_views(analysis: Analysis, shap: fc.compare.ShapImportance) -> None:
    """The beeswarm, then a dependence plot for a chosen feature coloured by its strongest interaction."""
    task = analysis.task
    labels = {f.name: f.label for f in task.features}
    chart(fc.plotting.shap_beeswarm_figure(shap, task), analysis, key="compare_shap_beeswarm", tau=False)
    st.caption(plain(
        f"Each dot is one case: where it sits is how far that feature pushes its {reporting.score_label(task)} "
        f"up (right) or down (left); its colour is the case's value of the feature (blue low, red high among these cases; levels in "
        "their order)."))
    names = list(shap.feature_names)
    left, right = st.columns(2)
    feature = left.selectbox("Dependence plot of", names, index=names.index(_top_feature(shap)),
                             format_func=lambda n: labels[n], key="w_compare_dependence_feature")
    interaction = fc.compare.strongest_interaction(shap, task, feature)
    choices = [None, *[n for n in names if n != feature]]
    suggested = choices.index(interaction.strongest)
    colour_by = right.selectbox(
        "Coloured by", choices, index=suggested, key=f"w_compare_dependence_colour_{feature}",
        format_func=lambda n: "nothing" if n is None else labels[n] + (" (suggested)" if n == interaction.strongest else ""))
    chart(fc.plotting.shap_dependence_figure(shap, task, feature, colour_by), analysis,
          key="compare_shap_dependence", tau=False)
    if interaction.strongest is None:
        st.caption(f"No other feature explains any spread in {labels[feature]}'s SHAP values.")
        return
    strength = interaction.strengths[interaction.strongest]
    st.caption(plain(
        f"Suggested colour: {labels[interaction.strongest]}. The cases are ordered by {labels[feature]} and cut into "
        f"{interaction.n_bins} groups of like values; within each, how much of the spread of {labels[feature]}'s SHAP "
        "values each other feature explains (a correlation: r for a number, η for levels, less what chance alone "
        f"explains). {labels[interaction.strongest]} explains the most (mean {strength:.2f} of 1)."))


def case_views(analysis: Analysis, result: fc.FlexResult, shap: fc.compare.ShapImportance | None) -> None:
    """One factual: its SHAP contributions beside its counterfactuals (when SHAP ran), and its ICE curve."""
    task = analysis.task
    rows = [int(r) for r in result.query_index]
    query = st.session_state[S.QUERY]
    row = st.selectbox(f"Case (one of the {len(rows)} explained)", rows, index=rows.index(query) if query in rows else 0,
                       format_func=lambda r: f"row {r}", key="w_compare_case")
    case = case_counterfactuals(analysis, row)
    # Any change counts here (τ = 0), as in the table below: at the session's τ a small change that flips the case
    # (a CIBIL score 10 points higher) would be highlighted in the table yet read as "not changed".
    local = run_or_stop(analysis.explainer.explain_local, [row], tau=0.0)[0]
    if shap is not None:
        position = [int(r) for r in shap.query_index].index(row)
        agreement = fc.compare.case_agreement(
            [f.label for f in task.features], shap.values[position], local.frequency_mean,
            immutable=local.immutable, undesirable=task.undesirable_words, row=row)
        chart(fc.plotting.case_contributions_figure(agreement), analysis, key="compare_case_shap", tau=False)
        st.markdown(plain(agreement.sentence))
        st.caption("Here any change counts, as in the table below (FLEX's τ, which leaves out small changes to "
                   "numbers, is not applied to one case's ways out).")
    highlighted_counterfactuals(task, case.table, case.changed)
    st.caption("The case, then its ways out; highlighted cells are the changes, and the features that change come "
               "first.")
    _ice(analysis, row, local)


def _ice(analysis: Analysis, row: int, local: fc.FlexResult) -> None:
    """Partial dependence and ICE for a chosen feature, the case's own curve and its ways out's values on it."""
    task = analysis.task
    labels = {f.name: f.label for f in task.features}
    names = list(task.feature_names)
    changed = sorted(range(len(names)), key=lambda j: (-local.frequency_mean[j], j))
    feature = st.selectbox("Partial dependence and ICE of", names, index=changed[0],
                           format_func=lambda n: labels[n], key="w_compare_ice_feature")
    curves = run_or_stop(cache.dependence_curves, analysis.explainer, analysis.store_id, feature, row)
    valid_below = curves.threshold - float(analysis.explainer.factual_selection.get("margin", 0.0))
    chart(fc.plotting.ice_figure(curves, probability=reporting.score_label(task), valid_below=valid_below),
          analysis, key="compare_ice", tau=False)
    words = (f"Each grey line is one of {len(curves.rows) - 1} cases drawn from the data, with only "
             f"{labels[feature]} moved along the axis and everything else kept; the black line is their average (the "
             f"partial dependence); orange is row {row}.")
    if curves.counterfactual_values:
        words += (" Green diamonds are the values its ways out give this feature, each scored with only that change: "
                  + (f"a way out counts only below the dotted line ({valid_below:.2f}, the validity rule's margin), "
                     "so a diamond above it is a way out that needs other changes too."
                     if valid_below < curves.threshold else
                     "a diamond above the dashed line is a way out that needs other changes too."))
    elif curves.query is not None:
        words += f" None of its ways out changes {labels[feature]}."
    st.caption(plain(words))

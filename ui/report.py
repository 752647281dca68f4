"""What the session computed, gathered for the HTML report (only results that exist: nothing is computed anew
except from cached or stored counterfactuals)."""

from __future__ import annotations

import io
from urllib.parse import urlparse

import streamlit as st

import flex_core as fc
from ui import cache, reporting
from ui import state as S
from ui.context import Analysis

LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0", ""}


def is_local(link: str) -> bool:
    """A link only this machine can open (it means nothing in a report sent to someone else)."""
    return (urlparse(link).hostname or "") in LOCAL_HOSTS


def _lime_results(analysis: Analysis, regions: dict[str, fc.RegionalResult]) -> dict:
    """LIME for the region it was asked for, if it ran (the request names the model and the members)."""
    request = st.session_state[S.LIME_REQUEST]
    if not request or request[0] != analysis.model_id:
        return {}
    for name, regional in regions.items():
        if [int(m) for m in regional.members] == request[1]:
            lime = cache.lime_with_progress(analysis.explainer, analysis.model_id, tuple(request[1]), int(request[2]))
            return {name: (regional, lime)}
    return {}


def _with_scores_if_computed(analysis: Analysis, result: fc.FlexResult) -> fc.FlexResult:
    """The result with flip-alone and needed shares when the page computed them for these cases (else as it is)."""
    rows = tuple(int(r) for r in result.query_index)
    if [analysis.store_id, list(rows)] not in st.session_state[S.SUFFICIENCY_REQUESTS]:
        return result
    scores = analysis.necessity_sufficiency(rows)
    return fc.importance.with_necessity_sufficiency(result, scores)


def _found_and_groups(analysis: Analysis) -> dict:
    """Region discovery and the group comparison, when the Regional explorer ran them (cached: nothing new is run)."""
    out = {}
    options = st.session_state[S.REGION_SEARCH]
    if options is not None:
        out["regions"] = analysis.found_regions(options)
    if st.session_state[S.GROUPS_BY] is not None:
        out["groups"] = analysis.compared_groups(st.session_state[S.GROUPS_BY])
    return out


def _quality_results(analysis: Analysis) -> dict:
    """The model's curves on its held-out rows (or why there are none), and permutation importance if it ran."""
    if analysis.task.band is not None:  # a regressor: the curves of a classifier do not apply (Data & model says why)
        return {"curves_note": "No ROC, precision-recall or gain curves: the model predicts a number, not the chance "
                               "of an outcome."}
    try:
        curves = cache.model_curves(analysis.task, analysis.model, analysis.model_id)
    except fc.FlexError as exc:
        return {"curves_note": f"No ROC, precision-recall or gain curves: {exc}"}
    request = st.session_state[S.PERMUTATION_REQUEST]
    permutation = None
    if request is not None and request[0] == analysis.model_id:
        permutation = cache.permutation_with_progress(analysis.task, analysis.model, analysis.model_id, int(request[1]))
    return {"curves": curves, "permutation": permutation}


def session_results(analysis: Analysis, global_result: fc.FlexResult, regional, saved: dict) -> reporting.SessionResults:
    """Every result of this session that exists: SHAP and LIME only if they ran, examples only for stored rows."""
    task = analysis.task
    global_result = _with_scores_if_computed(analysis, global_result)
    sweep = panels = None
    if task.continuous_names:
        sweep = analysis.tau_sweep()
        panels = cache.tau_panel_results(analysis.explainer, analysis.store_id, analysis.n_factuals)
    shap = None
    rows = tuple(int(r) for r in global_result.query_index)
    if st.session_state[S.SHAP_REQUEST] == [analysis.model_id, list(rows)]:
        shap = cache.shap_with_progress(analysis.explainer, analysis.model_id, rows)
    regions = {**({reporting.region_title(regional): regional} if regional is not None else {}),
               **{f"saved region {name}": reg for name, reg in saved.items()}}
    asked = [int(r) for r in dict.fromkeys([st.session_state[S.CF_ROW], st.session_state[S.QUERY]]) if r is not None]
    example_rows = [r for r in asked if r not in set(analysis.explainer.not_generated(asked))]
    examples = {int(r): reporting.counterfactual_table(task, analysis.model, analysis.explainer.counterfactuals([int(r)]), int(r))
                for r in example_rows}
    return reporting.SessionResults(
        task=task, model=analysis.model, global_result=global_result, **_quality_results(analysis),
        coverage=analysis.explainer.counterfactuals(global_result.query_index).coverage(), tau_sweep=sweep, tau_panels=panels,
        regional=regional, saved=saved, examples=examples, shap=shap, lime=_lime_results(analysis, regions),
        **_found_and_groups(analysis),
    )


def report_settings(analysis: Analysis, link: str) -> dict:
    """The settings that produced the numbers, as a readable table's rows; the link only when others can open it."""
    s = st.session_state
    tau = analysis.tau
    if isinstance(tau, dict):
        tau = {("every other number" if k == "*" else analysis.task.feature(k).label): v for k, v in tau.items()}
    settings = {
        "dataset": reporting.dataset_label(analysis.task),
        "model": f"{analysis.model.label} ({analysis.model.encoding} encoding)",
        "generator of the ways out (counterfactuals)": s[S.GENERATOR],
        "generator settings": s[S.GENERATOR_SETTINGS].get(s[S.GENERATOR]) or "defaults",
        "cases explained (N_F)": analysis.n_factuals,
        "ways out asked for per case (N_cf)": analysis.explainer.n_cf,
        "seed": int(s[S.SEED]),
        "τ (share of a number's range)": tau,
    }
    if analysis.task.rules:
        settings["constraints between features"] = "; ".join(analysis.task.rule_texts)
    if not is_local(link):
        settings["link to this view"] = link
    return settings


def interactive_report(analysis: Analysis, regional, saved: dict, link: str) -> str:
    """The interactive report file of this view (FlexExplainer.report): the global sample at the session's τ, the
    region shown, the saved regions and, when the Regional explorer searched, the regions it found."""
    regions = {**({reporting.region_title(regional): regional} if regional is not None else {}),
               **{f"saved region {name}": reg for name, reg in saved.items()}}
    options = st.session_state[S.REGION_SEARCH]
    found = analysis.found_regions(options) if options is not None else 0
    settings = {"model": f"{analysis.model.label} ({analysis.model.encoding} encoding)"}
    if not is_local(link):
        settings["link to this view"] = link
    out = io.StringIO()
    analysis.explainer.report(out, n_factuals=analysis.n_factuals, tau=analysis.tau, regions=regions, discover=found,
                              title=f"FLEX Studio interactive report: {analysis.task.name}", settings=settings)
    return out.getvalue()

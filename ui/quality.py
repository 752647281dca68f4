"""How well the model ranks held-out cases (Data & model page) and permutation importance beside FLEX (Compare page):
the sections, with their requests and messages; the work is in flex_core and ui.cache."""

from __future__ import annotations

import streamlit as st

import flex_core as fc
from ui import cache, reporting
from ui import state as S
from ui.components import chart
from ui.context import Analysis, run_or_stop
from ui.text import plain

#: The Compare table's column for permutation importance.
PERMUTATION = "Permutation (AUC drop)"
#: Shuffles per feature (flex_core's default).
REPEATS = 5


def model_curves_view(analysis: Analysis, quality) -> None:
    """ROC, precision-recall, gain and precision by bin on the held-out rows, the cutoff ``quality`` (a CutoffQuality)
    marked; for a model without held-out rows, one line saying why there are none."""
    task = analysis.task
    st.subheader("How well the model ranks cases it never saw")
    try:
        curves = cache.model_curves(task, analysis.model, analysis.model_id)
    except fc.FlexError as exc:
        st.info(plain(f"No ROC, precision-recall or gain curves: {exc}"))
        return
    chart(fc.plotting.model_curves_figure(curves, at=quality, undesirable=task.undesirable_words), analysis,
          key="model_curves", tau=False)
    st.caption(plain(reporting.describe_model_curves(curves, undesirable=task.undesirable_words,
                                                     desirable=task.desirable_words)))


def on_request(analysis: Analysis, seed: int, shap_request: list):
    """The Compare page's two views that run only when asked, SHAP and permutation importance: what each does and
    costs in one info box with a button each (one box, not two), then (SHAP asked for, permutation result or None)."""
    offers, buttons = [], []
    shap_asked = st.session_state[S.SHAP_REQUEST] == shap_request
    if not shap_asked:
        estimate = run_or_stop(cache.shap_estimate, analysis.task, analysis.model, analysis.model_id,
                               tuple(shap_request[1]), seed)
        offers.append(f"SHAP runs only when asked. It will take {estimate}.")
        buttons.append(("Run SHAP on these cases", "run_shap", S.SHAP_REQUEST, shap_request))
    permutation, offer, request = _permutation(analysis, seed)
    if offer:
        offers.append(offer)
    if request is not None:
        buttons.append(("Run permutation importance on the held-out cases", "run_permutation",
                        S.PERMUTATION_REQUEST, request))
    if offers:
        st.info(plain(" ".join(offers)))
    for column, (label, key, name, value) in zip(st.columns(max(1, len(buttons))), buttons):
        if column.button(label, key=key, type="primary" if key == "run_shap" else "secondary"):
            st.session_state[name] = value
            st.rerun()
    return shap_asked, permutation


def _permutation(analysis: Analysis, seed: int):
    """(result once asked for, else None; what to say instead, else ""; the request its button makes, else None)."""
    task = analysis.task
    try:
        curves = cache.model_curves(task, analysis.model, analysis.model_id)  # the held-out check, cached
    except fc.FlexError as exc:
        return None, f"No permutation importance: {exc}", None
    request = [analysis.model_id, int(seed)]
    if st.session_state[S.PERMUTATION_REQUEST] == request:
        return run_or_stop(cache.permutation_with_progress, task, analysis.model, analysis.model_id, int(seed)), "", None
    features = len(task.feature_names)
    return None, (
        f"Permutation importance runs only when asked: it shuffles each of the {features} features {REPEATS} times "
        f"on the {int(curves.config['rows']):,} held-out cases and measures how much the model's ROC AUC drops "
        f"({1 + features * REPEATS} scorings of the model, a second or two on loan)."), request


def agreement_metrics(agreement: fc.compare.RankAgreement, left: str, right: str) -> None:
    """Spearman and Kendall (with their bootstrap intervals) and the top-k overlap of two rankings, side by side."""
    cols = st.columns(3)
    cols[0].metric(f"Spearman ({left} vs {right})", reporting.with_interval(agreement.spearman, agreement.spearman_interval))
    cols[1].metric(f"Kendall ({left} vs {right})", reporting.with_interval(agreement.kendall, agreement.kendall_interval))
    cols[2].metric(f"Top-{agreement.k} overlap ({right})", f"{agreement.top_k_overlap:.0%}")

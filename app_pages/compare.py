"""Compare: FLEX next to SHAP and permutation importance (global) and LIME (the current region), and DiCE's own count."""

import streamlit as st

import flex_core as fc
from ui import cache, reporting
from ui import state as S
from ui.components import chart, lime_beside_flex, pinned_first, settings_strip
from ui.context import require_analysis, run_or_stop
from ui.glossary import mean_versus_pooled
from ui.quality import PERMUTATION, agreement_metrics, on_request
from ui.shap_views import case_views, shap_summary_views
from ui.text import plain

st.title("FLEX next to SHAP, LIME and DiCE")
analysis = require_analysis()
settings_strip(analysis)
task = analysis.task
result = run_or_stop(analysis.global_result)
names, labels = list(task.feature_names), [f.label for f in task.features]
mutable = [not fixed for fixed in result.immutable]
seed = int(st.session_state[S.SEED])
tau = analysis.tau
flex_name = f"FLEX at {reporting.tau_text(tau)}" if task.continuous_names else "FLEX"
# τ decides what FLEX counts as a change to a number: the frequencies at τ = 0 (any change counts) sit beside it.
at_zero = None
if task.continuous_names and tau != 0.0:
    at_zero = run_or_stop(analysis.global_result, 0.0)

st.subheader("Global: FLEX, DiCE's count, SHAP and permutation importance")
st.caption(
    (f"FLEX is shown at the current {reporting.tau_text(tau)} (set it on the Thresholds page)"
     + (", and beside it at τ = 0, where any change to a number counts. " if at_zero is not None else ". "))
    + f"FLEX counts a change to a number only above τ; DiCE's own importance (its Algorithm 2) counts any change; "
    f"SHAP's mean |SHAP| is computed on the same {reporting.plural(len(result.query_index), 'case')}, one-hot columns summed back to "
    "their feature. Rankings are over the features that may change: FLEX gives fixed features 0 by construction."
)
shap_request = [analysis.model_id, [int(r) for r in result.query_index]]
shap_asked, permutation = on_request(analysis, seed, shap_request)  # one info box, a button each
scores = {flex_name: result.frequency_mean}
stds = {flex_name: result.frequency_std}
if at_zero is not None:
    scores["FLEX at τ = 0"] = at_zero.frequency_mean
    stds["FLEX at τ = 0"] = at_zero.frequency_std
scores["DiCE Alg. 2"] = result.dice_frequency
shap = None
if shap_asked:
    shap = run_or_stop(cache.shap_with_progress, analysis.explainer, analysis.model_id, tuple(shap_request[1]))
    scores["SHAP"] = shap.mean_abs
if permutation is not None:
    scores[PERMUTATION], stds[PERMUTATION] = permutation.mean, permutation.std

table = fc.compare.ranking_table(labels, scores, stds=stds, decimals={"SHAP": 4, PERMUTATION: 3}, include=mutable,
                                 rank_intervals={flex_name: result.rank_interval})
# Stacked, each full width: beside the chart the ranking's four or five columns were cut off at the right.
chart(fc.plotting.ranking_bars_figure(names, labels, scores, include=mutable), analysis, key="compare_bars")
all_zero = reporting.describe_all_zero(result)
if all_zero:
    st.warning(plain(all_zero))
st.markdown("**Ranking, \"rank (mean ± std)\"** (as the paper's Tables 1 and 3; FLEX ranks read \"4–7\" where "
               "the 95% intervals of F over the cases leave several ranks possible)")
st.dataframe(table, width="stretch", height="content", column_config=pinned_first(table, hide_index=False))
# Side by side they look like the same number: say why they differ (a mean over cases against a pooled count).
st.caption(plain(mean_versus_pooled(result.counts, flex="FLEX at τ = 0" if at_zero is not None else flex_name)))
if shap is not None:
    agreement = fc.compare.flex_shap_agreement(result, shap, seed=seed)
    agreement_metrics(agreement, flex_name, "SHAP")
    chart(fc.plotting.rank_scatter_figure(names, labels, result.frequency_mean, shap.mean_abs, agreement=agreement,
                                          include=mutable, methods=(flex_name, "SHAP")),
          analysis, key="compare_rank_scatter")
    st.caption(
        f"SHAP: {shap.explainer}, explaining {plain(reporting.score_label(task))}; it took {reporting.format_duration(shap.seconds)}. In brackets: 95% bootstrap "
        "intervals over the cases (both methods recomputed on each resample)."
    )
    st.subheader("SHAP's own views: every case, and one feature's dependence")
    shap_summary_views(analysis, shap)

if permutation is not None:
    agreement = permutation.agreement_with(result, seed=seed)
    agreement_metrics(agreement, flex_name, "permutation")
    st.caption(plain(reporting.describe_permutation(permutation, agreement, flex_name=flex_name)
                     + " In brackets: 95% bootstrap intervals over FLEX's cases; the table's ± is the spread over "
                     "the shuffles."))

st.subheader("One case: SHAP, its ways out and partial dependence")
case_views(analysis, result, shap)

st.subheader("Region: FLEX next to LIME")
query = st.session_state[S.QUERY]
if query is None:
    st.info("Pick a region on the Regional explorer page; its FLEX and LIME importances then appear here.")
    st.stop()
k, where = int(st.session_state[S.K]), st.session_state[S.WHERE]
regional = run_or_stop(analysis.regional_result, int(query), k, where)
lime_beside_flex(analysis, regional, key="compare")

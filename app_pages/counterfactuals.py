"""Counterfactuals: for any factual, its counterfactuals with the changed cells highlighted."""

import streamlit as st

from ui import reporting
from ui import state as S
from ui.case import case_counterfactuals, shown_row
from ui.components import highlighted_counterfactuals, settings_strip
from ui.context import require_analysis
from ui.glossary import term
from ui.text import plain

st.title("Counterfactuals of one case")
analysis = require_analysis()
settings_strip(analysis)
task = analysis.task
pool = [int(r) for r in analysis.pool]
if not pool:
    st.error("The model predicts no case as undesirable, so there is nothing to explain. Try another model.")
    st.stop()

default = st.session_state[S.CF_ROW] or st.session_state[S.QUERY] or pool[0]
default = default if default in pool else pool[0]
# The case shown is generated before the list is labelled, so its own label never says "not generated yet".
case = case_counterfactuals(analysis, shown_row(st.session_state.get("w_cf_row"), pool, default))
stored = set(pool) - set(analysis.explainer.not_generated(pool))
row = st.selectbox(
    f"Case (row of the data predicted {task.undesirable_words})", pool, index=pool.index(default), key="w_cf_row",
    on_change=S.bind("w_cf_row", S.CF_ROW),
    format_func=lambda r: f"row {r}" + ("" if r in stored else " (ways out not searched for yet)"),
)
cols = st.columns(3)
probability = reporting.probability_label(task)
cols[0].metric(f"{probability} now", reporting.format_prediction(task, case.before))
cols[1].metric(term("Different ways out", "distinct counterfactuals"), f"{case.n_valid} of {analysis.explainer.n_cf} requested",
               help="Each one is valid and different from the others. With minimal changes, fewer than "
                    "requested means no more were found: the model offers only so many smallest ways out.")
cols[2].metric(f"{probability} after (mean)", "n/a" if case.after_mean is None else reporting.format_prediction(task, case.after_mean))
for sentence in case.said:
    st.caption(sentence)
highlighted_counterfactuals(task, case.table, case.changed)
st.caption(
    f"The first line is the case as it is; each further line is a way out the generator found that the model "
    f"predicts {task.desirable_words}. Highlighted cells are the changes; the features that change come first, then "
    "the prediction, then the features no way out changes. 'valid' means the model really predicts "
    f"{task.desirable_words} for that way out. Each way out is listed once: copies are merged, so every "
    "count on these pages is over distinct ways out."
)
if case.most_changed:
    st.markdown("**Changed most often for this case:** " + ", ".join(
        f"{plain(label)} ({c}×)" for label, c in case.most_changed))
